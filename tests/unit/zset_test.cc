// ZSetValue (server/types/zset.h), both encodings, against a plain
// std::set model over random operations: order, scores, ranks, ranges,
// counts, the links both ways; the conversion rules; the appliers of ZADD
// and ZREM; the score and range texts.
#include "server/types/zset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "log/reader.h"
#include "log/record.h"
#include "protocol/text.h"
#include "server/keyspace.h"
#include "server/types/value_ref.h"

namespace latch {
namespace {

using Model = std::set<std::pair<double, std::string>>;

std::vector<std::pair<std::string, double>> Forward(const ZSetValue& z) {
  std::vector<std::pair<std::string, double>> out;
  for (auto it = z.First(); it.valid(); it.Next()) out.emplace_back(it.member(), it.score());
  return out;
}

std::vector<std::pair<std::string, double>> Backward(const ZSetValue& z) {
  std::vector<std::pair<std::string, double>> out;
  for (auto it = z.Last(); it.valid(); it.Prev()) out.emplace_back(it.member(), it.score());
  return {out.rbegin(), out.rend()};
}

std::vector<std::pair<std::string, double>> Expected(const Model& m) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [s, mem] : m) out.emplace_back(mem, s);
  return out;
}

EncodingLimits Limits(int64_t entries, int64_t value) {
  EncodingLimits l;
  l.zset_max_listpack_entries = entries;
  l.zset_max_listpack_value = value;
  return l;
}

// Checks every read of `z` against the model.
void CheckAgainst(const ZSetValue& z, const Model& model, std::mt19937_64& rng) {
  const auto want = Expected(model);
  ASSERT_EQ(z.size(), model.size());
  ASSERT_EQ(Forward(z), want);
  ASSERT_EQ(Backward(z), want);
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& [m, s] = want[i];
    ASSERT_EQ(z.Score(m), s);
    ASSERT_EQ(z.Rank(m), i);
    ASSERT_EQ(z.Rank(m, true), want.size() - 1 - i);
    auto it = z.AtRank(i);
    ASSERT_TRUE(it.valid());
    ASSERT_EQ(it.member(), m);
    ASSERT_EQ(z.RankOf(it), i);
  }
  EXPECT_FALSE(z.AtRank(want.size()).valid());
  EXPECT_FALSE(z.Score("absent-member").has_value());
  EXPECT_FALSE(z.Rank("absent-member").has_value());
  // Score ranges with every kind of end.
  for (int k = 0; k < 20; ++k) {
    ScoreRange r;
    r.min = static_cast<double>(rng() % 60) - 30;
    r.max = static_cast<double>(rng() % 60) - 30;
    r.minex = rng() % 2;
    r.maxex = rng() % 2;
    if (rng() % 8 == 0) r.min = -INFINITY;
    if (rng() % 8 == 0) r.max = INFINITY;
    std::vector<std::pair<std::string, double>> in;
    for (const auto& p : want) {
      if (r.Contains(p.second)) in.push_back(p);
    }
    ASSERT_EQ(z.CountInRange(r), in.size());
    auto first = z.FirstInRange(r);
    auto last = z.LastInRange(r);
    ASSERT_EQ(first.valid(), !in.empty());
    ASSERT_EQ(last.valid(), !in.empty());
    if (!in.empty()) {
      ASSERT_EQ(first.member(), in.front().first);
      ASSERT_EQ(last.member(), in.back().first);
    }
  }
}

void RandomOps(bool packed, const EncodingLimits& limits, int ops, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ZSetValue z(packed);
  Model model;
  std::map<std::string, double> scores;
  for (int i = 0; i < ops; ++i) {
    const std::string m = "m" + std::to_string(rng() % 300);
    if (rng() % 3 != 0) {
      // Few distinct scores: many ties, ordered by member.
      double s = static_cast<double>(static_cast<int64_t>(rng() % 40) - 20);
      if (rng() % 5 == 0) s += 0.5;
      if (rng() % 50 == 0) s = rng() % 2 ? INFINITY : -INFINITY;
      auto old = scores.find(m);
      auto result = z.Set(m, s, limits);
      if (old == scores.end()) {
        EXPECT_EQ(result, ZSetValue::SetResult::kAdded);
      } else if (old->second == s) {
        EXPECT_EQ(result, ZSetValue::SetResult::kSame);
      } else {
        EXPECT_EQ(result, ZSetValue::SetResult::kUpdated);
        model.erase({old->second, m});
      }
      model.insert({s, m});
      scores[m] = s;
    } else {
      auto old = scores.find(m);
      EXPECT_EQ(z.Remove(m), old != scores.end());
      if (old != scores.end()) {
        model.erase({old->second, m});
        scores.erase(old);
      }
    }
    if (i % 97 == 0) CheckAgainst(z, model, rng);
  }
  CheckAgainst(z, model, rng);
  // A copy is equal, and stays equal to the model.
  auto copy = z.Clone();
  EXPECT_TRUE(copy->Equals(z));
  EXPECT_TRUE(z.Equals(*copy));
  CheckAgainst(static_cast<const ZSetValue&>(*copy), model, rng);
}

TEST(ZSetTest, ListpackAgainstAModel) {
  RandomOps(true, Limits(1000, 64), 3000, 1);
}

TEST(ZSetTest, SkiplistAgainstAModel) {
  for (uint64_t seed = 1; seed <= 4; ++seed) RandomOps(false, Limits(128, 64), 6000, seed);
}

TEST(ZSetTest, ConvertsWhenTheListpackWouldPassALimit) {
  ZSetValue z;
  const auto limits = Limits(3, 5);
  z.Set("a", 1, limits);
  z.Set("b", 2, limits);
  z.Set("c", 3, limits);
  EXPECT_EQ(z.encoding(), "listpack");
  z.Set("c", 4, limits);  // an update never converts
  EXPECT_EQ(z.encoding(), "listpack");
  z.Set("d", 5, limits);  // a fourth member: over the entries limit
  EXPECT_EQ(z.encoding(), "skiplist");
  EXPECT_EQ(z.size(), 4u);
  ZSetValue y;
  y.Set("short", 1, limits);
  y.Set("longer", 2, limits);  // 6 bytes > 5
  EXPECT_EQ(y.encoding(), "skiplist");
  EXPECT_EQ(Forward(y), (std::vector<std::pair<std::string, double>>{{"short", 1}, {"longer", 2}}));
  // A skiplist stays one when it shrinks.
  y.Remove("longer");
  EXPECT_EQ(y.encoding(), "skiplist");
}

TEST(ZSetTest, ListpackKeepsScoresExactlyButNegativeZeroAsZero) {
  ZSetValue z;
  const auto limits = Limits(128, 64);
  const double scores[] = {0.1,
                           -3.0,
                           1e300,
                           -1e-300,
                           4.9e-324,
                           36028797018963967.0,
                           36028797018963968.0,
                           -36028797018963968.0,
                           4611686018427387904.0,
                           INFINITY,
                           -INFINITY,
                           255,
                           -256,
                           65536,
                           -2147483649.0};
  for (size_t i = 0; i < std::size(scores); ++i) z.Set("m" + std::to_string(i), scores[i], limits);
  for (size_t i = 0; i < std::size(scores); ++i) {
    EXPECT_EQ(z.Score("m" + std::to_string(i)), scores[i]) << i;
  }
  z.Set("neg-zero", -0.0, limits);
  EXPECT_FALSE(std::signbit(*z.Score("neg-zero")));  // Redis's listpack stores 0
  ZSetValue s(false);
  s.Set("neg-zero", -0.0, limits);
  EXPECT_TRUE(std::signbit(*s.Score("neg-zero")));  // a skiplist keeps the double
}

TEST(ZSetTest, LexRanges) {
  for (bool packed : {true, false}) {
    ZSetValue z(packed);
    for (const char* m : {"a", "b", "c", "d", "e"}) z.Set(m, 0, Limits(128, 64));
    auto count = [&](const char* min, const char* max) {
      auto r = ParseLexRange(min, max);
      EXPECT_TRUE(r.has_value()) << min << " " << max;
      return r ? z.CountInLex(*r) : 0;
    };
    EXPECT_EQ(count("-", "+"), 5u);
    EXPECT_EQ(count("[b", "[d"), 3u);
    EXPECT_EQ(count("(b", "[d"), 2u);
    EXPECT_EQ(count("(b", "(d"), 1u);
    EXPECT_EQ(count("[d", "[b"), 0u);
    EXPECT_EQ(count("-", "-"), 0u);
    EXPECT_EQ(count("+", "+"), 0u);
    EXPECT_EQ(count("+", "-"), 0u);
    EXPECT_EQ(count("[c", "[c"), 1u);
    EXPECT_EQ(count("(c", "[c"), 0u);
    EXPECT_EQ(count("[", "+"), 5u);
    auto r = *ParseLexRange("(a", "(e");
    EXPECT_EQ(z.FirstInLex(r).member(), "b");
    EXPECT_EQ(z.LastInLex(r).member(), "d");
  }
  EXPECT_FALSE(ParseLexRange("a", "+"));
  EXPECT_FALSE(ParseLexRange("-", "++"));
  EXPECT_FALSE(ParseLexRange("", "+"));
  EXPECT_TRUE(ParseLexRange(std::string_view("+\0x", 3), "-"));  // a C string: "+"
}

TEST(ZSetTest, ScoreTexts) {
  EXPECT_EQ(FormatScore(1), "1");
  EXPECT_EQ(FormatScore(-0.0), "-0");
  EXPECT_EQ(FormatScore(0.1), "0.10000000000000001");
  EXPECT_EQ(FormatScore(INFINITY), "inf");
  EXPECT_EQ(FormatScore(-INFINITY), "-inf");
  EXPECT_EQ(FormatScore(1e17), "100000000000000000");
  EXPECT_EQ(FormatScore(1e20), "1e+20");
  EXPECT_EQ(ScanScoreText(1e17, false), "1e+17");
  EXPECT_EQ(ScanScoreText(1e17, true), "100000000000000000");
  // Every formatted score reads back to the same double.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    if (std::isnan(d)) continue;
    auto back = ParseDoubleArg(FormatScore(d));
    ASSERT_TRUE(back.has_value()) << FormatScore(d);
    ASSERT_EQ(std::memcmp(&*back, &d, 8), 0) << FormatScore(d);
  }
}

TEST(ZSetTest, ScoreRangesParseAsRedis) {
  auto r = ParseScoreRange("(1.5", "+inf");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->minex);
  EXPECT_FALSE(r->maxex);
  EXPECT_EQ(r->min, 1.5);
  EXPECT_TRUE(std::isinf(r->max));
  EXPECT_TRUE(ParseScoreRange(" 1", "2"));     // strtod skips leading blanks
  EXPECT_TRUE(ParseScoreRange("", "("));       // "" reads as 0
  EXPECT_TRUE(ParseScoreRange("1e999", "2"));  // overflow is inf
  EXPECT_FALSE(ParseScoreRange("nan", "1"));
  EXPECT_FALSE(ParseScoreRange("1x", "1"));
  EXPECT_FALSE(ParseScoreRange("1", "((1"));
  EXPECT_TRUE(ParseScoreRange(std::string_view("1\0x", 3), "2"));  // a C string
}

// ---- the appliers

struct Applying {
  Keyspace ks;
  aof::Batch batch;
  std::vector<std::string> words;
  Applied Apply(std::vector<std::string> w, const EncodingLimits& limits = Limits(128, 64)) {
    words = std::move(w);
    std::vector<std::string_view> views(words.begin(), words.end());
    aof::Record r;
    EXPECT_EQ(aof::Decode(views, &r), "");
    return r.op == aof::Op::kZAdd ? ApplyZAdd(ks, r, limits) : ApplyZRem(ks, r);
  }
  // The sorted set under `key` (a copy when packed in its entry: a view
  // would not outlive the next change), or nullptr.
  const ZSetValue* Get(std::string_view key) {
    const Keyspace::Entry* e = ks.Peek(key);
    if (e == nullptr) return nullptr;
    if (e->boxed()) return static_cast<const ZSetValue*>(e->object());
    copies.push_back(WithObject(*e, [](const Object& o) { return o.Clone(); }));
    return static_cast<const ZSetValue*>(copies.back().get());
  }
  std::deque<std::unique_ptr<Object>> copies;
};

TEST(ZSetTest, AppliersCreateChangeAndDeleteTheKey) {
  Applying a;
  Applied r = a.Apply({"ZADD", "z", "1", "a", "2", "b", "1", "a"});
  EXPECT_EQ(r.count, 2);
  EXPECT_TRUE(r.changed);
  ASSERT_NE(a.Get("z"), nullptr);
  EXPECT_EQ(a.Get("z")->encoding(), "listpack");
  r = a.Apply({"ZADD", "z", "1", "a"});
  EXPECT_EQ(r.count, 0);
  EXPECT_FALSE(r.changed);
  r = a.Apply({"ZADD", "z", "3", "a"});
  EXPECT_EQ(r.count, 0);
  EXPECT_TRUE(r.changed);
  r = a.Apply({"ZREM", "z", "x", "a"});
  EXPECT_EQ(r.count, 1);
  r = a.Apply({"ZREM", "z", "b"});
  EXPECT_EQ(r.count, 1);
  EXPECT_EQ(a.Get("z"), nullptr);  // the last member took the key with it
  r = a.Apply({"ZREM", "z", "b"});
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(r.error.empty());
  // A first member longer than the limit: a skiplist from the start.
  a.Apply({"ZADD", "long", "1", std::string(65, 'x')});
  EXPECT_EQ(a.Get("long")->encoding(), "skiplist");
  a.Apply({"ZADD", "none", "1", "a"}, Limits(0, 64));
  EXPECT_EQ(a.Get("none")->encoding(), "skiplist");
}

TEST(ZSetTest, AppliersRefuseAnotherTypeAndBadScores) {
  Applying a;
  a.ks.Set("s", "string", kNoDeadline);
  Applied r = a.Apply({"ZADD", "s", "1", "a"});
  EXPECT_FALSE(r.error.empty());
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(a.ks.Peek("s")->is_string());
  r = a.Apply({"ZREM", "s", "a"});
  EXPECT_FALSE(r.error.empty());
  std::vector<std::string_view> bad = {"ZADD", "z", "nan", "a"};
  aof::Record rec;
  EXPECT_NE(aof::Decode(bad, &rec), "");
  bad = {"ZADD", "z", "1", "a", "2"};
  EXPECT_NE(aof::Decode(bad, &rec), "");
}

TEST(ZSetTest, WriteRecordsRebuildsTheValueInBatches) {
  for (bool packed : {true, false}) {
    ZSetValue z(packed);
    for (int i = 0; i < (packed ? 100 : 300); ++i) {
      z.Set("member:" + std::to_string(i), i % 7 == 0 ? 0.25 * i : i, Limits(1000, 64));
    }
    aof::Batch out;
    z.WriteRecords("k", out);
    aof::Reader reader(out.bytes());
    Keyspace ks;
    size_t records = 0;
    while (reader.Next() == aof::Reader::Status::kUnit) {
      for (const aof::Record& r : reader.records()) {
        ASSERT_EQ(r.op, aof::Op::kZAdd);
        ASSERT_LE(r.args.size(), 2u + 2 * 64);
        ApplyZAdd(ks, r, Limits(1000, 64));
        ++records;
      }
    }
    EXPECT_EQ(records, (z.size() + 63) / 64);
    ASSERT_NE(ks.Peek("k"), nullptr);
    EXPECT_TRUE(WithObject(*ks.Peek("k"), [&](const Object& o) { return o.Equals(z); }));
  }
}

TEST(ZSetTest, RandomIsUniform) {
  // Every member about equally often, in both encodings (ZRANDMEMBER's
  // distribution is checked by Redis's own tests with a chi-square).
  for (bool packed : {true, false}) {
    ZSetValue z(packed);
    for (int i = 0; i < 20; ++i) z.Set("m" + std::to_string(i), i, Limits(128, 64));
    std::mt19937_64 rng(3);
    std::map<std::string, int> seen;
    for (int i = 0; i < 20000; ++i) ++seen[std::string(z.Random(rng).member())];
    ASSERT_EQ(seen.size(), 20u);
    for (const auto& [m, n] : seen) EXPECT_NEAR(n, 1000, 150) << m;
  }
}

}  // namespace
}  // namespace latch
