#include "server/types/set.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "log/record.h"
#include "protocol/text.h"
#include "server/keyspace.h"
#include "server/types/value_ref.h"

namespace latch {

namespace {

// The integer `s` reads as under string2ll's rules, if any: what decides
// whether a member can live in an intset.
std::optional<int64_t> AsInteger(std::string_view s) {
  return ParseInt64(s);
}

// set-max-intset-entries, capped at 2^30 as Redis caps it (intset internals).
uint64_t MaxIntsetEntries(const EncodingLimits& limits) {
  const int64_t m = limits.set_max_intset_entries;
  if (m < 0) return 0;
  return std::min<uint64_t>(static_cast<uint64_t>(m), uint64_t{1} << 30);
}

}  // namespace

SetValue::SetValue(std::string_view first) {
  if (!AsInteger(first)) dict_ = std::make_unique<Dict>();
}

SetValue::SetValue(const SetValue& other)
    : Object(other),
      ints_(other.ints_),
      dict_(other.dict_ ? std::make_unique<Dict>(*other.dict_) : nullptr) {}

std::string_view SetValue::Format(int64_t v, char* buf) {
  auto res = std::to_chars(buf, buf + 21, v);
  return std::string_view(buf, static_cast<size_t>(res.ptr - buf));
}

size_t SetValue::memory() const {
  return sizeof(SetValue) + (dict_ ? dict_->memory() : ints_.memory());
}

bool SetValue::Equals(const Object& other) const {
  if (other.type() != kType || other.size() != size()) return false;
  const auto& o = static_cast<const SetValue&>(other);
  bool same = true;
  ForEach([&](std::string_view m) {
    if (same) same = o.Contains(m);
  });
  return same;
}

void SetValue::WriteRecords(std::string_view key, aof::Batch& out) const {
  // An intset's members are formatted on the fly: keep their texts.
  std::vector<std::string> texts;
  std::vector<std::string_view> words;
  const size_t batch = std::min(size(), kMembersPerRecord);
  texts.reserve(batch);
  words.reserve(batch);
  auto flush = [&] {
    out.Append(aof::Op::kSAdd, key, words);
    words.clear();
    texts.clear();
  };
  if (dict_) {
    dict_->ForEach([&](const Dict::Node& n) {
      words.push_back(n.key());
      if (words.size() == kMembersPerRecord) flush();
    });
  } else {
    char buf[24];
    for (size_t i = 0; i < ints_.size(); ++i) {
      texts.emplace_back(Format(ints_.At(i), buf));
      if (texts.size() == kMembersPerRecord) {
        for (const std::string& t : texts) words.push_back(t);
        flush();
      }
    }
    for (const std::string& t : texts) words.push_back(t);
  }
  if (!words.empty()) flush();
}

bool SetValue::Contains(std::string_view member) const {
  if (dict_) return dict_->Find(member) != nullptr;
  auto v = AsInteger(member);
  return v && ints_.Contains(*v);
}

std::string SetValue::Random(std::mt19937_64& rng) const {
  if (dict_) return std::string(dict_->FairRandom(rng)->key());
  char buf[24];
  return std::string(Format(ints_.Random(rng), buf));
}

void SetValue::Convert() {
  if (dict_) return;
  auto d = std::make_unique<Dict>();
  char buf[24];
  for (size_t i = 0; i < ints_.size(); ++i) d->Set(Format(ints_.At(i), buf));
  dict_ = std::move(d);
  ints_.Clear();
}

bool SetValue::Add(std::string_view member, const EncodingLimits& limits) {
  if (!dict_) {
    if (auto v = AsInteger(member)) {
      if (!ints_.Add(*v)) return false;
      if (ints_.size() > MaxIntsetEntries(limits)) Convert();
      return true;
    }
    Convert();  // not an integer: the set becomes a hashtable
  }
  return dict_->Set(member).second;
}

bool SetValue::Remove(std::string_view member) {
  if (dict_) return dict_->Erase(member);
  auto v = AsInteger(member);
  return v && ints_.Remove(*v);
}

Applied ApplySAdd(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits) {
  Applied out;
  Changing<SetValue> s(ks, r.key);
  if (!s.ok()) {
    out.error = s.error("SADD");
    return out;
  }
  // A new set takes the encoding its first member calls for (setTypeCreate).
  if (!s.found()) s.Create(std::make_unique<SetValue>(r.args[2]));
  for (size_t i = 2; i < r.args.size(); ++i) {
    if (s->Add(r.args[i], limits)) ++out.count;
  }
  out.changed = out.count > 0;
  if (out.changed) s.Commit();
  return out;
}

Applied ApplySRem(Keyspace& ks, const aof::Record& r) {
  Applied out;
  Changing<SetValue> s(ks, r.key);
  if (!s.ok()) {
    out.error = s.error("SREM");
    return out;
  }
  if (!s.found()) return out;
  for (size_t i = 2; i < r.args.size(); ++i) {
    if (s->Remove(r.args[i])) ++out.count;
  }
  out.changed = out.count > 0;
  // (An empty set is no key at all: Commit removes it.)
  if (out.changed) s.Commit();
  return out;
}

}  // namespace latch
