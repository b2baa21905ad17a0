// The cluster: N latch-server processes on loopback, each with its own data
// directory under the run's temporary directory, and the faults inflicted on
// them.
//
// Each node is a launch::ServerProcess (tools/launch/), so starting on a
// free port, waiting for PING, and restarting on the same port with the
// same data directory work as in every other tool and test. What this class
// adds is the fault side: it turns one entry of the schedule (schedule.h)
// into signals, DEBUG POWERLOSS requests and a torn log tail, restarts the
// nodes afterwards, and records what happened to each node (down, paused,
// in restart quarantine) for the report and the timeline.
//
// Restarts bring the affected nodes back together (all spawned first, then
// each waited for): after an amnesia the majority must return as one, as
// fast as possible, for the fault to have its teeth.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tools/chaos/chaos.h"
#include "tools/chaos/schedule.h"
#include "tools/launch/server_process.h"
#include "tools/redlock/node_set.h"

namespace latch::chaos {

// Something that happened to a node, for the report and the picture.
struct NodeEvent {
  enum Kind { kDown, kPaused, kQuarantine, kMarkCrash, kMarkPowerLoss, kMarkTorn } kind;
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

class Cluster {
 public:
  // The nodes' directories are root/node0, root/node1, …
  Cluster(const Options& o, std::string root);

  // Starts every node; throws HarnessError (or launch::LaunchError).
  void StartAll();
  // SIGTERM to every node, SIGKILL after 3 s: tidy logs for --keep. (The
  // destructor SIGKILLs whatever still runs.)
  void StopAll();

  const std::vector<latch::Endpoint>& endpoints() const { return endpoints_; }

  // Inflicts `f` and returns when it is over: the nodes resumed, or back up
  // after their downtime. An amnesia first waits for a grant through
  // `wait_for_grant` (which reports whether one came). `log` narrates
  // (--verbose).
  FaultRecord Inflict(const Fault& f, const std::function<bool()>& wait_for_grant,
                      const std::function<void(const std::string&)>& log);

  std::vector<NodeEvent>& events() { return events_; }
  int restarts() const { return restarts_; }
  int quarantines() const { return quarantines_; }
  int torn_tails_cut() const { return torn_cut_; }

 private:
  struct Node {
    launch::ServerProcess server;
    Clock::time_point down_since, paused_since;
    bool torn = false;  // its log was torn: count the cut at the next load
  };

  // kill -9 (nothing lost when appendonly yes: writes reach the kernel before
  // the reply leaves; everything lost when appendonly no).
  void Crash(int i);
  // DEBUG POWERLOSS on several nodes at once: each cuts its log to what was
  // fsynced and exits at once, as if its machine had lost power.
  void PowerLoss(const std::vector<int>& which, NodeEvent::Kind mark, const char* note);
  // A machine crash in the middle of writing a record: the log ends with
  // part of one. The loader must cut it off (aof-load-truncated yes).
  void TearLogTail(int i);
  void Pause(const std::vector<int>& which);
  void Resume(const std::vector<int>& which);
  // Starts the given (stopped) nodes again on their ports, all at once, and
  // waits until each answers PING; notes any restart quarantine.
  void Restart(const std::vector<int>& which);

  std::string Info(int i);
  static std::optional<std::string> Field(const std::string& info, const std::string& name);
  void Mark(NodeEvent::Kind k, int i, const std::string& note);

  const Options& o_;
  std::string root_;
  std::vector<Node> nodes_;
  std::vector<latch::Endpoint> endpoints_;
  std::vector<NodeEvent> events_;
  int restarts_ = 0;
  int quarantines_ = 0;
  int torn_cut_ = 0;
};

}  // namespace latch::chaos
