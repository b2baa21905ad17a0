// The server: one libuv loop that owns every socket, timer and signal, and
// the parts a request passes through.
//
// Single-threaded by design: each command runs to completion on the loop, so
// every command is atomic with no locks. That is the whole reason a SET NX or
// a DELIFEQ is safe for locking: no other client's command can run in the
// middle of it.
//
// The path of a request (docs/architecture.md draws it):
//   socket → Connection (query buffer, RESP parser) → Server::Dispatch →
//   Gate::Execute (lookup, arity, auth, MISCONF, LOADING, MULTI; the lease
//   policy when a write would grant) → the command's handler → Store (the
//   keyspace change and its log record, together) → the reply, held until
//   the log has the record (Connection::Flush) → socket.
//
// One iteration of the loop:
//   poll → read callbacks parse and execute requests (replies are buffered,
//   records go to the log's batch) → before the loop sleeps again
//   (BeforeSleep): the batch is written with one write() (and fsynced under
//   appendfsync always), then each connection with output is flushed with
//   one write. A reply that reports an effect leaves only once the log has
//   the effect's record.
// Timers: the cron (hz times a second: active expiry, client timeouts,
// rehashing, the log's fsync and rewrites, the lease policy). Signals:
// SIGTERM and SIGINT shut down cleanly.
//
// Start-up: listen, read the previous run's state record (lease policy),
// replay the log in slices (clients get -LOADING meanwhile), write this
// run's record, serve.
#pragma once

#include <poll.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/unique_fd.h"
#include "protocol/reply_sink.h"
#include "server/acl/users.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/control.h"
#include "server/gate.h"
#include "server/grant.h"
#include "server/latency.h"
#include "server/lease_policy.h"
#include "server/parking.h"
#include "server/persistence.h"
#include "server/pubsub.h"
#include "server/scripting/engine.h"
#include "server/slowlog.h"
#include "server/stats.h"
#include "server/store.h"
#include "server/uv_handle.h"
#include "server/waiters.h"
#include "server/watch.h"

namespace latch {

class Connection;
class Faults;
namespace tls {
class Context;
}
class History;

class Server final : public ServerControl,
                     public Parking,
                     public resp::ReplySink::ErrorObserver,
                     public scripting::BusyHost,
                     private Persistence::Listener {
 public:
  Server(Config config, std::unique_ptr<Clock> clock);
  ~Server() override;
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the listeners and runs the loop until shutdown. Returns the
  // process exit code. Start-up errors (a port in use…) are logged and
  // returned as a non-zero code.
  int Run();

  // Executes one request from `client` through the gate; the reply goes to
  // the client's output, held back while the log lacks what it reports.
  // `now` is read once per batch of pipelined requests (the commands of one
  // read share it: they run within microseconds of each other). Returns
  // whether a reply was produced: not when CLIENT REPLY OFF or SKIP dropped
  // it, nor when the request parked the client (WAITAOF).
  bool Dispatch(Connection& client, std::span<const std::string_view> argv, TimeSnapshot now);
  bool Dispatch(Connection& client, std::span<const std::string_view> argv) {
    return Dispatch(client, argv, Now());
  }

  // Both clocks, read once for a request. The wall time is derived from the
  // boot-clock reading through a cached offset, so that converting a
  // deadline to the boot clock and back gives the same millisecond (PXAT
  // then PEXPIRETIME is exact). The offset follows the real wall clock
  // whenever they differ by more than 2 ms (a step, or NTP slewing adding up).
  TimeSnapshot Now();

  // ---- ServerControl (administrative commands)
  const Config& config() const override { return config_; }
  std::optional<std::string> Reconfigure(const Config& updated, uint32_t effects) override;
  Stats& stats() override { return stats_; }
  const Clock& clock() const override { return *clock_; }
  bool SetWallOffsetMs(int64_t ms) override { return clock_->SetWallOffsetMs(ms); }
  void ForEachSession(const std::function<void(Session&)>& f) override;
  WatchRegistry& watches() override { return watches_; }
  void AddMonitor(Session& s) override;
  void RemoveMonitor(Session& s) override;
  void RequestShutdown() override;
  std::optional<std::string> StartRewrite(const TimeSnapshot& now) override;
  [[noreturn]] void SimulatePowerLoss() override;
  std::string Info(const std::vector<std::string>& sections, const TimeSnapshot& now) override;
  Slowlog& slowlog() override { return slowlog_; }
  LatencyMonitor& latency_monitor() override { return latency_; }
  MemoryFigures memory() override;
  LogDurability log_durability() const override;

  // ---- Parking (SET … NX WAIT, blocking pops, WAITAOF)
  void ParkForFsync(Session& s, bool local, int64_t numreplicas, int64_t deadline) override;
  void ParkForLock(Session& s, std::string_view key, LockWaitRequest request) override;
  void ParkForKeys(Session& s, std::span<const std::string_view> keys,
                   PopWaitRequest request) override;
  // CLIENT UNBLOCK (ServerControl).
  bool UnblockClient(uint64_t id, bool error) override;

  scripting::Engine& scripts() override { return *scripts_; }
  void SetScriptDenyDisabled(bool disabled) override { gate_.set_script_deny_disabled(disabled); }
  const scripting::Engine& scripts_engine() const { return *scripts_; }

  // ---- scripting::BusyHost (busy.cc): while a script runs past
  // busy-reply-threshold.
  void EnterBusy(bool eval) override;
  void LeaveBusy() override;
  void ServeWhileBusy(Session& caller) override;
  bool ShutdownRequested() const override { return shutting_down_; }
  std::string WriteRefusal() const override;
  // busy.cc: reads the clients poll() found readable.
  void ReadWhileBusy(std::vector<struct pollfd>& fds, size_t listeners,
                     const std::vector<Connection*>& conns);
  int64_t MonoUs() const override { return clock_->MonoUs(); }

  // Every error reply a client is sent (INFO errorstats).
  void OnErrorReply(std::string_view text) override;
  // Answers the parked WAITAOF requests whose wait is over (persistence.h).
  void ServeFsyncWaits(int64_t now) { persistence_->ServeFsyncWaits(now); }
  // Serves the clients parked on keys that changed: released and expired
  // keys go to their first lock waiters, pushed elements to blocked pops;
  // answers the waiters whose timeout passed (waits.cc). Runs after every
  // command that changed a key with waiters, before the next one, and from
  // the waiters' timer and the cron.
  void ServeWaiters();
  void ServeLockWaits() { ServeWaiters(); }  // (the name the lock tests know)
  // Parked clients: WAITAOF, lock waiters and blocked pops (INFO
  // blocked_clients).
  size_t parked_clients() const { return persistence_->parked() + waiters_.total(); }
  const Waiters& waiters() const { return waiters_; }
  const Waiters& lock_waits() const { return waiters_; }

  // ---- the parts, for tests and tools
  Store& store() { return store_; }
  LeasePolicy& lease_policy() { return persistence_->policy(); }
  Gate& gate() { return gate_; }
  PubSub& pubsub() { return pubsub_; }
  // The log, or nullptr when appendonly is no (or while loading).
  aof::Writer* log() { return persistence_->log(); }
  bool loading() const { return gate_.loading(); }
  uv_loop_t* loop() { return &loop_; }
  // The test bench (faults.h, history.h).
  Faults& faults() override { return *faults_; }
  acl::Users& acl_users() override { return acl_users_; }

  // ---- connection callbacks
  void OnClientOutput(Connection& c);  // c has output to flush before sleeping
  void OnClientClosed(Connection& c);  // c is closing: unlink it
  // The client whose request is being executed (nullptr between requests).
  const Connection* executing() const { return executing_; }
  // The reply hold (persistence.h): whether a reply that waits for the log
  // up to byte `until` may leave; c's held reply left; it could not.
  bool ReplyIsDurable(uint64_t until) const { return persistence_->ReplyIsDurable(until); }
  void OnHoldReleased(Connection& c) { persistence_->Released(c); }
  void OnHoldWaiting(Connection& c) { persistence_->Waiting(c); }

 private:
  static void OnAcceptable(uv_poll_t* poll, int status, int events);
  static void OnCron(uv_timer_t* t);
  static void OnBeforeSleep(uv_prepare_t* p);
  static void OnSignal(uv_signal_t* s, int signum);

  // listener.cc
  bool Listen();
  // The unix socket (unixsocket, unixsocketperm), if configured.
  bool ListenUnix();
  // The server accepts connections: logged, and told to the supervisor
  // (supervision.h: READY=1 for systemd, with the quarantine in STATUS).
  void AnnounceReady();
  // Shutting down: told to the supervisor; the unix socket file removed.
  void AnnounceStopping();
  bool AdjustOpenFilesLimit();  // false: too few file descriptors to start
  int BindAndListen(UvHandle<uv_tcp_t>& tcp, const sockaddr_storage& addr);
  void AcceptPending(uv_poll_t* poll);
  bool DropPendingConnections(int listen_fd, int error);
  void Accept(int fd, bool unix_socket = false, bool tls = false);
  // The TLS listener (tls-port) and its context (server/tls/context.h):
  // built at start-up, rebuilt by CONFIG SET tls-*.
  bool ListenTls();
  // A listener on every `bind` address at `port` (TLS: its connections
  // start with a handshake); false, logged as Redis does, when one fails.
  bool ListenOnBindAddresses(int port, bool tls);
  std::optional<std::string> ConfigureTls();
  void ResumeAccepting();

  // server.cc
  bool LockDataDirectory();
  void Cron();
  void ExpireCycle(const TimeSnapshot& now);
  void CronClients(const TimeSnapshot& now);
  void BeforeSleep();
  void CloseAll();
  void RestartCronTimer();
  void Fatal(const std::string& message);
  // Persistence::Listener
  void OnServing(const aof::Writer* log) override;
  void OnLoading() override;
  void OnFatal(const std::string& message) override { Fatal(message); }
  void OnReplyDurable(Connection& c) override { OnClientOutput(c); }
  void OnWaitAnswered(Connection& c, size_t reply_start) override { Unpark(c, reply_start); }
  void OnGrantsMayResume() override { waiters_.TouchRetries(); }
  void StopLoop();
  void FeedMonitors(const Session& from, std::span<const std::string_view> argv,
                    const CommandSpec& cmd, bool from_script);
  std::optional<std::string> ApplyEffects(uint32_t effects);
  // log_switch.cc: CONFIG SET appendonly.
  std::optional<std::string> SwitchAppendOnly();
  // eviction.cc: maxmemory. Frees memory by maxmemory-policy when past the
  // limit; whether the usage is (now) within it.
  bool WithinMemoryLimit();
  uint64_t MemoryForEviction();
  // After a command (or a parked one's late reply) from `client` whose reply
  // starts at `reply_start`: drops it if CLIENT REPLY says so, then moves the
  // CLIENT REPLY SKIP state on. Returns whether the reply was kept.
  bool FinishReply(Connection& client, size_t reply_start);
  // log_waits.cc: forgetting a closed client, and letting parked ones go on.
  void ForgetWaits(Connection& c);
  static void OnResume(uv_idle_t* idle);
  // A parked client's reply, written from output byte `reply_start` on, is
  // complete: the client goes on (its buffered requests on the next loop
  // iteration).
  void Unpark(Connection& c, size_t reply_start);
  // waits.cc
  void ServeKey(const std::string& db_key, const TimeSnapshot& now);
  void HandOffLock(const std::string& db_key, const TimeSnapshot& now);
  void ServePops(const std::string& db_key, ValueType type, const TimeSnapshot& now);
  // Runs a parked pop's command again for `key`: served (answered, with
  // what it popped or an error), refused for now (the quarantine), or
  // nothing to serve it with.
  enum class ParkedRun { kServed, kRefused, kNothing };
  ParkedRun RunParked(const Waiters::Waiter& w, std::string_view key, const TimeSnapshot& now);
  static void ReplyTimedOut(Waiters::Kind kind, resp::ReplySink& r);
  void AnswerWaiter(Waiters::Waiter& w, uint64_t changes_before,
                    const std::function<void(resp::ReplySink&)>& write);
  void ArmLockTimer(int64_t now);
  static void OnLockTimer(uv_timer_t* t);

  Config config_;
  const CommandRegistry& commands_;
  std::unique_ptr<Clock> clock_;
  uv_loop_t loop_;
  Store store_;
  Stats stats_;
  WatchRegistry watches_;
  std::string run_id_;
  std::string replid_;  // INFO replication's master_replid
  int64_t start_mono_ms_ = 0;
  int64_t wall_offset_ms_ = INT64_MIN;
  int64_t cron_runs_ = 0;
  bool shutting_down_ = false;
  int exit_code_ = 0;

  // The log, its replay, the lease policy, the reply hold and WAITAOF
  // (persistence.h).
  std::unique_ptr<Persistence> persistence_;
  // Clients parked on keys (SET … NX WAIT, blocking pops): the queues
  // (waiters.h).
  Waiters waiters_;
  // The grant operation (grant.h), and the gate every command goes through.
  Grants grants_;
  // Pub/sub channels and keyspace notifications (pubsub.h).
  PubSub pubsub_;
  Gate gate_;

  // Diagnostics.
  Slowlog slowlog_;
  LatencyMonitor latency_;
  uint64_t startup_memory_ = 0;
  uint64_t peak_memory_ = 0;

  // Parked clients answered (WAITAOF, SET … WAIT) whose requests wait in
  // their buffer (processed on the next loop iteration, by resume_idle_).
  std::vector<Connection*> resumable_;
  UvHandle<uv_idle_t> resume_idle_;
  // A timer at the next lease end or waiter's timeout (waiters.h).
  UvHandle<uv_timer_t> lock_timer_;
  int64_t lock_timer_due_ = INT64_MAX;

  std::vector<UvHandle<uv_tcp_t>> listeners_;
  UniqueFd unix_listener_;           // unixsocket's, accepted from acceptors_ as the others'
  std::vector<int> tls_listen_fds_;  // the listeners whose clients speak TLS
  std::unique_ptr<tls::Context> tls_ctx_;
  bool ready_announced_ = false;
  // One poll handle per listener: latch accepts itself (see AcceptPending).
  std::vector<UvHandle<uv_poll_t>> acceptors_;
  // A spare descriptor, given up to drop pending connections when the
  // process is out of descriptors (EMFILE).
  UniqueFd spare_fd_;
  UniqueFd dir_lock_;           // flock of latch.lock: one server per data directory
  bool accept_paused_ = false;  // out of descriptors with no spare: resumed by the cron
  UvHandle<uv_timer_t> cron_timer_;
  UvHandle<uv_prepare_t> before_sleep_;
  UvHandle<uv_signal_t> sigterm_;
  UvHandle<uv_signal_t> sigint_;

  Connection* clients_head_ = nullptr;
  Connection* executing_ = nullptr;
  size_t num_clients_ = 0;
  uint64_t next_client_id_ = 1;
  std::vector<Connection*> pending_flush_;
  std::vector<Connection*> monitors_;
  uint64_t accept_errors_ = 0;  // since the last log line about them
  int64_t last_accept_error_log_ms_ = 0;

  // The script engine (scripting/engine.h).
  std::unique_ptr<scripting::Engine> scripts_;

  // The test bench: FAULT's state (always there, inert unless
  // enable-fault-injection), and the history file (history-file).
  std::unique_ptr<History> history_;
  std::unique_ptr<Faults> faults_;
  acl::Users acl_users_{commands_};

  friend class InfoBuilder;
  friend class Connection;
  friend class Faults;
};

}  // namespace latch
