// The lease policy in-process: the decision table at start-up (one row per
// test), the horizon that every grant stays under, its cost (record writes
// per grant), and the refusal when the record cannot be written. Each test
// has a data directory of its own for latch.state. The integration tests
// (test_lock_safety.py, test_quarantine.py) check the same rules end to end.
#include "server/lease_policy.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "common/io_faults.h"
#include "server/keyspace.h"

namespace latch {
namespace {

class LeasePolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/latch-lease-policy-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    config_.appendonly = true;
    config_.appendfsync = FsyncPolicy::kEverysec;
  }
  void TearDown() override {
    IoFaults::ClearAll();
    policy_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::string State() const { return (dir_ / "latch.state").string(); }

  // A new run of the node: a new policy reading the previous record. The
  // log is "log-1", 100 bytes, synced (unless a test changes log_).
  LeasePolicy& Run(int64_t now, bool log_exists, const std::string& clock = "boot-a",
                   LeasePolicy::ReplayFacts facts = {}) {
    policy_.reset();
    policy_ = std::make_unique<LeasePolicy>(config_, bio_, clock, "DEL, DELIFEQ, DELEX", State());
    aof::LogIdentity found;
    if (log_exists) found = log_;
    policy_->Begin(now, found, written_);
    policy_->set_log_probe([this] { return LeasePolicy::LogState{log_.id, log_.size}; });
    policy_->Start(now, facts);
    return *policy_;
  }
  // A crash: the record stays as the last write left it.
  void Crash() {
    bio_.Drain();
    policy_.reset();
  }
  void Stop(int64_t now, bool log_clean = true) {
    policy_->Shutdown(now, log_clean);
    policy_.reset();
  }
  StateRecord Record() const {
    std::ifstream in(State());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto r = StateRecord::Parse(text);
    EXPECT_TRUE(r.has_value()) << text;
    return r.value_or(StateRecord{});
  }

  std::filesystem::path dir_;
  aof::LogIdentity log_{true, 100, "log-1"};
  // The written mark the previous process left (log/written_mark.h).
  std::optional<aof::WrittenMark::Seen> written_;
  Config config_;
  BackgroundIo bio_;
  std::unique_ptr<LeasePolicy> policy_;
};

TEST_F(LeasePolicyTest, AFreshDirectoryServesAtOnce) {
  config_.appendonly = false;  // even without a log
  LeasePolicy& p = Run(1000, false);
  EXPECT_FALSE(p.quarantined(1000));
  EXPECT_NE(p.reason().find("fresh data directory"), std::string::npos);
  EXPECT_EQ(p.Admit(1000 + 30000, 1000), std::nullopt);
  EXPECT_FALSE(Record().clean);  // "running" is on disk before any grant
}

TEST_F(LeasePolicyTest, ACleanStopWithALogDoesNotQuarantine) {
  Run(1000, false).Admit(1000 + 30000, 1000);
  Stop(2000);
  EXPECT_TRUE(Record().clean);
  EXPECT_FALSE(Run(3000, true).quarantined(3000));
}

TEST_F(LeasePolicyTest, ACrashUnderEverysecQuarantinesUntilTheHorizon) {
  ASSERT_EQ(Run(1000, false).Admit(1000 + 30000, 1000), std::nullopt);
  Crash();
  LeasePolicy& p = Run(2000, true);
  EXPECT_TRUE(p.quarantined(2000));
  // The lease granted at 1000 for 30 s may be alive until 31000; the
  // horizon adds at most its margin.
  EXPECT_GE(p.remaining_ms(2000), 31000 - 2000);
  EXPECT_LE(p.remaining_ms(2000), 31000 - 2000 + 10000);
  auto refusal = p.Admit(kNoDeadline, 2000);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->rfind("QUARANTINE ", 0), 0u) << *refusal;
  EXPECT_NE(refusal->find("DEL, DELIFEQ, DELEX"), std::string::npos) << *refusal;
  EXPECT_FALSE(p.quarantined(31000 + 10000));
}

TEST_F(LeasePolicyTest, ACrashUnderAlwaysThroughoutDoesNotQuarantine) {
  config_.appendfsync = FsyncPolicy::kAlways;
  Run(1000, false).Admit(1000 + 30000, 1000);
  Crash();
  EXPECT_FALSE(Run(2000, true).quarantined(2000));
  // …unless the policy was relaxed during the run.
  policy_->Admit(2000 + 30000, 2000);
  config_.appendfsync = FsyncPolicy::kEverysec;
  policy_->OnConfigChange(2000);
  config_.appendfsync = FsyncPolicy::kAlways;
  Crash();
  EXPECT_TRUE(Run(3000, true).quarantined(3000));
}

TEST_F(LeasePolicyTest, AQuarantineContinuesThroughACleanRestart) {
  Run(1000, false).Admit(1000 + 30000, 1000);
  Crash();
  int64_t end = 2000 + Run(2000, true).remaining_ms(2000);
  Stop(3000);
  LeasePolicy& p = Run(4000, true);
  EXPECT_TRUE(p.quarantined(4000));
  EXPECT_EQ(4000 + p.remaining_ms(4000), end);
}

TEST_F(LeasePolicyTest, AnotherClockAssumesNoTimePassed) {
  Run(1000, false).Admit(1000 + 30000, 1000);
  Stop(5000);  // clean, 26 s of the lease left
  // Another boot: its clock reads 200, and nothing says how long ago 5000 was.
  LeasePolicy& p = Run(200, true, "boot-b");
  EXPECT_TRUE(p.quarantined(200));
  EXPECT_GE(p.remaining_ms(200), 26000);
  EXPECT_NE(p.reason().find("another clock"), std::string::npos);
  EXPECT_GE(p.foreign_bound(), 200 + 26000);
}

TEST_F(LeasePolicyTest, AMissingOrDamagedRecordUsesTheFallback) {
  Run(1000, false);
  Stop(2000);
  std::filesystem::remove(State());
  config_.max_lock_ttl = 15000;
  LeasePolicy& p = Run(3000, true);
  EXPECT_TRUE(p.quarantined(3000));
  EXPECT_EQ(p.remaining_ms(3000), 15000);
  Stop(3000);
  {
    std::ofstream out(State());
    out << "latch-state 2\nstatus clean\n";  // no checksum: damaged
  }
  config_.max_lock_ttl = 0;  // and no bound at all: until an operator ends it
  LeasePolicy& q = Run(4000, true);
  EXPECT_TRUE(q.quarantined(4000 + 10'000'000));
  EXPECT_EQ(q.remaining_ms(4000), -1);
  config_.quarantine = QuarantineMode::kNever;
  q.OnConfigChange(4000);
  EXPECT_FALSE(q.quarantined(4000));
}

TEST_F(LeasePolicyTest, QuarantineNeverRecordsWhatAutoWouldWaitFor) {
  config_.quarantine = QuarantineMode::kNever;
  Run(1000, false).Admit(1000 + 30000, 1000);
  Crash();
  EXPECT_FALSE(Run(2000, true).quarantined(2000));
  Stop(2500);
  config_.quarantine = QuarantineMode::kAuto;
  EXPECT_TRUE(Run(3000, true).quarantined(3000));
}

TEST_F(LeasePolicyTest, WithACapAQuarantineNeverOutlastsIt) {
  config_.max_lock_ttl = 5000;
  Run(1000, false).Admit(1000 + 5000, 1000);
  Crash();
  LeasePolicy& p = Run(1500, true);
  EXPECT_TRUE(p.quarantined(1500));
  EXPECT_LE(p.remaining_ms(1500), 5000);
}

TEST_F(LeasePolicyTest, TheHorizonIsWrittenBeforeAnyGrantPassesItAndRarely) {
  LeasePolicy& p = Run(1000, false);
  uint64_t writes_at_start = p.horizon_writes_sync();
  // 10,000 grants of 30 s, 10 ms apart, with the cron running as the server
  // runs it (10 times a second): the background keeps the horizon ahead.
  int64_t now = 1000;
  for (int i = 0; i < 10000; ++i) {
    now += 10;
    ASSERT_EQ(p.Admit(now + 30000, now), std::nullopt);
    ASSERT_GE(p.durable_horizon().value_or(0), now + 30000);  // on disk before the grant
    if (i % 10 == 0) {
      p.Cron(now);
      bio_.Drain();
    }
  }
  EXPECT_LE(p.horizon_writes_sync() - writes_at_start, 2u);
  EXPECT_GE(p.horizon_writes_background(), 5u);
  EXPECT_LE(p.horizon_writes_background(), 60u);
  EXPECT_GE(Record().horizon.value_or(0), now + 30000);
}

TEST_F(LeasePolicyTest, ARecordThatCannotBeWrittenRefusesGrants) {
  LeasePolicy& p = Run(1000, false);
  ASSERT_EQ(p.Admit(1000 + 30000, 1000), std::nullopt);
  IoFaults::Arm(IoOp::kStateWrite, ENOSPC);
  // A grant past the recorded horizon needs a write: refused, and the
  // horizon on disk (and in memory) stays where it was.
  auto before = p.durable_horizon();
  auto refusal = p.Admit(1000 + 3'600'000, 1000);
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->rfind("MISCONF ", 0), 0u) << *refusal;
  EXPECT_EQ(p.durable_horizon(), before);
  EXPECT_FALSE(p.record_ok());
  // Every grant is refused until the record can be written again.
  EXPECT_TRUE(p.Admit(1000 + 1000, 1000).has_value());
  IoFaults::ClearAll();
  p.Cron(3000);  // the retry
  EXPECT_TRUE(p.record_ok());
  EXPECT_EQ(p.Admit(3000 + 3'600'000, 3000), std::nullopt);
}

TEST_F(LeasePolicyTest, AStartWhoseRecordCannotBeWrittenGrantsNothing) {
  Run(1000, false);
  Stop(2000);  // clean
  IoFaults::Arm(IoOp::kStateWrite, EIO);
  LeasePolicy& p = Run(3000, true);
  // The "running" record could not replace the clean one: a crash now would
  // be mistaken for a clean stop, so nothing may be granted.
  EXPECT_TRUE(Record().clean);
  EXPECT_TRUE(p.Admit(3000 + 1000, 3000).has_value());
  EXPECT_TRUE(p.Admit(kNoDeadline, 3000).has_value());
}

TEST_F(LeasePolicyTest, ALogThatIsNotThePreviousRunsIsNotTrusted) {
  config_.appendfsync = FsyncPolicy::kAlways;
  Run(1000, false).Admit(1000 + 30000, 1000);
  Stop(2000);
  // Repaired (cut shorter), restored from a copy (another id), or grown
  // after a clean stop: each may lack leases the previous run granted.
  for (aof::LogIdentity other :
       {aof::LogIdentity{true, 90, "log-1"}, aof::LogIdentity{true, 100, "log-0"},
        aof::LogIdentity{true, 101, "log-1"}, aof::LogIdentity{true, 100, ""}}) {
    aof::LogIdentity good = log_;
    log_ = other;
    LeasePolicy& p = Run(3000, true);
    EXPECT_TRUE(p.quarantined(3000)) << other.id << " " << other.size;
    EXPECT_NE(p.reason().find("not the one the previous run left"), std::string::npos);
    log_ = good;
    Stop(3000);
    // (The stop recorded the other log; put the good one back as "clean".)
    Run(3000, true);
    Stop(3000);
  }
}

TEST_F(LeasePolicyTest, ACutBelowWhatThePreviousRunSyncedQuarantines) {
  config_.appendfsync = FsyncPolicy::kAlways;
  Run(1000, false).Admit(1000 + 30000, 1000);
  Crash();  // the record says 100 bytes synced
  LeasePolicy::ReplayFacts cut;
  cut.cut_at = 80;
  EXPECT_TRUE(Run(2000, true, "boot-a", cut).quarantined(2000));
  Crash();
  cut.cut_at = 100;  // a torn tail past what was synced: not acknowledged
  EXPECT_FALSE(Run(3000, true, "boot-a", cut).quarantined(3000) &&
               policy_->reason().find("cut at") != std::string::npos);
}

TEST_F(LeasePolicyTest, ReplayedLeasesAreUnderTheNextHorizon) {
  Run(1000, false);
  Stop(1000);
  LeasePolicy::ReplayFacts facts;
  facts.max_deadline = 1000 + 600'000;  // a lease found in the log
  Run(2000, true, "boot-a", facts);
  Stop(2000);
  EXPECT_GE(Record().horizon.value_or(0), 1000 + 600'000);
}

TEST_F(LeasePolicyTest, HugeValuesSaturateInsteadOfWrapping) {
  config_.max_lock_ttl = INT64_MAX;
  config_.appendfsync = FsyncPolicy::kNo;
  Run(1000, false).Admit(1000 + 30000, 1000);
  Crash();
  EXPECT_TRUE(Run(2000, true).quarantined(2000));
  Crash();
  // An indefinite quarantine stays one on another clock, however long that
  // clock has been running.
  std::filesystem::remove(State());
  config_.max_lock_ttl = 0;
  Run(3000, true);  // until an operator ends it
  Stop(3000);
  LeasePolicy& p = Run(INT64_MAX / 2, true, "boot-b");
  EXPECT_TRUE(p.quarantined(INT64_MAX / 2 + 1'000'000'000));
}

TEST_F(LeasePolicyTest, QuarantineAlwaysWaitsForAKnownHorizonToo) {
  config_.quarantine = QuarantineMode::kAlways;
  config_.quarantine_ms = 1000;
  LeasePolicy& first = Run(1000, false);  // quarantined 1 s, as every start
  first.Cron(2500);
  ASSERT_EQ(first.Admit(2500 + 60'000, 2500), std::nullopt);
  Stop(3000);
  LeasePolicy& p = Run(4000, true);
  EXPECT_GE(p.remaining_ms(4000), 58'000);
}

TEST_F(LeasePolicyTest, AChangeThatCannotBeRecordedDoesNotHappen) {
  config_.appendfsync = FsyncPolicy::kAlways;
  LeasePolicy& p = Run(1000, false);
  IoFaults::Arm(IoOp::kStateWrite, EIO);
  config_.appendfsync = FsyncPolicy::kNo;
  EXPECT_FALSE(p.OnConfigChange(1000));
  EXPECT_TRUE(Record().fsync_always);
  IoFaults::ClearAll();
  EXPECT_TRUE(p.OnConfigChange(1000));
  EXPECT_FALSE(Record().fsync_always);
}

TEST_F(LeasePolicyTest, FencingTokensNeverRepeatOrGoBackAcrossRestarts) {
  uint64_t last = 0;
  int64_t now = 1000;
  for (int run = 0; run < 6; ++run) {
    LeasePolicy& p = Run(now, run > 0);
    for (int i = 0; i < 700; ++i) {
      auto t = p.IssueToken(now);
      ASSERT_TRUE(t.has_value());
      ASSERT_GT(*t, last);
      last = *t;
      if (i % 100 == 0) p.Cron(now);
    }
    // Every stop: clean, or a crash (right after a background reservation
    // was queued, every other time).
    if (run % 2 == 0) {
      Stop(now);
    } else {
      if (run % 4 == 1) p.Cron(now);
      Crash();
    }
    now += 100;
  }
  EXPECT_GE(Record().fence_reserved, last);
}

TEST_F(LeasePolicyTest, TokensAreReservedInBlocksAheadOfUse) {
  LeasePolicy& p = Run(1000, false);
  uint64_t writes = p.horizon_writes_sync();
  for (int i = 0; i < 20000; ++i) {
    ASSERT_TRUE(p.IssueToken(1000).has_value());
    if (i % 100 == 0) {
      p.Cron(1000);
      bio_.Drain();
    }
  }
  // One synchronous reservation at most; the background kept ahead.
  EXPECT_LE(p.horizon_writes_sync() - writes, 1u);
  EXPECT_GE(Record().fence_reserved, p.last_token());
}

TEST_F(LeasePolicyTest, FenceMinMovesTheCounterAndAFailedReservationRefuses) {
  LeasePolicy& p = Run(1000, false);
  EXPECT_EQ(p.IssueToken(1000), 1u);
  EXPECT_EQ(p.IssueToken(1000, 1'000'000), 1'000'000u);
  EXPECT_EQ(p.IssueToken(1000), 1'000'001u);
  EXPECT_EQ(p.IssueToken(1000, 5), 1'000'002u);  // a lower floor changes nothing
  EXPECT_GE(Record().fence_reserved, 1'000'002u);
  IoFaults::Arm(IoOp::kStateWrite, ENOSPC);
  EXPECT_FALSE(p.IssueToken(1000, 5'000'000).has_value());
  IoFaults::ClearAll();
  EXPECT_EQ(p.IssueToken(1000, 5'000'000), 5'000'000u);
}

// ---------------------------------------------------------------- issue 22

TEST_F(LeasePolicyTest, AProcessCrashThatLostNothingServesAtOnce) {
  ASSERT_EQ(Run(1000, false).Admit(1000 + 30000, 1000), std::nullopt);
  Crash();
  // The log holds every byte the dead process wrote: on the same boot,
  // every acknowledged write is in it, whatever the fsync policy.
  written_ = aof::WrittenMark::Seen{"log-1", 100};
  LeasePolicy& p = Run(2000, true);
  EXPECT_FALSE(p.quarantined(2000)) << p.reason();
  EXPECT_EQ(p.cause(), "a process crash that lost nothing");
  // A torn tail past the mark was never acknowledged: still nothing lost.
  Crash();
  LeasePolicy::ReplayFacts torn;
  torn.cut_at = 100;
  EXPECT_FALSE(Run(3000, true, "boot-a", torn).quarantined(3000));
}

TEST_F(LeasePolicyTest, ALogShorterThanWrittenWaitsForTheAtRiskHorizon) {
  ASSERT_EQ(Run(1000, false).Admit(1000 + 30000, 1000), std::nullopt);
  Crash();
  written_ = aof::WrittenMark::Seen{"log-1", 150};  // 50 bytes lost: a power loss
  LeasePolicy& p = Run(2000, true);
  EXPECT_TRUE(p.quarantined(2000));
  EXPECT_EQ(p.cause(), "a power loss or a cut log");
  EXPECT_GE(p.remaining_ms(2000), 31000 - 2000);
  EXPECT_LE(p.remaining_ms(2000), 31000 - 2000 + 10000);
  // A mark of another log (or none) says nothing: the same.
  Crash();
  written_ = aof::WrittenMark::Seen{"log-0", 100};
  EXPECT_TRUE(Run(3000, true).quarantined(3000));
  // The inherited log could not be synced at this start: the same.
  Crash();
  written_ = aof::WrittenMark::Seen{"log-1", 100};
  LeasePolicy::ReplayFacts unsynced;
  unsynced.log_synced = false;
  EXPECT_TRUE(Run(4000, true, "boot-a", unsynced).quarantined(4000));
  EXPECT_EQ(policy_->cause(), "the inherited log could not be synced");
}

TEST_F(LeasePolicyTest, ALogErrorMeansTheNextCrashQuarantines) {
  LeasePolicy& p = Run(1000, false);
  ASSERT_EQ(p.Admit(1000 + 30000, 1000), std::nullopt);
  p.OnLogError(1500);
  EXPECT_TRUE(Record().log_errors);
  Crash();
  written_ = aof::WrittenMark::Seen{"log-1", 100};
  LeasePolicy& q = Run(2000, true);
  EXPECT_TRUE(q.quarantined(2000));
  EXPECT_EQ(q.cause(), "a failed write or fsync of the log");
}

TEST_F(LeasePolicyTest, TheAtRiskBoundFallsOnceFsyncsCoverTheGrants) {
  LeasePolicy& p = Run(1000, false);
  // An hour-long lease, its record appended up to offset 500.
  ASSERT_EQ(p.Admit(1000 + 3'600'000, 1000), std::nullopt);
  p.OnLogAppended(500);
  EXPECT_GE(p.at_risk_horizon().value_or(0), 1000 + 3'600'000);
  // Not covered yet: the bound stays, whatever time passes.
  p.OnLogSynced(400);
  for (int64_t t = 2000; t <= 14000; t += 1000) p.Cron(t);
  bio_.Drain();
  EXPECT_GE(p.at_risk_horizon().value_or(0), 1000 + 3'600'000);
  EXPECT_GE(Record().at_risk.value_or(0), 1000 + 3'600'000);
  // Covered: once the hour is out of the recent window, the bound comes down
  // in the background; the horizon stays.
  p.OnLogSynced(500);
  for (int64_t t = 15000; t <= 27000; t += 1000) p.Cron(t);
  bio_.Drain();
  EXPECT_LT(p.at_risk_horizon().value_or(INT64_MAX), 27000 + 30'000);
  EXPECT_LT(Record().at_risk.value_or(INT64_MAX), 27000 + 30'000);
  EXPECT_GE(Record().horizon.value_or(0), 1000 + 3'600'000);
  // A power loss now waits seconds, not an hour.
  Crash();
  written_ = aof::WrittenMark::Seen{"log-1", 200};  // shorter than written
  LeasePolicy& q = Run(28000, true);
  EXPECT_LT(q.remaining_ms(28000), 30'000) << q.reason();
  // A grant above the lowered bound raises it first, synchronously.
  uint64_t writes = q.horizon_writes_sync();
  q.Cron(40000);  // (the quarantine ends)
  ASSERT_EQ(q.Admit(40000 + 600'000, 40000), std::nullopt);
  EXPECT_EQ(q.horizon_writes_sync(), writes + 1);
  EXPECT_GE(Record().at_risk.value_or(0), 40000 + 600'000);
}

TEST_F(LeasePolicyTest, NoLoweringAfterALogError) {
  LeasePolicy& p = Run(1000, false);
  ASSERT_EQ(p.Admit(1000 + 3'600'000, 1000), std::nullopt);
  p.OnLogAppended(500);
  p.OnLogError(1500);  // what the failed fsync covered may never reach the disk
  p.OnLogSynced(500);
  for (int64_t t = 2000; t <= 30000; t += 1000) p.Cron(t);
  bio_.Drain();
  EXPECT_GE(Record().at_risk.value_or(0), 1000 + 3'600'000);
}

TEST_F(LeasePolicyTest, AQuarantineRefusesOnlyWhatCouldHandOutForgottenState) {
  Run(1000, false).Admit(1000 + 30000, 1000);
  Crash();
  LeasePolicy& p = Run(2000, true);  // no mark: quarantined
  ASSERT_TRUE(p.quarantined(2000));
  auto refusal = p.Admit(2000 + 1000, 2000);
  ASSERT_TRUE(refusal.has_value());
  // Seconds left, the cause in a few words, and how it ends.
  EXPECT_EQ(refusal->rfind("QUARANTINE refused for another ", 0), 0u) << *refusal;
  EXPECT_NE(refusal->find(" s (a crash that may have lost writes)"), std::string::npos) << *refusal;
  EXPECT_NE(refusal->find("CONFIG SET quarantine never"), std::string::npos) << *refusal;
  // A blind write is served, and its lease still goes under the horizons.
  EXPECT_EQ(p.Admit(2000 + 90'000, 2000, /*blind=*/true), std::nullopt);
  EXPECT_GE(Record().at_risk.value_or(0), 2000 + 90'000);
  EXPECT_GE(Record().horizon.value_or(0), 2000 + 90'000);
}

TEST_F(LeasePolicyTest, AnotherClockWaitsForTheAtRiskBoundUnlessTimesAreUnanchored) {
  LeasePolicy& p = Run(1000, false);
  ASSERT_EQ(p.Admit(1000 + 3'600'000, 1000), std::nullopt);  // an hour, synced since
  p.OnLogAppended(500);
  p.OnLogSynced(500);
  for (int64_t t = 2000; t <= 14000; t += 1000) p.Cron(t);
  bio_.Drain();
  ASSERT_EQ(p.Admit(14000 + 5000, 14000), std::nullopt);  // 5 s, not synced
  Stop(14500);
  // A reboot: at-risk only (the hour-long lease is replayed and held).
  LeasePolicy& q = Run(100, true, "boot-b");
  EXPECT_TRUE(q.quarantined(100));
  EXPECT_LT(q.remaining_ms(100), 60'000);
  EXPECT_EQ(q.cause(), "a reboot or another clock");
  EXPECT_EQ(q.replay_anchor().clock_id, "boot-a");  // the previous record's clock
  EXPECT_EQ(q.replay_anchor().written_at, 14500);
  Stop(200);
  // Lease times in the log on a clock older than the record's: the horizon.
  LeasePolicy::ReplayFacts facts;
  facts.unanchored_times = 1;
  LeasePolicy& r = Run(100, true, "boot-c", facts);
  EXPECT_GT(r.remaining_ms(100), 3'000'000);
}

TEST(StateRecordTest, AVersion2RecordIsStillRead) {
  StateRecord r;
  r.clock_id = "boot-a";
  r.horizon = 5000;
  r.appendonly = true;
  r.log_id = "log-1";
  std::string v3 = r.Serialize();
  // The same record as version 2 wrote it: no at-risk, no log-errors.
  std::string body = v3.substr(0, v3.find("checksum "));
  body.replace(body.find("latch-state 3"), 13, "latch-state 2");
  body.erase(body.find("at-risk "),
             body.find('\n', body.find("at-risk ")) - body.find("at-risk ") + 1);
  body.erase(body.find("log-errors "),
             body.find('\n', body.find("log-errors ")) - body.find("log-errors ") + 1);
  char sum[17];
  std::snprintf(sum, sizeof(sum), "%016llx",
                static_cast<unsigned long long>(XXH64(body.data(), body.size(), 0)));
  auto v2 = StateRecord::Parse(body + "checksum " + sum + "\n");
  ASSERT_TRUE(v2.has_value()) << body;
  EXPECT_EQ(v2->at_risk, std::optional<int64_t>(5000));  // the horizon stands for it
  EXPECT_TRUE(v2->log_errors);                           // not fsync-always: assumed
  auto back = StateRecord::Parse(v3);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->at_risk, std::nullopt);
  EXPECT_FALSE(back->log_errors);
}

TEST(AtRiskTest, TheRecordedBoundIsTheLeastOfWhatMayLand) {
  RecordedBound b;
  b.Wrote(50'000, true);
  EXPECT_EQ(b.Bound(), 50'000);
  // A lowering queued: grants are admitted under it at once.
  uint64_t low = b.Queue(20'000);
  EXPECT_EQ(b.Bound(), 20'000);
  // A raise queued after it counts only once it landed.
  uint64_t high = b.Queue(90'000);
  EXPECT_EQ(b.Bound(), 20'000);
  b.Done(low, true);
  EXPECT_EQ(b.Bound(), 20'000);
  b.Done(high, false);  // failed: the disk keeps the lowering
  EXPECT_EQ(b.Bound(), 20'000);
  uint64_t again = b.Queue(90'000);
  b.Done(again, true);
  EXPECT_EQ(b.Bound(), 90'000);
  UncoveredGrants u;
  u.Add(100);
  u.Appended(10);
  u.Add(300);
  u.Appended(20);
  EXPECT_EQ(u.Max(), 300);
  u.Synced(15);
  EXPECT_EQ(u.Max(), 300);
  u.Add(200);
  u.Synced(20);
  EXPECT_EQ(u.Max(), 200);  // still open: its record follows
  u.Appended(30);
  u.Synced(30);
  EXPECT_EQ(u.Max(), INT64_MIN);
}

}  // namespace
}  // namespace latch
