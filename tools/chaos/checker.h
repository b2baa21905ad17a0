// The mutual-exclusion check over the history of a run.
//
// The history is the list of holds: for each time a worker acquired the
// lock, the interval during which it was entitled to act as the holder. That
// interval starts when acquire returned and ends at whichever comes first:
// the end of the lock's validity (as the RedLock client computed it, after
// any successful extend) or the moment the worker began releasing. A worker
// that slept past its validity (a "GC pause") is not counted as holding the
// lock while it slept: a correct client must not act then, and RedLock makes
// no promise about that time.
//
// Mutual exclusion holds when no two of these intervals overlap, across all
// workers. Every timestamp is on the harness's single clock (chaos.h), so
// the comparison is exact; no tolerance is needed or given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tools/chaos/chaos.h"

namespace latch::chaos {

// One worker's turn as holder.
struct Hold {
  int worker = 0;
  Clock::time_point granted;       // acquire returned
  Clock::time_point validity_end;  // after any successful extend
  Clock::time_point released;      // release started
  Clock::time_point end;           // min(validity_end, released): the claim ends
  size_t grants = 0;               // nodes that granted it
  uint32_t granted_by = 0;         // which: bit i for node i
  bool extended = false;
  // --fence (fencing.h): the hold's token, when its winning attempt's
  // requests left, and when the token was known.
  uint64_t token = 0;
  Clock::time_point requested;
  Clock::time_point token_at;
};

// Two holds that overlap, and the overlap [from, to).
struct Violation {
  const Hold* a;
  const Hold* b;
  Clock::time_point from, to;
};

// Sorts `holds` by start and returns every overlapping pair; the Violations
// point into `holds`, which must outlive them.
std::vector<Violation> FindOverlaps(std::vector<Hold>& holds);

}  // namespace latch::chaos
