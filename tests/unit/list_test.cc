// Lists: the quicklist (server/types/list.h) against a std::deque model over
// random operations, at node sizes small enough to split and merge nodes
// all the time; the appliers of the list records; the commands' replies and
// records on the in-process server (the exact bytes come from redis-server
// 7.0, as the differential test checks them too).
#include "server/types/list.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>
#include <string>
#include <vector>

#include "command_fixture.h"
#include "log/record.h"
#include "server/keyspace.h"

namespace latch {
namespace {

std::deque<std::string> Contents(const ListValue& l) {
  std::deque<std::string> out;
  for (auto c = l.Head(); c.valid(); c.Next()) out.emplace_back(c.value());
  return out;
}

std::deque<std::string> ContentsBackward(const ListValue& l) {
  std::deque<std::string> out;
  for (auto c = l.Tail(); c.valid(); c.Prev()) out.emplace_front(c.value());
  return out;
}

std::string RandomElement(std::mt19937_64& rng) {
  static const size_t kLengths[] = {0, 1, 3, 10, 60, 127, 128, 300, 2000, 9000};
  std::string s(kLengths[rng() % std::size(kLengths)], 'x');
  // Few distinct values, so that LINSERT and LREM find their pivots.
  if (!s.empty()) s[0] = static_cast<char>('a' + rng() % 4);
  return s;
}

class ListModelTest : public ::testing::TestWithParam<std::pair<int64_t, uint64_t>> {};

TEST_P(ListModelTest, RandomOperationsMatchADeque) {
  const int64_t fill = GetParam().first;
  ASSERT_TRUE(ListValue::SetPackedThreshold(GetParam().second));
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    auto list = std::make_unique<ListValue>();
    std::deque<std::string> model;
    for (int step = 0; step < 1500; ++step) {
      const std::string v = RandomElement(rng);
      const auto n = static_cast<int64_t>(model.size());
      switch (rng() % 8) {
        case 0:
        case 1:
          list->Push(ListValue::End::kTail, v, fill);
          model.push_back(v);
          break;
        case 2:
          list->Push(ListValue::End::kHead, v, fill);
          model.push_front(v);
          break;
        case 3: {
          const size_t k = rng() % 4;
          const bool head = rng() % 2;
          list->Pop(head ? ListValue::End::kHead : ListValue::End::kTail, k);
          for (size_t i = 0; i < k && !model.empty(); ++i) {
            if (head) {
              model.pop_front();
            } else {
              model.pop_back();
            }
          }
          break;
        }
        case 4: {
          const int64_t i = n == 0 ? 0 : static_cast<int64_t>(rng() % (2 * n)) - n;
          const bool ok = list->Set(i, v, fill);
          EXPECT_EQ(ok, n > 0);
          if (ok) model[static_cast<size_t>(i < 0 ? i + n : i)] = v;
          break;
        }
        case 5: {
          const std::string pivot = RandomElement(rng);
          const bool after = rng() % 2;
          auto it = std::find(model.begin(), model.end(), pivot);
          EXPECT_EQ(list->Insert(pivot, v, after, fill), it != model.end());
          if (it != model.end()) model.insert(after ? it + 1 : it, v);
          break;
        }
        case 6: {
          const int64_t count = static_cast<int64_t>(rng() % 5) - 2;
          size_t removed = 0;
          std::deque<std::string> kept;
          const size_t limit = static_cast<size_t>(count < 0 ? -count : count);
          if (count >= 0) {
            for (auto& e : model) {
              if (e == v && (limit == 0 || removed < limit)) {
                ++removed;
              } else {
                kept.push_back(e);
              }
            }
          } else {
            for (auto it = model.rbegin(); it != model.rend(); ++it) {
              if (*it == v && removed < limit) {
                ++removed;
              } else {
                kept.push_front(*it);
              }
            }
          }
          EXPECT_EQ(list->Remove(v, count), removed);
          model = kept;
          break;
        }
        case 7: {
          if (n == 0) break;
          const int64_t i = static_cast<int64_t>(rng() % n);
          auto c = list->At(i);
          ASSERT_TRUE(c.valid());
          EXPECT_EQ(c.value(), model[static_cast<size_t>(i)]);
          EXPECT_FALSE(list->At(n).valid());
          EXPECT_EQ(list->At(-1 - i).value(), model[static_cast<size_t>(n - 1 - i)]);
          break;
        }
      }
      ASSERT_EQ(list->size(), model.size()) << "seed " << seed << " step " << step;
      if (step % 50 == 0 || model.size() < 8) {
        ASSERT_EQ(Contents(*list), model) << "seed " << seed << " step " << step;
        ASSERT_EQ(ContentsBackward(*list), model);
        // A node is never empty, and there are no more nodes than elements.
        EXPECT_LE(list->nodes(), model.size());
      }
    }
    ASSERT_EQ(Contents(*list), model);
    // A copy is equal, and so is the list its records rebuild.
    std::unique_ptr<Object> copy = list->Clone();
    EXPECT_TRUE(copy->Equals(*list));
    EXPECT_GT(list->memory(), 0u);
  }
  ListValue::SetPackedThreshold(0);
}

INSTANTIATE_TEST_SUITE_P(Fills, ListModelTest,
                         ::testing::Values(std::make_pair(int64_t{-2}, uint64_t{0}),
                                           std::make_pair(int64_t{-1}, uint64_t{0}),
                                           std::make_pair(int64_t{3}, uint64_t{0}),
                                           std::make_pair(int64_t{1}, uint64_t{0}),
                                           std::make_pair(int64_t{5}, uint64_t{100}),
                                           std::make_pair(int64_t{-2}, uint64_t{1})));

TEST(ListValueTest, NodesFollowTheFillSetting) {
  // A positive fill: that many elements per node.
  auto l = std::make_unique<ListValue>();
  for (int i = 0; i < 100; ++i) l->Push(ListValue::End::kTail, "e", 5);
  EXPECT_EQ(l->nodes(), 20u);
  // The default, -2: 8 kb per node.
  auto big = std::make_unique<ListValue>();
  const std::string v(100, 'v');
  for (int i = 0; i < 1000; ++i) big->Push(ListValue::End::kHead, v, -2);
  EXPECT_GE(big->nodes(), 1000u * 102 / 8192);
  EXPECT_LE(big->nodes(), 1000u * 102 / 7000 + 1);
  // An element at the packed threshold gets a node of its own.
  ASSERT_TRUE(ListValue::SetPackedThreshold(50));
  auto plain = std::make_unique<ListValue>();
  plain->Push(ListValue::End::kTail, "a", -2);
  plain->Push(ListValue::End::kTail, std::string(50, 'p'), -2);
  plain->Push(ListValue::End::kTail, "b", -2);
  EXPECT_EQ(plain->nodes(), 3u);
  EXPECT_TRUE(plain->Set(0, std::string(60, 'q'), -2));
  EXPECT_EQ(Contents(*plain),
            (std::deque<std::string>{std::string(60, 'q'), std::string(50, 'p'), "b"}));
  ListValue::SetPackedThreshold(0);
  EXPECT_FALSE(ListValue::SetPackedThreshold(uint64_t{1} << 32));
  EXPECT_EQ(ListValue::packed_threshold(), size_t{1} << 30);
}

TEST(ListValueTest, RangesFollowRedisIndexArithmetic) {
  using R = std::optional<std::pair<size_t, size_t>>;
  EXPECT_EQ(ListRange(0, -1, 5), R({0, 4}));
  EXPECT_EQ(ListRange(-100, 100, 5), R({0, 4}));
  EXPECT_EQ(ListRange(6, 2, 5), std::nullopt);
  EXPECT_EQ(ListRange(0, -6, 5), std::nullopt);
  EXPECT_EQ(ListRange(0, -5, 5), R({0, 0}));
  EXPECT_EQ(ListRange(5, 10, 5), std::nullopt);
  EXPECT_EQ(ListRange(INT64_MIN, INT64_MAX, 3), R({0, 2}));
  EXPECT_EQ(ListRange(0, 0, 0), std::nullopt);
}

// ---------------------------------------------------------------- appliers

aof::Record Rec(std::vector<std::string_view>& words) {
  aof::Record r;
  EXPECT_EQ(aof::Decode(words, &r), "");
  return r;
}

TEST(ListAppliersTest, CreateDeleteAndRefuseOtherTypes) {
  Keyspace ks;
  EncodingLimits limits;
  std::vector<std::string_view> push = {"RPUSH", "l", "a", "b", "c"};
  Applied a = ApplyListPush(ks, Rec(push), ListValue::End::kTail, limits);
  EXPECT_EQ(a.count, 3);
  EXPECT_TRUE(a.changed);
  ASSERT_NE(ks.Peek("l"), nullptr);
  EXPECT_EQ(ks.Peek("l")->object()->encoding(), "quicklist");
  std::vector<std::string_view> pop = {"LPOP", "l", "2"};
  a = ApplyListPop(ks, Rec(pop), ListValue::End::kHead);
  EXPECT_EQ(a.count, 2);
  std::vector<std::string_view> trim = {"LTRIM", "l", "1", "0"};
  a = ApplyListTrim(ks, Rec(trim));
  EXPECT_TRUE(a.changed);
  EXPECT_EQ(ks.Peek("l"), nullptr);  // emptied: no key
  // Another type: an error, nothing changed.
  ks.Set("s", "v", kNoDeadline);
  std::vector<std::string_view> on_string = {"LPUSH", "s", "x"};
  a = ApplyListPush(ks, Rec(on_string), ListValue::End::kHead, limits);
  EXPECT_FALSE(a.error.empty());
  EXPECT_TRUE(ks.Peek("s")->is_string());
  // A record of what Redis writes (a pop without a count) applies too.
  std::vector<std::string_view> push2 = {"LPUSH", "m", "x", "y"};
  ApplyListPush(ks, Rec(push2), ListValue::End::kHead, limits);
  std::vector<std::string_view> redis_pop = {"RPOP", "m"};
  EXPECT_EQ(ApplyListPop(ks, Rec(redis_pop), ListValue::End::kTail).count, 1);
  std::vector<std::string_view> ins = {"LINSERT", "m", "after", "y", "z"};
  EXPECT_EQ(ApplyListInsert(ks, Rec(ins), limits).count, 2);
  std::vector<std::string_view> missing_pivot = {"LINSERT", "m", "BEFORE", "nope", "z"};
  a = ApplyListInsert(ks, Rec(missing_pivot), limits);
  EXPECT_EQ(a.count, -1);
  EXPECT_FALSE(a.changed);
  std::vector<std::string_view> set = {"LSET", "m", "-1", "w"};
  EXPECT_TRUE(ApplyListSet(ks, Rec(set), limits).changed);
  std::vector<std::string_view> rem = {"LREM", "m", "0", "w"};
  EXPECT_EQ(ApplyListRemove(ks, Rec(rem)).count, 1);
  const auto* m = static_cast<const ListValue*>(ks.Peek("m")->object());
  EXPECT_EQ(Contents(*m), std::deque<std::string>{"y"});
}

TEST(ListAppliersTest, TheReaderRefusesMalformedListRecords) {
  aof::Record r;
  for (std::vector<std::string_view> bad :
       std::vector<std::vector<std::string_view>>{{"RPUSH", "k"},
                                                  {"LPOP", "k", "0"},
                                                  {"LPOP", "k", "x"},
                                                  {"LPOP", "k", "1", "2"},
                                                  {"LSET", "k", "x", "v"},
                                                  {"LINSERT", "k", "AROUND", "p", "v"},
                                                  {"LREM", "k", "x", "v"},
                                                  {"LTRIM", "k", "0"}}) {
    EXPECT_NE(aof::Decode(bad, &r), "") << bad[0];
  }
}

}  // namespace
}  // namespace latch
