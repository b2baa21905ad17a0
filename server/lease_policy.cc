#include "server/lease_policy.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "server/keyspace.h"
#include "server/log.h"

namespace latch {

namespace {

constexpr int64_t kWindowMs = 5000;

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
  cause_ = "no state record";
  durable_horizon_.store(INT64_MAX);
  at_risk_.SetUnbounded();
  reserved_.store(UINT64_MAX);
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

StateRecord LeasePolicy::Current(bool clean, int64_t now, int64_t at_risk,
                                 std::optional<int64_t> raise, uint64_t fence_reserved) const {
  StateRecord r;
  r.clean = clean;
  r.clock_id = clock_id_;
  r.written_at = now;
  r.appendonly = config_.appendonly;
  r.fsync_always = fsync_always_;
  r.log_errors = log_errors_;
  // Every record carries the largest horizon and reservation known,
  // including those queued for the background but not yet on disk: records
  // are written in order, so a later one must never bring back an older
  // horizon or reservation. (The at-risk bound may fall: at_risk.h.)
  int64_t h =
      std::max({raise.value_or(INT64_MIN), at_risk, durable_horizon_.load(), queued_horizon_});
  if (carried_horizon_) h = std::max(h, *carried_horizon_);
  if (h != INT64_MIN) r.horizon = h;
  if (at_risk != INT64_MIN) r.at_risk = at_risk;
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

namespace {

// Raises an atomic to at least v (the background thread and the loop both
// move the durable values).
template <typename T>
void RaiseTo(std::atomic<T>& a, T v) {
  T cur = a.load();
  while (v > cur && !a.compare_exchange_weak(cur, v)) {
  }
}

}  // namespace

bool LeasePolicy::WriteNow(int64_t now, std::optional<int64_t> raise, bool clean,
                           uint64_t fence_reserved) {
  if (ephemeral_) return true;
  // A raise moves the at-risk bound along with the horizon.
  const int64_t at_risk = std::max(raise.value_or(INT64_MIN), at_risk_.intended());
  StateRecord r = Current(clean, now, at_risk, raise, fence_reserved);
  int err = WriteStateFile(state_path_, r.Serialize());
  ++sync_writes_;
  at_risk_.Wrote(at_risk, err == 0);
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
  if (r.horizon) RaiseTo(durable_horizon_, *r.horizon);
  RaiseTo(reserved_, r.fence_reserved);
  if (state_errno_.exchange(0) != 0) {
    log::Warning("The state record {} can be written again: lock grants are accepted.",
                 state_path_);
    Resumed();
  }
  return true;
}

void LeasePolicy::WriteInBackground(int64_t now, std::optional<int64_t> raise, uint64_t fence,
                                    std::optional<int64_t> at_risk) {
  const int64_t value =
      at_risk ? *at_risk : std::max(raise.value_or(INT64_MIN), at_risk_.intended());
  StateRecord r = Current(false, now, value, raise, fence);
  const uint64_t seq = at_risk_.Queue(value);
  if (raise) queued_horizon_ = std::max(queued_horizon_, *raise);
  if (fence != 0) queued_reserved_ = std::max(queued_reserved_, fence);
  const bool counts = raise.has_value() || at_risk.has_value();
  bio_.Run(
      [this, text = r.Serialize(), horizon = r.horizon, fence = r.fence_reserved, seq, counts] {
        const int err = WriteStateFile(state_path_, text);
        if (err != 0) state_errno_.store(err);
        if (err == 0) {
          if (counts) bg_writes_.fetch_add(1);
          if (horizon) RaiseTo(durable_horizon_, *horizon);
          RaiseTo(reserved_, fence);
        }
        at_risk_.Done(seq, err == 0);
      });
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

std::optional<int64_t> LeasePolicy::at_risk_horizon() {
  const int64_t b = at_risk_.Bound();
  if (b == INT64_MIN) return std::nullopt;
  return b;
}

std::optional<std::string> LeasePolicy::Admit(int64_t deadline, int64_t now, bool blind) {
  // The quarantine refuses only what could hand out forgotten state.
  if (!blind && quarantined(now)) return RefusalText(now);
  if (state_errno_.load() != 0 || !started_) {
    return RecordRefusal();
  }
  if (deadline == kNoDeadline) return std::nullopt;  // not a lease: no horizon to move
  int64_t ttl = std::max<int64_t>(0, SatSub(deadline, now));
  window_ttl_ = std::max(window_ttl_, ttl);
  granted_recently_ = true;
  // Uncovered until an fsync covers its record (a refusal below leaves it
  // counted: a bound too high is harmless).
  uncovered_.Add(deadline);
  if (deadline <= at_risk_.Bound()) return std::nullopt;
  // The grant would pass the recorded at-risk bound (and perhaps the
  // horizon): move both first, durably. A background write still in flight
  // lands first (it must not overwrite this one), and may already cover the
  // grant.
  bio_.Drain();
  if (deadline <= at_risk_.Bound()) return std::nullopt;
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
    Resumed();
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
  KeepTokensAhead(now);
  KeepHorizonAhead(now);
  LowerAtRisk(now);
}

void LeasePolicy::KeepTokensAhead(int64_t now) {
  // Keep the token reservation ahead of the tokens issued, off the loop.
  if (!tokens_recently_) return;
  uint64_t have = std::max(reserved_.load(), queued_reserved_);
  const uint64_t ahead = TokensAhead();
  if (have < next_token_ + ahead / 2 && have < kLastToken) {
    tokens_recently_ = false;
    WriteInBackground(now, std::nullopt, std::min(next_token_ + ahead, kLastToken));
  }
}

void LeasePolicy::KeepHorizonAhead(int64_t now) {
  // Keep the at-risk bound (and with it the horizon) ahead of the grants,
  // off the loop.
  if (!granted_recently_) return;
  int64_t ttl = std::max(window_ttl_, previous_window_ttl_);
  int64_t ahead = Ahead();
  int64_t have = at_risk_.intended();
  if (SatSub(have, now) > SatAdd(ttl, ahead / 2)) return;
  int64_t target = std::max(SatAdd(SatAdd(now, ttl), ahead), uncovered_.Max());
  granted_recently_ = false;
  WriteInBackground(now, target);
}

void LeasePolicy::LowerAtRisk(int64_t now) {
  // Once fsyncs covered the grants, a power loss can no longer take them:
  // the at-risk bound comes back down to the latest uncovered lease end, or
  // to where the margin ahead of the recent grants keeps it, whichever is
  // later. Not after a log error (what a failed fsync covered may never
  // reach the disk), nor without a log. At most once a second, and only
  // when it gains more than 10 s: a write costs two fsyncs.
  if (log_errors_ || !config_.appendonly || now - last_lowering_ms_ < 1000) return;
  const int64_t have = at_risk_.intended();
  if (have == INT64_MIN) return;
  const int64_t ttl = std::max(window_ttl_, previous_window_ttl_);
  const int64_t target = std::max(SatAdd(SatAdd(now, ttl), Ahead()), uncovered_.Max());
  if (SatSub(have, target) <= 10'000) return;
  last_lowering_ms_ = now;
  WriteInBackground(now, std::nullopt, 0, target);
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
    Resumed();
  }
  return true;
}

void LeasePolicy::OnLogError(int64_t now) {
  if (!started_ || ephemeral_ || (log_errors_ && !fsync_always_)) return;
  fsync_always_ = false;
  log_errors_ = true;
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
