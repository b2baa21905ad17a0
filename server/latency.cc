#include "server/latency.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace latch {

// ---------------------------------------------------------------- histogram
//
// HdrHistogram's arithmetic for a lowest trackable value of 1 (unit
// magnitude 0) and 256 sub-buckets: a value v falls in bucket b, the power
// of two that makes v >> b fit in 8 bits, and in sub-bucket v >> b of it.
// Every bucket but the first uses only its upper half of sub-buckets (the
// lower half is the previous bucket's range at half the resolution), so the
// counts array holds 128 slots per bucket plus 128 for the first.

int LatencyHistogram::BucketIndex(int64_t v) {
  int pow2ceiling = 64 - __builtin_clzll(static_cast<uint64_t>(v) | (kSubBucketCount - 1));
  return pow2ceiling - (kSubBucketHalfCountMagnitude + 1);
}

int LatencyHistogram::CountsIndex(int64_t v) {
  int bucket = BucketIndex(v);
  int sub = static_cast<int>(v >> bucket);
  return ((bucket + 1) << kSubBucketHalfCountMagnitude) + (sub - kSubBucketHalfCount);
}

int64_t LatencyHistogram::ValueAtIndex(int index) {
  int bucket = (index >> kSubBucketHalfCountMagnitude) - 1;
  int sub = (index & (kSubBucketHalfCount - 1)) + kSubBucketHalfCount;
  if (bucket < 0) {
    sub -= kSubBucketHalfCount;
    bucket = 0;
  }
  return static_cast<int64_t>(sub) << bucket;
}

int64_t LatencyHistogram::LowestEquivalent(int64_t v) {
  int bucket = BucketIndex(v);
  return (v >> bucket) << bucket;
}

int64_t LatencyHistogram::HighestEquivalent(int64_t v) {
  return LowestEquivalent(v) + (int64_t{1} << BucketIndex(v)) - 1;
}

void LatencyHistogram::Record(int64_t ns) {
  ns = std::clamp(ns, kLowest, kHighest);
  int index = CountsIndex(ns);
  if (index < 0 || index >= kCountsLen) return;
  ++counts_[index];
  ++total_;
}

int64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  if (total_ == 0) return 0;
  double requested = std::min(percentile, 100.0);
  auto count_at = static_cast<uint64_t>((requested / 100) * static_cast<double>(total_) + 0.5);
  count_at = std::max<uint64_t>(count_at, 1);
  uint64_t cumulative = 0;
  for (int i = 0; i < kCountsLen; ++i) {
    cumulative += counts_[i];
    if (cumulative >= count_at) {
      int64_t v = ValueAtIndex(i);
      return percentile == 0.0 ? LowestEquivalent(v) : HighestEquivalent(v);
    }
  }
  return 0;
}

std::vector<std::pair<int64_t, uint64_t>> LatencyHistogram::PowerOfTwoBuckets() const {
  // HdrHistogram's logarithmic iterator from 1024 ns, base 2, as Redis's
  // LATENCY HISTOGRAM walks it: at each level the count of every sample up
  // to and including the level's group.
  std::vector<std::pair<int64_t, uint64_t>> out;
  uint64_t cumulative = 0, reported = 0;
  int next = 0;
  for (int64_t level = 1024; cumulative < total_; level *= 2) {
    int last = CountsIndex(level);
    if (last >= kCountsLen) break;  // past 1 s: HdrHistogram stops there too
    for (; next <= last; ++next) cumulative += counts_[next];
    if (cumulative > reported) out.emplace_back(HighestEquivalent(level) / 1000, cumulative);
    reported = cumulative;
  }
  return out;
}

// ---------------------------------------------------------------- monitor

std::vector<LatencyMonitor::Sample> LatencyMonitor::Series::Ordered() const {
  std::vector<Sample> out;
  for (size_t j = 0; j < kSamples; ++j) {
    const Sample& s = samples[(next + j) % kSamples];
    if (s.time != 0) out.push_back(s);
  }
  return out;
}

void LatencyMonitor::Add(std::string_view event, int64_t latency_ms, int64_t now_s) {
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Series{}).first;
  Series& s = it->second;
  s.max = std::max(s.max, latency_ms);
  // One sample per second: a second spike in the same second only raises it.
  Sample& previous = s.samples[(s.next + kSamples - 1) % kSamples];
  if (previous.time == now_s) {
    previous.latency = std::max(previous.latency, latency_ms);
    return;
  }
  s.samples[s.next] = Sample{now_s, latency_ms};
  s.next = (s.next + 1) % kSamples;
}

const LatencyMonitor::Series* LatencyMonitor::Find(std::string_view event) const {
  auto it = events_.find(event);
  return it == events_.end() ? nullptr : &it->second;
}

size_t LatencyMonitor::Reset(std::span<const std::string_view> events) {
  if (events.empty()) {
    size_t n = events_.size();
    events_.clear();
    return n;
  }
  size_t n = 0;
  for (std::string_view e : events) {
    auto it = events_.find(e);
    if (it == events_.end()) continue;
    events_.erase(it);
    ++n;
  }
  return n;
}

namespace {

// Redis's sparkline.c: each sample is a column; `rows` text rows of three
// characters' resolution each draw it, filled below the top ("_o#" and
// '|'), then each column's label is written vertically below.
struct Point {
  double value;
  std::string label;
};

void RenderRange(std::string& out, const std::vector<Point>& seq, double min, double max, int rows,
                 size_t offset, size_t len) {
  static constexpr char kFill[] = "_o#";
  constexpr int kCharsetLen = 3;
  constexpr int kLabelMarginTop = 1;
  double relmax = max - min;
  if (relmax == 0) relmax = 1;
  const int steps = kCharsetLen * rows;
  std::string chars;
  for (int row = 0;; ++row) {
    bool more = false;
    chars.assign(len, ' ');
    for (size_t j = 0; j < len; ++j) {
      const Point& p = seq[j + offset];
      double relval = p.value - min;
      int step = static_cast<int>(static_cast<int>(relval * steps) / relmax);
      step = std::clamp(step, 0, steps - 1);
      if (row < rows) {
        int charidx = step - (rows - row - 1) * kCharsetLen;
        more = true;
        if (charidx >= 0 && charidx < kCharsetLen) {
          chars[j] = kFill[charidx];
        } else if (charidx >= kCharsetLen) {
          chars[j] = '|';
        }
      } else {
        if (row - rows < kLabelMarginTop) {  // a blank line before the labels
          more = true;
          break;
        }
        int label_char = row - rows - kLabelMarginTop;
        if (static_cast<int>(p.label.size()) > label_char) {
          more = true;
          chars[j] = p.label[label_char];
        }
      }
    }
    if (!more) break;
    out += chars;
    out += '\n';
  }
}

std::string AgoLabel(int64_t elapsed) {
  char buf[32];
  if (elapsed < 60) {
    std::snprintf(buf, sizeof(buf), "%llds", static_cast<long long>(elapsed));
  } else if (elapsed < 3600) {
    std::snprintf(buf, sizeof(buf), "%lldm", static_cast<long long>(elapsed / 60));
  } else if (elapsed < 86400) {
    std::snprintf(buf, sizeof(buf), "%lldh", static_cast<long long>(elapsed / 3600));
  } else {
    std::snprintf(buf, sizeof(buf), "%lldd", static_cast<long long>(elapsed / 86400));
  }
  return buf;
}

}  // namespace

std::string LatencyMonitor::Graph(std::string_view event, const Series& series,
                                  int64_t now_s) const {
  constexpr size_t kColumns = 80;
  std::vector<Point> seq;
  int64_t low = 0, high = 0;
  for (const Sample& s : series.Ordered()) {
    if (seq.empty()) {
      low = high = s.latency;
    } else {
      low = std::min(low, s.latency);
      high = std::max(high, s.latency);
    }
    seq.push_back({static_cast<double>(s.latency), AgoLabel(now_s - s.time)});
  }
  std::string out(event);
  out += " - high " + std::to_string(high) + " ms, low " + std::to_string(low) +
         " ms (all time high " + std::to_string(series.max) + " ms)\n";
  out += std::string(kColumns, '-') + "\n";
  for (size_t j = 0; j < seq.size(); j += kColumns) {
    if (j != 0) out += '\n';
    RenderRange(out, seq, static_cast<double>(low), static_cast<double>(high), 4, j,
                std::min(kColumns, seq.size() - j));
  }
  return out;
}

std::string LatencyMonitor::Doctor(int64_t threshold_ms, int64_t now_s) const {
  if (threshold_ms <= 0) {
    return "Latency monitoring is disabled in this latch instance. Enable it with \"CONFIG SET "
           "latency-monitor-threshold <milliseconds>\": commands (and the log's writes, and "
           "expiry cycles) that take at least that long are then recorded, and this report "
           "analyses them.\n";
  }
  if (events_.empty()) {
    return "No latency spike of " + std::to_string(threshold_ms) +
           " ms or more was observed during the lifetime of this latch instance.\n";
  }
  std::string out = "Latency spikes of " + std::to_string(threshold_ms) +
                    " ms or more were observed in this latch instance:\n\n";
  int n = 0;
  bool slow_commands = false, slow_fast_commands = false, slow_log = false, slow_expiry = false;
  for (const auto& [name, series] : events_) {
    // As Redis's analyzeLatencyForEvent: average, mean absolute deviation,
    // and the mean time between spikes over the window kept.
    std::vector<Sample> samples = series.Ordered();
    if (samples.empty()) continue;
    int64_t sum = 0, oldest = samples.front().time;
    for (const Sample& s : samples) sum += s.latency;
    int64_t avg = sum / static_cast<int64_t>(samples.size());
    int64_t deviation = 0;
    for (const Sample& s : samples) deviation += std::llabs(avg - s.latency);
    deviation /= static_cast<int64_t>(samples.size());
    int64_t period = std::max<int64_t>(now_s - oldest, 1);
    char line[512];
    std::snprintf(line, sizeof(line),
                  "%d. %s: %zu latency spikes (average %lldms, mean deviation %lldms, period "
                  "%.2f sec). Worst all time event %lldms.\n",
                  ++n, name.c_str(), samples.size(), static_cast<long long>(avg),
                  static_cast<long long>(deviation),
                  static_cast<double>(period) / static_cast<double>(samples.size()),
                  static_cast<long long>(series.max));
    out += line;
    slow_commands |= name == "command";
    slow_fast_commands |= name == "fast-command";
    slow_log |= name == "aof-write";
    slow_expiry |= name == "expire-cycle";
  }
  out += "\nWhat may cause them, and what to do:\n\n";
  if (slow_commands) {
    out +=
        "- Slow commands: SLOWLOG GET shows which. KEYS, SCAN with a large COUNT, MGET/MSET "
        "of many keys and long values cost time in proportion to their size; prefer SCAN "
        "with a small COUNT to KEYS on a large keyspace.\n";
  }
  if (slow_fast_commands) {
    out +=
        "- Commands that take constant time (GET, SET, DELIFEQ…) were slow: the process "
        "did not get the CPU (an overloaded or oversubscribed host, a VM steal, swapping). "
        "Check the host's load and that latch's memory is not swapped out.\n";
  }
  if (slow_log) {
    out +=
        "- Writing the append-only log was slow: the disk is busy or slow. With appendfsync "
        "always every write waits for an fsync; everysec moves it to a background thread.\n";
  }
  if (slow_expiry) {
    out +=
        "- An expiry cycle was slow: many leases ended at the same moment. Spreading lease "
        "lengths a little (a random part in the TTL) spreads the work.\n";
  }
  out +=
      "\nLATENCY HISTORY <event> and LATENCY GRAPH <event> show the samples; LATENCY RESET "
      "forgets them.\n";
  return out;
}

}  // namespace latch
