// Tests for the text helpers (protocol/text.h). Each reproduces a Redis rule
// that clients can observe; the expected values were checked against Debian's
// redis-server 7.0.15 (integers through SET/INCRBY-style parsing, inline
// splitting through RPUSH + LRANGE, glob matching through KEYS and, for the
// case-insensitive form, CONFIG GET).

#include "protocol/text.h"
#include "common/glob.h"

#include <gtest/gtest.h>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace latch {
namespace {

using namespace std::string_literals;
using Words = std::vector<std::string>;

// ---------------------------------------------------------------------------
// ParseInt64 (Redis string2ll)

TEST(ParseInt64Test, AcceptsCanonicalIntegers) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("1"), 1);
  EXPECT_EQ(ParseInt64("-1"), -1);
  EXPECT_EQ(ParseInt64("10"), 10);
  EXPECT_EQ(ParseInt64("-10"), -10);
  EXPECT_EQ(ParseInt64("30000"), 30000);
  EXPECT_EQ(ParseInt64("1700000000123"), 1700000000123);
  EXPECT_EQ(ParseInt64("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ParseInt64("-9223372036854775808"), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(ParseInt64("-9223372036854775807"), std::numeric_limits<int64_t>::min() + 1);
}

TEST(ParseInt64Test, RejectsEverythingElse) {
  const std::vector<std::string> bad{
      "",
      "-",
      "-0",  // string2ll refuses a negative zero ...
      "01",  // ... and leading zeros
      "00",
      "-01",
      "+1",  // no plus sign
      " 1",  // no spaces
      "1 ",
      "1\t",
      "1a",
      "a1",
      "1.0",
      "1e3",
      "0x10",
      "--1",
      "1-",
      "\0"s,
      "1\0"s,
      "9223372036854775808",    // INT64_MAX + 1
      "-9223372036854775809",   // INT64_MIN - 1
      "18446744073709551615",   // UINT64_MAX
      "18446744073709551616",   // UINT64_MAX + 1
      "99999999999999999999",   // 20 digits, overflows while multiplying
      "100000000000000000000",  // 21 characters
      "-100000000000000000000",
      "123456789012345678901234567890",
  };
  for (const std::string& s : bad) {
    EXPECT_EQ(ParseInt64(s), std::nullopt) << "'" << s << "'";
  }
}

TEST(ParseInt64Test, LooksOnlyAtTheViewItIsGiven) {
  const std::string s = "12345";
  EXPECT_EQ(ParseInt64(std::string_view(s).substr(0, 2)), 12);
  EXPECT_EQ(ParseInt64(std::string_view(s).substr(1, 3)), 234);
}

// ---------------------------------------------------------------------------
// ParseDouble

TEST(ParseDoubleTest, AcceptsAndRejects) {
  EXPECT_EQ(ParseDouble("1.5"), 1.5);
  EXPECT_EQ(ParseDouble("-0.25"), -0.25);
  EXPECT_EQ(ParseDouble("3"), 3.0);
  EXPECT_EQ(ParseDouble("1e3"), 1000.0);
  EXPECT_EQ(ParseDouble(""), std::nullopt);
  EXPECT_EQ(ParseDouble(" 1"), std::nullopt);
  EXPECT_EQ(ParseDouble("1 "), std::nullopt);
  EXPECT_EQ(ParseDouble("1x"), std::nullopt);
  EXPECT_EQ(ParseDouble("abc"), std::nullopt);
  EXPECT_EQ(ParseDouble("nan"), std::nullopt);
  EXPECT_EQ(ParseDouble("1\0"s), std::nullopt);
}

// The integer fast path gives exactly what strtod gives (bit for bit: -0
// stays -0), and leaves to strtod what it cannot (16 digits and more, any
// other character).
TEST(ParseDoubleTest, IntegerFastPathIsStrtodBitForBit) {
  std::mt19937_64 rng(7);
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    const int sign = static_cast<int>(rng() % 3);
    if (sign == 1) s += '-';
    if (sign == 2) s += '+';
    const size_t digits = 1 + rng() % 17;
    for (size_t i = 0; i < digits; ++i) s += static_cast<char>('0' + rng() % 10);
    if (rng() % 50 == 0) s[rng() % s.size()] = ".e x"[rng() % 4];
    double fast = 0;
    const bool took = ParseSmallIntegerDouble(s, &fast);
    char* end = nullptr;
    const double slow = std::strtod(s.c_str(), &end);
    if (!took) {
      EXPECT_TRUE(digits > 15 || *end != '\0' ||
                  s.find_first_not_of("+-0123456789") != std::string::npos)
          << s;
      continue;
    }
    EXPECT_EQ(*end, '\0') << s;
    EXPECT_EQ(std::memcmp(&fast, &slow, sizeof(double)), 0) << s;
    EXPECT_EQ(ParseDoubleArg(s), slow) << s;
  }
  double z = 1;
  ASSERT_TRUE(ParseSmallIntegerDouble("-0", &z));
  EXPECT_TRUE(std::signbit(z));
  EXPECT_FALSE(ParseSmallIntegerDouble("", &z));
  EXPECT_FALSE(ParseSmallIntegerDouble("-", &z));
  EXPECT_FALSE(ParseSmallIntegerDouble("1.5", &z));
  EXPECT_FALSE(ParseSmallIntegerDouble("1234567890123456", &z));  // 16 digits: strtod's
}

// ---------------------------------------------------------------------------
// SplitArgs (Redis sdssplitargs)

TEST(SplitArgsTest, BlanksSeparateWords) {
  EXPECT_EQ(SplitArgs(""), Words{});
  EXPECT_EQ(SplitArgs("   \t "), Words{});
  EXPECT_EQ(SplitArgs("PING"), (Words{"PING"}));
  EXPECT_EQ(SplitArgs("  SET  k\tv  "), (Words{"SET", "k", "v"}));
  EXPECT_EQ(SplitArgs("a\rb\nc"), (Words{"a", "b", "c"}));
  // Between words any isspace() byte is skipped, but only space, tab, CR and
  // LF end a word: a vertical tab inside a word stays (redis-server: RPUSH l
  // a\vb pushes one element).
  EXPECT_EQ(SplitArgs("a\vb"), (Words{"a\vb"}));
  EXPECT_EQ(SplitArgs("\v\fa b"), (Words{"a", "b"}));
}

TEST(SplitArgsTest, DoubleQuotes) {
  EXPECT_EQ(SplitArgs(R"("a b")"), (Words{"a b"}));
  EXPECT_EQ(SplitArgs(R"("")"), (Words{""}));
  EXPECT_EQ(SplitArgs(R"("a" "b")"), (Words{"a", "b"}));
  EXPECT_EQ(SplitArgs("\"x\"\ty"), (Words{"x", "y"}));
  // Quotes may start in the middle of a word.
  EXPECT_EQ(SplitArgs(R"(a"b c")"), (Words{"ab c"}));
  EXPECT_EQ(SplitArgs(R"(a"b" c)"), (Words{"ab", "c"}));
}

TEST(SplitArgsTest, DoubleQuoteEscapes) {
  EXPECT_EQ(SplitArgs(R"("a\x41\n\tz")"), (Words{"aA\n\tz"}));
  EXPECT_EQ(SplitArgs(R"("\r\b\a")"), (Words{"\r\b\a"}));
  EXPECT_EQ(SplitArgs(R"("\xFf\x00\x7e")"), (Words{"\xff\0~"s}));
  EXPECT_EQ(SplitArgs(R"("\xAB\x4a\xc3")"), (Words{"\xab\x4a\xc3"}));
  EXPECT_EQ(SplitArgs(R"("\"\\")"), (Words{"\"\\"}));
  // Unknown escapes give the character itself; \x needs two hex digits.
  EXPECT_EQ(SplitArgs(R"("\q")"), (Words{"q"}));
  EXPECT_EQ(SplitArgs(R"("\x4g")"), (Words{"x4g"}));
  EXPECT_EQ(SplitArgs(R"("\xzz")"), (Words{"xzz"}));
  EXPECT_EQ(SplitArgs(R"("ab\\")"), (Words{"ab\\"}));
  // Outside quotes a backslash is an ordinary byte.
  EXPECT_EQ(SplitArgs(R"(a\nb)"), (Words{"a\\nb"}));
}

TEST(SplitArgsTest, SingleQuotes) {
  EXPECT_EQ(SplitArgs(R"('a b')"), (Words{"a b"}));
  EXPECT_EQ(SplitArgs(R"('b\'c')"), (Words{"b'c"}));
  // Only \' is an escape inside single quotes.
  EXPECT_EQ(SplitArgs(R"('a\nb')"), (Words{"a\\nb"}));
  EXPECT_EQ(SplitArgs(R"('a\"b')"), (Words{"a\\\"b"}));
  EXPECT_EQ(SplitArgs(R"('a"b')"), (Words{"a\"b"}));
  EXPECT_EQ(SplitArgs(R"("a'b")"), (Words{"a'b"}));
}

TEST(SplitArgsTest, UnbalancedQuotes) {
  for (const char* s : {R"("abc)", R"('abc)", R"("a"b)", R"('x'z)", R"("abc\")", R"(a "b)",
                        R"("a"")", R"("a" "b)", R"(')", R"(")"}) {
    EXPECT_EQ(SplitArgs(s), std::nullopt) << s;
  }
}

TEST(SplitArgsTest, NulEndsTheLine) {
  EXPECT_EQ(SplitArgs("a b\0c d"s), (Words{"a", "b"}));
  EXPECT_EQ(SplitArgs("\0a"s), Words{});
  // Inside quotes the NUL ends the line before the closing quote.
  EXPECT_EQ(SplitArgs("\"a\0\""s), std::nullopt);
}

// ---------------------------------------------------------------------------
// Case, sanitizing, numbers

TEST(EqualsIgnoreCaseTest, AsciiOnly) {
  EXPECT_TRUE(EqualsIgnoreCase("GET", "get"));
  EXPECT_TRUE(EqualsIgnoreCase("pX", "Px"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_TRUE(EqualsIgnoreCase("a1-_", "A1-_"));
  EXPECT_FALSE(EqualsIgnoreCase("get", "gets"));
  EXPECT_FALSE(EqualsIgnoreCase("gets", "get"));
  EXPECT_FALSE(EqualsIgnoreCase("nx", "xx"));
  EXPECT_FALSE(EqualsIgnoreCase("", "a"));
  // Bytes that differ only in bit 0x20 but are not letters are different.
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));
  EXPECT_FALSE(EqualsIgnoreCase("[", "{"));
  EXPECT_FALSE(EqualsIgnoreCase("\xc0", "\xe0"));
}

TEST(ToLowerTest, LowersAsciiLettersOnly) {
  EXPECT_EQ(ToLower("SeT"), "set");
  EXPECT_EQ(ToLower("ABC-123_XYZ@["), "abc-123_xyz@[");
  EXPECT_EQ(ToLower("\xC0\xDE"), "\xC0\xDE");
  EXPECT_EQ(ToLower(""), "");
}

TEST(SanitizeErrorTextTest, ReplacesCrAndLfWithSpaces) {
  std::string s = "ERR a\r\nb\nc\r";
  SanitizeErrorText(s);
  EXPECT_EQ(s, "ERR a  b c ");
  std::string clean = "ERR fine\t\0x"s;
  SanitizeErrorText(clean);
  EXPECT_EQ(clean, "ERR fine\t\0x"s);
}

TEST(AppendIntTest, AppendsDecimal) {
  std::string out = "x";
  AppendInt(out, 0);
  AppendInt(out, -1);
  AppendInt(out, 42);
  EXPECT_EQ(out, "x0-142");
  std::string min;
  AppendInt(min, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(min, "-9223372036854775808");
  std::string max;
  AppendInt(max, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(max, "9223372036854775807");
  // Round trip with the parser.
  for (int64_t v :
       {int64_t{7}, int64_t{-7}, int64_t{1} << 40, std::numeric_limits<int64_t>::min()}) {
    std::string s;
    AppendInt(s, v);
    EXPECT_EQ(ParseInt64(s), v);
  }
}

// ---------------------------------------------------------------------------
// GlobMatch (Redis stringmatchlen)

struct GlobCase {
  std::string pattern;
  std::string str;
  bool match;
};

TEST(GlobMatchTest, MatchesLikeRedisKeys) {
  // Every row was checked with redis-server 7.0.15: FLUSHALL, SET str, KEYS pattern.
  const std::vector<GlobCase> cases{
      {"", "", true},
      {"", "a", false},
      {"**", "", false},  // Redis quirk: no pattern but "" matches the empty string
      {"?", "", false},
      {"*a", "", false},
      {"?", "a", true},
      {"?", "ab", false},
      {"h?llo", "hello", true},
      {"h?llo", "hllo", false},
      {"h*llo", "hllo", true},
      {"h*llo", "heeeello", true},
      {"h*llo", "hello world", false},
      {"h[ae]llo", "hallo", true},
      {"h[ae]llo", "hillo", false},
      {"h[^e]llo", "hallo", true},
      {"h[^e]llo", "hello", false},
      {"h[a-b]llo", "hbllo", true},
      {"h[a-b]llo", "hcllo", false},
      {"[c-a]", "b", true},  // a reversed range is swapped
      {"[c-a]", "d", false},
      {"\\*", "*", true},
      {"\\*", "a", false},
      {"a\\", "a\\", true},  // a trailing backslash is literal
      {"\\?", "?", true},
      {"\\?", "x", false},
      {"[\\]]", "]", true},
      {"[\\]]", "\\", false},
      {"[]]", "]", false},
      {"[abc", "a", true},  // an unterminated class runs to the end
      {"[abc", "ab", false},
      {"[abc", "d", false},
      {"[", "[", false},
      {"[^", "x", true},
      {"[^]", "x", true},
      {"a**", "a", true},
      {"a*", "a", true},
      {"*a", "bba", true},
      {"*a", "bab", false},
      {"a*b*c", "axxbyyc", true},
      {"a*b*c", "axxbyy", false},
      {"[a-]", "-", false},  // "a-]" is a range a..']' and eats the ']'
      {"[a-]", "a", true},
      {"[-a]", "-", true},
      {"[!a]", "b", false},  // '!' is not negation
      {"[!a]", "!", true},
      {"*?", "a", true},
      {"*?", "", false},
      {"?*", "a", true},
      {"foo*", "foo", true},
      {"*foo", "foo", true},
      {"*.*", "a.b", true},
      {"*.*", "ab", false},
      {"[a-c]x", "bx", true},
      {"[^a-c]x", "bx", false},
      {"[^a-c]x", "dx", true},
      {"a\\[b", "a[b", true},
      {"[\\-]", "-", true},
      {"[a\\-c]", "b", false},
      {"**a**", "xxaxx", true},
      {"*a*a*a*b", "aaaaaaaab", true},
      {"*a*a*a*b", "aaaaaaaa", false},
  };
  for (const GlobCase& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.str), c.match) << "'" << c.pattern << "' vs '" << c.str << "'";
  }
}

TEST(GlobMatchTest, CaseInsensitiveLikeConfigGet) {
  // Checked with CONFIG GET, which matches names case-insensitively.
  EXPECT_TRUE(GlobMatch("MAXMEMORY", "maxmemory", true));
  EXPECT_FALSE(GlobMatch("MAXMEMORY", "maxmemory"));
  EXPECT_TRUE(GlobMatch("MaxMem*", "maxmemory-policy", true));
  EXPECT_TRUE(GlobMatch("[L-N]axmemory", "maxmemory", true));
  EXPECT_FALSE(GlobMatch("[L-N]axmemory", "maxmemory"));
  EXPECT_TRUE(GlobMatch("[^A-L]axmemory", "maxmemory", true));
  EXPECT_TRUE(GlobMatch("MAXMEMOR[X-Z]", "maxmemory", true));
  EXPECT_TRUE(GlobMatch("maxmemor[X-Z]", "maxmemory", true));
  EXPECT_TRUE(GlobMatch("[m]AXMEMOR?", "maxmemory", true));
  // An escaped character outside a class honours nocase, inside one it does not.
  EXPECT_TRUE(GlobMatch("\\Maxmemor?", "maxmemory", true));
  EXPECT_FALSE(GlobMatch("[\\M]axmemor?", "maxmemory", true));
  // Redis orders a range's ends before lower-casing them: [Z-a] stays the
  // range 'z'..'a' once lowered, which matches nothing.
  EXPECT_FALSE(GlobMatch("[Z-a]axmemory", "maxmemory", true));
}

TEST(GlobMatchTest, BinarySafe) {
  EXPECT_TRUE(GlobMatch("a*b"s, "a\0\r\nb"s));
  EXPECT_TRUE(GlobMatch("a?b"s, "a\0b"s));
  EXPECT_FALSE(GlobMatch("a\0"s, "a"s));
}

TEST(GlobMatchTest, PathologicalPatternsFinishQuickly) {
  // Redis fixed CVE-2022-36021 (in 7.0.9): a pattern with many stars must not
  // take exponential time on a string that nearly matches. KEYS with this
  // pattern returns at once on redis-server 7.0.15.
  const std::string pattern = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
  const std::string str(60, 'a');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch(pattern, str));
  EXPECT_FALSE(GlobMatch(pattern, str, true));
  EXPECT_TRUE(GlobMatch(pattern, str + "b"));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(1));
}

TEST(GlobMatchTest, VeryLongPatternsAreBounded) {
  // Redis gives up past 1000 levels of nesting instead of exhausting the stack.
  const std::string stars_and_letters = [] {
    std::string p;
    for (int i = 0; i < 5000; ++i) p += "*a";
    return p;
  }();
  EXPECT_FALSE(GlobMatch(stars_and_letters, std::string(5000, 'a')));
  EXPECT_TRUE(GlobMatch(stars_and_letters.substr(0, 200), std::string(100, 'a')));
}

}  // namespace
}  // namespace latch
