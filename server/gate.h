// The Execute gate: the one door every command goes through, whoever sends
// it — a client, EXEC running a queued transaction, or a known lock script's
// redis.call().
//
// In order, as Redis checks them:
//   1. look the command (and subcommand) up;
//   2. arity;
//   3. authentication, then the user's rights (ACL, server/acl: the
//      command, its keys, its channels; refusals go to ACL LOG);
//   4. MISCONF: while the log cannot be written, writes (and PING, as
//      Redis) are refused, so nothing is acknowledged that is not logged;
//   5. LOADING: while the log is replayed, only the commands flagged for it;
//   6. MULTI: a command is queued instead of run (EXEC runs the queue
//      through the gate again);
//   (a busy script, past busy-reply-threshold: clients get -BUSY, except
//   for the commands flagged allow-busy — SCRIPT KILL, FUNCTION KILL,
//   SHUTDOWN, AUTH, HELLO, MULTI…; scripting/engine.h);
//   7. for scripts: a command Redis refuses inside scripts (MULTI, WAIT,
//      blocking pops, SCRIPT, CONFIG…: flag noscript) is refused, and a
//      write from a read-only script (EVAL_RO, no-writes) too;
//   8. the handler runs. A write that would grant, re-grant or extend a
//      lease goes through the grant operation (grant.h), the one caller of
//      the lease policy (the restart quarantine, a failed state record, the
//      lease horizon, max-lock-ttl).
// Then the statistics (per command: calls, time, rejections, failures), the
// slow log and the latency monitor, and the MONITOR feed.
//
// Timing. A command's duration runs from the latest reading of the
// microsecond clock to the end of its handler; that end is read once and
// becomes the next command's start (the server also marks a reading when it
// starts on a batch of requests, Server::Now). So timing costs one clock
// read per command, and none at all when nothing uses durations: the slow
// log off (slowlog-log-slower-than < 0), the latency monitor off
// (latency-monitor-threshold 0) and latency-tracking no. A duration thus
// includes parsing the request, a few hundred nanoseconds at most.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "protocol/reply_sink.h"
#include "server/clock.h"
#include "server/command.h"

namespace latch {

struct Config;

class Clock;
class Grants;
class LatencyMonitor;
class Parking;
class PubSub;
class ServerControl;
class Session;
class Slowlog;
class Store;
struct Stats;
struct CommandStats;
namespace aof {
class Writer;
}
namespace acl {
class Users;
}

class Gate final : public CommandRunner {
 public:
  using Origin = CommandRunner::Origin;
  using Result = CommandRunner::Result;

  // Told about every command a client, EXEC or a script ran: the MONITOR
  // feed (`from_script`: Redis shows such calls from "lua"). Commands
  // flagged kCmdSkipMonitor (EVAL, FCALL) are told before they run, so
  // the script's calls follow them, as in Redis.
  using ExecutedHook = std::function<void(const Session&, std::span<const std::string_view>,
                                          const CommandSpec&, bool from_script)>;

  Gate(const CommandRegistry& registry, Store& store, Grants& grants, PubSub& pubsub,
       Parking& parking, ServerControl& control)
      : registry_(registry),
        store_(store),
        grants_(grants),
        pubsub_(pubsub),
        parking_(parking),
        control_(control) {}

  Result Execute(Session& session, std::span<const std::string_view> argv, const TimeSnapshot& now,
                 resp::ReplySink& reply, Origin origin = Origin::kClient,
                 bool literal_name = false) override;
  const CommandSpec* Trusted(Session& session, const char* name, int argc, Origin origin) override;
  void AccountTrusted(const CommandSpec& cmd) override;

  // The server's state the checks need.
  void set_loading(bool loading) { loading_ = loading; }
  // A script is busy (past busy-reply-threshold): 1 for EVAL, 2 for FCALL
  // (the -BUSY text names SCRIPT KILL or FUNCTION KILL); 0: none.
  void set_busy(int busy) { busy_ = busy; }
  int busy() const { return busy_; }
  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call noscript commands.
  void set_script_deny_disabled(bool v) { script_deny_disabled_ = v; }
  bool loading() const { return loading_; }
  void set_log(const aof::Writer* log) { log_ = log; }
  // The users whose rights the gate checks (the server's; set once).
  void set_acl_users(acl::Users* users) { users_ = users; }
  void set_executed_hook(ExecutedHook h) { on_executed_ = std::move(h); }
  // maxmemory: asked before a client's command while a limit is set; frees
  // memory by the policy and says whether the usage is within the limit
  // (Server::WithinMemoryLimit, eviction.cc).
  void set_memory_guard(std::function<bool()> within_limit) {
    memory_guard_ = std::move(within_limit);
  }
  bool has_executed_hook() const { return static_cast<bool>(on_executed_); }
  // The settings of what consumes command durations (the slow log, the
  // latency monitor, latency-tracking): read once the server is built, and
  // after CONFIG SET.
  void Configure(const Config& config);
  bool timing() const { return timing_; }
  // The latest reading of the boot clock in µs (see Timing above).
  void set_clock_mark_us(int64_t us) { mark_us_ = us; }

 private:
  const CommandRegistry& registry_;
  Store& store_;
  Grants& grants_;
  PubSub& pubsub_;
  Parking& parking_;
  ServerControl& control_;
  const aof::Writer* log_ = nullptr;
  acl::Users* users_ = nullptr;
  bool loading_ = false;
  int busy_ = 0;
  bool script_deny_disabled_ = false;
  ExecutedHook on_executed_;
  std::function<bool()> memory_guard_;
  bool memory_limited_ = false;  // maxmemory > 0 (Configure)
  uint64_t nested_errors_ = 0;
  // The commands known scripts call, by the address of the literal that
  // names them ("get", "del", "pexpire"…): a literal's address and bytes
  // never change, so the lookup is done once per call site, not per call.
  // Direct-mapped; only commands without subcommands are kept.
  struct LiteralEntry {
    const char* name = nullptr;
    size_t size = 0;
    const CommandSpec* cmd = nullptr;
  };
  std::array<LiteralEntry, 32> literal_cache_{};

  // Execute's steps. Lookup: the command or subcommand (else *error);
  // Check: whether it may run now (else the refusal); Reject: the refusal's
  // reply and what it does to a transaction; Run: the handler, timed and
  // accounted (returns whether a lease was refused).
  const CommandSpec* Lookup(std::span<const std::string_view> argv, bool from_script,
                            std::string* error) const;
  std::optional<std::string> Check(const CommandSpec& cmd, Session& session,
                                   std::span<const std::string_view> argv, Origin origin,
                                   const TimeSnapshot& now) const;
  // The ACL step of Check for a user that may not run everything.
  std::optional<std::string> CheckAcl(const CommandSpec& cmd, Session& session,
                                      std::span<const std::string_view> argv, Origin origin,
                                      const TimeSnapshot& now) const;
  Result Reject(Session& session, const CommandSpec* cmd, std::string_view text,
                resp::ReplySink& reply, Origin origin);
  bool Run(const CommandSpec& cmd, Session& session, std::span<const std::string_view> argv,
           const TimeSnapshot& now, resp::ReplySink& reply, Origin origin);
  // After a command ran for `duration_us`: its statistics, the slow log, the
  // latency monitor.
  void Account(const CommandContext& ctx, bool failed, int64_t duration_us, bool from_script);
  // Its part for the command's own statistics (calls, time, histogram).
  CommandStats& CountCall(const CommandSpec& cmd, bool failed, int64_t duration_us);
  // The command a literal names (the cache below), or nullptr.
  const CommandSpec* FindLiteral(std::string_view name);

  // The server's parts the accounting uses, looked up once (Configure):
  // they live as long as the server.
  Stats* stats_ = nullptr;
  Slowlog* slowlog_ = nullptr;
  LatencyMonitor* latency_ = nullptr;
  const Clock* clock_ = nullptr;
  bool timing_ = false;
  bool latency_tracking_ = false;
  int64_t slowlog_slower_than_us_ = -1;
  size_t slowlog_max_len_ = 0;
  int64_t latency_threshold_ms_ = 0;
  int64_t mark_us_ = 0;
};

}  // namespace latch
