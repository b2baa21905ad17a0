#include "server/server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>

#include "protocol/reply_writer.h"
#include "server/connection.h"
#include "server/db_key.h"
#include "server/faults.h"
#include "server/history.h"
#include "server/log.h"
#include "server/monitor.h"

namespace latch {

namespace {

std::string RandomHex(size_t n) {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out.push_back(kHex[rd() % 16]);
  return out;
}

// The log library's messages go to the server's log.
void LogMessage(aof::Severity severity, const std::string& text) {
  if (severity == aof::Severity::kWarning) {
    log::Warning("{}", text);
  } else {
    log::Notice("{}", text);
  }
}

// "127.0.0.1:7001": how the history names this node (the first bind
// address, without the optional-address mark).
std::string NodeName(const Config& config) {
  std::string host = config.bind.empty() ? "127.0.0.1" : config.bind.front();
  if (!host.empty() && host[0] == '-') host.erase(0, 1);
  return host + ":" + std::to_string(config.port);
}

}  // namespace

Server::Server(Config config, std::unique_ptr<Clock> clock)
    : config_(std::move(config)),
      commands_(CommandRegistry::Get()),
      clock_(std::move(clock)),
      store_(clock_->Id(), static_cast<int>(config_.databases)),
      watches_(store_),
      bio_(std::make_unique<BackgroundIo>()),
      policy_(
          std::make_unique<LeasePolicy>(config_, *bio_, clock_->Id(), commands_.ReleaseCommands())),
      grants_(store_, *policy_, lock_waits_),
      gate_(commands_, store_, grants_, *this, *this) {
  uv_loop_init(&loop_);
  aof::SetMessageSink(LogMessage);
  run_id_ = RandomHex(40);
  replid_ = RandomHex(40);
  start_mono_ms_ = clock_->MonoMs();
  gate_.Configure(config_);
  gate_.set_memory_guard([this] { return WithinMemoryLimit(); });
  store_.set_encoding_limits(EncodingLimitsOf(config_));
  store_.set_key_observer([this](int db, std::string_view key) {
    watches_.Touched(db, key);
    if (!lock_waits_.empty()) lock_waits_.Touched(DbKey(db, key));
  });
  store_.set_flush_observer([this](int db) {
    watches_.TouchedAll(db);
    // Every queue is looked at again (those of other databases find their
    // key still held and stay as they are).
    lock_waits_.TouchedAll();
  });
  store_.set_expiry_observer([this](std::string_view) { ++stats_.expired_keys; });
  // The test bench (faults.h, history.h): the history file is opened by Run().
  if (!config_.history_file.empty()) {
    history_ = std::make_unique<History>(config_.history_file, NodeName(config_), *clock_);
  }
  faults_ = std::make_unique<Faults>(*this, history_.get());
  startup_memory_ = memory().used;
}

Server::~Server() {
  // Finish background jobs first: they refer to the log and the lease policy.
  bio_->Drain();
  CloseAll();
  // Let libuv deliver the close callbacks, which free the handles.
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
}

TimeSnapshot Server::Now() {
  // One reading in µs: it is also where the gate starts timing the commands
  // that follow (gate.h, Timing).
  int64_t mono_us = clock_->MonoUs();
  gate_.set_clock_mark_us(mono_us);
  int64_t mono = mono_us / 1000;
  int64_t offset = clock_->WallMs() - mono;
  if (wall_offset_ms_ == INT64_MIN || offset > wall_offset_ms_ + 2 ||
      offset < wall_offset_ms_ - 2) {
    wall_offset_ms_ = offset;
  }
  return {mono, mono + wall_offset_ms_};
}

// ---------------------------------------------------------------- lifecycle

bool Server::LockDataDirectory() {
  // One server per data directory: two would overwrite each other's state
  // record (one's "clean" hiding the other's "running") and interleave their
  // logs. The lock goes with the process, however it ends.
  dir_lock_.reset(::open("latch.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!dir_lock_) {
    log::Warning("Can't open latch.lock in the data directory {}: {}", config_.dir,
                 std::strerror(errno));
    return false;
  }
  if (::flock(dir_lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    log::Warning(
        "Another latch-server is using the data directory {} (latch.lock is locked). Stop it "
        "first, or give this one another --dir.",
        config_.dir);
    return false;
  }
  return true;
}

int Server::Run() {
  if (!AdjustOpenFilesLimit() || !LockDataDirectory()) {
    CloseAll();
    return 1;
  }
  log::Notice("latch {} (Redis protocol, lock server) starting: pid={}, port={}, config file {}",
              kLatchVersion, static_cast<int>(getpid()), config_.port,
              config_.config_file.empty() ? "(none: defaults)" : config_.config_file);
  if (!Listen()) {
    CloseAll();
    return 1;
  }
  if (history_ != nullptr) {
    if (auto err = history_->Open()) {
      log::Warning("{}", *err);
      CloseAll();
      return 1;
    }
    store_.set_change_observer([this](const KeyChange& c) { history_->OnChange(c); });
  }

  uv_timer_init(&loop_, cron_timer_.get());
  cron_timer_.MarkInitialized();
  cron_timer_->data = this;
  RestartCronTimer();

  uv_prepare_init(&loop_, before_sleep_.get());
  before_sleep_.MarkInitialized();
  before_sleep_->data = this;
  uv_prepare_start(before_sleep_.get(), OnBeforeSleep);

  for (auto* sig : {&sigterm_, &sigint_}) {
    uv_signal_init(&loop_, sig->get());
    sig->MarkInitialized();
    (*sig)->data = this;
  }
  uv_signal_start(sigterm_.get(), OnSignal, SIGTERM);
  uv_signal_start(sigint_.get(), OnSignal, SIGINT);

  StartLoading();
  uv_run(&loop_, UV_RUN_DEFAULT);
  AnnounceStopping();

  // Shutting down: replies already produced still go out, the log is
  // written and fsynced, then every connection closes. The run is recorded
  // as clean only if the log holds every acknowledged write, on disk.
  BeforeSleep();
  bool log_clean = log_ == nullptr || log_->Shutdown();
  if (exit_code_ == 0) {
    policy_->Shutdown(clock_->MonoMs(), log_clean);
    log::Notice("latch is now ready to exit, bye bye...");
  }
  CloseAll();
  return exit_code_;
}

void Server::Fatal(const std::string& message) {
  log::Warning("{}", message);
  exit_code_ = 1;
  StopLoop();
}

void Server::StartLoading() {
  TimeSnapshot now = Now();
  // The previous run's record first: it says how far to trust the log's
  // times and the log itself, and whether this start is quarantined.
  log_identity_ = aof::ReadLogIdentity(config_.appendfilename);
  policy_->Begin(now.mono, log_identity_);
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
    AnnounceReady();
    return;
  }
  replay_ = std::make_unique<Replay>(config_, store_);
  // After a clean stop with this very log synced, a torn tail is damage.
  replay_->set_tail_must_be_complete(policy_->tail_must_be_complete());
  if (auto err = replay_->Open()) return Fatal(*err);
  replay_clock_ = ReplayClock{};
  replay_clock_.clock_id = clock_->Id();
  replay_clock_.now = now;
  replay_clock_.foreign_bound = policy_->foreign_bound();
  if (!replay_->exists()) {
    FinishLoading();
    return;
  }
  // Replay in slices so that clients connecting meanwhile are told LOADING.
  gate_.set_loading(true);
  loading_start_ms_ = now.mono;
  last_progress_log_ms_ = loading_start_ms_;
  log::Notice("Loading the append only file '{}' ({} bytes)...", config_.appendfilename,
              replay_->total_bytes());
  uv_idle_init(&loop_, load_idle_.get());
  load_idle_.MarkInitialized();
  load_idle_->data = this;
  uv_idle_start(load_idle_.get(), OnLoadStep);
}

void Server::OnLoadStep(uv_idle_t* idle) {
  static_cast<Server*>(idle->data)->LoadStep();
}

void Server::LoadStep() {
  Replay::State state = replay_->Step(replay_clock_, 50'000);
  int64_t now = clock_->MonoMs();
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

void Server::FinishLoading() {
  if (replay_) truncated_at_ = replay_->truncated_at();
  // This run's record before anything else is created or granted: a crash
  // from here on is never mistaken for the previous run's stop, and the
  // leases just replayed are under its horizon.
  LeasePolicy::ReplayFacts facts;
  facts.max_deadline = store_.MaxDeadline();
  facts.cut_at = truncated_at_;
  policy_->Start(clock_->MonoMs(), facts);
  log_ = std::make_unique<aof::Writer>(config_.appendfilename, config_.appendfsync, *bio_);
  if (auto err = log_->Open()) {
    log_.reset();
    return Fatal(*err);
  }
  // A new log file (a fresh directory): the record names it.
  if (log_->log_id() != log_identity_.id) policy_->OnLogChanged(clock_->MonoMs());
  log_id_seen_ = log_->log_id();
  store_.set_log(&log_->batch());
  gate_.set_log(log_.get());
  gate_.set_loading(false);
  log::Notice("Ready to accept connections tcp (appendonly yes, appendfsync {})",
              FsyncPolicyName(config_.appendfsync));
  AnnounceReady();
}

void Server::RestartCronTimer() {
  // CONFIG SET hz on a server whose loop has not started (in-process tests):
  // the timer starts with the new period in Run().
  if (!cron_timer_.initialized()) return;
  uint64_t period = static_cast<uint64_t>(std::max<int64_t>(1, 1000 / config_.hz));
  uv_timer_start(cron_timer_.get(), OnCron, period, period);
}

void Server::RequestShutdown() {
  if (shutting_down_) return;
  log::Notice("User requested shutdown...");
  StopLoop();
}

void Server::StopLoop() {
  shutting_down_ = true;
  // Stop accepting at once; the loop ends after this iteration. (Poll
  // handles go before the sockets they watch.)
  acceptors_.clear();
  for (auto& l : listeners_) l.Close();
  listeners_.clear();
  uv_stop(&loop_);
}

void Server::CloseAll() {
  load_idle_.Close();
  if (faults_ != nullptr) faults_->Close();
  resume_idle_.Close();
  lock_timer_.Close();
  acceptors_.clear();
  for (auto& l : listeners_) l.Close();
  listeners_.clear();
  cron_timer_.Close();
  before_sleep_.Close();
  sigterm_.Close();
  sigint_.Close();
  while (clients_head_ != nullptr) clients_head_->Close();
}

void Server::OnSignal(uv_signal_t* s, int signum) {
  auto* server = static_cast<Server*>(s->data);
  log::Warning("Received {} scheduling shutdown...", signum == SIGINT ? "SIGINT" : "SIGTERM");
  server->RequestShutdown();
}

// ---------------------------------------------------------------- requests

bool Server::Dispatch(Connection& client, std::span<const std::string_view> argv,
                      TimeSnapshot now) {
  // The test bench: a client cut off by FAULT PARTITION is closed instead.
  if (faults_->active() && faults_->Refuses(client)) {
    client.CloseAfterReply();
    return false;
  }
  resp::ReplyWriter reply(&client.output(), client.resp);
  reply.set_error_observer(this);
  size_t reply_start = client.output().size();
  uint64_t changes_before = store_.changes();
  const CommandSpec* cmd = gate_.Execute(client, argv, now, reply).cmd;
  // A reply that reports an effect leaves only once the log has the
  // effect's record (written; under appendfsync always also fsynced):
  // Connection::Flush holds it back until then. So a process crash never
  // loses an acknowledged write, whatever the policy.
  HoldForLog(client, reply_start, changes_before);
  // A key with waiters released or expired by this command goes to its
  // first waiter now, before any other request runs (lock_waits.cc).
  if (lock_waits_.has_touched()) ServeLockWaits();
  if (client.blocked) return false;  // parked: the reply comes when the wait ends
  bool kept = FinishReply(client, reply_start);
  // The test bench: FAULT DELAY / DROP of this reply.
  if (faults_->active()) faults_->AfterCommand(client, cmd, reply_start);
  client.NoteOutput();
  return kept;
}

void Server::HoldForLog(Connection& client, size_t reply_start, uint64_t changes_before) {
  if (log_ == nullptr || store_.changes() == changes_before) return;
  if (client.held_from == Connection::kNotHeld) {
    client.held_from = reply_start;
    ++held_clients_;
  }
  client.held_until = log_->appended_end();
  client.last_write_offset = client.held_until;  // what WAITAOF waits for
}

bool Server::FinishReply(Connection& client, size_t reply_start) {
  // CLIENT REPLY OFF or SKIP: the reply was written like any other (the
  // handlers need not know) and is cut off here. Redis checks the flags as
  // each reply is written; checking once the command is over gives the same
  // result, since only CLIENT REPLY changes them and it writes its +OK (for
  // ON) after changing them.
  bool kept = !client.ReplySuppressed();
  if (!kept) client.output().resize(reply_start);
  client.reply_skip_this = std::exchange(client.reply_skip_next, false);
  return kept;
}

void Server::OnErrorReply(std::string_view text) {
  ++stats_.total_error_replies;
  // The error's code is its first word, as Redis counts them (up to 32
  // characters; "ERR" when there is none).
  std::string_view code = "ERR";
  size_t space = text.substr(0, 32).find(' ');
  if (space != std::string_view::npos && space > 0) code = text.substr(0, space);
  auto it = stats_.errors.find(code);
  if (it == stats_.errors.end()) it = stats_.errors.emplace(std::string(code), 0).first;
  ++it->second;
}

void Server::OnClientOutput(Connection& c) {
  if (!c.pending_flush_) {
    c.pending_flush_ = true;
    pending_flush_.push_back(&c);
  }
}

void Server::ForEachSession(const std::function<void(Session&)>& f) {
  for (Connection* c = clients_head_; c != nullptr;) {
    Connection* next = c->next_;
    f(*c);
    c = next;
  }
}

void Server::AddMonitor(Session& s) {
  // Every session the server hands to a command is one of its connections.
  auto& c = static_cast<Connection&>(s);
  if (c.monitor) return;
  c.monitor = true;
  monitors_.push_back(&c);
  gate_.set_executed_hook([this](const Session& from, std::span<const std::string_view> argv,
                                 const CommandSpec& cmd) { FeedMonitors(from, argv, cmd); });
}

void Server::RemoveMonitor(Session& s) {
  auto& c = static_cast<Connection&>(s);
  if (!c.monitor) return;
  c.monitor = false;
  std::erase(monitors_, &c);
  if (monitors_.empty()) gate_.set_executed_hook(nullptr);
}

void Server::FeedMonitors(const Session& from, std::span<const std::string_view> argv,
                          const CommandSpec& cmd) {
  if (monitors_.empty()) return;
  std::string line = MonitorLine(clock_->WallUs(), from.db, from.addr, argv, cmd);
  for (Connection* m : monitors_) {
    if (m->closing()) continue;
    m->output() += line;
    OnClientOutput(*m);
  }
}

void Server::OnClientClosed(Connection& c) {
  if (!c.watched_keys.empty()) watches_.UnwatchAll(c);
  ForgetWaits(c);
  if (c.monitor) {
    std::erase(monitors_, &c);
    if (monitors_.empty()) gate_.set_executed_hook(nullptr);
  }
  if (c.held_from != Connection::kNotHeld) {
    c.held_from = Connection::kNotHeld;
    --held_clients_;
  }
  if (c.pending_flush_) {
    std::erase(pending_flush_, &c);
    c.pending_flush_ = false;
  }
  if (c.prev_ != nullptr) c.prev_->next_ = c.next_;
  if (c.next_ != nullptr) c.next_->prev_ = c.prev_;
  if (clients_head_ == &c) clients_head_ = c.next_;
  c.prev_ = c.next_ = nullptr;
  --num_clients_;
}

// ---------------------------------------------------------------- the loop

void Server::OnBeforeSleep(uv_prepare_t* p) {
  static_cast<Server*>(p->data)->BeforeSleep();
}

void Server::BeforeSleep() {
  // The log first: one write (and, for appendfsync always, one fdatasync)
  // for every record of this iteration, so no reply below can report an
  // effect the log does not have.
  if (log_ != nullptr) {
    bool was_rewriting = log_->rewrite_in_progress();
    const int64_t start_us = clock_->MonoUs();
    log_->Flush(start_us / 1000);
    if (config_.latency_monitor_threshold > 0) {
      // The log's write (and, under appendfsync always, its fsync): Redis's
      // "aof-write" latency event.
      int64_t ms = (clock_->MonoUs() - start_us) / 1000;
      if (ms >= config_.latency_monitor_threshold) {
        latency_.Add("aof-write", ms, clock_->WallMs() / 1000);
      }
    }
    if (!log_->fatal_error().empty()) {
      // No reply may leave: exit now, and the next start treats this run
      // as a crash (its record still says "running").
      log::Warning("{}", log_->fatal_error());
      spdlog::default_logger()->flush();
      ::_exit(1);
    }
    if (!was_rewriting && log_->rewrite_in_progress()) store_.ForgetClockMark();
  }
  // WAITAOF requests that the log's fsync (just now, or by the background
  // thread since) has satisfied: their replies go out with the others.
  if (!fsync_waits_.empty()) ServeFsyncWaits(clock_->MonoMs());
  // Then every connection with output gets one write. Flush() may close a
  // connection, which removes it from pending_flush_, so walk a copy.
  std::vector<Connection*> flush;
  flush.swap(pending_flush_);
  for (Connection* c : flush) {
    if (!c->pending_flush_) continue;  // closed meanwhile
    c->Flush();
  }
}

void Server::OnCron(uv_timer_t* t) {
  static_cast<Server*>(t->data)->Cron();
}

void Server::Cron() {
  ++cron_runs_;
  // Accepting stopped for want of file descriptors: try again.
  if (accept_paused_) {
    accept_paused_ = false;
    if (!spare_fd_) spare_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    for (auto& a : acceptors_) uv_poll_start(a.get(), UV_READABLE, OnAcceptable);
  }
  TimeSnapshot now = Now();

  // Active expiry: up to 25% of the cron period, as Redis's slow cycle.
  int64_t budget_us = 25 * 1000 * 1000 / 100 / config_.hz;
  if (config_.latency_monitor_threshold > 0) {
    const int64_t start_us = clock_->MonoUs();
    store_.ActiveExpireCycle(now.mono, budget_us);
    int64_t ms = (clock_->MonoUs() - start_us) / 1000;
    if (ms >= config_.latency_monitor_threshold) {
      latency_.Add("expire-cycle", ms, now.wall_ms / 1000);
    }
  } else {
    store_.ActiveExpireCycle(now.mono, budget_us);
  }
  // Finish any resize of the hash table a little at a time.
  store_.RehashStep(100);

  policy_->Cron(now.mono);
  if (log_ != nullptr) {
    bool was_rewriting = log_->rewrite_in_progress();
    log_->Cron(now.mono);
    if (!was_rewriting && log_->rewrite_in_progress()) store_.ForgetClockMark();
    // The lease policy hears of what the log went through: a failed fsync
    // (the run is not "always throughout" any more), a new file (a rewrite).
    if (log_->sync_failed() && !sync_failure_reported_) {
      sync_failure_reported_ = true;
      policy_->OnLogSyncFailure(now.mono);
    }
    if (log_->log_id() != log_id_seen_) {
      log_id_seen_ = log_->log_id();
      policy_->OnLogChanged(now.mono);
    }
    // The automatic rewrite, once the log has grown enough since the last.
    if (!log_->rewrite_in_progress() && !log_->rewrite_scheduled() &&
        config_.auto_aof_rewrite_percentage > 0 &&
        log_->current_size() > static_cast<uint64_t>(config_.auto_aof_rewrite_min_size)) {
      uint64_t base = std::max<uint64_t>(log_->base_size(), 1);
      uint64_t growth = (log_->current_size() - std::min(log_->current_size(), base)) * 100 / base;
      if (growth >= static_cast<uint64_t>(config_.auto_aof_rewrite_percentage)) {
        log::Notice("Starting automatic rewriting of AOF on {}% growth", growth);
        if (auto err = StartRewrite(now)) {
          log::Warning("Can't rewrite the append-only file: {}", *err);
        }
      }
    }
    // Replies parked behind a log that could not be written (or a write
    // postponed behind a slow fsync): once it is written they may leave.
    if (held_clients_ > 0) {
      ForEachSession([&](Session& s) {
        auto& c = static_cast<Connection&>(s);
        if (c.held_from != Connection::kNotHeld && ReplyIsDurable(c.held_until)) {
          OnClientOutput(c);
        }
      });
    }
  }

  // Parked WAITAOF requests whose deadline passed (or whose fsync happened
  // while the loop slept).
  if (!fsync_waits_.empty()) ServeFsyncWaits(now.mono);
  // Lock waiters: keys the expiry cycle removed, and grants the lease
  // policy refused until now (a quarantine that ended, a state record that
  // can be written again).
  if (!lock_waits_.empty()) {
    lock_waits_.TouchRetries();
    ServeLockWaits();
  }

  // Idle clients and clients stuck over their output limit.
  ForEachSession([&](Session& s) {
    auto& c = static_cast<Connection&>(s);
    if (c.closing()) return;
    // (A client parked by WAITAOF waits on purpose: its own timeout ends it.)
    if (config_.timeout > 0 && !c.monitor && !c.blocked &&
        now.mono - c.last_interaction_ms > config_.timeout * 1000) {
      log::Verbose("Closing idle client id={} addr={}", c.id(), c.addr);
      c.Close();
      return;
    }
    if (c.pending_output() > 0) c.CheckOutputLimits();
    c.CronOutputPeak(now.mono);
    // A client idle for a while gives its buffers back (10,000 idle clients
    // would otherwise hold 16 KiB of query buffer each).
    if (now.mono - c.last_interaction_ms > 2000) c.ReleaseIdleBuffers();
  });

  // instantaneous_ops_per_sec: one sample every 100 ms.
  if (now.mono - stats_.ops_sample_time_ms >= 100) {
    int64_t dt = now.mono - stats_.ops_sample_time_ms;
    auto rate = [&](uint64_t total, uint64_t& last) {
      uint64_t per_second =
          stats_.ops_sample_time_ms == 0 ? 0 : (total - last) * 1000 / static_cast<uint64_t>(dt);
      last = total;
      return per_second;
    };
    const int i = stats_.ops_sample_index;
    stats_.ops_samples[i] = rate(stats_.total_commands_processed, stats_.ops_sample_count);
    stats_.input_samples[i] = rate(stats_.total_net_input_bytes, stats_.input_sample_bytes);
    stats_.output_samples[i] = rate(stats_.total_net_output_bytes, stats_.output_sample_bytes);
    stats_.ops_sample_index = (i + 1) % Stats::kOpsSamples;
    stats_.ops_sample_time_ms = now.mono;
    // The peak of used memory (INFO used_memory_peak), once a second.
    if (cron_runs_ % config_.hz == 0) memory();
  }
}

// ---------------------------------------------------------------- control

std::optional<std::string> Server::Reconfigure(const Config& updated, uint32_t effects) {
  Config before = config_;
  config_ = updated;
  if (auto err = ApplyEffects(effects)) {
    // All or nothing: put every value back and let the server act on the
    // old values again.
    config_ = before;
    ApplyEffects(effects);
    return err;
  }
  return std::nullopt;
}

std::optional<std::string> Server::ApplyEffects(uint32_t effects) {
  if (effects & kEffectMaxClients) {
    // More clients need more file descriptors: raise the limit now, as at
    // start-up. If the system allows fewer, say how many it allows (Redis's
    // words) rather than accept clients the server cannot take.
    int64_t requested = config_.maxclients;
    if (!AdjustOpenFilesLimit() || config_.maxclients != requested) {
      return "The operating system is not able to handle the specified number of clients, "
             "try with " +
             std::to_string(config_.maxclients);
    }
  }
  // The lease policy first: a change that weakens what the state record
  // promises (appendfsync always → everysec, a longer cap) is recorded before
  // it takes effect, or does not happen.
  if ((effects & kEffectLeasePolicy) && !policy_->OnConfigChange(clock_->MonoMs())) {
    return "the state record latch.state could not be written (" + policy_->record_error() +
           "), so the change cannot be recorded";
  }
  if (effects & kEffectCron) RestartCronTimer();
  if (effects & kEffectLogLevel) log::SetLevel(config_.loglevel);
  if ((effects & kEffectLogWriter) && log_ != nullptr) log_->set_policy(config_.appendfsync);
  if (effects & kEffectDiagnostics) gate_.Configure(config_);
  if (effects & kEffectEncodings) store_.set_encoding_limits(EncodingLimitsOf(config_));
  if (effects & kEffectMaxMemory) gate_.Configure(config_);
  if (effects & kEffectAppendOnly) return SwitchAppendOnly();
  return std::nullopt;
}

std::optional<std::string> Server::StartRewrite(const TimeSnapshot& now) {
  if (log_ == nullptr) return "the append-only log is disabled (appendonly no)";
  store_.ForgetClockMark();
  return log_->Rewrite(
      [this, now](aof::Batch& out, const std::function<bool()>& drain) {
        return store_.WriteSnapshot(out, drain, now);
      },
      now.mono);
}

void Server::SimulatePowerLoss() {
  if (log_ != nullptr) log_->SimulatePowerLoss();
  log::Warning("DEBUG POWERLOSS: exiting without a clean shutdown (appendonly no).");
  spdlog::default_logger()->flush();
  ::_exit(1);
}

}  // namespace latch
