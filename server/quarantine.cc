// The lease policy at start-up: what the previous run left, the decision
// table of lease_policy.h, and how a quarantine is explained — in the start
// log, INFO latch and the refusal a client gets.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "server/lease_policy.h"
#include "server/log.h"

namespace latch {

namespace {

constexpr int64_t kForever = INT64_MAX;

// "13 s": whole seconds, rounded up (a quarantine of 200 ms is "1 s", not 0).
std::string Seconds(int64_t ms) {
  return std::to_string(ms / 1000 + (ms % 1000 != 0 ? 1 : 0)) + " s";
}

}  // namespace

int64_t LeasePolicy::Translate(const StateRecord& r, int64_t t, int64_t now) const {
  if (t == kForever || r.clock_id == clock_id_) return t;
  // Another clock: nothing is assumed to have elapsed since the record was
  // written. What was still ahead then is still ahead now.
  return SatAdd(now, SatSub(t, r.written_at));
}

std::optional<int64_t> LeasePolicy::Fallback() const {
  if (config_.quarantine_ms >= 0) return config_.quarantine_ms;
  if (config_.max_lock_ttl > 0) return config_.max_lock_ttl;
  return std::nullopt;
}

void LeasePolicy::Begin(int64_t now, const aof::LogIdentity& log,
                        std::optional<aof::WrittenMark::Seen> written) {
  state_exists_ = ::access(state_path_.c_str(), F_OK) == 0;
  if (state_exists_) {
    std::ifstream in(state_path_);
    std::stringstream text;
    text << in.rdbuf();
    prev_ = StateRecord::Parse(text.str());
  }
  log_ = log;
  written_ = std::move(written);
  if (prev_) {
    same_clock_ = prev_->clock_id == clock_id_;
    if (prev_->horizon) prev_horizon_ = Translate(*prev_, *prev_->horizon, now);
    if (prev_->at_risk) prev_at_risk_ = Translate(*prev_, *prev_->at_risk, now);
    if (prev_->forgotten_until) prev_forgotten_ = Translate(*prev_, *prev_->forgotten_until, now);
    // The log the previous run's promises rest on: the same file (its id),
    // holding at least what that run had synced — and, after a clean stop,
    // exactly that. A repair (latch-check-aof --fix), a backup put back, or
    // bytes changed since, and it is another log.
    trusted_log_ = prev_->appendonly && log.exists && !log.id.empty() && log.id == prev_->log_id &&
                   (prev_->clean ? log.size == prev_->log_synced : log.size >= prev_->log_synced);
    // Fencing tokens start above every token the previous runs may have issued.
    // (At most the largest token plus one, which is exhausted.)
    next_token_ = std::min(prev_->fence_reserved, kLastToken) + 1;
    reserved_.store(prev_->fence_reserved);
  }
  // No lease replayed from a time written on another clock may outlive what
  // the previous run bounded; with nothing bounded, nothing is alive.
  if (prev_) {
    foreign_bound_ = std::max(prev_horizon_.value_or(now), prev_forgotten_.value_or(now));
  } else if (state_exists_ || log.exists) {
    std::optional<int64_t> fb = Fallback();
    foreign_bound_ = fb ? SatAdd(now, *fb) : 0;  // 0: until an operator ends the quarantine
  }
}

LeasePolicy::ReplayAnchor LeasePolicy::replay_anchor() const {
  ReplayAnchor a;
  if (prev_) {
    a.clock_id = prev_->clock_id;
    a.written_at = prev_->written_at;
  }
  a.bound = foreign_bound_;
  return a;
}

bool LeasePolicy::tail_must_be_complete() const {
  return prev_ && prev_->clean && trusted_log_ && config_.appendonly;
}

void LeasePolicy::Decide(int64_t now, const ReplayFacts& replay) {
  // Did the previous run acknowledge leases this run will not have, and
  // which: those no fsync had covered (at-risk), or any (the horizon)?
  enum class Loss { kNone, kAtRisk, kAll, kUnknown } loss = Loss::kNone;
  std::string why, cause;
  if (!state_exists_ && !log_.exists) {
    why =
        "a fresh data directory, never used by latch: no lock was ever granted from it (a "
        "node whose storage can vanish must run with quarantine always)";
    cause = "a fresh data directory";
  } else if (!state_exists_) {
    loss = Loss::kUnknown;
    why = "the log exists but the state record latch.state is missing";
    cause = "the state record is missing";
  } else if (!prev_) {
    loss = Loss::kUnknown;
    why = "the state record latch.state is damaged";
    cause = "the state record is damaged";
  } else if (!config_.appendonly) {
    loss = Loss::kAll;
    why = "appendonly no: locks granted before the restart were not logged";
    cause = "appendonly no";
  } else if (!prev_->appendonly) {
    loss = Loss::kAll;
    why = "the previous run did not log its locks (appendonly no)";
    cause = "the previous run had appendonly no";
  } else if (!log_.exists) {
    loss = Loss::kAll;
    why = "the log of the previous run is missing";
    cause = "the log is missing";
  } else if (!trusted_log_) {
    loss = Loss::kAll;
    why =
        "the log is not the one the previous run left (repaired, restored from a copy, or "
        "changed since): it may lack locks that run granted";
    cause = "the log was repaired, restored or replaced";
  } else if (replay.cut_at >= 0 && static_cast<uint64_t>(replay.cut_at) < prev_->log_synced) {
    loss = Loss::kAll;
    why = "the log was cut at offset " + std::to_string(replay.cut_at) + ", before the " +
          std::to_string(prev_->log_synced) + " bytes the previous run had synced";
    cause = "the log was cut short";
  } else if (!same_clock_) {
    if (replay.unanchored_times > 0) {
      loss = Loss::kAll;
      why = "restarted on another clock (a reboot, another host or time namespace), and " +
            std::to_string(replay.unanchored_times) +
            " lease times in the log are on a clock older than the previous run's: no time is "
            "assumed to have passed since the previous run's last record";
    } else {
      loss = Loss::kAtRisk;
      why =
          "restarted on another clock (a reboot or power loss, another host or time "
          "namespace): locks whose records no fsync had covered may be lost, and no time is "
          "assumed to have passed since the previous run's last record";
    }
    cause = "a reboot or another clock";
  } else if (prev_->clean) {
    why = "the previous run shut down cleanly and its log was fully synced";
    cause = "a clean shutdown";
  } else if (prev_->fsync_always) {
    why =
        "the previous run crashed, but with appendfsync always every acknowledged write was on "
        "disk, and the log replayed without loss";
    cause = "a crash under appendfsync always";
  } else if (prev_->log_errors) {
    loss = Loss::kAtRisk;
    why =
        "the previous run crashed after a write or fsync of its log had failed: acknowledged "
        "locks may have been lost";
    cause = "a failed write or fsync of the log";
  } else if (!replay.log_synced) {
    loss = Loss::kAtRisk;
    why =
        "the previous run crashed and this start could not fsync the log it left: what that run "
        "acknowledged may still be lost";
    cause = "the inherited log could not be synced";
  } else if (written_ && written_->log_id == log_.id && log_.size >= written_->size &&
             (replay.cut_at < 0 || static_cast<uint64_t>(replay.cut_at) >= written_->size)) {
    why =
        "the previous process died on this boot, and the log holds every byte it wrote: every "
        "acknowledged write was in it (and is now synced), so nothing was forgotten";
    cause = "a process crash that lost nothing";
  } else if (!written_ || written_->log_id != log_.id) {
    loss = Loss::kAtRisk;
    why =
        "the previous run crashed with appendfsync everysec or no and left no written mark for "
        "its log: acknowledged locks may have been lost";
    cause = "a crash that may have lost writes";
  } else {
    loss = Loss::kAtRisk;
    why = "the log holds " + std::to_string(log_.size) + " bytes, fewer than the " +
          std::to_string(written_->size) +
          " the previous run wrote (a power loss, or a cut): locks whose records no fsync had "
          "covered may be lost";
    cause = "a power loss or a cut log";
  }
  if (config_.quarantine == QuarantineMode::kAlways && prev_ && loss != Loss::kUnknown) {
    // Every start as if storage had vanished: the known horizon counts too.
    loss = Loss::kAll;
  }

  // Until when must this run refuse?
  int64_t end = 0;
  if (prev_forgotten_ && *prev_forgotten_ > now) {
    end = *prev_forgotten_;
    if (loss == Loss::kNone) {
      why += "; but the quarantine of an earlier restart is still in progress";
      cause = "a quarantine in progress at the restart";
    }
  }
  if (loss == Loss::kUnknown) {
    std::optional<int64_t> fb = Fallback();
    end = fb ? std::max(end, SatAdd(now, *fb)) : kForever;
  } else if (loss != Loss::kNone) {
    std::optional<int64_t> bound = loss == Loss::kAll ? prev_horizon_ : prev_at_risk_;
    if (bound) {
      int64_t b = *bound;
      // With a cap, a lease lost in the crash ends at most cap after it,
      // and the crash was before now.
      if (same_clock_ && prev_->ttl_cap) b = std::min(b, SatAdd(now, *prev_->ttl_cap));
      end = std::max(end, b);
      if (end <= now) why += "; but every lock it could have lost has ended since";
    } else {
      why += loss == Loss::kAll ? "; but it granted no lock that can still be alive"
                                : "; but no lock it granted was left uncovered by an fsync";
    }
  }
  if (config_.quarantine == QuarantineMode::kAlways) {
    // Every start, as if storage had vanished (config validation makes sure
    // there is a fallback duration).
    std::optional<int64_t> fb = Fallback();
    end = std::max(end, fb ? SatAdd(now, *fb) : kForever);
    why = "quarantine always (" + why + ")";
    cause = "quarantine always";
  }

  // What this run carries: the earlier horizon and the leases it replayed
  // (still possibly alive), and the quarantine end, kept even if this run
  // does not enforce it.
  int64_t carried = std::max(prev_horizon_.value_or(INT64_MIN), replay.max_deadline);
  if (carried > now) {
    carried_horizon_ = carried;
    // Replayed leases are as long as the runs that granted them allowed: a
    // cap is carried only when the record says every one of them had it.
    carried_uncapped_ = !prev_ || !prev_->ttl_cap.has_value();
    if (prev_) carried_cap_ = prev_->ttl_cap;
  }
  if (end > now) forgotten_until_ = end;

  quarantine_end_ = end;
  quarantine_active_ = end > now && config_.quarantine != QuarantineMode::kNever;
  if (config_.quarantine == QuarantineMode::kNever && end > now) {
    why = "quarantine never, an operator's choice (otherwise: " + why + ")";
  }
  reason_ = why;
  cause_ = cause;
}

void LeasePolicy::Start(int64_t now, const ReplayFacts& replay) {
  Decide(now, replay);
  fsync_always_ = config_.appendonly && config_.appendfsync == FsyncPolicy::kAlways;
  // A start whose inherited log could not be synced begins tainted.
  log_errors_ = !replay.log_synced;
  cap_seen_ = config_.max_lock_ttl;
  uncapped_seen_ = config_.max_lock_ttl <= 0;
  window_start_ = now;
  started_ = true;
  // "running" first: from now on a crash must not be mistaken for the clean
  // stop the previous record may describe.
  WriteNow(now, std::nullopt);
  if (quarantine_active_) {
    std::string how_long = quarantine_end_ == kForever ? "until an operator ends it"
                                                       : "for " + Seconds(quarantine_end_ - now);
    log::Warning(
        "Restart quarantine {}: {} ({}). Until every lock it may have forgotten has expired, "
        "latch refuses the writes whose reply could rest on one (conditional acquisitions, "
        "renewals, counters, fenced grants, lease writes in MULTI or scripts); reads, releases "
        "and blind writes are served. An operator ends it with {}.",
        how_long, cause_, reason_, kHowToEnd);
  } else {
    log::Notice("No restart quarantine: {}.", reason_);
  }
}

bool LeasePolicy::quarantined(int64_t now) const {
  return quarantine_active_ && now < quarantine_end_;
}

int64_t LeasePolicy::remaining_ms(int64_t now) const {
  if (!quarantined(now)) return 0;
  return quarantine_end_ == kForever ? -1 : quarantine_end_ - now;
}

std::string LeasePolicy::RefusalText(int64_t now) const {
  // The seconds left, the cause in a few words, and the way out.
  std::string how_long = quarantine_end_ == kForever ? "until an operator ends it"
                                                     : "for another " + Seconds(remaining_ms(now));
  return "QUARANTINE refused " + how_long + " (" + cause_ +
         "): latch restarted and may have forgotten locks it granted. Reads, releases (" +
         releases_ +
         ") and blind writes (SET without NX/XX/GET/IFEQ/FENCE, SETEX, MSET) are served. "
         "An operator ends it with " +
         kHowToEnd;
}

}  // namespace latch
