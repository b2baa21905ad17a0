// Sorted sets, the pops: ZPOPMIN, ZPOPMAX, ZMPOP, and their blocking forms
// BZPOPMIN, BZPOPMAX and BZMPOP (Redis's genericZpopCommand,
// blockingGenericZpopCommand, zmpopGenericCommand).
//
// A blocking pop is its plain self when one of its keys holds a sorted set:
// BZPOPMIN pops as ZPOPMIN would and replies [key, member, score]; BZMPOP
// replies as ZMPOP. When none does, it parks the client on its keys
// (commands/blocking.h, the list family's machinery); the server runs the
// same handler again, with ctx.serving_key, when one of them receives a
// sorted set (server/waits.cc: ServePops by the key's type) — so what a
// served pop does, logs and replies is written once, here. Inside MULTI or
// a script nothing blocks: the answer is the timeout's (a null array), at
// once.
//
// Every pop hands members out: a grant (kLease), admitted once it is known
// that something will be popped (zsets.h says why). A served pop the
// restart quarantine refuses writes nothing and the client keeps waiting,
// first in line (waits.cc). Each is logged as the ZREM of what went (ZPop):
// a served BZPOPMIN is `ZREM key member`.
#include <algorithm>
#include <string>
#include <vector>

#include "server/commands/blocking.h"
#include "server/commands/zsets.h"

namespace latch::commands {

// ---------------------------------------------------------------- the pop

std::vector<ZPopped> ZPop(Store& store, std::string_view key, ZEnd end, size_t count,
                          const TimeSnapshot& now) {
  std::vector<ZPopped> out;
  const Keyspace::Entry* e = store.Find(key, now);
  if (e == nullptr || e->type() != ValueType::kZSet) return out;
  const ValueRef<ZSetValue> z(e);  // (read before the ZREMs below)
  count = std::min(count, z->size());
  out.reserve(count);
  ZSetValue::Iter it = end == ZEnd::kMin ? z->First() : z->Last();
  for (size_t i = 0; i < count && it.valid(); ++i) {
    out.push_back({std::string(it.member()), it.score()});
    end == ZEnd::kMin ? it.Next() : it.Prev();
  }
  std::vector<std::string_view> members;
  members.reserve(out.size());
  for (const ZPopped& p : out) members.push_back(p.member);
  constexpr size_t kBatch = 64;
  Store::Atomic atomic(store);
  for (size_t i = 0; i < members.size(); i += kBatch) {
    store.Apply(
        aof::Op::kZRem, key,
        std::span<const std::string_view>(members).subspan(i, std::min(kBatch, members.size() - i)),
        now);
  }
  return out;
}

std::vector<ZPopped> ZPopAndNotify(CommandContext& ctx, std::string_view key, ZEnd end,
                                   size_t count) {
  std::vector<ZPopped> out = ZPop(ctx.store, key, end, count, ctx.now);
  if (!out.empty()) {
    NotifyCollection(ctx, kNotifyZset, end == ZEnd::kMin ? "zpopmin" : "zpopmax", key);
  }
  return out;
}

void ReplyPopped(resp::ReplySink& reply, std::string_view key, std::span<const ZPopped> popped,
                 ZPopShape shape) {
  const bool nested = shape == ZPopShape::kNested || shape == ZPopShape::kNestedWithKey;
  switch (shape) {
    case ZPopShape::kFlat:
      reply.Array(2 * popped.size());
      break;
    case ZPopShape::kNested:
      reply.Array(popped.size());
      break;
    case ZPopShape::kFlatWithKey:
      reply.Array(2 * popped.size() + 1);
      reply.Bulk(key);
      break;
    case ZPopShape::kNestedWithKey:
      reply.Array(2);
      reply.Bulk(key);
      reply.Array(popped.size());
      break;
  }
  for (const ZPopped& p : popped) {
    if (nested) reply.Array(2);
    reply.Bulk(p.member);
    reply.Double(p.score);
  }
}

namespace {

// The sorted set under `key` (its entry, for the deadline the grant
// checks), or nullptr; false after replying WRONGTYPE.
bool FindZSetEntry(CommandContext& ctx, std::string_view key, const Keyspace::Entry** e) {
  return FindTyped(ctx, key, ValueType::kZSet, e, Access::kWrite);
}

// The pop of every multi-key form: `count` members from the first of `keys`
// that holds a sorted set (only `ctx.serving_key` when serving a parked
// client), replied in `shape`. False when no key had one (nothing replied),
// true once replied (popped, WRONGTYPE, or a refused grant).
//
// Redis checks the type of each key in order up to the first that has
// members: a string after a sorted set is never looked at.
bool PopFirst(CommandContext& ctx, std::span<const std::string_view> keys, ZEnd end, size_t count,
              ZPopShape shape) {
  for (std::string_view key : keys) {
    if (ServingOther(ctx, key)) continue;
    const Keyspace::Entry* e;
    if (!FindZSetEntry(ctx, key, &e)) return true;
    if (e == nullptr) continue;
    if (!ctx.AdmitGrant(e->deadline)) return true;
    auto popped = ZPopAndNotify(ctx, key, end, count);
    ReplyPopped(ctx.reply, key, popped, shape);
    return true;
  }
  return false;
}

// ---------------------------------------------------------------- ZPOPMIN, ZPOPMAX

// ZPOPMIN / ZPOPMAX key [count]: RESP3 nests the pairs when a count is
// given, as Redis 7.0 does.
void ZPopMinMax(CommandContext& ctx, ZEnd end) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  int64_t count = -1;  // a plain single pop
  if (ctx.argv.size() == 3) {
    // (Redis's getPositiveLongFromObjectOrReply: one error for both.)
    auto v = ParseInt64(ctx.argv[2]);
    if (!v || *v < 0) {
      ctx.reply.Error("ERR value is out of range, must be positive");
      return;
    }
    count = *v;
  }
  const std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindZSetEntry(ctx, key, &e)) return;
  if (e == nullptr || count == 0) {
    ctx.reply.Array(0);
    return;
  }
  const ZPopShape shape = ctx.reply.resp3() && count != -1 ? ZPopShape::kNested : ZPopShape::kFlat;
  if (!ctx.AdmitGrant(e->deadline)) return;
  auto popped = ZPopAndNotify(ctx, key, end, count == -1 ? 1 : static_cast<size_t>(count));
  ReplyPopped(ctx.reply, key, popped, shape);
}

void ZPopMin(CommandContext& ctx) {
  ZPopMinMax(ctx, ZEnd::kMin);
}

void ZPopMax(CommandContext& ctx) {
  ZPopMinMax(ctx, ZEnd::kMax);
}

// ---------------------------------------------------------------- BZPOPMIN, BZPOPMAX

// BZPOPMIN / BZPOPMAX key [key …] timeout: [key, member, score] from the
// first key that holds a sorted set, or the wait. The timeout is read
// first: a bad one is the error even where a key holds a string.
void BlockingZPop(CommandContext& ctx, ZEnd end) {
  int64_t at;
  if (!BlockTimeoutOrReply(ctx, ctx.argv.back(), &at)) return;
  const auto keys = ctx.argv.subspan(1, ctx.argv.size() - 2);
  if (PopFirst(ctx, keys, end, 1, ZPopShape::kFlatWithKey)) return;
  ParkOrAnswer(ctx, keys, ValueType::kZSet, at, TimeoutReply::kNullArray);
}

void BZPopMin(CommandContext& ctx) {
  BlockingZPop(ctx, ZEnd::kMin);
}

void BZPopMax(CommandContext& ctx) {
  BlockingZPop(ctx, ZEnd::kMax);
}

// ---------------------------------------------------------------- ZMPOP, BZMPOP

// ZMPOP numkeys key [key …] MIN|MAX [COUNT count], and BZMPOP timeout
// numkeys …: [key, [[member, score], …]] from the first key that holds a
// sorted set; a null array when none does (or the wait). Redis reads
// numkeys, where and COUNT before BZMPOP's timeout.
void MultiPop(CommandContext& ctx, bool blocking) {
  const auto& argv = ctx.argv;
  const size_t numkeys_at = blocking ? 2 : 1;
  auto numkeys = ParseInt64(argv[numkeys_at]);
  if (!numkeys || *numkeys < 1) {
    ctx.reply.Error("ERR numkeys should be greater than 0");
    return;
  }
  // The keys, then where; past the arguments there is no where.
  const size_t first_key = numkeys_at + 1;
  if (static_cast<uint64_t>(*numkeys) >= argv.size() - first_key) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  const size_t where = first_key + static_cast<size_t>(*numkeys);
  ZEnd end;
  if (IsWord(argv[where], "MIN")) {
    end = ZEnd::kMin;
  } else if (IsWord(argv[where], "MAX")) {
    end = ZEnd::kMax;
  } else {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  int64_t count = -1;
  for (size_t j = where + 1; j < argv.size(); ++j) {
    if (count == -1 && IsWord(argv[j], "COUNT") && j + 1 < argv.size()) {
      auto v = ParseInt64(argv[++j]);
      if (!v || *v < 1) {
        ctx.reply.Error("ERR count should be greater than 0");
        return;
      }
      count = *v;
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  if (count == -1) count = 1;
  int64_t at = 0;
  if (blocking && !BlockTimeoutOrReply(ctx, argv[1], &at)) return;
  const auto keys = argv.subspan(first_key, static_cast<size_t>(*numkeys));
  if (PopFirst(ctx, keys, end, static_cast<size_t>(count), ZPopShape::kNestedWithKey)) return;
  if (!blocking) {
    ctx.reply.NullArray();
    return;
  }
  ParkOrAnswer(ctx, keys, ValueType::kZSet, at, TimeoutReply::kNullArray);
}

void ZMPop(CommandContext& ctx) {
  MultiPop(ctx, false);
}

void BZMPop(CommandContext& ctx) {
  MultiPop(ctx, true);
}

}  // namespace

// ---------------------------------------------------------------- registration

void RegisterZSetPops(CommandRegistry& r) {
  using namespace spec;
  auto zdoc = [](std::string summary, std::string since, std::string complexity) {
    return Doc{std::move(summary), std::move(since), "sorted-set", std::move(complexity)};
  };
  auto one_key = [](CommandSpec c, std::vector<std::string> flags) {
    return Keys(std::move(c), 1, 1, 1, std::move(flags));
  };
  auto where = [] { return OneOf("where", {Token("min", "MIN"), Token("max", "MAX")}); };
  const std::string pop_complexity =
      "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number "
      "of elements popped.";
  const std::string mpop_complexity =
      "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of "
      "elements in the sorted set, and M being the number of elements popped.";
  r.Add(one_key(Cmd("zpopmin", -2, kWrite | kFast | kLease, ZPopMin, {"write", "sortedset", "fast"},
                    zdoc("Remove and return members with the lowest scores in a sorted set",
                         "5.0.0", pop_complexity),
                    {Key("key"), Optional(Int("count"))}),
                {"RW", "access", "delete"}));
  r.Add(one_key(Cmd("zpopmax", -2, kWrite | kFast | kLease, ZPopMax, {"write", "sortedset", "fast"},
                    zdoc("Remove and return members with the highest scores in a sorted set",
                         "5.0.0", pop_complexity),
                    {Key("key"), Optional(Int("count"))}),
                {"RW", "access", "delete"}));
  r.Add(KeySpecs(
      Cmd("zmpop", -4, kWrite | kLease, ZMPop, {"write", "sortedset", "slow"},
          zdoc("Remove and return members with scores in a sorted set", "7.0.0", mpop_complexity),
          {Int("numkeys"), Key("key", true), where(), Optional(Int("count", "COUNT"))}),
      0, 0, 0, {KeyNumSpec({"RW", "access", "delete"}, 1)}));
  // The blocking forms. BZPOPMIN and BZPOPMAX are "noscript" (a script
  // cannot call them); BZMPOP is not, and in a script it answers at once.
  const uint32_t kBlockPop = kWrite | kCmdNoScript | kCmdBlocking | kFast | kLease;
  const std::string bpop_complexity =
      "O(log(N)) with N being the number of elements in the sorted set.";
  r.Add(Keys(Cmd("bzpopmin", -3, kBlockPop, BZPopMin, {"write", "sortedset", "fast", "blocking"},
                 zdoc("Remove and return the member with the lowest score from one or more "
                      "sorted sets, or block until one is available",
                      "5.0.0", bpop_complexity),
                 {Key("key", true), Double("timeout")}),
             1, -2, 1, {"RW", "access", "delete"}));
  r.Add(Keys(Cmd("bzpopmax", -3, kBlockPop, BZPopMax, {"write", "sortedset", "fast", "blocking"},
                 zdoc("Remove and return the member with the highest score from one or more "
                      "sorted sets, or block until one is available",
                      "5.0.0", bpop_complexity),
                 {Key("key", true), Double("timeout")}),
             1, -2, 1, {"RW", "access", "delete"}));
  r.Add(KeySpecs(
      Cmd("bzmpop", -5, kWrite | kCmdBlocking | kLease, BZMPop,
          {"write", "sortedset", "slow", "blocking"},
          zdoc("Remove and return members with scores in a sorted set or block until one is "
               "available",
               "7.0.0", mpop_complexity),
          {Double("timeout"), Int("numkeys"), Key("key", true), where(),
           Optional(Int("count", "COUNT"))}),
      0, 0, 0, {KeyNumSpec({"RW", "access", "delete"}, 2)}));
}

}  // namespace latch::commands
