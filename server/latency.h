// How long things take: per-command latency histograms (INFO latencystats,
// LATENCY HISTOGRAM) and the latency monitor's spikes (LATENCY LATEST,
// HISTORY, GRAPH, DOCTOR), with Redis's definitions so that dashboards and
// redis-cli read the same numbers in the same shapes.
//
// The gate measures every command (gate.h) when one of these consumers is
// on; this file only keeps and renders what it is told.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace latch {

// An HdrHistogram of durations in nanoseconds from 1 ns to 1 s with two
// significant decimal digits: the parameters Redis uses for its per-command
// histograms (latency-tracking). Values are grouped in 256 linear
// sub-buckets per power of two, so a recorded value is known to within 1%;
// a percentile is reported as the highest value of its group, as HdrHistogram
// does (1000 ns reads back as 1003 ns). The same samples give Redis's
// percentiles and Redis's LATENCY HISTOGRAM buckets.
class LatencyHistogram {
 public:
  static constexpr int64_t kLowest = 1;               // ns
  static constexpr int64_t kHighest = 1'000'000'000;  // ns

  // Records one duration, clamped to [kLowest, kHighest] as Redis clamps.
  void Record(int64_t ns);
  uint64_t count() const { return total_; }
  // The value (ns) at or below which `percentile` percent of the samples
  // fall, as the highest value of its group; 0 when empty.
  int64_t ValueAtPercentile(double percentile) const;
  // LATENCY HISTOGRAM's buckets: cumulative counts at 1, 2, 4, 8… µs (the
  // highest value of each power-of-two group from 1024 ns, in µs), only
  // where the count grows. Pairs of (µs, samples at or below).
  std::vector<std::pair<int64_t, uint64_t>> PowerOfTwoBuckets() const;

 private:
  // 2 significant digits: 2 * 10^2 = 200 values need single-unit
  // resolution, so 256 sub-buckets (half of them per bucket after the
  // first); 23 buckets reach 1 s.
  static constexpr int kSubBucketHalfCountMagnitude = 7;
  static constexpr int kSubBucketHalfCount = 1 << kSubBucketHalfCountMagnitude;  // 128
  static constexpr int kSubBucketCount = 2 * kSubBucketHalfCount;                // 256
  static constexpr int kBucketCount = 23;
  static constexpr int kCountsLen = (kBucketCount + 1) * kSubBucketHalfCount;

  static int BucketIndex(int64_t v);
  static int CountsIndex(int64_t v);
  static int64_t ValueAtIndex(int index);
  static int64_t LowestEquivalent(int64_t v);
  static int64_t HighestEquivalent(int64_t v);

  std::array<uint64_t, kCountsLen> counts_{};
  uint64_t total_ = 0;
};

// The latency monitor (latency-monitor-threshold): for each event class
// ("command", "fast-command", "expire-cycle", "aof-write"), the worst
// latency of each of the last 160 seconds in which it exceeded the
// threshold, and the worst ever. As Redis's latency.c.
class LatencyMonitor {
 public:
  static constexpr size_t kSamples = 160;
  struct Sample {
    int64_t time = 0;     // Unix seconds; 0: an unused slot
    int64_t latency = 0;  // ms
  };
  struct Series {
    std::array<Sample, kSamples> samples{};
    size_t next = 0;  // the slot the next second's sample goes to
    int64_t max = 0;  // the worst ever, in ms
    // The samples in time order, oldest first.
    std::vector<Sample> Ordered() const;
    const Sample& Latest() const { return samples[(next + kSamples - 1) % kSamples]; }
  };

  // One spike of `latency_ms` for `event` at Unix second `now_s` (the
  // caller has checked it against the threshold).
  void Add(std::string_view event, int64_t latency_ms, int64_t now_s);
  const std::map<std::string, Series, std::less<>>& events() const { return events_; }
  const Series* Find(std::string_view event) const;
  // Forgets the named events (every event when `events` is empty); returns
  // how many were known.
  size_t Reset(std::span<const std::string_view> events);

  // LATENCY GRAPH: an ASCII sparkline of the event's samples, labelled with
  // how long ago each happened (Redis's latencyCommandGenSparkeline).
  std::string Graph(std::string_view event, const Series& series, int64_t now_s) const;
  // LATENCY DOCTOR: per event, its spikes summarized, then what may cause
  // them in a lock server and what to do about it.
  std::string Doctor(int64_t threshold_ms, int64_t now_s) const;

 private:
  std::map<std::string, Series, std::less<>> events_;
};

}  // namespace latch
