// Dict: a hash table of byte-string keys, each with an optional value of
// bytes — the large encoding of hashes ("hashtable": field → value), sets
// (members, no value) and sorted sets (member → score).
//
// Contract:
//  - Find, Set and Erase are O(1) on average; the table doubles when it holds
//    as many keys as buckets and halves below 1/8 full (Redis's dict rules),
//    rehashing a bounded number of buckets per operation, so no single
//    command pays for moving a million entries.
//  - Scan() is Redis's dictScan: a cursor with its bits reversed, so a key
//    present from the first call of a walk to the last is returned at least
//    once however the table grows or shrinks in between (HSCAN, SSCAN, ZSCAN
//    promise exactly that).
//  - Random() is dictGetRandomKey: a random non-empty bucket, then a random
//    entry of its chain; FairRandom() is dictGetFairRandomKey, which
//    HRANDFIELD, SRANDMEMBER and SPOP use in Redis (as fair as Redis's).
//  - Pointers to nodes stay valid until the node is erased or its value is
//    replaced by one of another length (the node is then reallocated).
//
// Layout: one allocation per entry — header, value bytes, key bytes —
// chained in power-of-two bucket arrays. The value comes first so that it
// sits at a fixed offset from the node: a large sorted set keeps its score
// there (zset.cc), read without first reading the member's length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

namespace latch {

class Dict {
 public:
  struct Node {
    Node* next;
    uint32_t key_len;
    uint32_t value_len;
    std::string_view key() const { return {bytes() + value_len, key_len}; }
    std::string_view value() const { return {bytes(), value_len}; }
    // The value's bytes, to change in place (the same length).
    char* mutable_value() { return bytes(); }

   private:
    friend class Dict;
    char* bytes() { return reinterpret_cast<char*>(this + 1); }
    const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }
  };

  Dict();
  ~Dict();
  Dict(const Dict& other);
  Dict& operator=(const Dict&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  const Node* Find(std::string_view key) const;
  Node* Find(std::string_view key);
  // Stores `value` under `key`. Returns the node and whether the key is new.
  std::pair<Node*, bool> Set(std::string_view key, std::string_view value = {});
  // Removes `key`; false if it was absent.
  bool Erase(std::string_view key);
  void Clear();

  // A random entry (nullptr when empty).
  const Node* Random(std::mt19937_64& rng) const;
  // A fairer random entry (dictGetFairRandomKey): up to 15 entries from
  // consecutive buckets after a random one, then one of them uniformly, so
  // an entry in a long chain is not picked less often than one alone in
  // its bucket. What HRANDFIELD, SRANDMEMBER and SPOP use, as in Redis.
  const Node* FairRandom(std::mt19937_64& rng) const;

  // One step of a scan: calls f(const Node&) for the entries of the bucket
  // the cursor names (and, while rehashing, of the larger table's buckets
  // it expands to); returns the next cursor, 0 when the walk is complete.
  // f must not change the dict.
  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& f) const;

  // Calls f(const Node&) for every entry; the dict must not change meanwhile.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Table* t : {&tables_[0], &tables_[1]}) {
      for (const Node* head : t->buckets) {
        for (const Node* n = head; n != nullptr; n = n->next) f(*n);
      }
    }
  }

  // Prefetching (server/prefetch.h), without changing anything: step 1 the
  // bucket `hash` falls in, step 2 (the bucket loaded) its chain's first
  // node, key and value.
  static uint64_t HashOf(std::string_view key) { return Hash(key); }
  void PrefetchBucket(uint64_t hash) const;
  void PrefetchChain(uint64_t hash) const;

  // Bytes held: the nodes as the allocator rounded them, and the tables.
  size_t memory() const;

 private:
  struct Table {
    std::vector<Node*> buckets;
    size_t mask() const { return buckets.size() - 1; }
  };

  static uint64_t Hash(std::string_view key);
  static uint64_t ReverseBits(uint64_t v);
  static Node* NewNode(std::string_view key, std::string_view value);
  Node** Locate(std::string_view key, uint64_t hash) const;
  void MaybeResize();
  void RehashSome(int buckets) const;
  bool rehashing() const { return !tables_[1].buckets.empty(); }

  // Rehashing moves entries between tables during lookups too (as Redis's
  // dict does on find), which is why the tables are mutable.
  mutable Table tables_[2];
  mutable size_t rehash_index_ = 0;
  size_t size_ = 0;
  size_t node_bytes_ = 0;
};

template <typename F>
uint64_t Dict::Scan(uint64_t cursor, F&& f) const {
  const Table* small = &tables_[0];
  const Table* large = &tables_[1];
  auto visit = [&](const Table& t, uint64_t v) {
    for (const Node* n = t.buckets[v & t.mask()]; n != nullptr; n = n->next) f(*n);
  };
  auto advance = [](uint64_t v, uint64_t mask) {
    v |= ~mask;
    v = ReverseBits(v);
    ++v;
    return ReverseBits(v);
  };
  if (!rehashing()) {
    visit(*small, cursor);
    return advance(cursor, small->mask());
  }
  if (small->buckets.size() > large->buckets.size()) std::swap(small, large);
  const uint64_t m0 = small->mask(), m1 = large->mask();
  visit(*small, cursor);
  do {
    visit(*large, cursor);
    cursor = advance(cursor, m1);
  } while (cursor & (m0 ^ m1));
  return cursor;
}

}  // namespace latch
