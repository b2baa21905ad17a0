// The string and lock commands (server/commands/strings.cc): SET and its
// conditions, GET, DEL, EXISTS, compare-and-delete (DELIFEQ, DELEX), DIGEST.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "command_fixture.h"

namespace latch::test {
namespace {

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

}  // namespace
}  // namespace latch::test
