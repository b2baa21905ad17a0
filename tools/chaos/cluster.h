// The cluster: N latch-server processes on loopback, each with its own data
// directory under the run's temporary directory, and the faults inflicted on
// them.
//
// Each node is a launch::ServerProcess (tools/launch/), so starting on a
// free port, waiting for PING, and restarting on the same port with the
// same data directory work as in every other tool and test. What this class
// adds is the fault side: it turns one entry of the schedule (schedule.h)
// into signals, DEBUG POWERLOSS and DEBUG FAULT-IO requests, a torn log
// tail or a deleted log, restarts the nodes afterwards (possibly with another
// configuration, a stepped wall clock or another boot clock), checks their
// acknowledged writes after each restart (acks.h), and records what happened
// to each node (down, paused, quarantined, disk faults, which configuration
// each run had) for the report and the timeline.
//
// Restarts bring the affected nodes back together (all spawned first, then
// each waited for): after an amnesia the majority must return as one, as
// fast as possible, for the fault to have its teeth.
//
// A node that exits on its own (a failed fsync under appendfsync always is
// fatal, by design) is noticed by Supervise() and started again; one that
// will not start again (a log it cannot load) stays down for the rest of the
// run, and its acknowledged writes count as lost.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/chaos/acks.h"
#include "tools/chaos/chaos.h"
#include "tools/chaos/schedule.h"
#include "tools/launch/server_process.h"
#include "tools/redlock/node_set.h"

namespace latch::chaos {

// In a server's data directory (its working directory): the delay, in ms,
// that the preloaded latch-chaos-slow-fsync.so adds to every fsync.
constexpr const char* kSlowFsyncFile = "latch-chaos-slow-fsync";

// Something that happened to a node, for the report and the picture.
struct NodeEvent {
  enum Kind {
    kDown,
    kPaused,
    kQuarantine,
    kDiskFault,
    kSlowDisk,
    kDead,  // would not start again
    kMarkRepair,
    kMarkCrash,
    kMarkPowerLoss,
    kMarkTorn,
    kMarkClean,
    kMarkExit,
    kMarkWall,
    kMarkClock,
    kMarkLogLost,
  } kind;
  int node = 0;
  Clock::time_point start, end;  // marks: start == end
  std::string note;
};

// A fault as it was inflicted: the schedule's entry and when it struck.
struct FaultRecord {
  FaultKind kind;
  std::vector<int> nodes;
  Clock::time_point at;
};

// A node's configuration for one run.
struct NodeConf {
  std::string appendfsync;
  std::string quarantine;
  int64_t quarantine_ms = -1;  // -1: not given
  int64_t wall_offset_ms = 0;
  std::string clock_id;   // empty: the real one
  uint16_t tls_port = 0;  // --tls: where the clients connect (0: no TLS)
};

// One run of one node: a process from its start to its stop.
struct NodeRun {
  int node = 0;
  NodeConf conf;
  Clock::time_point start;
  std::optional<Clock::time_point> end;  // unset: still running
  bool restart = false;                  // started by a restart (not the first start)
};

// The test knobs the server has (an old build lacks them).
struct ServerKnobs {
  bool fault_io = false;     // DEBUG FAULT-IO
  bool wall_offset = false;  // --debug-wall-offset-ms
  bool clock_id = false;     // --debug-clock-id
};

class Cluster {
 public:
  // The nodes' directories are root/node0, root/node1, … `acks` is told of
  // every stop and start, and checks the writes after each restart.
  Cluster(const Options& o, std::string root, AckBook& acks);

  // Starts every node; throws HarnessError (or launch::LaunchError).
  void StartAll();
  // Which knobs the server has: DEBUG FAULT-IO on a running node, the
  // start-up options on a throwaway server.
  ServerKnobs ProbeKnobs();
  // The knob `f` needs and the server lacks, or nothing.
  std::optional<std::string> Missing(const Fault& f) const;
  // SIGTERM to every node, SIGKILL after 3 s: tidy logs for --keep. (The
  // destructor SIGKILLs whatever still runs.)
  void StopAll();

  const std::vector<latch::Endpoint>& endpoints() const { return endpoints_; }

  using Log = std::function<void(const std::string&)>;
  // Waits for the next grant, at most `max`; true when one came.
  using WaitForGrant = std::function<bool(Millis max)>;

  // Inflicts `f` and returns when it is over: the nodes resumed, or back up
  // after their downtime. Kinds that strike right after a grant first wait
  // for one. `log` narrates (--verbose).
  FaultRecord Inflict(const Fault& f, const WaitForGrant& wait_for_grant, const Log& log);
  // Nodes that exited on their own: noted, started again, writes checked.
  void Supervise(const Log& log);
  // The end of the run: every running node's acknowledged writes.
  void VerifyAll(const Log& log);

  std::vector<NodeEvent>& events() { return events_; }
  const std::vector<NodeRun>& runs() const { return runs_; }
  int restarts() const { return restarts_; }
  int quarantines() const { return quarantines_; }
  int torn_tails_cut() const { return torn_cut_; }
  int config_changes() const { return config_changes_; }
  int fsync_exits() const { return fsync_exits_; }
  const std::vector<std::string>& unexpected_exits() const { return unexpected_exits_; }
  const std::vector<std::string>& dead() const { return dead_; }
  const std::vector<std::string>& repaired() const { return repaired_; }
  const std::vector<std::string>& lengthened() const { return lengthened_; }
  int64_t longest_pttl_after_restart() const { return longest_pttl_; }

 private:
  struct Node {
    Node(launch::ServerProcess s, NodeConf c) : server(std::move(s)), conf(std::move(c)) {}
    launch::ServerProcess server;
    NodeConf conf;
    Clock::time_point down_since, paused_since, fault_since;
    bool torn = false;         // its log was torn: count the cut at the next load
    bool dead = false;         // would not start again
    bool fault_armed = false;  // DEBUG FAULT-IO in force
    std::string fault;         // which, for the picture and exit reports
    NodeEvent::Kind fault_event = NodeEvent::kDiskFault;
    StopKind last_stop = StopKind::kNone;  // how its last run ended
  };

  std::vector<std::string> Args(const NodeConf& c) const;
  // The live nodes among `which`.
  std::vector<int> Alive(const std::vector<int>& which) const;

  // Stops the given nodes the given way (kill -9, SIGTERM, power loss, or
  // kill -9 and the log deleted); a node that already exited on its own is
  // recorded as such.
  void StopNodes(const std::vector<int>& which, StopKind how);
  // DEBUG POWERLOSS on several nodes at once: each cuts its log to what was
  // fsynced and exits at once, as if its machine had lost power.
  void PowerLoss(const std::vector<int>& which, NodeEvent::Kind mark, const char* note);
  // A machine crash in the middle of writing a record: the log ends with
  // part of one. The loader must cut it off (aof-load-truncated yes).
  void TearLogTail(int i);
  void Pause(const std::vector<int>& which);
  void Resume(const std::vector<int>& which);
  // DEBUG FAULT-IO on the given nodes; Clear() ends every fault on them.
  void ArmFault(const std::vector<int>& which, const Fault& f);
  void ClearFault(const std::vector<int>& which);
  void EndFault(int i);  // the fault's interval, for the picture
  // The slow-fsync fault: every fsync of node i takes `ms` longer (0: normal).
  void SetFsyncDelay(int i, int64_t ms);
  void EndRun(int i);  // the node's current run stops now
  // Whether node i exited on its own (reaped, recorded); true if so.
  bool CheckExited(int i, const Log& log);
  // Starts the given (stopped) nodes again on their ports, all at once, each
  // with its configuration changed as `changes` says (parallel to `from`),
  // and waits until each answers PING; notes any restart quarantine and
  // checks the acknowledged writes.
  void Restart(const std::vector<int>& which, const std::vector<int>& from,
               const std::vector<NodeChange>& changes, const Log& log);
  void Restart(const std::vector<int>& which, const Log& log) { Restart(which, {}, {}, log); }

  std::optional<resp::Reply> Command(int i, std::initializer_list<std::string_view> args,
                                     Millis timeout);
  std::string Info(int i);
  static std::optional<std::string> Field(const std::string& info, const std::string& name);
  std::optional<std::vector<bool>> ReadBack(int i, const std::vector<int64_t>& ns);
  // latch-check-aof --fix --yes on node i's log, as an operator would after
  // a start that failed on a damaged log; true when it exited 0.
  bool RepairLog(int i);
  // The fault being inflicted, for the report ("an exit of its own" between
  // faults).
  std::string Cause() const;
  void Mark(NodeEvent::Kind k, int i, const std::string& note);

  const Options& o_;
  std::string root_;
  AckBook& acks_;
  ServerKnobs knobs_;
  std::vector<Node> nodes_;
  std::vector<latch::Endpoint> endpoints_;
  std::vector<NodeEvent> events_;
  std::vector<NodeRun> runs_;
  std::optional<FaultKind> current_;  // the fault being inflicted
  int restarts_ = 0;
  int quarantines_ = 0;
  int torn_cut_ = 0;
  int config_changes_ = 0;
  int fsync_exits_ = 0;
  std::vector<std::string> unexpected_exits_;
  std::vector<std::string> dead_;
  std::vector<std::string> repaired_;
  std::vector<std::string> lengthened_;
  int64_t longest_pttl_ = -1;
};

}  // namespace latch::chaos
