#include "tools/chaos/checker.h"

#include <algorithm>

namespace latch::chaos {

std::vector<Violation> FindOverlaps(std::vector<Hold>& holds) {
  std::sort(holds.begin(), holds.end(),
            [](const Hold& a, const Hold& b) { return a.granted < b.granted; });
  std::vector<Violation> out;
  for (size_t i = 0; i < holds.size(); ++i) {
    // Sorted by start: every later hold that starts before this one ends
    // overlaps it.
    for (size_t j = i + 1; j < holds.size() && holds[j].granted < holds[i].end; ++j) {
      out.push_back(
          Violation{&holds[i], &holds[j], holds[j].granted, std::min(holds[i].end, holds[j].end)});
    }
  }
  return out;
}

}  // namespace latch::chaos
