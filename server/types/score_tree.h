#pragma once

// The order of a large sorted set (zset.h): its elements by (score, member)
// in a B+-tree whose inner nodes count the elements under each child, so a
// rank is found in O(log N) as well as a score.
//
// Why not Redis's skiplist: a skiplist search is a chain of dependent cache
// misses, about one per node it steps on (some 20 for 100,000 elements), and
// a ZADD that moves a member searches twice. Here a search reads one node
// per level (three or four for 100,000 elements), and a node's scores lie
// side by side, so its binary search touches a few cache lines of one
// allocation. The upper levels are small enough to stay in cache. Members
// are compared only between equal scores.
//
// The tree does not own the elements: each entry is a score and the Dict
// node that holds the member (ZSetValue's dict), which must outlive it.
// Inner nodes keep, for each child, the first entry under it; that entry is
// always an element of the tree (kept exact on every insert and erase), so
// comparing with it never reads a freed node.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/types/dict.h"

namespace latch {

class ScoreTree {
 public:
  using Node = Dict::Node;
  static constexpr int kLeafCap = 32;
  static constexpr int kInnerCap = 32;
  static constexpr size_t npos = static_cast<size_t>(-1);

  struct Leaf {
    int n = 0;
    Leaf* prev = nullptr;
    Leaf* next = nullptr;
    double score[kLeafCap];
    Node* node[kLeafCap];
  };
  struct Inner {
    int n = 0;
    uint64_t count[kInnerCap];  // elements under each child
    double score[kInnerCap];    // each child's first entry: its score
    Node* node[kInnerCap];      // and its node
    void* child[kInnerCap];     // Leaf* one level above the leaves, else Inner*
  };

  // A position: an entry of a leaf, or none (past either end). Valid until
  // the tree changes.
  struct Pos {
    const Leaf* leaf = nullptr;
    int idx = 0;
    bool valid() const { return leaf != nullptr; }
    double score() const { return leaf->score[idx]; }
    const Node* node() const { return leaf->node[idx]; }
    // A walk reads each element's node (its member) and little else, so
    // the nodes a few steps ahead are fetched early: their cache misses
    // overlap instead of following one another.
    void Next() {
      if (idx + kAhead < leaf->n) __builtin_prefetch(leaf->node[idx + kAhead]);
      if (++idx >= leaf->n) {
        leaf = leaf->next;
        idx = 0;
        Warm(true);
      }
    }
    void Prev() {
      if (idx >= kAhead) __builtin_prefetch(leaf->node[idx - kAhead]);
      if (idx > 0) {
        --idx;
      } else {
        leaf = leaf->prev;
        idx = leaf == nullptr ? 0 : leaf->n - 1;
        Warm(false);
      }
    }
    // Fetches the nodes of the next kAhead entries (toward higher scores,
    // or lower) ahead of a walk from here.
    void Warm(bool forward) const {
      if (leaf == nullptr) return;
      for (int k = 0; k < kAhead; ++k) {
        const int i = forward ? idx + k : idx - k;
        if (i < 0 || i >= leaf->n) break;
        __builtin_prefetch(leaf->node[i]);
      }
    }
    static constexpr int kAhead = 4;
  };

  ScoreTree();
  ~ScoreTree();
  ScoreTree(const ScoreTree&) = delete;
  ScoreTree& operator=(const ScoreTree&) = delete;

  size_t size() const { return size_; }
  // Bytes of the tree's nodes, as malloc gave them.
  size_t memory() const;

  // Adds (score, node->key()), which must be absent. Throws std::bad_alloc
  // (for the nodes its splits need) only before it changes anything.
  void Insert(double score, Node* node);
  // Removes the entry of `node`, whose score in the tree is `score`; false
  // if there is none. Never allocates.
  bool Erase(double score, const Node* node);

  // The 0-based rank of (score, member), or npos when absent.
  size_t Rank(double score, std::string_view member) const;
  size_t RankOf(Pos p) const { return Rank(p.score(), p.node()->key()); }
  // The entry of 0-based rank `rank` (invalid past the end).
  Pos AtRank(size_t rank) const;
  Pos First() const { return size_ == 0 ? Pos{} : Pos{first_, 0}; }
  Pos Last() const { return size_ == 0 ? Pos{} : Pos{last_, last_->n - 1}; }
  // The first entry for which pred(score, node) is true, where pred is
  // false up to some entry and true from it on (invalid: true for none).
  template <typename P>
  Pos FirstWhere(P&& pred) const;

  // Checks every invariant (the unit tests'); false if one fails.
  bool Valid() const;

  // The order: by score, then by member bytes between equal scores.
  static bool Before(double s1, std::string_view m1, double s2, std::string_view m2) {
    return s1 < s2 || (s1 == s2 && m1.compare(m2) < 0);
  }

 private:
  struct Step {
    Inner* in;
    int idx;
  };
  static constexpr int kMaxDepth = 40;

  // The first index in [lo, n) of parallel score and node arrays at which
  // pred(score, node) is true (n if none); pred is false, then true.
  template <typename P>
  static int FirstTrue(const double* scores, Node* const* nodes, int lo, int n, P&& pred);
  // The first entry of a leaf not before (score, member).
  static int LowerBound(const Leaf* leaf, double score, std::string_view member);
  // The child of `in` to descend for (score, member): the last whose first
  // entry is not after it (the first child when every one is).
  static int ChildFor(const Inner* in, double score, std::string_view member);

  // The descent to (score, member)'s leaf; path[0] is the root's step.
  Leaf* Descend(double score, std::string_view member, Step* path, int* depth) const;
  // Allocates the nodes an insert into `leaf` will split off.
  void Reserve(const Leaf* leaf, const Step* path, int depth);
  void FixFirst(Step* path, int depth, double score, Node* node);
  void AddChild(Step* path, int depth, void* child, uint64_t count, double score, Node* node);
  void Rebalance(Step* path, int depth, void* at);
  void RemoveChild(Inner* in, int i);
  Leaf* TakeLeaf();
  Inner* TakeInner();
  void Clear();

  void* root_;
  int height_ = 0;  // inner levels above the leaves
  size_t size_ = 0;
  Leaf* first_;
  Leaf* last_;
  size_t leaves_ = 1, inners_ = 0;
  // The nodes Reserve() allocated for the insert under way (none between
  // inserts, unless an allocation failed half-way).
  Leaf* spare_leaf_ = nullptr;
  Inner* spare_inner_[kMaxDepth] = {};
  int spare_inners_ = 0;
};

template <typename P>
int ScoreTree::FirstTrue(const double* scores, Node* const* nodes, int lo, int n, P&& pred) {
  int hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (pred(scores[mid], nodes[mid])) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

template <typename P>
ScoreTree::Pos ScoreTree::FirstWhere(P&& pred) const {
  const void* at = root_;
  for (int h = height_; h > 0; --h) {
    const Inner* in = static_cast<const Inner*>(at);
    // The child before the first whose first entry is true: the answer is
    // in it, or is that first entry (the next leaf's first).
    const int i = FirstTrue(in->score, in->node, 0, in->n, pred);
    at = in->child[i == 0 ? 0 : i - 1];
  }
  const Leaf* leaf = static_cast<const Leaf*>(at);
  const int i = FirstTrue(leaf->score, leaf->node, 0, leaf->n, pred);
  if (i < leaf->n) return Pos{leaf, i};
  return leaf->next == nullptr ? Pos{} : Pos{leaf->next, 0};
}

}  // namespace latch
