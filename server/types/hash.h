// HashValue: a hash (field → value), with Redis 7.0's two encodings.
//
//  - "listpack" while small: fields and values one after the other in one
//    PackedList (field, value, field, value…), in insertion order. Lookups
//    scan; for the few hundred pairs allowed that is as fast as hashing and
//    costs a few bytes per pair instead of an allocation each.
//  - "hashtable" once it has more than hash-max-listpack-entries fields, or a
//    field or value longer than hash-max-listpack-value bytes: a Dict, O(1)
//    per operation. A hash never goes back (as in Redis).
//
// The reads are here; the writes are the appliers of the HSET and HDEL
// records (ApplyHSet, ApplyHDel), the only code that changes a hash, live
// (Store::Apply) and in replay. A command family reads, decides, and hands
// the Store the effect: HINCRBY applies `HSET key field <new value>`.
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

namespace latch {

class Keyspace;
namespace aof {
struct Record;
}

class HashValue final : public Object {
 public:
  static constexpr ValueType kType = ValueType::kHash;

  HashValue() = default;
  HashValue(const HashValue& other);

  // ---- Object
  ValueType type() const override { return kType; }
  size_t size() const override { return dict_ ? dict_->size() : list_.size() / 2; }
  size_t memory() const override;
  std::string_view encoding() const override { return dict_ ? "hashtable" : "listpack"; }
  const Dict* members() const override { return dict_.get(); }
  std::unique_ptr<Object> Clone() const override { return std::make_unique<HashValue>(*this); }
  bool Equals(const Object& other) const override;
  void WriteRecords(std::string_view key, aof::Batch& out) const override;

  // ---- packed in a keyspace entry (keyspace.h, types/value_ref.h)
  // Whether the value may live in its entry as its image: compact, and an
  // image of at most kMaxImageBytes.
  bool Packable() const { return !dict_ && list_.image_bytes() <= kMaxImageBytes; }
  void WriteImage(std::string& out) const { list_.WriteImage(out); }
  // Becomes a copy of the value `image` describes (an empty value before);
  // false if it is not an image of one.
  bool LoadImage(std::string_view image) { return list_.Assign(image); }
  // Becomes a read-only view of the image (see PackedList::Borrow), which
  // ReturnImage() lets go.
  void BorrowImage(std::string_view image) { list_.Borrow(image); }
  void ReturnImage() { list_.Unborrow(); }

  // ---- reads
  bool packed() const { return !dict_; }
  // The value of `field`, if present (valid until the hash changes).
  std::optional<std::string_view> Get(std::string_view field) const;
  bool Contains(std::string_view field) const { return Get(field).has_value(); }
  // Calls f(field, value) for every pair: insertion order while packed, the
  // table's order once a hashtable.
  template <typename F>
  void ForEach(F&& f) const {
    if (dict_) {
      dict_->ForEach([&](const Dict::Node& n) { f(n.key(), n.value()); });
      return;
    }
    for (size_t pos = list_.begin(); pos < list_.end();) {
      const size_t value = list_.Next(pos);
      f(list_.At(pos), list_.At(value));
      pos = list_.Next(value);
    }
  }
  // A random pair (size() > 0): uniform while packed; dictGetFairRandomKey's
  // fairness once a hashtable, as Redis.
  std::pair<std::string_view, std::string_view> Random(std::mt19937_64& rng) const;
  // One step of HSCAN over the hashtable (packed: not called, the whole
  // hash is one step): f(field, value) per pair of the cursor's bucket.
  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& f) const {
    return dict_->Scan(cursor, [&](const Dict::Node& n) { f(n.key(), n.value()); });
  }

  // ---- writes (the appliers below only)
  // Stores `value` under `field`, converting the encoding as Redis's
  // hashTypeSet does. True if the field is new.
  bool Set(std::string_view field, std::string_view value, const EncodingLimits& limits);
  // Removes `field`; false if absent.
  bool Erase(std::string_view field);
  // The listpack becomes a hashtable (hashTypeConvert).
  void Convert();

 private:
  PackedList list_;             // packed: field, value, field, value…
  std::unique_ptr<Dict> dict_;  // the hashtable, once converted
};

// The appliers of the hash records (record_kinds.h). Each creates the key
// when absent, reports an error when the key holds another type (only a
// damaged log can do that), deletes the key when the hash becomes empty,
// and converts the encoding as Redis does.
//  HSET key field value [field value …]: count = fields added.
Applied ApplyHSet(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits);
//  HDEL key field [field …]: count = fields removed.
Applied ApplyHDel(Keyspace& ks, const aof::Record& r);

}  // namespace latch
