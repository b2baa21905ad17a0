// The workload: M worker threads, each its own RedLock client (its own
// connections, its own tokens), taking turns on one key until the run ends.
//
// A turn: acquire (waiting up to 2 TTLs), then hold for a random time drawn
// from the seed: a quick critical section, a longer one, one that extends
// the lock midway, or one that sleeps past its validity as a GC pause would.
// Then release, record the hold (checker.h), and think a little, so that the
// releasing worker does not win again and again while the others sleep
// between retries. The hold times come from the seed; how the workers
// interleave does not (that is the point of running them concurrently).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "tools/chaos/chaos.h"
#include "tools/chaos/checker.h"
#include "tools/redlock/node_set.h"

namespace latch::chaos {

struct WorkerStats {
  int64_t acquisitions = 0;
  int64_t attempts = 0;
  int64_t contended = 0;
  int64_t quarantine_answers = 0;
  int64_t misconf_answers = 0;  // -MISCONF: a node that cannot write its state record
  int64_t extends_ok = 0;
  int64_t extends_failed = 0;
  int64_t expired_before_use = 0;
  int64_t past_validity = 0;

  WorkerStats& operator+=(const WorkerStats& o);
};

// Grants, as they happen: an amnesia fault waits for the next one, so that
// the lock the majority forgets is one a worker holds right now.
class GrantSignal {
 public:
  void Notify();
  uint64_t count();
  // Waits until the count passes `seen`, or until `until` (or an
  // interruption). True when a grant came.
  bool WaitPast(uint64_t seen, Clock::time_point until);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t count_ = 0;
};

// What the workers share with the main thread.
struct Shared {
  const Options* o = nullptr;
  std::vector<latch::Endpoint> endpoints;
  Clock::time_point end;  // the workers stop taking turns at this moment
  GrantSignal grants;
  std::mutex mu;  // guards holds and stats
  std::vector<Hold> holds;
  WorkerStats stats;
};

// One worker's loop; returns when the run ends or is interrupted.
void Worker(Shared& sh, int id);

}  // namespace latch::chaos
