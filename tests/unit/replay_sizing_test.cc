// A replay sizes the keyspace's table once for the whole log (Keyspace::
// Reserve from the first part of the log), grows it in one pass when it
// must (bulk load), and does not leave a table too large behind when the
// estimate was high.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "log/record.h"
#include "server/config.h"
#include "server/keyspace.h"
#include "server/replay.h"
#include "server/store.h"

namespace latch {
namespace {

constexpr size_t kBucket = sizeof(void*);

TEST(ReplaySizing, ReserveSizesOnceAndBulkLoadKeepsIt) {
  Keyspace ks;
  ks.set_bulk_load(true);
  // An estimate of 1000 keys: a table of 1024 (the estimate less 1/16,
  // rounded up to a power of two), filled without growing.
  ks.Reserve(1000);
  EXPECT_EQ(ks.table_bytes(), 1024 * kBucket);
  for (int i = 0; i < 1000; ++i) ks.Set("k" + std::to_string(i), "v", kNoDeadline);
  EXPECT_EQ(ks.table_bytes(), 1024 * kBucket);
  // More keys than it holds: it grows (at once while loading), as usual.
  for (int i = 1000; i < 1100; ++i) ks.Set("k" + std::to_string(i), "v", kNoDeadline);
  EXPECT_EQ(ks.table_bytes(), 2048 * kBucket);
  EXPECT_EQ(ks.size(), 1100u);
  for (int i = 0; i < 1100; ++i) ASSERT_NE(ks.Peek("k" + std::to_string(i)), nullptr) << i;
}

TEST(ReplaySizing, AnEstimateTooHighShrinksAtOnceWhenTheLoadEnds) {
  Keyspace ks;
  ks.set_bulk_load(true);
  ks.Reserve(100000);
  for (int i = 0; i < 100; ++i) ks.Set("k" + std::to_string(i), "v", kNoDeadline);
  // Not while loading: the rest of the log may still bring the keys.
  EXPECT_EQ(ks.table_bytes(), 131072 * kBucket);
  // Then at once, not over the cron's ticks (the review measured 8,289
  // ticks, ~14 minutes, for a 64 MB table).
  ks.set_bulk_load(false);
  EXPECT_LE(ks.table_bytes(), 512 * kBucket);
  EXPECT_FALSE(ks.RehashStep(100));
  for (int i = 0; i < 100; ++i) ASSERT_NE(ks.Peek("k" + std::to_string(i)), nullptr) << i;
}

// Writes `log` to a file and replays it into `store` to the end, as the
// server does at start-up (Replay::Step until done).
void ReplaySizingReplay(const aof::Batch& log, Store* store) {
  char path[] = "/tmp/latch-replay-sizing-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, log.bytes().data(), log.bytes().size()),
            static_cast<ssize_t>(log.bytes().size()));
  ::close(fd);
  Config config;
  config.appendfilename = path;
  Replay replay(config, *store);
  ASSERT_FALSE(replay.Open().has_value());
  ReplayClock clock;
  clock.clock_id = "this-boot";
  Replay::State state;
  while ((state = replay.Step(clock, 1'000'000)) == Replay::State::kMore) {
  }
  ::unlink(path);
  ASSERT_EQ(state, Replay::State::kDone) << replay.error();
}

// The whole path: a log of distinct keys larger than the sample is
// replayed into a table of the size those keys need, with every key there,
// having rehashed only the keys of the sample (growing key by key would
// have moved 131,071 entries on the way to 131,072 buckets).
TEST(ReplaySizing, ReplayOfALogSizesTheTableForAllOfIt) {
  constexpr int kKeys = 100000;  // ~24 MB of log: the sample holds ~17,000 keys
  aof::Batch log;
  for (int i = 0; i < kKeys; ++i) log.Set("lock:" + std::to_string(i), std::string(200, 'v'), 0);
  ASSERT_GT(log.bytes().size(), 2 * Replay::kSizingSample);
  Store store("this-boot");
  ReplaySizingReplay(log, &store);
  if (HasFatalFailure()) return;
  EXPECT_EQ(store.keyspace().size(), static_cast<size_t>(kKeys));
  // 100,000 keys: 131,072 buckets, as growing key by key would also end.
  EXPECT_EQ(store.keyspace().table_bytes(), 131072 * kBucket);
  EXPECT_LT(store.keyspace().rehash_moves(), 131071u / 2);
}

// A log as a lock server writes it: its keys made once, then written over
// and over. The sample sees keys stop coming (or, here, the first pass is
// longer than the sample: the estimate is high), and the replay ends with
// the table its keys need, not the estimate's.
TEST(ReplaySizing, AChurnLogEndsWithTheTableItsKeysNeed) {
  constexpr int kKeys = 20000;  // ~4.6 MB a pass, twelve passes
  aof::Batch log;
  for (int round = 0; round < 12; ++round) {
    for (int i = 0; i < kKeys; ++i) {
      log.Set("lock:" + std::to_string(i), std::string(200, 'v'), 0);
    }
  }
  Store store("this-boot");
  ReplaySizingReplay(log, &store);
  if (HasFatalFailure()) return;
  ASSERT_EQ(store.keyspace().size(), static_cast<size_t>(kKeys));
  // Growing key by key: 32,768 buckets for 20,000 keys.
  EXPECT_EQ(store.keyspace().table_bytes(), 32768 * kBucket);
  EXPECT_FALSE(store.RehashStep(100));
}

}  // namespace
}  // namespace latch
