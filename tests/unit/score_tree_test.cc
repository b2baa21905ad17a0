// ScoreTree (server/types/score_tree.h), the order of a large sorted set,
// against a std::set model: random inserts and erases (many equal scores,
// so members decide), loads in order and in reverse, shrinking to nothing
// and growing again; after each step every invariant (Valid: counts, first
// entries, order, the leaf list) and, now and then, every rank, position
// and search.
#include "server/types/score_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace latch {
namespace {

using Model = std::set<std::pair<double, std::string>>;

class ScoreTreeTest : public ::testing::Test {
 protected:
  // The member's Dict node (made on first use; a test never frees one).
  Dict::Node* NodeOf(const std::string& member) { return dict_.Set(member, "").first; }

  void Insert(double score, const std::string& member) {
    tree_.Insert(score, NodeOf(member));
    ASSERT_TRUE(model_.emplace(score, member).second);
  }
  void Erase(double score, const std::string& member) {
    ASSERT_TRUE(tree_.Erase(score, NodeOf(member)));
    ASSERT_EQ(model_.erase({score, member}), 1u);
  }

  // Everything the tree answers, against the model.
  void CheckAll() {
    ASSERT_TRUE(tree_.Valid());
    ASSERT_EQ(tree_.size(), model_.size());
    size_t rank = 0;
    ScoreTree::Pos p = tree_.First();
    for (const auto& [score, member] : model_) {
      ASSERT_TRUE(p.valid());
      ASSERT_EQ(p.score(), score);
      ASSERT_EQ(p.node()->key(), member);
      ASSERT_EQ(tree_.Rank(score, member), rank);
      ASSERT_EQ(tree_.RankOf(p), rank);
      ScoreTree::Pos at = tree_.AtRank(rank);
      ASSERT_TRUE(at.valid());
      ASSERT_EQ(at.node(), p.node());
      p.Next();
      ++rank;
    }
    ASSERT_FALSE(p.valid());
    ASSERT_FALSE(tree_.AtRank(model_.size()).valid());
    // Backwards from the last.
    p = tree_.Last();
    for (auto it = model_.rbegin(); it != model_.rend(); ++it) {
      ASSERT_TRUE(p.valid());
      ASSERT_EQ(p.node()->key(), it->second);
      p.Prev();
    }
    ASSERT_FALSE(p.valid());
  }

  // The first entry of score >= s, and of member >= m, as FirstWhere finds them.
  void CheckSearches(double s, const std::string& m) {
    ScoreTree::Pos p =
        tree_.FirstWhere([&](double score, const Dict::Node*) { return score >= s; });
    auto it = model_.lower_bound({s, std::string()});
    if (it == model_.end()) {
      ASSERT_FALSE(p.valid());
    } else {
      ASSERT_TRUE(p.valid());
      ASSERT_EQ(p.score(), it->first);
      ASSERT_EQ(p.node()->key(), it->second);
    }
    // (Members ordered only within one score: search by (score, member).)
    p = tree_.FirstWhere([&](double score, const Dict::Node* n) {
      return score > s || (score == s && n->key() >= m);
    });
    it = model_.lower_bound({s, m});
    ASSERT_EQ(p.valid(), it != model_.end());
    if (p.valid()) {
      ASSERT_EQ(p.node()->key(), it->second);
    }
    ASSERT_EQ(tree_.Rank(s, m), model_.count({s, m})
                                    ? static_cast<size_t>(std::distance(model_.begin(), it))
                                    : ScoreTree::npos);
  }

  Dict dict_;
  ScoreTree tree_;
  Model model_;
};

TEST_F(ScoreTreeTest, EmptyTreeAnswersNothing) {
  EXPECT_TRUE(tree_.Valid());
  EXPECT_FALSE(tree_.First().valid());
  EXPECT_FALSE(tree_.Last().valid());
  EXPECT_FALSE(tree_.AtRank(0).valid());
  EXPECT_EQ(tree_.Rank(1, "a"), ScoreTree::npos);
  EXPECT_FALSE(tree_.Erase(1, NodeOf("a")));
  EXPECT_FALSE(tree_.FirstWhere([](double, const Dict::Node*) { return true; }).valid());
}

TEST_F(ScoreTreeTest, RandomInsertsAndErasesWithManyEqualScores) {
  std::mt19937_64 rng(7);
  std::map<std::string, double> score_of;
  for (int step = 0; step < 60000; ++step) {
    // Grows for a while, then shrinks to nothing, then grows again.
    const bool growing = (step / 15000) % 2 == 0;
    const std::string member = "m" + std::to_string(rng() % 4000);
    auto found = score_of.find(member);
    if (found == score_of.end()) {
      if (!growing && rng() % 4 != 0) continue;
      const double score = static_cast<double>(rng() % 50);  // many ties
      Insert(score, member);
      score_of[member] = score;
    } else if (growing && rng() % 3 != 0) {
      // A new score: out and back in, as ZADD moves a member.
      Erase(found->second, member);
      found->second = static_cast<double>(rng() % 50);
      Insert(found->second, member);
    } else {
      Erase(found->second, member);
      score_of.erase(found);
    }
    ASSERT_TRUE(tree_.Valid()) << "step " << step;
    if (step % 997 == 0) {
      CheckAll();
      for (int k = 0; k < 20; ++k) {
        CheckSearches(static_cast<double>(rng() % 52) - 1, "m" + std::to_string(rng() % 4000));
      }
    }
  }
  CheckAll();
}

TEST_F(ScoreTreeTest, LoadsInOrderFillTheirLeaves) {
  // Appends at the end keep every leaf but the last full: the memory of a
  // set loaded in score order (a log replay, ConvertToSkiplist).
  const int n = 100000;
  for (int i = 0; i < n; ++i) Insert(i, "x" + std::to_string(i));
  CheckAll();
  const size_t per_element = tree_.memory() / n;
  EXPECT_LE(per_element, 20u) << "bytes per element, leaves full";
  // And emptied from the front, then the back.
  for (int i = 0; i < n / 2; ++i) Erase(i, "x" + std::to_string(i));
  ASSERT_TRUE(tree_.Valid());
  for (int i = n - 1; i >= n / 2; --i) Erase(i, "x" + std::to_string(i));
  CheckAll();
  EXPECT_EQ(tree_.size(), 0u);
}

TEST_F(ScoreTreeTest, ADescendingRunIntoAGapAfterAFullLeafStaysCompact) {
  // An ascending load leaves full leaves; a descending run of keys just
  // after one of them must not give each key a leaf (and a chain of inner
  // nodes) of its own: a full leaf is split unevenly only at the end of the
  // tree (found by review: 2.7 KB a member for this load).
  const int n = 32768;
  for (int i = 0; i < n; ++i) Insert(i, "a" + std::to_string(i));
  for (int i = 1000000; i > 1000000 - 50000; --i) Insert(i, "b" + std::to_string(i));
  CheckAll();
  EXPECT_LE(tree_.memory() / tree_.size(), 40u) << "bytes per element";
  // And a hole in an ascending load refilled from the top down.
  for (int i = 1000; i < 20000; ++i) Erase(i, "a" + std::to_string(i));
  for (int i = 19999; i >= 1000; --i) Insert(i, "a" + std::to_string(i));
  CheckAll();
  EXPECT_LE(tree_.memory() / tree_.size(), 40u) << "bytes per element";
}

TEST_F(ScoreTreeTest, ReverseLoadAndEraseFromTheMiddle) {
  const int n = 20000;
  for (int i = n - 1; i >= 0; --i) Insert(i % 100, "m" + std::to_string(i));
  CheckAll();
  std::mt19937_64 rng(3);
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (int k = 0; k < n; ++k) {
    const int i = order[k];
    Erase(i % 100, "m" + std::to_string(i));
    if (k % 1000 == 0) CheckAll();
  }
  CheckAll();
  // A tree emptied works as new.
  for (int i = 0; i < 1000; ++i) Insert(-i, "again" + std::to_string(i));
  CheckAll();
}

}  // namespace
}  // namespace latch
