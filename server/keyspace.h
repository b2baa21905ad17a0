// The keyspace: binary-safe string keys and values, each with an optional
// deadline on the monotonic clock.
//
// Contract:
//  - An expired key is never visible. Every lookup takes the current
//    monotonic time; a key whose deadline has passed (now > deadline, as in
//    Redis) is removed on the spot ("lazy expiry") and reported as missing.
//  - ActiveExpireCycle() reclaims expired keys nobody touches, the way Redis
//    does: look at keys that have a TTL in rounds, delete the expired ones,
//    repeat while a good share of a round was expired, within a time budget.
//    A cursor carries over between cycles, so every key is looked at within a
//    bounded number of cycles.
//  - Every removal caused by expiry is reported to the expiry listener, so the
//    server can log it (as a DEL) and count it.
//  - Pointers to entries are valid until the next call that modifies the
//    keyspace.
//
// Layout: one allocation per key (header, key bytes, value bytes) chained in
// a power-of-two hash table that grows and shrinks incrementally (a few
// buckets per operation), so no single command pays for rehashing millions of
// keys. Keys with a deadline are also indexed in a dense array for sampling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace latch {

// Deadline value meaning "no TTL".
inline constexpr int64_t kNoDeadline = 0;

class Keyspace {
 public:
  struct Entry {
    Entry* next;        // hash chain
    int64_t deadline;   // monotonic ms, or kNoDeadline
    uint32_t ttl_slot;  // position in the TTL index, when deadline is set
    uint32_t key_len;
    uint32_t value_len;

    std::string_view key() const { return {bytes(), key_len}; }
    std::string_view value() const { return {bytes() + key_len, value_len}; }
    bool has_deadline() const { return deadline != kNoDeadline; }

   private:
    friend class Keyspace;
    char* bytes() { return reinterpret_cast<char*>(this + 1); }
    const char* bytes() const { return reinterpret_cast<const char*>(this + 1); }
  };

  using ExpiryListener = std::function<void(std::string_view key)>;

  Keyspace();
  ~Keyspace();
  Keyspace(const Keyspace&) = delete;
  Keyspace& operator=(const Keyspace&) = delete;

  void set_expiry_listener(ExpiryListener l) { on_expire_ = std::move(l); }

  // The live entry for `key`, or nullptr. Removes the key if it has expired.
  const Entry* Find(std::string_view key, int64_t now);

  // The entry for `key`, expired or not (no lazy expiry, no listener).
  const Entry* Peek(std::string_view key) {
    Entry** slot = Locate(key, Hash(key));
    return slot != nullptr ? *slot : nullptr;
  }

  // Whether `key` is stored, expired or not (no lazy expiry, no listener).
  bool Contains(std::string_view key) { return Locate(key, Hash(key)) != nullptr; }

  // Stores `value` under `key` with `deadline` (kNoDeadline for none),
  // replacing any previous value and deadline. When keep_deadline is true an
  // existing key keeps its deadline and `deadline` is ignored for it.
  void Set(std::string_view key, std::string_view value, int64_t deadline,
           bool keep_deadline = false);

  // Changes the deadline of an existing key (kNoDeadline removes it).
  // Returns false if the key does not exist (expiry is not checked here: call
  // Find first).
  bool SetDeadline(std::string_view key, int64_t deadline);

  // Removes `key`. Returns whether it existed (expired or not).
  bool Erase(std::string_view key);

  void Clear();

  size_t size() const { return size_; }
  size_t keys_with_deadline() const { return ttl_index_.size(); }
  // Bytes held by entries and tables (an estimate for INFO memory).
  size_t memory_bytes() const;

  // Deletes expired keys among those with a TTL, for at most `budget_us`
  // microseconds of work. Returns the number deleted. `now` is monotonic ms.
  size_t ActiveExpireCycle(int64_t now, int64_t budget_us);

  // The latest deadline of any key with one (INT64_MIN: none). O(keys with
  // a TTL): for start-up.
  int64_t MaxDeadline() const {
    int64_t m = INT64_MIN;
    for (const Entry* e : ttl_index_) m = e->deadline > m ? e->deadline : m;
    return m;
  }

  // Removes every key whose deadline has passed (now > deadline), without
  // telling the expiry listener (the end of a replay: the log already says
  // what these keys were). Returns how many.
  size_t EraseExpired(int64_t now);

  // Moves some buckets of an ongoing rehash; called from the server's timer
  // so an idle server finishes resizing. Returns true while work remains.
  bool RehashStep(int buckets);

  // Calls f(const Entry&) for every stored entry (expired ones included: the
  // caller decides). The keyspace must not be modified meanwhile.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Table* t : {&tables_[0], &tables_[1]}) {
      for (size_t i = 0; i < t->buckets.size(); ++i) {
        for (const Entry* e = t->buckets[i]; e != nullptr; e = e->next) f(*e);
      }
    }
  }

 private:
  struct Table {
    std::vector<Entry*> buckets;
    size_t mask() const { return buckets.size() - 1; }
  };

  static uint64_t Hash(std::string_view key);
  static Entry* NewEntry(std::string_view key, std::string_view value);
  static void FreeEntry(Entry* e);

  // The slot holding a pointer to the entry for `key` (so it can be replaced
  // or unlinked), or nullptr if absent.
  Entry** Locate(std::string_view key, uint64_t hash);
  void Unlink(Entry** slot);
  void RemoveFromTtlIndex(Entry* e);
  void AddToTtlIndex(Entry* e);
  void ExpireEntry(Entry** slot);
  void MaybeResize();
  void RehashSome(int buckets);
  bool rehashing() const { return !tables_[1].buckets.empty(); }

  Table tables_[2];
  size_t rehash_index_ = 0;  // next bucket of tables_[0] to move
  size_t size_ = 0;
  size_t entry_bytes_ = 0;
  std::vector<Entry*> ttl_index_;
  size_t expire_cursor_ = 0;  // where the next active expiry cycle resumes
  ExpiryListener on_expire_;
};

}  // namespace latch
