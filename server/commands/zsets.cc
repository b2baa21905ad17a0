// Sorted sets (Redis's t_zset.c), part one: adding and removing members
// (ZADD, ZINCRBY, ZREM), the point reads (ZCARD, ZSCORE, ZMSCORE, ZRANK,
// ZREVRANK, ZCOUNT, ZLEXCOUNT), ZRANDMEMBER and ZSCAN. The ranges are in
// zset_ranges.cc, the set algebra in zset_algebra.cc, the pops (ZPOPMIN,
// ZPOPMAX, ZMPOP and the blocking BZPOPMIN, BZPOPMAX, BZMPOP) in
// zset_pops.cc; the lock rule and the records of every write are in zsets.h.
//
// Sorted sets are what semaphores are made of: redis-semaphore keeps one
// member per permit, scored with the time it was taken (ZADD), drops the
// expired ones (ZREMRANGEBYSCORE key -inf now-ttl) and counts the rest
// (ZCARD); Redisson's fair lock keeps each waiter's timeout in one.
#include "server/commands/zsets.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <random>
#include <unordered_map>
#include <unordered_set>

#include "common/glob.h"

namespace latch::commands {

namespace {

constexpr std::string_view kNotFloat = "ERR value is not a valid float";

// A sorted set's entry (for its deadline) and value; false after replying
// WRONGTYPE. *z is nullptr when the key is absent.
bool FindZSet(CommandContext& ctx, std::string_view key, const Keyspace::Entry** e,
              ValueRef<ZSetValue>* z, Access access) {
  if (!FindTyped(ctx, key, ValueType::kZSet, e, access)) return false;
  z->Reset(*e);
  return true;
}

std::mt19937_64& Rng() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

}  // namespace

// ---------------------------------------------------------------- shared

void ReplyElementsHeader(CommandContext& ctx, size_t n, bool withscores) {
  // RESP3 nests each [member, score]; RESP2 flattens them (a map would lose
  // the order, which is the point of a sorted set).
  ctx.reply.Array(withscores && !ctx.reply.resp3() ? 2 * n : n);
}

void ReplyElement(CommandContext& ctx, std::string_view member, double score, bool withscores) {
  if (withscores && ctx.reply.resp3()) ctx.reply.Array(2);
  ctx.reply.Bulk(member);
  if (withscores) ctx.reply.Double(score);
}

void RemoveMembers(CommandContext& ctx, std::string_view key,
                   std::span<const std::string_view> members) {
  constexpr size_t kBatch = 64;
  Store::Atomic atomic(ctx.store);
  for (size_t i = 0; i < members.size(); i += kBatch) {
    ctx.store.Apply(aof::Op::kZRem, key, members.subspan(i, std::min(kBatch, members.size() - i)),
                    ctx.now);
  }
}

void StoreResult(CommandContext& ctx, std::string_view dst,
                 const std::vector<std::pair<std::string, double>>& elements,
                 std::string_view event) {
  constexpr size_t kBatch = 64;
  Store::Atomic atomic(ctx.store);
  // Whatever dst held (any type, any lease) goes: the result is a new key.
  const bool existed = ctx.store.Find(dst, ctx.now) != nullptr;
  if (existed) ctx.store.Delete(dst);
  Store::Overwriting overwriting(ctx.store, dst, existed);
  std::vector<std::string> scores;
  std::vector<std::string_view> words;
  for (size_t i = 0; i < elements.size(); i += kBatch) {
    const size_t n = std::min(kBatch, elements.size() - i);
    scores.clear();
    words.clear();
    for (size_t j = i; j < i + n; ++j) scores.push_back(FormatScore(elements[j].second));
    for (size_t j = 0; j < n; ++j) {
      words.push_back(scores[j]);
      words.push_back(elements[i + j].first);
    }
    ctx.store.Apply(aof::Op::kZAdd, dst, words, ctx.now);
  }
  ctx.reply.Int(static_cast<int64_t>(elements.size()));
  if (!elements.empty()) {
    ctx.Notify(kNotifyZset, event, dst);
  } else if (existed) {
    ctx.Notify(kNotifyGeneric, "del", dst);
  }
}

namespace {

// ---------------------------------------------------------------- ZADD, ZINCRBY

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member …], and
// ZINCRBY key increment member (ZADD … INCR with one pair: it reads the same
// options, so `ZINCRBY k nx m` is a syntax error, as in Redis).
//
// Parse everything first (a bad score changes nothing), then decide pair by
// pair what Redis's zsetAdd would do — against the set as the earlier pairs
// of the same command left it — and hand the Store one ZADD of the pairs
// that change something, with their final scores.
void ZAddGeneric(CommandContext& ctx, bool incr) {
  const auto& argv = ctx.argv;
  const std::string_view key = argv[1];
  bool nx = false, xx = false, gt = false, lt = false, ch = false;
  size_t idx = 2;
  for (; idx < argv.size(); ++idx) {
    const std::string_view o = argv[idx];
    if (IsWord(o, "NX")) {
      nx = true;
    } else if (IsWord(o, "XX")) {
      xx = true;
    } else if (IsWord(o, "CH")) {
      ch = true;
    } else if (IsWord(o, "INCR")) {
      incr = true;
    } else if (IsWord(o, "GT")) {
      gt = true;
    } else if (IsWord(o, "LT")) {
      lt = true;
    } else {
      break;
    }
  }
  const size_t args = argv.size() - idx;
  if (args == 0 || args % 2 != 0) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  const size_t pairs = args / 2;
  if (nx && xx) {
    ctx.reply.Error("ERR XX and NX options at the same time are not compatible");
    return;
  }
  if ((gt && nx) || (lt && nx) || (gt && lt)) {
    ctx.reply.Error("ERR GT, LT, and/or NX options at the same time are not compatible");
    return;
  }
  if (incr && pairs > 1) {
    ctx.reply.Error("ERR INCR option supports a single increment-element pair");
    return;
  }
  static thread_local std::vector<double> scores;
  scores.clear();
  for (size_t j = 0; j < pairs; ++j) {
    auto s = ParseDoubleArg(argv[idx + 2 * j]);
    if (!s) {
      ctx.reply.Error(kNotFloat);
      return;
    }
    scores.push_back(*s);
  }
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, key, &e, &z, Access::kWrite)) return;

  // The pairs that change the set, in order (a member may come twice), and
  // for a member met again, what the earlier pairs made of it.
  static thread_local std::vector<std::string_view> words;
  words.clear();
  std::string incr_text;
  std::unordered_map<std::string_view, double> seen;
  auto current = [&](std::string_view m) -> std::optional<double> {
    if (pairs > 1) {
      if (auto it = seen.find(m); it != seen.end()) return it->second;
    }
    return z != nullptr ? z->Score(m) : std::nullopt;
  };
  int64_t added = 0, updated = 0, processed = 0;
  double last = 0;
  if (z != nullptr || !xx) {
    for (size_t j = 0; j < pairs; ++j) {
      const std::string_view member = argv[idx + 2 * j + 1];
      double score = scores[j];
      std::string_view text = argv[idx + 2 * j];
      const std::optional<double> cur = current(member);
      if (cur) {
        if (nx) continue;
        if (incr) {
          score += *cur;
          if (std::isnan(score)) {
            ctx.reply.Error("ERR resulting score is not a number (NaN)");
            return;
          }
          incr_text = FormatScore(score);
          text = incr_text;
        }
        if ((lt && score >= *cur) || (gt && score <= *cur)) continue;
        ++processed;
        last = score;
        if (score == *cur) continue;
        ++updated;
      } else if (!xx) {
        ++added;
        ++processed;
        last = score;
      } else {
        continue;
      }
      words.push_back(text);
      words.push_back(member);
      if (pairs > 1) seen[member] = score;
    }
  }
  if (!words.empty()) {
    if (!ctx.AdmitGrant(e != nullptr ? e->deadline : kNoDeadline)) return;
    ctx.store.Apply(aof::Op::kZAdd, key, words, ctx.now);
  }
  if (incr) {
    if (processed > 0) {
      ctx.reply.Double(last);
    } else {
      ctx.reply.Null();
    }
  } else {
    ctx.reply.Int(ch ? added + updated : added);
  }
  // A ZADD that changed nothing sends nothing; ZINCRBY and ZADD INCR are
  // "zincr".
  if (!words.empty()) ctx.Notify(kNotifyZset, incr ? "zincr" : "zadd", key);
}

void ZAdd(CommandContext& ctx) {
  ZAddGeneric(ctx, false);
}

void ZIncrBy(CommandContext& ctx) {
  ZAddGeneric(ctx, true);
}

// ZREM key member [member …]: the members present go (the key with the
// last); the count of those removed.
void ZRem(CommandContext& ctx) {
  const std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, key, &e, &z, Access::kWrite)) return;
  if (z == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  std::vector<std::string_view> gone;
  std::unordered_set<std::string_view> seen;
  for (size_t j = 2; j < ctx.argv.size() && gone.size() < z->size(); ++j) {
    const std::string_view m = ctx.argv[j];
    if (z->Score(m) && seen.insert(m).second) gone.push_back(m);
  }
  if (!gone.empty()) {
    ctx.store.Apply(aof::Op::kZRem, key, gone, ctx.now);
    NotifyCollection(ctx, kNotifyZset, "zrem", key);
  }
  ctx.reply.Int(static_cast<int64_t>(gone.size()));
}

// ---------------------------------------------------------------- reads

void ZCard(CommandContext& ctx) {
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, ctx.argv[1], &e, &z, Access::kRead)) return;
  ctx.reply.Int(z != nullptr ? static_cast<int64_t>(z->size()) : 0);
}

void ZScore(CommandContext& ctx) {
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, ctx.argv[1], &e, &z, Access::kRead)) return;
  std::optional<double> s = z != nullptr ? z->Score(ctx.argv[2]) : std::nullopt;
  if (s) {
    ctx.reply.Double(*s);
  } else {
    ctx.reply.Null();
  }
}

void ZMScore(CommandContext& ctx) {
  // A missing key reads as an empty set: a nil per member.
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, ctx.argv[1], &e, &z, Access::kRead)) return;
  ctx.reply.Array(ctx.argv.size() - 2);
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    std::optional<double> s = z != nullptr ? z->Score(ctx.argv[j]) : std::nullopt;
    if (s) {
      ctx.reply.Double(*s);
    } else {
      ctx.reply.Null();
    }
  }
}

void ZRankGeneric(CommandContext& ctx, bool reverse) {
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, ctx.argv[1], &e, &z, Access::kRead)) return;
  std::optional<size_t> r = z != nullptr ? z->Rank(ctx.argv[2], reverse) : std::nullopt;
  if (r) {
    ctx.reply.Int(static_cast<int64_t>(*r));
  } else {
    ctx.reply.Null();
  }
}

void ZRank(CommandContext& ctx) {
  ZRankGeneric(ctx, false);
}

void ZRevRank(CommandContext& ctx) {
  ZRankGeneric(ctx, true);
}

// ZCOUNT key min max: O(log N) on a skiplist (two ranks).
void ZCount(CommandContext& ctx) {
  auto range = ParseScoreRange(ctx.argv[2], ctx.argv[3]);
  if (!range) {
    ctx.reply.Error("ERR min or max is not a float");
    return;
  }
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, ctx.argv[1], &e, &z, Access::kRead)) return;
  ctx.reply.Int(z != nullptr ? static_cast<int64_t>(z->CountInRange(*range)) : 0);
}

void ZLexCount(CommandContext& ctx) {
  auto range = ParseLexRange(ctx.argv[2], ctx.argv[3]);
  if (!range) {
    ctx.reply.Error("ERR min or max not valid string range item");
    return;
  }
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, ctx.argv[1], &e, &z, Access::kRead)) return;
  ctx.reply.Int(z != nullptr ? static_cast<int64_t>(z->CountInLex(*range)) : 0);
}

// ---------------------------------------------------------------- ZRANDMEMBER

// ZRANDMEMBER key count [WITHSCORES] (Redis's zrandmemberWithCountCommand):
// a negative count may repeat members and keeps the draw order; a positive
// one returns distinct members — the whole set when it asks for as many.
void ZRandMemberWithCount(CommandContext& ctx, int64_t l, bool withscores) {
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, ctx.argv[1], &e, &z, Access::kRead)) return;
  if (z == nullptr || l == 0) {
    ctx.reply.Array(0);
    return;
  }
  const size_t size = z->size();
  const bool uniq = l > 0;
  const auto count = static_cast<uint64_t>(uniq ? l : -l);
  auto& rng = Rng();
  if (!uniq || count == 1) {
    ReplyElementsHeader(ctx, count, withscores);
    for (uint64_t i = 0; i < count; ++i) {
      ZSetValue::Iter it = z->Random(rng);
      ReplyElement(ctx, it.member(), it.score(), withscores);
    }
    return;
  }
  ReplyElementsHeader(ctx, std::min<uint64_t>(count, size), withscores);
  if (count >= size) {
    // The whole set, highest first: Redis walks a sorted set backwards here.
    for (ZSetValue::Iter it = z->Last(); it.valid(); it.Prev()) {
      ReplyElement(ctx, it.member(), it.score(), withscores);
    }
    return;
  }
  // Distinct ranks: when the set is not much larger than the count, drop
  // random ones from all of them (Redis's CASE 3); else draw until enough
  // (CASE 4). Either way each subset is equally likely.
  std::vector<size_t> ranks;
  if (count * 3 > size) {
    ranks.resize(size);
    for (size_t i = 0; i < size; ++i) ranks[i] = i;
    while (ranks.size() > count) {
      const size_t victim = rng() % ranks.size();
      ranks[victim] = ranks.back();
      ranks.pop_back();
    }
  } else {
    std::unordered_set<size_t> taken;
    while (ranks.size() < count) {
      const size_t r = rng() % size;
      if (taken.insert(r).second) ranks.push_back(r);
    }
  }
  if (z->packed()) {
    // (A listpack answers in its own order, as Redis's lpRandomPairsUnique.)
    std::sort(ranks.begin(), ranks.end());
    ZSetValue::Iter it = z->First();
    size_t at = 0;
    for (size_t r : ranks) {
      it.Skip(r - at, false);
      at = r;
      ReplyElement(ctx, it.member(), it.score(), withscores);
    }
    return;
  }
  for (size_t r : ranks) {
    ZSetValue::Iter it = z->AtRank(r);
    ReplyElement(ctx, it.member(), it.score(), withscores);
  }
}

void ZRandMember(CommandContext& ctx) {
  if (ctx.argv.size() >= 3) {
    auto l = IntArgOrReply(ctx, ctx.argv[2]);
    if (!l) return;
    if (*l == INT64_MIN) {
      ctx.reply.Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
      return;
    }
    if (ctx.argv.size() > 4 || (ctx.argv.size() == 4 && !IsWord(ctx.argv[3], "WITHSCORES"))) {
      ctx.reply.Error(kSyntaxError);
      return;
    }
    const bool withscores = ctx.argv.size() == 4;
    if (withscores && (*l < -INT64_MAX / 2 || *l > INT64_MAX / 2)) {
      ctx.reply.Error("ERR value is out of range");
      return;
    }
    ZRandMemberWithCount(ctx, *l, withscores);
    return;
  }
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, ctx.argv[1], &e, &z, Access::kRead)) return;
  if (z == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(z->Random(Rng()).member());
}

// ---------------------------------------------------------------- ZSCAN

// The cursor as Redis's parseScanCursorOrReply reads it (strtoul of the C
// string: no leading space, nothing after; "-1" wraps).
std::optional<uint64_t> ParseCursor(std::string_view arg) {
  std::string s(UpToNul(arg));
  if (!s.empty() && std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return static_cast<uint64_t>(v);
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]: a listpack in one step
// (cursor 0); a skiplist by its Dict's cursor. Scores as text (ScanScoreText).
void ZScan(CommandContext& ctx) {
  auto cursor = ParseCursor(ctx.argv[2]);
  if (!cursor) {
    ctx.reply.Error("ERR invalid cursor");
    return;
  }
  const Keyspace::Entry* e;
  ValueRef<ZSetValue> z;
  if (!FindZSet(ctx, ctx.argv[1], &e, &z, Access::kRead)) return;
  if (z == nullptr) {
    ctx.reply.Array(2);
    ctx.reply.Bulk("0");
    ctx.reply.Array(0);
    return;
  }
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;
  for (size_t j = 3; j < ctx.argv.size(); j += 2) {
    const bool has_value = j + 1 < ctx.argv.size();
    if (IsWord(ctx.argv[j], "COUNT") && has_value) {
      auto n = IntArgOrReply(ctx, ctx.argv[j + 1]);
      if (!n) return;
      if (*n < 1) {
        ctx.reply.Error(kSyntaxError);
        return;
      }
      count = *n;
    } else if (IsWord(ctx.argv[j], "MATCH") && has_value) {
      pattern = ctx.argv[j + 1];
      use_pattern = pattern != "*";
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  std::vector<std::pair<std::string_view, double>> found;
  if (z->packed()) {
    *cursor = z->Scan(0, [&](std::string_view m, double s) { found.emplace_back(m, s); });
  } else {
    // At most ten times COUNT cursor steps per call (Redis doubles COUNT for
    // member/score pairs and counts both).
    int64_t steps = count > INT64_MAX / 20 ? INT64_MAX : count * 20;
    do {
      *cursor = z->Scan(*cursor, [&](std::string_view m, double s) { found.emplace_back(m, s); });
    } while (*cursor != 0 && steps-- > 0 && static_cast<int64_t>(found.size()) < count);
  }
  if (use_pattern) {
    std::erase_if(found, [&](const auto& p) { return !GlobMatch(pattern, p.first); });
  }
  ctx.reply.Array(2);
  ctx.reply.Bulk(std::to_string(*cursor));
  ctx.reply.Array(2 * found.size());
  for (const auto& [m, s] : found) {
    ctx.reply.Bulk(m);
    ctx.reply.Bulk(ScanScoreText(s, z->packed()));
  }
}

}  // namespace

// ---------------------------------------------------------------- registration

void RegisterZSets(CommandRegistry& r) {
  using namespace spec;
  auto zdoc = [](std::string summary, std::string since, std::string complexity) {
    return Doc{std::move(summary), std::move(since), "sorted-set", std::move(complexity)};
  };
  auto one_key = [](CommandSpec c, std::vector<std::string> flags) {
    return Keys(std::move(c), 1, 1, 1, std::move(flags));
  };
  auto nondeterministic = [](CommandSpec c) {
    c.tips = {"nondeterministic_output"};
    return c;
  };
  r.Add(one_key(
      Cmd("zadd", -4, kWrite | kCmdDenyOom | kFast | kLease, ZAdd, {"write", "sortedset", "fast"},
          zdoc("Add one or more members to a sorted set, or update its score if it already exists",
               "1.2.0",
               "O(log(N)) for each item added, where N is the number of elements in the sorted "
               "set."),
          {Key("key"),
           Optional(OneOf("condition", {Token("nx", "NX"), Token("xx", "XX")}), "3.0.2"),
           Optional(OneOf("comparison", {Token("gt", "GT"), Token("lt", "LT")}), "6.2.0"),
           Optional(Token("change", "CH"), "3.0.2"), Optional(Token("increment", "INCR"), "3.0.2"),
           Multiple(Block("score_member", {Double("score"), Str("member")}))}),
      {"RW", "update"}));
  r.Add(one_key(Cmd("zincrby", 4, kWrite | kCmdDenyOom | kFast | kLease, ZIncrBy,
                    {"write", "sortedset", "fast"},
                    zdoc("Increment the score of a member in a sorted set", "1.2.0",
                         "O(log(N)) where N is the number of elements in the sorted set."),
                    {Key("key"), Int("increment"), Str("member")}),
                {"RW", "access", "update"}));
  r.Add(one_key(Cmd("zrem", -3, kWrite | kFast, ZRem, {"write", "sortedset", "fast"},
                    zdoc("Remove one or more members from a sorted set", "1.2.0",
                         "O(M*log(N)) with N being the number of elements in the sorted set and M "
                         "the number of elements to be removed."),
                    {Key("key"), Multiple(Str("member"))}),
                {"RW", "delete"}));
  r.Add(
      one_key(Cmd("zcard", 2, kRead | kFast, ZCard, {"read", "sortedset", "fast"},
                  zdoc("Get the number of members in a sorted set", "1.2.0", "O(1)"), {Key("key")}),
              {"RO"}));
  r.Add(one_key(
      Cmd("zscore", 3, kRead | kFast, ZScore, {"read", "sortedset", "fast"},
          zdoc("Get the score associated with the given member in a sorted set", "1.2.0", "O(1)"),
          {Key("key"), Str("member")}),
      {"RO", "access"}));
  r.Add(one_key(Cmd("zmscore", -3, kRead | kFast, ZMScore, {"read", "sortedset", "fast"},
                    zdoc("Get the score associated with the given members in a sorted set", "6.2.0",
                         "O(N) where N is the number of members being requested."),
                    {Key("key"), Multiple(Str("member"))}),
                {"RO", "access"}));
  r.Add(one_key(Cmd("zrank", 3, kRead | kFast, ZRank, {"read", "sortedset", "fast"},
                    zdoc("Determine the index of a member in a sorted set", "2.0.0", "O(log(N))"),
                    {Key("key"), Str("member")}),
                {"RO", "access"}));
  r.Add(one_key(Cmd("zrevrank", 3, kRead | kFast, ZRevRank, {"read", "sortedset", "fast"},
                    zdoc("Determine the index of a member in a sorted set, with scores ordered "
                         "from high to low",
                         "2.0.0", "O(log(N))"),
                    {Key("key"), Str("member")}),
                {"RO", "access"}));
  r.Add(
      one_key(Cmd("zcount", 4, kRead | kFast, ZCount, {"read", "sortedset", "fast"},
                  zdoc("Count the members in a sorted set with scores within the given values",
                       "2.0.0", "O(log(N)) with N being the number of elements in the sorted set."),
                  {Key("key"), Double("min"), Double("max")}),
              {"RO", "access"}));
  r.Add(one_key(
      Cmd("zlexcount", 4, kRead | kFast, ZLexCount, {"read", "sortedset", "fast"},
          zdoc("Count the number of members in a sorted set between a given lexicographical range",
               "2.8.9", "O(log(N)) with N being the number of elements in the sorted set."),
          {Key("key"), Str("min"), Str("max")}),
      {"RO", "access"}));
  r.Add(nondeterministic(one_key(
      Cmd("zscan", -3, kRead, ZScan, {"read", "sortedset", "slow"},
          zdoc("Incrementally iterate sorted sets elements and associated scores", "2.8.0",
               "O(1) for every call. O(N) for a complete iteration, including enough command "
               "calls for the cursor to return back to 0. N is the number of elements inside the "
               "collection.."),
          {Key("key"), Int("cursor"), Optional(Pattern("pattern", "MATCH")),
           Optional(Int("count", "COUNT"))}),
      {"RO", "access"})));
  r.Add(nondeterministic(one_key(
      Cmd("zrandmember", -2, kRead, ZRandMember, {"read", "sortedset", "slow"},
          zdoc("Get one or multiple random elements from a sorted set", "6.2.0",
               "O(N) where N is the number of elements returned"),
          {Key("key"), Optional(Block("options", {Int("count"),
                                                  Optional(Token("withscores", "WITHSCORES"))}))}),
      {"RO", "access"})));
  RegisterZSetPops(r);
  RegisterZSetRanges(r);
  RegisterZSetAlgebra(r);
}

}  // namespace latch::commands
