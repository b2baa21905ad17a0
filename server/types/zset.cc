#include "server/types/zset.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "log/record.h"
#include "protocol/text.h"
#include "server/keyspace.h"

namespace latch {

// ---------------------------------------------------------------- elements

// An element of the skiplist encoding is a Dict node: key = member, value =
// the 8 bytes of its score (read and written with memcpy). The tree
// (score_tree.h) holds the score again beside the node's address, so a
// search compares scores without reading the nodes.
namespace {

using Node = Dict::Node;

inline double ScoreOf(const Node* n) {
  double d;
  std::memcpy(&d, n->value().data(), 8);
  return d;
}
inline void SetScore(Node* n, double d) {
  std::memcpy(n->mutable_value(), &d, 8);
}

}  // namespace

namespace zset_detail {
double NodeScore(const Dict::Node* n) {
  return ScoreOf(n);
}
}  // namespace zset_detail

struct ZSetValue::SkipList {
  Dict dict;
  ScoreTree tree;
  size_t length() const { return dict.size(); }
};

// ---------------------------------------------------------------- the value

ZSetValue::ZSetValue(bool packed) {
  if (!packed) sl_ = std::make_unique<SkipList>();
}

ZSetValue::~ZSetValue() = default;

Dict* ZSetValue::dict() const {
  return &sl_->dict;
}

size_t ZSetValue::size() const {
  return packed() ? lp_.size() / 2 : sl_->length();
}

size_t ZSetValue::memory() const {
  size_t n = sizeof(ZSetValue);
  if (packed()) return n + lp_.capacity();
  return n + sizeof(SkipList) + sl_->dict.memory() + sl_->tree.memory();
}

// ---- listpack

size_t ZSetValue::LpFind(std::string_view member) const {
  return lp_.Find(member, 0, 2);
}

double ZSetValue::LpScore(size_t member_pos) const {
  return zset_detail::DecodePackedScore(lp_.At(lp_.Next(member_pos)));
}

void ZSetValue::LpInsert(std::string_view member, double score) {
  // Before the first element that sorts after (score, member).
  size_t pos = lp_.begin();
  while (pos < lp_.end()) {
    const size_t score_pos = lp_.Next(pos);
    if (ScoreTree::Before(score, member, zset_detail::DecodePackedScore(lp_.At(score_pos)),
                          lp_.At(pos)))
      break;
    pos = lp_.Next(score_pos);
  }
  char buf[8];
  const size_t n = zset_detail::EncodePackedScore(score, buf);
  pos = lp_.Insert(pos, member);
  lp_.Insert(lp_.Next(pos), std::string_view(buf, n));
}

// ---- skiplist

Dict::Node* ZSetValue::SlNewNode(std::string_view member, double score) {
  const char zeros[8] = {};
  Node* n = sl_->dict.Set(member, std::string_view(zeros, 8)).first;
  SetScore(n, score);
  return n;
}

// ---- reads

std::optional<double> ZSetValue::Score(std::string_view member) const {
  if (packed()) {
    const size_t pos = LpFind(member);
    if (pos == lp_.end()) return std::nullopt;
    return LpScore(pos);
  }
  const Node* n = sl_->dict.Find(member);
  if (n == nullptr) return std::nullopt;
  return ScoreOf(n);
}

std::optional<size_t> ZSetValue::Rank(std::string_view member, bool reverse) const {
  const size_t n = size();
  if (packed()) {
    size_t rank = 0;
    for (size_t pos = lp_.begin(); pos < lp_.end(); pos = lp_.Next(lp_.Next(pos)), ++rank) {
      if (lp_.At(pos) == member) return reverse ? n - 1 - rank : rank;
    }
    return std::nullopt;
  }
  const Node* node = sl_->dict.Find(member);
  if (node == nullptr) return std::nullopt;
  const size_t rank = sl_->tree.Rank(ScoreOf(node), member);
  if (rank == ScoreTree::npos) return std::nullopt;
  return reverse ? n - 1 - rank : rank;
}

std::string_view ZSetValue::Iter::member() const {
  return z_->packed() ? z_->lp_.At(pos_) : at_.node()->key();
}

double ZSetValue::Iter::score() const {
  return z_->packed() ? z_->LpScore(pos_) : at_.score();
}

void ZSetValue::Iter::Next() {
  if (z_->packed()) {
    pos_ = z_->lp_.Next(z_->lp_.Next(pos_));
  } else {
    at_.Next();
  }
}

void ZSetValue::Iter::Prev() {
  if (z_->packed()) {
    pos_ = pos_ == z_->lp_.begin() ? z_->lp_.end() : z_->lp_.Prev(z_->lp_.Prev(pos_));
  } else {
    at_.Prev();
  }
}

void ZSetValue::Iter::Skip(size_t n, bool back) {
  if (n == 0 || !valid()) return;
  if (!z_->packed()) {
    // By rank: O(log N) however far (Redis walks the links one by one).
    const size_t rank = z_->RankOf(*this);
    if (back) {
      at_ = n > rank ? ScoreTree::Pos{} : z_->sl_->tree.AtRank(rank - n);
    } else {
      at_ = z_->sl_->tree.AtRank(rank + n);
    }
    return;
  }
  while (n-- > 0 && valid()) back ? Prev() : Next();
}

ZSetValue::Iter ZSetValue::AtRank(size_t rank) const {
  Iter it(this);
  if (packed()) {
    it.pos_ = rank >= size() ? lp_.end() : lp_.Seek(static_cast<int64_t>(2 * rank));
  } else {
    it.at_ = sl_->tree.AtRank(rank);
    it.at_.Warm(true);
  }
  return it;
}

ZSetValue::Iter ZSetValue::Last() const {
  Iter it(this);
  if (packed()) {
    it.pos_ = lp_.empty() ? lp_.end() : lp_.Prev(lp_.Prev(lp_.end()));
  } else {
    it.at_ = sl_->tree.Last();
  }
  return it;
}

ZSetValue::Iter ZSetValue::FirstInRange(const ScoreRange& range) const {
  Iter it(this);
  if (packed()) {
    for (it = First(); it.valid(); it.Next()) {
      const double s = it.score();
      if (range.AboveMin(s)) {
        if (!range.BelowMax(s)) it.pos_ = lp_.end();
        return it;
      }
    }
    return it;
  }
  if (range.Empty()) return it;
  const ScoreTree::Pos at =
      sl_->tree.FirstWhere([&](double score, const Node*) { return range.AboveMin(score); });
  if (at.valid() && range.BelowMax(at.score())) {
    it.at_ = at;
    at.Warm(true);
  }
  return it;
}

ZSetValue::Iter ZSetValue::LastInRange(const ScoreRange& range) const {
  Iter it(this);
  if (packed()) {
    for (it = Last(); it.valid(); it.Prev()) {
      const double s = it.score();
      if (range.BelowMax(s)) {
        if (!range.AboveMin(s)) it.pos_ = lp_.end();
        return it;
      }
    }
    return it;
  }
  if (range.Empty()) return it;
  // The entry before the first above the range.
  ScoreTree::Pos at =
      sl_->tree.FirstWhere([&](double score, const Node*) { return !range.BelowMax(score); });
  if (at.valid()) {
    at.Prev();
  } else {
    at = sl_->tree.Last();
  }
  if (at.valid() && range.AboveMin(at.score())) {
    it.at_ = at;
    at.Warm(false);
  }
  return it;
}

ZSetValue::Iter ZSetValue::FirstInLex(const LexRange& range) const {
  Iter it(this);
  if (packed()) {
    for (it = First(); it.valid(); it.Next()) {
      const std::string_view m = it.member();
      if (range.AboveMin(m)) {
        if (!range.BelowMax(m)) it.pos_ = lp_.end();
        return it;
      }
    }
    return it;
  }
  if (range.Empty()) return it;
  const ScoreTree::Pos at =
      sl_->tree.FirstWhere([&](double, const Node* n) { return range.AboveMin(n->key()); });
  if (at.valid() && range.BelowMax(at.node()->key())) it.at_ = at;
  return it;
}

ZSetValue::Iter ZSetValue::LastInLex(const LexRange& range) const {
  Iter it(this);
  if (packed()) {
    for (it = Last(); it.valid(); it.Prev()) {
      const std::string_view m = it.member();
      if (range.BelowMax(m)) {
        if (!range.AboveMin(m)) it.pos_ = lp_.end();
        return it;
      }
    }
    return it;
  }
  if (range.Empty()) return it;
  ScoreTree::Pos at =
      sl_->tree.FirstWhere([&](double, const Node* n) { return !range.BelowMax(n->key()); });
  if (at.valid()) {
    at.Prev();
  } else {
    at = sl_->tree.Last();
  }
  if (at.valid() && range.AboveMin(at.node()->key())) it.at_ = at;
  return it;
}

size_t ZSetValue::RankOf(const Iter& it) const {
  if (!packed()) return sl_->tree.RankOf(it.at_);
  size_t rank = 0;
  for (size_t pos = lp_.begin(); pos != it.pos_; pos = lp_.Next(lp_.Next(pos))) ++rank;
  return rank;
}

size_t ZSetValue::CountInRange(const ScoreRange& range) const {
  Iter first = FirstInRange(range);
  if (!first.valid()) return 0;
  if (packed()) {
    size_t n = 0;
    for (; first.valid() && range.BelowMax(first.score()); first.Next()) ++n;
    return n;
  }
  return RankOf(LastInRange(range)) - RankOf(first) + 1;
}

size_t ZSetValue::CountInLex(const LexRange& range) const {
  Iter first = FirstInLex(range);
  if (!first.valid()) return 0;
  if (packed()) {
    size_t n = 0;
    for (; first.valid() && range.BelowMax(first.member()); first.Next()) ++n;
    return n;
  }
  return RankOf(LastInLex(range)) - RankOf(first) + 1;
}

ZSetValue::Iter ZSetValue::Random(std::mt19937_64& rng) const {
  // A uniform rank (a skiplist finds it in O(log N)): every element equally
  // likely, as Redis's dictGetFairRandomKey aims for.
  return AtRank(static_cast<size_t>(rng() % size()));
}

// ---- changes

ZSetValue::SetResult ZSetValue::Set(std::string_view member, double score,
                                    const EncodingLimits& limits) {
  if (packed()) {
    const size_t pos = LpFind(member);
    if (pos != lp_.end()) {
      if (LpScore(pos) == score) return SetResult::kSame;
      lp_.Erase(pos, 2);
      LpInsert(member, score);
      return SetResult::kUpdated;
    }
    if (static_cast<int64_t>(size()) + 1 > limits.zset_max_listpack_entries ||
        static_cast<int64_t>(member.size()) > limits.zset_max_listpack_value ||
        !lp_.SafeToAdd(member.size() + 16)) {  // (a score packs in at most 9 bytes)
      ConvertToSkiplist();
    } else {
      LpInsert(member, score);
      return SetResult::kAdded;
    }
  }
  ScoreTree& tree = sl_->tree;
  if (Node* n = sl_->dict.Find(member)) {
    const double cur = ScoreOf(n);
    if (cur == score) return SetResult::kSame;
    // The element moves: into the tree at its new score first (the one
    // step that may fail to allocate, before anything changed), then out
    // at the old one. Its Dict node stays.
    tree.Insert(score, n);
    tree.Erase(cur, n);
    SetScore(n, score);
    return SetResult::kUpdated;
  }
  Node* n = SlNewNode(member, score);
  try {
    tree.Insert(score, n);
  } catch (const std::bad_alloc&) {
    sl_->dict.Erase(member);
    throw;
  }
  return SetResult::kAdded;
}

bool ZSetValue::Remove(std::string_view member) {
  if (packed()) {
    const size_t pos = LpFind(member);
    if (pos == lp_.end()) return false;
    lp_.Erase(pos, 2);
    lp_.ShrinkIfSparse();
    return true;
  }
  Node* n = sl_->dict.Find(member);
  if (n == nullptr) return false;
  sl_->tree.Erase(ScoreOf(n), n);
  sl_->dict.Erase(member);
  return true;
}

void ZSetValue::ConvertToSkiplist() {
  if (!packed()) return;
  // Built aside, so a failed allocation leaves the listpack as it was.
  std::unique_ptr<SkipList> sl = std::make_unique<SkipList>();
  std::swap(sl, sl_);
  try {
    for (size_t pos = lp_.begin(); pos < lp_.end(); pos = lp_.Next(lp_.Next(pos))) {
      sl_->tree.Insert(LpScore(pos), SlNewNode(lp_.At(pos), LpScore(pos)));
    }
  } catch (const std::bad_alloc&) {
    sl_.reset();
    throw;
  }
  lp_.Clear();
  lp_.Shrink();
}

// ---- Object

std::unique_ptr<Object> ZSetValue::Clone() const {
  auto copy = std::make_unique<ZSetValue>(packed());
  if (packed()) {
    copy->lp_ = lp_;
    return copy;
  }
  for (ScoreTree::Pos at = sl_->tree.First(); at.valid(); at.Next()) {
    copy->sl_->tree.Insert(at.score(), copy->SlNewNode(at.node()->key(), at.score()));
  }
  return copy;
}

bool ZSetValue::Equals(const Object& other) const {
  if (other.type() != kType || other.size() != size()) return false;
  const auto& o = static_cast<const ZSetValue&>(other);
  Iter a = First(), b = o.First();
  for (; a.valid() && b.valid(); a.Next(), b.Next()) {
    if (a.member() != b.member() || a.score() != b.score()) return false;
  }
  return !a.valid() && !b.valid();
}

}  // namespace latch
