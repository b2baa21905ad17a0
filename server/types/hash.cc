#include "server/types/hash.h"

#include <vector>

#include "log/record.h"
#include "server/keyspace.h"
#include "server/types/value_ref.h"

namespace latch {

namespace {

// Redis's rewrite writes at most this many elements per record
// (AOF_REWRITE_ITEMS_PER_CMD): a pair counts as one.
constexpr size_t kPairsPerRecord = 64;

// The heap bytes of a PackedList's buffer.
size_t PackedHeap(const PackedList& p) {
  return p.capacity();
}

}  // namespace

HashValue::HashValue(const HashValue& other)
    : Object(other),
      list_(other.list_),
      dict_(other.dict_ ? std::make_unique<Dict>(*other.dict_) : nullptr) {}

size_t HashValue::memory() const {
  return sizeof(HashValue) + (dict_ ? dict_->memory() : PackedHeap(list_));
}

bool HashValue::Equals(const Object& other) const {
  if (other.type() != kType || other.size() != size()) return false;
  const auto& o = static_cast<const HashValue&>(other);
  bool same = true;
  ForEach([&](std::string_view field, std::string_view value) {
    if (!same) return;
    auto v = o.Get(field);
    same = v.has_value() && *v == value;
  });
  return same;
}

void HashValue::WriteRecords(std::string_view key, aof::Batch& out) const {
  std::vector<std::string_view> words;
  words.reserve(2 * std::min(size(), kPairsPerRecord));
  ForEach([&](std::string_view field, std::string_view value) {
    words.push_back(field);
    words.push_back(value);
    if (words.size() == 2 * kPairsPerRecord) {
      out.Append(aof::Op::kHSet, key, words);
      words.clear();
    }
  });
  if (!words.empty()) out.Append(aof::Op::kHSet, key, words);
}

std::optional<std::string_view> HashValue::Get(std::string_view field) const {
  if (dict_) {
    const Dict::Node* n = dict_->Find(field);
    if (n == nullptr) return std::nullopt;
    return n->value();
  }
  const size_t pos = list_.Find(field, list_.begin(), 2);
  if (pos == list_.end()) return std::nullopt;
  return list_.At(list_.Next(pos));
}

std::pair<std::string_view, std::string_view> HashValue::Random(std::mt19937_64& rng) const {
  if (dict_) {
    const Dict::Node* n = dict_->FairRandom(rng);
    return {n->key(), n->value()};
  }
  const size_t pos = list_.Seek(static_cast<int64_t>(2 * (rng() % size())));
  return {list_.At(pos), list_.At(list_.Next(pos))};
}

void HashValue::Convert() {
  if (dict_) return;
  auto d = std::make_unique<Dict>();
  ForEach([&](std::string_view field, std::string_view value) { d->Set(field, value); });
  dict_ = std::move(d);
  list_.Clear();
  list_.Shrink();
}

bool HashValue::Set(std::string_view field, std::string_view value, const EncodingLimits& limits) {
  // A field or value too long for the listpack converts first (Redis checks
  // this in hashTypeSet for HINCRBY*, and for every argument of HSET before
  // it starts: ApplyHSet does that).
  const auto max_value = static_cast<uint64_t>(limits.hash_max_listpack_value);
  if (!dict_ && (field.size() > max_value || value.size() > max_value ||
                 !list_.SafeToAdd(field.size() + value.size()))) {
    Convert();
  }
  if (dict_) return dict_->Set(field, value).second;
  const size_t pos = list_.Find(field, list_.begin(), 2);
  const bool added = pos == list_.end();
  if (added) {
    list_.PushBack(field);
    list_.PushBack(value);
  } else {
    list_.Replace(list_.Next(pos), value);
  }
  // After an update too, as hashTypeSet: a hash over an entry limit that
  // CONFIG SET lowered converts on its next write.
  if (size() > static_cast<uint64_t>(limits.hash_max_listpack_entries)) Convert();
  return added;
}

bool HashValue::Erase(std::string_view field) {
  if (dict_) return dict_->Erase(field);
  const size_t pos = list_.Find(field, list_.begin(), 2);
  if (pos == list_.end()) return false;
  list_.Erase(pos, 2);
  list_.ShrinkIfSparse();
  return true;
}

Applied ApplyHSet(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits) {
  Applied out;
  Changing<HashValue> h(ks, r.key);
  if (!h.ok()) {
    out.error = h.error("HSET");
    return out;
  }
  if (!h.found()) h.Create(std::make_unique<HashValue>());
  // hashTypeTryConversion: any argument too long for the listpack converts
  // the hash before anything is added.
  if (h->packed()) {
    for (size_t i = 2; i < r.args.size(); ++i) {
      if (r.args[i].size() > static_cast<uint64_t>(limits.hash_max_listpack_value)) {
        h->Convert();
        break;
      }
    }
  }
  for (size_t i = 2; i + 1 < r.args.size(); i += 2) {
    if (h->Set(r.args[i], r.args[i + 1], limits)) ++out.count;
  }
  out.changed = true;
  h.Commit();
  return out;
}

Applied ApplyHDel(Keyspace& ks, const aof::Record& r) {
  Applied out;
  Changing<HashValue> h(ks, r.key);
  if (!h.ok()) {
    out.error = h.error("HDEL");
    return out;
  }
  if (!h.found()) return out;
  for (size_t i = 2; i < r.args.size(); ++i) {
    if (h->Erase(r.args[i])) ++out.count;
  }
  out.changed = out.count > 0;
  // (An empty hash is no key at all: Commit removes it.)
  if (out.changed) h.Commit();
  return out;
}

}  // namespace latch
