// Sorted sets (Redis's t_zset.c), the pops: ZPOPMIN, ZPOPMAX and ZMPOP,
// and ZPop, the removal they share (zsets.h). Each pop sends one
// "zpopmin"/"zpopmax" event however many elements go, then "del" when the
// set went with them, as genericZpopCommand does.
#include "server/commands/zsets.h"

#include <algorithm>

namespace latch::commands {

namespace {

// A sorted set's entry (for its deadline) and value; false after replying
// WRONGTYPE. *z is nullptr when the key is absent.
bool FindZSet(CommandContext& ctx, std::string_view key, const Keyspace::Entry** e,
              const ZSetValue** z, Access access) {
  if (!FindTyped(ctx, key, ValueType::kZSet, e, access)) return false;
  *z = *e != nullptr ? static_cast<const ZSetValue*>((*e)->object()) : nullptr;
  return true;
}

}  // namespace

// ---------------------------------------------------------------- pops

std::vector<ZPopped> ZPop(CommandContext& ctx, std::string_view key, ZEnd end, size_t count) {
  Store& store = ctx.store;
  const TimeSnapshot& now = ctx.now;
  std::vector<ZPopped> out;
  const Keyspace::Entry* e = store.Find(key, now);
  if (e == nullptr || e->type() != ValueType::kZSet) return out;
  const auto* z = static_cast<const ZSetValue*>(e->object());
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

// ---------------------------------------------------------------- pops

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
  const ZSetValue* z;
  if (!FindZSet(ctx, key, &e, &z, Access::kWrite)) return;
  if (z == nullptr || count == 0) {
    ctx.reply.Array(0);
    return;
  }
  const ZPopShape shape = ctx.reply.resp3() && count != -1 ? ZPopShape::kNested : ZPopShape::kFlat;
  if (!ctx.AdmitGrant(e->deadline)) return;
  auto popped = ZPop(ctx, key, end, count == -1 ? 1 : static_cast<size_t>(count));
  ReplyPopped(ctx.reply, key, popped, shape);
}

void ZPopMin(CommandContext& ctx) {
  ZPopMinMax(ctx, ZEnd::kMin);
}

void ZPopMax(CommandContext& ctx) {
  ZPopMinMax(ctx, ZEnd::kMax);
}

// ZMPOP numkeys key [key …] MIN|MAX [COUNT count]: pops from the first of
// the keys that holds a sorted set; a nil array when none does.
void ZMPop(CommandContext& ctx) {
  const auto& argv = ctx.argv;
  auto numkeys = ParseInt64(argv[1]);
  if (!numkeys || *numkeys < 1) {
    ctx.reply.Error("ERR numkeys should be greater than 0");
    return;
  }
  if (*numkeys >= static_cast<int64_t>(argv.size()) - 2) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  const size_t where = 2 + static_cast<size_t>(*numkeys);
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
  for (size_t j = 2; j < where; ++j) {
    const Keyspace::Entry* e;
    const ZSetValue* z;
    if (!FindZSet(ctx, argv[j], &e, &z, Access::kWrite)) return;
    if (z == nullptr) continue;
    if (!ctx.AdmitGrant(e->deadline)) return;
    auto popped = ZPop(ctx, argv[j], end, static_cast<size_t>(count));
    ReplyPopped(ctx.reply, argv[j], popped, ZPopShape::kNestedWithKey);
    return;
  }
  ctx.reply.NullArray();
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
  const std::string pop_complexity =
      "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number "
      "of elements popped.";
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
          zdoc("Remove and return members with scores in a sorted set", "7.0.0",
               "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of "
               "elements in the sorted set, and M being the number of elements popped."),
          {Int("numkeys"), Key("key", true),
           OneOf("where", {Token("min", "MIN"), Token("max", "MAX")}),
           Optional(Int("count", "COUNT"))}),
      0, 0, 0, {KeyNumSpec({"RW", "access", "delete"}, 1)}));
}

}  // namespace latch::commands
