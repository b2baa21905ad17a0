// Sorted sets, part three: the algebra of several sets (Redis's
// zunionInterDiffGenericCommand). ZUNION, ZINTER and ZDIFF reply with the
// result; ZUNIONSTORE, ZINTERSTORE and ZDIFFSTORE store it (an empty
// result deletes the destination); ZINTERCARD counts the intersection.
//
//   ZUNION numkeys key [key …] [WEIGHTS w …] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]
//
// An input is a sorted set or a regular set, whose members all score 1 (as
// in Redis). Each input's scores are multiplied by its weight (1 by
// default); a member in several inputs gets the SUM (default), MIN or MAX of
// its weighted scores. Inf times 0 and inf + -inf, which are NaN, count as 0 (Redis's
// convention). A missing key is an empty input. The arithmetic happens in
// Redis's order — inputs sorted by size (stably), the smallest first — so
// sums of floats round exactly as there.
#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/commands/zsets.h"
#include "server/types/set.h"

namespace latch::commands {

namespace {

enum class SetOp { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

// One input: a sorted set, a regular set (every member scores 1), or
// nothing (a missing key), and its weight.
struct Source {
  const ZSetValue* z = nullptr;
  const SetValue* set = nullptr;
  double weight = 1;

  size_t size() const { return z != nullptr ? z->size() : set != nullptr ? set->size() : 0; }
  // The same value (one key named twice).
  bool same(const Source& o) const {
    return size() > 0 && (z != nullptr ? z == o.z : set == o.set);
  }
  // f(member, score) for every member (a sorted set in score order). The
  // member's view lasts only for the call (an intset formats its numbers).
  template <typename F>
  void ForEach(F&& f) const {
    if (z != nullptr) {
      for (ZSetValue::Iter it = z->First(); it.valid(); it.Next()) f(it.member(), it.score());
    } else if (set != nullptr) {
      set->ForEach([&](std::string_view m) { f(m, 1.0); });
    }
  }
  std::optional<double> Score(std::string_view member) const {
    if (z != nullptr) return z->Score(member);
    if (set != nullptr && set->Contains(member)) return 1.0;
    return std::nullopt;
  }
};

void Combine(double* target, double value, Aggregate agg) {
  switch (agg) {
    case Aggregate::kSum:
      *target += value;
      if (std::isnan(*target)) *target = 0;  // inf + -inf
      break;
    case Aggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case Aggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

using Elements = std::vector<std::pair<std::string, double>>;

void Inter(const std::vector<Source>& src, Aggregate agg, bool card_only, int64_t limit,
           Elements* out, int64_t* card) {
  if (src[0].size() == 0) return;
  bool full = false;  // ZINTERCARD's LIMIT reached
  src[0].ForEach([&](std::string_view member, double own) {
    if (full) return;
    double score = src[0].weight * own;
    if (std::isnan(score)) score = 0;
    for (size_t j = 1; j < src.size(); ++j) {
      // (The same key twice is the same set: its own score, weighted again.)
      auto s = src[j].same(src[0]) ? std::optional<double>(own) : src[j].Score(member);
      if (!s) return;
      Combine(&score, *s * src[j].weight, agg);
    }
    if (card_only) {
      ++*card;
      full = limit > 0 && *card >= limit;
    } else {
      out->emplace_back(std::string(member), score);
    }
  });
}

void Union(const std::vector<Source>& src, Aggregate agg, Elements* out) {
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // member → position in *out
  std::unordered_map<std::string, size_t, Hash, std::equal_to<>> index;
  for (const Source& s : src) {
    s.ForEach([&](std::string_view member, double own) {
      double score = s.weight * own;
      if (std::isnan(score)) score = 0;
      if (auto at = index.find(member); at != index.end()) {
        Combine(&(*out)[at->second].second, score, agg);
        return;
      }
      index.emplace(std::string(member), out->size());
      out->emplace_back(std::string(member), score);
    });
  }
}

void Diff(const std::vector<Source>& src, Elements* out) {
  if (src[0].size() == 0) return;
  for (size_t j = 1; j < src.size(); ++j) {
    if (src[j].same(src[0])) return;  // minus itself: nothing left
  }
  src[0].ForEach([&](std::string_view member, double own) {
    for (size_t j = 1; j < src.size(); ++j) {
      if (src[j].Score(member)) return;
    }
    out->emplace_back(std::string(member), own);
  });
}

// `dst`: the destination (the *STORE commands), else empty. `numkeys_at`:
// where numkeys is. `card_only`: ZINTERCARD.
void ZSetOpGeneric(CommandContext& ctx, bool store, size_t numkeys_at, SetOp op, bool card_only) {
  const auto& argv = ctx.argv;
  auto setnum = IntArgOrReply(ctx, argv[numkeys_at]);
  if (!setnum) return;
  if (*setnum < 1) {
    ctx.reply.Error("ERR at least 1 input key is needed for '" + ctx.name() + "' command");
    return;
  }
  if (*setnum > static_cast<int64_t>(argv.size() - (numkeys_at + 1))) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  const auto n = static_cast<size_t>(*setnum);
  std::vector<Source> src(n);
  // What the sources point to (a packed value is a view: types/value_ref.h).
  std::deque<ValueRef<ZSetValue>> zsets;
  std::deque<ValueRef<SetValue>> sets;
  size_t j = numkeys_at + 1;
  for (size_t i = 0; i < n; ++i, ++j) {
    const Keyspace::Entry* e = FindForRead(ctx, argv[j]);
    if (e == nullptr) continue;
    if (e->type() == ValueType::kZSet) {
      src[i].z = zsets.emplace_back(e).get();
    } else if (e->type() == ValueType::kSet) {
      src[i].set = sets.emplace_back(e).get();
    } else {
      ctx.reply.Error(kWrongType);
      return;
    }
  }
  Aggregate agg = Aggregate::kSum;
  bool withscores = false;
  int64_t limit = 0;
  while (j < argv.size()) {
    const size_t remaining = argv.size() - j;
    if (op != SetOp::kDiff && !card_only && remaining >= n + 1 && IsWord(argv[j], "WEIGHTS")) {
      ++j;
      for (size_t i = 0; i < n; ++i, ++j) {
        auto w = ParseDoubleArg(argv[j]);
        if (!w) {
          ctx.reply.Error("ERR weight value is not a float");
          return;
        }
        src[i].weight = *w;
      }
    } else if (op != SetOp::kDiff && !card_only && remaining >= 2 && IsWord(argv[j], "AGGREGATE")) {
      const std::string_view a = argv[j + 1];
      if (IsWord(a, "SUM")) {
        agg = Aggregate::kSum;
      } else if (IsWord(a, "MIN")) {
        agg = Aggregate::kMin;
      } else if (IsWord(a, "MAX")) {
        agg = Aggregate::kMax;
      } else {
        ctx.reply.Error(kSyntaxError);
        return;
      }
      j += 2;
    } else if (!store && !card_only && IsWord(argv[j], "WITHSCORES")) {
      withscores = true;
      ++j;
    } else if (card_only && remaining >= 2 && IsWord(argv[j], "LIMIT")) {
      auto l = ParseInt64(argv[j + 1]);
      if (!l || *l < 0) {
        ctx.reply.Error("ERR LIMIT can't be negative");
        return;
      }
      limit = *l;
      j += 2;
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  if (op != SetOp::kDiff) {
    std::stable_sort(src.begin(), src.end(),
                     [](const Source& a, const Source& b) { return a.size() < b.size(); });
  }

  Elements result;
  int64_t card = 0;
  switch (op) {
    case SetOp::kInter:
      Inter(src, agg, card_only, limit, &result, &card);
      break;
    case SetOp::kUnion:
      Union(src, agg, &result);
      break;
    case SetOp::kDiff:
      Diff(src, &result);
      break;
  }
  if (card_only) {
    ctx.reply.Int(card);
    return;
  }
  std::sort(result.begin(), result.end(), [](const auto& a, const auto& b) {
    return a.second < b.second || (a.second == b.second && a.first < b.first);
  });
  if (store) {
    if (!result.empty() && !ctx.AdmitGrant(kNoDeadline)) return;
    StoreResult(ctx, argv[1], result,
                op == SetOp::kUnion   ? "zunionstore"
                : op == SetOp::kInter ? "zinterstore"
                                      : "zdiffstore");
    return;
  }
  ReplyElementsHeader(ctx, result.size(), withscores);
  for (const auto& [m, s] : result) ReplyElement(ctx, m, s, withscores);
}

void ZUnionStore(CommandContext& ctx) {
  ZSetOpGeneric(ctx, true, 2, SetOp::kUnion, false);
}
void ZInterStore(CommandContext& ctx) {
  ZSetOpGeneric(ctx, true, 2, SetOp::kInter, false);
}
void ZDiffStore(CommandContext& ctx) {
  ZSetOpGeneric(ctx, true, 2, SetOp::kDiff, false);
}
void ZUnion(CommandContext& ctx) {
  ZSetOpGeneric(ctx, false, 1, SetOp::kUnion, false);
}
void ZInter(CommandContext& ctx) {
  ZSetOpGeneric(ctx, false, 1, SetOp::kInter, false);
}
void ZInterCard(CommandContext& ctx) {
  ZSetOpGeneric(ctx, false, 1, SetOp::kInter, true);
}
void ZDiff(CommandContext& ctx) {
  ZSetOpGeneric(ctx, false, 1, SetOp::kDiff, false);
}

}  // namespace

// ---------------------------------------------------------------- registration

void RegisterZSetAlgebra(CommandRegistry& r) {
  using namespace spec;
  auto zdoc = [](std::string summary, std::string since, std::string complexity) {
    return Doc{std::move(summary), std::move(since), "sorted-set", std::move(complexity)};
  };
  const ArgDoc weights = Optional(Multiple(Int("weight", "WEIGHTS")));
  const ArgDoc aggregate =
      Optional(OneOf("aggregate", {Token("sum", "SUM"), Token("min", "MIN"), Token("max", "MAX")}));
  const ArgDoc withscores = Optional(Token("withscores", "WITHSCORES"));
  // ZUNION numkeys key …: the keys counted by numkeys.
  auto reader = [&](std::string name, CommandHandler h, std::string summary, std::string since,
                    std::string complexity, std::vector<ArgDoc> args) {
    return KeySpecs(
        Cmd(std::move(name), -3, kRead, h, {"read", "sortedset", "slow"},
            zdoc(std::move(summary), std::move(since), std::move(complexity)), std::move(args)),
        0, 0, 0, {KeyNumSpec({"RO", "access"}, 1)});
  };
  // ZUNIONSTORE destination numkeys key …
  auto storer = [&](std::string name, CommandHandler h, std::string summary, std::string since,
                    std::string complexity, std::vector<ArgDoc> args) {
    return KeySpecs(
        Cmd(std::move(name), -4, kWrite | kCmdDenyOom | kLease, h, {"write", "sortedset", "slow"},
            zdoc(std::move(summary), std::move(since), std::move(complexity)), std::move(args)),
        1, 1, 1, {RangeSpec({"OW", "update"}, 1), KeyNumSpec({"RO", "access"}, 2)});
  };
  const std::string union_cost =
      "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being "
      "the number of elements in the resulting sorted set.";
  const std::string inter_cost =
      "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
      "number of input sorted sets and M being the number of elements in the resulting sorted "
      "set.";
  const std::string diff_cost =
      "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N "
      "is the size of the first set, and K is the size of the result set.";
  r.Add(reader("zunion", ZUnion, "Add multiple sorted sets", "6.2.0", union_cost,
               {Int("numkeys"), Key("key", true), weights, aggregate, withscores}));
  r.Add(storer("zunionstore", ZUnionStore,
               "Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0",
               "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M "
               "being the number of elements in the resulting sorted set.",
               {Key("destination"), Int("numkeys"), KeyAt("key", 1, true), weights, aggregate}));
  r.Add(reader("zinter", ZInter, "Intersect multiple sorted sets", "6.2.0", inter_cost,
               {Int("numkeys"), Key("key", true), weights, aggregate, withscores}));
  r.Add(storer("zinterstore", ZInterStore,
               "Intersect multiple sorted sets and store the resulting sorted set in a new key",
               "2.0.0", inter_cost,
               {Key("destination"), Int("numkeys"), KeyAt("key", 1, true), weights, aggregate}));
  r.Add(reader("zdiff", ZDiff, "Subtract multiple sorted sets", "6.2.0", diff_cost,
               {Int("numkeys"), Key("key", true), withscores}));
  r.Add(storer("zdiffstore", ZDiffStore,
               "Subtract multiple sorted sets and store the resulting sorted set in a new key",
               "6.2.0", diff_cost, {Key("destination"), Int("numkeys"), KeyAt("key", 1, true)}));
  r.Add(
      reader("zintercard", ZInterCard,
             "Intersect multiple sorted sets and return the cardinality of the result", "7.0.0",
             "O(N*K) worst case with N being the smallest input sorted set, K being the number of "
             "input sorted sets.",
             {Int("numkeys"), Key("key", true), Optional(Int("limit", "LIMIT"))}));
}

}  // namespace latch::commands
