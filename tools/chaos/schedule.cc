#include "tools/chaos/schedule.h"

#include <algorithm>
#include <cstdio>

namespace latch::chaos {

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

namespace {

struct KindInfo {
  FaultKind kind;
  const char* word;  // --faults
  const char* name;  // the report
  // Relative frequency. The first five add up to 100 and keep the order and
  // thresholds of the original model, so `--faults classic` draws exactly
  // the schedules it always did.
  int weight;
  bool by_default;
};

constexpr KindInfo kKinds[] = {
    {FaultKind::kCrash, "crash", "kill -9", 20, true},
    {FaultKind::kPause, "pause", "pause", 20, true},
    {FaultKind::kPowerLoss, "power", "power loss", 15, true},
    {FaultKind::kTornWrite, "torn", "power loss + torn log tail", 15, true},
    {FaultKind::kAmnesia, "amnesia", "majority power loss after a grant", 30, true},
    {FaultKind::kCleanRestart, "clean", "clean restart", 12, true},
    {FaultKind::kRestartInQuarantine, "requarantine", "restart during quarantine", 12, true},
    {FaultKind::kDiskError, "disk-error", "disk error", 14, true},
    {FaultKind::kSlowDisk, "slow-disk", "slow disk", 10, true},
    {FaultKind::kWallStep, "wall-step", "wall-clock step", 8, true},
    {FaultKind::kClockChange, "boot-id", "boot-id change", 8, true},
    {FaultKind::kLogLost, "log-lost", "log lost", 10, false},
    // Last: adding it left the schedules of explicit --faults lists alone.
    {FaultKind::kSlowFsync, "slow-fsync", "slow fsync (preloaded)", 10, true},
};

const KindInfo& Info(FaultKind k) {
  for (const KindInfo& i : kKinds) {
    if (i.kind == k) return i;
  }
  return kKinds[0];
}

bool Enabled(const Options& o, FaultKind k) {
  return std::find(o.faults.begin(), o.faults.end(), k) != o.faults.end();
}

template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& from) {
  return from[static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(from.size()) - 1))];
}

StopKind PickStop(std::mt19937_64& rng, int kill, int sigterm) {
  // Percentages for kill -9 and SIGTERM; a power loss otherwise.
  int64_t r = Uniform(rng, 0, 99);
  if (r < kill) return StopKind::kKill;
  if (r < kill + sigterm) return StopKind::kSigterm;
  return StopKind::kPowerLoss;
}

// A restarted node's next configuration, from the --vary lists.
NodeChange DrawChange(std::mt19937_64& rng, const Options& o) {
  NodeChange c;
  if (!o.vary_appendfsync.empty()) c.appendfsync = Pick(rng, o.vary_appendfsync);
  if (!o.vary_quarantine.empty()) {
    c.quarantine = Pick(rng, o.vary_quarantine);
    if (*c.quarantine == "always") {
      const int64_t t = o.ttl.count();
      c.quarantine_ms = o.quarantine_ms >= 0 ? o.quarantine_ms : Uniform(rng, t / 2, 2 * t);
    }
  }
  return c;
}

bool Restarts(const Fault& f) {
  switch (f.kind) {
    case FaultKind::kPause:
      return false;
    case FaultKind::kDiskError:
    case FaultKind::kSlowDisk:
    case FaultKind::kSlowFsync:
      return f.stop != StopKind::kNone;
    default:
      return true;
  }
}

}  // namespace

const char* FaultName(FaultKind k) {
  return Info(k).name;
}

const char* FaultWord(FaultKind k) {
  return Info(k).word;
}

std::vector<FaultKind> DefaultFaults() {
  std::vector<FaultKind> out;
  for (const KindInfo& i : kKinds) {
    if (i.by_default) out.push_back(i.kind);
  }
  return out;
}

std::optional<std::vector<FaultKind>> ParseFaultList(const std::string& list, std::string* error) {
  std::vector<FaultKind> out;
  auto add = [&](FaultKind k) {
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  };
  size_t at = 0;
  while (at <= list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string word = list.substr(at, comma - at);
    at = comma + 1;
    if (word == "all") {
      for (FaultKind k : DefaultFaults()) add(k);
      continue;
    }
    if (word == "classic") {
      for (int i = 0; i < 5; ++i) add(kKinds[i].kind);
      continue;
    }
    bool found = false;
    for (const KindInfo& i : kKinds) {
      if (word == i.word) {
        add(i.kind);
        found = true;
      }
    }
    if (!found) {
      *error = "unknown fault kind '" + word + "'";
      return std::nullopt;
    }
  }
  // The schedule draws in the table's order, whatever the list's order.
  std::vector<FaultKind> sorted;
  for (const KindInfo& i : kKinds) {
    if (std::find(out.begin(), out.end(), i.kind) != out.end()) sorted.push_back(i.kind);
  }
  return sorted;
}

const char* StopName(StopKind s) {
  switch (s) {
    case StopKind::kNone:
      return "none";
    case StopKind::kKill:
      return "kill -9";
    case StopKind::kSigterm:
      return "SIGTERM";
    case StopKind::kPowerLoss:
      return "power loss";
    case StopKind::kExited:
      return "exit of its own";
    case StopKind::kLogLost:
      return "kill -9 and log deleted";
  }
  return "?";
}

bool WaitsForGrant(const Fault& f) {
  switch (f.kind) {
    case FaultKind::kAmnesia:
    case FaultKind::kRestartInQuarantine:
    case FaultKind::kWallStep:
    case FaultKind::kClockChange:
      return true;
    case FaultKind::kDiskError:
    case FaultKind::kSlowDisk:
      return f.stop != StopKind::kNone;
    default:
      return false;
  }
}

std::vector<Fault> MakeSchedule(const Options& o) {
  std::mt19937_64 rng(o.seed);
  const int64_t ttl = o.ttl.count();
  const int majority = o.nodes / 2 + 1;
  int total_weight = 0;
  for (const KindInfo& i : kKinds) {
    if (Enabled(o, i.kind)) total_weight += i.weight;
  }
  std::vector<Fault> out;
  if (total_weight == 0) return out;
  const bool amnesia_on = Enabled(o, FaultKind::kAmnesia);
  // Estimated time line, only to know when to stop adding faults.
  int64_t t = ttl / 2;
  int since_amnesia = 0;
  while (true) {
    Fault f;
    f.gap = Millis{Uniform(rng, ttl / 4, ttl)};
    int64_t roll = Uniform(rng, 0, total_weight - 1);
    // At least every third fault is an amnesia: any seed then gives the
    // check something to catch when the nodes run without quarantine.
    FaultKind kind = FaultKind::kAmnesia;
    if (!(amnesia_on && since_amnesia == 2)) {
      for (const KindInfo& i : kKinds) {
        if (!Enabled(o, i.kind)) continue;
        if (roll < i.weight) {
          kind = i.kind;
          break;
        }
        roll -= i.weight;
      }
    }
    int count = 1;
    int64_t extra = 100;  // estimated: every restart ~100 ms
    switch (kind) {
      case FaultKind::kCrash:
        f.kind = kind;
        f.length = Millis{Uniform(rng, 0, ttl / 2)};
        break;
      case FaultKind::kPause:
        f.kind = kind;
        count = static_cast<int>(Uniform(rng, 1, majority));
        f.length = Millis{Uniform(rng, ttl / 4, 2 * ttl)};
        break;
      case FaultKind::kPowerLoss:
      case FaultKind::kTornWrite:
        f.kind = kind == FaultKind::kTornWrite && o.appendonly == "yes" ? FaultKind::kTornWrite
                                                                        : FaultKind::kPowerLoss;
        f.length = Millis{Uniform(rng, 0, ttl / 10)};
        break;
      case FaultKind::kAmnesia:
        // Restart at once: the sooner the majority is back, the sooner a
        // second worker can win it while the first still holds the lock.
        f.kind = kind;
        count = majority;
        extra += ttl / 2;  // waits for a grant
        break;
      case FaultKind::kCleanRestart:
        f.kind = kind;
        f.stop = StopKind::kSigterm;
        count = static_cast<int>(Uniform(rng, 1, majority));
        f.length = Millis{Uniform(rng, 0, ttl / 2)};
        break;
      case FaultKind::kRestartInQuarantine:
        // An amnesia, then a second stop while the restart quarantine
        // (which lasts about a TTL) is still running.
        f.kind = kind;
        f.stop = StopKind::kPowerLoss;
        count = majority;
        f.then = Millis{Uniform(rng, 0, ttl / 4)};
        f.second_stop = Uniform(rng, 0, 99) < 70 ? StopKind::kSigterm : StopKind::kKill;
        extra += ttl / 2 + f.then.count() + 100;
        break;
      case FaultKind::kDiskError: {
        f.kind = kind;
        count = static_cast<int>(Uniform(rng, 1, majority));
        int64_t r = Uniform(rng, 0, 99);
        f.target = r < 40 ? "log-write" : r < 70 ? "log-fsync" : "state-write";
        static const std::vector<std::string> kErrors = {"ENOSPC", "EIO", "EDQUOT", "EROFS"};
        f.error = Pick(rng, kErrors);
        f.length = Millis{Uniform(rng, ttl / 2, 2 * ttl)};
        f.stop = Uniform(rng, 0, 99) < 40 ? StopKind::kNone : PickStop(rng, 33, 33);
        f.downtime = Millis{Uniform(rng, 0, ttl / 4)};
        break;
      }
      case FaultKind::kSlowDisk: {
        f.kind = kind;
        count = static_cast<int>(Uniform(rng, 1, majority));
        int64_t r = Uniform(rng, 0, 99);
        f.target = r < 60 ? "log-fsync" : r < 80 ? "log-write" : "state-write";
        f.delay_ms = Uniform(rng, ttl / 10, ttl);
        f.length = Millis{Uniform(rng, ttl / 2, 3 * ttl)};
        f.stop = Uniform(rng, 0, 99) < 50 ? StopKind::kNone : PickStop(rng, 60, 0);
        f.downtime = Millis{Uniform(rng, 0, ttl / 4)};
        break;
      }
      case FaultKind::kWallStep:
      case FaultKind::kClockChange:
        f.kind = kind;
        count = majority;
        f.stop = PickStop(rng, 45, 35);
        f.length = Millis{Uniform(rng, 0, ttl / 4)};
        extra += ttl / 2;
        break;
      case FaultKind::kLogLost:
        f.kind = kind;
        f.stop = StopKind::kLogLost;
        f.length = Millis{Uniform(rng, 0, ttl / 4)};
        break;
      case FaultKind::kSlowFsync:
        // Every fsync of the server takes this much longer; most often some
        // nodes are killed while they wait.
        f.kind = kind;
        count = static_cast<int>(Uniform(rng, 1, majority));
        f.delay_ms = Uniform(rng, ttl / 2, 2 * ttl);
        f.length = Millis{Uniform(rng, ttl, 3 * ttl)};
        f.stop = Uniform(rng, 0, 99) < 70 ? StopKind::kKill : StopKind::kNone;
        f.downtime = Millis{Uniform(rng, 0, ttl / 4)};
        break;
    }
    // `count` distinct nodes: a partial Fisher-Yates shuffle.
    std::vector<int> all(o.nodes);
    for (int i = 0; i < o.nodes; ++i) all[i] = i;
    for (int i = 0; i < count; ++i) {
      std::swap(all[i], all[Uniform(rng, i, o.nodes - 1)]);
      f.nodes.push_back(all[i]);
    }
    std::sort(f.nodes.begin(), f.nodes.end());
    // What the restarted nodes come back with. Drawn only when something
    // can change, so a run without --vary lists keeps the plain schedule.
    const bool vary = !o.vary_appendfsync.empty() || !o.vary_quarantine.empty();
    if (Restarts(f)) {
      for (int n : f.nodes) {
        NodeChange c = vary ? DrawChange(rng, o) : NodeChange{};
        if (f.kind == FaultKind::kWallStep) c.wall_offset_ms = Uniform(rng, -3'600'000, 3'600'000);
        if (f.kind == FaultKind::kClockChange) {
          c.clock_id = "chaos-s" + std::to_string(o.seed) + "-f" + std::to_string(out.size() + 1) +
                       "-n" + std::to_string(n);
        }
        f.changes.push_back(std::move(c));
      }
      if (f.kind == FaultKind::kRestartInQuarantine && vary) {
        for (size_t k = 0; k < f.nodes.size(); ++k) f.changes_again.push_back(DrawChange(rng, o));
      }
      bool any = false;
      for (const NodeChange& c : f.changes) any |= !c.empty();
      if (!any) f.changes.clear();
    }
    since_amnesia = f.kind == FaultKind::kAmnesia ? 0 : since_amnesia + 1;
    t += f.gap.count() + f.length.count() + f.downtime.count() + extra;
    if (t > o.duration.count() - ttl) break;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Rewrite> MakeRewritePlan(const Options& o) {
  std::vector<Rewrite> out;
  if (!o.rewrites || o.appendonly != "yes") return out;
  // A generator of its own: adding rewrites leaves the fault schedule alone.
  std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ULL + 0x5EED);
  const int64_t ttl = o.ttl.count();
  int64_t at = 0;
  while (true) {
    at += Uniform(rng, ttl, 4 * ttl);
    if (at > o.duration.count() - ttl) break;
    Rewrite r;
    r.at = Millis{at};
    r.node = static_cast<int>(Uniform(rng, 0, o.nodes - 1));
    r.in_multi = Uniform(rng, 0, 99) < 70;
    out.push_back(r);
  }
  return out;
}

std::string NodeList(const std::vector<int>& nodes) {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
  return s;
}

namespace {

std::string DescribeChanges(const std::vector<int>& nodes, const std::vector<NodeChange>& changes) {
  std::string s;
  for (size_t k = 0; k < changes.size() && k < nodes.size(); ++k) {
    const NodeChange& c = changes[k];
    if (c.empty()) continue;
    std::string one;
    if (c.appendfsync) one += " appendfsync " + *c.appendfsync;
    if (c.quarantine) one += " quarantine " + *c.quarantine;
    if (c.quarantine_ms) one += " quarantine-ms " + std::to_string(*c.quarantine_ms);
    if (c.wall_offset_ms) one += " wall offset " + std::to_string(*c.wall_offset_ms) + " ms";
    if (c.clock_id) one += " clock " + *c.clock_id;
    s += (s.empty() ? "" : ";") + std::string(" node ") + std::to_string(nodes[k]) + one;
  }
  return s;
}

}  // namespace

std::string Describe(const Fault& f) {
  std::string s = Format("%s on node%s %s", FaultName(f.kind), f.nodes.size() == 1 ? "" : "s",
                         NodeList(f.nodes).c_str());
  const long long len = static_cast<long long>(f.length.count());
  switch (f.kind) {
    case FaultKind::kPause:
      s += Format(" for %lld ms", len);
      break;
    case FaultKind::kAmnesia:
      break;
    case FaultKind::kRestartInQuarantine:
      s += Format(", then %s after %lld ms", StopName(f.second_stop),
                  static_cast<long long>(f.then.count()));
      break;
    case FaultKind::kDiskError:
    case FaultKind::kSlowDisk:
      if (f.kind == FaultKind::kDiskError) {
        s += Format(": %s fails with %s", f.target.c_str(), f.error.c_str());
      } else {
        s += Format(": %s %lld ms slower", f.target.c_str(), static_cast<long long>(f.delay_ms));
      }
      if (f.stop == StopKind::kNone) {
        s += Format(" for %lld ms, then cleared", len);
      } else {
        s += Format(", %s within %lld ms%s, down %lld ms", StopName(f.stop), len,
                    f.kind == FaultKind::kDiskError ? " after a grant" : "",
                    static_cast<long long>(f.downtime.count()));
      }
      break;
    case FaultKind::kWallStep:
    case FaultKind::kClockChange:
      s += Format(" after a grant: %s, down %lld ms", StopName(f.stop), len);
      break;
    case FaultKind::kSlowFsync:
      s += Format(": every fsync %lld ms slower for %lld ms", static_cast<long long>(f.delay_ms),
                  len);
      if (f.stop != StopKind::kNone) {
        s += Format(", then %s while they wait, down %lld ms", StopName(f.stop),
                    static_cast<long long>(f.downtime.count()));
      }
      break;
    default:
      s += Format(", down %lld ms", len);
  }
  std::string changes = DescribeChanges(f.nodes, f.changes);
  if (!changes.empty()) s += " (restart with" + changes + ")";
  changes = DescribeChanges(f.nodes, f.changes_again);
  if (!changes.empty()) s += " (second restart with" + changes + ")";
  return s;
}

void PrintSchedule(const std::vector<Fault>& schedule, const std::vector<Rewrite>& rewrites) {
  for (size_t i = 0; i < schedule.size(); ++i) {
    const Fault& f = schedule[i];
    std::printf("fault %zu: after %lld ms, %s\n", i + 1, static_cast<long long>(f.gap.count()),
                Describe(f).c_str());
  }
  for (const Rewrite& r : rewrites) {
    std::printf("rewrite at %lld ms on node %d%s\n", static_cast<long long>(r.at.count()), r.node,
                r.in_multi ? " (inside MULTI)" : "");
  }
}

}  // namespace latch::chaos
