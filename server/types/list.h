// ListValue: a list, as Redis 7.0 keeps one — a quicklist.
//
// Why a quicklist. A list must push and pop at both ends in O(1) and stay
// small in memory. A linked list of elements costs two pointers and an
// allocation per element; one packed buffer costs a memmove of the whole list
// per push at the head. Redis's answer, kept here: a doubly linked list of
// *nodes*, each a PackedList (types/packed.h, Redis's listpack) of a bounded
// size, so a push touches one small buffer and an element costs its bytes
// plus two or three.
//
// Node sizes follow `list-max-listpack-size` (EncodingLimits), as in Redis:
//  - negative, -1 … -5: a node holds at most 4, 8 (the default, -2), 16, 32
//    or 64 kb of elements;
//  - positive: at most that many elements per node (and never more than
//    8 kb, Redis's safety limit, unless one element is larger).
// An element of at least the "packed threshold" (1 GB by default; DEBUG
// QUICKLIST-PACKED-THRESHOLD changes it, as in Redis) gets a node of its own
// (Redis's "plain" node), never shared nor merged.
// `list-compress-depth` is accepted (CONFIG SET/GET) and not applied: latch
// never compresses interior nodes (their LZF compression saves memory on
// long lists of repetitive data, at a CPU cost; it changes no reply).
//
// Complexity, as Redis documents it: push and pop at either end O(1); the
// element at an index O(N) in the number of nodes walked from the nearer
// end (LINDEX, LSET), a range O(S+N); LINSERT, LREM, LPOS walk from an end.
//
// OBJECT ENCODING is "quicklist" for every list (Redis 7.0 has no other).
//
// Only the appliers below change a ListValue (Store::Apply runs them, live
// and in replay); commands read through the const methods.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/types/object.h"
#include "server/types/packed.h"

namespace latch {

namespace aof {
struct Record;
}
class Keyspace;

class ListValue final : public Object {
  struct Node;

 public:
  static constexpr ValueType kType = ValueType::kList;
  enum class End { kHead, kTail };

  ListValue() = default;
  ~ListValue() override;
  ListValue(const ListValue& other);
  ListValue& operator=(const ListValue&) = delete;

  // ---- Object
  ValueType type() const override { return kType; }
  size_t size() const override { return count_; }
  size_t memory() const override;
  std::string_view encoding() const override { return "quicklist"; }
  std::unique_ptr<Object> Clone() const override;
  bool Equals(const Object& other) const override;
  void WriteRecords(std::string_view key, aof::Batch& out) const override;

  // ---- reading
  // A position in the list: a node and an element's offset in it.
  class Cursor {
   public:
    bool valid() const { return node_ != nullptr; }
    std::string_view value() const;
    void Next();  // toward the tail (invalid past it)
    void Prev();  // toward the head (invalid past it)

   private:
    friend class ListValue;
    const Node* node_ = nullptr;
    size_t pos_ = 0;
  };
  // The element at `index` (0 the head, -1 the tail), walking from the
  // nearer end; invalid when out of range.
  Cursor At(int64_t index) const;
  Cursor Head() const { return At(0); }
  Cursor Tail() const { return At(-1); }
  // Nodes (tests and MEMORY USAGE's reader).
  size_t nodes() const { return nodes_; }

  // ---- changing (the appliers' tools)
  // `fill` is list-max-listpack-size.
  void Push(End end, std::string_view value, int64_t fill);
  // Removes `n` elements from `end` (at most size()).
  void Pop(End end, size_t n);
  // Replaces element `index`; false when out of range.
  bool Set(int64_t index, std::string_view value, int64_t fill);
  // Inserts `value` before (or after) the first element equal to `pivot`,
  // from the head; false when there is none.
  bool Insert(std::string_view pivot, std::string_view value, bool after, int64_t fill);
  // Removes up to |count| elements equal to `value` (all when count is 0),
  // from the head (count >= 0) or the tail (count < 0). Returns how many.
  size_t Remove(std::string_view value, int64_t count);

  // The element size at which an element gets a node of its own (Redis's
  // packed_threshold: DEBUG QUICKLIST-PACKED-THRESHOLD). Process-wide, as in
  // Redis; 0 restores the default. Returns false for a size Redis refuses
  // (4 GB, or within 1 MB of it).
  static bool SetPackedThreshold(uint64_t bytes);
  static size_t packed_threshold();

 private:
  // The node and offset of element `index` (0 <= index < size()).
  Cursor Locate(size_t index) const;
  Node* NewNode(Node* after_or_before, bool after);
  void Unlink(Node* n);
  // Inserts `value` next to the element at `at` (before, or after).
  void InsertAt(Cursor at, std::string_view value, bool after, int64_t fill);
  // Removes the element at `at`; `at` then names the element that followed
  // it (toward the tail when `forward`, else the one before), or is invalid.
  void EraseAt(Cursor& at, bool forward);
  // Splits `n` after element offset `pos` (after) or before it: the part
  // beyond goes to a new node next to `n`, which is returned.
  Node* Split(Node* n, size_t pos, bool after);
  // Merges `n` with a neighbour when both fit in one node (after a split).
  void MergeAround(Node* n, int64_t fill);
  bool AllowInsert(const Node* n, size_t len, int64_t fill) const;
  static bool IsPlain(const Node* n);

  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t count_ = 0;
  size_t nodes_ = 0;
};

// ---- the appliers of the list records (record_kinds.h), live and in replay.
// Each creates the key when a push needs it, deletes it when the list
// becomes empty, answers `error` when the key holds another type (only a
// damaged log can do that) or the record cannot apply.
// RPUSH / LPUSH key element [element ...]: count is the new length.
Applied ApplyListPush(Keyspace& ks, const aof::Record& r, ListValue::End end,
                      const EncodingLimits& limits);
// LPOP / RPOP key count: count is how many were removed.
Applied ApplyListPop(Keyspace& ks, const aof::Record& r, ListValue::End end);
// LSET key index element.
Applied ApplyListSet(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits);
// LINSERT key BEFORE|AFTER pivot element: count is the new length, or -1
// when the pivot is absent (nothing changed).
Applied ApplyListInsert(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits);
// LREM key count element: count is how many were removed.
Applied ApplyListRemove(Keyspace& ks, const aof::Record& r);
// LTRIM key start stop.
Applied ApplyListTrim(Keyspace& ks, const aof::Record& r);

// Redis's LRANGE/LTRIM index arithmetic: the first and last positions of
// [start, stop] in a list of `len` (negative from the end), or nullopt when
// the range is empty.
std::optional<std::pair<size_t, size_t>> ListRange(int64_t start, int64_t stop, size_t len);

}  // namespace latch
