// IntSet: a sorted array of distinct 64-bit integers stored at the smallest
// width that holds them all (2, 4 or 8 bytes each) — the compact encoding of
// a set whose members all read as integers (Redis's intset, OBJECT ENCODING
// "intset").
//
// Why. A set of small numbers (user ids, shard numbers) held in a hash table
// costs ~40 bytes per member; here it costs 2. Lookups are a binary search,
// which for the few hundred members set-max-intset-entries allows is as fast
// as hashing. Members come out in ascending order, which is what SMEMBERS
// shows for such a set in Redis.
//
// Contract:
//  - Add and Remove are O(N) (the tail moves), Contains O(log N).
//  - The width only grows (Redis's "upgrade"): a value outside the current
//    width widens every element; removing it later does not narrow them.
//  - The buffer is sized exactly to its contents (one realloc per change, as
//    Redis's intset), so memory() is what the elements need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace latch {

class IntSet {
 public:
  IntSet() = default;
  ~IntSet();
  IntSet(const IntSet& other);
  IntSet& operator=(const IntSet&) = delete;

  size_t size() const { return len_; }
  bool empty() const { return len_ == 0; }
  // Bytes per element: 2, 4 or 8.
  int width() const { return width_; }

  // The element at `i` (0 <= i < size()), in ascending order.
  int64_t At(size_t i) const { return Get(i, width_); }
  bool Contains(int64_t v) const;
  // A uniformly chosen element (size() > 0).
  int64_t Random(std::mt19937_64& rng) const { return At(rng() % len_); }

  // Adds `v`; false if it was already there. Throws std::bad_alloc before
  // changing anything.
  bool Add(int64_t v);
  // Removes `v`; false if it was absent.
  bool Remove(int64_t v);
  // Removes every element and gives the buffer back.
  void Clear();

  // Bytes allocated (as the allocator rounded them).
  size_t memory() const;

  // ---- as an image (a set packed in its keyspace entry, keyspace.h): one
  // byte of width, then the elements as they are stored.
  void WriteImage(std::string& out) const;
  static size_t ImageBytes(size_t len, int width) { return 1 + len * static_cast<size_t>(width); }
  size_t image_bytes() const { return ImageBytes(len_, width_); }
  // Becomes a copy of the set `image` describes (false: not an intset
  // image, and nothing changed).
  bool Assign(std::string_view image);
  // Becomes a read-only view of it, without copying: the bytes must outlive
  // it, nothing may change it, and Unborrow() must let them go before it is
  // destroyed (types/value_ref.h does both).
  void Borrow(std::string_view image);
  void Unborrow() {
    data_ = nullptr;
    len_ = 0;
    width_ = 2;
  }

 private:
  static int WidthOf(int64_t v);
  int64_t Get(size_t i, int width) const;
  void Put(size_t i, int64_t v);
  // Where `v` is (true) or would go (false).
  bool Search(int64_t v, size_t* pos) const;
  // Sizes the buffer for `n` elements of the current width.
  void Resize(size_t n);

  unsigned char* data_ = nullptr;
  uint32_t len_ = 0;
  uint8_t width_ = 2;
};

}  // namespace latch
