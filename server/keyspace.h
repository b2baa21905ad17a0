// The keyspace: binary-safe keys, each holding a value — a string, or a hash,
// set, sorted set or list (types/object.h) — with an optional deadline on the
// monotonic clock.
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
//  - Scan() walks the table with a cursor that survives resizes: a key
//    present from the first call to the last is returned at least once,
//    however much the table grows or shrinks in between (Redis's SCAN
//    guarantee; keys may be returned more than once).
//
// Layout: one allocation per key (header, key bytes, value bytes) chained in
// a power-of-two hash table that grows and shrinks incrementally (a few
// buckets per operation), so no single command pays for rehashing millions of
// keys. Keys with a deadline are also indexed in a dense array for sampling.
// The header's last word, which alignment would otherwise waste, holds the
// key's access clock (OBJECT IDLETIME), a few bits the Store keeps about how
// the value was produced (OBJECT ENCODING), the value's type, and whether
// the key has a fencing token (SET … FENCE, see store.h): a fenced entry
// keeps its 8-byte token right after the value bytes, so a key without one
// costs nothing.
//
// A collection is held one of two ways, which the entry's value_kind tells
// apart (a string key pays nothing for either):
//  - *boxed*: the value bytes are the pointer to its Object, which the entry
//    owns (a large collection, a hashtable, a skiplist, a list);
//  - *packed in the entry*: a small hash, set or sorted set in its compact
//    encoding is its *image* — the listpack or intset bytes (the type's
//    WriteImage) — stored as the value bytes, like a string's. One
//    allocation per small collection where a boxed one takes three (entry,
//    object, buffer), each rounded up by the allocator: that is what brings
//    a small hash or set to Redis's memory or under (docs/bench).
//    Readers see it through a view of the type over those bytes
//    (types/value_ref.h); a write loads it, changes it and stores the new
//    image (a same-length image in place), so an entry pointer, and a view,
//    are stale after any write to their key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "server/types/object.h"

namespace latch {

// Deadline value meaning "no TTL".
inline constexpr int64_t kNoDeadline = 0;

class Keyspace {
 public:
  // A collection entry's value_kind when its value bytes are its image (of
  // at most kMaxImageBytes, object.h).
  static constexpr uint8_t kPackedInEntry = 1;

  struct Entry {
    Entry* next;        // hash chain
    int64_t deadline;   // monotonic ms, or kNoDeadline
    uint32_t ttl_slot;  // position in the TTL index, when deadline is set
    uint32_t key_len;
    uint32_t value_len;
    // When the key was last read or written: seconds of the monotonic clock
    // modulo 2^24, as Redis's LRU clock (it wraps after 194 days).
    uint32_t access_clock : 24;
    // Opaque to the keyspace: the Store's note of how a string was made.
    uint32_t value_kind : 4;
    // The value's type (ValueType).
    uint32_t value_type : 3;
    // The entry holds a fencing token after its value.
    uint32_t fenced : 1;

    std::string_view key() const { return {bytes(), key_len}; }
    ValueType type() const { return static_cast<ValueType>(value_type); }
    bool is_string() const { return value_type == 0; }
    // A string's bytes (is_string() only).
    std::string_view value() const { return {bytes() + key_len, value_len}; }
    // A collection held boxed (boxed() only).
    const Object* object() const { return object_ptr(); }
    // Whether a collection is boxed (its Object on the heap) rather than
    // packed in the entry as its image.
    bool boxed() const { return !is_string() && value_kind != kPackedInEntry; }
    bool packed_in_entry() const { return !is_string() && value_kind == kPackedInEntry; }
    // A packed collection's image (packed_in_entry() only).
    std::string_view image() const { return {bytes() + key_len, value_len}; }
    bool has_deadline() const { return deadline != kNoDeadline; }
    // The key's fencing token; 0: none.
    uint64_t token() const {
      if (!fenced) return 0;
      uint64_t t;
      std::memcpy(&t, bytes() + key_len + value_len, sizeof(t));
      return t;
    }

   private:
    friend class Keyspace;
    Object* object_ptr() const {
      Object* o;
      std::memcpy(&o, bytes() + key_len, sizeof(o));
      return o;
    }
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
  // A lookup counts as an access (OBJECT IDLETIME) unless `touch` is false,
  // as for Redis's LOOKUP_NOTOUCH (TYPE, TTL, OBJECT…).
  const Entry* Find(std::string_view key, int64_t now, bool touch = true);

  // The entry for `key`, expired or not (no lazy expiry, no listener).
  const Entry* Peek(std::string_view key) {
    Entry** slot = Locate(key, Hash(key));
    return slot != nullptr ? *slot : nullptr;
  }

  // Whether `key` is stored, expired or not (no lazy expiry, no listener).
  bool Contains(std::string_view key) { return Locate(key, Hash(key)) != nullptr; }

  // Prefetching (prefetch.h): hints to the memory, in steps a pipeline's
  // requests take in turn so that their misses overlap. None changes the
  // keyspace (no rehash step, no expiry, no access clock), so a hint that
  // turns out wrong costs a wasted load and nothing else.
  static uint64_t HashOf(std::string_view key) { return Hash(key); }
  // Step 1: the bucket `hash` falls in.
  void PrefetchBucket(uint64_t hash) const;
  // Step 2 (the bucket loaded): the first entry of its chain.
  void PrefetchChain(uint64_t hash) const;
  // Step 3: the entry for `key`, expired or not, read without side effects.
  const Entry* PeekQuiet(std::string_view key, uint64_t hash) const;

  // Set's `token` meaning "the token of the entry it replaces if the value
  // is the same, else none" (tokens are at most INT64_MAX: a RESP integer).
  static constexpr uint64_t kKeepTokenIfSame = UINT64_MAX;

  // Stores `value` under `key` with `deadline` (kNoDeadline for none),
  // replacing any previous value and deadline. When keep_deadline is true an
  // existing key keeps its deadline and `deadline` is ignored for it. The
  // entry's access clock is the last time the keyspace was given (Tick,
  // Find), its value_kind is `kind` (< 128), and its fencing token `token`
  // (0: none; kKeepTokenIfSame: see above). Returns the entry.
  const Entry* Set(std::string_view key, std::string_view value, int64_t deadline,
                   bool keep_deadline = false, uint8_t kind = 0, uint64_t token = kKeepTokenIfSame);
  // Stores the collection `value` under `key`, replacing any previous value
  // (and its token) and, unless keep_deadline, its deadline.
  const Entry* SetObject(std::string_view key, std::unique_ptr<Object> value, int64_t deadline,
                         bool keep_deadline = false);
  // Stores the collection of `type` whose image is `image` under `key`,
  // packed in the entry, replacing any previous value (and its token) and,
  // unless keep_deadline, its deadline. An image of the same length as the
  // one the key holds is written in place.
  const Entry* SetImage(std::string_view key, ValueType type, std::string_view image,
                        int64_t deadline, bool keep_deadline = false);
  // The boxed collection an entry of this keyspace holds, to change it (the
  // Store's appliers are the only callers, through types/value_ref.h).
  static Object* MutableObject(const Entry& e) { return e.object_ptr(); }
  // Gives the entry of `from` the name `to` (replacing any `to`), with its
  // value and deadline; it loses its fencing token (another name is another
  // lock). False if `from` is absent.
  bool Rename(std::string_view from, std::string_view to);

  // The current time, for the access clock of the entries written next.
  void Tick(int64_t now_ms) { access_clock_ = AccessClock(now_ms); }
  // Milliseconds since `e` was last accessed, at `now_ms` (Redis's
  // estimateObjectIdleTime: one-second resolution, modulo the clock's wrap).
  static int64_t IdleMs(const Entry& e, int64_t now_ms);
  // Bytes the allocator gave the entry (header, key and value in one block,
  // as malloc rounded it), plus its pointers in the bucket array and, for a
  // key with a deadline, the TTL index: the memory the key costs.
  static size_t AllocationOf(const Entry& e);

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
  // Its parts (MEMORY STATS): the entries (header, key, value), the hash
  // table's bucket arrays, the TTL index.
  size_t entry_bytes() const { return entry_bytes_; }
  size_t table_bytes() const {
    return (tables_[0].buckets.capacity() + tables_[1].buckets.capacity()) * sizeof(Entry*);
  }
  size_t ttl_index_bytes() const { return ttl_index_.capacity() * sizeof(Entry*); }
  // Entries moved from one table to the other by rehashing, ever: the work
  // growing step by step costs (a replay sizes its table up front instead).
  uint64_t rehash_moves() const { return rehash_moves_; }

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

  // The average remaining lease, in ms, of the keys that have one (INFO
  // keyspace's avg_ttl; 0 when none). O(keys with a TTL).
  int64_t AverageTtl(int64_t now) const {
    if (ttl_index_.empty()) return 0;
    long double sum = 0;
    size_t n = 0;
    for (const Entry* e : ttl_index_) {
      if (e->deadline > now) {
        sum += static_cast<long double>(e->deadline - now);
        ++n;
      }
    }
    return n == 0 ? 0 : static_cast<int64_t>(sum / n);
  }

  // Removes every key whose deadline has passed (now > deadline), without
  // telling the expiry listener (the end of a replay: the log already says
  // what these keys were). Returns how many.
  size_t EraseExpired(int64_t now);

  // While a log replays (no client waits on the loop), a growing table is
  // rehashed at once rather than a bucket per lookup: one pass over the
  // entries instead of every lookup probing two tables until it ends.
  // Switching it off resizes the table at once to what its keys need (a
  // table sized up front from an estimate that was high shrinks now, not
  // over thousands of cron ticks).
  void set_bulk_load(bool on);
  // Grows the table now to what `keys` keys need (a replay that expects
  // that many), so that it does not grow step by step as they arrive. A
  // table larger than needed shrinks again once under 1/8 full.
  void Reserve(size_t keys);

  // Moves some buckets of an ongoing rehash; called from the server's timer
  // so an idle server finishes resizing. Returns true while work remains.
  bool RehashStep(int buckets);

  // One step of a scan, Redis's dictScan: calls f(const Entry&) for the
  // entries of the bucket `cursor` names (and, while the table is being
  // resized, of the buckets of the larger table that bucket splits into),
  // expired ones included, and returns the next cursor; 0 when the walk is
  // complete. Start with 0. The cursor counts with its bits reversed, so the
  // buckets already visited stay visited when the table doubles or halves:
  // a key present for the whole walk is returned at least once. f must not
  // modify the keyspace.
  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& f) const {
    const Table* small = &tables_[0];
    const Table* large = &tables_[1];
    auto visit = [&](const Table& t, uint64_t v) {
      for (const Entry* e = t.buckets[v & t.mask()]; e != nullptr; e = e->next) f(*e);
    };
    // Sets the bits above the mask, then adds one to the reversed cursor:
    // the next bucket in reverse-binary order.
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
    // Then every bucket of the larger table that this small bucket expands
    // to: those whose low bits are the cursor's.
    do {
      visit(*large, cursor);
      cursor = advance(cursor, m1);
    } while (cursor & (m0 ^ m1));
    return cursor;
  }

  // A uniformly chosen bucket's random entry (expired ones included: the
  // caller decides), or nullptr when empty. Redis's dictGetRandomKey.
  const Entry* RandomEntry() const;

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
  static uint64_t ReverseBits(uint64_t v);
  static uint32_t AccessClock(int64_t now_ms) {
    return static_cast<uint32_t>((now_ms / 1000) & kAccessClockMax);
  }
  static constexpr uint32_t kAccessClockMax = (1u << 24) - 1;
  static Entry* NewEntry(std::string_view key, std::string_view value, uint64_t token);
  // A fresh entry for `key` in place of *slot (nullptr: a new key in the
  // table), keeping the old one's chain and deadline; the old one is freed.
  Entry* Replace(Entry** slot, Entry* e, uint64_t hash);
  // Bytes of an entry's block: header, key, value and token.
  static size_t BlockBytes(const Entry& e) {
    return sizeof(Entry) + e.key_len + e.value_len + (e.fenced ? sizeof(uint64_t) : 0);
  }
  static void FreeEntry(Entry* e);

  // The slot holding a pointer to the entry for `key` (so it can be replaced
  // or unlinked), or nullptr if absent.
  Entry** Locate(std::string_view key, uint64_t hash);
  // The same slot, found without a rehash step (Locate takes one first).
  Entry* const* Slot(std::string_view key, uint64_t hash) const;
  void Unlink(Entry** slot);
  void RemoveFromTtlIndex(Entry* e);
  void AddToTtlIndex(Entry* e);
  // Gives `e` the deadline `deadline` (kNoDeadline: none), entering or
  // leaving the TTL index as it gains or loses one.
  void SetLease(Entry* e, int64_t deadline);
  void ExpireEntry(Entry** slot);
  void MaybeResize();
  // Moves every bucket of an ongoing rehash now (loading: no client waits).
  void FinishRehash();
  void RehashSome(int buckets);
  bool rehashing() const { return !tables_[1].buckets.empty(); }

  Table tables_[2];
  size_t rehash_index_ = 0;  // next bucket of tables_[0] to move
  size_t size_ = 0;
  size_t entry_bytes_ = 0;
  std::vector<Entry*> ttl_index_;
  bool bulk_load_ = false;
  uint64_t rehash_moves_ = 0;
  size_t expire_cursor_ = 0;  // where the next active expiry cycle resumes
  uint32_t access_clock_ = 0;
  mutable std::mt19937_64 random_{std::random_device{}()};
  ExpiryListener on_expire_;
};

}  // namespace latch
