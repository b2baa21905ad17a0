// The lease policy: every rule about when latch may grant a lock, in one
// place. The grant operation (grant.h) asks it before any write that would
// grant, re-grant or extend a lease, and is the only one that does; the
// server drives its life (start-up, cron, configuration changes, the log's
// events, shutdown).
//
// Why. RedLock counts a lock as held when a majority of nodes granted it. A
// node that crashes, forgets a lock it granted and comes back at once lets a
// second client win a majority while the first still holds the lock. So
// after a restart that may have lost leases, the node grants nothing
// that could rest on one of them (restart quarantine) until every lease it
// may have forgotten has ended.
//
// The horizon. To know when that is, the node durably records, *before* any
// grant that would pass it, an upper bound of the end of every lease it has
// granted: the lease horizon, on the boot clock (latch.state, see
// state_record.h). A grant whose deadline is beyond the recorded horizon
// first moves the horizon forward, synchronously; to keep that rare, the
// horizon is moved ahead of the grants in the background (by about the
// longest TTL granted lately, plus a margin), so in the common case the loop
// never waits on a disk write. If the record cannot be written, grants are
// refused (like MISCONF) until it can; the in-memory horizon never runs
// ahead of the disk.
//
// The at-risk horizon. A lease can be forgotten only if its grant's log
// record is lost, and a record that a completed fsync covered is not lost
// by a machine crash: only a damaged, replaced or missing log loses it. So
// the record also keeps a second, lower bound: the latest lease end among
// grants whose records no completed fsync has covered yet (at-risk, <= the
// horizon). It is raised with the horizon before a grant passes it, and
// lowered in the background once the log's fsyncs cover the grants (to
// about now + the longest recent TTL + the margin, never below a grant still
// uncovered). After a power loss the node waits for the at-risk bound, not
// for every lease it ever granted: an hour-long lease that reached the disk
// long ago no longer lengthens the quarantine; it is replayed and held.
// After a failed write or fsync of the log, the at-risk bound is no longer
// lowered in this run (what the failed fsync covered may never reach the
// disk).
//
// The decision at start-up (mode auto). "Lost" means the previous run may
// have acknowledged leases this run does not have:
//
//   previous run                                        restart
//   --------------------------------------------------  -----------------------------
//   none: a directory latch never used                  serves at once (*)
//   clean SHUTDOWN/SIGTERM, appendonly yes, same clock  no quarantine
//   crash, appendfsync always throughout, same clock    no quarantine (log replayed)
//   crash (kill -9, OOM, abort) on the same clock, any  no quarantine: every reply
//     fsync policy, no log error, the log the record      waited for write(), so the
//     names and at least as long as the crashed run       page cache kept every
//     wrote (its written mark, log/written_mark.h)        acknowledged write (**)
//   the same, but the log is shorter than was written   quarantine until at-risk
//     (a power loss simulated, or a cut), or no mark
//   a write or fsync of the log failed in that run      quarantine until at-risk
//   another clock (reboot, power loss, other host or    quarantine until at-risk
//     time namespace), the log trusted                    (replayed leases held as
//                                                         if no time had passed)
//   the log cut below what the previous run synced,     quarantine until the horizon
//     not the one it names (repaired, restored), gone
//   appendonly no (previous or this run)                quarantine until the horizon
//   state record missing (log present) or damaged       quarantine-ms, else max-lock-ttl,
//                                                       else until an operator ends it
//   a quarantine was in progress                        it continues, whatever the stop
//
// (*) storage that can vanish looks exactly like a new directory: run such
// nodes with `quarantine always`, which quarantines every start for
// quarantine-ms (or max-lock-ttl), and until the horizon when one is known.
// `quarantine never` never refuses, but still records everything, so a later
// run in auto mode stays safe.
// (**) the start then fsyncs the inherited log before its first grant, so a
// later power loss cannot take what the crashed run acknowledged.
//
// What a quarantine refuses. Not every write: only one whose reply could
// hand out state the node may have forgotten. A client that is told "you
// have the lock" because the key looked free is the danger, so the
// quarantine refuses every write whose reply depends on what the key held —
// a conditional acquisition (SET NX/XX/IFEQ…, SETNX, MSETNX, MOVE), a write
// that answers the old value or a count (GETSET, SET … GET, INCR and the
// counters a semaphore reads, APPEND, SETRANGE), a renewal or extension
// (PEXPIRE, GETEX, PERSIST, SET … KEEPTTL counts as blind), a fenced grant
// (a renewal keeps the holder's token) — and every lease write queued in a
// MULTI or run by a script: a transaction or script may have read the key
// first (WATCH, GET) and write only because it looked free. A blind write
// sent on its own — SET without NX/XX/IF*/GET/FENCE (KEEPTTL included),
// SETEX, PSETEX, MSET —
// answers OK whatever the key held, exactly as it would have before the
// crash: it tells its client nothing forgotten, so it is served (its lease
// still goes under the horizons). Reads and releases are always served.
//
// Clocks. Times in the record are on the boot clock of the run that wrote
// it. On the same clock they compare directly. On another clock nothing is
// assumed to have elapsed since the record was written (time may have been
// frozen, or the machine replaced): a bound B becomes now + (B − written_at),
// and so does a replayed lease whose log time is on the recorded clock (a
// time on a third clock, or a log without clock annotations, is converted
// with the wall clock, and the start then waits for the whole horizon).
// With max-lock-ttl set, a lost lease ends at most max-lock-ttl after the
// crash, so on the same clock a quarantine never exceeds it.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include <functional>

#include "log/bio.h"
#include "log/record.h"
#include "log/written_mark.h"
#include "server/at_risk.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/state_record.h"

namespace latch {

class LeasePolicy {
 public:
  static constexpr const char* kStateFile = "latch.state";

  // `releases` names the write commands that never grant (for the refusal
  // text): "DEL, DELIFEQ, DELEX…". The record is `state_path` (the server
  // runs inside its data directory).
  LeasePolicy(const Config& config, BackgroundIo& bio, std::string clock_id, std::string releases,
              std::string state_path = kStateFile);

  // For an in-process server without a data directory (unit tests): no
  // record is read or written, nothing is quarantined, every grant admitted
  // unless the config's cap refuses it.
  void StartEphemeral();

  // ---- start-up (quarantine.cc)
  // Before the log is loaded: reads the previous record, and what is known
  // of the log file (`now` is boot-clock ms) and of how much of it the
  // previous process wrote (its written mark, if any).
  void Begin(int64_t now, const aof::LogIdentity& log,
             std::optional<aof::WrittenMark::Seen> written = std::nullopt);
  // How the replay converts log times written on another clock
  // (ReplayClock): the previous record's clock and when it was written
  // (nothing is assumed to have elapsed since), and the deadline no
  // replayed lease may pass (0: none).
  struct ReplayAnchor {
    std::string clock_id;
    int64_t written_at = 0;
    int64_t bound = 0;
  };
  ReplayAnchor replay_anchor() const;
  int64_t foreign_bound() const { return foreign_bound_; }
  // The previous run stopped cleanly with this very log fully synced: the
  // log cannot end in a torn record, so one means damage, not a crash.
  bool tail_must_be_complete() const;
  // What the replay found.
  struct ReplayFacts {
    int64_t max_deadline = INT64_MIN;  // the latest lease deadline replayed
    int64_t cut_at = -1;               // where a torn tail was cut off (-1: none)
    // Log times on a clock neither this run's nor the previous record's
    // (converted with the wall clock).
    uint64_t unanchored_times = 0;
    // The inherited log was fsynced before the decision (false: the fsync
    // failed, so what the previous run wrote may still be lost).
    bool log_synced = true;
  };
  // Once the log is loaded: decides, writes this run's "running" record
  // (before any grant) and starts the quarantine clock.
  void Start(int64_t now, const ReplayFacts& replay);
  // Which log the records vouch for, and how much of it is on disk: asked at
  // every record write (the server sets it once the log is open).
  struct LogState {
    std::string id;
    uint64_t synced = 0;
  };
  void set_log_probe(std::function<LogState()> probe) { log_probe_ = std::move(probe); }
  // Told when a grant refused "for now" may succeed again: the quarantine
  // ended, or the state record can be written again (lock waiters retry).
  void set_on_resume(std::function<void()> f) { on_resume_ = std::move(f); }

  // ---- admission (the grant operation)
  // A write that grants, re-grants or extends a lease ending at `deadline`
  // (kNoDeadline: a key without a lease). `blind`: the write was sent on
  // its own and its reply does not depend on what the key held (see "What a
  // quarantine refuses" above): the quarantine lets it through. Returns the
  // refusal text, or nothing when the grant may go ahead.
  std::optional<std::string> Admit(int64_t deadline, int64_t now, bool blind = false);
  // max-lock-ttl: the error for a TTL over the cap, or nothing.
  std::optional<std::string> CheckTtl(int64_t ttl_ms) const;

  // ---- fencing tokens (SET … FENCE)
  // The token for a grant made now: strictly greater than every token this
  // node ever issued, also across restarts, rewrites, FLUSHALL and a log that
  // lost its tail — tokens are reserved in the state record, durably, ahead
  // of use (in blocks, moved forward in the background like the horizon), and
  // a new run starts above the last reservation. With `min` (FENCE MIN), the
  // token is at least `min` and the counter jumps there. nullopt when the
  // reservation cannot be recorded: the grant is refused.
  std::optional<uint64_t> IssueToken(int64_t now, uint64_t min = 0);
  // The largest token (a RESP integer). Reservations stop there, so the state
  // record always holds a number the next run can read; a counter that got
  // there (FENCE MIN 9223372036854775807, say) is exhausted for good and
  // every fenced grant is refused, never answered with a smaller token.
  static constexpr uint64_t kLastToken = INT64_MAX;
  // Why IssueToken gave nothing: the record could not be written (MISCONF,
  // for now) or the counter is exhausted (for good: exhausted() is true).
  std::string TokenRefusal() const;
  bool exhausted(uint64_t min) const { return std::max(next_token_, min) > kLastToken; }
  // The refusal of a grant while the state record cannot be written
  // (MISCONF …): Admit's, and what SET … FENCE replies when IssueToken
  // cannot reserve.
  std::string RecordRefusal() const;
  // The last token issued (0: none yet in this run's range).
  uint64_t last_token() const { return next_token_ - 1; }

  // ---- running
  // hz times a second: ends the quarantine when due, moves the horizons in
  // the background (ahead of the grants; the at-risk one back once fsyncs
  // covered them), retries a failed record.
  void Cron(int64_t now);
  // The log's events. Appended: every record of the grants admitted so far
  // is in the log before logical offset `end` (the writer's appended_end(),
  // after its write). Synced: a completed fsync covers the log up to `end`
  // (the writer's synced_end()).
  void OnLogAppended(uint64_t end) { uncovered_.Appended(end); }
  void OnLogSynced(uint64_t end) { uncovered_.Synced(end); }
  // A change of appendfsync, max-lock-ttl or quarantine (the config
  // registry's hook), recorded before it takes effect. False when the record
  // could not be written: the change must not happen (CONFIG SET fails).
  bool OnConfigChange(int64_t now);
  // The log reported a failed write or fsync: this run is no longer "always
  // throughout", nor free of log errors, whatever appendfsync says.
  void OnLogError(int64_t now);
  // The log file changed (a rewrite): record its new id.
  void OnLogChanged(int64_t now);
  // At exit. `log_clean`: every acknowledged write is in the log and synced.
  void Shutdown(int64_t now, bool log_clean);

  // The boot clock was warped (FAULT CLOCK, server/faults.h): records
  // written from now on name `id`, which no later run shares, so the next
  // start treats this run's times as another clock's (quarantine until the
  // horizon, nothing assumed elapsed).
  void set_clock_id(std::string id) { clock_id_ = std::move(id); }

  // ---- status (INFO latch, the start log, the refusal)
  bool quarantined(int64_t now) const;
  int64_t remaining_ms(int64_t now) const;
  // Why this start quarantines or not: in a sentence, and in a few words.
  const std::string& reason() const { return reason_; }
  const std::string& cause() const { return cause_; }
  // How an operator ends a quarantine early.
  static constexpr const char* kHowToEnd = "CONFIG SET quarantine never";
  bool record_ok() const { return state_errno_.load() == 0 && started_; }
  std::string record_error() const;
  std::optional<int64_t> durable_horizon() const;
  // The at-risk bound grants are admitted under (nullopt: none).
  std::optional<int64_t> at_risk_horizon();
  uint64_t horizon_writes_sync() const { return sync_writes_; }
  uint64_t horizon_writes_background() const { return bg_writes_.load(); }

 private:
  // The record to write now: with this at-risk bound, the horizon raised to
  // `raise` (and never below the at-risk bound), a token reservation.
  StateRecord Current(bool clean, int64_t now, int64_t at_risk, std::optional<int64_t> raise,
                      uint64_t fence_reserved = 0) const;
  // Synchronous write of the current record, raising both horizons to
  // `raise` (and a token reservation); false on failure. Only with nothing
  // queued for the background (after bio_.Drain()).
  bool WriteNow(int64_t now, std::optional<int64_t> raise, bool clean = false,
                uint64_t fence_reserved = 0);
  // A background write of the current record: raising both horizons to
  // `raise`, reserving tokens up to `fence`, or setting the at-risk bound to
  // `at_risk` (lowering it).
  void WriteInBackground(int64_t now, std::optional<int64_t> raise, uint64_t fence = 0,
                         std::optional<int64_t> at_risk = std::nullopt);
  int64_t Translate(const StateRecord& r, int64_t t, int64_t now) const;
  std::optional<int64_t> Fallback() const;
  std::string RefusalText(int64_t now) const;
  void Decide(int64_t now, const ReplayFacts& replay);
  int64_t Ahead() const;
  std::optional<int64_t> CapNow() const;
  // Cron's parts.
  void KeepTokensAhead(int64_t now);
  void KeepHorizonAhead(int64_t now);
  void LowerAtRisk(int64_t now);

  const Config& config_;
  BackgroundIo& bio_;
  std::string clock_id_;
  std::string releases_;
  std::string state_path_;
  bool ephemeral_ = false;

  // What Begin() read.
  bool state_exists_ = false;
  std::optional<StateRecord> prev_;
  aof::LogIdentity log_;
  std::optional<aof::WrittenMark::Seen> written_;
  bool same_clock_ = false;
  bool trusted_log_ = false;
  std::optional<int64_t> prev_horizon_, prev_at_risk_, prev_forgotten_;  // in this run's clock

  // The decision.
  std::string reason_ = "not started";
  std::string cause_ = "not started";
  int64_t quarantine_end_ = 0;  // boot-clock ms; INT64_MAX: until an operator ends it
  bool quarantine_active_ = false;
  int64_t foreign_bound_ = 0;
  std::optional<int64_t> carried_horizon_;
  std::optional<int64_t> forgotten_until_;
  std::optional<int64_t> carried_cap_;
  bool carried_uncapped_ = false;
  bool started_ = false;
  std::function<LogState()> log_probe_;
  std::function<void()> on_resume_;
  void Resumed() {
    if (on_resume_) on_resume_();
  }

  // This run.
  bool fsync_always_ = false;
  bool log_errors_ = false;
  bool uncapped_seen_ = false;
  int64_t cap_seen_ = 0;
  std::atomic<int64_t> durable_horizon_{INT64_MIN};  // as on disk (INT64_MIN: none)
  int64_t queued_horizon_ = INT64_MIN;               // last horizon handed to the background
  // The at-risk bound: the grants not yet covered by an fsync, and the
  // values written to the record (at_risk.h).
  UncoveredGrants uncovered_;
  RecordedBound at_risk_;
  int64_t last_lowering_ms_ = 0;
  // The longest TTL granted in the current and the previous window (5 s
  // each): how far ahead the background keeps the horizon.
  int64_t window_start_ = 0;
  int64_t window_ttl_ = 0, previous_window_ttl_ = 0;
  bool granted_recently_ = false;
  std::atomic<int> state_errno_{0};
  int64_t last_retry_ms_ = 0;
  int64_t last_error_log_ms_ = 0;
  uint64_t sync_writes_ = 0;
  std::atomic<uint64_t> bg_writes_{0};

  // Fencing tokens: how far the reservation is kept ahead of the counter.
  static constexpr uint64_t kTokenBlock = 65536;
  uint64_t TokensAhead() const;
  uint64_t window_tokens_ = 0, previous_window_tokens_ = 0;  // issued per window
  uint64_t next_token_ = 1;
  std::atomic<uint64_t> reserved_{0};  // tokens up to this are on disk as reserved
  uint64_t queued_reserved_ = 0;
  bool tokens_recently_ = false;
};

}  // namespace latch
