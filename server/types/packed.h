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
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

namespace latch {

class PackedList {
 public:
  // The most bytes a small collection's list may grow to before the
  // collection leaves its compact encoding whatever the settings (Redis's
  // LISTPACK_MAX_SAFETY_SIZE, lpSafeToAdd): past it a scan is no longer
  // cheap, and the 32-bit sizes below stay far from their limit.
  static constexpr size_t kMaxSafeBytes = size_t{1} << 30;
  // Whether `extra` more bytes of elements keep it under kMaxSafeBytes.
  bool SafeToAdd(size_t extra) const { return size_ + extra <= kMaxSafeBytes; }

  PackedList() = default;
  PackedList(const PackedList& other);
  PackedList& operator=(const PackedList& other);
  PackedList(PackedList&& other) noexcept { *this = std::move(other); }
  PackedList& operator=(PackedList&& other) noexcept;
  ~PackedList() { std::free(buf_); }

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Bytes of the encoding.
  size_t bytes() const { return size_; }
  // Bytes of its buffer as the allocator gave it (MEMORY USAGE).
  size_t capacity() const;

  // ---- walking
  size_t begin() const { return 0; }
  size_t end() const { return size_; }
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
    std::free(buf_);
    buf_ = nullptr;
    size_ = 0;
    count_ = 0;
  }
  // Gives back unused capacity (after a large removal).
  void Shrink();
  // The same, when more than half of the buffer is unused (after removing
  // elements one by one: what HDEL and ZREM do).
  void ShrinkIfSparse() {
    if (capacity() > 2 * size_ + 64) Shrink();
  }

  // The bytes an element of `len` bytes takes.
  static size_t EncodedSize(size_t len);

  // ---- as an image (a small hash or sorted set packed in its keyspace
  // entry, keyspace.h): the element count (4 bytes), then the encoding.
  void WriteImage(std::string& out) const;
  size_t image_bytes() const { return sizeof(uint32_t) + size_; }
  // Becomes a copy of the list `image` describes (false: too short to be
  // one, and nothing changed).
  bool Assign(std::string_view image);
  // Becomes a read-only view of it, without copying: the bytes must outlive
  // it, nothing may change it, and Unborrow() must let them go before it is
  // destroyed (types/value_ref.h does both).
  void Borrow(std::string_view image);
  void Unborrow() {
    buf_ = nullptr;
    size_ = 0;
    count_ = 0;
  }

 private:
  // Reads the element header at `pos`: its data offset and length.
  void Header(size_t pos, size_t* data, size_t* len) const;

  // Makes room for `extra` more bytes; a small buffer grows to the byte (a
  // small collection pays for what it holds, as a listpack does), a large
  // one by a quarter more, so that pushing one element at a time does not
  // copy the whole buffer each time.
  void Reserve(size_t extra);
  // Opens `n` bytes at `pos` (moving what follows), or closes them.
  char* Open(size_t pos, size_t n);
  void Close(size_t pos, size_t n);

  // Whether `v` points into this list's own buffer (an element of it): an
  // Insert or Replace copies it aside first, as the buffer moves.
  bool Aliases(std::string_view v) const {
    return buf_ != nullptr && v.data() >= buf_ && v.data() < buf_ + size_;
  }

  // One malloc'd buffer (no capacity of its own: the allocator's usable
  // size is the capacity), the bytes in use, the elements: 16 bytes where a
  // std::string and a count were 40, and no doubling. (32-bit sizes, as a
  // listpack's: a buffer past 4 GB is refused as out of memory. With them a
  // small hash's HashValue is 32 bytes, one allocator class below 40's.)
  char* buf_ = nullptr;
  uint32_t size_ = 0;
  uint32_t count_ = 0;
};

}  // namespace latch
