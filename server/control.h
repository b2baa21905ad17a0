// What administrative commands may ask of the server around the loop, as
// role interfaces: a handler reaches only the role it needs through its
// CommandContext (ctx.admin(), ctx.clients(), ctx.persistence(),
// ctx.diagnostics(), ctx.scripting(), ctx.acl(), ctx.bench()).
//
// Data commands need none of them: their CommandContext (arguments, session,
// Store, clocks, reply, the grant operation, statistics, settings) is
// enough, so a new data-command family touches neither this file nor the
// server. CONFIG, INFO, CLIENT, MONITOR, WATCH, SHUTDOWN, BGREWRITEAOF,
// WAITAOF, DEBUG, ACL, SCRIPT/FUNCTION and FAULT use a role each (or two).
// The server implements them all (ServerControl), and so the unit tests'
// in-process server does too.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "server/clock.h"
#include "server/config.h"
#include "server/stats.h"

namespace latch {

class Faults;
namespace acl {
class Users;
}
namespace scripting {
class Engine;
}
class LatencyMonitor;
class Session;
class Slowlog;
class WatchRegistry;

// The server's settings, clock and lifecycle: CONFIG, SHUTDOWN, TIME-like
// reads.
class AdminControl {
 public:
  virtual ~AdminControl() = default;
  virtual const Config& config() const = 0;
  // CONFIG SET: installs `updated` and runs the hooks of `effects` (see
  // ConfigEffect). All or nothing: on failure the old values stay and the
  // reason is returned.
  virtual std::optional<std::string> Reconfigure(const Config& updated, uint32_t effects) = 0;
  virtual const Clock& clock() const = 0;
  virtual void RequestShutdown() = 0;
};

// The clients: CLIENT, MONITOR, RESET, WATCH, ACL's kill of a deleted user.
class ClientsControl {
 public:
  virtual ~ClientsControl() = default;
  // Every open session, newest first.
  virtual void ForEachSession(const std::function<void(Session&)>& f) = 0;
  virtual WatchRegistry& watches() = 0;
  virtual void AddMonitor(Session& s) = 0;
  // RESET: the session leaves the MONITOR feed.
  virtual void RemoveMonitor(Session& s) = 0;
  // CLIENT UNBLOCK: answers the blocked client `id` (a blocking pop, a lock
  // waiter, WAITAOF) as its timeout would, or with the UNBLOCKED error, and
  // lets it go on. False when no such client is blocked.
  virtual bool UnblockClient(uint64_t id, bool error) = 0;
};

// The log: BGREWRITEAOF, WAITAOF, DEBUG POWERLOSS.
class PersistenceControl {
 public:
  virtual ~PersistenceControl() = default;
  // BGREWRITEAOF: nullopt when started (or deferred to the end of the
  // transaction in progress), else why not.
  virtual std::optional<std::string> StartRewrite(const TimeSnapshot& now) = 0;
  // DEBUG POWERLOSS: cut the log to what was fsynced and exit at once.
  [[noreturn]] virtual void SimulatePowerLoss() = 0;
  // The log's durability: whether there is a log (appendonly yes), and the
  // offset in its byte stream up to which everything is fsynced (the
  // sessions' last_write_offset are offsets in the same stream).
  struct LogDurability {
    bool enabled = false;
    uint64_t fsynced_end = 0;
  };
  virtual LogDurability log_durability() const = 0;
};

// What the server measures: INFO, SLOWLOG, LATENCY, MEMORY, CONFIG
// RESETSTAT.
class DiagnosticsControl {
 public:
  virtual ~DiagnosticsControl() = default;
  virtual Stats& stats() = 0;
  // The INFO text for these sections (lower case; empty: the default set).
  virtual std::string Info(const std::vector<std::string>& sections, const TimeSnapshot& now) = 0;
  virtual Slowlog& slowlog() = 0;
  virtual LatencyMonitor& latency_monitor() = 0;
  // Memory in bytes, as INFO memory and MEMORY STATS report it.
  struct MemoryFigures {
    uint64_t used = 0;        // allocated by the process (malloc's view)
    uint64_t peak = 0;        // the most `used` has been
    uint64_t startup = 0;     // `used` once the server was set up
    uint64_t rss = 0;         // resident in RAM
    uint64_t dataset = 0;     // keys, values and the tables that index them
    uint64_t clients = 0;     // client query and output buffers
    uint64_t log_buffer = 0;  // log records not yet written
    uint64_t keys = 0;
  };
  virtual MemoryFigures memory() = 0;
};

// Scripts: EVAL's cache, function libraries, the run in progress
// (scripting/engine.h).
class ScriptingControl {
 public:
  virtual ~ScriptingControl() = default;
  virtual scripting::Engine& scripts() = 0;
  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call the commands Redis
  // refuses in them (the gate's rule; Redis's test suite uses it).
  virtual void SetScriptDenyDisabled(bool disabled) = 0;
};

// The ACL users (server/acl): ACL SETUSER…, AUTH, SORT's key checks.
class AccessControl {
 public:
  virtual ~AccessControl() = default;
  virtual acl::Users& acl_users() = 0;
};

// The test bench: FAULT's state (server/faults.h), DEBUG WALLCLOCK.
class TestBenchControl {
 public:
  virtual ~TestBenchControl() = default;
  virtual Faults& faults() = 0;
  // DEBUG WALLCLOCK: the wall clock runs `ms` away from the real one.
  virtual bool SetWallOffsetMs(int64_t ms) = 0;
};

// Every role: what the server implements, and what the gate holds to hand
// each handler the roles it uses.
class ServerControl : public AdminControl,
                      public ClientsControl,
                      public PersistenceControl,
                      public DiagnosticsControl,
                      public ScriptingControl,
                      public AccessControl,
                      public TestBenchControl {};

}  // namespace latch
