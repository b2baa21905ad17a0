// What each command writes to the log (through the Store): effects, not
// requests, byte for byte.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>
#include "command_fixture.h"
#include "log/record.h"
#include "logged_records.h"

namespace latch::test {
namespace {

// ------------------------------------------------------------------ effects

class EffectsTest : public CommandsTest {
 protected:
  void SetUp() override { ts_.server().store().set_log(&log_); }
  void TearDown() override { ts_.server().store().set_log(nullptr); }
  // The records logged since the last call, without the clock annotations
  // (log/record.h; store_test.cc checks those).
  std::string Logged() { return TakeLogged(log_); }

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
}  // namespace latch::test
