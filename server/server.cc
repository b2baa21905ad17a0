#include "server/server.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "protocol/reply_writer.h"
#include "server/connection.h"
#include "server/db_key.h"
#include "server/faults.h"
#include "server/history.h"
#include "server/log.h"
#include "server/monitor.h"
#include "server/prefetch.h"
#include "server/tls/context.h"
#include "server/uring.h"

namespace latch {

namespace {

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
      persistence_(std::make_unique<Persistence>(config_, *clock_, store_,
                                                 commands_.ReleaseCommands(),
                                                 static_cast<Persistence::Listener&>(*this))),
      grants_(store_, persistence_->policy(), waiters_),
      gate_(commands_, store_, grants_, pubsub_, *this, *this),
      diagnostics_(clock_->MonoMs()),
      clients_(&loop_),
      listeners_(config_, &loop_, *clock_, diagnostics_.stats(), clients_, *this) {
  uv_loop_init(&loop_);
  aof::SetMessageSink(LogMessage);
  gate_.Configure(config_);
  gate_.set_memory_guard([this] { return WithinMemoryLimit(); });
  // ACL: the default user's password is requirepass; ACL LOG describes a
  // client as CLIENT LIST does; a deleted user's sessions end.
  gate_.set_acl_users(&acl_users_);
  acl_users_.log_max_len = static_cast<size_t>(config_.acllog_max_len);
  acl_users_.SetRequirePass(config_.requirepass);
  if (auto err = acl::LoadConfigured(acl_users_, config_)) {
    log::Warning("Error loading the configured ACL users: {}", *err);
  }
  // requirepass, when set, is the default user's password (Redis applies
  // it after the users).
  if (!config_.requirepass.empty()) acl_users_.SetRequirePass(config_.requirepass);
  acl_users_.client_info = [this](const Session& s) {
    std::string line = commands::ClientLine(clock_->MonoMs(), s, 0);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    return line;
  };
  acl_users_.on_delete = [this](const acl::User* u) {
    ForEachSession([u](Session& s) {
      if (s.user != u) return;
      s.user = nullptr;
      s.authenticated = false;
      s.Close();
    });
  };
  store_.set_encoding_limits(EncodingLimitsOf(config_));
  store_.set_key_observer([this](int db, std::string_view key) {
    watches_.Touched(db, key);
    if (!waiters_.empty()) waiters_.Touched(DbKey(db, key));
  });
  store_.set_flush_observer([this](int db) {
    watches_.TouchedAll(db);
    // Every queue is looked at again (those of other databases find their
    // key still held and stay as they are).
    waiters_.TouchedAll();
  });
  store_.set_expiry_observer([this](int db, std::string_view key) {
    ++diagnostics_.stats().expired_keys;
    pubsub_.Notify(kNotifyExpired, "expired", key, db);
  });
  store_.set_new_key_observer(
      [this](int db, std::string_view key) { pubsub_.Notify(kNotifyNew, "new", key, db); });
  pubsub_.set_notify_flags(config_.notify_keyspace_events);
  // The test bench (faults.h, history.h): the history file is opened by Run().
  if (!config_.history_file.empty()) {
    history_ = std::make_unique<History>(config_.history_file, NodeName(config_), *clock_);
  }
  faults_ = std::make_unique<Faults>(*this, *clock_, history_.get());
  // The script engine; the Store hands it replayed FUNCTION records and
  // asks it for the libraries in a rewrite.
  scripts_ = std::make_unique<scripting::Engine>(*this, config_);
  store_.set_library_replayer([this](const aof::Record& r) -> std::string {
    std::string error;
    switch (r.op) {
      case aof::Op::kFunctionLoad:
        if (!scripts_->LoadLibrary(r.value, /*replace=*/true, &error, /*replaying=*/true)) {
          return "FUNCTION LOAD of a library that does not load: " + error;
        }
        return {};
      case aof::Op::kFunctionDelete:
        scripts_->DeleteLibrary(r.key);
        return {};
      case aof::Op::kFunctionFlush:
        scripts_->FlushLibraries();
        return {};
      default:
        return {};
    }
  });
  store_.set_library_lister([this](const std::function<void(std::string_view)>& f) {
    for (const auto& [name, lib] : scripts_->libraries()) f(lib.code);
  });
  diagnostics_.MarkStartup(memory().used);
}

Server::~Server() {
  // Finish background jobs first: they refer to the log and the lease policy.
  persistence_->Drain();
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
  if (!Listeners::AdjustOpenFilesLimit(config_) || !LockDataDirectory()) {
    CloseAll();
    return 1;
  }
  log::Notice("latch {} (Redis protocol, lock server) starting: pid={}, port={}, config file {}",
              kLatchVersion, static_cast<int>(getpid()), config_.port,
              config_.config_file.empty() ? "(none: defaults)" : config_.config_file);
  if (!listeners_.Listen()) {
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

  StartIoRing();

  uv_prepare_init(&loop_, before_sleep_.get());
  before_sleep_.MarkInitialized();
  before_sleep_->data = this;
  uv_prepare_start(before_sleep_.get(), OnBeforeSleep);

  const int signums[] = {SIGTERM, SIGINT};
  for (size_t i = 0; i < signals_.size(); ++i) {
    uv_signal_init(&loop_, signals_[i].get());
    signals_[i].MarkInitialized();
    signals_[i]->data = this;
    uv_signal_start(signals_[i].get(), OnSignal, signums[i]);
  }

  persistence_->Start(&loop_, Now());
  uv_run(&loop_, UV_RUN_DEFAULT);
  listeners_.AnnounceStopping();

  // Shutting down: replies already produced still go out, the log is
  // written and fsynced, then every connection closes. The run is recorded
  // as clean only if the log holds every acknowledged write, on disk.
  BeforeSleep();
  persistence_->Shutdown(clock_->MonoMs(), exit_code_ == 0);
  if (exit_code_ == 0) log::Notice("latch is now ready to exit, bye bye...");
  CloseAll();
  return exit_code_;
}

void Server::Fatal(const std::string& message) {
  log::Warning("{}", message);
  exit_code_ = 1;
  StopLoop();
}

void Server::OnLoading() {
  gate_.set_loading(true);
}

void Server::OnServing(const aof::Writer* log) {
  gate_.set_log(log);
  gate_.set_loading(false);
  listeners_.AnnounceReady(persistence_->policy(), clock_->MonoMs());
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
  // Stop accepting at once; the loop ends after this iteration.
  listeners_.Close();
  uv_stop(&loop_);
}

void Server::CloseAll() {
  persistence_->CloseHandles();
  if (faults_ != nullptr) faults_->Close();
  clients_.CloseHandles();
  lock_timer_.Close();
  listeners_.Close();
  cron_timer_.Close();
  before_sleep_.Close();
  for (auto& sig : signals_) sig.Close();
  clients_.CloseAll();
  if (ring_ != nullptr) {
    // The connections just closed cancelled their ring operations: wait for
    // the last completions (they free nothing before their uv handles
    // close, in the loop run that follows), then stop watching the ring.
    ring_->Drain();
    ring_->CloseHandles();
  }
}

void Server::StartIoRing() {
  if (!config_.io_uring) return;
  std::string error;
  ring_ = IoRing::Create(4096, &Connection::OnRingCompletion, &error);
  if (ring_ == nullptr) {
    log::Warning("io-uring yes, but the kernel refused io_uring ({}): using epoll", error);
    return;
  }
  ring_->Watch(&loop_);
  clients_.set_ring(ring_.get());
  log::Notice("Client connections use io_uring");
}

void Server::OnSignal(uv_signal_t* s, int signum) {
  auto* server = static_cast<Server*>(s->data);
  log::Warning("Received {} scheduling shutdown...", signum == SIGINT ? "SIGINT" : "SIGTERM");
  server->RequestShutdown();
}

// ---------------------------------------------------------------- requests

size_t Server::Prefetch(const Connection& client, std::string_view input) {
  return PipelinePrefetch::Run(input, store_.keyspace_of(client.db), CommandRegistry::Get())
      .requests;
}

bool Server::Dispatch(Connection& client, std::span<const std::string_view> argv,
                      TimeSnapshot now) {
  // The test bench: a client cut off by FAULT PARTITION is closed instead.
  if (faults_->active() && faults_->Refuses(client)) {
    client.CloseAfterReply();
    return false;
  }
  // A lease with lock waiters that ended before this request runs goes to
  // its first waiter first. (Its timer fires at the start of the next loop
  // iteration; a request read in this one — or pipelined behind a slow one
  // — would otherwise find the key gone and could take it from the queue.)
  if (!waiters_.empty() && waiters_.NextDue() <= now.mono) ServeWaiters();
  resp::ReplyWriter reply(&client.output(), client.resp);
  reply.set_error_observer(this);
  size_t reply_start = client.output().size();
  uint64_t changes_before = store_.changes();
  clients_.set_executing(&client);
  const CommandSpec* cmd = gate_.Execute(client, argv, now, reply).cmd;
  clients_.set_executing(nullptr);
  // A reply that reports an effect leaves only once the log has the
  // effect's record (written; under appendfsync always also fsynced):
  // Connection::Flush holds it back until then. So a process crash never
  // loses an acknowledged write, whatever the policy.
  persistence_->Hold(client, reply_start, changes_before);
  // A key with waiters released, expired or pushed to by this command goes
  // to its first waiters now, before any other request runs (waits.cc).
  if (waiters_.has_touched()) ServeWaiters();
  if (client.blocked) return false;  // parked: the reply comes when the wait ends
  bool kept = FinishReply(client, reply_start);
  // The test bench: FAULT DELAY / DROP of this reply.
  if (faults_->active()) faults_->AfterCommand(client, cmd, reply_start);
  client.NoteOutput();
  return kept;
}

bool Server::FinishReply(Connection& client, size_t reply_start) {
  // CLIENT REPLY OFF or SKIP: the reply was written like any other (the
  // handlers need not know) and is cut off here. Redis checks the flags as
  // each reply is written; checking once the command is over gives the same
  // result, since only CLIENT REPLY changes them and it writes its +OK (for
  // ON) after changing them.
  bool kept = !client.ReplySuppressed();
  if (!kept) {
    // The reply goes; push frames written meanwhile stay (pubsub.h).
    std::string pushes;
    for (auto [from, to] : client.own_pushes()) {
      if (from >= reply_start) pushes.append(client.output(), from, to - from);
    }
    client.output().resize(reply_start);
    client.output() += pushes;
  }
  client.own_pushes().clear();
  client.reply_skip_this = std::exchange(client.reply_skip_next, false);
  return kept;
}

void Server::OnErrorReply(std::string_view text) {
  diagnostics_.CountErrorReply(text);
}

void Server::ForEachSession(const std::function<void(Session&)>& f) {
  clients_.ForEach([&f](Connection& c) { f(c); });
}

void Server::AddMonitor(Session& s) {
  // Every session the server hands to a command is one of its connections.
  if (!clients_.AddMonitor(static_cast<Connection&>(s))) return;
  gate_.set_executed_hook([this](const Session& from, std::span<const std::string_view> argv,
                                 const CommandSpec& cmd,
                                 bool from_script) { FeedMonitors(from, argv, cmd, from_script); });
}

void Server::RemoveMonitor(Session& s) {
  if (clients_.RemoveMonitor(static_cast<Connection&>(s))) gate_.set_executed_hook(nullptr);
}

void Server::FeedMonitors(const Session& from, std::span<const std::string_view> argv,
                          const CommandSpec& cmd, bool from_script) {
  if (clients_.monitors().empty()) return;
  // A script's calls come from "lua", as Redis shows them.
  std::string line =
      MonitorLine(clock_->WallUs(), from.db, from_script ? "lua" : from.addr, argv, cmd);
  for (Connection* m : clients_.monitors()) {
    if (m->closing()) continue;
    m->output() += line;
    clients_.NeedsFlush(*m);
  }
}

void Server::OnClientClosed(Connection& c) {
  if (!c.multi.watched_keys.empty()) watches_.UnwatchAll(c);
  if (c.subscribed()) pubsub_.Forget(c);
  ForgetWaits(c);
  // Out of the list, of the flush list, of the MONITOR feed.
  clients_.Unlink(c);
  if (c.monitor && clients_.monitors().empty()) gate_.set_executed_hook(nullptr);
}

// ---------------------------------------------------------------- the loop

void Server::OnBeforeSleep(uv_prepare_t* p) {
  static_cast<Server*>(p->data)->BeforeSleep();
}

void Server::BeforeSleep() {
  // The log first: one write (and, for appendfsync always, one fdatasync)
  // for every record of this iteration, so no reply below can report an
  // effect the log does not have. (What it wrote or synced releases held
  // replies and WAITAOF clients, through persistence's events.)
  const int64_t start_us = clock_->MonoUs();
  persistence_->Flush(start_us / 1000);
  if (config_.latency_monitor_threshold > 0 && persistence_->log() != nullptr) {
    // The log's write (and, under appendfsync always, its fsync): Redis's
    // "aof-write" latency event.
    int64_t ms = (clock_->MonoUs() - start_us) / 1000;
    if (ms >= config_.latency_monitor_threshold) {
      diagnostics_.latency().Add("aof-write", ms, clock_->WallMs() / 1000);
    }
  }
  // Then every connection with output gets one write.
  clients_.FlushPending();
}

void Server::OnCron(uv_timer_t* t) {
  static_cast<Server*>(t->data)->Cron();
}

void Server::Cron() {
  ++cron_runs_;
  // Accepting stopped for want of file descriptors: try again.
  if (listeners_.paused()) listeners_.ResumeAccepting();
  const TimeSnapshot now = Now();
  ExpireCycle(now);
  // The log and the lease policy (persistence.h): fsyncs, retries,
  // rewrites, the state record kept ahead of the grants, WAITAOF deadlines.
  persistence_->Cron(now);
  // Waiters: keys the expiry cycle removed, waiters whose time is up,
  // and grants retried after persistence said they may succeed.
  if (!waiters_.empty()) ServeWaiters();
  CronClients(now);
  // instantaneous_ops_per_sec (every 100 ms), and the peak of used memory
  // (INFO used_memory_peak) once a second.
  if (diagnostics_.stats().Sample(now.mono) && cron_runs_ % config_.hz == 0) memory();
}

void Server::ExpireCycle(const TimeSnapshot& now) {
  // Active expiry: up to 25% of the cron period, as Redis's slow cycle.
  const int64_t budget_us = 25 * 1000 * 1000 / 100 / config_.hz;
  const int64_t start_us = config_.latency_monitor_threshold > 0 ? clock_->MonoUs() : 0;
  store_.ActiveExpireCycle(now.mono, budget_us);
  if (config_.latency_monitor_threshold > 0) {
    int64_t ms = (clock_->MonoUs() - start_us) / 1000;
    if (ms >= config_.latency_monitor_threshold) {
      diagnostics_.latency().Add("expire-cycle", ms, now.wall_ms / 1000);
    }
  }
  // Finish any resize of the hash table a little at a time.
  store_.RehashStep(100);
}

void Server::CronClients(const TimeSnapshot& now) {
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
  // CONFIG SET requirepass: the default user's passwords become that one
  // (none: nopass), as in Redis.
  if (before.requirepass != config_.requirepass) acl_users_.SetRequirePass(config_.requirepass);
  acl_users_.log_max_len = static_cast<size_t>(config_.acllog_max_len);
  return std::nullopt;
}

std::optional<std::string> Server::ApplyEffects(uint32_t effects) {
  if (effects & kEffectMaxClients) {
    // More clients need more file descriptors: raise the limit now, as at
    // start-up. If the system allows fewer, say how many it allows (Redis's
    // words) rather than accept clients the server cannot take.
    int64_t requested = config_.maxclients;
    if (!Listeners::AdjustOpenFilesLimit(config_) || config_.maxclients != requested) {
      return "The operating system is not able to handle the specified number of clients, "
             "try with " +
             std::to_string(config_.maxclients);
    }
  }
  // Persistence first: a change that weakens what the state record promises
  // is recorded before it takes effect, or does not happen.
  if (auto err = persistence_->Reconfigure(effects, clock_->MonoMs())) return err;
  if (effects & kEffectCron) RestartCronTimer();
  if (effects & kEffectLogLevel) log::SetLevel(config_.loglevel);
  if (effects & kEffectDiagnostics) gate_.Configure(config_);
  if (effects & kEffectEncodings) store_.set_encoding_limits(EncodingLimitsOf(config_));
  if (effects & kEffectNotify) pubsub_.set_notify_flags(config_.notify_keyspace_events);
  if (effects & kEffectScripts) scripts_->Configure(config_);
  if (effects & kEffectMaxMemory) {
    gate_.Configure(config_);
    // A limit lowered below the memory in use is enforced now, as Redis's
    // updateMaxmemory does (performEvictions), not at the next command.
    WithinMemoryLimit();
  }
  if (effects & kEffectTls) {
    if (auto err = listeners_.ConfigureTls()) return err;
  }
  if (effects & kEffectAppendOnly) return SwitchAppendOnly();
  return std::nullopt;
}

std::optional<std::string> Server::StartRewrite(const TimeSnapshot& now) {
  return persistence_->Rewrite(now);
}

void Server::SimulatePowerLoss() {
  persistence_->SimulatePowerLoss();
}

}  // namespace latch
