// The blocking sorted-set pops (BZPOPMIN, BZPOPMAX, BZMPOP) on the
// in-process server (test_server.h): a ZADD serves the first blocked client
// in the same step, before any other request; the service is logged as its
// effect (ZREM of what went); timeouts, disconnects, MULTI, a client blocked
// on several keys, a list waiter and a sorted-set waiter on one key; and in
// a restart quarantine a served pop is a grant: refused, the client keeps
// waiting until the quarantine ends. Time moves only when a test says so.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "command_fixture.h"

namespace latch::test {
namespace {

class ZSetBlockingTest : public BlockingTest {};

TEST_F(ZSetBlockingTest, AZAddServesTheBlockedClientsInOrderInTheSameStep) {
  auto a = Client(2), b = Client(3), c = Client(4);
  EXPECT_EQ(From(*a, {"BZPOPMIN", "z", "0"}), "");
  EXPECT_EQ(From(*b, {"BZPOPMAX", "other", "z", "0"}), "");
  EXPECT_EQ(From(*c, {"BZMPOP", "0", "1", "z", "MIN", "COUNT", "5"}), "");
  EXPECT_TRUE(a->blocked && b->blocked && c->blocked);
  EXPECT_EQ(ts_.server().parked_clients(), 3u);
  log_.Clear();
  // All three are served by the time ZADD returns, first come first
  // served: a takes the lowest, b the highest, c what is left.
  EXPECT_EQ(Run({"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}), Int(4));
  EXPECT_EQ(Take(*a), Arr({Bulk("z"), Bulk("a"), Bulk("1")}));
  EXPECT_EQ(Take(*b), Arr({Bulk("z"), Bulk("d"), Bulk("4")}));
  EXPECT_EQ(Take(*c),
            Arr({Bulk("z"), Arr({Arr({Bulk("b"), Bulk("2")}), Arr({Bulk("c"), Bulk("3")})})}));
  EXPECT_FALSE(a->blocked || b->blocked || c->blocked);
  EXPECT_EQ(Run({"EXISTS", "z"}), Int(0));
  // The log holds the ZADD and each pop as the ZREM of what it took: what a
  // replay (and redis-server) needs.
  EXPECT_EQ(log_.bytes(),
            Req({"SELECT", "0"}) + Req({"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"}) +
                Req({"ZREM", "z", "a"}) + Req({"ZREM", "z", "d"}) + Req({"ZREM", "z", "b", "c"}));
  EXPECT_EQ(ts_.server().parked_clients(), 0u);
}

TEST_F(ZSetBlockingTest, AClientOnSeveralKeysIsServedByTheFirstThatCan) {
  auto a = Client(2), b = Client(3);
  // Each key named once, whatever the command says.
  EXPECT_EQ(From(*a, {"BZPOPMIN", "z1", "z2", "z2", "z1", "0"}), "");
  EXPECT_EQ(From(*b, {"BZMPOP", "0", "2", "z1", "z2", "MAX", "COUNT", "10"}), "");
  // z2 changes first in the transaction: a is served from it, and b from
  // z1 (z2 is empty by then).
  Run({"MULTI"});
  Run({"ZADD", "z2", "5", "x"});
  Run({"ZADD", "z1", "1", "p", "2", "q"});
  EXPECT_EQ(Run({"EXEC"}), Arr({Int(1), Int(2)}));
  EXPECT_EQ(Take(*a), Arr({Bulk("z2"), Bulk("x"), Bulk("5")}));
  EXPECT_EQ(Take(*b),
            Arr({Bulk("z1"), Arr({Arr({Bulk("q"), Bulk("2")}), Arr({Bulk("p"), Bulk("1")})})}));
  EXPECT_EQ(ts_.server().parked_clients(), 0u);
  // Data already there: popped at once, from the first key that has some.
  Run({"ZADD", "z2", "7", "y"});
  EXPECT_EQ(From(*a, {"BZPOPMAX", "z1", "z2", "0"}), Arr({Bulk("z2"), Bulk("y"), Bulk("7")}));
}

TEST_F(ZSetBlockingTest, TimeoutsDisconnectsAndMulti) {
  auto a = Client(2), b = Client(3), c = Client(4);
  EXPECT_EQ(From(*a, {"BZMPOP", "1.5", "1", "z", "MIN"}), "");
  EXPECT_EQ(From(*b, {"BZPOPMIN", "z", "0"}), "");
  EXPECT_EQ(From(*c, {"BZPOPMAX", "z", "0.001"}), "");
  clock().Advance(1);
  ts_.server().ServeWaiters();
  EXPECT_EQ(Take(*c), "*-1\r\n");
  clock().Advance(1498);
  ts_.server().ServeWaiters();
  EXPECT_EQ(Take(*a), "");
  clock().Advance(1);
  ts_.server().ServeWaiters();
  EXPECT_EQ(Take(*a), "*-1\r\n");
  // A client that closes leaves its queues: the next one gets the member.
  EXPECT_EQ(From(*a, {"BZPOPMIN", "z", "0"}), "");
  ts_.server().OnClientClosed(*b);
  b.reset();
  EXPECT_EQ(Run({"ZADD", "z", "1", "m"}), Int(1));
  EXPECT_EQ(Take(*a), Arr({Bulk("z"), Bulk("m"), Bulk("1")}));
  // Inside MULTI nothing blocks: the timeout's answer, at once.
  Run({"MULTI"});
  Run({"BZPOPMIN", "z", "0"});
  Run({"BZMPOP", "0", "1", "z", "MAX"});
  EXPECT_EQ(Run({"EXEC"}), Arr({"*-1\r\n", "*-1\r\n"}));
  // A ZADD and a DEL in one transaction wake nobody; a string arriving
  // does not either.
  EXPECT_EQ(From(*a, {"BZPOPMIN", "z", "0"}), "");
  Run({"MULTI"});
  Run({"ZADD", "z", "0", "foo"});
  Run({"DEL", "z"});
  Run({"SET", "z", "s"});
  Run({"EXEC"});
  EXPECT_EQ(Take(*a), "");
  EXPECT_TRUE(a->blocked);
  EXPECT_EQ(Run({"DEL", "z"}), Int(1));
  EXPECT_EQ(Run({"ZADD", "z", "1", "bar"}), Int(1));
  EXPECT_EQ(Take(*a), Arr({Bulk("z"), Bulk("bar"), Bulk("1")}));
  EXPECT_EQ(ts_.server().parked_clients(), 0u);
}

TEST_F(ZSetBlockingTest, AListWaiterAndASortedSetWaiterShareAQueueByType) {
  auto lister = Client(2), zsetter = Client(3);
  EXPECT_EQ(From(*lister, {"BLPOP", "k", "0"}), "");
  EXPECT_EQ(From(*zsetter, {"BZPOPMIN", "k", "0"}), "");
  // A sorted set serves the sorted-set waiter; the list waiter, first in
  // the queue, keeps its place for a list.
  EXPECT_EQ(Run({"ZADD", "k", "1", "m"}), Int(1));
  EXPECT_EQ(Take(*zsetter), Arr({Bulk("k"), Bulk("m"), Bulk("1")}));
  EXPECT_TRUE(lister->blocked);
  EXPECT_EQ(Run({"RPUSH", "k", "e"}), Int(1));
  EXPECT_EQ(Take(*lister), Arr({Bulk("k"), Bulk("e")}));
  // A key that holds another type is WRONGTYPE, not a wait.
  EXPECT_EQ(Run({"RPUSH", "l", "x"}), Int(1));
  EXPECT_EQ(From(*zsetter, {"BZPOPMIN", "l", "0"}), Err(kWrongTypeText));
  EXPECT_EQ(From(*zsetter, {"BZMPOP", "0", "2", "none", "l", "MIN"}), Err(kWrongTypeText));
}

TEST(ZSetBlockingRegistryTest, TheBlockingPopsAreGrantsThatBlock) {
  const CommandRegistry& reg = CommandRegistry::Get();
  for (const char* name : {"bzpopmin", "bzpopmax", "bzmpop"}) {
    const CommandSpec* c = reg.Find(name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->has(kCmdWrite) && c->has(kCmdGrantsLease) && c->has(kCmdBlocking)) << name;
  }
  EXPECT_TRUE(reg.Find("bzmpop")->has(kCmdMovableKeys));
  EXPECT_TRUE(reg.Find("bzpopmin")->has(kCmdNoScript));
  EXPECT_FALSE(reg.Find("bzmpop")->has(kCmdNoScript));
}

// In a restart quarantine a pop is a grant: refused when sent, and, served
// from a key that received a sorted set by a path that is not a grant
// (SWAPDB), refused too — the client keeps waiting, first in line, until
// the quarantine ends.
class QuarantinedZSetPopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    old_cwd_ = std::filesystem::current_path();
    char tmpl[] = "/tmp/latch-zpop-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::filesystem::current_path(dir_);
    Config c = TestConfig();
    c.quarantine = QuarantineMode::kAlways;
    c.quarantine_ms = 60000;
    c.max_lock_ttl = 30000;
    ts_ = std::make_unique<TestServer>(c);
    // Data from before the restart (as a replay would have loaded it).
    ts_->Run({"SELECT", "1"});
    ts_->Run({"ZADD", "z", "1", "a", "2", "b"});
    ts_->Run({"SELECT", "0"});
    ts_->server().lease_policy().Begin(ts_->clock().MonoMs(), aof::LogIdentity{});
    ts_->server().lease_policy().Start(ts_->clock().MonoMs(), {});
    ASSERT_TRUE(ts_->server().lease_policy().quarantined(ts_->clock().MonoMs()));
  }
  void TearDown() override {
    ts_.reset();
    std::filesystem::current_path(old_cwd_);
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path old_cwd_, dir_;
  std::unique_ptr<TestServer> ts_;
};

TEST_F(QuarantinedZSetPopTest, AServedPopWaitsForTheEndOfTheQuarantine) {
  auto w = ClientOf(*ts_, 2), other = ClientOf(*ts_, 3);
  ts_->server().Dispatch(*other, std::vector<std::string_view>{"SELECT", "1"});
  Take(*other);
  for (std::vector<std::string_view> refused :
       {std::vector<std::string_view>{"BZPOPMIN", "z", "0"},
        std::vector<std::string_view>{"BZPOPMAX", "z", "0"},
        std::vector<std::string_view>{"BZMPOP", "0", "1", "z", "MIN"}}) {
    ts_->server().Dispatch(*other, refused);
    EXPECT_EQ(Take(*other).rfind("-QUARANTINE ", 0), 0u) << refused[0];
  }
  // Blocked in database 0; the sorted set arrives by SWAPDB.
  ts_->server().Dispatch(*w, std::vector<std::string_view>{"BZPOPMIN", "z", "0"});
  EXPECT_EQ(Take(*w), "");
  EXPECT_EQ(ts_->Run({"SWAPDB", "0", "1"}), kOk);
  EXPECT_EQ(Take(*w), "");
  EXPECT_TRUE(w->blocked);
  EXPECT_EQ(ts_->Run({"ZCARD", "z"}), Int(2));
  // Once the quarantine is over, the retry serves it.
  ts_->clock().Advance(60001);
  ts_->server().lease_policy().Cron(ts_->clock().MonoMs());
  ts_->server().ServeWaiters();
  EXPECT_EQ(Take(*w), Arr({Bulk("z"), Bulk("a"), Bulk("1")}));
  EXPECT_FALSE(w->blocked);
  EXPECT_EQ(ts_->Run({"ZCARD", "z"}), Int(1));
}

}  // namespace
}  // namespace latch::test
