// The shared containers of the collection types (server/types/): PackedList
// (the compact encoding) and Dict (the hash table), checked against plain
// std:: models over random operations.
#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "server/types/dict.h"
#include "server/types/packed.h"

namespace latch {
namespace {

std::string RandomValue(std::mt19937_64& rng) {
  // Lengths around the varint boundaries (127/128, 16383/16384) too.
  static const size_t kLengths[] = {0, 1, 5, 20, 126, 127, 128, 129, 300, 16383, 16384};
  size_t len = kLengths[rng() % std::size(kLengths)];
  std::string s(len, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

std::deque<std::string> Contents(const PackedList& p) {
  std::deque<std::string> out;
  for (size_t pos = p.begin(); pos < p.end(); pos = p.Next(pos)) out.emplace_back(p.At(pos));
  return out;
}

std::deque<std::string> ContentsBackward(const PackedList& p) {
  std::deque<std::string> out;
  for (size_t pos = p.Prev(p.end()); pos != p.end(); pos = p.Prev(pos)) {
    out.emplace_front(p.At(pos));
    if (pos == p.begin()) break;
  }
  return out;
}

TEST(PackedListTest, MatchesADequeBothWays) {
  std::mt19937_64 rng(7);
  PackedList p;
  std::deque<std::string> model;
  for (int step = 0; step < 4000; ++step) {
    const int op = static_cast<int>(rng() % 6);
    const auto n = static_cast<int64_t>(model.size());
    if (op == 0 || n == 0) {
      std::string v = RandomValue(rng);
      p.PushBack(v);
      model.push_back(v);
    } else if (op == 1) {
      std::string v = RandomValue(rng);
      p.PushFront(v);
      model.push_front(v);
    } else if (op == 2) {
      int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(n + 1));
      std::string v = RandomValue(rng);
      p.Insert(i == n ? p.end() : p.Seek(i), v);
      model.insert(model.begin() + i, v);
    } else if (op == 3) {
      int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      std::string v = RandomValue(rng);
      p.Replace(p.Seek(i), v);
      model[static_cast<size_t>(i)] = v;
    } else if (op == 4) {
      int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      size_t count = 1 + rng() % 3;
      p.Erase(p.Seek(i), count);
      model.erase(model.begin() + i,
                  model.begin() + std::min<int64_t>(n, i + static_cast<int64_t>(count)));
    } else {
      int64_t i = static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
      EXPECT_EQ(p.At(p.Seek(i)), model[static_cast<size_t>(i)]);
      EXPECT_EQ(p.At(p.Seek(i - n)), model[static_cast<size_t>(i)]);
    }
    ASSERT_EQ(p.size(), model.size());
    if (step % 97 == 0) {
      ASSERT_EQ(Contents(p), model);
      ASSERT_EQ(ContentsBackward(p), model);
    }
  }
  EXPECT_EQ(p.Seek(static_cast<int64_t>(model.size())), p.end());
  EXPECT_EQ(p.Seek(-static_cast<int64_t>(model.size()) - 1), p.end());
}

TEST(PackedListTest, FindStridesOverPairs) {
  PackedList p;
  for (std::string s : {"f1", "v1", "v1", "f2", "f2", "x"}) p.PushBack(s);
  // As field/value pairs: f1→v1, v1→f2, f2→x. "f2" as a field is the third pair.
  EXPECT_EQ(p.At(p.Next(p.Find("f2", 0, 2))), "x");
  EXPECT_EQ(p.Find("missing", 0, 2), p.end());
  EXPECT_EQ(p.At(p.Find("f2")), "f2");
}

// A small packed list holds what it needs and no more (a small hash's
// eight pairs: no doubling to 256 bytes), a large one grows by a quarter;
// copies and moves keep the elements.
TEST(PackedListTest, BufferSizedToItsBytesAndCopiesAndMoves) {
  PackedList p;
  for (int i = 0; i < 8; ++i) {
    p.PushBack("field:" + std::to_string(i));
    p.PushBack("value:" + std::to_string(i));
  }
  EXPECT_EQ(p.bytes(), 16u * 9);
  // The allocator's rounding at most (glibc: 16-byte steps, and a realloc
  // in place may keep a neighbour smaller than its 32-byte minimum chunk).
  EXPECT_LE(p.capacity(), p.bytes() + 48);
  PackedList big;
  for (int i = 0; i < 2000; ++i) big.PushBack("element:" + std::to_string(i));
  EXPECT_LE(big.capacity(), big.bytes() + big.bytes() / 4 + 48);

  PackedList copy(p);
  EXPECT_EQ(Contents(copy), Contents(p));
  PackedList moved(std::move(copy));
  EXPECT_EQ(Contents(moved), Contents(p));
  EXPECT_EQ(copy.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(copy.bytes(), 0u);
  copy = big;
  EXPECT_EQ(Contents(copy), Contents(big));
  copy.Erase(copy.begin(), 1990);
  copy.Shrink();
  EXPECT_EQ(copy.size(), 10u);
  EXPECT_LE(copy.capacity(), copy.bytes() + 48);
  EXPECT_EQ(copy.At(copy.begin()), "element:1990");
  // Replace grows and shrinks an element in place.
  p.Replace(p.begin(), std::string(300, 'x'));
  EXPECT_EQ(p.At(p.begin()), std::string(300, 'x'));
  EXPECT_EQ(p.At(p.Next(p.begin())), "value:0");
  p.Replace(p.begin(), "f");
  EXPECT_EQ(p.At(p.begin()), "f");
  EXPECT_EQ(p.At(p.Prev(p.end())), "value:7");
  EXPECT_EQ(p.size(), 16u);
}

// Insert and Replace with a view of the list's own element (the review's
// cases): the buffer moves (a realloc, or the tail shifting as an element
// shrinks) before the value is copied, so the value is copied aside first.
TEST(PackedListTest, InsertAndReplaceWithAViewOfItsOwnElement) {
  PackedList p;
  p.PushBack("aaaaaaaaaaaaaaaaaaaa");
  p.PushBack("bcdefghijk");
  const std::string want(p.At(p.Next(p.begin())));
  p.Replace(p.begin(), p.At(p.Next(p.begin())));
  EXPECT_EQ(p.At(p.begin()), want);

  PackedList q;
  const std::string big(3000, 'x');
  q.PushBack(big);
  std::vector<void*> blockers;  // so that realloc cannot grow in place
  for (int i = 0; i < 64; ++i) blockers.push_back(std::malloc(3000));
  q.PushBack(q.At(q.begin()));
  for (void* b : blockers) std::free(b);
  EXPECT_EQ(q.At(q.Next(q.begin())), big);
}

TEST(DictTest, MatchesAMapThroughGrowthAndShrinking) {
  std::mt19937_64 rng(11);
  Dict d;
  std::map<std::string, std::string> model;
  for (int step = 0; step < 60000; ++step) {
    std::string key = "k" + std::to_string(rng() % (step < 30000 ? 20000 : 500));
    switch (rng() % 3) {
      case 0: {
        std::string value = std::to_string(rng() % 1000);
        auto [node, inserted] = d.Set(key, value);
        EXPECT_EQ(inserted, model.count(key) == 0);
        EXPECT_EQ(node->value(), value);
        model[key] = value;
        break;
      }
      case 1:
        EXPECT_EQ(d.Erase(key), model.erase(key) == 1);
        break;
      default: {
        const Dict::Node* n = d.Find(key);
        auto it = model.find(key);
        ASSERT_EQ(n != nullptr, it != model.end());
        if (n != nullptr) {
          EXPECT_EQ(n->value(), it->second);
        }
      }
    }
    ASSERT_EQ(d.size(), model.size());
  }
  std::map<std::string, std::string> seen;
  d.ForEach([&](const Dict::Node& n) { seen[std::string(n.key())] = n.value(); });
  EXPECT_EQ(seen, model);
  Dict copy(d);
  EXPECT_EQ(copy.size(), d.size());
  for (const auto& [k, v] : model) EXPECT_EQ(copy.Find(k)->value(), v);
}

TEST(DictTest, ScanReturnsEveryKeyPresentThroughoutDespiteResizes) {
  std::mt19937_64 rng(3);
  Dict d;
  for (int i = 0; i < 1000; ++i) d.Set("stay" + std::to_string(i));
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    cursor = d.Scan(cursor, [&](const Dict::Node& n) { seen.emplace(n.key()); });
    // Between calls the table grows and shrinks under other keys.
    for (int j = 0; j < 200; ++j) {
      std::string k = "churn" + std::to_string(rng() % 5000);
      if (rng() % 2) {
        d.Set(k);
      } else {
        d.Erase(k);
      }
    }
    ++calls;
  } while (cursor != 0 && calls < 100000);
  EXPECT_EQ(cursor, 0u);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.count("stay" + std::to_string(i))) << i;
}

TEST(DictTest, RandomReachesEveryKey) {
  std::mt19937_64 rng(5);
  Dict d;
  for (int i = 0; i < 50; ++i) d.Set(std::to_string(i));
  std::set<std::string> seen;
  for (int i = 0; i < 5000; ++i) seen.emplace(d.Random(rng)->key());
  EXPECT_EQ(seen.size(), 50u);
  Dict empty;
  EXPECT_EQ(empty.Random(rng), nullptr);
}

TEST(DictTest, FairRandomIsUniformOverSmallTables) {
  // HRANDFIELD's and SRANDMEMBER's distribution tests (Redis's suite): 10
  // entries, chi-square under 40 (df 9: p < 0.00001). Random() alone fails
  // it (chains of different lengths); FairRandom samples every entry of a
  // small table (16 buckets: no run of empty ones makes it jump elsewhere)
  // and picks among them, so it must pass, growing or after removals.
  std::mt19937_64 rng(17);
  for (int extra : {0, 1, 6}) {
    Dict d;
    for (int i = 0; i < 10 + extra; ++i) d.Set("k" + std::to_string(i));
    for (int i = 10; i < 10 + extra; ++i) d.Erase("k" + std::to_string(i));
    std::map<std::string, int> hits;
    for (int i = 0; i < 10000; ++i) ++hits[std::string(d.FairRandom(rng)->key())];
    ASSERT_EQ(hits.size(), 10u);
    double chi = 0;
    for (const auto& [k, c] : hits) chi += (c - 1000.0) * (c - 1000.0) / 1000.0;
    EXPECT_LT(chi, 40) << extra;
  }
  // A large table: a sample of 15 from consecutive buckets, as Redis's;
  // every entry is reached, none far more often than the others.
  Dict big;
  for (int i = 0; i < 300; ++i) big.Set("k" + std::to_string(i));
  std::map<std::string, int> hits;
  for (int i = 0; i < 300000; ++i) ++hits[std::string(big.FairRandom(rng)->key())];
  EXPECT_EQ(hits.size(), 300u);
  for (const auto& [k, c] : hits) EXPECT_LT(c, 8000) << k;
  Dict empty;
  EXPECT_EQ(empty.FairRandom(rng), nullptr);
}

}  // namespace
}  // namespace latch
