// A sorted set's records: what a log rewrite writes for one (ZADD in
// batches, as Redis's rewrite), and the appliers a replay, the Store and a
// served pop run for ZADD and ZREM records. Only the value's public
// interface (zset.h) is used here; the encodings live in zset.cc.
#include <memory>
#include <string>
#include <vector>

#include "log/record.h"
#include "protocol/text.h"
#include "server/keyspace.h"
#include "server/types/value_ref.h"
#include "server/types/zset.h"

namespace latch {

void ZSetValue::WriteRecords(std::string_view key, aof::Batch& out) const {
  constexpr size_t kBatch = 64;  // pairs per record, as Redis's rewrite
  std::vector<std::string> scores;
  std::vector<std::string_view> words;
  scores.reserve(kBatch);
  words.reserve(2 * kBatch);
  auto flush = [&] {
    if (words.empty()) return;
    out.Append(aof::Op::kZAdd, key, words);
    words.clear();
    scores.clear();
  };
  for (Iter it = First(); it.valid(); it.Next()) {
    scores.push_back(FormatScore(it.score()));
    words.push_back(scores.back());
    words.push_back(it.member());
    if (scores.size() == kBatch) flush();
  }
  flush();
}

// ---------------------------------------------------------------- appliers

Applied ApplyZAdd(Keyspace& ks, const aof::Record& r, const EncodingLimits& limits) {
  Applied out;
  const auto& a = r.args;
  if (a.size() < 4 || a.size() % 2 != 0) {
    out.error = "ZADD record without score-member pairs";
    return out;
  }
  // Every score first: a record that cannot apply whole changes nothing.
  static thread_local std::vector<double> scores;
  scores.clear();
  for (size_t i = 2; i < a.size(); i += 2) {
    auto s = ParseDoubleArg(a[i]);
    if (!s) {
      out.error = "ZADD record with a score that is not a number";
      return out;
    }
    scores.push_back(*s);
  }
  Changing<ZSetValue> z(ks, r.key);
  if (!z.ok()) {
    out.error = z.error("ZADD");
    return out;
  }
  if (!z.found()) {
    // Redis's ZADD: a listpack, unless the settings rule it out from the
    // first member on.
    const bool packed = limits.zset_max_listpack_entries != 0 &&
                        limits.zset_max_listpack_value >= static_cast<int64_t>(a[3].size());
    z.Create(std::make_unique<ZSetValue>(packed));
  }
  for (size_t i = 0; i < scores.size(); ++i) {
    switch (z->Set(a[3 + 2 * i], scores[i], limits)) {
      case ZSetValue::SetResult::kAdded:
        ++out.count;
        out.changed = true;
        break;
      case ZSetValue::SetResult::kUpdated:
        out.changed = true;
        break;
      case ZSetValue::SetResult::kSame:
        break;
    }
  }
  // (A new key always gets its first member, so it is never left empty.)
  if (out.changed) z.Commit();
  return out;
}

Applied ApplyZRem(Keyspace& ks, const aof::Record& r) {
  Applied out;
  Changing<ZSetValue> z(ks, r.key);
  if (!z.ok()) {
    out.error = z.error("ZREM");
    return out;
  }
  if (!z.found()) return out;
  for (size_t i = 2; i < r.args.size(); ++i) {
    if (z->Remove(r.args[i])) ++out.count;
  }
  out.changed = out.count > 0;
  // (The key goes with the last member: Commit removes it.)
  if (out.changed) z.Commit();
  return out;
}

}  // namespace latch
