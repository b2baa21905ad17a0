// The set family across sets: SINTER, SINTERCARD, SUNION, SDIFF and the
// STORE forms SINTERSTORE, SUNIONSTORE, SDIFFSTORE — Redis 7.0's
// algorithms, so that the orders Redis shows are the orders latch shows
// (an intersection walks its smallest set; a union or difference is built
// as a new set, so an all-integer result comes out ascending).
//
// A missing key is an empty set; any key of another type is WRONGTYPE,
// even after a missing one (Redis looks every key up first).
//
// The lock rule: a STORE form that stores a non-empty result creates a
// value, so it is flagged kLease and asks ctx.AdmitGrant (the destination
// has no lease afterwards) before it writes; one whose result is empty only
// deletes the destination, a release. The effect is DEL of the destination,
// then SADD of the result in batches, as one unit (Store::Atomic): a replay
// sees all of it or none.
#include <algorithm>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/common.h"
#include "server/types/set.h"

namespace latch::commands {

namespace {

// The sets named by `keys` (nullptr for a missing key), looked up as
// Redis's lookupKeyRead, held by `refs` (a key named twice is the same
// pointer twice: the walks below test that). False after replying
// WRONGTYPE.
bool LookUpSets(CommandContext& ctx, std::span<const std::string_view> keys,
                std::deque<ValueRef<SetValue>>* refs, std::vector<const SetValue*>* sets) {
  sets->clear();
  sets->reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    ValueRef<SetValue>& s = refs->emplace_back();
    if (!FindAs(ctx, keys[i], &s)) return false;
    const SetValue* same = s.get();
    for (size_t j = 0; j < i; ++j) {
      if (keys[j] == keys[i]) same = (*sets)[j];
    }
    sets->push_back(same);
  }
  return true;
}

// The destination of a STORE form becomes `members` (in that order): DEL,
// then SADD in batches, one unit. An empty result only deletes it. Replies
// the result's size. Its keyspace events are Redis's: `event` for a
// stored result ("new" first if the key did not exist: one that did is
// overwritten, not created), "del" when an empty result removed a key.
void StoreResult(CommandContext& ctx, std::string_view dst, const std::vector<std::string>& members,
                 std::string_view event) {
  if (!members.empty() && !ctx.AdmitGrant(kNoDeadline)) return;
  bool existed = false;
  {
    Store::Atomic atomic(ctx.store);
    existed = ctx.store.Find(dst, ctx.now) != nullptr;
    if (existed) ctx.store.Delete(dst);
    Store::Overwriting overwriting(ctx.store, dst, existed);
    std::vector<std::string_view> batch;
    batch.reserve(std::min(members.size(), SetValue::kMembersPerRecord));
    for (const std::string& m : members) {
      batch.push_back(m);
      if (batch.size() == SetValue::kMembersPerRecord) {
        ctx.store.Apply(aof::Op::kSAdd, dst, batch, ctx.now);
        batch.clear();
      }
    }
    if (!batch.empty()) ctx.store.Apply(aof::Op::kSAdd, dst, batch, ctx.now);
  }
  ctx.reply.Int(static_cast<int64_t>(members.size()));
  if (!members.empty()) {
    ctx.Notify(kNotifySet, event, dst);
  } else if (existed) {
    ctx.Notify(kNotifyGeneric, "del", dst);
  }
}

// The result as a set is built by Redis (a new intset that converts as
// members come): its members in that set's order.
std::vector<std::string> InOrderOf(const SetValue& built) {
  std::vector<std::string> out;
  out.reserve(built.size());
  built.ForEach([&](std::string_view m) { out.emplace_back(m); });
  return out;
}

// ---------------------------------------------------------------- SINTER

enum class InterMode { kReply, kStore, kCardinality };

// sinterGenericCommand: walk the smallest set, keep what every other set
// has. `limit` (SINTERCARD) stops counting there (0: no limit).
void Intersect(CommandContext& ctx, std::span<const std::string_view> keys, std::string_view dst,
               InterMode mode, uint64_t limit = 0) {
  std::deque<ValueRef<SetValue>> refs;
  std::vector<const SetValue*> sets;
  if (!LookUpSets(ctx, keys, &refs, &sets)) return;
  const bool empty = std::any_of(sets.begin(), sets.end(), [](auto* s) { return s == nullptr; });
  std::vector<std::string> out;
  uint64_t cardinality = 0;
  if (!empty) {
    std::stable_sort(sets.begin(), sets.end(),
                     [](const SetValue* a, const SetValue* b) { return a->size() < b->size(); });
    sets[0]->ForEach([&](std::string_view m) {
      if (limit != 0 && cardinality >= limit) return;
      for (size_t j = 1; j < sets.size(); ++j) {
        if (sets[j] != sets[0] && !sets[j]->Contains(m)) return;
      }
      ++cardinality;
      if (mode != InterMode::kCardinality) out.emplace_back(m);
    });
  }
  switch (mode) {
    case InterMode::kCardinality:
      ctx.reply.Int(static_cast<int64_t>(cardinality));
      return;
    case InterMode::kReply:
      ctx.reply.Set(out.size());
      for (const std::string& m : out) ctx.reply.Bulk(m);
      return;
    case InterMode::kStore:
      // Redis builds the stored set from the walk's order: an all-integer
      // result is stored as an intset, ascending.
      StoreResult(ctx, dst, out, "sinterstore");
      return;
  }
}

// ---------------------------------------------------------------- SUNION, SDIFF

// sunionDiffGenericCommand: the result is built as a new set.
void UnionOrDiff(CommandContext& ctx, std::span<const std::string_view> keys, std::string_view dst,
                 bool diff, bool store) {
  std::deque<ValueRef<SetValue>> refs;
  std::vector<const SetValue*> sets;
  if (!LookUpSets(ctx, keys, &refs, &sets)) return;
  const EncodingLimits& limits = ctx.store.encoding_limits();
  SetValue result;
  if (!diff) {
    for (const SetValue* s : sets) {
      if (s != nullptr) s->ForEach([&](std::string_view m) { result.Add(m, limits); });
    }
  } else if (sets[0] != nullptr) {
    // A set minus itself (the same key again) is empty.
    const bool same =
        std::any_of(sets.begin() + 1, sets.end(), [&](auto* s) { return s == sets[0]; });
    if (!same) {
      // Redis's choice of algorithm: walk the first set testing the others
      // (its work halved: it stops at the first hit) or add the first and
      // remove every other's members, whichever touches fewer elements.
      uint64_t one = 0, two = 0;
      for (const SetValue* s : sets) {
        if (s == nullptr) continue;
        one += sets[0]->size();
        two += s->size();
      }
      if (one / 2 <= two) {
        std::vector<const SetValue*> others;
        for (size_t j = 1; j < sets.size(); ++j) {
          if (sets[j] != nullptr) others.push_back(sets[j]);
        }
        // The largest first: a member found early is dropped early.
        std::stable_sort(others.begin(), others.end(),
                         [](auto* a, auto* b) { return a->size() > b->size(); });
        sets[0]->ForEach([&](std::string_view m) {
          for (const SetValue* o : others) {
            if (o->Contains(m)) return;
          }
          result.Add(m, limits);
        });
      } else {
        sets[0]->ForEach([&](std::string_view m) { result.Add(m, limits); });
        for (size_t j = 1; j < sets.size() && result.size() > 0; ++j) {
          if (sets[j] != nullptr) sets[j]->ForEach([&](std::string_view m) { result.Remove(m); });
        }
      }
    }
  }
  if (store) {
    StoreResult(ctx, dst, InOrderOf(result), diff ? "sdiffstore" : "sunionstore");
    return;
  }
  ctx.reply.Set(result.size());
  result.ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
}

}  // namespace

void SInter(CommandContext& ctx) {
  Intersect(ctx, ctx.argv.subspan(1), {}, InterMode::kReply);
}

void SInterStore(CommandContext& ctx) {
  Intersect(ctx, ctx.argv.subspan(2), ctx.argv[1], InterMode::kStore);
}

void SInterCard(CommandContext& ctx) {
  // SINTERCARD numkeys key [key …] [LIMIT limit], with Redis's errors: a
  // numkeys that is not a positive integer, more keys than arguments, a
  // LIMIT that is not a non-negative integer.
  auto numkeys = ParseInt64(ctx.argv[1]);
  if (!numkeys || *numkeys < 1) {
    ctx.reply.Error("ERR numkeys should be greater than 0");
    return;
  }
  if (*numkeys > static_cast<int64_t>(ctx.argv.size()) - 2) {
    ctx.reply.Error("ERR Number of keys can't be greater than number of args");
    return;
  }
  uint64_t limit = 0;
  for (size_t j = 2 + static_cast<size_t>(*numkeys); j < ctx.argv.size(); ++j) {
    if (IsWord(ctx.argv[j], "LIMIT") && j + 1 < ctx.argv.size()) {
      auto l = ParseInt64(ctx.argv[++j]);
      if (!l || *l < 0) {
        ctx.reply.Error("ERR LIMIT can't be negative");
        return;
      }
      limit = static_cast<uint64_t>(*l);
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  Intersect(ctx, ctx.argv.subspan(2, static_cast<size_t>(*numkeys)), {}, InterMode::kCardinality,
            limit);
}

void SUnion(CommandContext& ctx) {
  UnionOrDiff(ctx, ctx.argv.subspan(1), {}, /*diff=*/false, /*store=*/false);
}

void SUnionStore(CommandContext& ctx) {
  UnionOrDiff(ctx, ctx.argv.subspan(2), ctx.argv[1], /*diff=*/false, /*store=*/true);
}

void SDiff(CommandContext& ctx) {
  UnionOrDiff(ctx, ctx.argv.subspan(1), {}, /*diff=*/true, /*store=*/false);
}

void SDiffStore(CommandContext& ctx) {
  UnionOrDiff(ctx, ctx.argv.subspan(2), ctx.argv[1], /*diff=*/true, /*store=*/true);
}

// ---------------------------------------------------------------- registration

void RegisterSetOps(CommandRegistry& r) {
  using namespace spec;
  auto keys_from = [](int index) {
    ArgDoc a = Key("key", true);
    a.key_spec_index = index;
    return a;
  };
  auto read = [&](std::string name, CommandHandler h, std::string summary, std::string complexity) {
    return Keys(
        Cmd(std::move(name), -2, kRead, h, {"read", "set", "slow"},
            {std::move(summary), "1.0.0", "set", std::move(complexity)}, {Key("key", true)}),
        1, -1, 1, {"RO", "access"});
  };
  auto store = [&](std::string name, CommandHandler h, std::string summary, std::string complexity,
                   std::vector<std::string> dest_flags = {"OW", "update"}) {
    // The destination is written over, the sources only read.
    return KeySpecs(
        Cmd(std::move(name), -3, kWrite | kCmdDenyOom | kLease, h, {"write", "set", "slow"},
            {std::move(summary), "1.0.0", "set", std::move(complexity)},
            {Key("destination"), keys_from(1)}),
        1, -1, 1, {RangeSpec(std::move(dest_flags), 1), RangeSpec({"RO", "access"}, 2, -1)});
  };
  const std::string inter =
      "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of "
      "sets.";
  const std::string all = "O(N) where N is the total number of elements in all given sets.";
  r.Add(read("sinter", SInter, "Intersect multiple sets", inter));
  // (Redis marks SINTERSTORE's destination RW, the others' OW.)
  r.Add(store("sinterstore", SInterStore,
              "Intersect multiple sets and store the resulting set in a key", inter,
              {"RW", "update"}));
  r.Add(KeySpecs(Cmd("sintercard", -3, kRead, SInterCard, {"read", "set", "slow"},
                     {"Intersect multiple sets and return the cardinality of the result", "7.0.0",
                      "set", inter},
                     {Int("numkeys"), Key("key", true), Optional(Int("limit", "LIMIT"))}),
                 0, 0, 0, {KeyNumSpec({"RO", "access"}, 1)}));
  r.Add(read("sunion", SUnion, "Add multiple sets", all));
  r.Add(store("sunionstore", SUnionStore, "Add multiple sets and store the resulting set in a key",
              all));
  r.Add(read("sdiff", SDiff, "Subtract multiple sets", all));
  r.Add(store("sdiffstore", SDiffStore,
              "Subtract multiple sets and store the resulting set in a key", all));
}

}  // namespace latch::commands
