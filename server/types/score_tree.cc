#include "server/types/score_tree.h"

#include <malloc.h>

#include <cstring>
#include <new>

namespace latch {

namespace {

using Node = Dict::Node;

template <typename T>
T* New() {
  void* mem = std::malloc(sizeof(T));
  if (mem == nullptr) throw std::bad_alloc();
  return new (mem) T();
}

template <typename T>
void Delete(T* p) {
  p->~T();
  std::free(p);
}

// Moves `n` entries of the parallel arrays from index `from` to `to`.
template <typename... A>
void Shift(int from, int to, int n, A*... arrays) {
  (std::memmove(arrays + to, arrays + from, static_cast<size_t>(n) * sizeof(*arrays)), ...);
}

}  // namespace

int ScoreTree::LowerBound(const Leaf* leaf, double score, std::string_view member) {
  return FirstTrue(leaf->score, leaf->node, 0, leaf->n,
                   [&](double s, const Node* n) { return !Before(s, n->key(), score, member); });
}

int ScoreTree::ChildFor(const Inner* in, double score, std::string_view member) {
  return FirstTrue(in->score, in->node, 1, in->n,
                   [&](double s, const Node* n) { return Before(score, member, s, n->key()); }) -
         1;
}

ScoreTree::ScoreTree() {
  Leaf* leaf = New<Leaf>();
  root_ = first_ = last_ = leaf;
}

ScoreTree::~ScoreTree() {
  Clear();
  Delete(static_cast<Leaf*>(root_));
  if (spare_leaf_ != nullptr) Delete(spare_leaf_);
  for (int i = 0; i < spare_inners_; ++i) Delete(spare_inner_[i]);
}

void ScoreTree::Clear() {
  // Every leaf is on the list; the inner nodes are freed level by level.
  Leaf* keep = first_;
  for (Leaf* l = first_->next; l != nullptr;) {
    Leaf* next = l->next;
    Delete(l);
    l = next;
  }
  if (height_ > 0) {
    struct Walk {
      static void Free(Inner* in, int h) {
        if (h > 1) {
          for (int i = 0; i < in->n; ++i) Free(static_cast<Inner*>(in->child[i]), h - 1);
        }
        Delete(in);
      }
    };
    Walk::Free(static_cast<Inner*>(root_), height_);
  }
  keep->n = 0;
  keep->prev = keep->next = nullptr;
  root_ = first_ = last_ = keep;
  height_ = 0;
  size_ = 0;
  leaves_ = 1;
  inners_ = 0;
}

size_t ScoreTree::memory() const {
  size_t n = leaves_ * malloc_usable_size(first_);
  if (inners_ > 0) n += inners_ * malloc_usable_size(root_);
  return n;
}

void ScoreTree::Reserve(const Leaf* leaf, const Step* path, int depth) {
  // The splits this insert makes: the leaf if it is full, then each full
  // node above it, and a new root if they reach the root.
  if (leaf->n < kLeafCap) return;
  int inners = 0;
  int k = depth - 1;
  while (k >= 0 && path[k].in->n == kInnerCap) {
    ++inners;
    --k;
  }
  if (k < 0) ++inners;
  // (If one fails, what was allocated stays for the next try.)
  if (spare_leaf_ == nullptr) spare_leaf_ = New<Leaf>();
  while (spare_inners_ < inners) spare_inner_[spare_inners_++] = New<Inner>();
}

ScoreTree::Leaf* ScoreTree::TakeLeaf() {
  Leaf* l = spare_leaf_;
  spare_leaf_ = nullptr;
  *l = Leaf{};
  ++leaves_;
  return l;
}

ScoreTree::Inner* ScoreTree::TakeInner() {
  Inner* in = spare_inner_[--spare_inners_];
  in->n = 0;
  ++inners_;
  return in;
}

ScoreTree::Leaf* ScoreTree::Descend(double score, std::string_view member, Step* path,
                                    int* depth) const {
  void* at = root_;
  int d = 0;
  for (int h = height_; h > 0; --h) {
    Inner* in = static_cast<Inner*>(at);
    const int i = ChildFor(in, score, member);
    path[d++] = {in, i};
    at = in->child[i];
  }
  *depth = d;
  return static_cast<Leaf*>(at);
}

// The first entry of the subtree path[depth-1] leads to is now (score,
// node): the inner nodes whose first entry it is learn it.
void ScoreTree::FixFirst(Step* path, int depth, double score, Node* node) {
  for (int k = depth - 1; k >= 0; --k) {
    path[k].in->score[path[k].idx] = score;
    path[k].in->node[path[k].idx] = node;
    if (path[k].idx != 0) break;
  }
}

void ScoreTree::Insert(double score, Node* node) {
  const std::string_view member = node->key();
  Step path[kMaxDepth];
  int depth = 0;
  Leaf* leaf = Descend(score, member, path, &depth);
  Reserve(leaf, path, depth);  // (may throw: before anything changes)
  const int pos = LowerBound(leaf, score, member);
  for (int k = 0; k < depth; ++k) ++path[k].in->count[path[k].idx];
  ++size_;
  Leaf* into = leaf;
  int at = pos;
  Leaf* right = nullptr;
  if (leaf->n == kLeafCap) {
    // Split. An append at the end of the tree leaves the full leaf as it is
    // (entries loaded in order fill their leaves); otherwise half and half.
    // (Not at the end of any full leaf: a descending run of keys into the
    // gap after one would then get a leaf each.)
    right = TakeLeaf();
    const int keep = pos == kLeafCap && leaf->next == nullptr ? kLeafCap : kLeafCap / 2;
    right->n = kLeafCap - keep;
    std::memcpy(right->score, leaf->score + keep, sizeof(double) * right->n);
    std::memcpy(right->node, leaf->node + keep, sizeof(Node*) * right->n);
    leaf->n = keep;
    right->prev = leaf;
    right->next = leaf->next;
    if (leaf->next != nullptr) {
      leaf->next->prev = right;
    } else {
      last_ = right;
    }
    leaf->next = right;
    if (pos > keep || (pos == keep && keep == kLeafCap)) {
      into = right;
      at = pos - keep;
    }
  }
  Shift(at, at + 1, into->n - at, into->score, into->node);
  into->score[at] = score;
  into->node[at] = node;
  ++into->n;
  if (into == leaf && at == 0) FixFirst(path, depth, score, node);
  if (right == nullptr) return;
  // The left half's count in its parent; the right half joins the parent
  // after it.
  if (depth > 0) path[depth - 1].in->count[path[depth - 1].idx] = static_cast<uint64_t>(leaf->n);
  AddChild(path, depth, right, static_cast<uint64_t>(right->n), right->score[0], right->node[0]);
}

// Adds `child` (count elements, first entry (score, node)) just after the
// child path[depth-1] leads to, splitting full nodes up to the root.
void ScoreTree::AddChild(Step* path, int depth, void* child, uint64_t count, double score,
                         Node* node) {
  if (depth == 0) {
    // The root split: a new root above the two halves.
    Inner* root = TakeInner();
    root->n = 2;
    root->child[0] = root_;
    root->child[1] = child;
    if (height_ == 0) {
      const Leaf* l = static_cast<const Leaf*>(root_);
      root->count[0] = static_cast<uint64_t>(l->n);
      root->score[0] = l->score[0];
      root->node[0] = l->node[0];
    } else {
      const Inner* in = static_cast<const Inner*>(root_);
      uint64_t c = 0;
      for (int i = 0; i < in->n; ++i) c += in->count[i];
      root->count[0] = c;
      root->score[0] = in->score[0];
      root->node[0] = in->node[0];
    }
    root->count[1] = count;
    root->score[1] = score;
    root->node[1] = node;
    root_ = root;
    ++height_;
    return;
  }
  Inner* in = path[depth - 1].in;
  const int pos = path[depth - 1].idx + 1;
  Inner* into = in;
  int at = pos;
  Inner* right = nullptr;
  if (in->n == kInnerCap) {
    right = TakeInner();
    // Uneven only at the end of the tree, as for a leaf: every step down to
    // here took its node's last child.
    bool at_end = pos == kInnerCap;
    for (int k = 0; k < depth - 1 && at_end; ++k) at_end = path[k].idx == path[k].in->n - 1;
    const int keep = at_end ? kInnerCap : kInnerCap / 2;
    right->n = kInnerCap - keep;
    std::memcpy(right->count, in->count + keep, sizeof(uint64_t) * right->n);
    std::memcpy(right->score, in->score + keep, sizeof(double) * right->n);
    std::memcpy(right->node, in->node + keep, sizeof(Node*) * right->n);
    std::memcpy(right->child, in->child + keep, sizeof(void*) * right->n);
    in->n = keep;
    if (pos > keep || (pos == keep && keep == kInnerCap)) {
      into = right;
      at = pos - keep;
    }
  }
  Shift(at, at + 1, into->n - at, into->count, into->score, into->node, into->child);
  into->count[at] = count;
  into->score[at] = score;
  into->node[at] = node;
  into->child[at] = child;
  ++into->n;
  if (right == nullptr) return;
  uint64_t left_count = 0, right_count = 0;
  for (int i = 0; i < in->n; ++i) left_count += in->count[i];
  for (int i = 0; i < right->n; ++i) right_count += right->count[i];
  if (depth > 1) path[depth - 2].in->count[path[depth - 2].idx] = left_count;
  AddChild(path, depth - 1, right, right_count, right->score[0], right->node[0]);
}

bool ScoreTree::Erase(double score, const Node* node) {
  const std::string_view member = node->key();
  Step path[kMaxDepth];
  int depth = 0;
  Leaf* leaf = Descend(score, member, path, &depth);
  const int pos = LowerBound(leaf, score, member);
  if (pos == leaf->n || leaf->node[pos] != node) return false;
  if (size_ == 1) {
    Clear();
    return true;
  }
  Shift(pos + 1, pos, leaf->n - pos - 1, leaf->score, leaf->node);
  --leaf->n;
  --size_;
  for (int k = 0; k < depth; ++k) --path[k].in->count[path[k].idx];
  if (pos == 0 && leaf->n > 0) FixFirst(path, depth, leaf->score[0], leaf->node[0]);
  Rebalance(path, depth, leaf);
  return true;
}

void ScoreTree::RemoveChild(Inner* in, int i) {
  Shift(i + 1, i, in->n - i - 1, in->count, in->score, in->node, in->child);
  --in->n;
}

// `at` (a leaf, or an inner node: the child path[depth-1] leads to) has
// lost entries: an empty node goes, a sparse one merges with a neighbour
// that has room, and the parent is then looked at the same way.
void ScoreTree::Rebalance(Step* path, int depth, void* at) {
  if (depth == 0) {
    // The root: an inner root of one child gives way to it.
    while (height_ > 0 && static_cast<Inner*>(root_)->n == 1) {
      Inner* old = static_cast<Inner*>(root_);
      root_ = old->child[0];
      Delete(old);
      --inners_;
      --height_;
    }
    return;
  }
  Inner* parent = path[depth - 1].in;
  const int i = path[depth - 1].idx;
  const bool is_leaf = depth == height_;
  const int n = is_leaf ? static_cast<Leaf*>(at)->n : static_cast<Inner*>(at)->n;
  const int cap = is_leaf ? kLeafCap : kInnerCap;
  if (n >= cap / 4) return;
  // Merge with the left neighbour when there is one with room, else with
  // the right one: the right node of the pair moves into the left.
  int left = -1;
  auto size_of = [&](int c) {
    return is_leaf ? static_cast<Leaf*>(parent->child[c])->n
                   : static_cast<Inner*>(parent->child[c])->n;
  };
  if (n == 0) {
    left = i;  // (nothing to move: just drop it)
  } else if (i > 0 && size_of(i - 1) + n <= cap * 3 / 4) {
    left = i - 1;
  } else if (i + 1 < parent->n && size_of(i + 1) + n <= cap * 3 / 4) {
    left = i;
  } else {
    return;
  }
  const int gone = n == 0 ? i : left + 1;  // the child that is freed
  if (is_leaf) {
    Leaf* dead = static_cast<Leaf*>(parent->child[gone]);
    if (n != 0) {
      Leaf* keep = static_cast<Leaf*>(parent->child[left]);
      std::memcpy(keep->score + keep->n, dead->score, sizeof(double) * dead->n);
      std::memcpy(keep->node + keep->n, dead->node, sizeof(Node*) * dead->n);
      keep->n += dead->n;
    }
    (dead->prev != nullptr ? dead->prev->next : first_) = dead->next;
    (dead->next != nullptr ? dead->next->prev : last_) = dead->prev;
    Delete(dead);
    --leaves_;
  } else {
    Inner* dead = static_cast<Inner*>(parent->child[gone]);
    if (n != 0) {
      Inner* keep = static_cast<Inner*>(parent->child[left]);
      const int k = keep->n;
      std::memcpy(keep->count + k, dead->count, sizeof(uint64_t) * dead->n);
      std::memcpy(keep->score + k, dead->score, sizeof(double) * dead->n);
      std::memcpy(keep->node + k, dead->node, sizeof(Node*) * dead->n);
      std::memcpy(keep->child + k, dead->child, sizeof(void*) * dead->n);
      keep->n += dead->n;
    }
    Delete(dead);
    --inners_;
  }
  if (n != 0) parent->count[left] += parent->count[left + 1];
  RemoveChild(parent, gone);
  // The parent's first entry changes only when its first child went
  // empty; its new first child's first entry is then the parent's.
  if (gone == 0 && parent->n > 0) {
    FixFirst(path, depth - 1, parent->score[0], parent->node[0]);
  }
  Rebalance(path, depth - 1, parent);
}

size_t ScoreTree::Rank(double score, std::string_view member) const {
  Step path[kMaxDepth];
  int depth = 0;
  const Leaf* leaf = Descend(score, member, path, &depth);
  size_t rank = 0;
  for (int k = 0; k < depth; ++k) {
    for (int c = 0; c < path[k].idx; ++c) rank += path[k].in->count[c];
  }
  const int pos = LowerBound(leaf, score, member);
  if (pos == leaf->n || leaf->score[pos] != score || leaf->node[pos]->key() != member) return npos;
  return rank + static_cast<size_t>(pos);
}

ScoreTree::Pos ScoreTree::AtRank(size_t rank) const {
  if (rank >= size_) return Pos{};
  const void* at = root_;
  for (int h = height_; h > 0; --h) {
    const Inner* in = static_cast<const Inner*>(at);
    int i = 0;
    while (rank >= in->count[i]) rank -= in->count[i++];
    at = in->child[i];
  }
  return Pos{static_cast<const Leaf*>(at), static_cast<int>(rank)};
}

bool ScoreTree::Valid() const {
  // Walks the tree: counts, first entries, order, the leaf list.
  struct Check {
    const Leaf* expect_leaf;
    bool ok = true;
    uint64_t Walk(const void* at, int h, double* first_score, Node** first_node) {
      if (h == 0) {
        const Leaf* l = static_cast<const Leaf*>(at);
        if (l != expect_leaf || l->n <= 0 || l->n > kLeafCap) ok = false;
        if (expect_leaf != nullptr) expect_leaf = expect_leaf->next;
        for (int i = 1; i < l->n; ++i) {
          if (!Before(l->score[i - 1], l->node[i - 1]->key(), l->score[i], l->node[i]->key()))
            ok = false;
        }
        if (l->n > 0) {
          *first_score = l->score[0];
          *first_node = l->node[0];
        }
        return static_cast<uint64_t>(l->n);
      }
      const Inner* in = static_cast<const Inner*>(at);
      if (in->n <= 0 || in->n > kInnerCap) {
        ok = false;
        return 0;
      }
      uint64_t total = 0;
      for (int i = 0; i < in->n; ++i) {
        double s = 0;
        Node* nd = nullptr;
        const uint64_t c = Walk(in->child[i], h - 1, &s, &nd);
        if (c != in->count[i] || s != in->score[i] || nd != in->node[i]) ok = false;
        if (i > 0 && !Before(in->score[i - 1], in->node[i - 1]->key(), s, nd->key())) ok = false;
        total += c;
      }
      *first_score = in->score[0];
      *first_node = in->node[0];
      return total;
    }
  };
  if (size_ == 0) return height_ == 0 && first_ == root_ && last_ == root_ && first_->n == 0;
  Check c{first_};
  double s;
  Node* nd;
  const uint64_t total = c.Walk(root_, height_, &s, &nd);
  if (c.expect_leaf != nullptr || total != size_) return false;
  if (last_->next != nullptr || first_->prev != nullptr) return false;
  return c.ok;
}

}  // namespace latch
