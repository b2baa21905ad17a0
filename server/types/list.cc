#include "server/types/list.h"

#include <malloc.h>

#include <algorithm>
#include <vector>

#include "log/record.h"
#include "protocol/text.h"
#include "server/keyspace.h"

namespace latch {

// One node: a packed run of elements, linked to its neighbours (two
// pointers and the PackedList: nothing else, so that a small list's one node
// stays in a small allocation).
struct ListValue::Node {
  Node* prev = nullptr;
  Node* next = nullptr;
  PackedList items;
};

namespace {

// Redis's node size levels for a negative fill (-1 … -5), its safety limit
// for a positive one, and its estimate of an element's overhead.
constexpr size_t kSizeLevels[] = {4096, 8192, 16384, 32768, 65536};
constexpr size_t kSafetyLimit = 8192;
constexpr size_t kEstimateOverhead = 8;
// A listpack's own header and end byte, which Redis counts in a node's size.
constexpr size_t kListpackFrame = 7;
constexpr int64_t kFillMax = (1 << 15) - 1;

size_t g_packed_threshold = size_t{1} << 30;

int64_t ClampFill(int64_t fill) {
  return std::clamp<int64_t>(fill, -5, kFillMax);
}

bool IsLarge(size_t len) {
  return len >= g_packed_threshold;
}

}  // namespace

// A "plain" node: the one element of its node, as large as the packed
// threshold (Redis's QUICKLIST_NODE_CONTAINER_PLAIN). Nothing is inserted
// into it nor merged with it. (Told by its size rather than a flag: a node
// stays two pointers and its PackedList.)
bool ListValue::IsPlain(const Node* n) {
  return n->items.size() == 1 && n->items.bytes() >= g_packed_threshold;
}

namespace {}  // namespace

bool ListValue::SetPackedThreshold(uint64_t bytes) {
  // Redis's rules: nothing at or near 4 GB; 0 restores the default.
  if (bytes > (uint64_t{1} << 32) - (1 << 20)) return false;
  g_packed_threshold = bytes == 0 ? size_t{1} << 30 : static_cast<size_t>(bytes);
  return true;
}

size_t ListValue::packed_threshold() {
  return g_packed_threshold;
}

// ---------------------------------------------------------------- cursor

std::string_view ListValue::Cursor::value() const {
  return node_->items.At(pos_);
}

void ListValue::Cursor::Next() {
  pos_ = node_->items.Next(pos_);
  if (pos_ == node_->items.end()) {
    node_ = node_->next;
    pos_ = 0;
  }
}

void ListValue::Cursor::Prev() {
  if (pos_ == node_->items.begin()) {
    node_ = node_->prev;
    if (node_ != nullptr) pos_ = node_->items.Prev(node_->items.end());
    return;
  }
  pos_ = node_->items.Prev(pos_);
}

// ---------------------------------------------------------------- the value

ListValue::~ListValue() {
  for (Node* n = head_; n != nullptr;) {
    Node* next = n->next;
    delete n;
    n = next;
  }
}

ListValue::ListValue(const ListValue& other) : Object(other) {
  for (const Node* n = other.head_; n != nullptr; n = n->next) {
    Node* copy = NewNode(tail_, true);
    copy->items = n->items;
    copy->items.Shrink();
  }
  count_ = other.count_;
}

std::unique_ptr<Object> ListValue::Clone() const {
  return std::make_unique<ListValue>(*this);
}

size_t ListValue::memory() const {
  size_t bytes = malloc_usable_size(const_cast<ListValue*>(this));
  for (const Node* n = head_; n != nullptr; n = n->next) {
    bytes += malloc_usable_size(const_cast<Node*>(n)) + n->items.capacity();
  }
  return bytes;
}

bool ListValue::Equals(const Object& other) const {
  if (other.type() != kType || other.size() != size()) return false;
  const auto& o = static_cast<const ListValue&>(other);
  for (Cursor a = Head(), b = o.Head(); a.valid(); a.Next(), b.Next()) {
    if (!b.valid() || a.value() != b.value()) return false;
  }
  return true;
}

void ListValue::WriteRecords(std::string_view key, aof::Batch& out) const {
  // RPUSH key e1 … e64, as Redis's rewrite batches a list.
  std::vector<std::string_view> batch;
  batch.reserve(64);
  for (Cursor c = Head(); c.valid(); c.Next()) {
    batch.push_back(c.value());
    if (batch.size() == 64) {
      out.Append(aof::Op::kRPush, key, batch);
      batch.clear();
    }
  }
  if (!batch.empty()) out.Append(aof::Op::kRPush, key, batch);
}

ListValue::Cursor ListValue::Locate(size_t index) const {
  Cursor c;
  if (index < count_ / 2) {
    const Node* n = head_;
    while (index >= n->items.size()) {
      index -= n->items.size();
      n = n->next;
    }
    c.node_ = n;
    c.pos_ = n->items.Seek(static_cast<int64_t>(index));
    return c;
  }
  size_t from_end = count_ - 1 - index;  // 0: the tail
  const Node* n = tail_;
  while (from_end >= n->items.size()) {
    from_end -= n->items.size();
    n = n->prev;
  }
  c.node_ = n;
  c.pos_ = n->items.Seek(-1 - static_cast<int64_t>(from_end));
  return c;
}

ListValue::Cursor ListValue::At(int64_t index) const {
  const auto n = static_cast<int64_t>(count_);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return Cursor{};
  return Locate(static_cast<size_t>(index));
}

// ---------------------------------------------------------------- nodes

ListValue::Node* ListValue::NewNode(Node* ref, bool after) {
  Node* n = new Node;
  ++nodes_;
  if (ref == nullptr) {
    // The first node (or one at an end of an empty side).
    if (head_ == nullptr) {
      head_ = tail_ = n;
    } else if (after) {
      n->prev = tail_;
      tail_->next = n;
      tail_ = n;
    } else {
      n->next = head_;
      head_->prev = n;
      head_ = n;
    }
    return n;
  }
  if (after) {
    n->prev = ref;
    n->next = ref->next;
    if (ref->next != nullptr) ref->next->prev = n;
    ref->next = n;
    if (tail_ == ref) tail_ = n;
  } else {
    n->next = ref;
    n->prev = ref->prev;
    if (ref->prev != nullptr) ref->prev->next = n;
    ref->prev = n;
    if (head_ == ref) head_ = n;
  }
  // The node it was put next to is full: it takes no more pushes at this
  // end, so it gives back what its buffer's doubling left unused.
  ref->items.Shrink();
  return n;
}

void ListValue::Unlink(Node* n) {
  if (n->prev != nullptr) n->prev->next = n->next;
  if (n->next != nullptr) n->next->prev = n->prev;
  if (head_ == n) head_ = n->next;
  if (tail_ == n) tail_ = n->prev;
  delete n;
  --nodes_;
}

bool ListValue::AllowInsert(const Node* n, size_t len, int64_t fill) const {
  if (n == nullptr || IsPlain(n) || IsLarge(len)) return false;
  // Redis's estimate of the node's size with one more element.
  const size_t new_sz = n->items.bytes() + kListpackFrame + len + kEstimateOverhead;
  if (fill < 0) return new_sz <= kSizeLevels[-fill - 1];
  if (new_sz > kSafetyLimit) return false;
  return static_cast<int64_t>(n->items.size()) < fill;
}

ListValue::Node* ListValue::Split(Node* n, size_t pos, bool after) {
  // after: n keeps the elements up to the one at pos, the new node (after
  // n) takes the rest. Before: the new node (before n) takes the elements
  // ahead of pos, n keeps the rest.
  Node* m = NewNode(n, after);
  if (after) {
    const size_t from = n->items.Next(pos);
    for (size_t p = from; p < n->items.end(); p = n->items.Next(p)) {
      m->items.PushBack(n->items.At(p));
    }
    n->items.Erase(from, n->items.size());
  } else {
    size_t moved = 0;
    for (size_t p = n->items.begin(); p < pos; p = n->items.Next(p)) {
      m->items.PushBack(n->items.At(p));
      ++moved;
    }
    n->items.Erase(n->items.begin(), moved);
  }
  n->items.Shrink();
  return m;
}

void ListValue::MergeAround(Node* n, int64_t fill) {
  // Redis's test: the two listpacks would fit in one node.
  auto fits = [&](const Node* a, const Node* b) {
    if (a == nullptr || b == nullptr || IsPlain(a) || IsPlain(b)) return false;
    const size_t merged = a->items.bytes() + b->items.bytes() + kListpackFrame;
    if (fill < 0) return merged <= kSizeLevels[-fill - 1];
    if (merged > kSafetyLimit) return false;
    return static_cast<int64_t>(a->items.size() + b->items.size()) <= fill;
  };
  auto merge = [&](Node* a, Node* b) {  // b into a (b follows a)
    for (size_t p = b->items.begin(); p < b->items.end(); p = b->items.Next(p)) {
      a->items.PushBack(b->items.At(p));
    }
    Unlink(b);
  };
  if (fits(n->prev, n)) {
    Node* prev = n->prev;
    merge(prev, n);
    n = prev;
  }
  if (fits(n, n->next)) merge(n, n->next);
}

// ---------------------------------------------------------------- changes

void ListValue::Push(End end, std::string_view value, int64_t fill) {
  fill = ClampFill(fill);
  const bool at_tail = end == End::kTail;
  Node* n = at_tail ? tail_ : head_;
  if (IsLarge(value.size())) {
    n = NewNode(n, at_tail);  // a node of its own
  } else if (!AllowInsert(n, value.size(), fill)) {
    n = NewNode(n, at_tail);
  }
  if (at_tail) {
    n->items.PushBack(value);
  } else {
    n->items.PushFront(value);
  }
  ++count_;
}

void ListValue::Pop(End end, size_t n) {
  n = std::min(n, count_);
  while (n > 0) {
    Node* node = end == End::kHead ? head_ : tail_;
    const size_t here = node->items.size();
    if (n >= here) {
      count_ -= here;
      n -= here;
      Unlink(node);
      continue;
    }
    if (end == End::kHead) {
      node->items.Erase(node->items.begin(), n);
    } else {
      node->items.Erase(node->items.Seek(-static_cast<int64_t>(n)), n);
    }
    count_ -= n;
    n = 0;
    if (node->items.capacity() > 2 * node->items.bytes() + 64) node->items.Shrink();
  }
}

void ListValue::InsertAt(Cursor at, std::string_view value, bool after, int64_t fill) {
  Node* n = const_cast<Node*>(at.node_);
  const size_t pos = at.pos_;
  const bool at_node_tail = after && n->items.Next(pos) == n->items.end();
  const bool at_node_head = !after && pos == n->items.begin();
  ++count_;
  if (IsLarge(value.size())) {
    // A node of its own: next to n when the element goes at n's edge, else
    // between the two halves of n.
    if (!IsPlain(n) && !at_node_tail && !at_node_head) Split(n, pos, after);
    NewNode(n, after)->items.PushBack(value);
    return;
  }
  if (AllowInsert(n, value.size(), fill)) {
    n->items.Insert(after ? n->items.Next(pos) : pos, value);
    return;
  }
  if (at_node_tail && AllowInsert(n->next, value.size(), fill)) {
    n->next->items.PushFront(value);
    return;
  }
  if (at_node_head && AllowInsert(n->prev, value.size(), fill)) {
    n->prev->items.PushBack(value);
    return;
  }
  if (at_node_tail || at_node_head || IsPlain(n)) {
    NewNode(n, after)->items.PushBack(value);
    return;
  }
  // n is full and the element goes inside it: split, and put the element
  // at the split's edge.
  Node* m = Split(n, pos, after);
  if (after) {
    m->items.PushFront(value);
  } else {
    m->items.PushBack(value);
  }
  MergeAround(m, fill);
}

void ListValue::EraseAt(Cursor& at, bool forward) {
  Node* n = const_cast<Node*>(at.node_);
  size_t pos = n->items.Erase(at.pos_, 1);
  --count_;
  if (n->items.empty()) {
    Node* next = forward ? n->next : n->prev;
    Unlink(n);
    at.node_ = next;
    if (next != nullptr) at.pos_ = forward ? 0 : next->items.Prev(next->items.end());
    return;
  }
  if (forward) {
    if (pos == n->items.end()) {
      at.node_ = n->next;
      at.pos_ = 0;
    } else {
      at.pos_ = pos;
    }
  } else if (pos == n->items.begin()) {
    at.node_ = n->prev;
    if (n->prev != nullptr) at.pos_ = n->prev->items.Prev(n->prev->items.end());
  } else {
    at.pos_ = n->items.Prev(pos);
  }
}

bool ListValue::Set(int64_t index, std::string_view value, int64_t fill) {
  fill = ClampFill(fill);
  Cursor c = At(index);
  if (!c.valid()) return false;
  if (index < 0) index += static_cast<int64_t>(count_);
  Node* n = const_cast<Node*>(c.node_);
  if (!IsPlain(n) && !IsLarge(value.size())) {
    n->items.Replace(c.pos_, value);
    return true;
  }
  // A plain node, or a large element: the old element goes and the new one
  // takes its place in a node that suits it.
  EraseAt(c, true);
  if (static_cast<size_t>(index) == count_) {
    Push(End::kTail, value, fill);
  } else {
    InsertAt(Locate(static_cast<size_t>(index)), value, false, fill);
  }
  return true;
}

bool ListValue::Insert(std::string_view pivot, std::string_view value, bool after, int64_t fill) {
  for (Cursor c = Head(); c.valid(); c.Next()) {
    if (c.value() == pivot) {
      InsertAt(c, value, after, ClampFill(fill));
      return true;
    }
  }
  return false;
}

size_t ListValue::Remove(std::string_view value, int64_t count) {
  const bool forward = count >= 0;
  const uint64_t limit =
      count == INT64_MIN ? uint64_t{1} << 63 : static_cast<uint64_t>(count < 0 ? -count : count);
  size_t removed = 0;
  Cursor c = forward ? Head() : Tail();
  while (c.valid()) {
    if (c.value() == value) {
      EraseAt(c, forward);
      ++removed;
      if (limit != 0 && removed == limit) break;
    } else if (forward) {
      c.Next();
    } else {
      c.Prev();
    }
  }
  return removed;
}

std::optional<std::pair<size_t, size_t>> ListRange(int64_t start, int64_t stop, size_t len) {
  const auto n = static_cast<int64_t>(len);
  if (start < 0) start = n + start;
  if (stop < 0) stop = n + stop;
  if (start < 0) start = 0;
  // start >= 0 now, so this is also true when stop < 0.
  if (start > stop || start >= n) return std::nullopt;
  if (stop >= n) stop = n - 1;
  return std::make_pair(static_cast<size_t>(start), static_cast<size_t>(stop));
}

// ---------------------------------------------------------------- appliers

namespace {

constexpr std::string_view kNotAList = "a list record on a key that holds another type";

// The list at r.key: *out the value (nullptr when absent); false with the
// error when the key holds another type.
bool Existing(Keyspace& ks, const aof::Record& r, ListValue** out, Applied* a) {
  const Keyspace::Entry* e = ks.Peek(r.key);
  *out = nullptr;
  if (e == nullptr) return true;
  if (e->type() != ValueType::kList) {
    a->error = std::string(kNotAList);
    return false;
  }
  *out = static_cast<ListValue*>(Keyspace::MutableObject(*e));
  return true;
}

// An emptied list is no key at all.
void DropIfEmpty(Keyspace& ks, const aof::Record& r, const ListValue* l) {
  if (l->size() == 0) ks.Erase(r.key);
}

}  // namespace

Applied ApplyListPush(Keyspace& ks, const aof::Record& r, ListValue::End end,
                      const EncodingLimits& limits) {
  Applied a;
  ListValue* l;
  if (!Existing(ks, r, &l, &a)) return a;
  if (l == nullptr) {
    auto fresh = std::make_unique<ListValue>();
    l = fresh.get();
    ks.SetObject(r.key, std::move(fresh), kNoDeadline);
  }
  for (std::string_view v : r.args.subspan(2)) l->Push(end, v, limits.list_max_listpack_size);
  a.count = static_cast<int64_t>(l->size());
  a.changed = true;
  return a;
}

Applied ApplyListPop(Keyspace& ks, const aof::Record& r, ListValue::End end) {
  Applied a;
  ListValue* l;
  if (!Existing(ks, r, &l, &a) || l == nullptr) return a;
  // LPOP key [count] (Redis writes a single pop without the count).
  const int64_t n = r.args.size() > 2 ? ParseInt64(r.args[2]).value_or(0) : 1;
  if (n <= 0) return a;
  const size_t removed = std::min(static_cast<size_t>(n), l->size());
  l->Pop(end, removed);
  a.count = static_cast<int64_t>(removed);
  a.changed = removed > 0;
  DropIfEmpty(ks, r, l);
  return a;
}

Applied ApplyListSet(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits) {
  Applied a;
  ListValue* l;
  if (!Existing(ks, r, &l, &a)) return a;
  const auto index = ParseInt64(r.args[2]);
  if (l == nullptr || !index || !l->Set(*index, r.args[3], limits.list_max_listpack_size)) {
    a.error = "LSET of an element that does not exist";
    return a;
  }
  a.changed = true;
  return a;
}

Applied ApplyListInsert(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits) {
  Applied a;
  ListValue* l;
  if (!Existing(ks, r, &l, &a) || l == nullptr) return a;
  const bool after = EqualsIgnoreCase(r.args[2], "AFTER");
  if (!l->Insert(r.args[3], r.args[4], after, limits.list_max_listpack_size)) {
    a.count = -1;
    return a;
  }
  a.count = static_cast<int64_t>(l->size());
  a.changed = true;
  return a;
}

Applied ApplyListRemove(Keyspace& ks, const aof::Record& r) {
  Applied a;
  ListValue* l;
  if (!Existing(ks, r, &l, &a) || l == nullptr) return a;
  const size_t removed = l->Remove(r.args[3], ParseInt64(r.args[2]).value_or(0));
  a.count = static_cast<int64_t>(removed);
  a.changed = removed > 0;
  DropIfEmpty(ks, r, l);
  return a;
}

Applied ApplyListTrim(Keyspace& ks, const aof::Record& r) {
  Applied a;
  ListValue* l;
  if (!Existing(ks, r, &l, &a) || l == nullptr) return a;
  const size_t len = l->size();
  auto range = ListRange(ParseInt64(r.args[2]).value_or(0), ParseInt64(r.args[3]).value_or(0), len);
  // Everything outside [first, last] goes (all of it when the range is empty).
  const size_t left = range ? range->first : len;
  const size_t right = range ? len - 1 - range->second : 0;
  l->Pop(ListValue::End::kHead, left);
  l->Pop(ListValue::End::kTail, right);
  a.count = static_cast<int64_t>(left + right);
  a.changed = left + right > 0;
  DropIfEmpty(ks, r, l);
  return a;
}

}  // namespace latch
