// Fault injection for the RedLock test bench: what the FAULT command family
// (server/commands/fault.cc) sets, and the hooks the request path consults.
//
// Why in the server. A lock library's own tests fake failure (a node "fails"
// because the test pre-wrote the key; clock drift is a mock). A test bench
// node fails for real, seen from any client in any language: its lease clock
// runs fast, a reply is late or never comes, a client is cut off. Everything
// here is off unless the node was started with `enable-fault-injection yes`
// (never settable at run time), and nothing costs more than one branch on
// the request path while no fault is set.
//
// The faults:
//   CLOCK RATE f        the lease clock (Clock::MonoMs, the boot clock every
//                       TTL runs on) runs at f times real speed: a 2 s lease
//                       ends after 1 s at rate 2. RedLock's validity formula
//                       assumes this drift is small (its drift factor).
//   CLOCK JUMP ms       the lease clock skips ms forward: leases end without
//                       anyone waiting. Never backward: the boot clock only
//                       moves forward, and the keyspace relies on it.
//   WALLCLOCK OFFSET ms the wall clock (TIME, EXAT/PXAT, the log's absolute
//                       times) runs ms away from the real one; PX leases
//                       must not notice.
//   DELAY ms            matching replies leave no sooner than ms later (real
//                       time); later replies on that connection wait behind.
//   DROP                a matching command runs, its reply is discarded and
//                       the connection closes: the client cannot tell
//                       whether it got the lock.
//   PARTITION name      the client named `name` (CLIENT SETNAME, HELLO
//                       SETNAME) is cut off: its connections are closed as
//                       soon as they carry the name (REFUSE, the default), or
//                       left open with nothing read from them until the
//                       partition is cleared (STALL).
// DELAY and DROP match every command but FAULT itself, or only COMMAND name
// and/or CLIENT name; COUNT n removes the fault after n hits; DROP's
// PROBABILITY draws from a generator seeded at start-up, so the same
// commands in the same order drop the same way in every run.
//
// A restart clears every fault: they live in memory only. The lease clock's
// warp does leave a trace: once warped, the clock's id changes (clock.h), so
// the log's clock annotations and the lease policy's state record written
// afterwards name a clock no later run shares. The next start therefore
// trusts none of this run's times and quarantines until the lease horizon,
// nothing assumed elapsed (lease_policy.h, "another clock") — however fast
// or slow the clock ran, no lease the node granted can outlive the
// quarantine in real time.
//
// Every fault set or cleared is logged (warning) and written to the history
// file (history.h), and INFO has a `faults` section.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "server/uv_handle.h"

namespace latch {

class Clock;
class Connection;
class History;
class Server;
class Session;
struct CommandSpec;

class Faults {
 public:
  // One DELAY, DROP or PARTITION.
  struct Rule {
    enum Kind { kDelay, kDrop, kPartition } kind = kDelay;
    uint64_t id = 0;
    int64_t delay_ms = 0;      // DELAY
    double probability = 1.0;  // DROP
    bool stall = false;        // PARTITION: STALL rather than REFUSE
    std::string command;       // lower case; empty: any command (but FAULT)
    std::string client;        // a client name; empty: any client
    uint64_t count = 0;        // hits before it removes itself; 0: never
    uint64_t hits = 0;
    std::string Describe() const;
  };

  // `clock`: the server's, which CLOCK RATE/JUMP and WALLCLOCK warp.
  Faults(Server& server, Clock& clock, History* history);
  Faults(const Faults&) = delete;
  Faults& operator=(const Faults&) = delete;

  // enable-fault-injection.
  bool enabled() const;
  // Whether any DELAY, DROP or PARTITION is set: the request path asks this
  // first, and nothing else while it is false.
  bool active() const { return !rules_.empty(); }

  // ---- FAULT (each logs itself; an error text when refused)
  std::optional<std::string> ClockRate(double rate);
  std::optional<std::string> ClockJump(int64_t ms);
  std::optional<std::string> WallOffset(int64_t ms);
  uint64_t Add(Rule rule);
  // FAULT CLEAR [id]: every fault (rate back to 1, wall offset 0; a jump is
  // never undone), or one rule. False: no rule has that id.
  bool Clear(std::optional<uint64_t> id);
  // FAULT LIST: one line per fault in force.
  std::vector<std::string> List() const;
  // INFO faults.
  std::string InfoSection() const;

  // ---- the request path (server.cc, connection.cc)
  // PARTITION … REFUSE: close this client instead of running its command.
  bool Refuses(const Session& s) const;
  // PARTITION … STALL: read nothing more from this client for now.
  bool Stalls(const Session& s) const;
  // After a command ran: DELAY and DROP its reply (which starts at byte
  // `reply_start` of the output), and a client that just named itself into
  // a partition.
  void AfterCommand(Connection& c, const CommandSpec* cmd, size_t reply_start);
  // The server is closing its handles.
  void Close();

 private:
  bool Matches(const Rule& r, const Session& s, const CommandSpec* cmd) const;
  void Note(const std::string& what);  // log, history, last fault
  void ArmTimer(uint64_t due_us);
  static void OnTimer(uv_timer_t* t);
  void ReleaseDueReplies();
  void WarpChanged();
  // Applies PARTITION REFUSE to open connections; resumes stalled ones.
  void ApplyPartitions();

  Server& server_;
  Clock& clock_;
  History* history_;
  std::vector<Rule> rules_;
  uint64_t next_id_ = 1;
  double rate_ = 1.0;
  int64_t jumped_ms_ = 0;
  int64_t wall_offset_ms_ = 0;
  bool warped_ = false;
  uint64_t hits_ = 0;
  std::string last_fault_;
  int64_t last_fault_real_us_ = 0;
  std::mt19937_64 rng_{0x1a7c4f};
  UvHandle<uv_timer_t> timer_;
  uint64_t timer_due_ = 0;  // RealUs(); 0: not armed
};

// Microseconds of real monotonic time (uv_hrtime): what DELAY waits on,
// whatever FAULT CLOCK does to the lease clock.
uint64_t RealUs();

}  // namespace latch
