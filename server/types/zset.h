// ZSetValue: a sorted set — members (byte strings, unique) each with a score
// (a double, never NaN), kept in order of score, then of member bytes
// (memcmp order) between equal scores. What Redis's ZADD builds.
//
// Two encodings, as Redis 7.0 has them (OBJECT ENCODING names them):
//
//  - "listpack" while small (at most zset-max-listpack-entries members of at
//    most zset-max-listpack-value bytes each; 128 and 64 by default): one
//    PackedList of member, score, member, score… in order. Lookups scan,
//    which for a hundred elements is as fast as hashing and costs ~3 bytes
//    of overhead per element. A score is packed as an integer of 0 to 7
//    bytes when it is a whole number of at most 2^55 (as Redis's listpack
//    stores it as an integer), else as its 8 bytes: so -0 reads back as 0
//    there, exactly as in Redis.
//  - "skiplist" once either limit is passed (a value never goes back, as in
//    Redis). OBJECT ENCODING says "skiplist", as Redis's does, but the order
//    is a B+-tree (score_tree.h) that counts the elements under each child,
//    so a rank (ZRANK, ZRANGE by index) is O(log N) as in Redis's zskiplist,
//    with a few cache misses per search where a skiplist has one per node it
//    steps on. Beside it a Dict from member to score, so ZSCORE is O(1):
//    each element is ONE Dict node (the member's bytes, its value the 8
//    bytes of the score), and a tree entry is the score and that node's
//    address (the Dict keeps node addresses stable while the value keeps
//    its length). Redis has a skiplist node, a dict entry and an sds string.
//
// Who changes it: only the appliers below (ZADD and ZREM records), live
// through Store::Apply and in replay; the commands (server/commands/zset*.cc)
// read, decide, and hand the Store those records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include "server/types/dict.h"
#include "server/types/object.h"
#include "server/types/packed.h"
#include "server/types/score_tree.h"

namespace latch {

class Keyspace;
namespace aof {
struct Record;
}

// ---------------------------------------------------------------- scores

// A score as a record or a reply to a script needs it, reading back to the
// same double (Redis's d2string): "inf", "-inf", "0", "-0", a whole number
// of at most 2^62 as an integer, anything else as %.17g.
std::string FormatScore(double score);
// ZSCAN's text of a score: a listpack's element as Redis keeps it (as
// FormatScore), a skiplist's as %.17Lg (whole numbers past 1e17 in
// exponent form).
std::string ScanScoreText(double score, bool packed);

// A score interval: ZRANGEBYSCORE's "1", "(1.5", "-inf", "+inf".
struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;  // exclusive ends
  bool AboveMin(double v) const { return minex ? v > min : v >= min; }
  bool BelowMax(double v) const { return maxex ? v < max : v <= max; }
  bool Contains(double v) const { return AboveMin(v) && BelowMax(v); }
  // Whether no score at all can be in it (min > max, or min == max with an
  // exclusive end).
  bool Empty() const { return min > max || (min == max && (minex || maxex)); }
};
// Parses the two ends as Redis's zslParseRange: strtod of the argument as a
// C string (so leading blanks, "" and overflow to inf pass), '(' makes an
// end exclusive; NaN or trailing bytes are refused. nullopt: "ERR min or
// max is not a float".
std::optional<ScoreRange> ParseScoreRange(std::string_view min, std::string_view max);

// A member interval: ZRANGEBYLEX's "[a", "(a", "-" (before every member),
// "+" (after every member).
struct LexBound {
  enum Kind : uint8_t { kMinusInf, kValue, kPlusInf } kind = kMinusInf;
  std::string value;
  bool exclusive = false;
};
struct LexRange {
  LexBound min, max;
  bool AboveMin(std::string_view v) const;
  bool BelowMax(std::string_view v) const;
  bool Contains(std::string_view v) const { return AboveMin(v) && BelowMax(v); }
  bool Empty() const;
};
// nullopt: "ERR min or max not valid string range item".
std::optional<LexRange> ParseLexRange(std::string_view min, std::string_view max);

// ---------------------------------------------------------------- the value

class ZSetValue final : public Object {
 public:
  static constexpr ValueType kType = ValueType::kZSet;

  // An empty set in the listpack encoding, or in the skiplist one.
  explicit ZSetValue(bool packed = true);
  ~ZSetValue() override;
  ZSetValue(const ZSetValue&) = delete;
  ZSetValue& operator=(const ZSetValue&) = delete;

  // ---- Object
  ValueType type() const override { return kType; }
  size_t size() const override;
  size_t memory() const override;
  std::string_view encoding() const override { return packed() ? "listpack" : "skiplist"; }
  const Dict* members() const override { return packed() ? nullptr : dict(); }
  std::unique_ptr<Object> Clone() const override;
  bool Equals(const Object& other) const override;
  void WriteRecords(std::string_view key, aof::Batch& out) const override;

  bool packed() const { return sl_ == nullptr; }

  // ---- packed in a keyspace entry (keyspace.h, types/value_ref.h)
  // Whether the value may live in its entry as its image: compact, and an
  // image of at most kMaxImageBytes.
  bool Packable() const { return packed() && lp_.image_bytes() <= kMaxImageBytes; }
  void WriteImage(std::string& out) const { lp_.WriteImage(out); }
  // Becomes a copy of the value `image` describes (an empty value before);
  // false if it is not an image of one.
  bool LoadImage(std::string_view image) { return lp_.Assign(image); }
  // Becomes a read-only view of the image (see PackedList::Borrow), which
  // ReturnImage() lets go.
  void BorrowImage(std::string_view image) { lp_.Borrow(image); }
  void ReturnImage() { lp_.Unborrow(); }

  // ---- reads
  // The member's score (O(1) as a skiplist, a scan as a listpack).
  std::optional<double> Score(std::string_view member) const;
  // The member's 0-based rank from the lowest score (reverse: from the
  // highest); O(log N) as a skiplist.
  std::optional<size_t> Rank(std::string_view member, bool reverse = false) const;

  // A position in the order: an element, or none (past either end). Stays
  // valid until the set changes.
  class Iter {
   public:
    bool valid() const { return z_->packed() ? pos_ != z_->lp_.end() : at_.valid(); }
    std::string_view member() const;
    double score() const;
    void Next();  // toward higher scores
    void Prev();  // toward lower scores
    // Moves `n` steps (toward higher scores, or lower when `back`).
    void Skip(size_t n, bool back);

   private:
    friend class ZSetValue;
    explicit Iter(const ZSetValue* z) : z_(z), pos_(z->lp_.end()) {}
    const ZSetValue* z_;
    size_t pos_;           // listpack: the member's offset
    ScoreTree::Pos at_{};  // skiplist
  };
  // The element of 0-based rank `rank` from the lowest score (invalid past
  // the end); O(log N) as a skiplist.
  Iter AtRank(size_t rank) const;
  Iter First() const { return AtRank(0); }
  Iter Last() const;
  // The first / last element whose score is in `range` (invalid: none).
  Iter FirstInRange(const ScoreRange& range) const;
  Iter LastInRange(const ScoreRange& range) const;
  // The same by member bytes (meaningful when all scores are equal, as
  // ZRANGEBYLEX requires).
  Iter FirstInLex(const LexRange& range) const;
  Iter LastInLex(const LexRange& range) const;
  // The 0-based rank of a valid position (O(log N) as a skiplist).
  size_t RankOf(const Iter& it) const;
  // How many elements are in the range: O(log N) as a skiplist.
  size_t CountInRange(const ScoreRange& range) const;
  size_t CountInLex(const LexRange& range) const;

  // A uniformly chosen element (the set is not empty).
  Iter Random(std::mt19937_64& rng) const;

  // One step of ZSCAN: a listpack returns everything and cursor 0; a
  // skiplist walks its Dict with Redis's reversible cursor. Calls
  // f(member, score) for each element of the step; returns the next cursor.
  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& f) const;

  // ---- changes: the appliers' (and tests') only
  enum class SetResult { kAdded, kUpdated, kSame };
  // Gives `member` the score `score` (not NaN), adding it when absent. A new
  // member that would pass the limits converts a listpack to a skiplist
  // first, as Redis's zsetAdd does.
  SetResult Set(std::string_view member, double score, const EncodingLimits& limits);
  // Removes `member`; false if absent.
  bool Remove(std::string_view member);
  // The skiplist encoding from now on.
  void ConvertToSkiplist();

 private:
  struct SkipList;
  using Node = Dict::Node;

  // listpack
  size_t LpFind(std::string_view member) const;  // the member's offset, or end()
  double LpScore(size_t member_pos) const;
  void LpInsert(std::string_view member, double score);

  // skiplist: a new element's Dict node (its value the score)
  Node* SlNewNode(std::string_view member, double score);

  PackedList lp_;
  std::unique_ptr<SkipList> sl_;  // null while packed
  Dict* dict() const;
};

// ---------------------------------------------------------------- appliers
// The records of record_kinds.h that change a sorted set; each returns what
// it did (Applied: count, changed, error) and never throws except
// std::bad_alloc before it changes anything.

// ZADD key score member [score member …]: each member gets its score (added
// when absent). The key is created when absent (listpack, unless the limits
// say skiplist from the first member on, as Redis's ZADD decides). count:
// members added.
Applied ApplyZAdd(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits);
// ZREM key member [member …]: the members go; the key goes with the last.
// count: members removed.
Applied ApplyZRem(Keyspace& ks, const aof::Record& r);

// ---------------------------------------------------------------- Scan

namespace zset_detail {
double NodeScore(const Dict::Node* n);
// A score in a listpack (zset_scores.cc): a whole number of at most 2^55 in
// 0 to 7 bytes, anything else as the 8 bytes of the double.
size_t EncodePackedScore(double d, char out[8]);
double DecodePackedScore(std::string_view b);
}  // namespace zset_detail

template <typename F>
uint64_t ZSetValue::Scan(uint64_t cursor, F&& f) const {
  if (packed()) {
    for (Iter it = First(); it.valid(); it.Next()) f(it.member(), it.score());
    return 0;
  }
  return dict()->Scan(cursor, [&](const Dict::Node& n) { f(n.key(), zset_detail::NodeScore(&n)); });
}

}  // namespace latch
