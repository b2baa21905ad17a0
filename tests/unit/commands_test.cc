// Commands through Server::Dispatch, on a ManualClock, checked byte for byte.
//
// Replies and error texts for commands latch shares with Redis were checked
// against Debian's redis-server 7.0; DELEX/DIGEST/SET IF* follow Redis 8.4 and
// DELIFEQ Valkey 9.0 (see /work/notes/cas-semantics.md).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "log/record.h"
#include "protocol/request_parser.h"
#include "server/command.h"
#include "test_server.h"

namespace latch {
namespace {

using resp::Reply;
using test::TestServer;

const std::string kOk = "+OK\r\n";
const std::string kNull = "$-1\r\n";
const std::string kSyntax = "-ERR syntax error\r\n";
const std::string kNotInt = "-ERR value is not an integer or out of range\r\n";
const std::string kDigestLen = "-ERR must be exactly 16 hexadecimal characters\r\n";

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
std::string Int(int64_t n) {
  return ":" + std::to_string(n) + "\r\n";
}
std::string Err(std::string_view text) {
  return "-" + std::string(text) + "\r\n";
}
std::string Arity(std::string_view name) {
  return "-ERR wrong number of arguments for '" + std::string(name) + "' command\r\n";
}
std::string InvalidExpire(std::string_view name) {
  return "-ERR invalid expire time in '" + std::string(name) + "' command\r\n";
}
// A log record: a RESP array of bulk strings (written out independently of
// the server's encoder).
std::string Req(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += Bulk(a);
  return out;
}

// Known XXH3-64 digests (see the notes: they match Redis's docs and tests).
constexpr const char* kDigestEmpty = "2d06800538d394c2";
constexpr const char* kDigestHello = "9555e8555c62dcfd";

// Redis's semantics: no cap on lease length (max-lock-ttl 0), so TTLs of any
// size can be tested. The cap itself is a separate feature.
Config UncappedConfig() {
  Config c = test::TestConfig();
  c.max_lock_ttl = 0;
  return c;
}

class CommandsTest : public ::testing::Test {
 protected:
  CommandsTest() : ts_(UncappedConfig()) {}

  std::string Run(const std::vector<std::string>& args) { return ts_.Run(args); }
  Reply RunParsed(const std::vector<std::string>& args) { return ts_.RunParsed(args); }
  ManualClock& clock() { return ts_.clock(); }
  int64_t WallMs() { return clock().WallMs(); }
  std::string WallMsPlus(int64_t ms) { return std::to_string(WallMs() + ms); }

  TestServer ts_;
};

// ------------------------------------------------------------------ SET/GET

TEST_F(CommandsTest, SetAndGet) {
  EXPECT_EQ(Run({"GET", "k"}), kNull);
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"GET", "k"}), "$1\r\nv\r\n");
  EXPECT_EQ(Run({"set", "k", "a longer value"}), kOk);
  EXPECT_EQ(Run({"get", "k"}), Bulk("a longer value"));
  EXPECT_EQ(Run({"SET", "k", ""}), kOk);
  EXPECT_EQ(Run({"GET", "k"}), "$0\r\n\r\n");
  const std::string bin("a\0\r\n$b", 6), binval("\0\xff\r\n", 4);
  EXPECT_EQ(Run({"SET", bin, binval}), kOk);
  EXPECT_EQ(Run({"GET", bin}), Bulk(binval));
  EXPECT_EQ(Run({"GET", std::string("a\0", 2)}), kNull);
  EXPECT_EQ(Run({"DBSIZE"}), Int(2));
}

TEST_F(CommandsTest, SetNxAndXx) {
  EXPECT_EQ(Run({"SET", "k", "v1", "NX"}), kOk);
  EXPECT_EQ(Run({"SET", "k", "v2", "NX"}), kNull);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v1"));
  EXPECT_EQ(Run({"SET", "k", "v3", "XX"}), kOk);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v3"));
  EXPECT_EQ(Run({"SET", "m", "v", "XX"}), kNull);
  EXPECT_EQ(Run({"EXISTS", "m"}), Int(0));
  // The same flag twice is fine; options are case-insensitive.
  EXPECT_EQ(Run({"SET", "n", "v", "nx", "Nx"}), kOk);
  EXPECT_EQ(Run({"SET", "n", "w", "xX"}), kOk);
  EXPECT_EQ(Run({"GET", "n"}), Bulk("w"));
}

TEST_F(CommandsTest, SetGetReturnsTheOldValue) {
  EXPECT_EQ(Run({"SET", "g", "v1", "GET"}), kNull);
  EXPECT_EQ(Run({"GET", "g"}), Bulk("v1"));
  EXPECT_EQ(Run({"SET", "g", "v2", "GET", "GET"}), Bulk("v1"));
  EXPECT_EQ(Run({"GET", "g"}), Bulk("v2"));
  // NX + GET: the old value is returned and nothing is written.
  EXPECT_EQ(Run({"SET", "g", "v3", "NX", "GET"}), Bulk("v2"));
  EXPECT_EQ(Run({"GET", "g"}), Bulk("v2"));
  EXPECT_EQ(Run({"SET", "h", "x", "get", "nx"}), kNull);
  EXPECT_EQ(Run({"GET", "h"}), Bulk("x"));
  // XX + GET on a missing key: null, and not created.
  EXPECT_EQ(Run({"SET", "m", "x", "XX", "GET"}), kNull);
  EXPECT_EQ(Run({"EXISTS", "m"}), Int(0));
  EXPECT_EQ(Run({"SET", "g", "v4", "XX", "GET"}), Bulk("v2"));
  EXPECT_EQ(Run({"GET", "g"}), Bulk("v4"));
}

TEST_F(CommandsTest, SetExpiryOptions) {
  EXPECT_EQ(Run({"SET", "a", "v", "EX", "10"}), kOk);
  EXPECT_EQ(Run({"PTTL", "a"}), Int(10000));
  EXPECT_EQ(Run({"TTL", "a"}), Int(10));
  EXPECT_EQ(Run({"SET", "b", "v", "PX", "1500"}), kOk);
  EXPECT_EQ(Run({"PTTL", "b"}), Int(1500));
  const int64_t exat = WallMs() / 1000 + 20;
  EXPECT_EQ(Run({"SET", "c", "v", "EXAT", std::to_string(exat)}), kOk);
  EXPECT_EQ(Run({"PTTL", "c"}), Int(exat * 1000 - WallMs()));
  EXPECT_EQ(Run({"SET", "d", "v", "PXAT", WallMsPlus(1234)}), kOk);
  EXPECT_EQ(Run({"PTTL", "d"}), Int(1234));
  EXPECT_EQ(Run({"PEXPIRETIME", "d"}), Int(WallMs() + 1234));
  // A plain SET clears the TTL.
  EXPECT_EQ(Run({"SET", "a", "v"}), kOk);
  EXPECT_EQ(Run({"TTL", "a"}), Int(-1));
  // The same unit twice: the last one wins (as in Redis).
  EXPECT_EQ(Run({"SET", "e", "v", "EX", "10", "EX", "20"}), kOk);
  EXPECT_EQ(Run({"TTL", "e"}), Int(20));
  // Lower-case options, any order.
  EXPECT_EQ(Run({"SET", "f", "v", "px", "100", "nx", "get"}), kNull);
  EXPECT_EQ(Run({"PTTL", "f"}), Int(100));
  // The largest EXAT that does not overflow is accepted.
  EXPECT_EQ(Run({"SET", "g", "v", "EXAT", "9223372036854775"}), kOk);
  EXPECT_EQ(Run({"PEXPIRETIME", "g"}), Int(9223372036854775000));
}

TEST_F(CommandsTest, SetKeepTtl) {
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "5000"}), kOk);
  clock().Advance(1000);
  EXPECT_EQ(Run({"SET", "k", "v2", "KEEPTTL"}), kOk);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v2"));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(4000));
  EXPECT_EQ(Run({"SET", "k", "a longer value", "keepttl", "KEEPTTL"}), kOk);
  EXPECT_EQ(Run({"PTTL", "k"}), Int(4000));
  EXPECT_EQ(Run({"SET", "k", "v3"}), kOk);
  EXPECT_EQ(Run({"PTTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"SET", "new", "v", "KEEPTTL"}), kOk);
  EXPECT_EQ(Run({"PTTL", "new"}), Int(-1));
  // The kept TTL still expires the key.
  EXPECT_EQ(Run({"SET", "t", "v", "PX", "100"}), kOk);
  EXPECT_EQ(Run({"SET", "t", "v2", "KEEPTTL"}), kOk);
  clock().Advance(101);
  EXPECT_EQ(Run({"GET", "t"}), kNull);
}

TEST_F(CommandsTest, SetSyntaxErrorsLeaveTheKeyUntouched) {
  ASSERT_EQ(Run({"SET", "k", "orig", "PX", "9000"}), kOk);
  const std::string d16 = "0123456789abcdef";
  const std::vector<std::vector<std::string>> bad = {
      {"NX", "XX"},
      {"XX", "NX"},
      {"EX", "10", "PX", "10"},
      {"PX", "10", "EXAT", "5"},
      {"EX", "10", "PXAT", "5"},
      {"EXAT", "10", "EX", "5"},
      {"KEEPTTL", "EX", "10"},
      {"EX", "10", "KEEPTTL"},
      {"PX", "10", "KEEPTTL"},
      {"EX"},
      {"PX"},
      {"FOO"},
      {"GET", "EX"},
      {"IFEQ"},
      {"IFDEQ"},
      {"NX", "IFEQ", "x"},
      {"IFEQ", "x", "NX"},
      {"IFEQ", "x", "XX"},
      {"IFNE", "x", "NX"},
      {"XX", "IFNE", "x"},
      {"IFDEQ", d16, "XX"},
      {"IFEQ", "a", "IFNE", "b"},
      {"IFEQ", "a", "IFEQ", "b"},
      {"IFDNE", d16, "IFDEQ", d16},
      // The shape is checked before the expire value.
      {"EX", "abc", "XY"},
      {"EX", "0", "NX", "XX"},
  };
  for (const auto& opts : bad) {
    std::vector<std::string> args = {"SET", "k", "new"};
    args.insert(args.end(), opts.begin(), opts.end());
    std::string what = ::testing::PrintToString(opts);
    EXPECT_EQ(Run(args), kSyntax) << what;
    EXPECT_EQ(Run({"GET", "k"}), Bulk("orig")) << what;
    EXPECT_EQ(Run({"PTTL", "k"}), Int(9000)) << what;
  }
  EXPECT_EQ(Run({"SET", "k"}), Arity("set"));
  EXPECT_EQ(Run({"SET"}), Arity("set"));
}

TEST_F(CommandsTest, SetInvalidExpireAndNonInteger) {
  ASSERT_EQ(Run({"SET", "k", "orig", "PX", "9000"}), kOk);
  const std::vector<std::vector<std::string>> invalid = {
      {"EX", "0"},
      {"EX", "-5"},
      {"PX", "0"},
      {"PX", "-1"},
      {"EXAT", "0"},
      {"PXAT", "0"},
      {"PXAT", "-1"},
      {"EX", "9223372036854775807"},  // overflows when converted to ms
      {"EX", "9223372036854775"},     // overflows when added to now
      {"PX", "9223372036854775807"},
      {"EXAT", "9223372036854776"},
      // Checked before the condition (which would fail here).
      {"XX", "EX", "0"},
      {"IFEQ", "nomatch", "PX", "0"},
  };
  for (const auto& opts : invalid) {
    std::vector<std::string> args = {"SET", "k", "new"};
    args.insert(args.end(), opts.begin(), opts.end());
    std::string what = ::testing::PrintToString(opts);
    EXPECT_EQ(Run(args), InvalidExpire("set")) << what;
    EXPECT_EQ(Run({"GET", "k"}), Bulk("orig")) << what;
    EXPECT_EQ(Run({"PTTL", "k"}), Int(9000)) << what;
  }
  const std::vector<std::vector<std::string>> not_int = {
      {"EX", "abc"}, {"PX", "1.5"}, {"PX", "GET"}, {"EXAT", ""},
      {"PX", " 1"},  {"PX", "+10"}, {"PX", "010"}, {"PX", "99999999999999999999"},
  };
  for (const auto& opts : not_int) {
    std::vector<std::string> args = {"SET", "k", "new"};
    args.insert(args.end(), opts.begin(), opts.end());
    std::string what = ::testing::PrintToString(opts);
    EXPECT_EQ(Run(args), kNotInt) << what;
    EXPECT_EQ(Run({"GET", "k"}), Bulk("orig")) << what;
  }
  // GET is not emitted before an expire error: one reply only.
  EXPECT_EQ(Run({"SET", "k", "new", "GET", "EX", "0"}), InvalidExpire("set"));
}

TEST_F(CommandsTest, SetWithAnAbsoluteTimeInThePastDeletes) {
  const int64_t wall = WallMs(), mono = clock().MonoMs();
  // Every past instant, including those that map to the monotonic clock's
  // zero or negative values, means "already expired".
  const std::vector<int64_t> past = {1, wall - mono - 1, wall - mono, wall - mono + 1, wall - 1};
  for (int64_t at : past) {
    std::string what = "PXAT " + std::to_string(at);
    ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
    EXPECT_EQ(Run({"SET", "k", "v2", "PXAT", std::to_string(at)}), kOk) << what;
    EXPECT_EQ(Run({"GET", "k"}), kNull) << what;
    EXPECT_EQ(Run({"EXISTS", "k"}), Int(0)) << what;
    EXPECT_EQ(Run({"SET", "missing", "v", "PXAT", std::to_string(at)}), kOk) << what;
    EXPECT_EQ(Run({"EXISTS", "missing"}), Int(0)) << what;
  }
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"SET", "k", "v2", "EXAT", "1"}), kOk);
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
  // With GET the old value is still returned.
  EXPECT_EQ(Run({"SET", "k", "old"}), kOk);
  EXPECT_EQ(Run({"SET", "k", "v2", "GET", "PXAT", "1"}), Bulk("old"));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
}

TEST_F(CommandsTest, SetNx) {
  EXPECT_EQ(Run({"SETNX", "k", "v"}), Int(1));
  EXPECT_EQ(Run({"SETNX", "k", "w"}), Int(0));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v"));
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"SET", "e", "old", "PX", "10"}), kOk);
  clock().Advance(11);
  EXPECT_EQ(Run({"SETNX", "e", "new"}), Int(1));
  EXPECT_EQ(Run({"GET", "e"}), Bulk("new"));
  EXPECT_EQ(Run({"TTL", "e"}), Int(-1));
  EXPECT_EQ(Run({"SETNX", "k"}), Arity("setnx"));
  EXPECT_EQ(Run({"SETNX", "k", "v", "x"}), Arity("setnx"));
}

TEST_F(CommandsTest, GetDelExists) {
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "100"}), kOk);
  clock().Advance(100);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v"));  // now == deadline: still there
  clock().Advance(1);
  EXPECT_EQ(Run({"GET", "k"}), kNull);
  EXPECT_EQ(Run({"GET"}), Arity("get"));
  EXPECT_EQ(Run({"GET", "a", "b"}), Arity("get"));

  EXPECT_EQ(Run({"SET", "a", "1"}), kOk);
  EXPECT_EQ(Run({"SET", "b", "2"}), kOk);
  EXPECT_EQ(Run({"EXISTS", "a", "a", "zz", "b"}), Int(3));
  EXPECT_EQ(Run({"DEL", "a", "a", "b", "zz"}), Int(2));
  EXPECT_EQ(Run({"EXISTS", "a", "b"}), Int(0));
  EXPECT_EQ(Run({"SET", "e", "v", "PX", "10"}), kOk);
  EXPECT_EQ(Run({"EXISTS", "e"}), Int(1));
  clock().Advance(11);
  EXPECT_EQ(Run({"EXISTS", "e"}), Int(0));
  EXPECT_EQ(Run({"SET", "e2", "v", "PX", "10"}), kOk);
  clock().Advance(11);
  EXPECT_EQ(Run({"DEL", "e2"}), Int(0));  // expired keys are not "deleted"
  EXPECT_EQ(Run({"DEL"}), Arity("del"));
  EXPECT_EQ(Run({"EXISTS"}), Arity("exists"));
}

// ------------------------------------------------------- compare-and-delete

TEST_F(CommandsTest, DelIfEq) {
  EXPECT_EQ(Run({"DELIFEQ", "k", "tok"}), Int(0));
  EXPECT_EQ(Run({"SET", "k", "tok"}), kOk);
  EXPECT_EQ(Run({"DELIFEQ", "k", "to"}), Int(0));
  EXPECT_EQ(Run({"DELIFEQ", "k", "tok2"}), Int(0));
  EXPECT_EQ(Run({"DELIFEQ", "k", "TOK"}), Int(0));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("tok"));
  EXPECT_EQ(Run({"DELIFEQ", "k", "tok"}), Int(1));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
  EXPECT_EQ(Run({"DELIFEQ", "k", "tok"}), Int(0));
  // Binary-exact.
  const std::string v("a\0b", 3);
  EXPECT_EQ(Run({"SET", "b", v}), kOk);
  EXPECT_EQ(Run({"DELIFEQ", "b", "a"}), Int(0));
  EXPECT_EQ(Run({"DELIFEQ", "b", v}), Int(1));
  // An expired lock cannot be released.
  EXPECT_EQ(Run({"SET", "e", "tok", "PX", "10"}), kOk);
  clock().Advance(11);
  EXPECT_EQ(Run({"DELIFEQ", "e", "tok"}), Int(0));
  EXPECT_EQ(Run({"DELIFEQ", "k"}), Arity("delifeq"));
  EXPECT_EQ(Run({"DELIFEQ", "k", "a", "b"}), Arity("delifeq"));
}

TEST_F(CommandsTest, DelExWithoutConditionIsDel) {
  EXPECT_EQ(Run({"DELEX", "k"}), Int(0));
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"DELEX", "k"}), Int(1));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
}

TEST_F(CommandsTest, DelExConditions) {
  auto reset = [&] { ASSERT_EQ(Run({"SET", "k", "hello"}), kOk); };
  reset();
  EXPECT_EQ(Run({"DELEX", "k", "IFEQ", "hell"}), Int(0));
  EXPECT_EQ(Run({"DELEX", "k", "IFEQ", "HELLO"}), Int(0));
  EXPECT_EQ(Run({"DELEX", "k", "IFNE", "hello"}), Int(0));
  EXPECT_EQ(Run({"DELEX", "k", "IFDEQ", kDigestEmpty}), Int(0));
  EXPECT_EQ(Run({"DELEX", "k", "IFDNE", kDigestHello}), Int(0));
  EXPECT_EQ(Run({"DELEX", "k", "IFDEQ", std::string(16, 'z')}), Int(0));  // no hex check
  EXPECT_EQ(Run({"GET", "k"}), Bulk("hello"));

  EXPECT_EQ(Run({"DELEX", "k", "IFEQ", "hello"}), Int(1));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
  reset();
  EXPECT_EQ(Run({"DELEX", "k", "ifeq", "hello"}), Int(1));
  reset();
  EXPECT_EQ(Run({"DELEX", "k", "IFNE", "other"}), Int(1));
  reset();
  EXPECT_EQ(Run({"DELEX", "k", "IFDEQ", kDigestHello}), Int(1));
  reset();
  EXPECT_EQ(Run({"DELEX", "k", "IfDeQ", "9555E8555C62DCFD"}), Int(1));  // case-insensitive
  reset();
  EXPECT_EQ(Run({"DELEX", "k", "IFDNE", kDigestEmpty}), Int(1));
  reset();
  EXPECT_EQ(Run({"DELEX", "k", "IFDNE", std::string(16, 'z')}), Int(1));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
}

TEST_F(CommandsTest, DelExErrors) {
  // Arity is checked before the key is looked up.
  EXPECT_EQ(Run({"DELEX"}), Arity("delex"));
  EXPECT_EQ(Run({"DELEX", "missing", "IFEQ"}), Arity("delex"));
  EXPECT_EQ(Run({"DELEX", "missing", "IFEQ", "v", "extra"}), Arity("delex"));
  // A missing key answers 0 before the condition or digest is examined.
  EXPECT_EQ(Run({"DELEX", "missing", "FOO", "v"}), Int(0));
  EXPECT_EQ(Run({"DELEX", "missing", "IFDEQ", "1234567890"}), Int(0));
  EXPECT_EQ(Run({"DELEX", "missing", "IFDNE", ""}), Int(0));

  ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"DELEX", "k", "IFEQ"}), Arity("delex"));
  EXPECT_EQ(Run({"DELEX", "k", "IFEQ", "v", "x"}), Arity("delex"));
  EXPECT_EQ(Run({"DELEX", "k", "INVALID", "v"}),
            Err("ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE"));
  EXPECT_EQ(Run({"DELEX", "k", "IFDEQ", std::string(15, 'a')}), kDigestLen);
  EXPECT_EQ(Run({"DELEX", "k", "IFDEQ", std::string(17, 'a')}), kDigestLen);
  EXPECT_EQ(Run({"DELEX", "k", "IFDNE", ""}), kDigestLen);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v"));
}

TEST_F(CommandsTest, Digest) {
  EXPECT_EQ(Run({"DIGEST", "missing"}), kNull);
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", kDigestEmpty},          {"hello", kDigestHello},
      {"123", "404a763b3f4c8c9a"}, {"Hello world", "b6acb9d84a38ff74"},
      {"v8", "0cc76dbb41381419"},  // leading zero kept
  };
  for (const auto& [value, digest] : vectors) {
    ASSERT_EQ(Run({"SET", "k", value}), kOk);
    EXPECT_EQ(Run({"DIGEST", "k"}), Bulk(digest)) << value;
  }
  EXPECT_EQ(Run({"DIGEST"}), Arity("digest"));
  EXPECT_EQ(Run({"DIGEST", "a", "b"}), Arity("digest"));
  ts_.conn().resp = 3;
  EXPECT_EQ(Run({"DIGEST", "missing"}), "_\r\n");
}

// ------------------------------------------------------------ SET IF* (CAS)

TEST_F(CommandsTest, SetIfConditionsOnAMissingKey) {
  EXPECT_EQ(Run({"SET", "k", "v", "IFEQ", "x"}), kNull);
  EXPECT_EQ(Run({"SET", "k", "v", "IFEQ", "x", "GET"}), kNull);
  EXPECT_EQ(Run({"SET", "k", "v", "IFDEQ", kDigestHello}), kNull);
  EXPECT_EQ(Run({"SET", "k", "v", "IFDEQ", "1234567890"}), kNull);  // length not checked
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
  EXPECT_EQ(Run({"SET", "a", "v", "IFNE", "x"}), kOk);
  EXPECT_EQ(Run({"GET", "a"}), Bulk("v"));
  EXPECT_EQ(Run({"SET", "b", "v", "IFNE", "x", "GET"}), kNull);
  EXPECT_EQ(Run({"GET", "b"}), Bulk("v"));
  EXPECT_EQ(Run({"SET", "c", "v", "IFDNE", "1234567890"}), kOk);
  EXPECT_EQ(Run({"GET", "c"}), Bulk("v"));
}

TEST_F(CommandsTest, SetIfEqAndIfNe) {
  ASSERT_EQ(Run({"SET", "k", "hello", "PX", "9000"}), kOk);
  // Condition false: null (or the old value with GET); value and TTL untouched.
  EXPECT_EQ(Run({"SET", "k", "new", "IFEQ", "hellO", "PX", "100"}), kNull);
  EXPECT_EQ(Run({"SET", "k", "new", "IFEQ", "hell", "GET"}), Bulk("hello"));
  EXPECT_EQ(Run({"SET", "k", "new", "IFNE", "hello"}), kNull);
  EXPECT_EQ(Run({"SET", "k", "new", "ifne", "hello", "get"}), Bulk("hello"));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("hello"));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(9000));
  // Condition true: written; without KEEPTTL or an expiry the TTL goes.
  EXPECT_EQ(Run({"SET", "k", "v2", "IFEQ", "hello", "KEEPTTL"}), kOk);
  EXPECT_EQ(Run({"PTTL", "k"}), Int(9000));
  EXPECT_EQ(Run({"SET", "k", "v3", "IFEQ", "v2", "GET"}), Bulk("v2"));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v3"));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"SET", "k", "v4", "IFNE", "other", "EX", "10"}), kOk);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v4"));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(10000));
}

TEST_F(CommandsTest, SetIfDigestConditions) {
  ASSERT_EQ(Run({"SET", "k", "hello"}), kOk);
  EXPECT_EQ(Run({"SET", "k", "x", "IFDEQ", kDigestEmpty}), kNull);
  EXPECT_EQ(Run({"SET", "k", "x", "IFDNE", kDigestHello}), kNull);
  EXPECT_EQ(Run({"SET", "k", "x", "IFDNE", "9555E8555C62DCFD", "GET"}), Bulk("hello"));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("hello"));
  // On an existing key the digest must be 16 characters; the error is the
  // only reply, even with GET.
  EXPECT_EQ(Run({"SET", "k", "x", "IFDEQ", "1234567890"}), kDigestLen);
  EXPECT_EQ(Run({"SET", "k", "x", "IFDNE", std::string(17, '0'), "GET"}), kDigestLen);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("hello"));
  EXPECT_EQ(Run({"SET", "k", "v2", "IFDEQ", "9555E8555C62DCFD"}), kOk);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v2"));
  EXPECT_EQ(Run({"SET", "k", "v3", "IFDNE", kDigestHello, "PX", "500"}), kOk);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v3"));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(500));
}

TEST_F(CommandsTest, LockScenario) {
  // Acquire.
  EXPECT_EQ(Run({"SET", "lock", "client-a", "NX", "PX", "10000"}), kOk);
  EXPECT_EQ(Run({"SET", "lock", "client-b", "NX", "PX", "10000"}), kNull);
  EXPECT_EQ(Run({"DELIFEQ", "lock", "client-b"}), Int(0));
  // Renew half-way.
  clock().Advance(5000);
  EXPECT_EQ(Run({"PTTL", "lock"}), Int(5000));
  EXPECT_EQ(Run({"SET", "lock", "client-a", "IFEQ", "client-a", "PX", "10000"}), kOk);
  EXPECT_EQ(Run({"SET", "lock", "client-b", "IFEQ", "client-b", "PX", "10000"}), kNull);
  EXPECT_EQ(Run({"PTTL", "lock"}), Int(10000));
  // The holder stalls: the lease runs out.
  clock().Advance(10000);
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("client-a"));
  clock().Advance(1);
  EXPECT_EQ(Run({"GET", "lock"}), kNull);
  EXPECT_EQ(Run({"SET", "lock", "client-b", "NX", "PX", "10000"}), kOk);
  // The stale holder can neither renew nor release the new owner's lock.
  EXPECT_EQ(Run({"SET", "lock", "client-a", "IFEQ", "client-a", "PX", "10000"}), kNull);
  EXPECT_EQ(Run({"DELIFEQ", "lock", "client-a"}), Int(0));
  EXPECT_EQ(Run({"DELEX", "lock", "IFEQ", "client-a"}), Int(0));
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("client-b"));
  EXPECT_EQ(Run({"DELIFEQ", "lock", "client-b"}), Int(1));
  EXPECT_EQ(Run({"SET", "lock", "client-c", "NX", "PX", "10000"}), kOk);
}

// ------------------------------------------------------------------- expiry

TEST_F(CommandsTest, ExpireFamilySetsTheTtl) {
  EXPECT_EQ(Run({"EXPIRE", "missing", "10"}), Int(0));
  EXPECT_EQ(Run({"PEXPIREAT", "missing", WallMsPlus(1000)}), Int(0));
  EXPECT_EQ(Run({"EXISTS", "missing"}), Int(0));
  ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"EXPIRE", "k", "10"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(10000));
  EXPECT_EQ(Run({"PEXPIRE", "k", "1500"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(1500));
  const int64_t at = WallMs() / 1000 + 30;
  EXPECT_EQ(Run({"EXPIREAT", "k", std::to_string(at)}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(at * 1000 - WallMs()));
  EXPECT_EQ(Run({"PEXPIREAT", "k", WallMsPlus(2500)}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(2500));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v"));
  clock().Advance(2501);
  EXPECT_EQ(Run({"GET", "k"}), kNull);
  EXPECT_EQ(Run({"EXPIRE", "k", "10"}), Int(0));
}

TEST_F(CommandsTest, ExpireInThePastDeletes) {
  const std::vector<std::vector<std::string>> cases = {
      {"EXPIRE", "k", "0"},
      {"EXPIRE", "k", "-1"},
      {"PEXPIRE", "k", "-100"},
      {"PEXPIREAT", "k", "1"},
      {"EXPIREAT", "k", std::to_string(WallMs() / 1000)},  // exactly now
      {"PEXPIREAT", "k", std::to_string(WallMs())},
  };
  for (const auto& c : cases) {
    ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
    EXPECT_EQ(Run(c), Int(1)) << ::testing::PrintToString(c);
    EXPECT_EQ(Run({"EXISTS", "k"}), Int(0)) << ::testing::PrintToString(c);
  }
}

TEST_F(CommandsTest, ExpireConditions) {
  ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
  // No TTL: NX sets, XX and GT do not, LT does (no TTL = infinite).
  EXPECT_EQ(Run({"EXPIRE", "k", "100", "XX"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "100", "GT"}), Int(0));
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"EXPIRE", "k", "100", "LT"}), Int(1));
  EXPECT_EQ(Run({"TTL", "k"}), Int(100));
  EXPECT_EQ(Run({"PERSIST", "k"}), Int(1));
  EXPECT_EQ(Run({"EXPIRE", "k", "100", "nx"}), Int(1));
  EXPECT_EQ(Run({"TTL", "k"}), Int(100));
  // With a TTL of 100 s.
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "NX"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "50", "GT"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "100", "GT"}), Int(0));  // equal is not greater
  EXPECT_EQ(Run({"EXPIRE", "k", "300", "LT"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "100", "LT"}), Int(0));
  EXPECT_EQ(Run({"TTL", "k"}), Int(100));
  EXPECT_EQ(Run({"EXPIRE", "k", "200", "GT"}), Int(1));
  EXPECT_EQ(Run({"TTL", "k"}), Int(200));
  EXPECT_EQ(Run({"PEXPIRE", "k", "10000", "LT"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(10000));
  EXPECT_EQ(Run({"PEXPIRE", "k", "20000", "XX", "GT"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(20000));
  EXPECT_EQ(Run({"EXPIRE", "k", "5", "XX"}), Int(1));
  EXPECT_EQ(Run({"TTL", "k"}), Int(5));
  EXPECT_EQ(Run({"PEXPIREAT", "k", WallMsPlus(4000), "LT"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(4000));
  const int64_t at_s = WallMs() / 1000 + 60;
  EXPECT_EQ(Run({"EXPIREAT", "k", std::to_string(at_s), "GT"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(at_s * 1000 - WallMs()));
  // A failed condition with a past time does not delete.
  EXPECT_EQ(Run({"EXPIRE", "k", "-1", "GT"}), Int(0));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(1));
  EXPECT_EQ(Run({"EXPIRE", "k", "-1", "LT"}), Int(1));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
}

TEST_F(CommandsTest, ExpireErrors) {
  ASSERT_EQ(Run({"SET", "k", "v", "PX", "9000"}), kOk);
  const std::string nx_err =
      "-ERR NX and XX, GT or LT options at the same time are not compatible\r\n";
  const std::string gtlt_err = "-ERR GT and LT options at the same time are not compatible\r\n";
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "NX", "XX"}), nx_err);
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "NX", "GT"}), nx_err);
  EXPECT_EQ(Run({"PEXPIRE", "k", "10", "LT", "NX"}), nx_err);
  EXPECT_EQ(Run({"EXPIREAT", "k", "10", "GT", "LT"}), gtlt_err);
  EXPECT_EQ(Run({"PEXPIREAT", "k", "10", "FOO"}), Err("ERR Unsupported option FOO"));
  // Options are checked before the number.
  EXPECT_EQ(Run({"EXPIRE", "k", "abc", "FOO"}), Err("ERR Unsupported option FOO"));
  EXPECT_EQ(Run({"EXPIRE", "k", "abc"}), kNotInt);
  EXPECT_EQ(Run({"PEXPIRE", "k", "1.5"}), kNotInt);
  // Overflow when converting to ms or adding the current time.
  EXPECT_EQ(Run({"EXPIRE", "k", "9223372036854775807"}), InvalidExpire("expire"));
  EXPECT_EQ(Run({"EXPIRE", "k", "-9223372036854775808"}), InvalidExpire("expire"));
  EXPECT_EQ(Run({"PEXPIRE", "k", "9223372036854775807"}), InvalidExpire("pexpire"));
  EXPECT_EQ(Run({"EXPIREAT", "k", "9223372036854775807"}), InvalidExpire("expireat"));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(9000));
  EXPECT_EQ(Run({"EXPIRE", "k"}), Arity("expire"));
  EXPECT_EQ(Run({"PEXPIREAT", "k"}), Arity("pexpireat"));
  EXPECT_EQ(Run({"TTL"}), Arity("ttl"));
  EXPECT_EQ(Run({"PERSIST", "k", "x"}), Arity("persist"));
}

TEST_F(CommandsTest, ExpireAtTheLargestTime) {
  ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"PEXPIREAT", "k", "9223372036854775807"}), Int(1));
  EXPECT_EQ(Run({"PEXPIRETIME", "k"}), Int(9223372036854775807));
  EXPECT_EQ(Run({"EXPIRETIME", "k"}), Int(9223372036854776));  // rounded, as Redis does
  EXPECT_EQ(Run({"PTTL", "k"}), Int(9223372036854775807 - WallMs()));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v"));
}

TEST_F(CommandsTest, TtlAndPttl) {
  EXPECT_EQ(Run({"TTL", "missing"}), Int(-2));
  EXPECT_EQ(Run({"PTTL", "missing"}), Int(-2));
  ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(-1));
  // TTL rounds to the nearest second: (ms + 500) / 1000.
  const std::vector<std::pair<int64_t, int64_t>> rounding = {
      {1, 0}, {499, 0}, {500, 1}, {1499, 1}, {1500, 2}, {9999, 10}, {10499, 10}};
  for (const auto& [ms, s] : rounding) {
    ASSERT_EQ(Run({"PEXPIRE", "k", std::to_string(ms)}), Int(1));
    EXPECT_EQ(Run({"PTTL", "k"}), Int(ms));
    EXPECT_EQ(Run({"TTL", "k"}), Int(s)) << ms;
  }
  ASSERT_EQ(Run({"PEXPIRE", "k", "3000"}), Int(1));
  clock().Advance(1200);
  EXPECT_EQ(Run({"PTTL", "k"}), Int(1800));
  EXPECT_EQ(Run({"TTL", "k"}), Int(2));
  clock().Advance(1800);
  EXPECT_EQ(Run({"PTTL", "k"}), Int(0));
  EXPECT_EQ(Run({"TTL", "k"}), Int(0));
  clock().Advance(1);
  EXPECT_EQ(Run({"PTTL", "k"}), Int(-2));
  EXPECT_EQ(Run({"TTL", "k"}), Int(-2));
}

TEST_F(CommandsTest, ExpireTimeAndPExpireTime) {
  EXPECT_EQ(Run({"EXPIRETIME", "missing"}), Int(-2));
  EXPECT_EQ(Run({"PEXPIRETIME", "missing"}), Int(-2));
  ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"EXPIRETIME", "k"}), Int(-1));
  EXPECT_EQ(Run({"PEXPIRETIME", "k"}), Int(-1));
  ASSERT_EQ(Run({"PEXPIRE", "k", "1500"}), Int(1));
  const int64_t at = WallMs() + 1500;
  EXPECT_EQ(Run({"PEXPIRETIME", "k"}), Int(at));
  EXPECT_EQ(Run({"EXPIRETIME", "k"}), Int((at + 500) / 1000));
  clock().Advance(1000);
  EXPECT_EQ(Run({"PEXPIRETIME", "k"}), Int(at));
}

TEST_F(CommandsTest, Persist) {
  EXPECT_EQ(Run({"PERSIST", "missing"}), Int(0));
  ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"PERSIST", "k"}), Int(0));
  ASSERT_EQ(Run({"PEXPIRE", "k", "100"}), Int(1));
  EXPECT_EQ(Run({"PERSIST", "k"}), Int(1));
  EXPECT_EQ(Run({"PTTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"PERSIST", "k"}), Int(0));
  clock().Advance(1'000'000);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v"));
  ASSERT_EQ(Run({"SET", "e", "v", "PX", "10"}), kOk);
  clock().Advance(11);
  EXPECT_EQ(Run({"PERSIST", "e"}), Int(0));
  EXPECT_EQ(Run({"EXISTS", "e"}), Int(0));
}

// ------------------------------------------------------------- clock safety

TEST_F(CommandsTest, SteppingTheWallClockDoesNotMoveALease) {
  ASSERT_EQ(Run({"SET", "lock", "a", "NX", "PX", "30000"}), kOk);
  clock().StepWall(+3'600'000);
  EXPECT_EQ(Run({"PTTL", "lock"}), Int(30000));
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("a"));
  EXPECT_EQ(Run({"SET", "lock", "b", "NX", "PX", "30000"}), kNull);
  clock().StepWall(-7'200'000);
  EXPECT_EQ(Run({"PTTL", "lock"}), Int(30000));
  clock().Advance(30000);
  EXPECT_EQ(Run({"PTTL", "lock"}), Int(0));
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("a"));
  clock().Advance(1);
  EXPECT_EQ(Run({"GET", "lock"}), kNull);
  EXPECT_EQ(Run({"SET", "lock", "b", "NX", "PX", "30000"}), kOk);

  // The same for EXPIRE/PEXPIRE and a backwards step.
  ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
  ASSERT_EQ(Run({"EXPIRE", "k", "100"}), Int(1));
  clock().StepWall(+7'200'000);
  EXPECT_EQ(Run({"TTL", "k"}), Int(100));
  clock().StepWall(-3'600'000);
  clock().Advance(100'001);
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
}

TEST_F(CommandsTest, AbsoluteTimesUseTheWallClockWhenApplied) {
  clock().StepWall(+3'600'000);
  const int64_t at_s = WallMs() / 1000 + 10;
  ASSERT_EQ(Run({"SET", "a", "v", "EXAT", std::to_string(at_s)}), kOk);
  EXPECT_EQ(Run({"PTTL", "a"}), Int(at_s * 1000 - WallMs()));
  ASSERT_EQ(Run({"SET", "b", "v", "PXAT", WallMsPlus(5000)}), kOk);
  EXPECT_EQ(Run({"PTTL", "b"}), Int(5000));
  ASSERT_EQ(Run({"SET", "c", "v"}), kOk);
  ASSERT_EQ(Run({"PEXPIREAT", "c", WallMsPlus(2000)}), Int(1));
  EXPECT_EQ(Run({"PTTL", "c"}), Int(2000));
  // Converted once: a later step back changes nothing.
  clock().StepWall(-3'600'000);
  EXPECT_EQ(Run({"PTTL", "b"}), Int(5000));
  EXPECT_EQ(Run({"PTTL", "c"}), Int(2000));
  // The absolute expiry is reported on the current wall clock.
  EXPECT_EQ(Run({"PEXPIRETIME", "b"}), Int(WallMs() + 5000));
  clock().Advance(5001);
  EXPECT_EQ(Run({"EXISTS", "a", "b", "c"}), Int(1));
  // A time that was in the future before a forward step is past after it.
  ASSERT_EQ(Run({"SET", "d", "v"}), kOk);
  const std::string soon = WallMsPlus(60'000);
  clock().StepWall(+120'000);
  EXPECT_EQ(Run({"PEXPIREAT", "d", soon}), Int(1));
  EXPECT_EQ(Run({"EXISTS", "d"}), Int(0));
}

// ------------------------------------------------ dispatch errors, sessions

TEST_F(CommandsTest, ArityErrorsUseTheLowerCaseName) {
  EXPECT_EQ(Run({"GET"}), Arity("get"));
  EXPECT_EQ(Run({"gEt", "a", "b"}), Arity("get"));
  EXPECT_EQ(Run({"PING", "a", "b"}), Arity("ping"));
  EXPECT_EQ(Run({"ECHO"}), Arity("echo"));
  EXPECT_EQ(Run({"DBSIZE", "x"}), Arity("dbsize"));
  EXPECT_EQ(Run({"TIME", "x"}), Arity("time"));
  EXPECT_EQ(Run({"CONFIG"}), Arity("config"));
  EXPECT_EQ(Run({"CONFIG", "GET"}), Arity("config|get"));
  EXPECT_EQ(Run({"config", "set", "timeout"}), Arity("config|set"));
  EXPECT_EQ(Run({"COMMAND", "COUNT", "x"}), Arity("command|count"));
}

TEST_F(CommandsTest, UnknownCommand) {
  EXPECT_EQ(Run({"foo", "a", "b"}),
            "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
  EXPECT_EQ(Run({"FOO"}), "-ERR unknown command 'FOO', with args beginning with: \r\n");
  // CR and LF in arguments become spaces.
  EXPECT_EQ(Run({"foo", "a\r\nb", "c\n"}),
            "-ERR unknown command 'foo', with args beginning with: 'a  b' 'c ' \r\n");
  // Each part is cut at 128 bytes; arguments stop once 128 bytes are shown.
  EXPECT_EQ(
      Run({"foo", std::string(200, 'x'), "b"}),
      "-ERR unknown command 'foo', with args beginning with: '" + std::string(128, 'x') + "' \r\n");
  EXPECT_EQ(Run({std::string(200, 'f'), "x"}), "-ERR unknown command '" + std::string(128, 'f') +
                                                   "', with args beginning with: 'x' \r\n");
  std::vector<std::string> many = {"foo"};
  for (int i = 0; i < 10; ++i) many.push_back(std::string(20, 'a'));
  std::string expected = "-ERR unknown command 'foo', with args beginning with: ";
  for (int i = 0; i < 5; ++i) expected += "'" + std::string(20, 'a') + "' ";
  expected += "'" + std::string(13, 'a') + "' \r\n";
  EXPECT_EQ(Run(many), expected);
}

TEST_F(CommandsTest, UnknownSubcommand) {
  EXPECT_EQ(Run({"CONFIG", "foo"}), "-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n");
  EXPECT_EQ(Run({"config", "foo", "bar"}), "-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n");
  EXPECT_EQ(Run({"CLIENT", "bogus"}), "-ERR unknown subcommand 'bogus'. Try CLIENT HELP.\r\n");
  EXPECT_EQ(Run({"command", "bogus"}), "-ERR unknown subcommand 'bogus'. Try COMMAND HELP.\r\n");
  EXPECT_EQ(Run({"CONFIG", "a\r\nb"}), "-ERR unknown subcommand 'a  b'. Try CONFIG HELP.\r\n");
}

TEST(CommandsAuthTest, NoAuthUntilAuthenticated) {
  Config config = test::TestConfig();
  config.requirepass = "sekret";
  TestServer ts(config);
  ts.conn().authenticated = false;
  const std::string noauth = "-NOAUTH Authentication required.\r\n";
  const std::string wrongpass =
      "-WRONGPASS invalid username-password pair or user is disabled.\r\n";
  EXPECT_EQ(ts.Run({"GET", "k"}), noauth);
  EXPECT_EQ(ts.Run({"SET", "k", "v"}), noauth);
  EXPECT_EQ(ts.Run({"PING"}), noauth);
  EXPECT_EQ(ts.Run({"CONFIG", "SET", "requirepass", ""}), noauth);
  // Existence and arity are checked first (as in Redis).
  EXPECT_EQ(ts.Run({"foo"}), "-ERR unknown command 'foo', with args beginning with: \r\n");
  EXPECT_EQ(ts.Run({"GET"}), Arity("get"));
  // HELLO without AUTH is refused and does not switch protocols.
  EXPECT_EQ(ts.Run({"HELLO", "3"}),
            "-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
            "the RESP protocol version at the same time\r\n");
  EXPECT_EQ(ts.conn().resp, 2);
  EXPECT_EQ(ts.Run({"AUTH", "bad"}), wrongpass);
  EXPECT_EQ(ts.Run({"AUTH", "default", "bad"}), wrongpass);
  EXPECT_EQ(ts.Run({"AUTH", "bob", "sekret"}), wrongpass);
  EXPECT_EQ(ts.Run({"AUTH", "a", "b", "c"}), kSyntax);
  EXPECT_EQ(ts.Run({"HELLO", "3", "AUTH", "default", "bad"}), wrongpass);
  EXPECT_EQ(ts.conn().resp, 2);
  EXPECT_EQ(ts.Run({"GET", "k"}), noauth);
  EXPECT_FALSE(ts.conn().authenticated);

  EXPECT_EQ(ts.Run({"AUTH", "sekret"}), kOk);
  EXPECT_TRUE(ts.conn().authenticated);
  EXPECT_EQ(ts.Run({"GET", "k"}), kNull);  // the refused SET wrote nothing
  EXPECT_EQ(ts.Run({"PING"}), "+PONG\r\n");
}

TEST(CommandsAuthTest, HelloAuthAuthenticatesAndSwitchesProtocol) {
  Config config = test::TestConfig();
  config.requirepass = "sekret";
  TestServer ts(config);
  ts.conn().authenticated = false;
  Reply r = ts.RunParsed({"HELLO", "3", "AUTH", "default", "sekret"});
  ASSERT_EQ(r.type, Reply::Type::kMap) << r.ToString();
  EXPECT_TRUE(ts.conn().authenticated);
  EXPECT_EQ(ts.conn().resp, 3);
  EXPECT_EQ(ts.Run({"GET", "k"}), "_\r\n");
  // AUTH user pass also works with the default user name.
  TestServer ts2(config);
  ts2.conn().authenticated = false;
  EXPECT_EQ(ts2.Run({"AUTH", "default", "sekret"}), kOk);
  EXPECT_EQ(ts2.Run({"GET", "k"}), kNull);
}

TEST_F(CommandsTest, AuthWithoutAPassword) {
  EXPECT_EQ(Run({"AUTH", "x"}),
            "-ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?\r\n");
  EXPECT_EQ(Run({"AUTH", "default", "anything"}), kOk);
  EXPECT_EQ(Run({"AUTH", "bob", "x"}),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
}

TEST_F(CommandsTest, HelloSwitchesToResp3) {
  Reply r = RunParsed({"HELLO", "3"});
  ASSERT_EQ(r.type, Reply::Type::kMap) << r.ToString();
  ASSERT_EQ(r.elements.size(), 14u);
  std::vector<std::string> keys;
  for (size_t i = 0; i < r.elements.size(); i += 2) keys.push_back(r.elements[i].str);
  EXPECT_EQ(keys, (std::vector<std::string>{"server", "version", "proto", "id", "mode", "role",
                                            "modules"}));
  EXPECT_EQ(r.elements[1].str, "redis");
  EXPECT_EQ(r.elements[5].type, Reply::Type::kInteger);
  EXPECT_EQ(r.elements[5].integer, 3);
  EXPECT_EQ(r.elements[7].integer, 1);  // the connection id
  EXPECT_EQ(ts_.conn().resp, 3);

  // Nulls and maps change shape; the rest does not.
  EXPECT_EQ(Run({"GET", "k"}), "_\r\n");
  EXPECT_EQ(Run({"SET", "k", "v", "XX"}), "_\r\n");
  EXPECT_EQ(Run({"SET", "k", "v", "GET"}), "_\r\n");
  EXPECT_EQ(Run({"SET", "k", "v2", "GET"}), Bulk("v"));
  EXPECT_EQ(Run({"SET", "k", "v3"}), kOk);
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"CONFIG", "GET", "maxclients"}), "%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
  EXPECT_EQ(Run({"COMMAND", "INFO", "nosuchcmd"}), "*1\r\n_\r\n");
  EXPECT_EQ(Run({"GET"}), Arity("get"));

  // HELLO alone reports the current protocol; HELLO 2 goes back.
  r = RunParsed({"HELLO"});
  ASSERT_EQ(r.type, Reply::Type::kMap);
  EXPECT_EQ(r.elements[5].integer, 3);
  r = RunParsed({"HELLO", "2"});
  ASSERT_EQ(r.type, Reply::Type::kArray);
  EXPECT_EQ(r.elements.size(), 14u);
  EXPECT_EQ(r.elements[5].integer, 2);
  EXPECT_EQ(Run({"GET", "missing"}), kNull);
  EXPECT_EQ(Run({"CONFIG", "GET", "maxclients"}), "*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
}

TEST_F(CommandsTest, HelloErrorsKeepTheProtocol) {
  EXPECT_EQ(Run({"HELLO", "4"}), "-NOPROTO unsupported protocol version\r\n");
  EXPECT_EQ(Run({"HELLO", "1"}), "-NOPROTO unsupported protocol version\r\n");
  EXPECT_EQ(Run({"HELLO", "x"}), "-ERR Protocol version is not an integer or out of range\r\n");
  EXPECT_EQ(Run({"HELLO", "3", "FOO"}), "-ERR Syntax error in HELLO option 'FOO'\r\n");
  EXPECT_EQ(Run({"HELLO", "3", "SETNAME"}), "-ERR Syntax error in HELLO option 'SETNAME'\r\n");
  EXPECT_EQ(Run({"HELLO", "3", "AUTH", "default"}), "-ERR Syntax error in HELLO option 'AUTH'\r\n");
  EXPECT_EQ(ts_.conn().resp, 2);
  EXPECT_EQ(Run({"GET", "k"}), kNull);
  // SETNAME sets the name.
  Reply r = RunParsed({"HELLO", "3", "SETNAME", "worker-1"});
  ASSERT_EQ(r.type, Reply::Type::kMap);
  EXPECT_EQ(Run({"CLIENT", "GETNAME"}), Bulk("worker-1"));
}

TEST_F(CommandsTest, Select) {
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
  EXPECT_EQ(Run({"SELECT", "1"}), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(Run({"SELECT", "-1"}), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(Run({"SELECT", "2147483647"}), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(Run({"SELECT", "x"}), kNotInt);
  // Redis parses the index as a C int.
  EXPECT_EQ(Run({"SELECT", "9999999999"}),
            "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n");
  EXPECT_EQ(Run({"SELECT", "-2147483649"}),
            "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n");
  EXPECT_EQ(Run({"SELECT"}), Arity("select"));
}

TEST_F(CommandsTest, DbSizeAndFlushAll) {
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  ASSERT_EQ(Run({"SET", "a", "1"}), kOk);
  ASSERT_EQ(Run({"SET", "b", "2", "PX", "1000"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(2));
  EXPECT_EQ(Run({"FLUSHALL", "x"}), kSyntax);
  EXPECT_EQ(Run({"FLUSHALL", "SYNC", "ASYNC"}), kSyntax);
  EXPECT_EQ(Run({"DBSIZE"}), Int(2));
  EXPECT_EQ(Run({"FLUSHALL"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  EXPECT_EQ(Run({"EXISTS", "a", "b"}), Int(0));
  EXPECT_EQ(ts_.server().store().keys_with_deadline(), 0u);
  ASSERT_EQ(Run({"SET", "a", "1"}), kOk);
  EXPECT_EQ(Run({"FLUSHALL", "async"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  ASSERT_EQ(Run({"SET", "a", "1"}), kOk);
  EXPECT_EQ(Run({"FLUSHDB", "SYNC"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
}

TEST_F(CommandsTest, PingEchoTime) {
  EXPECT_EQ(Run({"PING"}), "+PONG\r\n");
  EXPECT_EQ(Run({"PING", "hi"}), Bulk("hi"));
  EXPECT_EQ(Run({"ECHO", std::string("a\0b", 3)}), Bulk(std::string("a\0b", 3)));
  EXPECT_EQ(Run({"TIME"}), "*2\r\n$10\r\n1700000000\r\n$1\r\n0\r\n");
  clock().Advance(1500);
  EXPECT_EQ(Run({"TIME"}), "*2\r\n$10\r\n1700000001\r\n$6\r\n500000\r\n");
}

// -------------------------------------------------------------------- CONFIG

std::set<std::string> ConfigNames(const Reply& r) {
  std::set<std::string> names;
  for (size_t i = 0; i < r.elements.size(); i += 2) names.insert(r.elements[i].str);
  return names;
}

TEST_F(CommandsTest, ConfigGet) {
  EXPECT_EQ(Run({"CONFIG", "GET", "timeout"}), "*2\r\n$7\r\ntimeout\r\n$1\r\n0\r\n");
  EXPECT_EQ(Run({"CONFIG", "GET", "nosuch"}), "*0\r\n");
  EXPECT_EQ(Run({"CONFIG", "GET", "max-lock-ttl"}), "*2\r\n$12\r\nmax-lock-ttl\r\n$1\r\n0\r\n");
  Reply r = RunParsed({"CONFIG", "GET", "append*"});
  ASSERT_EQ(r.type, Reply::Type::kArray) << r.ToString();
  EXPECT_EQ(ConfigNames(r), (std::set<std::string>{"appendonly", "appendfilename", "appendfsync"}));
  // Several patterns; a parameter matched twice is listed once.
  r = RunParsed({"CONFIG", "GET", "?imeout", "timeout", "maxclient[sx]"});
  EXPECT_EQ(r.elements.size(), 4u);
  EXPECT_EQ(ConfigNames(r), (std::set<std::string>{"timeout", "maxclients"}));
  // Patterns are case-insensitive; an exact name is echoed as typed (Redis 7.0).
  EXPECT_EQ(Run({"CONFIG", "GET", "TIMEOUT"}), "*2\r\n$7\r\nTIMEOUT\r\n$1\r\n0\r\n");
  r = RunParsed({"CONFIG", "GET", "MAXCLIENT?"});
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_EQ(r.elements[0].str, "maxclients");
  EXPECT_EQ(r.elements[1].str, "10000");
  // redis-benchmark asks for these at start-up.
  r = RunParsed({"CONFIG", "GET", "save"});
  EXPECT_EQ(r.elements.size(), 2u);
  r = RunParsed({"CONFIG", "GET", "appendonly"});
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_EQ(r.elements[1].str, "no");
  r = RunParsed({"CONFIG", "GET", "*"});
  EXPECT_GT(r.elements.size(), 40u);
  EXPECT_EQ(r.elements.size() % 2, 0u);
}

TEST_F(CommandsTest, ConfigSet) {
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "5"}), kOk);
  EXPECT_EQ(ts_.server().config().timeout, 5);
  EXPECT_EQ(Run({"CONFIG", "GET", "timeout"}), "*2\r\n$7\r\ntimeout\r\n$1\r\n5\r\n");
  EXPECT_EQ(Run({"CONFIG", "SET", "TIMEOUT", "6"}), kOk);
  EXPECT_EQ(ts_.server().config().timeout, 6);
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "7", "maxclients", "100"}), kOk);
  EXPECT_EQ(ts_.server().config().timeout, 7);
  EXPECT_EQ(ts_.server().config().maxclients, 100);

  auto failed = [](std::string_view arg, std::string_view why) {
    return "-ERR CONFIG SET failed (possibly related to argument '" + std::string(arg) + "') - " +
           std::string(why) + "\r\n";
  };
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "abc"}),
            failed("timeout", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "-1"}),
            failed("timeout", "argument must be between 0 and 2147483647 inclusive"));
  EXPECT_EQ(
      Run({"CONFIG", "SET", "appendfsync", "bad"}),
      failed("appendfsync", "argument(s) must be one of the following: everysec, always, no"));
  EXPECT_EQ(Run({"CONFIG", "SET", "protected-mode", "maybe"}),
            failed("protected-mode", "argument must be 'yes' or 'no'"));
  EXPECT_EQ(Run({"CONFIG", "SET", "port", "1"}), failed("port", "can't set immutable config"));
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "1", "timeout", "2"}),
            failed("timeout", "duplicate parameter"));
  EXPECT_EQ(Run({"CONFIG", "SET", "nosuch", "1"}),
            "-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n");
  // An odd number of arguments past the first pair: Redis says syntax error.
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "1", "maxclients"}), kSyntax);
  EXPECT_EQ(ts_.server().config().timeout, 7);
  EXPECT_EQ(ts_.server().config().port, 6379);

  // All or nothing: a bad second parameter leaves the first unchanged.
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "5", "maxclients", "abc"}),
            failed("maxclients", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(Run({"CONFIG", "SET", "max-lock-ttl", "1000", "nosuch", "1"}),
            "-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n");
  EXPECT_EQ(Run({"CONFIG", "SET", "max-lock-ttl", "1000", "port", "1"}),
            failed("port", "can't set immutable config"));
  EXPECT_EQ(ts_.server().config().timeout, 7);
  EXPECT_EQ(ts_.server().config().maxclients, 100);
  EXPECT_EQ(ts_.server().config().max_lock_ttl, 0);
  EXPECT_EQ(Run({"CONFIG", "GET", "timeout"}), "*2\r\n$7\r\ntimeout\r\n$1\r\n7\r\n");
}

// ------------------------------------------------------------------- COMMAND

TEST_F(CommandsTest, CommandCountInfoDocs) {
  Reply all = RunParsed({"COMMAND"});
  ASSERT_EQ(all.type, Reply::Type::kArray);
  EXPECT_GT(all.elements.size(), 30u);
  EXPECT_EQ(Run({"COMMAND", "COUNT"}), Int(static_cast<int64_t>(all.elements.size())));
  std::set<std::string> names;
  for (const Reply& c : all.elements) {
    ASSERT_EQ(c.type, Reply::Type::kArray);
    ASSERT_EQ(c.elements.size(), 10u) << c.ToString();
    names.insert(c.elements[0].str);
  }
  for (const char* n : {"get", "set", "del", "delifeq", "delex", "digest", "pexpire", "hello",
                        "config", "command", "eval"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }

  // Byte-identical to redis-server 7.0 for a command both have.
  EXPECT_EQ(
      Run({"COMMAND", "INFO", "get"}),
      "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n"
      "+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n"
      "$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex"
      "\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\n"
      "lastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n");
  EXPECT_EQ(Run({"COMMAND", "INFO", "nosuchcmd"}), "*1\r\n$-1\r\n");
  Reply info = RunParsed({"COMMAND", "INFO", "DELIFEQ", "nosuch", "set"});
  ASSERT_EQ(info.elements.size(), 3u);
  EXPECT_EQ(info.elements[0].elements[0].str, "delifeq");
  EXPECT_EQ(info.elements[0].elements[1].integer, 3);
  EXPECT_TRUE(info.elements[1].is_null());
  EXPECT_EQ(info.elements[2].elements[0].str, "set");
  EXPECT_EQ(info.elements[2].elements[1].integer, -3);

  EXPECT_EQ(Run({"COMMAND", "DOCS", "get"}),
            "*2\r\n$3\r\nget\r\n*10\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n$5\r\n"
            "since\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\n"
            "O(1)\r\n$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\n"
            "key\r\n$14\r\nkey_spec_index\r\n:0\r\n");
  EXPECT_EQ(Run({"COMMAND", "DOCS", "nosuchcmd"}), "*0\r\n");
  Reply docs = RunParsed({"COMMAND", "DOCS"});
  ASSERT_EQ(docs.type, Reply::Type::kArray);
  EXPECT_EQ(docs.elements.size(), 2 * all.elements.size());
  ts_.conn().resp = 3;
  docs = RunParsed({"COMMAND", "DOCS", "delex"});
  ASSERT_EQ(docs.type, Reply::Type::kMap) << docs.ToString();
  ASSERT_EQ(docs.elements.size(), 2u);
  EXPECT_EQ(docs.elements[0].str, "delex");
  EXPECT_EQ(docs.elements[1].type, Reply::Type::kMap);
}

TEST_F(CommandsTest, ScriptingNamesTheNativeCommands) {
  // A script latch does not know is refused with a pointer to the native
  // commands, on one line.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"EVAL", "return redis.call('del', KEYS[1])", "1", "lock"},
           {"eval", "return 1", "0"},
           {"SCRIPT", "LOAD", "return 1"},
           {"FCALL", "f", "0"},
           {"FUNCTION", "LIST"}}) {
    std::string reply = Run(args);
    EXPECT_EQ(reply.rfind("-ERR ", 0), 0u) << reply;
    EXPECT_NE(reply.find("DELIFEQ"), std::string::npos) << reply;
    EXPECT_EQ(reply.find('\n'), reply.size() - 1) << reply;
  }
  // EVALSHA of an unknown digest answers Redis's NOSCRIPT, on which clients
  // fall back to EVAL (and get the error above).
  EXPECT_EQ(Run({"EVALSHA", "0123456789012345678901234567890123456789", "0"}),
            "-NOSCRIPT No matching script. Please use EVAL.\r\n");
  EXPECT_EQ(Run({"EVAL", "x"}), Arity("eval"));
  EXPECT_EQ(Run({"EVALSHA", "x"}), Arity("evalsha"));
}

// ------------------------------------------------------------------ effects

class EffectsTest : public CommandsTest {
 protected:
  void SetUp() override { ts_.server().store().set_log(&log_); }
  void TearDown() override { ts_.server().store().set_log(nullptr); }
  // The records logged since the last call, without the clock annotations
  // (log/record.h; store_test.cc checks those).
  std::string Logged() {
    std::string out;
    const std::string& bytes = log_.bytes();
    resp::RequestParser parser;
    resp::ParseLimits strict;
    strict.strict = true;
    for (size_t pos = 0; pos < bytes.size();) {
      if (bytes[pos] == '#') {  // an annotation line
        pos = bytes.find('\n', pos) + 1;
        continue;
      }
      parser.Reset();
      if (parser.Parse(std::string_view(bytes).substr(pos), strict) !=
          resp::RequestParser::Result::kRequest) {
        ADD_FAILURE() << "unparsable log bytes at " << pos;
        break;
      }
      out.append(bytes, pos, parser.consumed());
      pos += parser.consumed();
    }
    log_.Clear();
    return out;
  }

  aof::Batch log_;
};

TEST_F(EffectsTest, SetRecords) {
  EXPECT_EQ(Run({"SET", "k", "v", "PX", "5000"}), kOk);
  EXPECT_EQ(Logged(), Req({"SET", "k", "v", "PXAT", WallMsPlus(5000)}));
  EXPECT_EQ(Run({"SET", "k", "v", "EX", "7"}), kOk);
  EXPECT_EQ(Logged(), Req({"SET", "k", "v", "PXAT", WallMsPlus(7000)}));
  EXPECT_EQ(Run({"SET", "k", "v", "EXAT", "1800000000"}), kOk);
  EXPECT_EQ(Logged(), Req({"SET", "k", "v", "PXAT", "1800000000000"}));
  EXPECT_EQ(Run({"SET", "k", "v", "PXAT", WallMsPlus(42)}), kOk);
  EXPECT_EQ(Logged(), Req({"SET", "k", "v", "PXAT", WallMsPlus(42)}));
  EXPECT_EQ(Run({"SET", "k", "v2"}), kOk);
  EXPECT_EQ(Logged(), Req({"SET", "k", "v2"}));
  // GET is dropped from the record.
  EXPECT_EQ(Run({"SET", "k", "v3", "GET"}), Bulk("v2"));
  EXPECT_EQ(Logged(), Req({"SET", "k", "v3"}));
  EXPECT_EQ(Run({"SET", "k", "v4", "GET", "PX", "100"}), Bulk("v3"));
  EXPECT_EQ(Logged(), Req({"SET", "k", "v4", "PXAT", WallMsPlus(100)}));
  // KEEPTTL logs the deadline the key keeps.
  EXPECT_EQ(Run({"SET", "t", "v", "PX", "5000"}), kOk);
  const std::string deadline = WallMsPlus(5000);
  Logged();
  clock().Advance(1000);
  EXPECT_EQ(Run({"SET", "t", "v2", "KEEPTTL"}), kOk);
  EXPECT_EQ(Logged(), Req({"SET", "t", "v2", "PXAT", deadline}));
  // A successful conditional SET is a plain SET in the log.
  EXPECT_EQ(Run({"SET", "t", "v3", "IFEQ", "v2"}), kOk);
  EXPECT_EQ(Logged(), Req({"SET", "t", "v3"}));
  EXPECT_EQ(Run({"SET", "t", "v4", "IFEQ", "v3", "PX", "300"}), kOk);
  EXPECT_EQ(Logged(), Req({"SET", "t", "v4", "PXAT", WallMsPlus(300)}));
  EXPECT_EQ(Run({"SETNX", "n", "v"}), Int(1));
  EXPECT_EQ(Logged(), Req({"SET", "n", "v"}));
  // Binary data survives the encoding.
  const std::string bin("\r\n\0x", 4);
  EXPECT_EQ(Run({"SET", bin, bin}), kOk);
  EXPECT_EQ(Logged(), Req({"SET", bin, bin}));
}

TEST_F(EffectsTest, WritesThatChangeNothingLogNothing) {
  ASSERT_EQ(Run({"SET", "k", "v"}), kOk);
  Logged();
  const uint64_t count = ts_.server().store().changes();
  EXPECT_EQ(Run({"SET", "k", "w", "NX"}), kNull);
  EXPECT_EQ(Run({"SET", "k", "w", "NX", "GET"}), Bulk("v"));
  EXPECT_EQ(Run({"SET", "m", "w", "XX"}), kNull);
  EXPECT_EQ(Run({"SET", "k", "w", "IFEQ", "x", "PX", "100"}), kNull);
  EXPECT_EQ(Run({"SET", "k", "w", "IFDEQ", kDigestEmpty}), kNull);
  EXPECT_EQ(Run({"SET", "k", "w", "IFDEQ", "short"}), kDigestLen);
  EXPECT_EQ(Run({"SET", "k", "w", "EX", "0"}), InvalidExpire("set"));
  EXPECT_EQ(Run({"SET", "k", "w", "NX", "XX"}), kSyntax);
  EXPECT_EQ(Run({"SETNX", "k", "w"}), Int(0));
  EXPECT_EQ(Run({"DELIFEQ", "k", "w"}), Int(0));
  EXPECT_EQ(Run({"DELIFEQ", "missing", "w"}), Int(0));
  EXPECT_EQ(Run({"DELEX", "k", "IFNE", "v"}), Int(0));
  EXPECT_EQ(Run({"DEL", "missing"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "missing", "10"}), Int(0));
  EXPECT_EQ(Run({"EXPIRE", "k", "10", "XX"}), Int(0));
  EXPECT_EQ(Run({"PERSIST", "k"}), Int(0));
  EXPECT_EQ(Run({"SET", "gone", "v", "PXAT", "1"}), kOk);  // missing key, past time
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v"));
  EXPECT_EQ(Logged(), "");
  EXPECT_EQ(ts_.server().store().changes(), count);
}

TEST_F(EffectsTest, DeletesExpiryAndFlush) {
  ASSERT_EQ(Run({"SET", "k", "tok"}), kOk);
  ASSERT_EQ(Run({"SET", "a", "1"}), kOk);
  Logged();
  EXPECT_EQ(Run({"DELIFEQ", "k", "tok"}), Int(1));
  EXPECT_EQ(Logged(), Req({"DEL", "k"}));
  EXPECT_EQ(Run({"DEL", "a", "zz"}), Int(1));
  EXPECT_EQ(Logged(), Req({"DEL", "a"}));
  ASSERT_EQ(Run({"SET", "k", "tok"}), kOk);
  Logged();
  EXPECT_EQ(Run({"DELEX", "k", "IFEQ", "tok"}), Int(1));
  EXPECT_EQ(Logged(), Req({"DEL", "k"}));

  // EXPIRE is logged as an absolute PEXPIREAT; a past time as DEL.
  ASSERT_EQ(Run({"SET", "e", "v"}), kOk);
  Logged();
  EXPECT_EQ(Run({"EXPIRE", "e", "10"}), Int(1));
  EXPECT_EQ(Logged(), Req({"PEXPIREAT", "e", WallMsPlus(10000)}));
  EXPECT_EQ(Run({"PEXPIRE", "e", "250", "LT"}), Int(1));
  EXPECT_EQ(Logged(), Req({"PEXPIREAT", "e", WallMsPlus(250)}));
  EXPECT_EQ(Run({"EXPIREAT", "e", "1800000000"}), Int(1));
  EXPECT_EQ(Logged(), Req({"PEXPIREAT", "e", "1800000000000"}));
  EXPECT_EQ(Run({"PERSIST", "e"}), Int(1));
  EXPECT_EQ(Logged(), Req({"PERSIST", "e"}));
  EXPECT_EQ(Run({"EXPIRE", "e", "0"}), Int(1));
  EXPECT_EQ(Logged(), Req({"DEL", "e"}));
  ASSERT_EQ(Run({"SET", "p", "v"}), kOk);
  Logged();
  EXPECT_EQ(Run({"SET", "p", "v2", "PXAT", "1"}), kOk);
  EXPECT_EQ(Logged(), Req({"DEL", "p"}));

  // A key that expires is logged as DEL when it is found expired, once.
  ASSERT_EQ(Run({"SET", "x", "v", "PX", "100"}), kOk);
  Logged();
  const uint64_t expired_before = ts_.server().stats().expired_keys;
  clock().Advance(100);
  EXPECT_EQ(Run({"GET", "x"}), Bulk("v"));
  EXPECT_EQ(Logged(), "");
  clock().Advance(1);
  EXPECT_EQ(Run({"GET", "x"}), kNull);
  EXPECT_EQ(Logged(), Req({"DEL", "x"}));
  EXPECT_EQ(Run({"GET", "x"}), kNull);
  EXPECT_EQ(Run({"DEL", "x"}), Int(0));
  EXPECT_EQ(Logged(), "");
  EXPECT_EQ(ts_.server().stats().expired_keys, expired_before + 1);
  // Also when the expired key is touched by a write: DEL, then the SET.
  ASSERT_EQ(Run({"SET", "y", "v", "PX", "10"}), kOk);
  Logged();
  clock().Advance(11);
  EXPECT_EQ(Run({"SET", "y", "w", "NX"}), kOk);
  EXPECT_EQ(Logged(), Req({"DEL", "y"}) + Req({"SET", "y", "w"}));
  // And by the active expiry cycle.
  ASSERT_EQ(Run({"SET", "z", "v", "PX", "10"}), kOk);
  Logged();
  clock().Advance(11);
  EXPECT_EQ(ts_.server().store().ActiveExpireCycle(clock().MonoMs(), 1000), 1u);
  EXPECT_EQ(Logged(), Req({"DEL", "z"}));

  EXPECT_EQ(Run({"FLUSHALL"}), kOk);
  EXPECT_EQ(Logged(), Req({"FLUSHALL"}));
}

}  // namespace
}  // namespace latch
