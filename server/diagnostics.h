// Diagnostics: what the server measures about itself, for INFO, SLOWLOG,
// LATENCY and MEMORY.
//
// Owns the counters (Stats: INFO stats, commandstats, errorstats), the slow
// log, the latency monitor, the memory marks (used at start-up, the peak)
// and the run's identity (run_id, master_replid, the start time behind
// uptime_in_seconds). It computes nothing about the keyspace or the
// clients: the server hands it the figures it measured (MemoryFigures), and
// INFO reads them back from here. Kept apart from Server so that a counter
// or a diagnostic command added later lands here, not in the loop's class.
#pragma once

#include <cstdint>
#include <string>

#include "server/control.h"
#include "server/latency.h"
#include "server/slowlog.h"
#include "server/stats.h"

namespace latch {

class Diagnostics {
 public:
  // `start_mono_ms`: when the server started (INFO uptime counts from it).
  explicit Diagnostics(int64_t start_mono_ms);

  Stats& stats() { return stats_; }
  const Stats& stats() const { return stats_; }
  Slowlog& slowlog() { return slowlog_; }
  LatencyMonitor& latency() { return latency_; }

  // INFO server and replication: this run's identity.
  const std::string& run_id() const { return run_id_; }
  const std::string& replid() const { return replid_; }
  int64_t start_mono_ms() const { return start_mono_ms_; }

  // An error reply's code counted (INFO errorstats' errorstat_<CODE>).
  void CountErrorReply(std::string_view text);

  // Memory: `m` as measured now (used — 0 when the allocator is not
  // counted, then estimated here —, rss, dataset, clients…); fills in the
  // start-up mark (MarkStartup, once the server is set up) and the peak,
  // which this class keeps.
  void CompleteMemory(ServerControl::MemoryFigures& m);
  void MarkStartup(uint64_t used) { startup_memory_ = used; }
  uint64_t startup_memory() const { return startup_memory_; }

 private:
  Stats stats_;
  Slowlog slowlog_;
  LatencyMonitor latency_;
  std::string run_id_;
  std::string replid_;  // INFO replication's master_replid
  int64_t start_mono_ms_ = 0;
  uint64_t startup_memory_ = 0;
  uint64_t peak_memory_ = 0;
};

}  // namespace latch
