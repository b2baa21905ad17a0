// LockWaits (server/waiters.h): the books behind SET … NX WAIT — FIFO
// queues per key, which keys changed, what is due. The server's use of them
// (handoffs, replies) is tested in locks_test.cc and the integration tests.
#include "server/waiters.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "server/session.h"

namespace latch {
namespace {

class FakeSession : public Session {
 public:
  explicit FakeSession(uint64_t id) : Session(id) {}
  void CloseAfterReply() override {}
  void Close() override {}
  bool closing() const override { return false; }
  Buffers buffers() const override { return {}; }
  void Push(std::string_view) override {}
};

LockWaitRequest Req(std::string value, int64_t timeout_at = 0) {
  LockWaitRequest r;
  r.value = std::move(value);
  r.ttl_ms = 1000;
  r.timeout_at = timeout_at;
  return r;
}

std::vector<std::string> Values(LockWaits& w, const std::string& key) {
  std::vector<std::string> out;
  while (w.Front(key) != nullptr) out.push_back(w.PopFront(key).request.value);
  return out;
}

TEST(LockWaitsTest, QueuesAreFirstInFirstOutPerKey) {
  LockWaits w;
  std::vector<std::unique_ptr<FakeSession>> s;
  for (int i = 0; i < 50; ++i) s.push_back(std::make_unique<FakeSession>(i));
  for (int i = 0; i < 50; ++i) w.Park(*s[i], i % 2 ? "odd" : "even", Req("c" + std::to_string(i)));
  EXPECT_EQ(w.total(), 50u);
  EXPECT_EQ(w.keys(), 2u);
  EXPECT_EQ(w.waiters("odd"), 25u);
  EXPECT_EQ(*w.WaitingFor(*s[3]), "odd");
  std::vector<std::string> even = Values(w, "even");
  ASSERT_EQ(even.size(), 25u);
  for (int i = 0; i < 25; ++i) EXPECT_EQ(even[i], "c" + std::to_string(2 * i));
  EXPECT_EQ(w.keys(), 1u);  // an empty queue goes
  EXPECT_EQ(w.WaitingFor(*s[0]), nullptr);
}

TEST(LockWaitsTest, ADisconnectedWaiterLeavesItsPlace) {
  LockWaits w;
  FakeSession a(1), b(2), c(3);
  w.Park(a, "k", Req("a"));
  w.Park(b, "k", Req("b", 500));
  w.Park(c, "k", Req("c"));
  EXPECT_TRUE(w.Forget(b));
  EXPECT_FALSE(w.Forget(b));
  EXPECT_EQ(w.NextDue(), INT64_MAX);  // its timeout went with it
  EXPECT_TRUE(w.Forget(a));
  EXPECT_EQ(Values(w, "k"), std::vector<std::string>{"c"});
  EXPECT_TRUE(w.empty());
}

TEST(LockWaitsTest, OnlyKeysWithWaitersAreNotedOnceEach) {
  LockWaits w;
  w.Touched("k");  // nobody waits: nothing noted
  EXPECT_FALSE(w.has_touched());
  FakeSession a(1), b(2);
  w.Park(a, "k", Req("a"));
  w.Park(b, "j", Req("b"));
  w.Touched("k");
  w.Touched("k");
  w.Touched("other");
  EXPECT_EQ(w.TakeTouched(), std::vector<std::string>{"k"});
  EXPECT_FALSE(w.has_touched());
  w.TouchedAll();
  std::vector<std::string> all = w.TakeTouched();
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<std::string>{"j", "k"}));
  // A key whose last waiter left meanwhile is dropped from the notes.
  w.Touched("j");
  w.Forget(b);
  EXPECT_EQ(w.TakeTouched(), std::vector<std::string>{});
  // Retries are noted at the next tick, once.
  w.RetryLater("k");
  w.RetryLater("k");
  EXPECT_FALSE(w.has_touched());
  w.TouchRetries();
  EXPECT_EQ(w.TakeTouched(), std::vector<std::string>{"k"});
  w.TouchRetries();
  EXPECT_FALSE(w.has_touched());
}

TEST(LockWaitsTest, ExpiriesAndTimeoutsComeDueInOrder) {
  LockWaits w;
  FakeSession a(1), b(2), c(3);
  w.Park(a, "k", Req("a", 900));
  w.Park(b, "k", Req("b", 300));
  w.Park(c, "j", Req("c"));
  EXPECT_EQ(w.NextDue(), 300);
  // A lease ends once the clock is past its deadline.
  w.WatchExpiry("j", 200);
  EXPECT_EQ(w.NextDue(), 201);
  w.WatchExpiry("j", 250);  // renewed: the watch moves
  EXPECT_EQ(w.NextDue(), 251);
  w.TouchExpired(250);
  EXPECT_FALSE(w.has_touched());
  w.TouchExpired(251);
  EXPECT_EQ(w.TakeTouched(), std::vector<std::string>{"j"});
  EXPECT_EQ(w.NextDue(), 300);
  EXPECT_TRUE(w.TakeTimedOut(299).empty());
  auto out = w.TakeTimedOut(300);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].session, &b);
  EXPECT_EQ(w.timeouts(), 1u);
  EXPECT_EQ(w.NextDue(), 900);
  // The last waiter of a key takes its watch with it.
  w.WatchExpiry("j", 400);
  EXPECT_EQ(w.NextDue(), 401);
  w.Forget(c);
  EXPECT_EQ(w.NextDue(), 900);
  w.WatchExpiry("k", 0);
  EXPECT_EQ(w.waiters("k"), 1u);
}

// Blocked pops (BLPOP k1 k2…) share the books: one waiter in the queue of
// each key it named, leaving them all when served; lock waiters and pops in
// one queue keep their order, and only lock waiters make a key taken.
TEST(LockWaitsTest, APopWaitsInEveryQueueItNamedAndLeavesThemAll) {
  Waiters w;
  FakeSession lock(1), pop(2), zpop(3);
  PopWaitRequest p;
  p.type = ValueType::kList;
  p.argv = {"BLPOP", "a", "b", "a", "0"};
  p.timeout_at = 700;
  const std::vector<std::string> keys = {"a", "b", "a"};
  w.Park(lock, "b", Req("L"));
  w.ParkPop(pop, keys, p);
  PopWaitRequest z;
  z.type = ValueType::kZSet;
  const std::vector<std::string> zkeys = {"b"};
  w.ParkPop(zpop, zkeys, z);
  EXPECT_EQ(w.total(), 3u);
  EXPECT_EQ(w.lock_waiters(), 1u);
  EXPECT_EQ(w.keys(), 2u);
  EXPECT_EQ(w.lock_keys(), 1u);
  EXPECT_EQ(w.waiters("a"), 0u);  // pops do not make a key taken
  EXPECT_EQ(w.waiters("b"), 1u);
  EXPECT_EQ(w.Front("b")->session, &lock);
  EXPECT_EQ(w.FrontLock("a"), nullptr);
  EXPECT_EQ(w.FrontPop("b", ValueType::kList)->session, &pop);
  EXPECT_EQ(w.FrontPop("b", ValueType::kZSet)->session, &zpop);
  EXPECT_EQ(w.FrontPop("a", ValueType::kZSet), nullptr);
  EXPECT_EQ(*w.WaitingFor(pop), "a");
  EXPECT_EQ(w.NextDue(), 700);
  // A key named twice waits once; touching it notes it once.
  w.Touched("a");
  w.Touched("b");
  w.Touched("a");
  EXPECT_EQ(w.TakeTouched(), (std::vector<std::string>{"a", "b"}));
  // Served: it leaves both queues (and "a", now empty, goes).
  Waiters::Waiter served = w.Take(pop);
  EXPECT_EQ(served.kind, Waiters::Kind::kPop);
  EXPECT_EQ(served.pop.argv[0], "BLPOP");
  EXPECT_EQ(w.keys(), 1u);
  EXPECT_EQ(w.FrontPop("b", ValueType::kList), nullptr);
  EXPECT_EQ(w.NextDue(), INT64_MAX);
  EXPECT_TRUE(w.Forget(zpop));
  EXPECT_TRUE(w.Forget(lock));
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(w.lock_waiters(), 0u);
}

}  // namespace
}  // namespace latch
