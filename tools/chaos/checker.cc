#include "tools/chaos/checker.h"

#include <algorithm>

#include "tools/history/checker.h"

namespace latch::chaos {

std::vector<Violation> FindOverlaps(std::vector<Hold>& holds) {
  std::sort(holds.begin(), holds.end(),
            [](const Hold& a, const Hold& b) { return a.granted < b.granted; });
  // The overlap search is the test bench's (tools/history/checker.h), the
  // one latch-fixture check uses: one clock here, so times compare exactly.
  std::vector<history::Span> spans;
  for (const Hold& h : holds) {
    spans.push_back({Secs(h.granted.time_since_epoch()) * 1000,
                     Secs(h.end.time_since_epoch()) * 1000, h.worker});
  }
  std::vector<Violation> out;
  for (const auto& [i, j] : history::Overlaps(spans)) {
    out.push_back(
        Violation{&holds[i], &holds[j], holds[j].granted, std::min(holds[i].end, holds[j].end)});
  }
  return out;
}

}  // namespace latch::chaos
