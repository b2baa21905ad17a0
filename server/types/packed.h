// PackedList: a sequence of byte strings in one contiguous buffer — the
// compact encoding of small collections (Redis's listpack): a small hash is
// its fields and values one after the other, a small sorted set its members
// and scores, a list node its items.
//
// Why. A small collection held as separate strings costs an allocation and
// ~32 bytes of bookkeeping per element; packed, an element of n bytes costs
// n + 2 (for n < 128). Lookups scan, which for the few dozen elements a
// compact encoding holds (hash-max-listpack-entries…) is as fast as hashing
// and friendlier to the cache, exactly Redis's trade.
//
// Layout of one element: its length as a LEB128 varint, its bytes, then the
// size of those two parts again as a varint written backwards (its last byte
// first), so the list can be walked in both directions:
//
//   [len varint][bytes][back varint, reversed]
//
// Positions are byte offsets of an element's first byte; end() is the offset
// past the last element. Offsets stay valid until the next change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace latch {

class PackedList {
 public:
  PackedList() = default;

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Bytes of the encoding (the buffer as allocated: MEMORY USAGE).
  size_t bytes() const { return buf_.size(); }
  size_t capacity() const { return buf_.capacity(); }

  // ---- walking
  size_t begin() const { return 0; }
  size_t end() const { return buf_.size(); }
  // The element at `pos` (pos < end()).
  std::string_view At(size_t pos) const;
  // The offset of the element after / before the one at `pos` (Next of the
  // last is end(); Prev of end() is the last; Prev of begin() is end()).
  size_t Next(size_t pos) const;
  size_t Prev(size_t pos) const;
  // The offset of element `index` (0-based; negative from the end, -1 the
  // last), walking from the nearer end; end() when out of range.
  size_t Seek(int64_t index) const;
  // The offset of the first element equal to `value` at or after `from`,
  // stepping `stride` elements at a time (2: only fields of field/value
  // pairs); end() when none.
  size_t Find(std::string_view value, size_t from = 0, size_t stride = 1) const;

  // ---- changing (offsets after the change point move)
  // Inserts `value` before the element at `pos` (end(): at the back).
  // Returns the new element's offset.
  size_t Insert(size_t pos, std::string_view value);
  void PushBack(std::string_view value) { Insert(end(), value); }
  void PushFront(std::string_view value) { Insert(begin(), value); }
  // Replaces the element at `pos`; returns its offset (the same).
  size_t Replace(size_t pos, std::string_view value);
  // Removes `n` elements from `pos` on (fewer if the list ends first).
  // Returns the offset of the element that now follows (the same offset).
  size_t Erase(size_t pos, size_t n = 1);
  void Clear() {
    buf_.clear();
    count_ = 0;
  }
  // Gives back unused capacity (after a large removal).
  void Shrink() { buf_.shrink_to_fit(); }

  // The bytes an element of `len` bytes takes.
  static size_t EncodedSize(size_t len);

 private:
  // Reads the element header at `pos`: its data offset and length.
  void Header(size_t pos, size_t* data, size_t* len) const;

  std::string buf_;
  size_t count_ = 0;
};

}  // namespace latch
