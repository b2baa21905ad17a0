#include "server/lease_policy.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "server/keyspace.h"
#include "server/log.h"

namespace latch {

namespace {

constexpr int64_t kWindowMs = 5000;
constexpr int64_t kForever = INT64_MAX;

std::string Ms(int64_t ms) {
  return std::to_string(ms) + " ms";
}

// Time arithmetic that saturates instead of wrapping: a huge max-lock-ttl,
// quarantine-ms or TTL must never turn a bound into the past.
int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
int64_t SatSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? INT64_MAX : INT64_MIN;
  return r;
}

}  // namespace

LeasePolicy::LeasePolicy(const Config& config, BackgroundIo& bio, std::string clock_id,
                         std::string releases, std::string state_path)
    : config_(config),
      bio_(bio),
      clock_id_(std::move(clock_id)),
      releases_(std::move(releases)),
      state_path_(std::move(state_path)) {}

void LeasePolicy::StartEphemeral() {
  ephemeral_ = true;
  started_ = true;
  reason_ = "an in-process server without a state record";
  durable_horizon_.store(INT64_MAX);
  reserved_.store(UINT64_MAX);
}

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

std::optional<int64_t> LeasePolicy::CapNow() const {
  if (config_.max_lock_ttl > 0) return config_.max_lock_ttl;
  return std::nullopt;
}

uint64_t LeasePolicy::TokensAhead() const {
  // The tokens of the last two windows (5 to 10 seconds at the recent rate),
  // at least a block: at any rate the reservation is moved a few times a
  // minute, off the loop, and a restart skips at most that many numbers
  // (out of 2^63).
  return std::clamp<uint64_t>(window_tokens_ + previous_window_tokens_, kTokenBlock,
                              uint64_t{1} << 32);
}

int64_t LeasePolicy::Ahead() const {
  // The margin the horizon is kept ahead of the grants: half the longest
  // recent TTL, between 1 and 10 seconds. Larger means fewer record writes;
  // smaller means a shorter quarantine after a crash.
  int64_t ttl = std::max(window_ttl_, previous_window_ttl_);
  return std::clamp<int64_t>(ttl / 2, 1000, 10000);
}

void LeasePolicy::Begin(int64_t now, const aof::LogIdentity& log) {
  state_exists_ = ::access(state_path_.c_str(), F_OK) == 0;
  if (state_exists_) {
    std::ifstream in(state_path_);
    std::stringstream text;
    text << in.rdbuf();
    prev_ = StateRecord::Parse(text.str());
  }
  log_ = log;
  if (prev_) {
    same_clock_ = prev_->clock_id == clock_id_;
    if (prev_->horizon) prev_horizon_ = Translate(*prev_, *prev_->horizon, now);
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

bool LeasePolicy::tail_must_be_complete() const {
  return prev_ && prev_->clean && trusted_log_ && config_.appendonly;
}

void LeasePolicy::Decide(int64_t now, const ReplayFacts& replay) {
  const bool log_exists = log_.exists;
  std::optional<int64_t> horizon = prev_horizon_, forgotten = prev_forgotten_;

  // Did the previous run acknowledge leases this run will not have?
  bool lost = false;
  bool unknown = false;  // lost, and no record says for how long
  std::string why;
  if (!state_exists_ && !log_exists) {
    why =
        "a fresh data directory, never used by latch: no lock was ever granted from it (a "
        "node whose storage can vanish must run with quarantine always)";
  } else if (!state_exists_) {
    lost = unknown = true;
    why = "the log exists but the state record latch.state is missing";
  } else if (!prev_) {
    lost = unknown = true;
    why = "the state record latch.state is damaged";
  } else if (!config_.appendonly) {
    lost = true;
    why = "appendonly no: locks granted before the restart were not logged";
  } else if (!prev_->appendonly) {
    lost = true;
    why = "the previous run did not log its locks (appendonly no)";
  } else if (!log_exists) {
    lost = true;
    why = "the log of the previous run is missing";
  } else if (!same_clock_) {
    lost = true;
    why =
        "restarted on another clock (a reboot, another host or time namespace): no time is "
        "assumed to have passed since the previous run's last record";
  } else if (!trusted_log_) {
    lost = true;
    why =
        "the log is not the one the previous run left (repaired, restored from a copy, or "
        "changed since): it may lack locks that run granted";
  } else if (replay.cut_at >= 0 && static_cast<uint64_t>(replay.cut_at) < prev_->log_synced) {
    lost = true;
    why = "the log was cut at offset " + std::to_string(replay.cut_at) + ", before the " +
          std::to_string(prev_->log_synced) + " bytes the previous run had synced";
  } else if (prev_->clean) {
    why = "the previous run shut down cleanly and its log was fully synced";
  } else if (prev_->fsync_always) {
    why =
        "the previous run crashed, but with appendfsync always every acknowledged write was on "
        "disk, and the log replayed without loss";
  } else {
    lost = true;
    why =
        "the previous run crashed with appendfsync everysec or no (or an fsync failed): "
        "acknowledged locks may have been lost";
  }
  if (config_.quarantine == QuarantineMode::kAlways && prev_ && !lost) {
    // Every start as if storage had vanished: the known horizon counts too.
    lost = true;
  }

  // Until when must this run grant nothing?
  int64_t end = 0;
  if (forgotten && *forgotten > now) {
    end = *forgotten;
    if (!lost) why += "; but the quarantine of an earlier restart is still in progress";
  }
  if (lost) {
    if (unknown) {
      std::optional<int64_t> fb = Fallback();
      end = fb ? std::max(end, SatAdd(now, *fb)) : kForever;
    } else if (horizon) {
      int64_t bound = *horizon;
      // With a cap, a lease lost in the crash ends at most cap after it,
      // and the crash was before now.
      if (same_clock_ && prev_->ttl_cap) bound = std::min(bound, SatAdd(now, *prev_->ttl_cap));
      end = std::max(end, bound);
      if (end <= now) why += "; but every lock it could have granted has ended since";
    } else {
      why += "; but it granted no lock that can still be alive";
    }
  }
  if (config_.quarantine == QuarantineMode::kAlways) {
    // Every start, as if storage had vanished (config validation makes sure
    // there is a fallback duration).
    std::optional<int64_t> fb = Fallback();
    end = std::max(end, fb ? SatAdd(now, *fb) : kForever);
    why = "quarantine always (" + why + ")";
  }

  // What this run carries: the earlier horizon and the leases it replayed
  // (still possibly alive), and the quarantine end, kept even if this run
  // does not enforce it.
  int64_t carried = std::max(horizon.value_or(INT64_MIN), replay.max_deadline);
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
}

StateRecord LeasePolicy::Current(bool clean, int64_t now, std::optional<int64_t> horizon,
                                 uint64_t fence_reserved) const {
  StateRecord r;
  r.clean = clean;
  r.clock_id = clock_id_;
  r.written_at = now;
  r.appendonly = config_.appendonly;
  r.fsync_always = fsync_always_;
  // Every record carries the largest values known, including those queued
  // for the background but not yet on disk: records are written in order,
  // so a later one must never bring back an older horizon or reservation.
  int64_t h = std::max({horizon.value_or(INT64_MIN), durable_horizon_.load(), queued_horizon_});
  if (carried_horizon_) h = std::max(h, *carried_horizon_);
  if (h != INT64_MIN) r.horizon = h;
  r.forgotten_until = forgotten_until_;
  if (!uncapped_seen_ && !carried_uncapped_) {
    r.ttl_cap = std::max(cap_seen_, carried_cap_.value_or(0));
  }
  r.fence_reserved = std::max({reserved_.load(), queued_reserved_, fence_reserved});
  if (log_probe_) {
    LogState log = log_probe_();
    r.log_id = log.id;
    r.log_synced = log.synced;
  }
  return r;
}

bool LeasePolicy::WriteNow(int64_t now, std::optional<int64_t> horizon, bool clean,
                           uint64_t fence_reserved) {
  if (ephemeral_) return true;
  StateRecord r = Current(clean, now, horizon, fence_reserved);
  int err = WriteStateFile(state_path_, r.Serialize());
  ++sync_writes_;
  if (err != 0) {
    bool first = state_errno_.exchange(err) == 0;
    if (first || now - last_error_log_ms_ > 30'000) {
      log::Warning(
          "Can't write the state record {}: {}. Lock grants are refused until it can be "
          "written (the next start must not trust an older record).",
          state_path_, std::strerror(err));
      last_error_log_ms_ = now;
    }
    return false;
  }
  if (r.horizon) {
    int64_t cur = durable_horizon_.load();
    while (*r.horizon > cur && !durable_horizon_.compare_exchange_weak(cur, *r.horizon)) {
    }
  }
  uint64_t res = reserved_.load();
  while (r.fence_reserved > res && !reserved_.compare_exchange_weak(res, r.fence_reserved)) {
  }
  if (state_errno_.exchange(0) != 0) {
    log::Warning("The state record {} can be written again: lock grants are accepted.",
                 state_path_);
  }
  return true;
}

void LeasePolicy::Start(int64_t now, const ReplayFacts& replay) {
  Decide(now, replay);
  fsync_always_ = config_.appendonly && config_.appendfsync == FsyncPolicy::kAlways;
  cap_seen_ = config_.max_lock_ttl;
  uncapped_seen_ = config_.max_lock_ttl <= 0;
  window_start_ = now;
  started_ = true;
  // "running" first: from now on a crash must not be mistaken for the clean
  // stop the previous record may describe.
  WriteNow(now, std::nullopt);
  if (quarantine_active_) {
    std::string how_long = quarantine_end_ == kForever
                               ? "until an operator ends it (CONFIG SET quarantine never)"
                               : "for " + Ms(quarantine_end_ - now);
    log::Warning(
        "Restart quarantine: {}. latch grants, renews and extends no lock {} (until every lock "
        "it may have forgotten has expired); reads and releases are served.",
        reason_, how_long);
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

std::string LeasePolicy::record_error() const {
  int err = state_errno_.load();
  if (err == 0) return {};
  return std::string("Can't write the state record latch.state: ") + std::strerror(err);
}

std::optional<int64_t> LeasePolicy::durable_horizon() const {
  int64_t h = durable_horizon_.load();
  if (carried_horizon_) h = std::max(h, *carried_horizon_);
  if (h == INT64_MIN) return std::nullopt;
  return h;
}

std::string LeasePolicy::RefusalText(int64_t now) const {
  std::string how_long = quarantine_end_ == kForever
                             ? "until an operator ends it (CONFIG SET quarantine never)"
                             : "for another " + Ms(remaining_ms(now));
  return "QUARANTINE latch restarted and may have forgotten locks it granted (" + reason_ +
         "). It grants, renews and extends no lock " + how_long + "; reads and releases (GET, " +
         releases_ + ") are allowed.";
}

std::optional<std::string> LeasePolicy::CheckTtl(int64_t ttl_ms) const {
  int64_t cap = config_.max_lock_ttl;
  if (cap <= 0 || ttl_ms <= cap) return std::nullopt;
  return "ERR TTL " + std::to_string(ttl_ms) + " ms exceeds max-lock-ttl (" + std::to_string(cap) +
         " ms)";
}

std::string LeasePolicy::RecordRefusal() const {
  return "MISCONF " + record_error() +
         ". Lock grants are refused until it can be written; reads and releases are served.";
}

std::optional<std::string> LeasePolicy::Admit(int64_t deadline, int64_t now) {
  if (quarantined(now)) return RefusalText(now);
  if (state_errno_.load() != 0 || !started_) {
    return RecordRefusal();
  }
  if (deadline == kNoDeadline) return std::nullopt;  // not a lease: no horizon to move
  int64_t ttl = std::max<int64_t>(0, deadline - now);
  window_ttl_ = std::max(window_ttl_, ttl);
  granted_recently_ = true;
  granted_max_ = std::max(granted_max_, deadline);
  if (deadline <= durable_horizon_.load()) return std::nullopt;
  // The grant would pass the recorded horizon: move it first, durably. A
  // background write still in flight lands first (it must not overwrite
  // this one with an older horizon), and may already cover the grant.
  bio_.Drain();
  if (deadline <= durable_horizon_.load()) return std::nullopt;
  int64_t target =
      SatAdd(std::max(deadline, SatAdd(now, std::max(window_ttl_, previous_window_ttl_))), Ahead());
  if (!WriteNow(now, target)) {
    return RecordRefusal();
  }
  return std::nullopt;
}

std::optional<uint64_t> LeasePolicy::IssueToken(int64_t now, uint64_t min) {
  uint64_t token = std::max(next_token_, min);
  if (token > kLastToken) return std::nullopt;  // exhausted: a RESP integer
  if (!ephemeral_ && token > reserved_.load()) {
    // Beyond the reservation on disk: reserve a block, durably, first. (A
    // background reservation still in flight lands first and may do.)
    bio_.Drain();
    // Eight times what this window issued so far: a burst that outruns the
    // background reservation pays a few synchronous writes, not one per block.
    const uint64_t ahead = std::max(TokensAhead(), std::min(8 * window_tokens_, uint64_t{1} << 32));
    if (token > reserved_.load() &&
        !WriteNow(now, std::nullopt, false, std::min(token + ahead - 1, kLastToken))) {
      return std::nullopt;
    }
  }
  next_token_ = token + 1;
  ++window_tokens_;
  tokens_recently_ = true;
  return token;
}

std::string LeasePolicy::TokenRefusal() const {
  return record_ok() ? "ERR the fencing token counter is exhausted" : RecordRefusal();
}

void LeasePolicy::Cron(int64_t now) {
  if (quarantine_active_ && now >= quarantine_end_) {
    quarantine_active_ = false;
    log::Notice(
        "Restart quarantine over: every lock it may have forgotten has expired. Locks are "
        "granted again.");
  }
  if (ephemeral_) return;
  if (now - window_start_ >= kWindowMs) {
    previous_window_ttl_ = window_ttl_;
    window_ttl_ = 0;
    previous_window_tokens_ = window_tokens_;
    window_tokens_ = 0;
    window_start_ = now;
  }
  if (!started_) return;
  // A record that could not be written: try again once a second (grants are
  // refused meanwhile, so waiting on the disk here costs nobody).
  if (state_errno_.load() != 0) {
    if (now - last_retry_ms_ >= 1000) {
      last_retry_ms_ = now;
      bio_.Drain();
      WriteNow(now, std::nullopt);
    }
    return;
  }
  // Keep the token reservation ahead of the tokens issued, off the loop.
  if (tokens_recently_) {
    uint64_t have = std::max(reserved_.load(), queued_reserved_);
    const uint64_t ahead = TokensAhead();
    if (have < next_token_ + ahead / 2 && have < kLastToken) {
      uint64_t target = std::min(next_token_ + ahead, kLastToken);
      std::string text = Current(false, now, std::nullopt, target).Serialize();
      queued_reserved_ = target;
      tokens_recently_ = false;
      bio_.Run([this, text = std::move(text), target] {
        if (int err = WriteStateFile(state_path_, text); err != 0) {
          state_errno_.store(err);
          return;
        }
        uint64_t cur = reserved_.load();
        while (target > cur && !reserved_.compare_exchange_weak(cur, target)) {
        }
      });
    }
  }
  // Keep the horizon ahead of the grants, off the loop.
  if (!granted_recently_) return;
  int64_t ttl = std::max(window_ttl_, previous_window_ttl_);
  int64_t ahead = Ahead();
  int64_t have = std::max(durable_horizon_.load(), queued_horizon_);
  if (SatSub(have, now) > SatAdd(ttl, ahead / 2)) return;
  int64_t target = std::max(SatAdd(SatAdd(now, ttl), ahead), granted_max_);
  std::string text = Current(false, now, target).Serialize();
  queued_horizon_ = target;
  granted_recently_ = false;
  bio_.Run([this, text = std::move(text), target] {
    int err = WriteStateFile(state_path_, text);
    if (err != 0) {
      state_errno_.store(err);
      return;
    }
    bg_writes_.fetch_add(1);
    int64_t cur = durable_horizon_.load();
    while (target > cur && !durable_horizon_.compare_exchange_weak(cur, target)) {
    }
  });
}

bool LeasePolicy::OnConfigChange(int64_t now) {
  if (!started_) return true;
  // The new state, tentatively: it becomes the policy's only once recorded.
  bool fsync_always = fsync_always_ && config_.appendonly &&
                      config_.appendfsync == FsyncPolicy::kAlways;  // no longer "throughout"
  bool uncapped = uncapped_seen_ || config_.max_lock_ttl <= 0;      // leases of any length
  int64_t cap = std::max(cap_seen_, config_.max_lock_ttl);
  bool end_quarantine = quarantine_active_ && config_.quarantine == QuarantineMode::kNever;
  if (fsync_always == fsync_always_ && uncapped == uncapped_seen_ && cap == cap_seen_ &&
      !end_quarantine) {
    return true;
  }
  const bool old_fsync = fsync_always_, old_uncapped = uncapped_seen_;
  const int64_t old_cap = cap_seen_;
  const auto old_forgotten = forgotten_until_;
  fsync_always_ = fsync_always;
  uncapped_seen_ = uncapped;
  cap_seen_ = cap;
  if (end_quarantine) forgotten_until_.reset();
  // Durable before CONFIG SET returns, and before the change takes effect:
  // no write may be acknowledged under a weaker policy (or a longer lease)
  // than the record says.
  bio_.Drain();
  if (!WriteNow(now, std::nullopt)) {
    fsync_always_ = old_fsync;
    uncapped_seen_ = old_uncapped;
    cap_seen_ = old_cap;
    forgotten_until_ = old_forgotten;
    return false;
  }
  if (end_quarantine) {
    quarantine_active_ = false;
    log::Notice(
        "Restart quarantine over: ended early by CONFIG SET quarantine never (an operator's "
        "choice). Locks are granted again.");
  }
  return true;
}

void LeasePolicy::OnLogSyncFailure(int64_t now) {
  if (!started_ || !fsync_always_) return;
  fsync_always_ = false;
  bio_.Drain();
  WriteNow(now, std::nullopt);
}

void LeasePolicy::OnLogChanged(int64_t now) {
  if (!started_ || ephemeral_) return;
  // A new log file (a rewrite switched files): the record must name it, or
  // a crash now would find a log the record does not vouch for, and
  // quarantine. Once per rewrite, so written at once.
  bio_.Drain();
  WriteNow(now, std::nullopt);
}

void LeasePolicy::Shutdown(int64_t now, bool log_clean) {
  if (!started_) return;
  bio_.Drain();
  WriteNow(now, std::nullopt, log_clean);
}

}  // namespace latch
