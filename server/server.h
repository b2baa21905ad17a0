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

#include <array>
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
#include "server/clients.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/connection.h"
#include "server/control.h"
#include "server/diagnostics.h"
#include "server/gate.h"
#include "server/grant.h"
#include "server/latency.h"
#include "server/lease_policy.h"
#include "server/listeners.h"
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

class Faults;
class IoRing;
class History;

class Server final : public ServerControl,
                     public ClientHost,
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
  size_t Prefetch(const Connection& client, std::string_view input) override;
  bool Dispatch(Connection& client, std::span<const std::string_view> argv,
                TimeSnapshot now) override;
  bool Dispatch(Connection& client, std::span<const std::string_view> argv) {
    return Dispatch(client, argv, Now());
  }

  // Both clocks, read once for a request. The wall time is derived from the
  // boot-clock reading through a cached offset, so that converting a
  // deadline to the boot clock and back gives the same millisecond (PXAT
  // then PEXPIRETIME is exact). The offset follows the real wall clock
  // whenever they differ by more than 2 ms (a step, or NTP slewing adding up).
  TimeSnapshot Now() override;

  // ---- ServerControl (control.h: the roles administrative commands use)
  const Config& config() const override { return config_; }
  std::optional<std::string> Reconfigure(const Config& updated, uint32_t effects) override;
  Stats& stats() override { return diagnostics_.stats(); }
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
  Slowlog& slowlog() override { return diagnostics_.slowlog(); }
  LatencyMonitor& latency_monitor() override { return diagnostics_.latency(); }
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

  // ---- the parts, for tests, tools and INFO (info.cc)
  Store& store() { return store_; }
  const Store& store() const { return store_; }
  const Persistence& persistence() const { return *persistence_; }
  const Diagnostics& diagnostics() const { return diagnostics_; }
  ClientRegistry& clients() override { return clients_; }
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

  // ---- ClientHost (connection.h)
  void OnClientOutput(Connection& c) { clients_.NeedsFlush(c); }  // output to flush before sleeping
  void OnClientClosed(Connection& c) override;                    // c is closing: forget it
  // The reply hold (persistence.h): whether a reply that waits for the log
  // up to byte `until` may leave; c's held reply left; it could not.
  bool ReplyIsDurable(uint64_t until) const override { return persistence_->ReplyIsDurable(until); }
  void OnHoldReleased(Connection& c) override { persistence_->Released(c); }
  void OnHoldWaiting(Connection& c) override { persistence_->Waiting(c); }
  resp::ReplySink::ErrorObserver* error_observer() override { return this; }

 private:
  static void OnCron(uv_timer_t* t);
  static void OnBeforeSleep(uv_prepare_t* p);
  static void OnSignal(uv_signal_t* s, int signum);

  // server.cc
  bool LockDataDirectory();
  void Cron();
  void ExpireCycle(const TimeSnapshot& now);
  void CronClients(const TimeSnapshot& now);
  void BeforeSleep();
  void CloseAll();
  // `io-uring yes`: creates the ring, or warns and keeps the epoll path.
  void StartIoRing();
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
  // log_waits.cc: forgetting a closed client's waits.
  void ForgetWaits(Connection& c);
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
  WatchRegistry watches_;
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

  // Counters, slow log, latency monitor, memory marks, the run's identity
  // (diagnostics.h).
  Diagnostics diagnostics_;
  // Every connection, and the loop's lists of them (clients.h).
  ClientRegistry clients_;
  // The listening sockets and accepting (listeners.h).
  Listeners listeners_;
  // A timer at the next lease end or waiter's timeout (waiters.h).
  UvHandle<uv_timer_t> lock_timer_;
  int64_t lock_timer_due_ = INT64_MAX;

  UniqueFd dir_lock_;  // flock of latch.lock: one server per data directory
  // The loop's own handles: the cron, the end of each iteration, SIGTERM
  // and SIGINT.
  UvHandle<uv_timer_t> cron_timer_;
  UvHandle<uv_prepare_t> before_sleep_;
  std::array<UvHandle<uv_signal_t>, 2> signals_;

  // The script engine (scripting/engine.h).
  std::unique_ptr<scripting::Engine> scripts_;

  // The test bench: FAULT's state (always there, inert unless
  // enable-fault-injection), and the history file (history-file).
  std::unique_ptr<History> history_;
  std::unique_ptr<Faults> faults_;
  // `io-uring yes`: the plain connections' ring (nullptr: the epoll path).
  std::unique_ptr<IoRing> ring_;
  acl::Users acl_users_{commands_};
};

}  // namespace latch
