// Fencing tokens and lock waiters through the commands (issue 17):
// SET … FENCE [MIN n], SET … NX WAIT, FENCE, LOCKINFO, on the in-process
// server (test_server.h). Time moves only when a test says so, so the
// handoffs at a lease's end are checked to the millisecond.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "command_fixture.h"

namespace latch::test {
namespace {

class LocksTest : public CommandsTest {
 protected:
  // Another client of the same server (no socket: its replies stay in its
  // output buffer, where the test reads them).
  std::unique_ptr<Connection> Client(uint64_t id) {
    auto c = std::make_unique<Connection>(ts_.server(), id);
    c->authenticated = true;
    return c;
  }
  // Runs a request from `c`; returns what it has been sent so far.
  std::string From(Connection& c, std::vector<std::string_view> argv) {
    ts_.server().Dispatch(c, argv);
    return Take(c);
  }
  static std::string Take(Connection& c) {
    std::string out = std::move(c.output());
    c.output().clear();
    return out;
  }
  int64_t Pttl(const std::string& key) {
    std::string r = Run({"PTTL", key});
    return std::stoll(r.substr(1));
  }
};

// ------------------------------------------------------------------ FENCE

TEST_F(LocksTest, AFencedGrantRepliesItsTokenAndARenewalKeepsIt) {
  EXPECT_EQ(Run({"SET", "lock", "A", "NX", "PX", "1000", "FENCE"}), Int(1));
  EXPECT_EQ(Run({"SET", "lock", "B", "NX", "PX", "1000", "FENCE"}), kNull);  // refused: nil
  EXPECT_EQ(Run({"SET", "lock", "A", "IFEQ", "A", "PX", "5000", "FENCE"}), Int(1));
  EXPECT_EQ(Run({"PEXPIRE", "lock", "8000"}), Int(1));
  EXPECT_EQ(Run({"FENCE", "lock"}), Int(1));
  // Without FENCE a renewal replies OK as ever, and keeps the token.
  EXPECT_EQ(Run({"SET", "lock", "A", "IFEQ", "A", "PX", "5000"}), kOk);
  EXPECT_EQ(Run({"FENCE", "lock"}), Int(1));
  // The next holder gets the next token; the counter is per node.
  EXPECT_EQ(Run({"DELIFEQ", "lock", "A"}), Int(1));
  EXPECT_EQ(Run({"FENCE", "lock"}), kNull);
  EXPECT_EQ(Run({"SET", "other", "X", "NX", "FENCE"}), Int(2));
  EXPECT_EQ(Run({"SET", "lock", "B", "NX", "PX", "1000", "FENCE"}), Int(3));
  // FLUSHALL forgets the keys, not the counter.
  EXPECT_EQ(Run({"FLUSHALL"}), kOk);
  EXPECT_EQ(Run({"SET", "lock", "C", "NX", "FENCE"}), Int(4));
}

TEST_F(LocksTest, AnotherValueIsAnotherHolderAndDropsTheToken) {
  auto fenced = [&](const std::string& key) {
    Run({"DEL", key});
    return Run({"SET", key, "5", "FENCE"});
  };
  EXPECT_EQ(fenced("k"), Int(1));
  EXPECT_EQ(Run({"SET", "k", "5"}), kOk);  // the same value: the same holder
  EXPECT_EQ(Run({"FENCE", "k"}), Int(1));
  EXPECT_EQ(Run({"PERSIST", "k"}), Int(0));
  EXPECT_EQ(Run({"SET", "k", "6"}), kOk);
  EXPECT_EQ(Run({"FENCE", "k"}), kNull);
  for (std::vector<std::string> write :
       std::vector<std::vector<std::string>>{{"GETSET", "k", "7"},
                                             {"INCR", "k"},
                                             {"INCRBYFLOAT", "k", "0.5"},
                                             {"APPEND", "k", "x"},
                                             {"SETRANGE", "k", "0", "z"},
                                             {"MSET", "k", "8"},
                                             {"SET", "k", "9", "KEEPTTL"}}) {
    fenced("k");
    Run(write);
    EXPECT_EQ(Run({"FENCE", "k"}), kNull) << write[0];
  }
  // A write that leaves the value as it was keeps the holder's token.
  EXPECT_EQ(fenced("k"), Int(9));
  EXPECT_EQ(Run({"APPEND", "k", ""}), Int(1));
  EXPECT_EQ(Run({"INCRBY", "k", "0"}), Int(5));
  EXPECT_EQ(Run({"GETEX", "k", "PX", "5000"}), Bulk("5"));
  EXPECT_EQ(Run({"FENCE", "k"}), Int(9));
  EXPECT_EQ(Run({"GETDEL", "k"}), Bulk("5"));
  EXPECT_EQ(Run({"FENCE", "k"}), kNull);
}

TEST_F(LocksTest, FenceMinRaisesTheFloorOnlyWhereItIsLower) {
  EXPECT_EQ(Run({"SET", "a", "A", "NX", "FENCE", "MIN", "100"}), Int(100));
  EXPECT_EQ(Run({"SET", "b", "B", "NX", "FENCE"}), Int(101));
  EXPECT_EQ(Run({"SET", "c", "C", "NX", "FENCE", "MIN", "50"}), Int(102));
  // A renewal with MIN at most the holder's token keeps it; a larger MIN
  // gives the holder a new token of at least MIN (a RedLock client raising
  // the floor on the nodes it holds).
  EXPECT_EQ(Run({"SET", "a", "A", "IFEQ", "A", "PX", "900", "FENCE", "MIN", "100"}), Int(100));
  EXPECT_EQ(Run({"SET", "a", "A", "IFEQ", "A", "PX", "900", "FENCE", "MIN", "500"}), Int(500));
  EXPECT_EQ(Run({"FENCE", "a"}), Int(500));
  EXPECT_EQ(Run({"SET", "d", "D", "FENCE"}), Int(501));
  EXPECT_EQ(Run({"INFO", "latch"}).find("fencing_next_token:502\r\n") != std::string::npos, true);
}

TEST_F(LocksTest, OptionErrors) {
  EXPECT_EQ(Run({"SET", "k", "v", "MIN", "5"}), kSyntax);  // MIN without FENCE
  EXPECT_EQ(Run({"SET", "k", "v", "FENCE", "GET"}), kSyntax);
  EXPECT_EQ(Run({"SET", "k", "v", "FENCE", "MIN"}), kSyntax);
  EXPECT_EQ(Run({"SET", "k", "v", "FENCE", "MIN", "x"}), kNotInt);
  EXPECT_EQ(Run({"SET", "k", "v", "FENCE", "MIN", "-1"}), kNotInt);
  EXPECT_EQ(Run({"SET", "k", "v", "WAIT", "100"}), kSyntax);  // WAIT needs NX
  EXPECT_EQ(Run({"SET", "k", "v", "XX", "WAIT", "100"}), kSyntax);
  EXPECT_EQ(Run({"SET", "k", "v", "NX", "PXAT", "1", "WAIT", "100"}), kSyntax);
  EXPECT_EQ(Run({"SET", "k", "v", "NX", "KEEPTTL", "WAIT", "100"}), kSyntax);
  EXPECT_EQ(Run({"SET", "k", "v", "NX", "GET", "WAIT", "100"}), kSyntax);
  EXPECT_EQ(Run({"SET", "k", "v", "NX", "WAIT", "soon"}),
            Err("ERR timeout is not an integer or out of range"));
  EXPECT_EQ(Run({"SET", "k", "v", "NX", "WAIT", "-1"}), Err("ERR timeout is negative"));
  EXPECT_EQ(Run({"SET", "k", "v", "NX", "PX", "0", "WAIT", "1"}), InvalidExpire("set"));
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
  // Case-insensitive, any order.
  EXPECT_EQ(Run({"set", "k", "v", "fence", "px", "100", "min", "7", "nx"}), Int(7));
  EXPECT_EQ(Run({"FENCE"}), Arity("fence"));
  EXPECT_EQ(Run({"LOCKINFO", "a", "b"}), Arity("lockinfo"));
  // An EXAT/PXAT in the past deletes the key and grants nothing: nil.
  EXPECT_EQ(Run({"SET", "k", "w", "FENCE", "PXAT", "1"}), kNull);
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(0));
}

TEST_F(LocksTest, LockInfoIsAMapInResp3AndAFlatArrayInResp2) {
  EXPECT_EQ(Run({"LOCKINFO", "lock"}),
            "*8\r\n$6\r\nholder\r\n$-1\r\n$5\r\ntoken\r\n$-1\r\n$4\r\npttl\r\n:-2\r\n"
            "$7\r\nwaiters\r\n:0\r\n");
  Run({"SET", "lock", "tok", "NX", "PX", "5000", "FENCE"});
  clock().Advance(1200);
  EXPECT_EQ(Run({"LOCKINFO", "lock"}),
            "*8\r\n$6\r\nholder\r\n$3\r\ntok\r\n$5\r\ntoken\r\n:1\r\n$4\r\npttl\r\n:3800\r\n"
            "$7\r\nwaiters\r\n:0\r\n");
  Run({"HELLO", "3"});
  Run({"SET", "plain", "v"});
  EXPECT_EQ(Run({"LOCKINFO", "plain"}),
            "%4\r\n$6\r\nholder\r\n$1\r\nv\r\n$5\r\ntoken\r\n_\r\n$4\r\npttl\r\n:-1\r\n"
            "$7\r\nwaiters\r\n:0\r\n");
  EXPECT_EQ(Run({"FENCE", "plain"}), "_\r\n");
}

// ------------------------------------------------------------------ WAIT

TEST_F(LocksTest, AReleaseHandsTheKeyToTheFirstWaiterAtOnce) {
  auto b = Client(2), c = Client(3);
  EXPECT_EQ(Run({"SET", "lock", "A", "NX", "PX", "10000"}), kOk);
  // B and C queue, in that order; nothing is replied yet.
  EXPECT_EQ(From(*b, {"SET", "lock", "B", "NX", "PX", "500", "WAIT", "0", "FENCE"}), "");
  EXPECT_TRUE(b->blocked);
  EXPECT_EQ(From(*c, {"SET", "lock", "C", "NX", "PX", "500", "WAIT", "0"}), "");
  EXPECT_EQ(Run({"LOCKINFO", "lock"}).find(":2\r\n") != std::string::npos, true);
  EXPECT_EQ(ts_.server().parked_clients(), 2u);
  clock().Advance(100);
  // A's release: B holds the key before the DEL's own reply is read, with
  // its 500 ms lease counted from now, and its token.
  EXPECT_EQ(Run({"DELIFEQ", "lock", "A"}), Int(1));
  EXPECT_EQ(Take(*b), Int(1));
  EXPECT_FALSE(b->blocked);
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("B"));
  EXPECT_EQ(Pttl("lock"), 500);
  // A competing SET NX finds it held, and so would any from outside the
  // queue; C is still waiting.
  EXPECT_EQ(Run({"SET", "lock", "X", "NX"}), kNull);
  EXPECT_EQ(Take(*c), "");
  EXPECT_EQ(From(*b, {"DEL", "lock"}), Int(1));
  EXPECT_EQ(Take(*c), kOk);
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("C"));
  EXPECT_EQ(ts_.server().parked_clients(), 0u);
  std::string info = Run({"INFO", "latch"});
  EXPECT_NE(info.find("lock_handoffs:2\r\n"), std::string::npos);
}

TEST_F(LocksTest, QueuesArePerDatabase) {
  // "lock" in database 0 and "lock" in database 4 are two locks: a waiter
  // for one is not served by the release of the other, and a SET NX of the
  // other is not held back by its queue. The grant lands in the waiter's
  // database, whatever the releasing client had selected.
  auto b = Client(2), c = Client(3);
  EXPECT_EQ(Run({"SET", "lock", "A", "NX", "PX", "10000"}), kOk);
  EXPECT_EQ(From(*b, {"SET", "lock", "B", "NX", "PX", "500", "WAIT", "0"}), "");
  EXPECT_EQ(From(*c, {"SELECT", "4"}), kOk);
  EXPECT_EQ(From(*c, {"SET", "lock", "C4", "NX", "PX", "10000"}), kOk);  // not queued behind B
  EXPECT_EQ(From(*c, {"DEL", "lock"}), Int(1));  // releases database 4's lock only
  EXPECT_EQ(Take(*b), "");
  // Database 4's lock has no waiters (B waits in 0).
  EXPECT_NE(From(*c, {"LOCKINFO", "lock"}).find("waiters\r\n:0\r\n"), std::string::npos);
  EXPECT_EQ(Run({"DELIFEQ", "lock", "A"}), Int(1));
  EXPECT_EQ(Take(*b), kOk);
  EXPECT_EQ(From(*c, {"GET", "lock"}), kNull);  // still nothing in 4
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("B"));
  // Released from another database's client (SWAPDB moves it here): the
  // waiter for database 0 gets it, in database 0.
  EXPECT_EQ(From(*c, {"SET", "lock", "D", "NX", "WAIT", "0"}), kOk);  // free in 4
  EXPECT_EQ(From(*c, {"SET", "lock", "E", "NX", "PX", "500", "WAIT", "0"}), "");
  EXPECT_EQ(Run({"SELECT", "4"}), kOk);
  EXPECT_EQ(Run({"DEL", "lock"}), Int(1));
  EXPECT_EQ(Take(*c), kOk);
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("E"));
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("B"));
}

TEST_F(LocksTest, MoveAndSwapdbLeaveTheTokenBehind) {
  // In database 3 the lock had a later holder (token 2) than the key that
  // arrives there (token 1): the arriving key must not bring the smaller
  // token back. It has none until its holder renews with FENCE.
  EXPECT_EQ(Run({"SET", "lock", "A", "NX", "PX", "10000", "FENCE"}), Int(1));
  EXPECT_EQ(Run({"SELECT", "3"}), kOk);
  EXPECT_EQ(Run({"SET", "lock", "B", "NX", "PX", "10000", "FENCE"}), Int(2));
  EXPECT_EQ(Run({"DEL", "lock"}), Int(1));
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
  EXPECT_EQ(Run({"MOVE", "lock", "3"}), Int(1));
  EXPECT_EQ(Run({"SELECT", "3"}), kOk);
  EXPECT_EQ(Run({"FENCE", "lock"}), kNull);
  EXPECT_EQ(Pttl("lock"), 10000);
  EXPECT_EQ(Run({"SET", "lock", "A", "IFEQ", "A", "KEEPTTL", "FENCE"}), Int(3));
  // SWAPDB: every fenced key of both databases.
  EXPECT_EQ(Run({"SET", "other", "C", "NX", "PX", "10000", "FENCE"}), Int(4));
  EXPECT_EQ(Run({"SWAPDB", "3", "0"}), kOk);
  EXPECT_EQ(Run({"FENCE", "lock"}), kNull);
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
  EXPECT_EQ(Run({"FENCE", "lock"}), kNull);
  EXPECT_EQ(Run({"FENCE", "other"}), kNull);
  EXPECT_EQ(Run({"GET", "other"}), Bulk("C"));
  EXPECT_EQ(Pttl("lock"), 10000);
}

TEST_F(LocksTest, ALeaseEndHandsTheKeyOverToTheMillisecond) {
  auto b = Client(2);
  Run({"SET", "lock", "A", "NX", "PX", "300"});
  EXPECT_EQ(From(*b, {"SET", "lock", "B", "NX", "PX", "1000", "WAIT", "5000"}), "");
  // A lease ends once the clock is past its deadline: the server's timer
  // is due at deadline + 1.
  EXPECT_EQ(ts_.server().lock_waits().NextDue(), clock().MonoMs() + 301);
  clock().Advance(300);
  ts_.server().ServeLockWaits();
  EXPECT_EQ(Take(*b), "");
  clock().Advance(1);
  ts_.server().ServeLockWaits();
  EXPECT_EQ(Take(*b), kOk);
  EXPECT_EQ(Pttl("lock"), 1000);
  // A renewal moves the watch with the lease.
  auto c = Client(3);
  EXPECT_EQ(From(*c, {"SET", "lock", "C", "NX", "PX", "1000", "WAIT", "0"}), "");
  EXPECT_EQ(From(*b, {"PEXPIRE", "lock", "2000"}), Int(1));
  EXPECT_EQ(ts_.server().lock_waits().NextDue(), clock().MonoMs() + 2001);
  EXPECT_EQ(From(*b, {"DEL", "lock"}), Int(1));
  EXPECT_EQ(Take(*c), kOk);
  EXPECT_EQ(ts_.server().lock_waits().NextDue(), INT64_MAX);
}

TEST_F(LocksTest, AnExpiryFoundByAnotherCommandStillGoesToTheQueue) {
  // The lease ends between two timer ticks and a poller's SET NX arrives
  // first: the lookup expires the key, but the key goes to the waiter.
  auto b = Client(2);
  Run({"SET", "lock", "A", "NX", "PX", "300"});
  From(*b, {"SET", "lock", "B", "NX", "PX", "1000", "WAIT", "0"});
  clock().Advance(400);
  EXPECT_EQ(Run({"SET", "lock", "poller", "NX", "PX", "1000"}), kNull);
  EXPECT_EQ(Run({"SETNX", "lock", "poller"}), Int(0));
  EXPECT_EQ(Take(*b), kOk);
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("B"));
}

TEST_F(LocksTest, ATimeoutRepliesNilAndAFreeKeyIsGrantedAtOnce) {
  auto b = Client(2);
  EXPECT_EQ(From(*b, {"SET", "free", "B", "NX", "PX", "100", "WAIT", "50", "FENCE"}), Int(1));
  Run({"SET", "lock", "A", "NX"});
  EXPECT_EQ(From(*b, {"SET", "lock", "B", "NX", "WAIT", "250"}), "");
  clock().Advance(249);
  ts_.server().ServeLockWaits();
  EXPECT_EQ(Take(*b), "");
  clock().Advance(1);
  ts_.server().ServeLockWaits();
  EXPECT_EQ(Take(*b), kNull);
  EXPECT_FALSE(b->blocked);
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("A"));
  EXPECT_NE(Run({"INFO", "latch"}).find("lock_wait_timeouts:1\r\n"), std::string::npos);
}

TEST_F(LocksTest, WaitDoesNotBlockInsideMulti) {
  Run({"SET", "lock", "A", "NX"});
  EXPECT_EQ(Run({"MULTI"}), kOk);
  EXPECT_EQ(Run({"SET", "lock", "B", "NX", "WAIT", "0"}), "+QUEUED\r\n");
  EXPECT_EQ(Run({"SET", "free", "B", "NX", "WAIT", "0", "FENCE"}), "+QUEUED\r\n");
  EXPECT_EQ(Run({"EXEC"}), "*2\r\n" + kNull + Int(1));
  EXPECT_FALSE(ts_.conn().blocked);
}

TEST_F(LocksTest, AReleaseInsideATransactionHandsOverAfterIt) {
  auto b = Client(2);
  Run({"SET", "lock", "A", "NX"});
  From(*b, {"SET", "lock", "B", "NX", "WAIT", "0"});
  EXPECT_EQ(Run({"MULTI"}), kOk);
  Run({"DEL", "lock"});
  // Absent now, but B waits for it: not free for a SET NX from outside the
  // queue, not even inside the transaction.
  Run({"SET", "lock", "A2", "NX"});
  Run({"DEL", "lock"});
  EXPECT_EQ(Run({"EXEC"}), "*3\r\n" + Int(1) + kNull + Int(0));
  EXPECT_EQ(Take(*b), kOk);
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("B"));
}

TEST_F(LocksTest, EveryWayOfReleasingHandsOver) {
  auto b = Client(2);
  const std::vector<std::vector<std::string>> releases = {{"DEL", "lock"},
                                                          {"UNLINK", "lock"},
                                                          {"GETDEL", "lock"},
                                                          {"DELIFEQ", "lock", "A"},
                                                          {"DELEX", "lock", "IFEQ", "A"},
                                                          {"DELEX", "lock"},
                                                          {"PEXPIRE", "lock", "0"},
                                                          {"SET", "lock", "A", "PXAT", "1"}};
  for (const auto& release : releases) {
    Run({"SET", "lock", "A", "NX", "PX", "10000"});
    EXPECT_EQ(From(*b, {"SET", "lock", "B", "NX", "PX", "1000", "WAIT", "0"}), "") << release[0];
    Run(release);
    EXPECT_EQ(Take(*b), kOk) << release[0];
    EXPECT_EQ(Run({"GET", "lock"}), Bulk("B")) << release[0];
    Run({"DEL", "lock"});
  }
}

TEST_F(LocksTest, FlushallHandsEveryQueueItsKey) {
  auto b = Client(2), c = Client(3);
  Run({"MSET", "x", "1", "y", "2"});
  From(*b, {"SET", "x", "B", "NX", "WAIT", "0"});
  From(*c, {"SET", "y", "C", "NX", "WAIT", "0", "FENCE"});
  EXPECT_EQ(Run({"FLUSHALL"}), kOk);
  EXPECT_EQ(Take(*b), kOk);
  EXPECT_EQ(Take(*c), Int(1));
  EXPECT_EQ(Run({"DBSIZE"}), Int(2));
}

TEST_F(LocksTest, ATtlCapLoweredWhileWaitingRefusesThatWaiterOnly) {
  auto b = Client(2), c = Client(3);
  Run({"SET", "lock", "A", "NX"});
  From(*b, {"SET", "lock", "B", "NX", "PX", "5000", "WAIT", "0"});
  From(*c, {"SET", "lock", "C", "NX", "PX", "1000", "WAIT", "0"});
  EXPECT_EQ(Run({"CONFIG", "SET", "max-lock-ttl", "2000"}), kOk);
  Run({"DEL", "lock"});
  EXPECT_EQ(Take(*b), Err("ERR TTL 5000 ms exceeds max-lock-ttl (2000 ms)"));
  EXPECT_EQ(Take(*c), kOk);
  EXPECT_EQ(Run({"GET", "lock"}), Bulk("C"));
}

}  // namespace
}  // namespace latch::test
