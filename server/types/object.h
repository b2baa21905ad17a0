// The value model: what a key holds. A string lives in the keyspace entry
// itself (keyspace.h); a hash, set, sorted set or list is an Object the entry
// owns through a pointer, so a string lock costs exactly what it did before
// other types existed.
//
// Each type is one class in server/types/ (hash.h, set.h, zset.h, list.h):
// its data structure with Redis's encodings (a compact one while small, a
// table or skiplist once large, named as OBJECT ENCODING names them), the
// reads its commands need, and the *appliers* of its log records
// (record_kinds.h): the one code that changes it, live and in replay
// (Store::Apply, Store::Applier). A command family never mutates an Object
// directly; it reads, decides, and hands the Store an effect.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace latch {

namespace aof {
class Batch;
}
class Dict;

// TYPE's answer.
enum class ValueType : uint8_t { kString = 0, kHash = 1, kSet = 2, kZSet = 3, kList = 4 };

constexpr std::string_view TypeName(ValueType t) {
  switch (t) {
    case ValueType::kString:
      return "string";
    case ValueType::kHash:
      return "hash";
    case ValueType::kSet:
      return "set";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kList:
      return "list";
  }
  return "none";
}

// When a collection leaves its compact encoding (Redis 7.0's settings and
// defaults; CONFIG SET changes them for later writes, as in Redis). A value
// never goes back to the compact encoding once converted, as in Redis.
struct EncodingLimits {
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;
  int64_t set_max_intset_entries = 512;
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;
  // Per quicklist node: > 0 entries, -1..-5 bytes (4, 8, 16, 32, 64 kb).
  int64_t list_max_listpack_size = -2;
};

// What applying one record to a collection did: the count its command
// replies (fields added, members removed…), whether the keyspace changed at
// all (a record that changed nothing is not logged), and, in replay, why a
// record could not apply (an HSET on a key that holds a list: a damaged log).
struct Applied {
  int64_t count = 0;
  bool changed = false;
  std::string error;
};

// The largest image of a small hash, set or sorted set that its keyspace
// entry holds in place of a pointer to its Object (keyspace.h, "packed in
// the entry"): past it the collection is boxed, so that changing one element
// never copies more than this.
inline constexpr size_t kMaxImageBytes = 1024;

// A hash, set, sorted set or list.
class Object {
 public:
  virtual ~Object() = default;
  virtual ValueType type() const = 0;
  // Elements: fields, members or items (never 0: an empty collection is no
  // key at all, as in Redis).
  virtual size_t size() const = 0;
  // Bytes the value holds (MEMORY USAGE, INFO): its allocations as the
  // allocator rounds them, where the structure knows them.
  virtual size_t memory() const = 0;
  // OBJECT ENCODING: "listpack", "hashtable", "intset", "skiplist",
  // "quicklist".
  virtual std::string_view encoding() const = 0;
  // The hash table that finds an element by its field or member, when the
  // encoding has one ("hashtable", "skiplist"); nullptr otherwise. Only the
  // pipeline prefetch (server/prefetch.h) asks, to warm a lookup to come.
  virtual const Dict* members() const { return nullptr; }
  // A deep copy (COPY).
  virtual std::unique_ptr<Object> Clone() const = 0;
  // The same type and the same contents (elements, their order where the
  // type has one, scores), whatever the encodings: what a replay of the log
  // must rebuild (tests/unit/replay_check.h).
  virtual bool Equals(const Object& other) const = 0;
  // The records that rebuild this value under `key` from nothing (a log
  // rewrite, COPY, MOVE): HSET / SADD / ZADD / RPUSH in batches of at most
  // 64 elements each, as Redis's rewrite writes them.
  virtual void WriteRecords(std::string_view key, aof::Batch& out) const = 0;

 protected:
  Object() = default;
  Object(const Object&) = default;
  Object& operator=(const Object&) = default;
};

}  // namespace latch
