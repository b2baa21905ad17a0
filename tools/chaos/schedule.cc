#include "tools/chaos/schedule.h"

#include <algorithm>
#include <cstdio>

namespace latch::chaos {

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

const char* FaultName(FaultKind k) {
  switch (k) {
    case FaultKind::kCrash:
      return "kill -9";
    case FaultKind::kPause:
      return "pause";
    case FaultKind::kPowerLoss:
      return "power loss";
    case FaultKind::kTornWrite:
      return "power loss + torn log tail";
    case FaultKind::kAmnesia:
      return "majority power loss after a grant";
  }
  return "?";
}

std::vector<Fault> MakeSchedule(const Options& o) {
  std::mt19937_64 rng(o.seed);
  const int64_t ttl = o.ttl.count();
  const int majority = o.nodes / 2 + 1;
  std::vector<Fault> out;
  // Estimated time line, only to know when to stop adding faults.
  int64_t t = ttl / 2;
  int since_amnesia = 0;
  while (true) {
    Fault f;
    f.gap = Millis{Uniform(rng, ttl / 4, ttl)};
    int64_t roll = Uniform(rng, 0, 99);
    // At least every third fault is an amnesia: any seed then gives the
    // check something to catch when the nodes run without quarantine.
    if (since_amnesia == 2) roll = 99;
    int count = 1;
    if (roll < 20) {
      f.kind = FaultKind::kCrash;
      f.length = Millis{Uniform(rng, 0, ttl / 2)};
    } else if (roll < 40) {
      f.kind = FaultKind::kPause;
      count = static_cast<int>(Uniform(rng, 1, majority));
      f.length = Millis{Uniform(rng, ttl / 4, 2 * ttl)};
    } else if (roll < 55) {
      f.kind = FaultKind::kPowerLoss;
      f.length = Millis{Uniform(rng, 0, ttl / 10)};
    } else if (roll < 70) {
      f.kind = o.appendonly == "yes" ? FaultKind::kTornWrite : FaultKind::kPowerLoss;
      f.length = Millis{Uniform(rng, 0, ttl / 10)};
    } else {
      // Restart at once: the sooner the majority is back, the sooner a
      // second worker can win it while the first still holds the lock.
      f.kind = FaultKind::kAmnesia;
      count = majority;
    }
    // `count` distinct nodes: a partial Fisher-Yates shuffle.
    std::vector<int> all(o.nodes);
    for (int i = 0; i < o.nodes; ++i) all[i] = i;
    for (int i = 0; i < count; ++i) {
      std::swap(all[i], all[Uniform(rng, i, o.nodes - 1)]);
      f.nodes.push_back(all[i]);
    }
    std::sort(f.nodes.begin(), f.nodes.end());
    since_amnesia = f.kind == FaultKind::kAmnesia ? 0 : since_amnesia + 1;
    // Amnesia waits for a grant (about ttl/2); every restart ~100 ms.
    t += f.gap.count() + f.length.count() + (f.kind == FaultKind::kAmnesia ? ttl / 2 : 0) + 100;
    if (t > o.duration.count() - ttl) break;
    out.push_back(std::move(f));
  }
  return out;
}

std::string NodeList(const std::vector<int>& nodes) {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
  return s;
}

void PrintSchedule(const std::vector<Fault>& schedule) {
  for (size_t i = 0; i < schedule.size(); ++i) {
    const Fault& f = schedule[i];
    std::printf("fault %zu: after %lld ms, %s on node%s %s", i + 1,
                static_cast<long long>(f.gap.count()), FaultName(f.kind),
                f.nodes.size() == 1 ? "" : "s", NodeList(f.nodes).c_str());
    if (f.kind == FaultKind::kPause) {
      std::printf(" for %lld ms", static_cast<long long>(f.length.count()));
    } else if (f.kind != FaultKind::kAmnesia) {
      std::printf(", down %lld ms", static_cast<long long>(f.length.count()));
    }
    std::printf("\n");
  }
}

}  // namespace latch::chaos
