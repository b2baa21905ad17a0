// The counters behind INFO stats.
#pragma once

#include <cstdint>

namespace latch {

struct Stats {
  uint64_t total_connections_received = 0;
  uint64_t total_commands_processed = 0;
  uint64_t rejected_connections = 0;
  uint64_t expired_keys = 0;
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t total_net_input_bytes = 0;
  uint64_t total_net_output_bytes = 0;
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
  uint64_t known_script_calls = 0;  // EVAL/EVALSHA of a known lock script
  // For instantaneous_ops_per_sec: samples of the command counter.
  static constexpr int kOpsSamples = 16;
  int64_t ops_sample_time_ms = 0;
  uint64_t ops_sample_count = 0;
  uint64_t ops_samples[kOpsSamples] = {};
  int ops_sample_index = 0;
  uint64_t InstantaneousOps() const {
    uint64_t sum = 0;
    for (uint64_t s : ops_samples) sum += s;
    return sum / kOpsSamples;
  }
};

}  // namespace latch
