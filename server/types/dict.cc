#include "server/types/dict.h"

#include <malloc.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace latch {

namespace {

constexpr size_t kInitialBuckets = 4;

size_t NextPowerOfTwo(size_t n) {
  size_t p = kInitialBuckets;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

Dict::Dict() {
  tables_[0].buckets.assign(kInitialBuckets, nullptr);
}

Dict::~Dict() {
  Clear();
}

Dict::Dict(const Dict& other) : Dict() {
  other.ForEach([this](const Node& n) { Set(n.key(), n.value()); });
}

uint64_t Dict::Hash(std::string_view key) {
  return XXH3_64bits(key.data(), key.size());
}

uint64_t Dict::ReverseBits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}

Dict::Node* Dict::NewNode(std::string_view key, std::string_view value) {
  void* mem = std::malloc(sizeof(Node) + key.size() + value.size());
  if (mem == nullptr) throw std::bad_alloc();
  Node* n = static_cast<Node*>(mem);
  n->next = nullptr;
  n->key_len = static_cast<uint32_t>(key.size());
  n->value_len = static_cast<uint32_t>(value.size());
  if (!value.empty()) std::memcpy(n->bytes(), value.data(), value.size());
  if (!key.empty()) std::memcpy(n->bytes() + value.size(), key.data(), key.size());
  return n;
}

Dict::Node** Dict::Locate(std::string_view key, uint64_t hash) const {
  if (rehashing()) RehashSome(1);
  for (int t = 0; t < 2; ++t) {
    Table& table = tables_[t];
    if (table.buckets.empty()) break;
    Node** slot = &table.buckets[hash & table.mask()];
    for (; *slot != nullptr; slot = &(*slot)->next) {
      if ((*slot)->key() == key) return slot;
    }
    if (!rehashing()) break;
  }
  return nullptr;
}

void Dict::PrefetchBucket(uint64_t hash) const {
  for (const Table& t : tables_) {
    if (!t.buckets.empty()) __builtin_prefetch(&t.buckets[hash & t.mask()]);
  }
}

void Dict::PrefetchChain(uint64_t hash) const {
  for (const Table& t : tables_) {
    if (t.buckets.empty()) continue;
    if (const Node* n = t.buckets[hash & t.mask()]) {
      __builtin_prefetch(n);
      __builtin_prefetch(reinterpret_cast<const char*>(n) + 64);
    }
  }
}

const Dict::Node* Dict::Find(std::string_view key) const {
  Node** slot = Locate(key, Hash(key));
  return slot != nullptr ? *slot : nullptr;
}

Dict::Node* Dict::Find(std::string_view key) {
  Node** slot = Locate(key, Hash(key));
  return slot != nullptr ? *slot : nullptr;
}

std::pair<Dict::Node*, bool> Dict::Set(std::string_view key, std::string_view value) {
  const uint64_t hash = Hash(key);
  if (Node** slot = Locate(key, hash)) {
    Node* old = *slot;
    if (old->value_len == value.size()) {
      if (!value.empty()) std::memcpy(old->mutable_value(), value.data(), value.size());
      return {old, false};
    }
    Node* n = NewNode(key, value);
    n->next = old->next;
    *slot = n;
    node_bytes_ += malloc_usable_size(n);
    node_bytes_ -= malloc_usable_size(old);
    std::free(old);
    return {n, false};
  }
  MaybeResize();
  Node* n = NewNode(key, value);
  Table& table = rehashing() ? tables_[1] : tables_[0];
  Node*& head = table.buckets[hash & table.mask()];
  n->next = head;
  head = n;
  ++size_;
  node_bytes_ += malloc_usable_size(n);
  return {n, true};
}

bool Dict::Erase(std::string_view key) {
  Node** slot = Locate(key, Hash(key));
  if (slot == nullptr) return false;
  Node* n = *slot;
  *slot = n->next;
  node_bytes_ -= malloc_usable_size(n);
  std::free(n);
  --size_;
  MaybeResize();
  return true;
}

void Dict::Clear() {
  for (Table& t : tables_) {
    for (Node*& head : t.buckets) {
      while (head != nullptr) {
        Node* next = head->next;
        std::free(head);
        head = next;
      }
    }
  }
  tables_[0].buckets.assign(kInitialBuckets, nullptr);
  tables_[0].buckets.shrink_to_fit();
  tables_[1].buckets = std::vector<Node*>();
  rehash_index_ = 0;
  size_ = 0;
  node_bytes_ = 0;
}

const Dict::Node* Dict::Random(std::mt19937_64& rng) const {
  if (size_ == 0) return nullptr;
  const Node* head = nullptr;
  if (rehashing()) {
    // The old table's buckets below rehash_index_ were moved: skip them.
    const size_t old_size = tables_[0].buckets.size();
    const size_t total = old_size + tables_[1].buckets.size();
    while (head == nullptr) {
      size_t i = rehash_index_ + rng() % (total - rehash_index_);
      head = i >= old_size ? tables_[1].buckets[i - old_size] : tables_[0].buckets[i];
    }
  } else {
    while (head == nullptr) head = tables_[0].buckets[rng() & tables_[0].mask()];
  }
  size_t length = 0;
  for (const Node* n = head; n != nullptr; n = n->next) ++length;
  size_t pick = rng() % length;
  while (pick-- > 0) head = head->next;
  return head;
}

const Dict::Node* Dict::FairRandom(std::mt19937_64& rng) const {
  // dictGetSomeKeys: walk buckets from a random index of the larger table,
  // collecting every entry of each (both tables while rehashing, skipping
  // the old table's buckets already moved), jumping elsewhere after a run
  // of empty buckets; then pick one of the entries collected.
  constexpr size_t kWanted = 15;  // GETFAIR_NUM_ENTRIES
  if (size_ == 0) return nullptr;
  const size_t want = std::min(size_, kWanted);
  const Node* found[kWanted];
  size_t stored = 0;
  size_t steps = want * 10;
  const int tables = rehashing() ? 2 : 1;
  size_t mask = tables_[0].mask();
  if (tables == 2) mask = std::max(mask, tables_[1].mask());
  size_t i = rng() & mask;
  size_t empty_run = 0;
  while (stored < want && steps-- > 0) {
    for (int t = 0; t < tables && stored < want; ++t) {
      const Table& table = tables_[t];
      if (tables == 2 && t == 0 && i < rehash_index_) {
        // Moved already: nothing below rehash_index_ in the old table.
        if (i >= tables_[1].buckets.size()) {
          i = rehash_index_;
        } else {
          continue;
        }
      }
      if (i >= table.buckets.size()) continue;
      const Node* n = table.buckets[i];
      if (n == nullptr) {
        if (++empty_run >= 5 && empty_run > want) {
          i = rng() & mask;
          empty_run = 0;
        }
        continue;
      }
      empty_run = 0;
      for (; n != nullptr && stored < want; n = n->next) found[stored++] = n;
    }
    i = (i + 1) & mask;
  }
  if (stored == 0) return Random(rng);
  return found[rng() % stored];
}

size_t Dict::memory() const {
  return sizeof(Dict) + node_bytes_ +
         (tables_[0].buckets.capacity() + tables_[1].buckets.capacity()) * sizeof(Node*);
}

void Dict::MaybeResize() {
  if (rehashing()) return;
  const size_t buckets = tables_[0].buckets.size();
  size_t target = 0;
  if (size_ >= buckets) {
    target = NextPowerOfTwo(size_ * 2);  // grow at load factor 1
  } else if (buckets > kInitialBuckets && size_ < buckets / 8) {
    target = NextPowerOfTwo(size_ * 2);  // shrink when under 1/8 full
  }
  if (target == 0 || target == buckets) return;
  tables_[1].buckets.assign(target, nullptr);
  rehash_index_ = 0;
  RehashSome(1);
}

void Dict::RehashSome(int buckets) const {
  Table& from = tables_[0];
  Table& to = tables_[1];
  int empty_visits = buckets * 10;
  while (buckets > 0 && rehash_index_ < from.buckets.size()) {
    Node* n = from.buckets[rehash_index_];
    if (n == nullptr) {
      ++rehash_index_;
      if (--empty_visits == 0) return;
      continue;
    }
    while (n != nullptr) {
      Node* next = n->next;
      Node*& head = to.buckets[Hash(n->key()) & to.mask()];
      n->next = head;
      head = n;
      n = next;
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

}  // namespace latch
