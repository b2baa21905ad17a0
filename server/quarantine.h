// Restart quarantine: the remedy for RedLock's "delayed restart" problem.
//
// RedLock counts a lock as held when a majority of nodes granted it. If a node
// crashes, forgets a lock it granted, and comes back at once, a second client
// can win a majority while the first still holds the lock. So after a restart
// that may have lost acknowledged locks, latch refuses to grant, re-grant or
// extend any lease until every lease it might have forgotten has expired.
// Reads and releases stay allowed: releasing is always safe.
//
// The decision (quarantine auto):
//  - no quarantine if the previous run shut down cleanly with appendonly yes
//    (everything was fsynced), or ran with appendfsync always from start to
//    end and its log replayed without loss (every acknowledged write was on
//    disk), or if the data directory never held a log nor a state record;
//  - otherwise (a crash under everysec or no, appendonly no, a missing or
//    damaged state record, a log that went missing) quarantine.
// `quarantine always` quarantines on every start, `never` never does.
//
// How long: every lease the previous run granted expires at most
// max-lock-ttl after it was granted (leases are capped, see SET and EXPIRE),
// so the quarantine lasts quarantine-ms (default: the larger of this run's and
// the previous run's max-lock-ttl), counted from the moment the log is
// loaded, on the monotonic clock. It is shortened by time provably elapsed
// since the previous run's last grant: the state record holds an upper bound
// on that instant in CLOCK_BOOTTIME, which is only comparable within the same
// boot (the record stores the boot id); after a reboot the time since boot is
// a lower bound of the elapsed time.
//
// The state record (latch.state in dir) is a small text file written with
// fsync and an atomic rename: the run's status (running / clean), appendonly,
// whether appendfsync was always throughout, the boot id, the lease bound,
// and the largest max-lock-ttl in force. It carries a checksum; a missing or
// damaged record means "unsafe".
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>

#include "server/bio.h"
#include "server/config.h"

namespace latch {

// The durable record of one run.
struct RunRecord {
  bool clean = false;         // the run ended with a clean shutdown
  bool appendonly = false;    // the run logged its writes
  bool fsync_always = false;  // appendfsync always from start to end
  std::string boot_id;        // /proc/sys/kernel/random/boot_id
  // No lease was granted at or after this CLOCK_BOOTTIME instant (ms) of
  // boot `boot_id`; nullopt: no lease that can still be alive. This is the
  // "time of the last write", kept as an upper bound.
  std::optional<int64_t> lease_bound_ms;
  int64_t max_lock_ttl_ms = 0;  // largest lease cap in force

  std::string Serialize() const;
  // nullopt if the text is damaged (bad syntax, missing field, bad checksum).
  static std::optional<RunRecord> Parse(const std::string& text);
};

class Quarantine {
 public:
  static constexpr const char* kStateFile = "latch.state";
  // Each time a grant reaches the recorded bound, the new bound is this far
  // ahead; the cron refreshes it in the background before it is reached.
  static constexpr int64_t kBoundAheadMs = 10'000;
  static constexpr int64_t kRefreshBeforeMs = 5'000;

  Quarantine(const Config& config, BackgroundIo& bio) : config_(config), bio_(bio) {}

  // Before loading: reads the previous run's record (and notes whether a log
  // file exists now).
  void ReadPrevious(bool log_exists);
  // Once the log is loaded: decides, writes this run's record, and starts the
  // quarantine clock if needed. `now` is monotonic ms.
  void Start(int64_t now);

  bool active(int64_t now) const { return active_ && now < end_ms_; }
  int64_t remaining_ms(int64_t now) const { return active(now) ? end_ms_ - now : 0; }
  const std::string& reason() const { return reason_; }
  // The -QUARANTINE error text for a refused command.
  std::string RefusalText(int64_t now) const;

  // Called before a command that may grant a lease runs: makes sure the
  // durable lease bound covers `now` (normally already true).
  void BeforeGrant(int64_t now) {
    granted_since_refresh_ = true;
    if (now >= durable_bound_.load(std::memory_order_acquire)) RefreshBoundNow(now);
  }

  // hz times a second: ends the quarantine when due, refreshes the bound.
  void Cron(int64_t now);
  // CONFIG SET of appendfsync, max-lock-ttl or quarantine.
  void OnConfigChange(int64_t now);
  // After the log was fsynced and closed at shutdown.
  void CleanShutdown();

 private:
  void WriteRecord(const RunRecord& r);  // synchronous: tmp + fsync + rename + dir fsync
  void RefreshBoundNow(int64_t now);
  void End(int64_t now, const char* why);
  RunRecord Current(bool clean, std::optional<int64_t> own_bound) const;

  const Config& config_;
  BackgroundIo& bio_;
  bool log_existed_ = false;
  bool state_existed_ = false;
  std::optional<RunRecord> previous_;
  std::string boot_id_;

  bool active_ = false;
  int64_t end_ms_ = 0;
  int64_t duration_ms_ = 0;
  std::string reason_ = "not quarantined";

  // This run's record.
  bool fsync_always_ = false;
  int64_t max_lock_ttl_seen_ = 0;
  // Leases of earlier runs that may still be alive, expressed as a bound in
  // this boot's clock (carried into this run's record, so a crash during the
  // quarantine does not shorten the next one).
  std::optional<int64_t> carried_bound_;
  std::atomic<int64_t> durable_bound_{INT64_MIN};  // this run's bound, as recorded on disk
  int64_t queued_bound_ = INT64_MIN;               // last bound queued for the background
  bool granted_since_refresh_ = false;
};

}  // namespace latch
