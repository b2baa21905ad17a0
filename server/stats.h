// The counters behind INFO stats, commandstats, errorstats and latencystats.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/latency.h"

namespace latch {

// One command's (or subcommand's) counters, as Redis keeps them.
struct CommandStats {
  uint64_t calls = 0;           // the handler ran
  uint64_t usec = 0;            // time it ran, in total (when commands are timed)
  uint64_t rejected_calls = 0;  // refused before it ran (arity, NOAUTH, MISCONF…)
  uint64_t failed_calls = 0;    // it ran and replied an error
  // Its latencies (latency-tracking), allocated on its first timed call: a
  // histogram is 24 KiB and most commands are never called.
  std::unique_ptr<LatencyHistogram> histogram;
};

struct Stats {
  uint64_t total_connections_received = 0;
  uint64_t total_commands_processed = 0;
  uint64_t rejected_connections = 0;
  uint64_t expired_keys = 0;
  uint64_t evicted_keys = 0;  // maxmemory (eviction.cc)
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t total_net_input_bytes = 0;
  uint64_t total_net_output_bytes = 0;
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
  uint64_t total_reads_processed = 0;   // reads from client sockets
  uint64_t total_writes_processed = 0;  // writes to client sockets
  uint64_t known_script_calls = 0;      // EVAL/EVALSHA of a known lock script (native)
  uint64_t lua_script_calls = 0;        // scripts and functions run in Lua
  // For instantaneous_ops_per_sec and instantaneous_{input,output}_kbps:
  // per-second rates of the counters, sampled every 100 ms.
  static constexpr int kOpsSamples = 16;
  int64_t ops_sample_time_ms = 0;
  uint64_t ops_sample_count = 0, input_sample_bytes = 0, output_sample_bytes = 0;
  uint64_t ops_samples[kOpsSamples] = {};
  uint64_t input_samples[kOpsSamples] = {};
  uint64_t output_samples[kOpsSamples] = {};
  int ops_sample_index = 0;
  static uint64_t Average(const uint64_t (&samples)[kOpsSamples]) {
    uint64_t sum = 0;
    for (uint64_t s : samples) sum += s;
    return sum / kOpsSamples;
  }
  // Takes one sample of each rate when 100 ms passed since the last (the
  // cron calls it); true when it did.
  bool Sample(int64_t now_ms) {
    if (now_ms - ops_sample_time_ms < 100) return false;
    const int64_t dt = now_ms - ops_sample_time_ms;
    auto rate = [&](uint64_t total, uint64_t& last) {
      uint64_t per_second =
          ops_sample_time_ms == 0 ? 0 : (total - last) * 1000 / static_cast<uint64_t>(dt);
      last = total;
      return per_second;
    };
    const int i = ops_sample_index;
    ops_samples[i] = rate(total_commands_processed, ops_sample_count);
    input_samples[i] = rate(total_net_input_bytes, input_sample_bytes);
    output_samples[i] = rate(total_net_output_bytes, output_sample_bytes);
    ops_sample_index = (i + 1) % kOpsSamples;
    ops_sample_time_ms = now_ms;
    return true;
  }
  uint64_t InstantaneousOps() const { return Average(ops_samples); }
  uint64_t InstantaneousInputBytes() const { return Average(input_samples); }
  uint64_t InstantaneousOutputBytes() const { return Average(output_samples); }

  // Per command, by CommandSpec::index (INFO commandstats, latencystats).
  std::vector<CommandStats> commands;
  CommandStats& command(size_t index) {
    if (index >= commands.size()) commands.resize(index + 1);
    return commands[index];
  }
  const CommandStats* find_command(size_t index) const {
    return index < commands.size() ? &commands[index] : nullptr;
  }
  // Error replies by their code, the error's first word (INFO errorstats:
  // errorstat_ERR, errorstat_NOAUTH…).
  std::map<std::string, uint64_t, std::less<>> errors;
};

}  // namespace latch
