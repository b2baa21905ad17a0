#include "server/keyspace.h"

#include <malloc.h>
#include <xxhash.h>

#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

namespace latch {

namespace {

constexpr uint32_t kNoSlot = UINT32_MAX;
constexpr size_t kInitialBuckets = 16;
// Redis's active expiry constants: keys sampled per round, and the share of
// expired keys in a sample above which another round runs at once.
constexpr size_t kSampleSize = 20;
constexpr size_t kAcceptableStalePercent = 10;
constexpr size_t kMinChecksPerCycle = 1000;

size_t NextPowerOfTwo(size_t n) {
  size_t p = kInitialBuckets;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

// The access clock and the value's kind live in what would be padding.
static_assert(sizeof(Keyspace::Entry) == 32, "the entry header grew");

Keyspace::Keyspace() {
  tables_[0].buckets.assign(kInitialBuckets, nullptr);
}

Keyspace::~Keyspace() {
  Clear();
}

uint64_t Keyspace::Hash(std::string_view key) {
  return XXH3_64bits(key.data(), key.size());
}

uint64_t Keyspace::ReverseBits(uint64_t v) {
  // Swap ever larger groups: bits, pairs, nibbles, bytes, then the bytes.
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}

int64_t Keyspace::IdleMs(const Entry& e, int64_t now_ms) {
  uint32_t now = AccessClock(now_ms);
  uint32_t then = e.access_clock;
  int64_t seconds = now >= then ? now - then : now + (kAccessClockMax - then);
  return seconds * 1000;
}

size_t Keyspace::AllocationOf(const Entry& e) {
  size_t bytes = malloc_usable_size(const_cast<Entry*>(&e)) + sizeof(Entry*);
  if (e.has_deadline()) bytes += sizeof(Entry*);
  if (e.boxed()) bytes += e.object()->memory();
  return bytes;
}

Keyspace::Entry* Keyspace::NewEntry(std::string_view key, std::string_view value, uint64_t token) {
  const size_t token_bytes = token != 0 ? sizeof(token) : 0;
  void* mem = std::malloc(sizeof(Entry) + key.size() + value.size() + token_bytes);
  if (mem == nullptr) throw std::bad_alloc();
  Entry* e = static_cast<Entry*>(mem);
  e->next = nullptr;
  e->deadline = kNoDeadline;
  e->ttl_slot = kNoSlot;
  e->key_len = static_cast<uint32_t>(key.size());
  e->value_len = static_cast<uint32_t>(value.size());
  e->access_clock = 0;
  e->value_kind = 0;
  e->value_type = 0;
  e->fenced = token != 0;
  if (!key.empty()) std::memcpy(e->bytes(), key.data(), key.size());
  if (!value.empty()) std::memcpy(e->bytes() + key.size(), value.data(), value.size());
  if (token != 0) std::memcpy(e->bytes() + key.size() + value.size(), &token, sizeof(token));
  return e;
}

void Keyspace::FreeEntry(Entry* e) {
  if (e->boxed()) delete e->object_ptr();
  std::free(e);
}

Keyspace::Entry* Keyspace::Replace(Entry** slot, Entry* e, uint64_t hash) {
  if (slot != nullptr) {
    Entry* old = *slot;
    e->next = old->next;
    e->deadline = old->deadline;
    e->ttl_slot = old->ttl_slot;
    if (old->has_deadline()) ttl_index_[old->ttl_slot] = e;
    entry_bytes_ += BlockBytes(*e) - BlockBytes(*old);
    *slot = e;
    FreeEntry(old);
    return e;
  }
  MaybeResize();
  Table& table = rehashing() ? tables_[1] : tables_[0];
  Entry*& head = table.buckets[hash & table.mask()];
  e->next = head;
  head = e;
  ++size_;
  entry_bytes_ += BlockBytes(*e);
  return e;
}

Keyspace::Entry** Keyspace::Locate(std::string_view key, uint64_t hash) {
  if (rehashing()) RehashSome(1);
  // (This keyspace is not const: the slot may be changed through.)
  return const_cast<Entry**>(Slot(key, hash));
}

Keyspace::Entry* const* Keyspace::Slot(std::string_view key, uint64_t hash) const {
  // Both tables while a rehash is on (the second is empty otherwise).
  for (const Table& t : tables_) {
    if (t.buckets.empty()) continue;
    Entry* const* slot = &t.buckets[hash & t.mask()];
    for (; *slot != nullptr; slot = &(*slot)->next) {
      if ((*slot)->key() == key) return slot;
    }
  }
  return nullptr;
}

void Keyspace::PrefetchBucket(uint64_t hash) const {
  for (const Table& t : tables_) {
    if (!t.buckets.empty()) __builtin_prefetch(&t.buckets[hash & t.mask()]);
  }
}

void Keyspace::PrefetchChain(uint64_t hash) const {
  for (const Table& t : tables_) {
    if (t.buckets.empty()) continue;
    if (const Entry* e = t.buckets[hash & t.mask()]) {
      // The header and the key, then what follows: a short value or a
      // small collection's image lies in the next line.
      __builtin_prefetch(e);
      __builtin_prefetch(reinterpret_cast<const char*>(e) + 64);
    }
  }
}

const Keyspace::Entry* Keyspace::PeekQuiet(std::string_view key, uint64_t hash) const {
  Entry* const* slot = Slot(key, hash);
  return slot != nullptr ? *slot : nullptr;
}

void Keyspace::AddToTtlIndex(Entry* e) {
  e->ttl_slot = static_cast<uint32_t>(ttl_index_.size());
  ttl_index_.push_back(e);
}

void Keyspace::SetLease(Entry* e, int64_t deadline) {
  if (e->has_deadline() && deadline == kNoDeadline) RemoveFromTtlIndex(e);
  if (!e->has_deadline() && deadline != kNoDeadline) AddToTtlIndex(e);
  e->deadline = deadline;
}

void Keyspace::RemoveFromTtlIndex(Entry* e) {
  // Swap with the last element so removal is O(1).
  uint32_t slot = e->ttl_slot;
  Entry* last = ttl_index_.back();
  ttl_index_[slot] = last;
  last->ttl_slot = slot;
  ttl_index_.pop_back();
  e->ttl_slot = kNoSlot;
}

void Keyspace::Unlink(Entry** slot) {
  Entry* e = *slot;
  *slot = e->next;
  if (e->has_deadline()) RemoveFromTtlIndex(e);
  entry_bytes_ -= BlockBytes(*e);
  --size_;
  FreeEntry(e);
}

void Keyspace::ExpireEntry(Entry** slot) {
  if (on_expire_) on_expire_((*slot)->key());
  Unlink(slot);
}

const Keyspace::Entry* Keyspace::Find(std::string_view key, int64_t now, bool touch) {
  Entry** slot = Locate(key, Hash(key));
  if (slot == nullptr) return nullptr;
  Entry* e = *slot;
  if (e->has_deadline() && now > e->deadline) {
    ExpireEntry(slot);
    MaybeResize();
    return nullptr;
  }
  if (touch) {
    // Written only when it changes (once a second at most per key): a
    // lookup then dirties no memory, which keeps reads cheap and spares the
    // pages a log rewrite's child shares copy-on-write.
    Tick(now);
    if (e->access_clock != access_clock_) e->access_clock = access_clock_;
  }
  return e;
}

const Keyspace::Entry* Keyspace::Set(std::string_view key, std::string_view value, int64_t deadline,
                                     bool keep_deadline, uint8_t kind, uint64_t token) {
  uint64_t hash = Hash(key);
  Entry** slot = Locate(key, hash);
  Entry* e;
  if (slot != nullptr) {
    Entry* old = *slot;
    if (keep_deadline) deadline = old->deadline;
    // The same value is the same holder: it keeps its token.
    if (token == kKeepTokenIfSame) {
      token = old->fenced && old->is_string() && old->value() == value ? old->token() : 0;
    }
    if (old->is_string() && old->value_len == value.size() && old->fenced == (token != 0)) {
      // Same length (a lock renewal rewrites the same token): in place.
      if (!value.empty()) std::memcpy(old->bytes() + old->key_len, value.data(), value.size());
      if (token != 0) {
        std::memcpy(old->bytes() + old->key_len + value.size(), &token, sizeof(token));
      }
      e = old;
    } else {
      e = Replace(slot, NewEntry(key, value, token), hash);
    }
  } else {
    if (token == kKeepTokenIfSame) token = 0;
    e = Replace(nullptr, NewEntry(key, value, token), hash);
  }
  SetLease(e, deadline);
  e->access_clock = access_clock_;
  e->value_kind = kind;
  return e;
}

const Keyspace::Entry* Keyspace::SetObject(std::string_view key, std::unique_ptr<Object> value,
                                           int64_t deadline, bool keep_deadline) {
  uint64_t hash = Hash(key);
  Entry** slot = Locate(key, hash);
  if (slot != nullptr && keep_deadline) deadline = (*slot)->deadline;
  // The entry's value bytes are the pointer; the entry owns what it points to.
  Object* raw = value.get();
  Entry* e = NewEntry(key, std::string_view(reinterpret_cast<const char*>(&raw), sizeof(raw)), 0);
  e->value_type = static_cast<uint32_t>(value->type());
  value.release();
  e = Replace(slot, e, hash);
  SetLease(e, deadline);
  e->access_clock = access_clock_;
  return e;
}

const Keyspace::Entry* Keyspace::SetImage(std::string_view key, ValueType type,
                                          std::string_view image, int64_t deadline,
                                          bool keep_deadline) {
  const uint64_t hash = Hash(key);
  Entry** slot = Locate(key, hash);
  if (slot != nullptr && keep_deadline) deadline = (*slot)->deadline;
  Entry* e;
  if (slot != nullptr && (*slot)->packed_in_entry() && (*slot)->value_len == image.size() &&
      (*slot)->type() == type) {
    // The same length (HINCRBY 1 → 2, a field's value replaced by one as
    // long): in place, as a lock renewal rewrites its token.
    e = *slot;
    if (!image.empty()) std::memcpy(e->bytes() + e->key_len, image.data(), image.size());
  } else {
    e = NewEntry(key, image, 0);
    e->value_type = static_cast<uint32_t>(type);
    e->value_kind = kPackedInEntry;
    e = Replace(slot, e, hash);
  }
  SetLease(e, deadline);
  e->access_clock = access_clock_;
  return e;
}

bool Keyspace::Rename(std::string_view from, std::string_view to) {
  Entry** src = Locate(from, Hash(from));
  if (src == nullptr) return false;
  if (from == to) return true;
  Entry* old = *src;
  const uint64_t hash = Hash(to);
  // The new entry takes the value bytes as they are (a collection's pointer
  // moves with them), without the token.
  Entry* e = NewEntry(to, std::string_view(old->bytes() + old->key_len, old->value_len), 0);
  e->value_type = old->value_type;
  e->value_kind = old->value_kind;
  e->access_clock = old->access_clock;
  const int64_t deadline = old->deadline;
  old->value_type = 0;  // the collection now belongs to the new entry
  Unlink(src);
  e = Replace(Locate(to, hash), e, hash);
  SetLease(e, deadline);
  MaybeResize();
  return true;
}

const Keyspace::Entry* Keyspace::RandomEntry() const {
  if (size_ == 0) return nullptr;
  // A random non-empty bucket, then a random entry of its chain. While
  // resizing, the buckets of the old table below rehash_index_ are empty
  // (moved): the draw skips them.
  const Entry* head = nullptr;
  if (rehashing()) {
    const size_t old_size = tables_[0].buckets.size();
    const size_t total = old_size + tables_[1].buckets.size();
    while (head == nullptr) {
      size_t i = rehash_index_ + random_() % (total - rehash_index_);
      head = i >= old_size ? tables_[1].buckets[i - old_size] : tables_[0].buckets[i];
    }
  } else {
    while (head == nullptr) head = tables_[0].buckets[random_() & tables_[0].mask()];
  }
  size_t length = 0;
  for (const Entry* e = head; e != nullptr; e = e->next) ++length;
  size_t pick = random_() % length;
  while (pick-- > 0) head = head->next;
  return head;
}

bool Keyspace::SetDeadline(std::string_view key, int64_t deadline) {
  Entry** slot = Locate(key, Hash(key));
  if (slot == nullptr) return false;
  Entry* e = *slot;
  SetLease(e, deadline);
  return true;
}

bool Keyspace::Erase(std::string_view key) {
  Entry** slot = Locate(key, Hash(key));
  if (slot == nullptr) return false;
  Unlink(slot);
  MaybeResize();
  return true;
}

void Keyspace::Clear() {
  for (Table& t : tables_) {
    for (Entry*& head : t.buckets) {
      while (head != nullptr) {
        Entry* next = head->next;
        FreeEntry(head);
        head = next;
      }
    }
  }
  tables_[0].buckets.assign(kInitialBuckets, nullptr);
  tables_[0].buckets.shrink_to_fit();
  // Fresh vectors, so the memory is given back (`= {}` would keep capacity).
  tables_[1].buckets = std::vector<Entry*>();
  rehash_index_ = 0;
  size_ = 0;
  entry_bytes_ = 0;
  ttl_index_ = std::vector<Entry*>();
}

size_t Keyspace::memory_bytes() const {
  return entry_bytes_ +
         (tables_[0].buckets.capacity() + tables_[1].buckets.capacity()) * sizeof(Entry*) +
         ttl_index_.capacity() * sizeof(Entry*);
}

void Keyspace::MaybeResize() {
  if (rehashing()) return;
  size_t buckets = tables_[0].buckets.size();
  size_t target = 0;
  if (size_ >= buckets) {
    target = NextPowerOfTwo(size_ * 2);  // grow at load factor 1
  } else if (buckets > kInitialBuckets && size_ < buckets / 8 && !bulk_load_) {
    // Shrink when under 1/8 full (not while a replay fills a table it sized
    // up front: after it, if the keys did not come).
    target = NextPowerOfTwo(size_ * 2);
  }
  if (target == 0 || target == buckets) return;
  tables_[1].buckets.assign(target, nullptr);
  rehash_index_ = 0;
  if (bulk_load_) {
    FinishRehash();
  }
}

void Keyspace::RehashSome(int buckets) {
  Table& from = tables_[0];
  Table& to = tables_[1];
  // Visit at most ten empty buckets per bucket moved, like Redis, so one call
  // stays cheap even in a sparse table.
  int empty_visits = buckets * 10;
  while (buckets > 0 && rehash_index_ < from.buckets.size()) {
    Entry* e = from.buckets[rehash_index_];
    if (e == nullptr) {
      ++rehash_index_;
      if (--empty_visits == 0) return;
      continue;
    }
    while (e != nullptr) {
      Entry* next = e->next;
      Entry*& head = to.buckets[Hash(e->key()) & to.mask()];
      e->next = head;
      head = e;
      e = next;
      ++rehash_moves_;
    }
    from.buckets[rehash_index_] = nullptr;
    ++rehash_index_;
    --buckets;
  }
  if (rehash_index_ >= from.buckets.size()) {
    from.buckets = std::move(to.buckets);
    to.buckets = {};
    rehash_index_ = 0;
  }
}

void Keyspace::FinishRehash() {
  while (rehashing()) RehashSome(1 << 16);
}

void Keyspace::set_bulk_load(bool on) {
  if (on || !bulk_load_) {
    bulk_load_ = on;
    return;
  }
  bulk_load_ = false;
  FinishRehash();
  // The size growing key by key would have reached (it doubles when full).
  const size_t right =
      size_ == 0 ? kInitialBuckets : std::max(kInitialBuckets, std::bit_floor(size_) * 2);
  if (tables_[0].buckets.size() <= right) return;
  tables_[1].buckets.assign(right, nullptr);
  rehash_index_ = 0;
  FinishRehash();
}

void Keyspace::Reserve(size_t keys) {
  FinishRehash();
  // The power of two that holds `keys` (an estimate) with the table at most
  // full, less 1/16 of slack: an estimate a little high must not make the
  // table twice too large for good; if more keys come, it grows as usual.
  if (keys < kInitialBuckets) return;
  const size_t target = std::bit_ceil(keys - keys / 16);
  if (target <= tables_[0].buckets.size()) return;
  tables_[1].buckets.assign(target, nullptr);
  rehash_index_ = 0;
  FinishRehash();
}

bool Keyspace::RehashStep(int buckets) {
  if (!rehashing()) MaybeResize();
  if (!rehashing()) return false;
  RehashSome(buckets);
  return rehashing();
}

size_t Keyspace::EraseExpired(int64_t now) {
  size_t erased = 0;
  for (size_t i = 0; i < ttl_index_.size();) {
    Entry* e = ttl_index_[i];
    if (now > e->deadline) {
      // The last entry of the index moves into slot i: look at it next.
      Unlink(Locate(e->key(), Hash(e->key())));
      ++erased;
    } else {
      ++i;
    }
  }
  if (erased > 0) MaybeResize();
  return erased;
}

size_t Keyspace::ActiveExpireCycle(int64_t now, int64_t budget_us) {
  // Sweeps the TTL index with a cursor that persists across cycles, so every
  // key with a TTL is checked within a bounded number of cycles (a random
  // sample can miss the last few expired keys among many live ones for a long
  // time). Like Redis, work goes in rounds of kSampleSize keys and continues
  // while a round finds many expired keys, within the time budget; each cycle
  // also covers at least kMinChecksPerCycle keys (or the whole index).
  using SteadyClock = std::chrono::steady_clock;
  const auto start = SteadyClock::now();
  size_t total = 0, checked = 0;
  for (int round = 1; !ttl_index_.empty(); ++round) {
    size_t sampled = 0, expired = 0;
    size_t per_round = std::min(kSampleSize, ttl_index_.size());
    for (; sampled < per_round && !ttl_index_.empty(); ++sampled) {
      if (expire_cursor_ >= ttl_index_.size()) expire_cursor_ = 0;
      Entry* e = ttl_index_[expire_cursor_];
      if (now > e->deadline) {
        // The last entry of the index moves into this slot: look at it next.
        ExpireEntry(Locate(e->key(), Hash(e->key())));
        ++expired;
      } else {
        ++expire_cursor_;
      }
    }
    checked += sampled;
    total += expired;
    bool few_stale = expired * 100 <= sampled * kAcceptableStalePercent;
    if (few_stale && checked >= std::min(kMinChecksPerCycle, ttl_index_.size())) break;
    if (round % 16 == 0) {
      auto elapsed =
          std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start);
      if (elapsed.count() >= budget_us) break;
    }
  }
  if (total > 0) MaybeResize();
  return total;
}

}  // namespace latch
