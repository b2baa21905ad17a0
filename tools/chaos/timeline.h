// What a run leaves behind for people: the text report (counts, each
// violation with the fault most likely to blame) and the timeline, an SVG
// picture with a lane per worker and per node.
//
// A violation is a claim about two intervals on one clock; a picture makes
// it checkable at a glance: the two holds in red, one above the other, the
// dashed line of the majority power loss just before, the nodes that came
// back without quarantine. The report says the same in words, and its last
// line (printed by main) is always "violations: N", which is what tests and
// scripts read.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/chaos/acks.h"
#include "tools/chaos/chaos.h"
#include "tools/chaos/checker.h"
#include "tools/chaos/cluster.h"
#include "tools/chaos/workers.h"

namespace latch::chaos {

// Everything a finished run leaves for the report and the picture.
struct RunRecord {
  Clock::time_point t0;     // the workers started: time zero of both
  Clock::time_point t_end;  // the workers stopped
  std::vector<Hold> holds;
  std::vector<Violation> violations;  // pointing into holds
  std::vector<FaultRecord> faults;    // as inflicted, in order
  std::vector<NodeEvent> events;
  std::vector<NodeRun> runs;  // every node's runs and their configurations
  WorkerStats stats;
  // Faults the server could not take (an old build), by kind, and the knob
  // each lacked.
  std::map<FaultKind, int> skipped;
  std::map<FaultKind, std::string> skipped_for;
  ServerKnobs knobs;
  const Cluster* cluster = nullptr;  // its counters and findings
  const AckBook* acks = nullptr;
};

// Whether `quarantine never` explains a violation. The two holders' majorities
// share at least one node, and each shared node granted the second lock
// while the first was still valid on it: it must have forgotten the first.
// A correct node forgets only through a restart, and after one that may
// have lost leases it grants nothing until they have ended, unless it runs
// with quarantine never (by design). So the violation is the
// configuration's when every shared node restarted after the first grant and
// was running `never` when it granted the second; otherwise it is a bug.
bool ExplainedByNever(const Violation& v, const std::vector<NodeRun>& runs, Millis ttl);

// What decides the exit status: violations, and acknowledged writes lost
// beyond what the policies allow.
bool RunFailed(const RunRecord& run);

// The report's counts and one line per violation (stdout).
void PrintReport(const Options& o, const RunRecord& run);

// The SVG timeline; throws HarnessError when the file cannot be written.
void WriteTimeline(const std::string& path, const Options& o, const RunRecord& run);

}  // namespace latch::chaos
