// latch-chaos's pure parts, without servers: the acknowledged-write loss rule
// on fabricated histories (so we know the tracker can fail, and fails for the
// right reasons), and the seeded schedule.
#include <gtest/gtest.h>

#include <set>

#include "tools/chaos/acks.h"
#include "tools/chaos/schedule.h"
#include "tools/chaos/timeline.h"

namespace latch::chaos {
namespace {

// A history of one node: acks 1..n, all from `run`, acknowledged 1 ms apart.
std::vector<Ack> Acks(int64_t from, int64_t to, int run, Clock::time_point t0) {
  std::vector<Ack> out;
  for (int64_t n = from; n <= to; ++n) out.push_back(Ack{n, run, run, t0 + Millis{n}, false});
  return out;
}

std::vector<bool> PresentExcept(const std::vector<Ack>& acks, std::set<int64_t> missing) {
  std::vector<bool> out;
  for (const Ack& a : acks) out.push_back(missing.count(a.n) == 0);
  return out;
}

const auto kEverysec = [](int) { return true; };
const auto kAlways = [](int) { return false; };

TEST(JudgeLoss, AProcessCrashMayLoseNothing) {
  const auto t0 = Clock::now();
  auto acks = Acks(1, 10, 0, t0);
  auto v = JudgeLoss(acks, PresentExcept(acks, {10}), 0, /*power_loss=*/false, kEverysec,
                     t0 + Millis{20});
  EXPECT_TRUE(v.allowed.empty());
  EXPECT_EQ(v.unallowed, std::vector<int64_t>{10});
}

TEST(JudgeLoss, APowerLossUnderEverysecMayLoseTheTail) {
  const auto t0 = Clock::now();
  auto acks = Acks(1, 10, 0, t0);
  auto v = JudgeLoss(acks, PresentExcept(acks, {8, 9, 10}), 0, true, kEverysec, t0 + Millis{20});
  EXPECT_EQ(v.allowed, (std::vector<int64_t>{8, 9, 10}));
  EXPECT_TRUE(v.unallowed.empty());
  EXPECT_EQ(v.oldest_allowed, Millis{12});  // ack 8, at t0 + 8 ms, stop at t0 + 20 ms
}

TEST(JudgeLoss, AHoleBeforeASurvivorIsALoss) {
  // fsync makes a prefix durable: 5 survived, so 4 had reached the disk.
  const auto t0 = Clock::now();
  auto acks = Acks(1, 10, 0, t0);
  auto v = JudgeLoss(acks, PresentExcept(acks, {4, 9, 10}), 0, true, kEverysec, t0 + Millis{20});
  EXPECT_EQ(v.unallowed, std::vector<int64_t>{4});
  EXPECT_EQ(v.allowed, (std::vector<int64_t>{9, 10}));
  EXPECT_NE(v.why.find("a later write survived (n=8)"), std::string::npos) << v.why;
}

TEST(JudgeLoss, APowerLossUnderAlwaysMayLoseNothing) {
  const auto t0 = Clock::now();
  auto acks = Acks(1, 10, 0, t0);
  auto v = JudgeLoss(acks, PresentExcept(acks, {10}), 0, true, kAlways, t0 + Millis{20});
  EXPECT_EQ(v.unallowed, std::vector<int64_t>{10});
}

TEST(JudgeLoss, ACleanShutdownMakesEverythingBeforeItDurable) {
  const auto t0 = Clock::now();
  auto acks = Acks(1, 10, 0, t0);
  for (Ack& a : acks) a.durable = a.n <= 9;
  auto v = JudgeLoss(acks, PresentExcept(acks, {9, 10}), 1, true, kEverysec, t0 + Millis{20});
  EXPECT_EQ(v.unallowed, std::vector<int64_t>{9});
  EXPECT_EQ(v.allowed, std::vector<int64_t>{10});
}

TEST(JudgeLoss, AWriteThatSpannedAStopTakesTheStricterRun) {
  // Run 0 under everysec, run 1 under always; the write's round spanned the
  // stop of run 0, so it may have been acknowledged by run 1.
  const auto t0 = Clock::now();
  std::vector<Ack> acks = {Ack{1, 0, 0, t0, false}, Ack{2, 0, 1, t0, false}};
  auto may_lose = [](int run) { return run == 0; };
  auto v = JudgeLoss(acks, {true, false}, 1, true, may_lose, t0);
  EXPECT_EQ(v.unallowed, std::vector<int64_t>{2});
}

TEST(JudgeLoss, ASurvivorThatMayComeFromTheNewRunProvesNothing) {
  const auto t0 = Clock::now();
  std::vector<Ack> acks = {Ack{1, 0, 0, t0, false}, Ack{2, 0, 0, t0, false},
                           Ack{3, 0, 1, t0, false}};
  auto v = JudgeLoss(acks, {true, false, true}, 0, true, kEverysec, t0);
  EXPECT_EQ(v.allowed, std::vector<int64_t>{2});
  EXPECT_TRUE(v.unallowed.empty());
}

// The book, as the harness drives it: a loss is found and counted once.
TEST(AckBook, CountsALossOnceAndReportsIt) {
  AckBook book(2, true);
  book.RunStarted(1, "everysec");
  const auto t0 = Clock::now();
  for (int64_t n = 1; n <= 5; ++n) book.Record(1, n, 0, 0, t0);
  book.RunEnding(1);  // kill -9
  book.RunStarted(1, "everysec");
  auto lost_3 = [](const std::vector<int64_t>& ns) {
    std::vector<bool> out;
    for (int64_t n : ns) out.push_back(n != 3);
    return std::optional<std::vector<bool>>(out);
  };
  auto line = book.Verify(1, StopKind::kKill, "kill -9", t0, lost_3);
  ASSERT_TRUE(line);
  EXPECT_NE(line->find("1 acknowledged writes lost (ack:1:3; n=3 from runs 0-0 (the stopped run: "
                       "0): not a power loss)"),
            std::string::npos)
      << *line;
  EXPECT_EQ(book.lost_unallowed(), 1);
  EXPECT_EQ(book.lost_allowed(), 0);
  EXPECT_EQ(book.unallowed_by_cause().at("kill -9"), 1);
  // Still missing at the end: not counted again.
  EXPECT_FALSE(book.Verify(1, StopKind::kNone, "end of run", t0, lost_3));
  EXPECT_EQ(book.lost_unallowed(), 1);
  EXPECT_EQ(book.acked(), 5);
}

TEST(AckBook, APowerLossUnderEverysecIsAllowedUnderAlwaysNot) {
  AckBook book(1, true);
  const auto t0 = Clock::now();
  book.RunStarted(0, "everysec");
  for (int64_t n = 1; n <= 4; ++n) book.Record(0, n, 0, 0, t0);
  book.RunEnding(0);
  book.RunStarted(0, "always");
  auto tail_gone = [](int64_t from) {
    return [from](const std::vector<int64_t>& ns) {
      std::vector<bool> out;
      for (int64_t n : ns) out.push_back(n < from);
      return std::optional<std::vector<bool>>(out);
    };
  };
  EXPECT_TRUE(book.Verify(0, StopKind::kPowerLoss, "power loss", t0, tail_gone(4)));
  EXPECT_EQ(book.lost_allowed(), 1);
  EXPECT_EQ(book.lost_unallowed(), 0);
  for (int64_t n = 5; n <= 8; ++n) book.Record(0, n, 1, 1, t0);
  book.RunEnding(0);
  book.RunStarted(0, "always");
  EXPECT_TRUE(book.Verify(0, StopKind::kPowerLoss, "power loss", t0, tail_gone(8)));
  EXPECT_EQ(book.lost_unallowed(), 1);
  // The repaired log excuses nothing, whatever the policy.
  book.RunEnding(0);
  book.RunStarted(0, "everysec");
  EXPECT_TRUE(book.Verify(0, StopKind::kPowerLoss, "repair", t0, tail_gone(7), true));
  EXPECT_EQ(book.lost_unallowed(), 2);
}

// quarantine never explains a violation only when every node that granted
// both locks restarted into never after the first grant.
TEST(ExplainedByNever, EveryNodeThatGrantedBothMustHaveRestartedIntoNever) {
  const auto t0 = Clock::now();
  Hold a, b;
  a.granted = t0 + Millis{1000};
  a.end = t0 + Millis{2000};
  a.granted_by = 0b00111;  // nodes 0, 1, 2
  b.granted = t0 + Millis{1500};
  b.end = t0 + Millis{2500};
  b.granted_by = 0b11100;  // nodes 2, 3, 4: node 2 granted both
  Violation v{&a, &b, b.granted, a.end};
  NodeConf never{"everysec", "never", -1, 0, ""};
  NodeConf aut{"everysec", "auto", -1, 0, ""};
  std::vector<NodeRun> runs;
  for (int n = 0; n < 5; ++n) runs.push_back(NodeRun{n, aut, t0, std::nullopt, false});
  const Millis ttl{1000};
  EXPECT_FALSE(ExplainedByNever(v, runs, ttl));  // node 2 never restarted: a bug
  runs.push_back(NodeRun{2, aut, t0 + Millis{1100}, std::nullopt, true});
  EXPECT_FALSE(ExplainedByNever(v, runs, ttl));  // restarted, but in auto: a bug
  runs.push_back(NodeRun{2, never, t0 + Millis{1200}, std::nullopt, true});
  EXPECT_TRUE(ExplainedByNever(v, runs, ttl));
  runs.push_back(NodeRun{2, aut, t0 + Millis{1400}, std::nullopt, true});
  EXPECT_FALSE(ExplainedByNever(v, runs, ttl));  // back in auto when it granted b
  // A restart into never elsewhere does not explain node 2.
  std::vector<NodeRun> other(runs.begin(), runs.begin() + 5);
  other.push_back(NodeRun{3, never, t0 + Millis{1200}, std::nullopt, true});
  EXPECT_FALSE(ExplainedByNever(v, other, ttl));
}

Options Base() {
  Options o;
  o.duration = Millis{60'000};
  o.seed = 17;
  o.faults = DefaultFaults();
  return o;
}

std::string Text(const std::vector<Fault>& s) {
  std::string out;
  for (const Fault& f : s) out += std::to_string(f.gap.count()) + " " + Describe(f) + "\n";
  return out;
}

TEST(Schedule, DependsOnlyOnTheSeed) {
  Options a = Base(), b = Base(), c = Base();
  c.seed = 18;
  EXPECT_EQ(Text(MakeSchedule(a)), Text(MakeSchedule(b)));
  EXPECT_NE(Text(MakeSchedule(a)), Text(MakeSchedule(c)));
  a.vary_quarantine = b.vary_quarantine = {"auto", "never"};
  EXPECT_EQ(Text(MakeSchedule(a)), Text(MakeSchedule(b)));
}

TEST(Schedule, DrawsEveryDefaultKindAndOnlyThose) {
  Options o = Base();
  o.duration = Millis{600'000};
  o.vary_appendfsync = {"always", "everysec", "no"};
  o.vary_quarantine = {"auto", "always"};
  std::set<FaultKind> seen;
  bool changes = false, stops[6] = {};
  for (const Fault& f : MakeSchedule(o)) {
    seen.insert(f.kind);
    changes |= !f.changes.empty();
    stops[static_cast<int>(f.stop)] = true;
  }
  EXPECT_EQ(seen.size(), DefaultFaults().size());
  EXPECT_EQ(seen.count(FaultKind::kLogLost), 0u);
  EXPECT_TRUE(changes);
  EXPECT_TRUE(stops[static_cast<int>(StopKind::kSigterm)]);
  EXPECT_TRUE(stops[static_cast<int>(StopKind::kPowerLoss)]);
}

TEST(Schedule, AmnesiaAtLeastEveryThirdFault) {
  Options o = Base();
  int since = 0;
  for (const Fault& f : MakeSchedule(o)) {
    since = f.kind == FaultKind::kAmnesia ? 0 : since + 1;
    EXPECT_LE(since, 2);
  }
}

TEST(Schedule, FaultLists) {
  std::string error;
  auto classic = ParseFaultList("classic", &error);
  ASSERT_TRUE(classic);
  EXPECT_EQ(classic->size(), 5u);
  auto some = ParseFaultList("wall-step,crash,crash", &error);
  ASSERT_TRUE(some);
  EXPECT_EQ(*some, (std::vector<FaultKind>{FaultKind::kCrash, FaultKind::kWallStep}));
  EXPECT_FALSE(ParseFaultList("crash,meteor", &error));
  EXPECT_NE(error.find("meteor"), std::string::npos);
}

}  // namespace
}  // namespace latch::chaos
