#include "server/persistence.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "protocol/reply_writer.h"
#include "server/connection.h"
#include "server/log.h"

namespace latch {

Persistence::Persistence(const Config& config, Clock& clock, Store& store, std::string releases,
                         Listener& listener)
    : config_(config),
      clock_(clock),
      store_(store),
      listener_(listener),
      bio_(std::make_unique<BackgroundIo>()),
      policy_(std::make_unique<LeasePolicy>(config_, *bio_, clock_.Id(), std::move(releases))) {
  policy_->set_on_resume([this] { listener_.OnGrantsMayResume(); });
}

Persistence::~Persistence() {
  // Background jobs refer to the log and the lease policy: they finish first.
  bio_->Drain();
}

// ---------------------------------------------------------------- start-up

void Persistence::Start(uv_loop_t* loop, const TimeSnapshot& now) {
  // The previous run's record first: it says how far to trust the log's
  // times and the log itself, and whether this start is quarantined.
  log_identity_ = aof::ReadLogIdentity(config_.appendfilename);
  // How much of it the previous process wrote, if it died on this boot
  // (log/written_mark.h).
  policy_->Begin(now.mono, log_identity_,
                 aof::WrittenMark::Read(aof::WrittenMark::PathFor(config_.appendfilename)));
  // Until the log is open, records name the log as it was found (its size
  // counted as synced: the strict direction for the next start's check).
  policy_->set_log_probe([this]() -> LeasePolicy::LogState {
    if (log_ != nullptr) return {log_->log_id(), log_->synced_size()};
    if (!config_.appendonly) return {};
    return {log_identity_.id, log_identity_.size};
  });
  if (!config_.appendonly) {
    policy_->Start(now.mono, {});
    log::Notice("Ready to accept connections tcp (appendonly no: nothing is logged)");
    listener_.OnServing(nullptr);
    return;
  }
  replay_ = std::make_unique<Replay>(config_, store_);
  // After a clean stop with this very log synced, a torn tail is damage.
  replay_->set_tail_must_be_complete(policy_->tail_must_be_complete());
  if (auto err = replay_->Open()) return Fatal(*err);
  // What the previous process wrote must be on disk before this run grants
  // anything (FinishLoading waits for it); the fsync runs in the background
  // while the log replays, so a start-up pays for the longer of the two, not
  // for both. Nothing writes the file meanwhile (a cut tail is synced again).
  if (log_identity_.exists) {
    existing_sync_pending_ = true;
    bio_->Run([result = existing_sync_errno_, path = config_.appendfilename] {
      result->store(aof::SyncExisting(path));
    });
  }
  replay_clock_ = ReplayClock{};
  replay_clock_.clock_id = clock_.Id();
  replay_clock_.now = now;
  const LeasePolicy::ReplayAnchor anchor = policy_->replay_anchor();
  replay_clock_.foreign_bound = anchor.bound;
  replay_clock_.anchor_clock_id = anchor.clock_id;
  replay_clock_.anchor_written_at = anchor.written_at;
  if (!replay_->exists()) {
    FinishLoading();
    return;
  }
  // Replay in slices so that clients connecting meanwhile are told LOADING.
  listener_.OnLoading();
  loading_start_ms_ = now.mono;
  last_progress_log_ms_ = loading_start_ms_;
  log::Notice("Loading the append only file '{}' ({} bytes)...", config_.appendfilename,
              replay_->total_bytes());
  uv_idle_init(loop, load_idle_.get());
  load_idle_.MarkInitialized();
  load_idle_->data = this;
  uv_idle_start(load_idle_.get(), OnLoadStep);
}

void Persistence::OnLoadStep(uv_idle_t* idle) {
  static_cast<Persistence*>(idle->data)->LoadStep();
}

void Persistence::LoadStep() {
  Replay::State state = replay_->Step(replay_clock_, 50'000);
  int64_t now = clock_.MonoMs();
  if (state == Replay::State::kMore && now - last_progress_log_ms_ >= 1000) {
    last_progress_log_ms_ = now;
    uint64_t total = std::max<uint64_t>(replay_->total_bytes(), 1);
    log::Notice("Loading the log: {} of {} bytes ({:.1f}%), {} commands", replay_->loaded_bytes(),
                replay_->total_bytes(),
                100.0 * static_cast<double>(replay_->loaded_bytes()) / static_cast<double>(total),
                replay_->records());
  }
  if (state == Replay::State::kMore) return;
  load_idle_.Close();
  if (state == Replay::State::kFailed) return Fatal(replay_->error());
  log::Notice(
      "DB loaded from append only file: {} keys loaded, {} keys already expired, {} "
      "commands, {} bytes, {:.3f} seconds",
      store_.size(), replay_clock_.expired, replay_->records(), replay_->loaded_bytes(),
      static_cast<double>(now - loading_start_ms_) / 1000.0);
  if (replay_clock_.foreign_times > 0) {
    log::Warning(
        "{} lease times in the log were written on another clock (another boot, host or time "
        "namespace, or by another program): converted with the wall clock, none beyond the "
        "lease horizon.",
        replay_clock_.foreign_times);
  }
  FinishLoading();
}

void Persistence::FinishLoading() {
  if (replay_) truncated_at_ = replay_->truncated_at();
  // The reader's buffer is as large as the largest record it read (a
  // 100 MB value: 100 MB more in used_memory for the life of the process).
  replay_.reset();
  // This run's record before anything else is created or granted: a crash
  // from here on is never mistaken for the previous run's stop, and the
  // leases just replayed are under its horizon.
  LeasePolicy::ReplayFacts facts;
  facts.max_deadline = store_.MaxDeadline();
  facts.cut_at = truncated_at_;
  facts.unanchored_times = replay_clock_.unanchored;
  // What the previous process wrote is on disk before this run decides, and
  // before it grants anything: a power loss from now on cannot take what
  // that run acknowledged (lease_policy.h).
  if (log_identity_.exists) {
    int err = 0;
    bool synced = false;
    if (existing_sync_pending_) {
      bio_->Drain();  // the fsync queued at start-up has run
      existing_sync_pending_ = false;
      err = existing_sync_errno_->load();
      synced = err == 0;
    }
    // None was queued, or the replay cut a torn tail after it ran: sync the
    // file as it is now.
    if (err == 0 && (!synced || truncated_at_ >= 0))
      err = aof::SyncExisting(config_.appendfilename);
    if (err != 0) {
      facts.log_synced = false;
      log::Warning("Can't fsync the append-only file '{}' found at start: {}",
                   config_.appendfilename, std::strerror(err));
    }
  }
  policy_->Start(clock_.MonoMs(), facts);
  // The writer reports to this component from now on (a new log file, for
  // one: a fresh directory's, which the record must name).
  aof::WriterEvents* events = this;
  log_ = std::make_unique<aof::Writer>(config_.appendfilename, config_.appendfsync, *bio_, events);
  if (auto err = log_->Open()) {
    log_.reset();
    return Fatal(*err);
  }
  store_.set_log(&log_->batch());
  log::Notice("Ready to accept connections tcp (appendonly yes, appendfsync {})",
              FsyncPolicyName(config_.appendfsync));
  listener_.OnServing(log_.get());
}

void Persistence::Fatal(const std::string& message) {
  listener_.OnFatal(message);
}

void Persistence::CloseHandles() {
  load_idle_.Close();
}

// ---------------------------------------------------------------- the loop

void Persistence::Flush(int64_t now_ms) {
  if (log_ == nullptr) return;
  // One write (and, for appendfsync always, one fdatasync) for every record
  // of this iteration, so no reply can report an effect the log does not
  // have. The writer's events (written, synced) release what waited for it.
  log_->Flush(now_ms);
  if (!log_->fatal_error().empty()) {
    // No reply may leave: exit now, and the next start treats this run as a
    // crash (its record still says "running").
    log::Warning("{}", log_->fatal_error());
    spdlog::default_logger()->flush();
    ::_exit(1);
  }
}

void Persistence::Cron(const TimeSnapshot& now) {
  policy_->Cron(now.mono);
  if (log_ != nullptr) {
    log_->Cron(now.mono);
    MaybeAutoRewrite(now);
  }
  // Parked WAITAOF requests whose deadline passed.
  if (!fsync_waits_.empty()) ServeFsyncWaits(now.mono);
}

void Persistence::MaybeAutoRewrite(const TimeSnapshot& now) {
  // The automatic rewrite, once the log has grown enough since the last.
  if (log_->rewrite_in_progress() || log_->rewrite_scheduled() ||
      config_.auto_aof_rewrite_percentage <= 0 ||
      log_->current_size() <= static_cast<uint64_t>(config_.auto_aof_rewrite_min_size)) {
    return;
  }
  uint64_t base = std::max<uint64_t>(log_->base_size(), 1);
  uint64_t growth = (log_->current_size() - std::min(log_->current_size(), base)) * 100 / base;
  if (growth >= static_cast<uint64_t>(config_.auto_aof_rewrite_percentage)) {
    log::Notice("Starting automatic rewriting of AOF on {}% growth", growth);
    if (auto err = Rewrite(now)) {
      log::Warning("Can't rewrite the append-only file: {}", *err);
    }
  }
}

// ---------------------------------------------------------------- the writer's events

void Persistence::OnWritten(uint64_t end) {
  // The lease policy's at-risk ledger: the grants admitted so far have
  // their records before `end`.
  policy_->OnLogAppended(end);
  if (!waiting_.empty()) ReleaseWaiting();
}

void Persistence::OnSynced(uint64_t end) {
  policy_->OnLogSynced(end);
  if (!waiting_.empty()) ReleaseWaiting();
  // WAITAOF requests this fsync satisfied.
  if (!fsync_waits_.empty()) ServeFsyncWaits(clock_.MonoMs());
}

void Persistence::OnError() {
  // The run is no longer "always throughout", nor free of log errors.
  policy_->OnLogError(clock_.MonoMs());
}

void Persistence::OnRecovered() {
  listener_.OnGrantsMayResume();
}

void Persistence::OnNewFile(const std::string&) {
  // The record must name the log in use, or a crash now would find a log
  // the record does not vouch for, and quarantine.
  policy_->OnLogChanged(clock_.MonoMs());
}

void Persistence::OnRewriteStarted() {
  // Records appended from now on also go to the new file, which starts
  // without the clock annotation they would rely on.
  store_.ForgetClockMark();
}

// ---------------------------------------------------------------- the reply hold

void Persistence::Hold(Connection& c, size_t reply_start, uint64_t changes_before) {
  if (log_ == nullptr || store_.changes() == changes_before) return;
  if (c.held_from == Connection::kNotHeld) {
    c.held_from = reply_start;
    ++held_;
  }
  c.held_until = log_->appended_end();
  c.last_write_offset = c.held_until;  // what WAITAOF waits for
}

void Persistence::Released(Connection&) {
  --held_;
}

void Persistence::Waiting(Connection& c) {
  if (c.log_waiting) return;
  c.log_waiting = true;
  waiting_.push_back(&c);
}

void Persistence::ReleaseWaiting() {
  std::vector<Connection*> still;
  std::vector<Connection*> ready;
  for (Connection* c : waiting_) {
    if (c->held_from != Connection::kNotHeld && !ReplyIsDurable(c->held_until)) {
      still.push_back(c);
    } else {
      c->log_waiting = false;
      ready.push_back(c);
    }
  }
  waiting_.swap(still);
  for (Connection* c : ready) listener_.OnReplyDurable(*c);
}

// ---------------------------------------------------------------- WAITAOF

ServerControl::LogDurability Persistence::durability() const {
  ServerControl::LogDurability d;
  d.enabled = log_ != nullptr;
  d.fsynced_end = log_ != nullptr ? log_->synced_end() : 0;
  return d;
}

void Persistence::ParkForFsync(Connection& c, bool local, int64_t numreplicas, int64_t deadline) {
  c.blocked = true;
  fsync_waits_.push_back({&c, local, numreplicas, deadline});
}

bool Persistence::EndFsyncWait(Connection& c, bool error) {
  auto it = std::find_if(fsync_waits_.begin(), fsync_waits_.end(),
                         [&](const FsyncWait& w) { return w.client == &c; });
  if (it == fsync_waits_.end()) return false;
  fsync_waits_.erase(it);
  const ServerControl::LogDurability log = durability();
  const bool synced = log.enabled && log.fsynced_end >= c.last_write_offset;
  size_t start = c.output().size();
  resp::ReplyWriter reply(&c.output(), c.resp);
  if (error) {
    reply.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
  } else {
    reply.Array(2);
    reply.Int(synced ? 1 : 0);
    reply.Int(0);
  }
  listener_.OnWaitAnswered(c, start);
  return true;
}

void Persistence::ServeFsyncWaits(int64_t now) {
  const ServerControl::LogDurability log = durability();
  std::vector<FsyncWait> still;
  std::vector<FsyncWait> answer;
  for (const FsyncWait& w : fsync_waits_) {
    const bool synced = log.enabled && log.fsynced_end >= w.client->last_write_offset;
    // No replica ever acknowledges: a wait for one ends only at its deadline.
    const bool met = (synced || !w.local) && w.numreplicas <= 0;
    if (!met && (w.deadline == 0 || now < w.deadline)) {
      still.push_back(w);
    } else {
      answer.push_back(w);
    }
  }
  fsync_waits_.swap(still);
  for (const FsyncWait& w : answer) {
    Connection& c = *w.client;
    const bool synced = log.enabled && log.fsynced_end >= c.last_write_offset;
    size_t start = c.output().size();
    resp::ReplyWriter reply(&c.output(), c.resp);
    reply.Array(2);
    reply.Int(synced ? 1 : 0);
    reply.Int(0);
    listener_.OnWaitAnswered(c, start);
  }
}

void Persistence::Forget(Connection& c) {
  std::erase_if(fsync_waits_, [&](const FsyncWait& w) { return w.client == &c; });
  if (c.log_waiting) {
    std::erase(waiting_, &c);
    c.log_waiting = false;
  }
  if (c.held_from != Connection::kNotHeld) {
    c.held_from = Connection::kNotHeld;
    --held_;
  }
}

// ---------------------------------------------------------------- control

std::optional<std::string> Persistence::Rewrite(const TimeSnapshot& now) {
  if (log_ == nullptr) return "the append-only log is disabled (appendonly no)";
  store_.ForgetClockMark();
  return log_->Rewrite(
      [this, now](aof::Batch& out, const std::function<bool()>& drain) {
        return store_.WriteSnapshot(out, drain, now);
      },
      now.mono);
}

void Persistence::SimulatePowerLoss() {
  if (log_ != nullptr) log_->SimulatePowerLoss();
  log::Warning("DEBUG POWERLOSS: exiting without a clean shutdown (appendonly no).");
  spdlog::default_logger()->flush();
  ::_exit(1);
}

std::optional<std::string> Persistence::Reconfigure(uint32_t effects, int64_t now) {
  // The lease policy first: a change that weakens what the state record
  // promises (appendfsync always → everysec, a longer cap) is recorded before
  // it takes effect, or does not happen.
  if ((effects & kEffectLeasePolicy) && !policy_->OnConfigChange(now)) {
    return "the state record latch.state could not be written (" + policy_->record_error() +
           "), so the change cannot be recorded";
  }
  if ((effects & kEffectLogWriter) && log_ != nullptr) log_->set_policy(config_.appendfsync);
  return std::nullopt;
}

void Persistence::Shutdown(int64_t now, bool orderly) {
  // The run is recorded as clean only if the log holds every acknowledged
  // write, on disk.
  bool log_clean = log_ == nullptr || log_->Shutdown();
  if (orderly) policy_->Shutdown(now, log_clean);
}

}  // namespace latch
