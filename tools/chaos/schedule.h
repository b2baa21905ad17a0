// The fault schedule: which faults strike which nodes, in what order, with
// what pauses between them, and how each restarted node is configured. It
// depends only on the seed (and on the number of nodes, the duration, the
// TTL, the fault kinds and the --vary lists), never on what happens during
// the run, so a failing run can be replayed, and `--schedule-only` prints it.
//
// The faults, each a way a real RedLock node fails (--faults names in
// brackets):
//   kill -9 [crash]      the process dies; with appendonly yes nothing
//                        acknowledged is lost (the write reached the kernel
//                        before the reply left)
//   pause [pause]        SIGSTOP then SIGCONT: a node that holds its port
//                        but answers nothing (a GC pause, a frozen VM)
//   power loss [power]   DEBUG POWERLOSS: the log is cut to what was fsynced
//   torn log tail [torn] a power loss in the middle of writing a record
//   amnesia [amnesia]    a majority loses power right after a grant and comes
//                        back at once: the fault RedLock cannot survive
//                        without latch's restart quarantine, and so the one
//                        that shows the checker can catch a violation.
//   clean restart [clean]
//                        SIGTERM and start again (an upgrade, systemctl
//                        restart), at any moment
//   restart in quarantine [requarantine]
//                        an amnesia, then, while the majority is still in its
//                        restart quarantine, SIGTERM (or kill -9) and start
//                        again: a restart must not launder the quarantine
//   disk error [disk-error]
//                        DEBUG FAULT-IO: the log's write or fsync, or the
//                        state record's write, fails (ENOSPC, EIO, EDQUOT,
//                        EROFS) for a while on some nodes; it is cleared, or
//                        the nodes are stopped (SIGTERM, kill -9, power loss)
//                        while it lasts, right after a grant
//   slow disk [slow-disk]
//                        DEBUG FAULT-IO <target> <ms>: every write or fsync
//                        takes that much longer; cleared, or ended by kill -9
//                        or a power loss while writes wait
//   wall-clock step [wall-step]
//                        a majority is stopped right after a grant and comes
//                        back with its wall clock stepped (up to an hour
//                        either way, --debug-wall-offset-ms); the step stays
//   boot-id change [boot-id]
//                        the same, but the nodes come back on another boot
//                        clock (--debug-clock-id: a reboot, another host, a
//                        time namespace)
//   slow fsync [slow-fsync]
//                        every fsync and fdatasync of 1..majority servers
//                        takes longer for a while (a disk behind a busy
//                        controller, a noisy neighbour); most often some nodes
//                        are killed while their fsyncs wait. Done by a small
//                        library preloaded into every server
//                        (latch-chaos-slow-fsync.so), so it needs no server
//                        knob: an old build gets slow fsyncs too.
//   log lost [log-lost]  kill -9, the log file deleted, start again: storage
//                        that lost its data. Not in the default set: it loses
//                        acknowledged writes by design (the tests use it to
//                        show the write tracker can fail).
//
// Any restart may also change the node's appendfsync and quarantine mode
// (--vary-appendfsync, --vary-quarantine): a node is restarted with another
// configuration, as operators do.
//
// Faults need knobs the server may lack (an old build): disk errors and slow
// disks need DEBUG FAULT-IO, wall steps --debug-wall-offset-ms, boot-id
// changes --debug-clock-id. The schedule is the same either way; the run
// skips what the server cannot do, and says so.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tools/chaos/chaos.h"

namespace latch::chaos {

const char* FaultName(FaultKind k);
// The --faults word of a kind ("crash", "disk-error", …).
const char* FaultWord(FaultKind k);
// "crash,pause", "all" (every kind but log-lost), "classic" (the first five);
// nullopt and *error when a word is unknown.
std::optional<std::vector<FaultKind>> ParseFaultList(const std::string& list, std::string* error);
std::vector<FaultKind> DefaultFaults();

// How a node is stopped.
enum class StopKind {
  kNone,       // not stopped (a disk fault that is cleared)
  kKill,       // kill -9: a process crash
  kSigterm,    // a clean shutdown
  kPowerLoss,  // DEBUG POWERLOSS: a machine crash
  kExited,     // it exited on its own (a failed fsync under appendfsync always)
  kLogLost,    // kill -9 and its log deleted
};
const char* StopName(StopKind s);

// A node's configuration for its next run: only what changes is set.
struct NodeChange {
  std::optional<std::string> appendfsync;
  std::optional<std::string> quarantine;
  std::optional<int64_t> quarantine_ms;   // with quarantine always
  std::optional<int64_t> wall_offset_ms;  // the new total wall-clock offset
  std::optional<std::string> clock_id;    // a new boot clock
  bool empty() const {
    return !appendfsync && !quarantine && !quarantine_ms && !wall_offset_ms && !clock_id;
  }
};

struct Fault {
  Millis gap{0};  // quiet time after the previous fault ended
  FaultKind kind = FaultKind::kCrash;
  std::vector<int> nodes;
  // pause: how long stopped; disk faults: how long the fault lasts at most;
  // others: downtime before the restart.
  Millis length{0};
  // How the nodes are stopped: the restart kinds, and how a disk fault ends.
  StopKind stop = StopKind::kNone;
  Millis downtime{0};  // disk faults ended by a stop: before the restart
  // Disk faults: "log-write", "log-fsync" or "state-write", and the errno
  // name (disk error) or the added delay (slow disk).
  std::string target;
  std::string error;
  int64_t delay_ms = 0;
  // Restart in quarantine: the pause between the first restart and the
  // second stop, and how that stop is made.
  Millis then{0};
  StopKind second_stop = StopKind::kNone;
  // The nodes' configuration changes at their restart (parallel to `nodes`;
  // empty when nothing changes), and at the second restart.
  std::vector<NodeChange> changes;
  std::vector<NodeChange> changes_again;
};

// Whether the kind waits for a grant before it strikes (so that the lock the
// nodes forget is one a worker holds right now).
bool WaitsForGrant(const Fault& f);

// Faults run one after another (each ends before the next starts), so the
// schedule is a list of gaps and faults rather than absolute times; how long
// a restart takes does not change what comes next.
std::vector<Fault> MakeSchedule(const Options& o);

// The rewrite side-job: at these offsets from the start, the node's writer
// sends BGREWRITEAOF, alone or inside MULTI between two SETs.
struct Rewrite {
  Millis at{0};
  int node = 0;
  bool in_multi = true;
};
std::vector<Rewrite> MakeRewritePlan(const Options& o);

// One line per fault: "fault 3: after 420 ms, pause on nodes 1,4 for 800 ms",
// then one line per rewrite.
void PrintSchedule(const std::vector<Fault>& schedule, const std::vector<Rewrite>& rewrites);
// The fault's line without the "fault N: after G ms, " prefix.
std::string Describe(const Fault& f);

// "0,2,4".
std::string NodeList(const std::vector<int>& nodes);

// Uniform integer in [lo, hi] from the raw engine output: the standard
// distributions may differ between library versions, the engine may not,
// and a seed must give the same schedule (and hold times) everywhere.
int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi);

}  // namespace latch::chaos
