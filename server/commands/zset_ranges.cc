// Sorted sets, part two: ranges. ZRANGE with BYSCORE, BYLEX, REV, LIMIT and
// WITHSCORES; its older spellings (ZRANGEBYSCORE, ZREVRANGEBYSCORE,
// ZRANGEBYLEX, ZREVRANGEBYLEX, ZREVRANGE); ZRANGESTORE; and the range
// removals (ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX).
//
// One parser serves them all, as Redis's zrangeGenericCommand does, so the
// options, their order of checks and their errors are the same whichever
// name the client used:
//   ZRANGE key min max [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
// A rank range counts from 0 (negative from the end); a score range is
// "1", "(1" (exclusive), "-inf", "+inf"; a lex range "[a", "(a", "-", "+"
// (meaningful when all scores are equal). With REV the range is given
// high end first. LIMIT's offset skips that many elements of the range (a
// negative offset skips them all); a negative count means all.
//
// Semaphores expire stale permits with ZREMRANGEBYSCORE key -inf now-ttl,
// which this file logs as the ZREM of the members that went.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "server/commands/zsets.h"

namespace latch::commands {

namespace {

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

// The elements a range selects, in reply order. Member views point into the
// set, which does not change while they are used.
using Picked = std::vector<std::pair<std::string_view, double>>;

void PickByRank(const ZSetValue& z, int64_t start, int64_t end, bool reverse, Picked* out) {
  const auto llen = static_cast<int64_t>(z.size());
  if (start < 0) start += llen;
  if (end < 0) end += llen;
  if (start < 0) start = 0;
  if (start > end || start >= llen) return;
  if (end >= llen) end = llen - 1;
  const int64_t n = end - start + 1;
  ZSetValue::Iter it = z.AtRank(static_cast<size_t>(reverse ? llen - 1 - start : start));
  for (int64_t i = 0; i < n && it.valid(); ++i) {
    out->emplace_back(it.member(), it.score());
    reverse ? it.Prev() : it.Next();
  }
}

// Walks from `it` (the first element of the range in the walk's direction)
// past `offset` elements, then takes up to `limit` (negative: no limit)
// while `inside` holds.
template <typename Inside>
void PickFrom(ZSetValue::Iter it, int64_t offset, int64_t limit, bool reverse, Inside inside,
              Picked* out) {
  if (offset < 0) return;  // Redis's `while (ln && offset--)` walks off the end
  it.Skip(static_cast<size_t>(offset), reverse);
  for (int64_t left = limit; it.valid() && left != 0; --left) {
    if (!inside(it)) break;
    out->emplace_back(it.member(), it.score());
    reverse ? it.Prev() : it.Next();
  }
}

// ZRANGE and every other range reader (`store`: ZRANGESTORE, whose first
// argument is the destination).
void ZRangeGeneric(CommandContext& ctx, size_t first, bool store, RangeType type, Direction dir) {
  const auto& argv = ctx.argv;
  const std::string_view key = argv[first];
  size_t minidx = first + 1, maxidx = first + 2;
  bool withscores = false;
  int64_t offset = 0, limit = -1;
  for (size_t j = first + 3; j < argv.size(); ++j) {
    const size_t left = argv.size() - j - 1;
    if (!store && IsWord(argv[j], "WITHSCORES")) {
      withscores = true;
    } else if (IsWord(argv[j], "LIMIT") && left >= 2) {
      auto o = IntArgOrReply(ctx, argv[j + 1]);
      if (!o) return;
      auto l = IntArgOrReply(ctx, argv[j + 2]);
      if (!l) return;
      offset = *o;
      limit = *l;
      j += 2;
    } else if (dir == Direction::kAuto && IsWord(argv[j], "REV")) {
      dir = Direction::kReverse;
    } else if (type == RangeType::kAuto && IsWord(argv[j], "BYLEX")) {
      type = RangeType::kLex;
    } else if (type == RangeType::kAuto && IsWord(argv[j], "BYSCORE")) {
      type = RangeType::kScore;
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  if (dir == Direction::kAuto) dir = Direction::kForward;
  if (type == RangeType::kAuto) type = RangeType::kRank;
  const bool reverse = dir == Direction::kReverse;
  if (limit != -1 && type == RangeType::kRank) {
    ctx.reply.Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
    return;
  }
  if (withscores && type == RangeType::kLex) {
    ctx.reply.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    return;
  }
  // A reversed score or lex range is given as max, min.
  if (reverse && type != RangeType::kRank) std::swap(minidx, maxidx);

  int64_t start = 0, end = 0;
  std::optional<ScoreRange> score_range;
  std::optional<LexRange> lex_range;
  switch (type) {
    case RangeType::kAuto:
    case RangeType::kRank: {
      auto s = IntArgOrReply(ctx, argv[minidx]);
      if (!s) return;
      auto e = IntArgOrReply(ctx, argv[maxidx]);
      if (!e) return;
      start = *s;
      end = *e;
      break;
    }
    case RangeType::kScore:
      score_range = ParseScoreRange(argv[minidx], argv[maxidx]);
      if (!score_range) {
        ctx.reply.Error("ERR min or max is not a float");
        return;
      }
      break;
    case RangeType::kLex:
      lex_range = ParseLexRange(argv[minidx], argv[maxidx]);
      if (!lex_range) {
        ctx.reply.Error("ERR min or max not valid string range item");
        return;
      }
      break;
  }

  ValueRef<ZSetValue> z;
  if (!FindAs(ctx, key, &z, Access::kRead)) return;
  static thread_local Picked picked;
  picked.clear();
  if (z != nullptr) {
    switch (type) {
      case RangeType::kAuto:
      case RangeType::kRank:
        PickByRank(*z, start, end, reverse, &picked);
        break;
      case RangeType::kScore: {
        const ScoreRange& r = *score_range;
        if (offset > 0 && static_cast<uint64_t>(offset) >= z->size()) break;
        PickFrom(
            reverse ? z->LastInRange(r) : z->FirstInRange(r), offset, limit, reverse,
            [&](const ZSetValue::Iter& it) {
              return reverse ? r.AboveMin(it.score()) : r.BelowMax(it.score());
            },
            &picked);
        break;
      }
      case RangeType::kLex: {
        const LexRange& r = *lex_range;
        PickFrom(
            reverse ? z->LastInLex(r) : z->FirstInLex(r), offset, limit, reverse,
            [&](const ZSetValue::Iter& it) {
              return reverse ? r.AboveMin(it.member()) : r.BelowMax(it.member());
            },
            &picked);
        break;
      }
    }
  }

  if (store) {
    // The destination gets the range (or goes, when it is empty).
    std::vector<std::pair<std::string, double>> elements;
    elements.reserve(picked.size());
    for (const auto& [m, s] : picked) elements.emplace_back(std::string(m), s);
    // A reversed range is stored all the same: a sorted set has one order.
    if (reverse) std::reverse(elements.begin(), elements.end());
    if (!elements.empty() && !ctx.AdmitGrant(kNoDeadline)) return;
    StoreResult(ctx, argv[1], elements, "zrangestore");
    return;
  }
  ReplyElementsHeader(ctx, picked.size(), withscores);
  for (const auto& [m, s] : picked) ReplyElement(ctx, m, s, withscores);
}

void ZRange(CommandContext& ctx) {
  ZRangeGeneric(ctx, 1, false, RangeType::kAuto, Direction::kAuto);
}
void ZRangeStore(CommandContext& ctx) {
  ZRangeGeneric(ctx, 2, true, RangeType::kAuto, Direction::kAuto);
}
void ZRevRange(CommandContext& ctx) {
  ZRangeGeneric(ctx, 1, false, RangeType::kRank, Direction::kReverse);
}
void ZRangeByScore(CommandContext& ctx) {
  ZRangeGeneric(ctx, 1, false, RangeType::kScore, Direction::kForward);
}
void ZRevRangeByScore(CommandContext& ctx) {
  ZRangeGeneric(ctx, 1, false, RangeType::kScore, Direction::kReverse);
}
void ZRangeByLex(CommandContext& ctx) {
  ZRangeGeneric(ctx, 1, false, RangeType::kLex, Direction::kForward);
}
void ZRevRangeByLex(CommandContext& ctx) {
  ZRangeGeneric(ctx, 1, false, RangeType::kLex, Direction::kReverse);
}

// ZREMRANGEBYRANK / ZREMRANGEBYSCORE / ZREMRANGEBYLEX key a b: the members
// in the range go, logged as ZREM of them (batches of 64, one
// transaction); the count of those removed. A release: never refused.
void ZRemRangeGeneric(CommandContext& ctx, RangeType type) {
  const std::string_view key = ctx.argv[1];
  int64_t start = 0, end = 0;
  std::optional<ScoreRange> score_range;
  std::optional<LexRange> lex_range;
  if (type == RangeType::kRank) {
    auto s = IntArgOrReply(ctx, ctx.argv[2]);
    if (!s) return;
    auto e = IntArgOrReply(ctx, ctx.argv[3]);
    if (!e) return;
    start = *s;
    end = *e;
  } else if (type == RangeType::kScore) {
    score_range = ParseScoreRange(ctx.argv[2], ctx.argv[3]);
    if (!score_range) {
      ctx.reply.Error("ERR min or max is not a float");
      return;
    }
  } else {
    lex_range = ParseLexRange(ctx.argv[2], ctx.argv[3]);
    if (!lex_range) {
      ctx.reply.Error("ERR min or max not valid string range item");
      return;
    }
  }
  ValueRef<ZSetValue> z;
  if (!FindAs(ctx, key, &z, Access::kWrite)) return;
  if (z == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  Picked picked;
  if (type == RangeType::kRank) {
    PickByRank(*z, start, end, false, &picked);
  } else if (type == RangeType::kScore) {
    const ScoreRange& r = *score_range;
    PickFrom(
        z->FirstInRange(r), 0, -1, false,
        [&](const ZSetValue::Iter& it) { return r.BelowMax(it.score()); }, &picked);
  } else {
    const LexRange& r = *lex_range;
    PickFrom(
        z->FirstInLex(r), 0, -1, false,
        [&](const ZSetValue::Iter& it) { return r.BelowMax(it.member()); }, &picked);
  }
  // The members are copied out: the removal changes the set they point into.
  std::vector<std::string> owned;
  owned.reserve(picked.size());
  for (const auto& p : picked) owned.emplace_back(p.first);
  std::vector<std::string_view> members(owned.begin(), owned.end());
  if (!members.empty()) {
    RemoveMembers(ctx, key, members);
    constexpr std::string_view kEvents[] = {"zremrangebyrank", "zremrangebyscore",
                                            "zremrangebylex"};
    NotifyCollection(ctx, kNotifyZset,
                     type == RangeType::kRank    ? kEvents[0]
                     : type == RangeType::kScore ? kEvents[1]
                                                 : kEvents[2],
                     key);
  }
  ctx.reply.Int(static_cast<int64_t>(members.size()));
}

void ZRemRangeByRank(CommandContext& ctx) {
  ZRemRangeGeneric(ctx, RangeType::kRank);
}
void ZRemRangeByScore(CommandContext& ctx) {
  ZRemRangeGeneric(ctx, RangeType::kScore);
}
void ZRemRangeByLex(CommandContext& ctx) {
  ZRemRangeGeneric(ctx, RangeType::kLex);
}

}  // namespace

// ---------------------------------------------------------------- registration

void RegisterZSetRanges(CommandRegistry& r) {
  using namespace spec;
  auto zdoc = [](std::string summary, std::string since, std::string complexity) {
    return Doc{std::move(summary), std::move(since), "sorted-set", std::move(complexity)};
  };
  auto read = [&](std::string name, CommandHandler h, std::string summary, std::string since,
                  std::string complexity, std::vector<ArgDoc> args) {
    return Keys(
        Cmd(std::move(name), -4, kRead, h, {"read", "sortedset", "slow"},
            zdoc(std::move(summary), std::move(since), std::move(complexity)), std::move(args)),
        1, 1, 1, {"RO", "access"});
  };
  const ArgDoc limit = Optional(Block("offset_count", {Int("offset"), Int("count")}, "LIMIT"));
  const ArgDoc withscores = Optional(Token("withscores", "WITHSCORES"));
  const ArgDoc sortby = OneOf("sortby", {Token("byscore", "BYSCORE"), Token("bylex", "BYLEX")});
  const std::string returned =
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements returned.";
  const std::string being_returned =
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements being returned. If M is constant (e.g. always asking for the first 10 elements "
      "with LIMIT), you can consider it O(log(N)).";
  const std::string removed =
      "O(log(N)+M) with N being the number of elements in the sorted set and M the number of "
      "elements removed by the operation.";
  r.Add(read("zrange", ZRange, "Return a range of members in a sorted set", "1.2.0", returned,
             {Key("key"), Str("start"), Str("stop"), Optional(sortby, "6.2.0"),
              Optional(Token("rev", "REV"), "6.2.0"),
              Optional(Block("offset_count", {Int("offset"), Int("count")}, "LIMIT"), "6.2.0"),
              withscores}));
  r.Add(KeySpecs(Cmd("zrangestore", -5, kWrite | kCmdDenyOom | kLease, ZRangeStore,
                     {"write", "sortedset", "slow"},
                     zdoc("Store a range of members from sorted set into another key", "6.2.0",
                          "O(log(N)+M) with N being the number of elements in the sorted set and "
                          "M the number of elements stored into the destination key."),
                     {Key("dst"), KeyAt("src", 1), Str("min"), Str("max"), Optional(sortby),
                      Optional(Token("rev", "REV")), limit}),
                 1, 2, 1, {RangeSpec({"OW", "update"}, 1), RangeSpec({"RO", "access"}, 2)}));
  r.Add(read("zrangebyscore", ZRangeByScore, "Return a range of members in a sorted set, by score",
             "1.0.5", being_returned,
             {Key("key"), Double("min"), Double("max"),
              Optional(Token("withscores", "WITHSCORES"), "2.0.0"), limit}));
  r.Add(read("zrevrangebyscore", ZRevRangeByScore,
             "Return a range of members in a sorted set, by score, with scores ordered from high "
             "to low",
             "2.2.0", being_returned,
             {Key("key"), Double("max"), Double("min"), withscores, limit}));
  r.Add(read("zrangebylex", ZRangeByLex,
             "Return a range of members in a sorted set, by lexicographical range", "2.8.9",
             being_returned, {Key("key"), Str("min"), Str("max"), limit}));
  r.Add(read("zrevrangebylex", ZRevRangeByLex,
             "Return a range of members in a sorted set, by lexicographical range, ordered from "
             "higher to lower strings.",
             "2.8.9", being_returned, {Key("key"), Str("max"), Str("min"), limit}));
  r.Add(read("zrevrange", ZRevRange,
             "Return a range of members in a sorted set, by index, with scores ordered from high "
             "to low",
             "1.2.0", returned, {Key("key"), Int("start"), Int("stop"), withscores}));
  auto rem = [&](std::string name, CommandHandler h, std::string summary, std::string since,
                 std::vector<ArgDoc> args) {
    return Keys(Cmd(std::move(name), 4, kWrite, h, {"write", "sortedset", "slow"},
                    zdoc(std::move(summary), std::move(since), removed), std::move(args)),
                1, 1, 1, {"RW", "delete"});
  };
  r.Add(rem("zremrangebylex", ZRemRangeByLex,
            "Remove all members in a sorted set between the given lexicographical range", "2.8.9",
            {Key("key"), Str("min"), Str("max")}));
  r.Add(rem("zremrangebyrank", ZRemRangeByRank,
            "Remove all members in a sorted set within the given indexes", "2.0.0",
            {Key("key"), Int("start"), Int("stop")}));
  r.Add(rem("zremrangebyscore", ZRemRangeByScore,
            "Remove all members in a sorted set within the given scores", "1.2.0",
            {Key("key"), Double("min"), Double("max")}));
}

}  // namespace latch::commands
