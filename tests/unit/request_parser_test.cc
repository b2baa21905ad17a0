// Tests for the incremental request parser (protocol/request_parser.h) and
// for the request writer whose output it must read back.
//
// Every error text here was checked against Debian's redis-server 7.0.15 by
// sending the same bytes on a raw socket.

#include "protocol/request_parser.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/request_writer.h"

namespace latch::resp {
namespace {

using namespace std::string_literals;
using Args = std::vector<std::string>;
using Result = RequestParser::Result;

Args ToArgs(const std::vector<std::string_view>& views) {
  return Args(views.begin(), views.end());
}

// What a connection observes when it feeds a byte stream to the parser.
struct Outcome {
  std::vector<Args> requests;
  std::vector<size_t> consumed;
  std::vector<bool> inline_flags;
  bool error = false;
  std::string error_text;
  // Bytes still unconsumed at the end (a partial request). Left at zero after
  // an error, when the connection closes and the rest does not matter.
  size_t leftover = 0;

  bool operator==(const Outcome&) const = default;
};

std::string Escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c >= 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void PrintTo(const Outcome& o, std::ostream* os) {
  *os << "{requests=[";
  for (size_t i = 0; i < o.requests.size(); ++i) {
    *os << (i ? ", " : "") << "[";
    for (size_t j = 0; j < o.requests[i].size(); ++j) {
      *os << (j ? " " : "") << '"' << Escape(o.requests[i][j]) << '"';
    }
    *os << "]/" << o.consumed[i] << (o.inline_flags[i] ? "i" : "m");
  }
  *os << "], error=" << o.error << " '" << o.error_text << "', leftover=" << o.leftover << "}";
}

// Plays the part of a connection. The chunks arrive one after another; after
// each arrival the parser is called with every byte not consumed yet, exactly
// as request_parser.h requires, until it wants more. When `relocate` is set
// the unconsumed bytes are moved to a different buffer before each call that
// follows a kNeedMore (and the old buffer is scribbled over), which the
// contract allows.
Outcome Feed(const std::vector<std::string>& chunks, const ParseLimits& limits = {},
             bool relocate = false) {
  RequestParser parser;
  Outcome out;
  std::string bufs[2];
  int cur = 0;
  for (const std::string& chunk : chunks) {
    if (relocate) {
      bufs[1 - cur] = bufs[cur];
      bufs[cur].assign(bufs[cur].size(), '#');
      cur = 1 - cur;
    }
    std::string& buf = bufs[cur];
    buf += chunk;
    while (!buf.empty()) {
      Result r = parser.Parse(buf, limits);
      if (r == Result::kNeedMore) break;
      if (r == Result::kError) {
        out.error = true;
        out.error_text = parser.error();
        break;
      }
      EXPECT_GT(parser.consumed(), 0u);
      EXPECT_LE(parser.consumed(), buf.size());
      if (!parser.inline_request()) {
        // Multibulk arguments are views into the caller's buffer, not copies.
        for (std::string_view a : parser.args()) {
          EXPECT_GE(a.data(), buf.data());
          EXPECT_LE(a.data() + a.size(), buf.data() + parser.consumed());
        }
      }
      out.requests.push_back(ToArgs(parser.args()));
      out.consumed.push_back(parser.consumed());
      out.inline_flags.push_back(parser.inline_request());
      buf.erase(0, parser.consumed());
    }
    if (out.error) break;
  }
  if (!out.error) out.leftover = bufs[cur].size();
  return out;
}

std::vector<std::string> SplitAt(std::string_view s, const std::vector<size_t>& cuts) {
  std::vector<std::string> chunks;
  size_t from = 0;
  for (size_t c : cuts) {
    chunks.emplace_back(s.substr(from, c - from));
    from = c;
  }
  chunks.emplace_back(s.substr(from));
  return chunks;
}

std::vector<std::string> Bytewise(std::string_view s) {
  std::vector<std::string> chunks;
  for (char c : s) chunks.emplace_back(1, c);
  return chunks;
}

// Parses `in` in one call and returns the first result.
struct One {
  Result result;
  Args args;
  size_t consumed;
  std::string error;
  bool is_inline;
};

One ParseOnce(std::string_view in, const ParseLimits& limits = {}) {
  RequestParser p;
  Result r = p.Parse(in, limits);
  One one{r, {}, 0, {}, false};
  if (r == Result::kRequest) {
    one.args = ToArgs(p.args());
    one.consumed = p.consumed();
    one.is_inline = p.inline_request();
  } else if (r == Result::kError) {
    one.error = p.error();
  }
  return one;
}

// ---------------------------------------------------------------------------
// Well-formed requests

TEST(RequestParserTest, MultibulkRequest) {
  const std::string in = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
  One one = ParseOnce(in);
  ASSERT_EQ(one.result, Result::kRequest);
  EXPECT_EQ(one.args, (Args{"SET", "key", "value"}));
  EXPECT_EQ(one.consumed, in.size());
  EXPECT_FALSE(one.is_inline);
}

TEST(RequestParserTest, MultibulkArgsAreViewsIntoTheInput) {
  const std::string in = "*2\r\n$3\r\nGET\r\n$4\r\nlock\r\n";
  RequestParser p;
  ASSERT_EQ(p.Parse(in, {}), Result::kRequest);
  ASSERT_EQ(p.args().size(), 2u);
  EXPECT_EQ(p.args()[0].data(), in.data() + 8);
  EXPECT_EQ(p.args()[0].size(), 3u);
  EXPECT_EQ(p.args()[1].data(), in.data() + 17);
  EXPECT_EQ(p.args()[1].size(), 4u);
}

TEST(RequestParserTest, MultibulkEmptyAndMultiDigitBulks) {
  const std::string big(1234, 'v');
  const std::string in = "*3\r\n$0\r\n\r\n$1234\r\n" + big + "\r\n$1\r\nx\r\n";
  One one = ParseOnce(in);
  ASSERT_EQ(one.result, Result::kRequest);
  EXPECT_EQ(one.args, (Args{"", big, "x"}));
  EXPECT_EQ(one.consumed, in.size());
}

TEST(RequestParserTest, MultibulkIsBinarySafe) {
  const std::string payload = "a\0b\r\n\r\nc\nd\r*1\r\n$3\r\n"s;
  const std::string in =
      "*2\r\n$4\r\nECHO\r\n$" + std::to_string(payload.size()) + "\r\n" + payload + "\r\n";
  One one = ParseOnce(in);
  ASSERT_EQ(one.result, Result::kRequest);
  EXPECT_EQ(one.args, (Args{"ECHO", payload}));
  EXPECT_EQ(one.consumed, in.size());
}

TEST(RequestParserTest, TrailingCrlfOfABulkIsSkippedUncheckedLikeRedis) {
  // redis-server 7.0.15 answers +PONG to these bytes: it skips the two bytes
  // after a bulk payload without looking at them.
  const std::string in = "*1\r\n$4\r\nPINGXY*1\r\n$4\r\nPING\r\n";
  Outcome o = Feed({in});
  EXPECT_EQ(o.requests, (std::vector<Args>{{"PING"}, {"PING"}}));
  EXPECT_EQ(o.consumed, (std::vector<size_t>{14, 14}));
  EXPECT_FALSE(o.error);
}

TEST(RequestParserTest, InlineRequest) {
  One one = ParseOnce("SET  key   value\r\n");
  ASSERT_EQ(one.result, Result::kRequest);
  EXPECT_EQ(one.args, (Args{"SET", "key", "value"}));
  EXPECT_EQ(one.consumed, 18u);
  EXPECT_TRUE(one.is_inline);
}

TEST(RequestParserTest, InlineLineEndings) {
  One lf = ParseOnce("PING\n");
  ASSERT_EQ(lf.result, Result::kRequest);
  EXPECT_EQ(lf.args, (Args{"PING"}));
  EXPECT_EQ(lf.consumed, 5u);

  One crlf = ParseOnce("PING\r\nECHO x\r\n");
  ASSERT_EQ(crlf.result, Result::kRequest);
  EXPECT_EQ(crlf.args, (Args{"PING"}));
  EXPECT_EQ(crlf.consumed, 6u);

  // A lone CR inside the line separates words (redis-server: RPUSH l a\rb
  // pushes two elements).
  One cr = ParseOnce("RPUSH l a\rb\r\n");
  ASSERT_EQ(cr.result, Result::kRequest);
  EXPECT_EQ(cr.args, (Args{"RPUSH", "l", "a", "b"}));

  // Leading and trailing blanks, tabs between words.
  One blanks = ParseOnce("  GET\tk  \r\n");
  ASSERT_EQ(blanks.result, Result::kRequest);
  EXPECT_EQ(blanks.args, (Args{"GET", "k"}));
}

TEST(RequestParserTest, InlineQuotesAndEscapes) {
  // Each argument checked with redis-server 7.0.15 (RPUSH then LRANGE).
  const std::string in = R"(SET "key with space" 'it\'s' "a\x41\x62\n\t\r\"\\" '\n' "\xFf" "" "\q")"
                         "\r\n";
  One one = ParseOnce(in);
  ASSERT_EQ(one.result, Result::kRequest);
  EXPECT_EQ(one.args,
            (Args{"SET", "key with space", "it's", "aAb\n\t\r\"\\", "\\n", "\xff", "", "q"}));
  EXPECT_EQ(one.consumed, in.size());
  EXPECT_TRUE(one.is_inline);

  One mixed = ParseOnce("RPUSH l a\"b c\"\r\n");
  ASSERT_EQ(mixed.result, Result::kRequest);
  EXPECT_EQ(mixed.args, (Args{"RPUSH", "l", "ab c"}));

  One nul = ParseOnce(R"(SET k "a\x00b")"
                      "\r\n");
  ASSERT_EQ(nul.result, Result::kRequest);
  EXPECT_EQ(nul.args, (Args{"SET", "k", "a\0b"s}));
}

TEST(RequestParserTest, FirstByteDecidesTheRequestType) {
  // Only '*' starts a multibulk request; anything else is an inline line.
  One dollar = ParseOnce("$3\r\nfoo\r\n");
  ASSERT_EQ(dollar.result, Result::kRequest);
  EXPECT_EQ(dollar.args, (Args{"$3"}));
  EXPECT_EQ(dollar.consumed, 4u);
  EXPECT_TRUE(dollar.is_inline);

  One space = ParseOnce(" *1\r\n");
  ASSERT_EQ(space.result, Result::kRequest);
  EXPECT_EQ(space.args, (Args{"*1"}));
}

TEST(RequestParserTest, EmptyRequestsAreConsumedAndReturnedEmpty) {
  // Redis skips all of these (checked: they produce no reply and the PING
  // after them is answered).
  for (std::string in : {"*0\r\n", "*-1\r\n", "*-2\r\n", "\r\n", "\n", "   \r\n", "\t \n"}) {
    SCOPED_TRACE(Escape(in));
    One one = ParseOnce(in);
    ASSERT_EQ(one.result, Result::kRequest);
    EXPECT_TRUE(one.args.empty());
    EXPECT_EQ(one.consumed, in.size());

    Outcome o = Feed({in + "PING\r\n"});
    EXPECT_EQ(o.requests, (std::vector<Args>{{}, {"PING"}}));
    EXPECT_EQ(o.consumed, (std::vector<size_t>{in.size(), 6}));
    EXPECT_EQ(o.leftover, 0u);
  }
}

TEST(RequestParserTest, PipelinedRequestsInOneBuffer) {
  const std::string in =
      "*2\r\n$3\r\nGET\r\n$1\r\na\r\n"
      "PING\r\n"
      "*0\r\n"
      "*1\r\n$4\r\nPING\r\n"
      "\n"
      "ECHO 'x y'\n"
      "*2\r\n$3\r\nGET\r\n$1\r\nb\r\n"
      "*1\r\n$4\r\nPI";  // the start of the next one
  Outcome o = Feed({in});
  EXPECT_EQ(
      o.requests,
      (std::vector<Args>{{"GET", "a"}, {"PING"}, {}, {"PING"}, {}, {"ECHO", "x y"}, {"GET", "b"}}));
  EXPECT_EQ(o.consumed, (std::vector<size_t>{20, 6, 4, 14, 1, 11, 20}));
  EXPECT_EQ(o.inline_flags, (std::vector<bool>{false, true, false, false, true, true, false}));
  EXPECT_FALSE(o.error);
  EXPECT_EQ(o.leftover, 10u);
}

// ---------------------------------------------------------------------------
// Resumability: however the bytes are cut, the result is the same.

struct Sample {
  std::string name;
  std::string bytes;
  std::vector<Args> requests;
};

std::vector<Sample> Samples() {
  std::vector<Sample> s;
  s.push_back(
      {"set", "*3\r\n$3\r\nSET\r\n$4\r\nlock\r\n$5\r\ntoken\r\n", {{"SET", "lock", "token"}}});
  s.push_back({"empty bulk", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", {{"ECHO", ""}}});
  s.push_back(
      {"binary", "*2\r\n$4\r\nECHO\r\n$7\r\n\r\n\0\r*\n$\r\n"s, {{"ECHO", "\r\n\0\r*\n$"s}}});
  s.push_back({"twelve args",
               "*12\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"
               "$1\r\ng\r\n$1\r\nh\r\n$1\r\ni\r\n$1\r\nj\r\n$1\r\nk\r\n$10\r\n0123456789\r\n",
               {{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "0123456789"}}});
  s.push_back({"inline crlf", "SET k \"a b\\x41\" 'c d'\r\n", {{"SET", "k", "a bA", "c d"}}});
  s.push_back({"inline lf", "PING\n", {{"PING"}}});
  s.push_back({"star zero", "*0\r\n", {{}}});
  s.push_back({"star minus one", "*-1\r\n", {{}}});
  s.push_back({"blank crlf", "\r\n", {{}}});
  s.push_back({"blank lf", "\n", {{}}});
  s.push_back({"blanks", "  \t \r\n", {{}}});
  // All of the above back to back, as a pipelining client sends them.
  Sample all{"pipeline", "", {}};
  for (const Sample& x : s) {
    all.bytes += x.bytes;
    all.requests.insert(all.requests.end(), x.requests.begin(), x.requests.end());
  }
  s.push_back(all);
  return s;
}

TEST(RequestParserTest, OneShotParseOfSamples) {
  for (const Sample& s : Samples()) {
    SCOPED_TRACE(s.name);
    Outcome o = Feed({s.bytes});
    EXPECT_EQ(o.requests, s.requests);
    EXPECT_FALSE(o.error) << o.error_text;
    EXPECT_EQ(o.leftover, 0u);
    size_t total = 0;
    for (size_t c : o.consumed) total += c;
    EXPECT_EQ(total, s.bytes.size());
  }
}

TEST(RequestParserTest, EverySplitPointGivesTheOneShotResult) {
  for (const Sample& s : Samples()) {
    SCOPED_TRACE(s.name);
    const Outcome want = Feed({s.bytes});
    for (size_t cut = 0; cut <= s.bytes.size(); ++cut) {
      SCOPED_TRACE("cut at " + std::to_string(cut));
      EXPECT_EQ(Feed(SplitAt(s.bytes, {cut})), want);
      EXPECT_EQ(Feed(SplitAt(s.bytes, {cut}), {}, /*relocate=*/true), want);
    }
  }
}

TEST(RequestParserTest, EveryPairOfSplitPointsGivesTheOneShotResult) {
  const Sample all = Samples().back();
  const Outcome want = Feed({all.bytes});
  const size_t n = all.bytes.size();
  for (size_t a = 0; a <= n; ++a) {
    for (size_t b = a; b <= n; ++b) {
      Outcome got = Feed(SplitAt(all.bytes, {a, b}), {}, /*relocate=*/(a + b) % 2 == 1);
      ASSERT_EQ(got, want) << "cuts at " << a << " and " << b;
    }
  }
}

TEST(RequestParserTest, ByteByByteGivesTheOneShotResult) {
  for (const Sample& s : Samples()) {
    SCOPED_TRACE(s.name);
    const Outcome want = Feed({s.bytes});
    EXPECT_EQ(Feed(Bytewise(s.bytes)), want);
    EXPECT_EQ(Feed(Bytewise(s.bytes), {}, /*relocate=*/true), want);
  }
}

TEST(RequestParserTest, ResumesWhenTheCallerMovesTheBytes) {
  // The caller copies the unconsumed prefix to a new string between calls;
  // the parser must not keep pointers into the old one.
  const std::string req = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n";
  RequestParser p;
  auto first = std::make_unique<std::string>(req.substr(0, 15));  // "...$3\r\nSET\r\n$1"
  ASSERT_EQ(p.Parse(*first, {}), Result::kNeedMore);
  auto second = std::make_unique<std::string>(*first + req.substr(15, 10));
  first->assign(first->size(), '#');
  first.reset();
  ASSERT_EQ(p.Parse(*second, {}), Result::kNeedMore);
  std::string third = *second + req.substr(25);
  second->assign(second->size(), '#');
  second.reset();
  ASSERT_EQ(p.Parse(third, {}), Result::kRequest);
  EXPECT_EQ(ToArgs(p.args()), (Args{"SET", "k", "hello"}));
  EXPECT_EQ(p.consumed(), req.size());
  for (std::string_view a : p.args()) {
    EXPECT_GE(a.data(), third.data());
    EXPECT_LE(a.data() + a.size(), third.data() + third.size());
  }
}

TEST(RequestParserTest, LargeBulkArrivingInPieces) {
  // A value larger than the 64 KiB line limit must not trip that limit.
  const std::string value(100000, 'z');
  std::string in;
  AppendRequest(in, {"SET", "k", value});
  for (size_t chunk : {1u, 7u, 4096u, 65536u}) {
    SCOPED_TRACE(chunk);
    std::vector<std::string> chunks;
    for (size_t i = 0; i < in.size(); i += chunk) chunks.push_back(in.substr(i, chunk));
    Outcome o = Feed(chunks, {}, chunk == 4096);
    EXPECT_EQ(o.requests, (std::vector<Args>{{"SET", "k", value}}));
    EXPECT_FALSE(o.error) << o.error_text;
  }
}

TEST(RequestParserTest, BytesWantedWhileReceivingABulk) {
  RequestParser p;
  std::string in = "*2\r\n$3\r\nGET\r\n$10\r\nab";
  ASSERT_EQ(p.Parse(in, {}), Result::kNeedMore);
  // 4 ("*2\r\n") + 9 ("$3\r\nGET\r\n") + 5 ("$10\r\n") + 10 + 2.
  EXPECT_EQ(p.bytes_wanted(), 30u);
  in += "cdefghij\r";
  ASSERT_EQ(p.Parse(in, {}), Result::kNeedMore);
  EXPECT_EQ(p.bytes_wanted(), 30u);
  in += "\n";
  ASSERT_EQ(p.Parse(in, {}), Result::kRequest);
  EXPECT_EQ(p.consumed(), 30u);
  EXPECT_EQ(ToArgs(p.args()), (Args{"GET", "abcdefghij"}));
  EXPECT_EQ(p.bytes_wanted(), 0u);
}

TEST(RequestParserTest, BytesWantedIsZeroWhenUnknown) {
  RequestParser p;
  ASSERT_EQ(p.Parse("*2\r\n$3", {}), Result::kNeedMore);
  EXPECT_EQ(p.bytes_wanted(), 0u);
  RequestParser q;
  ASSERT_EQ(q.Parse("GET k", {}), Result::kNeedMore);
  EXPECT_EQ(q.bytes_wanted(), 0u);
  // After one bulk is complete, while the next one's header is incomplete.
  RequestParser r;
  ASSERT_EQ(r.Parse("*2\r\n$3\r\nGET\r\n$1", {}), Result::kNeedMore);
  EXPECT_EQ(r.bytes_wanted(), 0u);
}

TEST(RequestParserTest, ResetForgetsAPartialRequest) {
  RequestParser p;
  ASSERT_EQ(p.Parse("*2\r\n$3\r\nGET\r\n", {}), Result::kNeedMore);
  p.Reset();
  ASSERT_EQ(p.Parse("PING\r\n", {}), Result::kRequest);
  EXPECT_EQ(ToArgs(p.args()), (Args{"PING"}));
  EXPECT_EQ(p.consumed(), 6u);

  RequestParser q;
  ASSERT_EQ(q.Parse("GET k", {}), Result::kNeedMore);
  q.Reset();
  ASSERT_EQ(q.Parse("*1\r\n$4\r\nPING\r\n", {}), Result::kRequest);
  EXPECT_EQ(ToArgs(q.args()), (Args{"PING"}));
  EXPECT_FALSE(q.inline_request());
}

// ---------------------------------------------------------------------------
// Limits that are not errors

TEST(RequestParserTest, LargestCountsAndLengthsAreAccepted) {
  // INT_MAX elements is a valid header: the parser waits for them (and must
  // not reserve room for two billion arguments up front).
  RequestParser p;
  EXPECT_EQ(p.Parse("*2147483647\r\n", {}), Result::kNeedMore);
  EXPECT_EQ(p.Parse("*2147483647\r\n$1\r\na\r\n$1\r\nb\r\n", {}), Result::kNeedMore);

  // proto-max-bulk-len itself is fine.
  RequestParser q;
  EXPECT_EQ(q.Parse("*1\r\n$536870912\r\n", {}), Result::kNeedMore);
  EXPECT_EQ(q.bytes_wanted(), 4u + 12u + 536870912u + 2u);

  ParseLimits small;
  small.max_bulk_len = 100;
  const std::string v(100, 'x');
  One one = ParseOnce("*1\r\n$100\r\n" + v + "\r\n", small);
  ASSERT_EQ(one.result, Result::kRequest);
  EXPECT_EQ(one.args, (Args{v}));
}

TEST(RequestParserTest, UnauthenticatedLimitsAreInclusive) {
  ParseLimits unauth;
  unauth.unauthenticated = true;
  const std::string big(16384, 'p');
  std::string in;
  AppendRequest(in, {"AUTH", big, "c", "d", "e", "f", "g", "h", "i", big});  // 10 elements
  Outcome o = Feed({in}, unauth);
  EXPECT_FALSE(o.error) << o.error_text;
  EXPECT_EQ(o.requests, (std::vector<Args>{{"AUTH", big, "c", "d", "e", "f", "g", "h", "i", big}}));

  // The same limits do not apply once authenticated.
  std::string eleven;
  AppendRequest(eleven,
                {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", std::string(20000, 'q')});
  Outcome authed = Feed({eleven});
  EXPECT_FALSE(authed.error) << authed.error_text;
  ASSERT_EQ(authed.requests.size(), 1u);
  EXPECT_EQ(authed.requests[0].size(), 11u);
}

TEST(RequestParserTest, InlineLineOfExactly64KiBIsStillAccepted) {
  const std::string line(kMaxInlineSize, 'a');
  RequestParser p;
  EXPECT_EQ(p.Parse(line, {}), Result::kNeedMore);
  const std::string full = line + "\r\n";
  ASSERT_EQ(p.Parse(full, {}), Result::kRequest);
  EXPECT_EQ(ToArgs(p.args()), (Args{line}));
  EXPECT_EQ(p.consumed(), full.size());
}

// ---------------------------------------------------------------------------
// Malformed input

struct BadCase {
  std::string input;
  std::string error;
  ParseLimits limits;
};

ParseLimits Unauth() {
  ParseLimits l;
  l.unauthenticated = true;
  return l;
}

ParseLimits MaxBulk(int64_t n) {
  ParseLimits l;
  l.max_bulk_len = n;
  return l;
}

const char kBadMbulk[] = "ERR Protocol error: invalid multibulk length";
const char kBadBulk[] = "ERR Protocol error: invalid bulk length";
const char kQuotes[] = "ERR Protocol error: unbalanced quotes in request";

std::vector<BadCase> BadCases() {
  return {
      {"*abc\r\n", kBadMbulk, {}},
      {"*\r\n", kBadMbulk, {}},
      {"*+1\r\n", kBadMbulk, {}},
      {"*01\r\n", kBadMbulk, {}},
      {"*-0\r\n", kBadMbulk, {}},
      {"*1 \r\n", kBadMbulk, {}},
      {"*3000000000\r\n", kBadMbulk, {}},
      {"*2147483648\r\n", kBadMbulk, {}},
      {"*99999999999999999999\r\n", kBadMbulk, {}},
      {"*1\r\n$-1\r\n", kBadBulk, {}},
      {"*1\r\n$abc\r\n", kBadBulk, {}},
      {"*1\r\n$\r\n", kBadBulk, {}},
      {"*1\r\n$+3\r\n", kBadBulk, {}},
      {"*1\r\n$03\r\n", kBadBulk, {}},
      {"*1\r\n$536870913\r\n", kBadBulk, {}},
      {"*1\r\n$101\r\n", kBadBulk, MaxBulk(100)},
      {"*1\r\nX3\r\n", "ERR Protocol error: expected '$', got 'X'", {}},
      {"*2\r\n$3\r\nGET\r\n:1\r\n", "ERR Protocol error: expected '$', got ':'", {}},
      // The offending byte is echoed; a CR or LF becomes a space.
      {"*1\r\n\r\n\r\n", "ERR Protocol error: expected '$', got ' '", {}},
      {"*1\r\n\n\r\n", "ERR Protocol error: expected '$', got ' '", {}},
      {"\"a\"b\r\n", kQuotes, {}},
      {"'x'z\n", kQuotes, {}},
      {"\"abc\r\n", kQuotes, {}},
      {"'abc\r\n", kQuotes, {}},
      {"SET k \"v\\\"\r\n", kQuotes, {}},
      {"*11\r\n", "ERR Protocol error: unauthenticated multibulk length", Unauth()},
      {"*1\r\n$16385\r\n", "ERR Protocol error: unauthenticated bulk length", Unauth()},
      // The plain validity checks come before the unauthenticated ones.
      {"*3000000000\r\n", kBadMbulk, Unauth()},
      {"*1\r\n$-1\r\n", kBadBulk, Unauth()},
  };
}

TEST(RequestParserTest, MalformedInputGetsTheRedisError) {
  for (const BadCase& c : BadCases()) {
    SCOPED_TRACE(Escape(c.input));
    One one = ParseOnce(c.input, c.limits);
    ASSERT_EQ(one.result, Result::kError);
    EXPECT_EQ(one.error, c.error);
    EXPECT_NE(one.error[0], '-');

    // The same error however the bytes arrive, and never a request first.
    Outcome bytewise = Feed(Bytewise(c.input), c.limits);
    EXPECT_TRUE(bytewise.error);
    EXPECT_EQ(bytewise.error_text, c.error);
    EXPECT_TRUE(bytewise.requests.empty());
  }
}

TEST(RequestParserTest, GoodRequestBeforeGarbageIsReturnedFirst) {
  for (const BadCase& c : BadCases()) {
    for (std::string good : {"*1\r\n$4\r\nPING\r\n", "PING\r\n"}) {
      const std::string in = good + c.input;
      SCOPED_TRACE(Escape(in));
      Outcome o = Feed({in}, c.limits);
      EXPECT_EQ(o.requests, (std::vector<Args>{{"PING"}}));
      EXPECT_EQ(o.consumed, (std::vector<size_t>{good.size()}));
      EXPECT_TRUE(o.error);
      EXPECT_EQ(o.error_text, c.error);
      // And whatever the split point.
      for (size_t cut = 0; cut <= in.size(); ++cut) {
        ASSERT_EQ(Feed(SplitAt(in, {cut}), c.limits), o) << "cut at " << cut;
      }
    }
  }
}

TEST(RequestParserTest, TooBigInlineRequest) {
  std::string in(kMaxInlineSize, 'a');
  EXPECT_EQ(ParseOnce(in).result, Result::kNeedMore);
  in += 'a';
  One one = ParseOnce(in);
  ASSERT_EQ(one.result, Result::kError);
  EXPECT_EQ(one.error, "ERR Protocol error: too big inline request");

  // Arriving in pieces, the error comes as soon as the limit is passed.
  std::vector<std::string> chunks(20, std::string(4096, 'b'));
  Outcome o = Feed(chunks);
  EXPECT_TRUE(o.error);
  EXPECT_EQ(o.error_text, "ERR Protocol error: too big inline request");
}

TEST(RequestParserTest, TooBigMultibulkCountString) {
  std::string in = "*" + std::string(kMaxInlineSize - 1, '1');
  EXPECT_EQ(ParseOnce(in).result, Result::kNeedMore);
  in += '1';
  One one = ParseOnce(in);
  ASSERT_EQ(one.result, Result::kError);
  EXPECT_EQ(one.error, "ERR Protocol error: too big mbulk count string");

  std::vector<std::string> chunks{"*"};
  for (int i = 0; i < 20; ++i) chunks.push_back(std::string(4096, '2'));
  Outcome o = Feed(chunks);
  EXPECT_TRUE(o.error);
  EXPECT_EQ(o.error_text, "ERR Protocol error: too big mbulk count string");
}

TEST(RequestParserTest, TooBigBulkCountString) {
  // The limit counts from the start of the bulk header, not of the request.
  const std::string head = "*2\r\n$3\r\nGET\r\n";
  std::string in = head + "$" + std::string(kMaxInlineSize - 1, '1');
  EXPECT_EQ(ParseOnce(in).result, Result::kNeedMore);
  in += '1';
  One one = ParseOnce(in);
  ASSERT_EQ(one.result, Result::kError);
  EXPECT_EQ(one.error, "ERR Protocol error: too big bulk count string");

  std::vector<std::string> chunks{"*1\r\n$"};
  for (int i = 0; i < 20; ++i) chunks.push_back(std::string(4096, '3'));
  Outcome o = Feed(chunks);
  EXPECT_TRUE(o.error);
  EXPECT_EQ(o.error_text, "ERR Protocol error: too big bulk count string");
}

TEST(RequestParserTest, ParserIsUsableAfterAnError) {
  // The connection closes after an error, but the parser must not be left
  // half-way through the bad request.
  RequestParser p;
  ASSERT_EQ(p.Parse("*1\r\n$x\r\n", {}), Result::kError);
  ASSERT_EQ(p.Parse("PING\r\n", {}), Result::kRequest);
  EXPECT_EQ(ToArgs(p.args()), (Args{"PING"}));
  EXPECT_EQ(p.consumed(), 6u);
}

// ---------------------------------------------------------------------------
// The request writer (clients and the append-only log)

TEST(RequestWriterTest, AppendRequestFormats) {
  std::string out = "prefix";
  AppendRequest(out, {"SET", "k", "v"});
  EXPECT_EQ(out, "prefix*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");

  std::string empty;
  AppendRequest(empty, std::initializer_list<std::string_view>{});
  EXPECT_EQ(empty, "*0\r\n");

  std::string bin;
  AppendRequest(bin, {"ECHO", "a\0\r\n"s, ""});
  EXPECT_EQ(bin, "*3\r\n$4\r\nECHO\r\n$4\r\na\0\r\n\r\n$0\r\n\r\n"s);

  const std::vector<std::string_view> views{"PEXPIREAT", "k", "1700000000000"};
  std::string from_views;
  AppendRequest(from_views, std::span<const std::string_view>(views));
  EXPECT_EQ(from_views, "*3\r\n$9\r\nPEXPIREAT\r\n$1\r\nk\r\n$13\r\n1700000000000\r\n");

  const std::vector<std::string> strings{"DEL", std::string(12, 'x')};
  std::string from_strings;
  AppendRequest(from_strings, std::span<const std::string>(strings));
  EXPECT_EQ(from_strings, "*2\r\n$3\r\nDEL\r\n$12\r\nxxxxxxxxxxxx\r\n");

  std::string piecewise;
  AppendArrayHeader(piecewise, 2);
  AppendBulk(piecewise, "GET");
  AppendBulk(piecewise, "");
  EXPECT_EQ(piecewise, "*2\r\n$3\r\nGET\r\n$0\r\n\r\n");
}

TEST(RequestWriterTest, ParserReadsBackWhatTheWriterWrites) {
  const std::vector<std::vector<std::string>> requests{
      {"SET", "lock", "tok\r\n\0en"s, "PX", "30000"},
      {"DEL"},
      {"", "", ""},
      {std::string(70000, 'w')},
  };
  std::string stream;
  for (const auto& r : requests) AppendRequest(stream, std::span<const std::string>(r));
  Outcome o = Feed({stream});
  EXPECT_FALSE(o.error);
  EXPECT_EQ(o.requests, (std::vector<Args>(requests.begin(), requests.end())));
  EXPECT_EQ(o.leftover, 0u);
}

}  // namespace
}  // namespace latch::resp
