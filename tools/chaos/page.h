// latch-chaos's run drawn as the test bench's HTML page (tools/history/
// page.h), the same page latch-fixture check writes: a lane per worker
// (its holds; violations in red) and per node (down, paused, quarantined;
// kills, power losses and torn tails marked). --page FILE writes it.
#pragma once

#include <string>

#include "tools/chaos/chaos.h"
#include "tools/chaos/timeline.h"

namespace latch::chaos {

// Throws HarnessError when the file cannot be written.
void WritePage(const std::string& path, const Options& o, const RunRecord& run);

}  // namespace latch::chaos
