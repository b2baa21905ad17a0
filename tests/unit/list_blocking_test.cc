// Blocking pops on the in-process server (test_server.h): a pushed element
// goes to the first blocked client in the same step as the push, before any
// other request; the service is logged as its effect; timeouts, CLIENT
// UNBLOCK, disconnects, and a lock waiter and a pop in one key's queue.
// Time moves only when a test says so.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "command_fixture.h"

namespace latch::test {
namespace {

class ListBlockingTest : public BlockingTest {};

TEST_F(ListBlockingTest, APushServesTheFirstBlockedClientInTheSameStep) {
  auto a = Client(2), b = Client(3);
  EXPECT_EQ(From(*a, {"BLPOP", "k", "0"}), "");
  EXPECT_EQ(From(*b, {"BRPOP", "j", "k", "0"}), "");
  EXPECT_TRUE(a->blocked && b->blocked);
  EXPECT_EQ(ts_.server().parked_clients(), 2u);
  log_.Clear();
  // Both are served by the time RPUSH returns: a first (it came first).
  EXPECT_EQ(Run({"RPUSH", "k", "x", "y", "z"}), Int(3));
  EXPECT_EQ(Take(*a), Arr({Bulk("k"), Bulk("x")}));
  EXPECT_EQ(Take(*b), Arr({Bulk("k"), Bulk("z")}));
  EXPECT_FALSE(a->blocked || b->blocked);
  EXPECT_EQ(Run({"LRANGE", "k", "0", "-1"}), Arr({Bulk("y")}));
  // The log holds the push and the two pops, as a replay needs them.
  EXPECT_EQ(log_.bytes(), Req({"SELECT", "0"}) + Req({"RPUSH", "k", "x", "y", "z"}) +
                              Req({"LPOP", "k", "1"}) + Req({"RPOP", "k", "1"}));
  EXPECT_EQ(ts_.server().parked_clients(), 0u);
}

TEST_F(ListBlockingTest, TimeoutsUnblockAndDisconnects) {
  auto a = Client(2), b = Client(3), c = Client(4);
  EXPECT_EQ(From(*a, {"BLMPOP", "1.5", "1", "k", "LEFT"}), "");
  EXPECT_EQ(From(*b, {"BLMOVE", "k", "d", "LEFT", "LEFT", "0"}), "");
  EXPECT_EQ(From(*c, {"BLPOP", "k", "0"}), "");
  clock().Advance(1499);
  ts_.server().ServeWaiters();
  EXPECT_EQ(Take(*a), "");
  clock().Advance(1);
  ts_.server().ServeWaiters();
  EXPECT_EQ(Take(*a), "*-1\r\n");
  // CLIENT UNBLOCK (of clients with sockets: test_differential_lists.py).
  // A client that closes leaves its queues: the next one gets the element.
  EXPECT_EQ(From(*a, {"BLPOP", "k", "0"}), "");
  ts_.server().OnClientClosed(*b);
  b.reset();
  EXPECT_EQ(Run({"LPUSH", "k", "v", "w"}), Int(2));
  EXPECT_EQ(Take(*c), Arr({Bulk("k"), Bulk("w")}));
  EXPECT_EQ(Take(*a), Arr({Bulk("k"), Bulk("v")}));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
  EXPECT_EQ(ts_.server().parked_clients(), 0u);
}

TEST_F(ListBlockingTest, InsideMultiNothingBlocksAndEachServiceIsOneStep) {
  auto a = Client(2);
  EXPECT_EQ(From(*a, {"BLPOP", "k", "0"}), "");
  // Two pushes in one transaction: served once the transaction is over,
  // with what the list holds then.
  Run({"MULTI"});
  Run({"RPUSH", "k", "1"});
  Run({"RPUSH", "k", "2"});
  Run({"BLPOP", "nothing", "0"});
  EXPECT_EQ(Run({"EXEC"}), Arr({Int(1), Int(2), "*-1\r\n"}));
  EXPECT_EQ(Take(*a), Arr({Bulk("k"), Bulk("1")}));
  EXPECT_EQ(Run({"LRANGE", "k", "0", "-1"}), Arr({Bulk("2")}));
}

TEST_F(ListBlockingTest, ALockWaiterAndAPopShareAQueueInOrder) {
  // A list is held data: SET … NX WAIT waits for the key to go, BLPOP for
  // it to hold elements. A pop that empties the list releases the key.
  auto locker = Client(2), popper = Client(3);
  Run({"RPUSH", "k", "only"});
  EXPECT_EQ(From(*locker, {"SET", "k", "mine", "NX", "WAIT", "0"}), "");
  EXPECT_EQ(Run({"LPOP", "k"}), Bulk("only"));
  EXPECT_EQ(Take(*locker), kOk);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("mine"));
  // A pop on a key that holds a string is refused (WRONGTYPE); one that
  // waits for a missing key is not woken by a string arriving there.
  EXPECT_EQ(From(*popper, {"BLPOP", "k", "0"}), Err(kWrongTypeText));
  EXPECT_EQ(Run({"DEL", "k"}), Int(1));
  EXPECT_EQ(From(*popper, {"BLPOP", "k", "0"}), "");
  EXPECT_EQ(Run({"SET", "k", "s"}), kOk);
  EXPECT_EQ(Run({"DEL", "k"}), Int(1));
  EXPECT_EQ(Take(*popper), "");
  EXPECT_EQ(Run({"RPUSH", "k", "e"}), Int(1));
  EXPECT_EQ(Take(*popper), Arr({Bulk("k"), Bulk("e")}));
}

TEST_F(ListBlockingTest, AMoveIntoAWatchedKeyAbortsTheTransaction) {
  auto mover = Client(2), watcher = Client(3);
  EXPECT_EQ(From(*mover, {"BRPOPLPUSH", "src", "dst", "0"}), "");
  EXPECT_EQ(From(*watcher, {"WATCH", "dst"}), kOk);
  EXPECT_EQ(From(*watcher, {"MULTI"}), kOk);
  From(*watcher, {"GET", "x"});
  EXPECT_EQ(Run({"LPUSH", "src", "e"}), Int(1));
  EXPECT_EQ(Take(*mover), Bulk("e"));
  EXPECT_EQ(From(*watcher, {"EXEC"}), "*-1\r\n");
}

}  // namespace
}  // namespace latch::test
