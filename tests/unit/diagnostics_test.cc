// The diagnostics' own logic: the HdrHistogram arithmetic (the same values
// as Redis's for the same samples), the slow log's entries, the latency
// monitor's samples, and the text rules they share with Redis.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "protocol/text.h"
#include "server/config.h"
#include "server/latency.h"
#include "server/slowlog.h"

namespace latch {
namespace {

TEST(LatencyHistogramTest, PercentilesAreTheHighestValueOfTheirGroup) {
  LatencyHistogram h;
  EXPECT_EQ(h.ValueAtPercentile(50), 0);
  // Redis reports 0.001, 1.003 and 7.007 µs for these (INFO latencystats).
  h.Record(0);  // clamped to 1 ns
  EXPECT_EQ(h.ValueAtPercentile(50), 1);
  h.Record(1000);
  h.Record(7000);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.ValueAtPercentile(50), 1003);
  EXPECT_EQ(h.ValueAtPercentile(99), 7007);
  EXPECT_EQ(h.ValueAtPercentile(100), 7007);
  EXPECT_EQ(h.ValueAtPercentile(0), 1);
  // Two significant digits everywhere in the range.
  for (int64_t v : {int64_t{255}, int64_t{256}, int64_t{99'999}, int64_t{123'456'789}}) {
    LatencyHistogram one;
    one.Record(v);
    int64_t reported = one.ValueAtPercentile(50);
    EXPECT_GE(reported, v);
    EXPECT_LE(reported - v, v / 100 + 1) << v;
  }
  // Beyond one second: clamped, as Redis.
  LatencyHistogram slow;
  slow.Record(5'000'000'000);
  EXPECT_GE(slow.ValueAtPercentile(50), 1'000'000'000);
  EXPECT_LT(slow.ValueAtPercentile(50), 1'010'000'000);
}

TEST(LatencyHistogramTest, PowerOfTwoBucketsAreCumulative) {
  LatencyHistogram h;
  EXPECT_TRUE(h.PowerOfTwoBuckets().empty());
  for (int i = 0; i < 3; ++i) h.Record(500);    // ≤ 1 µs
  for (int i = 0; i < 2; ++i) h.Record(1500);   // ≤ 2 µs
  for (int i = 0; i < 5; ++i) h.Record(60000);  // ≤ 66 µs
  // Redis's LATENCY HISTOGRAM for the same samples: 1→3, 2→5, 66→10.
  std::vector<std::pair<int64_t, uint64_t>> want = {{1, 3}, {2, 5}, {66, 10}};
  EXPECT_EQ(h.PowerOfTwoBuckets(), want);
}

TEST(SlowlogTest, EntriesAsRedisKeepsThem) {
  Slowlog log;
  std::string long_arg(200, 'x');
  std::vector<std::string_view> argv = {"SET", "k", long_arg};
  log.Push(argv, 0, 12345, 1700000000, "127.0.0.1:1000", "me", 128);
  std::vector<std::string> many = {"DEL"};
  for (int i = 0; i < 40; ++i) many.push_back("k" + std::to_string(i));
  std::vector<std::string_view> many_views(many.begin(), many.end());
  log.Push(many_views, 0, 1, 1700000001, "127.0.0.1:1000", "", 128);
  std::vector<std::string_view> auth = {"AUTH", "user", "secret"};
  log.Push(auth, 0b110, 1, 1700000002, "127.0.0.1:1000", "", 128);

  ASSERT_EQ(log.entries().size(), 3u);
  const SlowlogEntry& a = log.entries()[2];  // oldest last
  EXPECT_EQ(a.id, 0u);
  EXPECT_EQ(a.duration_us, 12345);
  EXPECT_EQ(a.argv[2], std::string(128, 'x') + "... (72 more bytes)");
  EXPECT_EQ(a.name, "me");
  const SlowlogEntry& b = log.entries()[1];
  ASSERT_EQ(b.argv.size(), 32u);
  EXPECT_EQ(b.argv[30], "k29");
  EXPECT_EQ(b.argv[31], "... (10 more arguments)");
  const SlowlogEntry& c = log.entries()[0];
  EXPECT_EQ(c.argv, (std::vector<std::string>{"AUTH", "(redacted)", "(redacted)"}));
  // The oldest entries go beyond the length; ids keep counting after RESET.
  log.Trim(1);
  ASSERT_EQ(log.entries().size(), 1u);
  EXPECT_EQ(log.entries()[0].id, 2u);
  log.Reset();
  log.Push(argv, 0, 1, 1700000003, "", "", 128);
  EXPECT_EQ(log.entries()[0].id, 3u);
}

TEST(LatencyMonitorTest, OneSamplePerSecondInARingOf160) {
  LatencyMonitor m;
  m.Add("command", 20, 1000);
  m.Add("command", 50, 1000);  // the same second: the worse one stays
  m.Add("command", 10, 1000);
  const LatencyMonitor::Series* s = m.Find("command");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->Ordered().size(), 1u);
  EXPECT_EQ(s->Latest().latency, 50);
  for (int64_t t = 1001; t < 1001 + 200; ++t) m.Add("command", t - 1000, t);
  s = m.Find("command");
  std::vector<LatencyMonitor::Sample> samples = s->Ordered();
  ASSERT_EQ(samples.size(), LatencyMonitor::kSamples);
  EXPECT_EQ(samples.front().time, 1041);  // the oldest 40 fell out of the ring
  EXPECT_EQ(samples.back().time, 1200);
  EXPECT_EQ(s->max, 200);
  m.Add("fast-command", 5, 1300);
  std::vector<std::string_view> none;
  std::vector<std::string_view> some = {"command", "nosuch"};
  EXPECT_EQ(m.Reset(some), 1u);
  EXPECT_EQ(m.Reset(none), 1u);
  EXPECT_TRUE(m.events().empty());
}

TEST(LatencyMonitorTest, GraphHasRedisLayout) {
  LatencyMonitor m;
  m.Add("command", 100, 1000);
  m.Add("command", 400, 1001);
  m.Add("command", 250, 1002);
  std::string g = m.Graph("command", *m.Find("command"), 1010);
  std::vector<std::string> lines;
  for (size_t start = 0, nl; (nl = g.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(g.substr(start, nl - start));
  }
  ASSERT_GE(lines.size(), 8u);
  EXPECT_EQ(lines[0], "command - high 400 ms, low 100 ms (all time high 400 ms)");
  EXPECT_EQ(lines[1], std::string(80, '-'));
  // Four rows of bars, one column per sample: the highest reaches the top.
  EXPECT_EQ(lines[2].size(), 3u);
  EXPECT_EQ(lines[2][1], '#');
  EXPECT_EQ(lines[5][0], '_');  // the lowest is a floor mark
  // Then a blank line and the labels, written downwards: 10s, 9s, 8s ago.
  EXPECT_EQ(lines[6], "   ");
  EXPECT_EQ(lines[7], "198");
  EXPECT_EQ(lines[8], "0ss");
}

TEST(TextTest, ParseLongDoubleFollowsString2ld) {
  EXPECT_EQ(ParseLongDouble("1.5"), 1.5L);
  EXPECT_EQ(ParseLongDouble("0x10"), 16.0L);
  EXPECT_EQ(ParseLongDouble("-1e3"), -1000.0L);
  EXPECT_TRUE(std::isinf(*ParseLongDouble("inf")));
  EXPECT_TRUE(ParseLongDouble("1e4000").has_value());  // fits a long double
  EXPECT_FALSE(ParseLongDouble("1e5000"));             // overflows it
  EXPECT_FALSE(ParseLongDouble("1e-5000"));            // underflows to 0
  EXPECT_FALSE(ParseLongDouble("nan"));
  EXPECT_FALSE(ParseLongDouble(""));
  EXPECT_FALSE(ParseLongDouble(" 1"));
  EXPECT_FALSE(ParseLongDouble("1 "));
  EXPECT_FALSE(ParseLongDouble(std::string("1\0", 2)));
  EXPECT_FALSE(ParseLongDouble(std::string(5120, '1')));
  EXPECT_EQ(ParseLongDouble(std::string(5118, '0') + "1"), 1.0L);
}

TEST(TextTest, PercentilesPrintAsRedisPrintsThem) {
  EXPECT_EQ(FormatPercentile(50), "50");
  EXPECT_EQ(FormatPercentile(99.9), "99.9");
  EXPECT_EQ(FormatPercentile(0.5), "0.5");
  EXPECT_EQ(FormatPercentile(100), "100");
}

}  // namespace
}  // namespace latch
