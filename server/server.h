// The server: one libuv loop that owns every socket, timer and signal.
//
// Single-threaded by design: each command runs to completion on the loop, so
// every command is atomic with no locks. That is the whole reason a SET NX or
// a DELIFEQ is safe for locking: no other client's command can run in the
// middle of it.
//
// One iteration of the loop:
//   poll → read callbacks parse and execute requests (replies are buffered,
//   effects go to the log batch) → before the loop sleeps again
//   (BeforeSleep, a uv_prepare handle): the log batch is written (and fsynced
//   for appendfsync always), then each connection with output is flushed
//   with one write. Replies never leave before the effects they report are
//   in the log.
// Timers: the cron (hz times a second: active expiry, client timeouts,
// rehashing, the log's everysec fsync and rewrites, stats). Signals: SIGTERM
// and SIGINT shut down cleanly.
//
// Start-up: listen, then replay the log in slices on the loop (clients that
// connect meanwhile get -LOADING), then open the log for appending.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/aof.h"
#include "server/aof_loader.h"
#include "server/bio.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/effects.h"
#include "server/keyspace.h"
#include "server/quarantine.h"
#include "common/unique_fd.h"
#include "server/uv_handle.h"

namespace latch {

class Connection;
class CommandTable;
struct CommandSpec;

struct Stats {
  uint64_t total_connections_received = 0;
  uint64_t total_commands_processed = 0;
  uint64_t rejected_connections = 0;
  uint64_t expired_keys = 0;
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t total_net_input_bytes = 0;
  uint64_t total_net_output_bytes = 0;
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
  uint64_t known_script_calls = 0;  // EVAL/EVALSHA of a known lock script
  // For instantaneous_ops_per_sec: samples of the command counter.
  static constexpr int kOpsSamples = 16;
  int64_t ops_sample_time_ms = 0;
  uint64_t ops_sample_count = 0;
  uint64_t ops_samples[kOpsSamples] = {};
  int ops_sample_index = 0;
  uint64_t InstantaneousOps() const;
};

class Server {
 public:
  Server(Config config, std::unique_ptr<Clock> clock);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the listeners and runs the loop until shutdown. Returns the
  // process exit code. Start-up errors (a port in use…) are logged and
  // returned as a non-zero code.
  int Run();

  // Executes one request for `client`: lookup, arity, access checks, the
  // handler, stats. The reply is appended to the client's output.
  // `now` is read once per batch of pipelined requests (the commands of one
  // read share it: they run within microseconds of each other).
  void Dispatch(Connection& client, std::span<const std::string_view> argv, TimeSnapshot now);
  void Dispatch(Connection& client, std::span<const std::string_view> argv) {
    Dispatch(client, argv, Now());
  }

  // Asks the loop to stop after this iteration (SHUTDOWN, signals).
  void RequestShutdown();

  // Applies a configuration change made by CONFIG SET to the running server.
  // Returns why it cannot take effect (CONFIG SET then restores the old
  // values), or nothing when it did.
  std::optional<std::string> ApplyConfigChange(const std::string& name);

  Config& config() { return config_; }
  Keyspace& db() { return db_; }
  Effects& effects() { return effects_; }
  Stats& stats() { return stats_; }
  const Clock& clock() const { return *clock_; }
  // Both clocks, read once for a command. The wall time is derived from the
  // monotonic reading through a cached offset, so that converting a deadline
  // to the monotonic clock and back gives the same millisecond (PXAT then
  // PEXPIRETIME is exact). The offset follows the real wall clock whenever
  // they differ by more than 2 ms (a step, or NTP slewing adding up).
  TimeSnapshot Now();
  int64_t start_mono_ms() const { return start_mono_ms_; }
  const std::string& run_id() const { return run_id_; }
  size_t connected_clients() const { return num_clients_; }
  uv_loop_t* loop() { return &loop_; }
  int64_t cron_runs() const { return cron_runs_; }
  bool loading() const { return loading_; }
  // The log, or nullptr when appendonly is no (or while loading).
  Aof* aof() { return aof_.get(); }
  const AofLoader* loader() const { return loader_.get(); }
  Quarantine& quarantine() { return *quarantine_; }
  // Records that a lease may be granted now (see Quarantine::BeforeGrant).
  void BeforeLeaseGrant(int64_t now) {
    if (quarantine_started_) quarantine_->BeforeGrant(now);
  }
  int64_t loading_start_ms() const { return loading_start_ms_; }

  template <typename F>
  void ForEachClient(F&& f) {
    for (Connection* c = clients_head_; c != nullptr;) {
      Connection* next = ClientNext(c);
      f(*c);
      c = next;
    }
  }
  Connection* FindClient(uint64_t id);

  // Connection callbacks.
  void OnClientOutput(Connection& c);  // c has output to flush before sleeping
  void OnClientClosed(Connection& c);  // c is closing: unlink it
  // Whether a reply that waits for the log up to byte `until` may leave.
  bool ReplyIsDurable(uint64_t until) const {
    return aof_ == nullptr || aof_->durable_end() >= until;
  }
  void OnHoldReleased() { --held_clients_; }
  // MONITOR: c receives every command executed from now on.
  void AddMonitor(Connection& c);
  // WATCH: c's next EXEC fails if `key` changes before it.
  void WatchKey(Connection& c, std::string_view key);
  void UnwatchAll(Connection& c);

 private:
  static Connection* ClientNext(Connection* c);
  static void OnAcceptable(uv_poll_t* poll, int status, int events);
  static void OnCron(uv_timer_t* t);
  static void OnBeforeSleep(uv_prepare_t* p);
  static void OnSignal(uv_signal_t* s, int signum);
  static void OnLoadStep(uv_idle_t* idle);

  bool Listen();
  bool AdjustOpenFilesLimit();  // false: too few file descriptors to start
  int BindAndListen(UvHandle<uv_tcp_t>& tcp, const sockaddr_storage& addr);
  void AcceptPending(uv_poll_t* poll);
  bool DropPendingConnections(int listen_fd, int error);
  void Accept(int fd);
  void Cron();
  void BeforeSleep();
  void CloseAll();
  void FeedMonitors(const Connection& from, std::span<const std::string_view> argv,
                    const CommandSpec& cmd);
  void RestartCronTimer();
  void StartLoading();
  void LoadStep();
  void FinishLoading();
  void StartServing();
  void Fatal(const std::string& message);
  void StopLoop();

  Config config_;
  const CommandTable& commands_;
  std::unique_ptr<Clock> clock_;
  uv_loop_t loop_;
  Keyspace db_;
  Effects effects_;
  Stats stats_;
  std::string run_id_;
  int64_t start_mono_ms_ = 0;
  int64_t wall_offset_ms_ = INT64_MIN;
  int64_t cron_runs_ = 0;
  bool shutting_down_ = false;
  int exit_code_ = 0;

  // The background thread for slow file operations (log fsync, state file).
  std::unique_ptr<BackgroundIo> bio_;
  // The append-only log and its replay, and the restart quarantine.
  std::unique_ptr<Aof> aof_;
  std::unique_ptr<Quarantine> quarantine_;
  bool quarantine_started_ = false;
  std::unique_ptr<AofLoader> loader_;
  UvHandle<uv_idle_t> load_idle_;
  bool loading_ = false;
  int64_t loading_start_ms_ = 0;
  int64_t last_progress_log_ms_ = 0;
  // Connections whose replies wait for the log to be durable.
  size_t held_clients_ = 0;

  std::vector<UvHandle<uv_tcp_t>> listeners_;
  // One poll handle per listener: latch accepts itself (see AcceptPending).
  std::vector<UvHandle<uv_poll_t>> acceptors_;
  // A spare descriptor, given up to drop pending connections when the
  // process is out of descriptors (EMFILE).
  UniqueFd spare_fd_;
  bool accept_paused_ = false;  // out of descriptors with no spare: resumed by the cron
  UvHandle<uv_timer_t> cron_timer_;
  UvHandle<uv_prepare_t> before_sleep_;
  UvHandle<uv_signal_t> sigterm_;
  UvHandle<uv_signal_t> sigint_;

  Connection* clients_head_ = nullptr;
  size_t num_clients_ = 0;
  uint64_t next_client_id_ = 1;
  std::vector<Connection*> pending_flush_;
  std::vector<Connection*> monitors_;
  // WATCHed key → the connections watching it.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::vector<Connection*>, StringHash, std::equal_to<>> watchers_;
  void OnKeyChanged(std::string_view key);
  uint64_t accept_errors_ = 0;  // since the last log line about them
  int64_t last_accept_error_log_ms_ = 0;
};

}  // namespace latch
