// The log library (log/): records, the reader's units and safe offsets, and
// the writer's contract (what a reply may report, the rewrite never
// splitting a transaction). tests/fuzz/fuzz_aof.cc checks the reader
// against a model on arbitrary bytes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "log/bio.h"
#include "log/reader.h"
#include "log/record.h"
#include "log/writer.h"

namespace latch::aof {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every unit of a log as "op key" strings, one vector per unit.
std::vector<std::vector<std::string>> Units(std::string_view bytes, Reader::Status* end) {
  Reader r(bytes);
  std::vector<std::vector<std::string>> out;
  Reader::Status st;
  while ((st = r.Next()) == Reader::Status::kUnit) {
    std::vector<std::string> unit;
    for (const Record& rec : r.records()) {
      unit.push_back(std::to_string(static_cast<int>(rec.op)) + " " + std::string(rec.key));
    }
    out.push_back(unit);
  }
  *end = st;
  return out;
}

TEST(LogRecordTest, BatchEncodesWhatDecodeReads) {
  Batch b;
  b.Set("k", "v", 0);
  b.Set("lock", "tok", 1'700'000'000'123);
  b.Del("gone");
  b.PExpireAt("k", 1'800'000'000'000);
  b.Persist("k");
  b.Clock(ClockMark{"boot-1+0.0", 42, 1'700'000'000'042});
  b.FlushAll();
  Reader r(b.bytes());
  std::vector<Record> all;
  while (r.Next() == Reader::Status::kUnit) {
    for (const Record& rec : r.records()) all.push_back(rec);
  }
  ASSERT_EQ(all.size(), 7u);
  EXPECT_EQ(all[0].op, Op::kSet);
  EXPECT_EQ(all[0].unix_ms, 0);
  EXPECT_EQ(all[1].value, "tok");
  EXPECT_EQ(all[1].unix_ms, 1'700'000'000'123);
  EXPECT_EQ(all[2].op, Op::kDel);
  EXPECT_EQ(all[3].op, Op::kPExpireAt);
  EXPECT_EQ(all[4].op, Op::kPersist);
  EXPECT_EQ(all[5].op, Op::kClock);
  EXPECT_EQ(all[5].clock.clock_id, "boot-1+0.0");
  EXPECT_EQ(all[5].clock.offset(), 1'700'000'000'000);
  EXPECT_EQ(all[6].op, Op::kFlushAll);
  EXPECT_EQ(r.safe_offset(), b.size());
}

TEST(LogReaderTest, ATransactionIsOneUnitAndACutOneIsDroppedWhole) {
  Batch b;
  b.Set("a", "1", 0);
  b.Multi();
  b.Set("b", "2", 0);
  b.Del("a");
  b.Exec();
  const size_t whole = b.size();
  b.Multi();
  b.Set("c", "3", 0);
  Reader::Status end;
  auto units = Units(b.bytes(), &end);
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[1].size(), 2u);  // SET b, DEL a, together
  EXPECT_EQ(end, Reader::Status::kTruncated);
  Reader r(b.bytes());
  while (r.Next() == Reader::Status::kUnit) {
  }
  EXPECT_EQ(r.safe_offset(), whole);  // the cut goes before the open MULTI
  EXPECT_EQ(r.tail_bytes(), b.size() - whole);
}

TEST(LogReaderTest, MultiAndExecOutOfPlaceAreCorruptionAtTheirOffset) {
  Batch b;
  b.Set("a", "1", 0);
  const size_t at = b.size();
  b.Exec();  // EXEC without MULTI
  Reader r(b.bytes());
  EXPECT_EQ(r.Next(), Reader::Status::kUnit);
  EXPECT_EQ(r.Next(), Reader::Status::kCorrupt);
  EXPECT_EQ(r.error(), "EXEC without MULTI");
  EXPECT_EQ(r.safe_offset(), at);
  // Lower case is the same command, for the server, the checker and Redis.
  std::string lower =
      "*1\r\n$5\r\nmulti\r\n*3\r\n$3\r\nset\r\n$1\r\nx\r\n$1\r\ny\r\n*1\r\n$4\r\nexec\r\n";
  Reader::Status end;
  EXPECT_EQ(Units(lower, &end).size(), 1u);
  EXPECT_EQ(end, Reader::Status::kEnd);
}

TEST(LogReaderTest, OtherAnnotationsAreSkippedAndADamagedClockIsCorrupt) {
  std::string log = "#TS:1700000000\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n";
  Reader::Status end;
  EXPECT_EQ(Units(log, &end).size(), 1u);
  EXPECT_EQ(end, Reader::Status::kEnd);
  Reader r("#latch-clock boot 12x 5\r\n");
  EXPECT_EQ(r.Next(), Reader::Status::kCorrupt);
  EXPECT_EQ(r.safe_offset(), 0u);
}

TEST(LogReaderTest, AFenceAnnotationAndItsSetAreOneUnit) {
  Batch b;
  b.Set("a", "1", 0);
  const size_t before = b.size();
  b.Fence(7);
  b.Set("lock", "tok", 1'700'000'030'000);
  const size_t whole = b.size();
  Reader::Status end;
  auto units = Units(b.bytes(), &end);
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[1],
            (std::vector<std::string>{std::to_string(static_cast<int>(Op::kFence)) + " ",
                                      std::to_string(static_cast<int>(Op::kSet)) + " lock"}));
  EXPECT_EQ(end, Reader::Status::kEnd);
  Reader whole_reader(b.bytes());
  EXPECT_EQ(whole_reader.Next(), Reader::Status::kUnit);
  EXPECT_EQ(whole_reader.Next(), Reader::Status::kUnit);
  EXPECT_EQ(whole_reader.records()[0].token, 7u);
  EXPECT_EQ(whole_reader.safe_offset(), whole);
  // A tail torn between the two cuts both: the token must not be left for
  // the next SET a later run appends.
  std::string torn = b.bytes().substr(0, before) + "#latch-fence 7\r\n*3\r\n$3\r\nSET\r\n";
  Reader r(torn);
  EXPECT_EQ(r.Next(), Reader::Status::kUnit);
  EXPECT_EQ(r.Next(), Reader::Status::kTruncated);
  EXPECT_EQ(r.safe_offset(), before);
  const std::string annotation_only = b.bytes().substr(0, before) + "#latch-fence 7\r\n";
  Reader r2(annotation_only);
  EXPECT_EQ(r2.Next(), Reader::Status::kUnit);
  EXPECT_EQ(r2.Next(), Reader::Status::kTruncated);
  EXPECT_EQ(r2.safe_offset(), before);
  // Inside a transaction too; and a fence followed by anything but SET is
  // damage.
  Batch t;
  t.Multi();
  t.Fence(8);
  t.Set("k", "v", 0);
  t.Exec();
  EXPECT_EQ(Units(t.bytes(), &end).size(), 1u);
  EXPECT_EQ(end, Reader::Status::kEnd);
  Batch bad;
  bad.Fence(9);
  bad.Del("k");
  Reader r3(bad.bytes());
  EXPECT_EQ(r3.Next(), Reader::Status::kCorrupt);
  EXPECT_EQ(r3.error(), "a fence annotation not followed by SET");
  EXPECT_EQ(r3.safe_offset(), 0u);
}

class LogWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/latch-log-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = (dir_ / "latch.aof").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string path_;
  BackgroundIo bio_;
};

TEST_F(LogWriterTest, WhatARepliesMayReportDependsOnThePolicy) {
  Writer w(path_, SyncPolicy::kEverysec, bio_);
  ASSERT_EQ(w.Open(), std::nullopt);
  w.batch().Set("k", "v", 0);
  uint64_t end = w.appended_end();
  EXPECT_LT(w.durable_end(), end);  // not written yet: a reply must wait
  w.Flush(1000);
  EXPECT_EQ(w.durable_end(), end);  // written: a process crash loses nothing
  // A new file starts with its id, then the records.
  EXPECT_EQ(ReadFile(path_),
            "#latch-log " + w.log_id() + "\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n");
  EXPECT_EQ(ReadLogIdentity(path_).id, w.log_id());
  EXPECT_EQ(w.log_id().size(), 16u);
  w.set_policy(SyncPolicy::kAlways);
  w.batch().Set("k2", "v", 0);
  w.Flush(2000);
  EXPECT_EQ(w.durable_end(), w.appended_end());  // written and fsynced
  EXPECT_TRUE(w.Shutdown());
}

TEST_F(LogWriterTest, ARewriteRequestedInsideATransactionWaitsForItsEnd) {
  Writer w(path_, SyncPolicy::kAlways, bio_);
  ASSERT_EQ(w.Open(), std::nullopt);
  w.batch().Set("before", "1", 0);
  w.Flush(1000);
  // MULTI; SET a; BGREWRITEAOF; SET lock; EXEC: the rewrite must not start
  // between the two SETs.
  w.batch().Multi();
  w.batch().Set("a", "1", 0);
  bool snapshot_ran = false;
  auto snapshot = [&](Batch& out, const std::function<bool()>& drain) {
    snapshot_ran = true;  // (in the child: the parent never sees it)
    out.Set("before", "1", 0);
    out.Set("a", "1", 0);
    out.Set("lock", "A", 0);
    return drain();
  };
  ASSERT_EQ(w.Rewrite(snapshot, 1000), std::nullopt);
  EXPECT_TRUE(w.rewrite_scheduled());
  EXPECT_FALSE(w.rewrite_in_progress());
  w.batch().Set("lock", "A", 0);
  w.batch().Exec();
  w.Flush(1000);
  w.Cron(1100);  // the transaction is over: the rewrite starts now
  EXPECT_TRUE(w.rewrite_in_progress());
  w.batch().Set("after", "2", 0);
  w.Flush(1200);
  for (int i = 0; i < 500 && w.rewrite_in_progress(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    w.Cron(1300);
  }
  ASSERT_FALSE(w.rewrite_in_progress());
  EXPECT_TRUE(w.last_rewrite_ok());
  EXPECT_FALSE(snapshot_ran);
  // The new log reads back whole: the snapshot, then what came after.
  Reader::Status end;
  auto units = Units(ReadFile(path_), &end);
  EXPECT_EQ(end, Reader::Status::kEnd);
  ASSERT_EQ(units.size(), 4u);
  EXPECT_EQ(units[3][0], "0 after");
  EXPECT_TRUE(w.Shutdown());
}

}  // namespace
}  // namespace latch::aof
