// The Store: the one write path, and the one applier.
//
// The property that makes the log trustworthy: whatever sequence of
// commands ran, replaying the records the Store wrote rebuilds the live
// keyspace exactly — the same keys, values and boot-clock deadlines —
// including across wall-clock steps (the clock annotations) and inside
// transactions. Plus the annotation rules themselves.
#include "server/store.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "command_fixture.h"
#include "log/reader.h"
#include "log/record.h"
#include "replay_check.h"
#include "test_server.h"

namespace latch {
namespace {

using test::LiveKeys;
using test::ReplayInto;
using test::TestServer;

// A random command from the write-heavy lock vocabulary.
std::vector<std::string> RandomCommand(std::mt19937_64& rng, int64_t wall_ms) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  std::string key = "k" + std::to_string(pick(24));
  std::string val = "v" + std::to_string(pick(5));
  std::string ms = std::to_string(1 + pick(5000));
  switch (pick(31)) {
    case 0:
      return {"SET", key, val};
    case 1:
      return {"SET", key, val, "NX", "PX", ms};
    case 2:
      return {"SET", key, val, "XX", "KEEPTTL"};
    case 3:
      return {"SET", key, val, "IFEQ", "v" + std::to_string(pick(5)), "PX", ms};
    case 4:
      return {"SET", key, val, "PXAT", std::to_string(wall_ms + pick(6000) - 1000)};
    case 5:
      return {"SET", key, val, "GET", "EX", std::to_string(1 + pick(5))};
    case 6:
      return {"SETNX", key, val};
    case 7:
      return {"PSETEX", key, ms, val};
    case 8:
      return {"DEL", key, "k" + std::to_string(pick(24))};
    case 9:
      return {"DELIFEQ", key, val};
    case 10:
      return {"DELEX", key, "IFNE", val};
    case 11:
      return {"PEXPIRE", key, std::to_string(pick(5000) - 500)};
    case 12:
      return {"EXPIRE", key, std::to_string(pick(6)), pick(2) ? "GT" : "LT"};
    case 13:
      return {"PEXPIREAT", key, std::to_string(wall_ms + pick(6000) - 1000)};
    case 14:
      return {"PERSIST", key};
    case 15:
      return {"GET", key};
    case 16:
      return pick(10) == 0 ? std::vector<std::string>{"FLUSHALL"}
                           : std::vector<std::string>{"EXISTS", key};
    // Fencing tokens: grants, renewals that keep or raise the token, and
    // writes of other values that drop it.
    case 17:
      return {"SET", key, val, "NX", "PX", ms, "FENCE"};
    case 18:
      return {"SET", key, val, "IFEQ", val, "PX", ms, "FENCE", "MIN", std::to_string(pick(200))};
    case 19:
      return pick(2) ? std::vector<std::string>{"SET", key, val, "FENCE"}
                     : std::vector<std::string>{"INCR", key};
    case 20:
      return {"GETSET", key, val};
    case 21: {
      // The databases: a record's SELECT must follow the connection between
      // them, and FLUSHDB, SWAPDB and MOVE must replay into the right ones.
      std::string db = std::to_string(pick(4));
      switch (pick(11)) {
        case 0:
          return {"FLUSHDB"};
        case 1:
          return {"SWAPDB", db, std::to_string(pick(4))};
        case 2:
        case 3:
          return {"MOVE", key, db};
        case 8:
          return {pick(2) ? "RENAME" : "RENAMENX", key, "k" + std::to_string(pick(24))};
        case 9:
          return {"COPY", key, "k" + std::to_string(pick(24)), "DB", db};
        case 10:
          return {"COPY", key, "k" + std::to_string(pick(24)), "REPLACE"};
        default:
          return {"SELECT", db};
      }
    }
    case 23:
    case 24: {
      // Hashes: fields added, changed, counted and removed (the key goes
      // with its last field); a long value converts the listpack.
      std::string field = "f" + std::to_string(pick(6));
      switch (pick(8)) {
        case 0:
          return {"HSET", key, field, val, "f" + std::to_string(pick(6)), std::to_string(pick(9))};
        case 1:
          return {"HSETNX", key, field, val};
        case 2:
          return {"HINCRBY", key, field, std::to_string(pick(20) - 10)};
        case 3:
          return {"HINCRBYFLOAT", key, field, "1.5"};
        case 4:
          return {"HDEL", key, field, "f" + std::to_string(pick(6))};
        case 5:
          return {"HSET", key, field, std::string(70, 'x')};
        case 6:
          return {"HGETALL", key};
        default:
          return {"HMSET", key, field, val};
      }
    }
    case 25:
    case 26: {
      // Sets: intsets and hashtables, members popped and moved, the STORE
      // forms (DEL of the destination, then SADD, as one unit).
      std::string member = pick(2) ? std::to_string(pick(8)) : "m" + std::to_string(pick(4));
      std::string other = "k" + std::to_string(pick(24));
      switch (pick(10)) {
        case 0:
        case 1:
          return {"SADD", key, member, std::to_string(pick(8))};
        case 2:
          return {"SREM", key, member, std::to_string(pick(8))};
        case 3:
          return pick(2) ? std::vector<std::string>{"SPOP", key}
                         : std::vector<std::string>{"SPOP", key, std::to_string(pick(6))};
        case 4:
          return {"SMOVE", key, other, member};
        case 5:
          return {"SINTERSTORE", other, key, "k" + std::to_string(pick(24))};
        case 6:
          return {"SUNIONSTORE", other, key, "k" + std::to_string(pick(24))};
        case 7:
          return {"SDIFFSTORE", other, key, "k" + std::to_string(pick(24))};
        case 8:
          return {"SMEMBERS", key};
        default:
          return {"SADD", key, "m" + std::to_string(pick(4))};
      }
    }
    case 27:
    case 28:
    case 29: {
      // Sorted sets: every write of the family (its effects are ZADD, ZREM,
      // DEL), on keys that may hold strings too (WRONGTYPE changes nothing).
      static const char* kScores[] = {"1", "2.5", "-inf", "inf", "-0", "0.1", "3", "1e300"};
      auto score = [&] { return std::string(kScores[pick(8)]); };
      auto member = [&] {
        // Now and then one past zset-max-listpack-value: a skiplist.
        return pick(40) == 0 ? std::string(70, 'x') + std::to_string(pick(3))
                             : "m" + std::to_string(pick(12));
      };
      std::string other = "k" + std::to_string(pick(24));
      switch (pick(16)) {
        case 0:
          return {"ZADD", key, score(), member(), score(), member()};
        case 1: {
          static const char* kFlags[][2] = {{"NX", "CH"}, {"XX", "CH"},   {"GT", "CH"},
                                            {"LT", "XX"}, {"CH", "INCR"}, {"GT", "INCR"}};
          const auto* f = kFlags[pick(6)];
          return {"ZADD", key, f[0], f[1], score(), member()};
        }
        case 2:
          return {"ZINCRBY", key, score(), member()};
        case 3:
          return {"ZREM", key, member(), member()};
        case 4:
          return {"ZPOPMIN", key, std::to_string(pick(4))};
        case 5:
          return {"ZPOPMAX", key};
        case 6:
          return {"ZREMRANGEBYSCORE", key, "-inf", score()};
        case 7:
          return {"ZREMRANGEBYRANK", key, "0", std::to_string(pick(3) - 1)};
        case 8:
          return {"ZREMRANGEBYLEX", key, "[m3", "(m8"};
        case 9:
          return {"ZUNIONSTORE", "k" + std::to_string(pick(24)),
                  "2",           key,
                  other,         "WEIGHTS",
                  "2",           score(),
                  "AGGREGATE",   pick(2) ? "MIN" : "SUM"};
        case 10:
          return {"ZINTERSTORE", "k" + std::to_string(pick(24)), "2", key, other};
        case 11:
          return {"ZDIFFSTORE", "k" + std::to_string(pick(24)), "2", key, other};
        case 12:
          return {"ZRANGESTORE", "k" + std::to_string(pick(24)), key, "0", "-inf", "BYSCORE",
                  "REV"};
        case 13:
          return {"ZMPOP", "2", key, other, pick(2) ? "MIN" : "MAX", "COUNT", "2"};
        case 14:
          return {"ZADD", key, score(), member(), score(), member(), score(), member()};
        default:
          return {"ZRANGE", key, "0", "-1", "WITHSCORES"};
      }
    }
    case 30: {
      // Lists: every list record (a move is a pop and a push in one unit).
      std::string other = "k" + std::to_string(pick(24));
      const char* end = pick(2) ? "LEFT" : "RIGHT";
      switch (pick(12)) {
        case 0:
          return {"RPUSH", key, val, "v" + std::to_string(pick(5))};
        case 1:
          return {"LPUSH", key, val};
        case 2:
          return {pick(2) ? "LPOP" : "RPOP", key, std::to_string(pick(3))};
        case 3:
          return {"LSET", key, std::to_string(pick(6) - 3), val};
        case 4:
          return {"LINSERT", key, pick(2) ? "BEFORE" : "AFTER", "v" + std::to_string(pick(5)), val};
        case 5:
          return {"LREM", key, std::to_string(pick(5) - 2), val};
        case 6:
          return {"LTRIM", key, std::to_string(pick(5) - 2), std::to_string(pick(7) - 3)};
        case 7:
          return {"LMOVE", key, other, end, pick(2) ? "LEFT" : "RIGHT"};
        case 8:
          return {"RPOPLPUSH", key, key};
        case 9:
          return {"LMPOP", "2", key, other, end, "COUNT", std::to_string(1 + pick(3))};
        case 10:
          return {"LPUSHX", key, val};
        default:
          return {"RPUSHX", key, val};
      }
    }
    default:
      return {"PTTL", key};
  }
}

TEST(StoreTest, ReplayingTheLogRebuildsTheLiveKeyspace) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    TestServer ts;
    aof::Batch log;
    ts.server().store().set_log(&log);
    std::mt19937_64 rng(seed);
    for (int i = 0; i < 3000; ++i) {
      // Time passes, and now and then the wall clock steps (NTP, an operator).
      if (rng() % 4 == 0) ts.clock().Advance(static_cast<int64_t>(rng() % 300));
      if (rng() % 200 == 0) ts.clock().StepWall(static_cast<int64_t>(rng() % 7200000) - 3600000);
      if (rng() % 100 == 0) ts.server().store().ActiveExpireCycle(ts.clock().MonoMs(), 1000);
      if (rng() % 50 == 0) {
        // A transaction: its records are bracketed, replayed all together.
        ts.Run({"MULTI"});
        int n = 1 + static_cast<int>(rng() % 4);
        for (int j = 0; j < n; ++j) ts.Run(RandomCommand(rng, ts.clock().WallMs()));
        ts.Run({"EXEC"});
        continue;
      }
      ts.Run(RandomCommand(rng, ts.clock().WallMs()));
    }
    ts.server().store().set_log(nullptr);
    TimeSnapshot now = ts.server().Now();
    Store replayed(ts.clock().Id(), ts.server().store().databases());
    ASSERT_EQ(ReplayInto(log.bytes(), ts.clock().Id(), now, &replayed), "") << "seed " << seed;
    EXPECT_EQ(LiveKeys(replayed, now.mono), LiveKeys(ts.server().store(), now.mono))
        << "seed " << seed;
    // A rewrite's snapshot replays to the same keys too.
    aof::Batch snapshot;
    ASSERT_TRUE(ts.server().store().WriteSnapshot(
        snapshot, [] { return true; }, now));
    Store from_snapshot(ts.clock().Id(), ts.server().store().databases());
    ASSERT_EQ(ReplayInto(snapshot.bytes(), ts.clock().Id(), now, &from_snapshot), "");
    EXPECT_EQ(LiveKeys(from_snapshot, now.mono), LiveKeys(ts.server().store(), now.mono))
        << "seed " << seed;
  }
}

TEST(StoreTest, ARecordIsPrecededByTheSelectOfItsDatabase) {
  // As in Redis's AOF: a SELECT before the first record and wherever the
  // database changes, none between records of the same database. A
  // transaction's first SELECT goes before its MULTI (Redis 7 wraps the
  // MULTI in the first command's database), later ones inside it. FLUSHDB
  // and SWAPDB are logged as themselves; SWAPDB names both databases and
  // needs no SELECT.
  TestServer ts;
  aof::Batch log;
  ts.server().store().set_log(&log);
  auto req = [](std::vector<std::string> a) { return test::Req(a); };
  ts.Run({"SET", "a", "0"});
  ts.Run({"SET", "b", "0"});
  ts.Run({"SELECT", "2"});
  ts.Run({"GET", "a"});  // a read logs nothing, not even its SELECT
  EXPECT_EQ(log.bytes(), req({"SELECT", "0"}) + req({"SET", "a", "0"}) + req({"SET", "b", "0"}));
  log.Clear();
  ts.Run({"SET", "a", "2"});
  ts.Run({"FLUSHDB"});
  ts.Run({"SWAPDB", "0", "2"});
  ts.Run({"MULTI"});
  ts.Run({"SET", "c", "2"});
  ts.Run({"SELECT", "0"});
  ts.Run({"SET", "c", "0"});
  ts.Run({"EXEC"});
  ts.Run({"MOVE", "c", "5"});
  EXPECT_EQ(log.bytes(), req({"SELECT", "2"}) + req({"SET", "a", "2"}) + req({"FLUSHDB"}) +
                             req({"SWAPDB", "0", "2"}) + req({"MULTI"}) + req({"SET", "c", "2"}) +
                             req({"SELECT", "0"}) + req({"SET", "c", "0"}) + req({"EXEC"}) +
                             req({"SELECT", "5"}) + req({"MULTI"}) + req({"SET", "c", "0"}) +
                             req({"SELECT", "0"}) + req({"DEL", "c"}) + req({"EXEC"}));
}

TEST(StoreTest, ALeaseRenewedAfterItsFirstEndSurvivesAReplay) {
  // Found by the property test above: a lock renewed by PEXPIRE (the way
  // redis-semaphore, redis-py's Lock and redlock-universal extend) was lost
  // when the log was replayed after its first TTL: the SET's PXAT had
  // passed, the key was dropped, and the PEXPIREAT found nothing to extend.
  TestServer ts;
  aof::Batch log;
  ts.server().store().set_log(&log);
  ts.Run({"SET", "lock", "A", "PX", "1000"});
  ts.clock().Advance(800);
  ts.Run({"PEXPIRE", "lock", "60000"});
  ts.Run({"SET", "gone", "x", "PX", "1000"});
  ts.server().store().set_log(nullptr);
  ts.clock().Advance(5000);  // the restart: past the first TTL
  TimeSnapshot now = ts.server().Now();
  Store replayed(ts.clock().Id());
  ASSERT_EQ(ReplayInto(log.bytes(), ts.clock().Id(), now, &replayed), "");
  const Keyspace::Entry* e = replayed.Find("lock", now);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->value(), "A");
  EXPECT_EQ(e->deadline, now.mono - 5000 + 60000);
  EXPECT_EQ(replayed.Find("gone", now), nullptr);
}

TEST(StoreTest, ClockAnnotationPrecedesTheFirstTimeAndEachChange) {
  TestServer ts;
  aof::Batch log;
  ts.server().store().set_log(&log);
  ts.Run({"SET", "plain", "v"});
  EXPECT_EQ(log.bytes().find("#latch-clock"), std::string::npos);  // no time: no annotation
  ts.Run({"SET", "a", "v", "PX", "1000"});
  ts.Run({"SET", "b", "v", "PX", "1000"});
  auto count = [&] {
    size_t n = 0;
    for (size_t p = 0; (p = log.bytes().find("#latch-clock ", p)) != std::string::npos; ++p) ++n;
    return n;
  };
  EXPECT_EQ(count(), 1u);
  // The annotation names the clock and the relation in force.
  std::string expected = "#latch-clock " + ts.clock().Id() + " " +
                         std::to_string(ts.clock().MonoMs()) + " " +
                         std::to_string(ts.clock().WallMs()) + "\r\n";
  EXPECT_NE(log.bytes().find(expected), std::string::npos) << log.bytes();
  ts.clock().Advance(500);  // both clocks move together: same relation
  ts.Run({"PEXPIRE", "a", "1000"});
  EXPECT_EQ(count(), 1u);
  ts.clock().StepWall(60000);  // a step: a new relation, a new annotation
  ts.Run({"PEXPIRE", "b", "1000"});
  EXPECT_EQ(count(), 2u);
  ts.server().store().set_log(nullptr);
}

TEST(StoreTest, ReplayOnTheSameClockIgnoresAWallClockStepWhileDown) {
  TestServer ts;
  aof::Batch log;
  ts.server().store().set_log(&log);
  ts.Run({"SET", "lock", "A", "PX", "60000"});
  ts.server().store().set_log(nullptr);
  const int64_t deadline = ts.server().store().Find("lock", ts.server().Now())->deadline;
  for (int64_t step : {3'600'000, -3'600'000}) {
    // Ten seconds later, the wall clock an hour off.
    TimeSnapshot later{ts.clock().MonoMs() + 10'000, ts.clock().WallMs() + 10'000 + step};
    Store same(ts.clock().Id());
    ASSERT_EQ(ReplayInto(log.bytes(), ts.clock().Id(), later, &same), "");
    const Keyspace::Entry* e = same.Find("lock", later);
    ASSERT_NE(e, nullptr) << step;
    EXPECT_EQ(e->deadline, deadline) << step;
  }
  // On another clock only the wall clock relates the times: a forward step
  // while down looks like time passed (the lease policy quarantines such a
  // restart until the horizon, and clamps what replay gives, see below).
  TimeSnapshot elsewhere{500, ts.clock().WallMs() + 70'000};
  Store other("another-boot");
  ASSERT_EQ(ReplayInto(log.bytes(), "another-boot", elsewhere, &other), "");
  EXPECT_EQ(other.Find("lock", elsewhere), nullptr);
}

TEST(StoreTest, ForeignTimesAreClampedToTheBound) {
  TestServer ts;
  aof::Batch log;
  ts.server().store().set_log(&log);
  ts.Run({"SET", "lock", "A", "PX", "60000"});
  ts.server().store().set_log(nullptr);
  // Replayed on another clock whose wall clock went back an hour: the wall
  // clock would give the lease an extra hour; the bound keeps it.
  TimeSnapshot back{1000, ts.clock().WallMs() - 3'600'000};
  aof::Reader reader(log.bytes());
  ReplayClock clock;
  clock.clock_id = "another-boot";
  clock.now = back;
  clock.foreign_bound = back.mono + 65'000;
  Store other("another-boot");
  while (reader.Next() == aof::Reader::Status::kUnit) {
    for (const aof::Record& r : reader.records()) other.Replay(r, clock);
  }
  const Keyspace::Entry* e = other.Find("lock", back);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->deadline, back.mono + 65'000);
  EXPECT_EQ(clock.foreign_times, 1u);
}

TEST(StoreTest, TimesOnThePreviousRecordsClockAssumeNoTimePassed) {
  TestServer ts;
  aof::Batch log;
  ts.server().store().set_log(&log);
  ts.Run({"SET", "lock", "A", "PX", "60000"});
  ts.server().store().set_log(nullptr);
  const int64_t deadline = ts.server().store().Find("lock", ts.server().Now())->deadline;
  // After a reboot whose wall clock runs an hour ahead: the wall clock says
  // the lease is long over. It was written on the clock the previous state
  // record names, 20 s before that record: it ends no sooner than 40 s from
  // now (nothing is assumed to have passed since the record).
  TimeSnapshot rebooted{500, ts.clock().WallMs() + 3'600'000};
  const int64_t record_at = deadline - 40'000;  // the record's written-at, on the old clock
  aof::Reader reader(log.bytes());
  ReplayClock clock;
  clock.clock_id = "another-boot";
  clock.now = rebooted;
  clock.anchor_clock_id = ts.clock().Id();
  clock.anchor_written_at = record_at;
  clock.foreign_bound = rebooted.mono + 70'000;
  Store other("another-boot");
  while (reader.Next() == aof::Reader::Status::kUnit) {
    for (const aof::Record& r : reader.records()) other.Replay(r, clock);
  }
  const Keyspace::Entry* e = other.Find("lock", rebooted);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->deadline, rebooted.mono + 40'000);
  EXPECT_EQ(clock.foreign_times, 1u);
  EXPECT_EQ(clock.unanchored, 0u);
  // A time on a third clock is not anchored: the wall clock decides, and
  // the lease policy waits for the whole horizon.
  ReplayClock third = clock;
  third.anchor_clock_id = "yet-another-boot";
  third.foreign_times = 0;
  Store lost("another-boot");
  aof::Reader again(log.bytes());
  while (again.Next() == aof::Reader::Status::kUnit) {
    for (const aof::Record& r : again.records()) lost.Replay(r, third);
  }
  EXPECT_EQ(lost.Find("lock", rebooted), nullptr);
  EXPECT_EQ(third.unanchored, 1u);
}

TEST(StoreTest, ARewriteKeepsEveryKeysFencingToken) {
  TestServer ts;
  ts.Run({"SET", "a", "A", "NX", "PX", "60000", "FENCE"});
  ts.Run({"SET", "b", "B", "FENCE", "MIN", "1000"});
  ts.Run({"SET", "c", "C"});
  const TimeSnapshot now = ts.server().Now();
  aof::Batch snapshot;
  ASSERT_TRUE(ts.server().store().WriteSnapshot(
      snapshot, [] { return true; }, now));
  // Each fenced key's SET comes right after its annotation.
  EXPECT_NE(snapshot.bytes().find("#latch-fence 1000\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n"),
            std::string::npos)
      << snapshot.bytes();
  Store replayed(ts.clock().Id());
  ASSERT_EQ(ReplayInto(snapshot.bytes(), ts.clock().Id(), now, &replayed), "");
  EXPECT_EQ(LiveKeys(replayed, now.mono), LiveKeys(ts.server().store(), now.mono));
  EXPECT_EQ(replayed.Find("a", now)->token(), 1u);
  EXPECT_EQ(replayed.Find("b", now)->token(), 1000u);
  EXPECT_EQ(replayed.Find("c", now)->token(), 0u);
}

TEST(StoreTest, AFencedKeysRecordIsItsAnnotationThenItsSet) {
  TestServer ts;
  aof::Batch log;
  ts.server().store().set_log(&log);
  ts.Run({"SET", "lock", "A", "NX", "PX", "1000", "FENCE"});
  // Clock annotation, then fence annotation, then the SET: the reader
  // keeps the last two in one unit.
  const std::string& b = log.bytes();
  size_t clock = b.find("#latch-clock "), fence = b.find("#latch-fence 1\r\n*5\r\n$3\r\nSET");
  ASSERT_NE(clock, std::string::npos);
  ASSERT_NE(fence, std::string::npos);
  EXPECT_LT(clock, fence);
  log.Clear();
  // A renewal keeps the token and says so again; a new value drops it.
  ts.Run({"SET", "lock", "A", "IFEQ", "A", "PX", "1000"});
  EXPECT_EQ(log.bytes().find("#latch-fence 1\r\n"), 0u);
  log.Clear();
  ts.Run({"SET", "lock", "B", "XX"});
  EXPECT_EQ(log.bytes().find("#latch-fence"), std::string::npos);
  ts.server().store().set_log(nullptr);
}

TEST(StoreTest, WritesToAMissingKeyInThePastTouchWatchers) {
  // SET k v PXAT <past> on a missing key deletes nothing and logs nothing,
  // but Redis counts it as a write to k for WATCH.
  TestServer ts;
  std::vector<std::string> touched;
  ts.server().store().set_key_observer([&](int, std::string_view k) { touched.emplace_back(k); });
  EXPECT_EQ(ts.Run({"SET", "k", "v", "PXAT", "1"}), "+OK\r\n");
  EXPECT_EQ(touched, std::vector<std::string>{"k"});
  EXPECT_EQ(ts.server().store().changes(), 0u);
}

TEST(StoreTest, AnOverwrittenDestinationIsNotANewKey) {
  // The "new" keyspace event: a STORE form that replaces its destination
  // (DEL, then the result's records) overwrites it, as Redis's setKey does;
  // only a destination that did not exist is created.
  TestServer ts;
  std::vector<std::string> created;
  ts.server().store().set_new_key_observer(
      [&](int, std::string_view k) { created.emplace_back(k); });
  EXPECT_EQ(ts.Run({"SADD", "a", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}), ":10\r\n");
  EXPECT_EQ(ts.Run({"SUNIONSTORE", "dst", "a"}), ":10\r\n");
  EXPECT_EQ(ts.Run({"SUNIONSTORE", "dst", "a"}), ":10\r\n");
  // Most of the set: it is rebuilt from the member that stays.
  EXPECT_EQ(ts.Run({"SPOP", "a", "9"}).substr(0, 4), "*9\r\n");
  EXPECT_EQ(ts.Run({"SCARD", "a"}), ":1\r\n");
  EXPECT_EQ(ts.Run({"SET", "str", "v"}), "+OK\r\n");
  EXPECT_EQ(ts.Run({"ZUNIONSTORE", "str", "1", "a"}), ":1\r\n");
  EXPECT_EQ(ts.Run({"ZUNIONSTORE", "z", "1", "a"}), ":1\r\n");
  EXPECT_EQ(created, (std::vector<std::string>{"a", "dst", "str", "z"}));
}

}  // namespace
}  // namespace latch
