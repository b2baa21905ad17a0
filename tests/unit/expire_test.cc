// The lease commands (server/commands/expire.cc): the EXPIRE family, TTL,
// PERSIST, and leases across wall-clock steps.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "command_fixture.h"

namespace latch::test {
namespace {

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

}  // namespace
}  // namespace latch::test
