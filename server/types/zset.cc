#include "server/types/zset.h"

#include <malloc.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "log/record.h"
#include "protocol/text.h"
#include "server/keyspace.h"

namespace latch {

// ---------------------------------------------------------------- skiplist nodes

// An element of the skiplist is a Dict node: key = member, value bytes (at a
// fixed offset from the node: dict.h puts them before the key) =
//   [score: double][backward: Node*]
//   [level 0: forward Node*, span u64, forward's score: double]…
// read and written with memcpy. The header is a node of the same shape with
// kMaxLevel levels, allocated apart from the Dict.
//
// Each level keeps a copy of the score of the node it points to, so a
// search decides whether to step forward from the node it stands on: it
// reads the next node only when it moves there (or, on equal scores, to
// compare members). A skiplist search is a chain of cache misses, one per
// node read; Redis's reads the node after the stop point on every level
// too, which these copies save. The copy is written wherever a link is
// (Link) and where a linked node's score changes in place (SlRescore).
namespace {

using Node = Dict::Node;
constexpr int kMaxLevel = 32;  // enough for 2^64 elements at p = 1/4
constexpr size_t kBase = 16;   // score and backward link
constexpr size_t kLevelBytes = 24;
constexpr size_t kMaxValue = kBase + kMaxLevel * kLevelBytes;
const char kZeros[kMaxValue] = {};

inline const char* Val(const Node* n) {
  return n->value().data();
}
inline char* MutVal(Node* n) {
  return n->mutable_value();
}
inline double ScoreOf(const Node* n) {
  double d;
  std::memcpy(&d, Val(n), 8);
  return d;
}
inline void SetScore(Node* n, double d) {
  std::memcpy(MutVal(n), &d, 8);
}
inline Node* Backward(const Node* n) {
  Node* p;
  std::memcpy(&p, Val(n) + 8, sizeof(p));
  return p;
}
inline void SetBackward(Node* n, Node* p) {
  std::memcpy(MutVal(n) + 8, &p, sizeof(p));
}
inline Node* Forward(const Node* n, int i) {
  Node* p;
  std::memcpy(&p, Val(n) + kBase + kLevelBytes * static_cast<size_t>(i), sizeof(p));
  return p;
}
// The score of the node level i of n points to (0 when none).
inline double FwdScore(const Node* n, int i) {
  double d;
  std::memcpy(&d, Val(n) + kBase + kLevelBytes * static_cast<size_t>(i) + 16, 8);
  return d;
}
// Level i of n points to p, whose score is `score`.
inline void Link(Node* n, int i, Node* p, double score) {
  char* at = MutVal(n) + kBase + kLevelBytes * static_cast<size_t>(i);
  std::memcpy(at, &p, sizeof(p));
  std::memcpy(at + 16, &score, 8);
}
inline void SetFwdScore(Node* n, int i, double score) {
  std::memcpy(MutVal(n) + kBase + kLevelBytes * static_cast<size_t>(i) + 16, &score, 8);
}
inline uint64_t Span(const Node* n, int i) {
  uint64_t s;
  std::memcpy(&s, Val(n) + kBase + kLevelBytes * static_cast<size_t>(i) + 8, sizeof(s));
  return s;
}
inline void SetSpan(Node* n, int i, uint64_t s) {
  std::memcpy(MutVal(n) + kBase + kLevelBytes * static_cast<size_t>(i) + 8, &s, sizeof(s));
}
inline int Levels(const Node* n) {
  return static_cast<int>((n->value_len - kBase) / kLevelBytes);
}
// (score, member) order: the skiplist's and the listpack's.
inline bool Before(double s1, std::string_view m1, double s2, std::string_view m2) {
  return s1 < s2 || (s1 == s2 && m1.compare(m2) < 0);
}
// Whether the node level i of `at` points to, f, comes before (score,
// member): f itself is read only on equal scores.
inline bool NextBefore(const Node* at, int i, const Node* f, double score,
                       std::string_view member) {
  const double s = FwdScore(at, i);
  return s < score || (s == score && f->key().compare(member) < 0);
}

// Redis's zslRandomLevel: each further level with probability 1/4.
int RandomLevel() {
  static thread_local uint64_t state = std::random_device{}() | 1;
  int level = 1;
  for (;;) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    if ((state & 0xffff) >= 0x4000 || level == kMaxLevel) return level;
    ++level;
  }
}

}  // namespace

namespace zset_detail {
double NodeScore(const Dict::Node* n) {
  return ScoreOf(n);
}
}  // namespace zset_detail

struct ZSetValue::SkipList {
  Dict dict;
  Node* header;
  Node* tail = nullptr;
  int level = 1;

  SkipList() {
    void* mem = std::malloc(sizeof(Node) + kMaxValue);
    if (mem == nullptr) throw std::bad_alloc();
    header = new (mem) Node{nullptr, 0, static_cast<uint32_t>(kMaxValue)};
    std::memset(header->mutable_value(), 0, kMaxValue);
  }
  ~SkipList() {
    header->~Node();
    std::free(header);
  }
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;
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
  return n + sizeof(SkipList) + sl_->dict.memory() + malloc_usable_size(sl_->header);
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
    if (Before(score, member, zset_detail::DecodePackedScore(lp_.At(score_pos)), lp_.At(pos)))
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
  const size_t len = kBase + kLevelBytes * static_cast<size_t>(RandomLevel());
  Node* n = sl_->dict.Set(member, std::string_view(kZeros, len)).first;
  SetScore(n, score);
  return n;
}

void ZSetValue::SlInsert(Node* x) {
  SkipList& sl = *sl_;
  Node* update[kMaxLevel];
  uint64_t rank[kMaxLevel];
  const double score = ScoreOf(x);
  const std::string_view member = x->key();
  Node* at = sl.header;
  for (int i = sl.level - 1; i >= 0; --i) {
    // The rank crossed to reach the node before the insert point, level by level.
    rank[i] = i == sl.level - 1 ? 0 : rank[i + 1];
    for (Node* f = Forward(at, i); f != nullptr && NextBefore(at, i, f, score, member);
         f = Forward(at, i)) {
      rank[i] += Span(at, i);
      at = f;
    }
    update[i] = at;
  }
  const int level = Levels(x);
  if (level > sl.level) {
    for (int i = sl.level; i < level; ++i) {
      rank[i] = 0;
      update[i] = sl.header;
      SetSpan(sl.header, i, sl.length() - 1);  // (the Dict already counts x)
    }
    sl.level = level;
  }
  for (int i = 0; i < level; ++i) {
    Link(x, i, Forward(update[i], i), FwdScore(update[i], i));
    Link(update[i], i, x, score);
    SetSpan(x, i, Span(update[i], i) - (rank[0] - rank[i]));
    SetSpan(update[i], i, (rank[0] - rank[i]) + 1);
  }
  // Levels above x's own now span one more element.
  for (int i = level; i < sl.level; ++i) SetSpan(update[i], i, Span(update[i], i) + 1);
  SetBackward(x, update[0] == sl.header ? nullptr : update[0]);
  if (Node* next = Forward(x, 0)) {
    SetBackward(next, x);
  } else {
    sl.tail = x;
  }
}

// The node before x's place on every level (x's score as it is linked).
void ZSetValue::SlPredecessors(const Node* x, Node** update) const {
  const SkipList& sl = *sl_;
  const double score = ScoreOf(x);
  const std::string_view member = x->key();
  Node* at = sl.header;
  for (int i = sl.level - 1; i >= 0; --i) {
    for (Node* f = Forward(at, i); f != nullptr && NextBefore(at, i, f, score, member);
         f = Forward(at, i)) {
      at = f;
    }
    update[i] = at;
  }
}

void ZSetValue::SlRescore(Node* x, double score) {
  Node* update[kMaxLevel];
  SlPredecessors(x, update);
  SetScore(x, score);
  for (int i = 0; i < Levels(x); ++i) SetFwdScore(update[i], i, score);
}

void ZSetValue::SlUnlink(Node* x) {
  SkipList& sl = *sl_;
  Node* update[kMaxLevel];
  SlPredecessors(x, update);
  for (int i = 0; i < sl.level; ++i) {
    if (Forward(update[i], i) == x) {
      SetSpan(update[i], i, Span(update[i], i) + Span(x, i) - 1);
      Link(update[i], i, Forward(x, i), FwdScore(x, i));
    } else {
      SetSpan(update[i], i, Span(update[i], i) - 1);
    }
  }
  if (Node* next = Forward(x, 0)) {
    SetBackward(next, Backward(x));
  } else {
    sl.tail = Backward(x);
  }
  while (sl.level > 1 && Forward(sl.header, sl.level - 1) == nullptr) --sl.level;
}

size_t ZSetValue::SlRank(double score, std::string_view member) const {
  const SkipList& sl = *sl_;
  uint64_t rank = 0;
  const Node* at = sl.header;
  for (int i = sl.level - 1; i >= 0; --i) {
    for (Node* f = Forward(at, i);
         f != nullptr &&
         (FwdScore(at, i) < score || (FwdScore(at, i) == score && f->key().compare(member) <= 0));
         f = Forward(at, i)) {
      rank += Span(at, i);
      at = f;
    }
    if (at != sl.header && at->key() == member) return rank;
  }
  return 0;
}

Dict::Node* ZSetValue::SlByRank(size_t rank) const {
  const SkipList& sl = *sl_;
  uint64_t traversed = 0;
  Node* at = sl.header;
  for (int i = sl.level - 1; i >= 0; --i) {
    for (Node* f = Forward(at, i); f != nullptr && traversed + Span(at, i) <= rank;
         f = Forward(at, i)) {
      traversed += Span(at, i);
      at = f;
    }
    if (traversed == rank) return at == sl.header ? nullptr : at;
  }
  return nullptr;
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
  const size_t rank = SlRank(ScoreOf(node), member);
  if (rank == 0) return std::nullopt;
  return reverse ? n - rank : rank - 1;
}

std::string_view ZSetValue::Iter::member() const {
  return z_->packed() ? z_->lp_.At(pos_) : node_->key();
}

double ZSetValue::Iter::score() const {
  return z_->packed() ? z_->LpScore(pos_) : ScoreOf(node_);
}

void ZSetValue::Iter::Next() {
  if (z_->packed()) {
    pos_ = z_->lp_.Next(z_->lp_.Next(pos_));
  } else {
    node_ = Forward(node_, 0);
  }
}

void ZSetValue::Iter::Prev() {
  if (z_->packed()) {
    pos_ = pos_ == z_->lp_.begin() ? z_->lp_.end() : z_->lp_.Prev(z_->lp_.Prev(pos_));
  } else {
    node_ = Backward(node_);
  }
}

void ZSetValue::Iter::Skip(size_t n, bool back) {
  if (n == 0 || !valid()) return;
  if (!z_->packed()) {
    // By rank: O(log N) however far (Redis walks the links one by one).
    const size_t rank = z_->RankOf(*this);
    if (back) {
      node_ = n > rank ? nullptr : z_->SlByRank(rank - n + 1);
    } else {
      node_ = rank + n >= z_->size() ? nullptr : z_->SlByRank(rank + n + 1);
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
    it.node_ = rank >= size() ? nullptr : SlByRank(rank + 1);
  }
  return it;
}

ZSetValue::Iter ZSetValue::Last() const {
  Iter it(this);
  if (packed()) {
    it.pos_ = lp_.empty() ? lp_.end() : lp_.Prev(lp_.Prev(lp_.end()));
  } else {
    it.node_ = sl_->tail;
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
  const SkipList& sl = *sl_;
  if (range.Empty() || sl.tail == nullptr || !range.AboveMin(ScoreOf(sl.tail)) ||
      !range.BelowMax(ScoreOf(Forward(sl.header, 0)))) {
    return it;
  }
  const Node* at = sl.header;
  for (int i = sl.level - 1; i >= 0; --i) {
    for (Node* f = Forward(at, i); f != nullptr && !range.AboveMin(FwdScore(at, i));
         f = Forward(at, i)) {
      at = f;
    }
  }
  at = Forward(at, 0);
  if (at != nullptr && range.BelowMax(ScoreOf(at))) it.node_ = at;
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
  const SkipList& sl = *sl_;
  if (range.Empty() || sl.tail == nullptr || !range.AboveMin(ScoreOf(sl.tail)) ||
      !range.BelowMax(ScoreOf(Forward(sl.header, 0)))) {
    return it;
  }
  const Node* at = sl.header;
  for (int i = sl.level - 1; i >= 0; --i) {
    for (Node* f = Forward(at, i); f != nullptr && range.BelowMax(FwdScore(at, i));
         f = Forward(at, i)) {
      at = f;
    }
  }
  if (at != sl.header && range.AboveMin(ScoreOf(at))) it.node_ = at;
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
  const SkipList& sl = *sl_;
  if (range.Empty() || sl.tail == nullptr || !range.AboveMin(sl.tail->key()) ||
      !range.BelowMax(Forward(sl.header, 0)->key())) {
    return it;
  }
  const Node* at = sl.header;
  for (int i = sl.level - 1; i >= 0; --i) {
    for (Node* f = Forward(at, i); f != nullptr && !range.AboveMin(f->key()); f = Forward(at, i)) {
      at = f;
    }
  }
  at = Forward(at, 0);
  if (at != nullptr && range.BelowMax(at->key())) it.node_ = at;
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
  const SkipList& sl = *sl_;
  if (range.Empty() || sl.tail == nullptr || !range.AboveMin(sl.tail->key()) ||
      !range.BelowMax(Forward(sl.header, 0)->key())) {
    return it;
  }
  const Node* at = sl.header;
  for (int i = sl.level - 1; i >= 0; --i) {
    for (Node* f = Forward(at, i); f != nullptr && range.BelowMax(f->key()); f = Forward(at, i)) {
      at = f;
    }
  }
  if (at != sl.header && range.AboveMin(at->key())) it.node_ = at;
  return it;
}

size_t ZSetValue::RankOf(const Iter& it) const {
  if (!packed()) return SlRank(ScoreOf(it.node_), it.node_->key()) - 1;
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
  if (Node* n = sl_->dict.Find(member)) {
    const double cur = ScoreOf(n);
    if (cur == score) return SetResult::kSame;
    // Redis's zslUpdateScore: a node that stays between its neighbours only
    // changes its score; otherwise it moves.
    Node* back = Backward(n);
    Node* next = Forward(n, 0);
    if ((back == nullptr || ScoreOf(back) < score) && (next == nullptr || ScoreOf(next) > score)) {
      SlRescore(n, score);
    } else {
      SlUnlink(n);
      SetScore(n, score);
      SlInsert(n);
    }
    return SetResult::kUpdated;
  }
  SlInsert(SlNewNode(member, score));
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
  SlUnlink(n);
  sl_->dict.Erase(member);
  return true;
}

void ZSetValue::ConvertToSkiplist() {
  if (!packed()) return;
  auto sl = std::make_unique<SkipList>();
  sl_ = std::move(sl);
  for (size_t pos = lp_.begin(); pos < lp_.end(); pos = lp_.Next(lp_.Next(pos))) {
    SlInsert(SlNewNode(lp_.At(pos), LpScore(pos)));
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
  for (const Node* n = Forward(sl_->header, 0); n != nullptr; n = Forward(n, 0)) {
    copy->SlInsert(copy->SlNewNode(n->key(), ScoreOf(n)));
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
