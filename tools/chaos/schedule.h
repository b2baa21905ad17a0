// The fault schedule: which faults strike which nodes, in what order, with
// what pauses between them. It depends only on the seed (and on the number
// of nodes, the duration and the TTL), never on what happens during the run,
// so a failing run can be replayed, and `--schedule-only` prints it.
//
// The faults, each a way a real RedLock node fails:
//   kill -9         the process dies; with appendonly yes nothing is lost
//                   (the log reached the kernel before the reply left)
//   pause           SIGSTOP then SIGCONT: a node that holds its port but
//                   answers nothing (a GC pause, a frozen VM)
//   power loss      DEBUG POWERLOSS: the log is cut to what was fsynced
//   torn log tail   a power loss in the middle of writing a record
//   amnesia         a majority loses power right after a grant and comes
//                   back at once: the fault RedLock cannot survive without
//                   latch's restart quarantine, and so the one that shows
//                   the checker can catch a violation.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tools/chaos/chaos.h"

namespace latch::chaos {

enum class FaultKind { kCrash, kPause, kPowerLoss, kTornWrite, kAmnesia };

const char* FaultName(FaultKind k);

struct Fault {
  Millis gap{0};  // quiet time after the previous fault ended
  FaultKind kind = FaultKind::kCrash;
  std::vector<int> nodes;
  Millis length{0};  // pause: how long stopped; others: downtime before restart
};

// Faults run one after another (each ends before the next starts), so the
// schedule is a list of gaps and faults rather than absolute times; how long
// a restart takes does not change what comes next.
std::vector<Fault> MakeSchedule(const Options& o);

// One line per fault: "fault 3: after 420 ms, pause on nodes 1,4 for 800 ms".
void PrintSchedule(const std::vector<Fault>& schedule);

// "0,2,4".
std::string NodeList(const std::vector<int>& nodes);

// Uniform integer in [lo, hi] from the raw engine output: the standard
// distributions may differ between library versions, the engine may not,
// and a seed must give the same schedule (and hold times) everywhere.
int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi);

}  // namespace latch::chaos
