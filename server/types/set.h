// SetValue: a set of byte strings, with Redis 7.0's two encodings (7.0 has
// no set listpack).
//
//  - "intset" while every member reads as a 64-bit integer (string2ll's
//    rules: "12", not "012" or "+12") and there are at most
//    set-max-intset-entries of them: an IntSet, members in ascending order
//    (SMEMBERS shows them so, as Redis does).
//  - "hashtable" otherwise: a Dict with no values, O(1) per operation. A set
//    never goes back (as in Redis).
//
// A new set takes the encoding its first member calls for (setTypeCreate):
// SADD s 1 a makes an intset that converts at "a"; SADD s a 1 a hashtable
// at once. Both end as Redis's would.
//
// The reads are here; the writes are the appliers of the SADD and SREM
// records (ApplySAdd, ApplySRem), the only code that changes a set, live
// (Store::Apply) and in replay: SPOP applies `SREM key member…`, SMOVE an
// SREM and an SADD as one unit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "server/types/dict.h"
#include "server/types/intset.h"
#include "server/types/object.h"

namespace latch {

class Keyspace;
namespace aof {
struct Record;
}

class SetValue final : public Object {
 public:
  static constexpr ValueType kType = ValueType::kSet;
  // The most members one SADD or SREM record holds when a command or a
  // rewrite writes many (Redis's rewrite writes 64 per command).
  static constexpr size_t kMembersPerRecord = 64;

  // An empty set in the encoding Redis picks for a set whose first member
  // is `first` (setTypeCreate).
  explicit SetValue(std::string_view first);
  // An empty intset: a set being built (SUNION's result), which converts
  // as members come, as Redis's createIntsetObject does.
  SetValue() = default;
  SetValue(const SetValue& other);

  // ---- Object
  ValueType type() const override { return kType; }
  size_t size() const override { return dict_ ? dict_->size() : ints_.size(); }
  size_t memory() const override;
  std::string_view encoding() const override { return dict_ ? "hashtable" : "intset"; }
  const Dict* members() const override { return dict_.get(); }
  std::unique_ptr<Object> Clone() const override { return std::make_unique<SetValue>(*this); }
  bool Equals(const Object& other) const override;
  void WriteRecords(std::string_view key, aof::Batch& out) const override;

  // ---- packed in a keyspace entry (keyspace.h, types/value_ref.h)
  // Whether the value may live in its entry as its image: compact, and an
  // image of at most kMaxImageBytes.
  bool Packable() const { return !dict_ && ints_.image_bytes() <= kMaxImageBytes; }
  void WriteImage(std::string& out) const { ints_.WriteImage(out); }
  // Becomes a copy of the value `image` describes (an empty value before);
  // false if it is not an image of one.
  bool LoadImage(std::string_view image) { return ints_.Assign(image); }
  // Becomes a read-only view of the image (see PackedList::Borrow), which
  // ReturnImage() lets go.
  void BorrowImage(std::string_view image) { ints_.Borrow(image); }
  void ReturnImage() { ints_.Unborrow(); }

  // ---- reads
  bool is_intset() const { return !dict_; }
  bool Contains(std::string_view member) const;
  // Calls f(std::string_view member) for every member: ascending while an
  // intset (the view is valid during the call only), the table's order
  // once a hashtable.
  template <typename F>
  void ForEach(F&& f) const {
    if (dict_) {
      dict_->ForEach([&](const Dict::Node& n) { f(n.key()); });
      return;
    }
    char buf[24];
    for (size_t i = 0; i < ints_.size(); ++i) f(Format(ints_.At(i), buf));
  }
  // A random member (size() > 0): uniform while an intset;
  // dictGetFairRandomKey's fairness once a hashtable, as Redis.
  std::string Random(std::mt19937_64& rng) const;
  // One step of SSCAN over the hashtable (an intset is one step: not
  // called): f(member) per member of the cursor's bucket.
  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& f) const {
    return dict_->Scan(cursor, [&](const Dict::Node& n) { f(n.key()); });
  }

  // ---- writes (the appliers below, and commands on a set of their own
  // that is in no keyspace: a result being built)
  // Adds `member`, converting as Redis's setTypeAdd does. True if new.
  bool Add(std::string_view member, const EncodingLimits& limits);
  // Removes `member`; false if absent.
  bool Remove(std::string_view member);

  // The decimal text of `v` in `buf` (at least 21 bytes).
  static std::string_view Format(int64_t v, char* buf);

 private:
  void Convert();

  IntSet ints_;                 // intset: the members, ascending
  std::unique_ptr<Dict> dict_;  // the hashtable, once converted
};

// The appliers of the set records (record_kinds.h). Each creates the key
// when absent (SADD), reports an error when the key holds another type,
// and deletes the key when the set becomes empty (SREM).
//  SADD key member [member …]: count = members added.
Applied ApplySAdd(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits);
//  SREM key member [member …]: count = members removed.
Applied ApplySRem(Keyspace& ks, const aof::Record& r);

}  // namespace latch
