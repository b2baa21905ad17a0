// The hash and set commands against the lock rules: in restart quarantine,
// every write that stores, changes or hands out a field or member (HSET,
// HINCRBY, SADD, SPOP, SMOVE, a STORE form with a result…) is refused as SET
// is, and changes nothing; removals (HDEL, SREM, a STORE form whose result
// is empty) and reads go through. The command table says the same: a write
// flagged kCmdGrantsLease is exactly one that may grant.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "log/record.h"
#include "server/command.h"
#include "test_server.h"

namespace latch {
namespace {

class QuarantinedCollectionsTest : public ::testing::Test {
 protected:
  static Config Quarantined() {
    Config c = test::TestConfig();
    c.quarantine = QuarantineMode::kAlways;
    c.quarantine_ms = 60000;
    c.max_lock_ttl = 30000;
    return c;
  }
  void SetUp() override {
    old_cwd_ = std::filesystem::current_path();
    char tmpl[] = "/tmp/latch-hs-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::current_path(dir_);
    ts_ = std::make_unique<test::TestServer>(Quarantined());
    // Data from before the restart (as a replay would have loaded it).
    ts_->Run({"HSET", "h", "f", "1", "g", "2"});
    ts_->Run({"SADD", "s", "a", "b", "c"});
    ts_->Run({"SADD", "t", "b"});
    ts_->server().lease_policy().Begin(ts_->clock().MonoMs(), aof::LogIdentity{});
    ts_->server().lease_policy().Start(ts_->clock().MonoMs(), {});
    ASSERT_TRUE(ts_->server().lease_policy().quarantined(ts_->clock().MonoMs()));
  }
  void TearDown() override {
    ts_.reset();
    std::filesystem::current_path(old_cwd_);
    std::filesystem::remove_all(dir_);
  }
  bool Refused(const std::vector<std::string>& req) {
    return ts_->Run(req).rfind("-QUARANTINE ", 0) == 0;
  }
  std::filesystem::path old_cwd_, dir_;
  std::unique_ptr<test::TestServer> ts_;
};

TEST_F(QuarantinedCollectionsTest, GrantsAreRefusedReleasesAndReadsAllowed) {
  const uint64_t changes = ts_->server().store().changes();
  for (const auto& req : std::vector<std::vector<std::string>>{
           {"HSET", "h", "f", "9"},
           {"HSET", "new", "f", "1"},
           {"HMSET", "h", "x", "1"},
           {"HSETNX", "h", "x", "1"},
           {"HINCRBY", "h", "f", "1"},
           {"HINCRBYFLOAT", "h", "f", "1.5"},
           {"SADD", "s", "z"},
           {"SPOP", "s"},
           {"SPOP", "s", "2"},
           {"SMOVE", "s", "t", "a"},
           {"SINTERSTORE", "d", "s", "t"},
           {"SUNIONSTORE", "d", "s"},
           {"SDIFFSTORE", "d", "s", "t"},
       }) {
    EXPECT_TRUE(Refused(req)) << req[0];
  }
  EXPECT_EQ(ts_->server().store().changes(), changes) << "a refused write changed nothing";
  // Writes that change nothing are not grants either.
  EXPECT_EQ(ts_->Run({"SADD", "s", "a"}), ":0\r\n");
  EXPECT_EQ(ts_->Run({"HSETNX", "h", "f", "x"}), ":0\r\n");
  // Reads.
  EXPECT_EQ(ts_->Run({"HGET", "h", "f"}), "$1\r\n1\r\n");
  EXPECT_EQ(ts_->Run({"SCARD", "s"}), ":3\r\n");
  EXPECT_EQ(ts_->Run({"SINTER", "s", "t"}), "*1\r\n$1\r\nb\r\n");
  // Releases.
  EXPECT_EQ(ts_->Run({"HDEL", "h", "f"}), ":1\r\n");
  EXPECT_EQ(ts_->Run({"SREM", "s", "a"}), ":1\r\n");
  EXPECT_EQ(ts_->Run({"SINTERSTORE", "t", "s", "missing"}), ":0\r\n");  // only deletes t
  EXPECT_EQ(ts_->Run({"EXISTS", "t"}), ":0\r\n");
  // Once the quarantine is over, grants go through.
  ts_->clock().Advance(60001);
  ts_->server().lease_policy().Cron(ts_->clock().MonoMs());
  EXPECT_EQ(ts_->Run({"HINCRBY", "h", "n", "1"}), ":1\r\n");
  EXPECT_EQ(ts_->Run({"SPOP", "s", "0"}), "*0\r\n");
  EXPECT_EQ(ts_->Run({"SMOVE", "s", "t", "b"}), ":1\r\n");
}

TEST(HashSetCommandsTest, TheTableFlagsEveryGrantAndNoRelease) {
  const std::set<std::string> grants = {"hset",         "hsetnx",      "hmset",       "hincrby",
                                        "hincrbyfloat", "sadd",        "spop",        "smove",
                                        "sort",         "sinterstore", "sunionstore", "sdiffstore"};
  const std::set<std::string> releases = {"hdel", "srem"};
  const std::set<std::string> reads = {
      "hget",        "hmget",      "hgetall", "hkeys",     "hvals",      "hlen",     "hstrlen",
      "hexists",     "hrandfield", "hscan",   "sismember", "smismember", "smembers", "scard",
      "srandmember", "sinter",     "sunion",  "sdiff",     "sintercard", "sscan",    "sort_ro"};
  const CommandRegistry& reg = CommandRegistry::Get();
  for (const std::string& name : grants) {
    const CommandSpec* c = reg.Find(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->has(kCmdWrite) && c->has(kCmdGrantsLease)) << name;
  }
  for (const std::string& name : releases) {
    const CommandSpec* c = reg.Find(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->has(kCmdWrite) && !c->has(kCmdGrantsLease)) << name;
  }
  for (const std::string& name : reads) {
    const CommandSpec* c = reg.Find(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->has(kCmdReadonly) && !c->has(kCmdWrite) && !c->has(kCmdGrantsLease)) << name;
  }
}

}  // namespace
}  // namespace latch
