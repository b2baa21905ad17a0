// The hash family: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL, HKEYS, HVALS,
// HLEN, HSTRLEN, HEXISTS, HDEL, HINCRBY, HINCRBYFLOAT, HRANDFIELD, HSCAN —
// Redis 7.0's, reply for reply (t_hash.c).
//
// Lock-adjacent uses: a reentrant lock counts its holds per owner in a hash
// (Redisson's RLock: `HINCRBY lock owner 1`, HDEL when the count reaches
// zero), a read-write lock keeps its mode in a field.
//
// The lock rule for these writes: a write that stores or changes a field
// (HSET, HSETNX, HMSET, HINCRBY, HINCRBYFLOAT) may hand a lock to someone
// (a reentrant hold, a permit), so it is flagged kLease and asks
// ctx.AdmitGrant with the key's own deadline before it applies: the restart
// quarantine refuses it as it refuses SET. HDEL only removes: a release,
// never refused.
//
// Every write reaches the hash through Store::Apply with its effect as the
// record (types/hash.h): HINCRBY and HINCRBYFLOAT are logged as the HSET of
// their result, so a replay needs no arithmetic and gives the same digits.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "server/commands/common.h"
#include "server/commands/scan.h"
#include "server/types/hash.h"

namespace latch::commands {

namespace {

std::mt19937_64& Rng() {
  static std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

// The key's deadline for AdmitGrant: a write keeps the hash's lease.
int64_t DeadlineOf(const Keyspace::Entry* e) {
  return e != nullptr ? e->deadline : kNoDeadline;
}

// Looks `key` up for a write: false after replying WRONGTYPE.
bool FindForWrite(CommandContext& ctx, std::string_view key, const Keyspace::Entry** e) {
  return FindTyped(ctx, key, ValueType::kHash, e, Access::kWrite);
}

ValueRef<HashValue> AsHash(const Keyspace::Entry* e) {
  return ValueRef<HashValue>(e);
}

// Applies `HSET key field value` (one pair).
void ApplySet(CommandContext& ctx, std::string_view key, std::string_view field,
              std::string_view value) {
  const std::string_view rest[] = {field, value};
  ctx.store.Apply(aof::Op::kHSet, key, rest, ctx.now);
}

}  // namespace

// ---------------------------------------------------------------- writes

// HSET key field value [field value …] → fields added. HMSET (deprecated)
// is the same write, answered OK.
void HSet(CommandContext& ctx) {
  if (ctx.argv.size() % 2 == 1) {
    ctx.reply.Error("ERR wrong number of arguments for '" + ctx.name() + "' command");
    return;
  }
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindForWrite(ctx, key, &e)) return;
  if (!ctx.AdmitGrant(DeadlineOf(e))) return;
  Applied a = ctx.store.Apply(aof::Op::kHSet, key, ctx.argv.subspan(2), ctx.now);
  if (ctx.name() == "hmset") {
    ctx.reply.Ok();
  } else {
    ctx.reply.Int(a.count);
  }
  // "hset" even when every field was there already (HMSET too): Redis
  // notifies every HSET that got this far, after its reply (the order a
  // RESP3 client subscribed to its own keys sees).
  ctx.Notify(kNotifyHash, "hset", key);
}

void HSetNx(CommandContext& ctx) {
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindForWrite(ctx, key, &e)) return;
  if (e != nullptr && AsHash(e)->Contains(ctx.argv[2])) {
    ctx.reply.Int(0);
    return;
  }
  if (!ctx.AdmitGrant(DeadlineOf(e))) return;
  ApplySet(ctx, key, ctx.argv[2], ctx.argv[3]);
  ctx.reply.Int(1);
  ctx.Notify(kNotifyHash, "hset", key);
}

void HDel(CommandContext& ctx) {
  // A release: never refused. The key goes with its last field.
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindForWrite(ctx, key, &e)) return;
  if (e == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  Applied a = ctx.store.Apply(aof::Op::kHDel, key, ctx.argv.subspan(2), ctx.now);
  if (a.count > 0) NotifyCollection(ctx, kNotifyHash, "hdel", key);
  ctx.reply.Int(a.count);
}

void HIncrBy(CommandContext& ctx) {
  // HINCRBY key field increment: the increment first, then the key (as
  // Redis); a missing field counts from 0. Logged as HSET of the result.
  auto incr = IntArgOrReply(ctx, ctx.argv[3]);
  if (!incr) return;
  std::string_view key = ctx.argv[1], field = ctx.argv[2];
  const Keyspace::Entry* e;
  if (!FindForWrite(ctx, key, &e)) return;
  int64_t value = 0;
  if (e != nullptr) {
    if (auto old = AsHash(e)->Get(field)) {
      auto v = ParseInt64(*old);
      if (!v) {
        ctx.reply.Error("ERR hash value is not an integer");
        return;
      }
      value = *v;
    }
  }
  if ((*incr < 0 && value < 0 && *incr < std::numeric_limits<int64_t>::min() - value) ||
      (*incr > 0 && value > 0 && *incr > std::numeric_limits<int64_t>::max() - value)) {
    ctx.reply.Error("ERR increment or decrement would overflow");
    return;
  }
  value += *incr;
  if (!ctx.AdmitGrant(DeadlineOf(e))) return;
  ApplySet(ctx, key, field, std::to_string(value));
  ctx.reply.Int(value);
  ctx.Notify(kNotifyHash, "hincrby", key);
}

void HIncrByFloat(CommandContext& ctx) {
  // As INCRBYFLOAT, in long double, with Redis's errors in Redis's order:
  // the increment (a float, and not NaN or infinite), the key, the stored
  // value, the sum. The result's text is what the log's HSET stores.
  auto incr = ParseLongDouble(ctx.argv[3]);
  if (!incr) {
    ctx.reply.Error("ERR value is not a valid float");
    return;
  }
  if (std::isnan(*incr) || std::isinf(*incr)) {
    ctx.reply.Error("ERR value is NaN or Infinity");
    return;
  }
  std::string_view key = ctx.argv[1], field = ctx.argv[2];
  const Keyspace::Entry* e;
  if (!FindForWrite(ctx, key, &e)) return;
  long double value = 0;
  if (e != nullptr) {
    if (auto old = AsHash(e)->Get(field)) {
      auto v = ParseLongDouble(*old);
      if (!v) {
        ctx.reply.Error("ERR hash value is not a float");
        return;
      }
      value = *v;
    }
  }
  value += *incr;
  if (std::isnan(value) || std::isinf(value)) {
    ctx.reply.Error("ERR increment would produce NaN or Infinity");
    return;
  }
  const std::string text = HumanLongDouble(value);
  if (!ctx.AdmitGrant(DeadlineOf(e))) return;
  ApplySet(ctx, key, field, text);
  ctx.reply.Bulk(text);
  ctx.Notify(kNotifyHash, "hincrbyfloat", key);
}

// ---------------------------------------------------------------- reads

void HGet(CommandContext& ctx) {
  ValueRef<HashValue> h;
  if (!FindAs(ctx, ctx.argv[1], &h)) return;
  auto v = h != nullptr ? h->Get(ctx.argv[2]) : std::nullopt;
  if (v) {
    ctx.reply.Bulk(*v);
  } else {
    ctx.reply.Null();
  }
}

void HMGet(CommandContext& ctx) {
  // A missing key is an empty hash: a null per field.
  ValueRef<HashValue> h;
  if (!FindAs(ctx, ctx.argv[1], &h)) return;
  ctx.reply.Array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    auto v = h != nullptr ? h->Get(ctx.argv[i]) : std::nullopt;
    if (v) {
      ctx.reply.Bulk(*v);
    } else {
      ctx.reply.Null();
    }
  }
}

namespace {

// HGETALL (a map in RESP3), HKEYS, HVALS: the pairs in the hash's order.
void GetAll(CommandContext& ctx, bool fields, bool values) {
  ValueRef<HashValue> h;
  if (!FindAs(ctx, ctx.argv[1], &h)) return;
  const size_t n = h != nullptr ? h->size() : 0;
  if (fields && values) {
    ctx.reply.Map(n);
  } else {
    ctx.reply.Array(n);
  }
  if (h == nullptr) return;
  h->ForEach([&](std::string_view f, std::string_view v) {
    if (fields) ctx.reply.Bulk(f);
    if (values) ctx.reply.Bulk(v);
  });
}

}  // namespace

void HGetAll(CommandContext& ctx) {
  GetAll(ctx, true, true);
}

void HKeys(CommandContext& ctx) {
  GetAll(ctx, true, false);
}

void HVals(CommandContext& ctx) {
  GetAll(ctx, false, true);
}

void HLen(CommandContext& ctx) {
  ValueRef<HashValue> h;
  if (!FindAs(ctx, ctx.argv[1], &h)) return;
  ctx.reply.Int(h != nullptr ? static_cast<int64_t>(h->size()) : 0);
}

void HStrLen(CommandContext& ctx) {
  ValueRef<HashValue> h;
  if (!FindAs(ctx, ctx.argv[1], &h)) return;
  auto v = h != nullptr ? h->Get(ctx.argv[2]) : std::nullopt;
  ctx.reply.Int(v ? static_cast<int64_t>(v->size()) : 0);
}

void HExists(CommandContext& ctx) {
  ValueRef<HashValue> h;
  if (!FindAs(ctx, ctx.argv[1], &h)) return;
  ctx.reply.Int(h != nullptr && h->Contains(ctx.argv[2]) ? 1 : 0);
}

// ---------------------------------------------------------------- HRANDFIELD

namespace {

using Pair = std::pair<std::string_view, std::string_view>;

void ReplyPair(CommandContext& ctx, const Pair& p, bool with_values) {
  if (with_values && ctx.reply.resp3()) ctx.reply.Array(2);
  ctx.reply.Bulk(p.first);
  if (with_values) ctx.reply.Bulk(p.second);
}

std::vector<Pair> AllPairs(const HashValue& h) {
  std::vector<Pair> all;
  all.reserve(h.size());
  h.ForEach([&](std::string_view f, std::string_view v) { all.emplace_back(f, v); });
  return all;
}

// HRANDFIELD key count [WITHVALUES], Redis's four cases: a negative count
// draws with repetition; a count at least the size returns the whole hash;
// otherwise `count` distinct fields, drawn from a copy when they are most of
// the hash, by repeated draws when they are few.
void RandomFields(CommandContext& ctx, int64_t l, bool with_values) {
  ValueRef<HashValue> h;
  if (!FindAs(ctx, ctx.argv[1], &h)) return;
  if (h == nullptr || l == 0) {
    ctx.reply.Array(0);
    return;
  }
  const uint64_t size = h->size();
  const bool unique = l > 0;
  const uint64_t count = unique ? static_cast<uint64_t>(l) : static_cast<uint64_t>(-l);
  // RESP2 answers a flat array (field, value, …); RESP3 an array of pairs.
  auto reply_len = [&](uint64_t n) {
    ctx.reply.Array(with_values && !ctx.reply.resp3() ? 2 * n : n);
  };
  std::mt19937_64& rng = Rng();
  if (!unique || count == 1) {
    reply_len(count);
    if (h->packed()) {
      // A listpack is walked once, not once per draw.
      const std::vector<Pair> all = AllPairs(*h);
      for (uint64_t i = 0; i < count; ++i) ReplyPair(ctx, all[rng() % all.size()], with_values);
    } else {
      for (uint64_t i = 0; i < count; ++i) ReplyPair(ctx, h->Random(rng), with_values);
    }
    return;
  }
  if (count >= size) {
    reply_len(size);
    h->ForEach([&](std::string_view f, std::string_view v) {
      ReplyPair(ctx, {f, v}, with_values);
    });
    return;
  }
  reply_len(count);
  if (h->packed() || count * 3 > size) {
    // Most of the hash, or a small one: a partial shuffle of all the pairs.
    std::vector<Pair> all = AllPairs(*h);
    for (uint64_t i = 0; i < count; ++i) {
      std::swap(all[i], all[i + rng() % (all.size() - i)]);
      ReplyPair(ctx, all[i], with_values);
    }
    return;
  }
  // A few fields of a large hash: draw until `count` distinct ones.
  std::unordered_set<std::string_view> seen;
  seen.reserve(count);
  while (seen.size() < count) {
    Pair p = h->Random(rng);
    if (seen.insert(p.first).second) ReplyPair(ctx, p, with_values);
  }
}

}  // namespace

void HRandField(CommandContext& ctx) {
  if (ctx.argv.size() >= 3) {
    // The count must fit a C long other than LONG_MIN (its negation is the
    // number of draws), and with WITHVALUES twice that.
    auto l = IntArgOrReply(ctx, ctx.argv[2]);
    if (!l) return;
    if (*l == std::numeric_limits<int64_t>::min()) {
      ctx.reply.Error(
          "ERR value is out of range, value must between -9223372036854775807 and "
          "9223372036854775807");
      return;
    }
    if (ctx.argv.size() > 4 || (ctx.argv.size() == 4 && !IsWord(ctx.argv[3], "WITHVALUES"))) {
      ctx.reply.Error(kSyntaxError);
      return;
    }
    const bool with_values = ctx.argv.size() == 4;
    constexpr int64_t kHalf = std::numeric_limits<int64_t>::max() / 2;
    if (with_values && (*l < -kHalf || *l > kHalf)) {
      ctx.reply.Error("ERR value is out of range");
      return;
    }
    RandomFields(ctx, *l, with_values);
    return;
  }
  ValueRef<HashValue> h;
  if (!FindAs(ctx, ctx.argv[1], &h)) return;
  if (h == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(h->Random(Rng()).first);
}

// ---------------------------------------------------------------- HSCAN

void HScan(CommandContext& ctx) {
  // HSCAN key cursor [MATCH pattern] [COUNT count]: the cursor is checked
  // first, then the key (a missing key is an empty scan whatever the
  // options), then the options — Redis's order.
  auto cursor = ScanCursorOrReply(ctx, ctx.argv[2]);
  if (!cursor) return;
  ValueRef<HashValue> h;
  if (!FindAs(ctx, ctx.argv[1], &h)) return;
  if (h == nullptr) {
    ReplyScan(ctx, 0, {});
    return;
  }
  auto opts = ParseScanOptions(ctx, 3, /*allow_type=*/false);
  if (!opts) return;
  std::vector<std::string> out;
  auto take = [&](std::string_view f, std::string_view v) {
    if (!opts->Matches(f)) return;
    out.emplace_back(f);
    out.emplace_back(v);
  };
  if (h->packed()) {
    // A listpack is small: all of it, and the walk is over.
    h->ForEach(take);
    ReplyScan(ctx, 0, out);
    return;
  }
  // Pairs count twice toward COUNT, as in Redis (it returns fields and
  // values); the pattern filters after the walk, so a step may return
  // fewer than COUNT, or none.
  const int64_t want = opts->count > INT64_MAX / 2 ? INT64_MAX : 2 * opts->count;
  int64_t steps = want > INT64_MAX / 10 ? INT64_MAX : want * 10;
  int64_t walked = 0;
  uint64_t c = *cursor;
  do {
    c = h->Scan(c, [&](std::string_view f, std::string_view v) {
      walked += 2;
      take(f, v);
    });
  } while (c != 0 && steps-- > 0 && walked < want);
  ReplyScan(ctx, c, out);
}

// ---------------------------------------------------------------- registration

void RegisterHashes(CommandRegistry& r) {
  using namespace spec;
  r.Add(Keys(Cmd("hset", -4, kWrite | kCmdDenyOom | kFast | kLease, HSet, {"write", "hash", "fast"},
                 {"Set the string value of a hash field", "2.0.0", "hash",
                  "O(1) for each field/value pair added, so O(N) to add N field/value pairs when "
                  "the command is called with multiple field/value pairs."},
                 {Key("key"), Multiple(Block("field_value", {Str("field"), Str("value")}))}),
             1, 1, 1, {"RW", "update"}));
  r.Add(Keys(
      Cmd("hsetnx", 4, kWrite | kCmdDenyOom | kFast | kLease, HSetNx, {"write", "hash", "fast"},
          {"Set the value of a hash field, only if the field does not exist", "2.0.0", "hash",
           "O(1)"},
          {Key("key"), Str("field"), Str("value")}),
      1, 1, 1, {"RW", "insert"}));
  r.Add(
      Keys(Cmd("hmset", -4, kWrite | kCmdDenyOom | kFast | kLease, HSet, {"write", "hash", "fast"},
               {"Set multiple hash fields to multiple values", "2.0.0", "hash",
                "O(N) where N is the number of fields being set."},
               {Key("key"), Multiple(Block("field_value", {Str("field"), Str("value")}))}),
           1, 1, 1, {"RW", "update"}));
  r.Add(Keys(
      Cmd("hget", 3, kRead | kFast, HGet, {"read", "hash", "fast"},
          {"Get the value of a hash field", "2.0.0", "hash", "O(1)"}, {Key("key"), Str("field")}),
      1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("hmget", -3, kRead | kFast, HMGet, {"read", "hash", "fast"},
                 {"Get the values of all the given hash fields", "2.0.0", "hash",
                  "O(N) where N is the number of fields being requested."},
                 {Key("key"), Multiple(Str("field"))}),
             1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("hgetall", 2, kRead, HGetAll, {"read", "hash", "slow"},
                 {"Get all the fields and values in a hash", "2.0.0", "hash",
                  "O(N) where N is the size of the hash."},
                 {Key("key")}),
             1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("hkeys", 2, kRead, HKeys, {"read", "hash", "slow"},
                 {"Get all the fields in a hash", "2.0.0", "hash",
                  "O(N) where N is the size of the hash."},
                 {Key("key")}),
             1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("hvals", 2, kRead, HVals, {"read", "hash", "slow"},
                 {"Get all the values in a hash", "2.0.0", "hash",
                  "O(N) where N is the size of the hash."},
                 {Key("key")}),
             1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("hlen", 2, kRead | kFast, HLen, {"read", "hash", "fast"},
                 {"Get the number of fields in a hash", "2.0.0", "hash", "O(1)"}, {Key("key")}),
             1, 1, 1, {"RO"}));
  r.Add(Keys(Cmd("hstrlen", 3, kRead | kFast, HStrLen, {"read", "hash", "fast"},
                 {"Get the length of the value of a hash field", "3.2.0", "hash", "O(1)"},
                 {Key("key"), Str("field")}),
             1, 1, 1, {"RO"}));
  r.Add(Keys(Cmd("hexists", 3, kRead | kFast, HExists, {"read", "hash", "fast"},
                 {"Determine if a hash field exists", "2.0.0", "hash", "O(1)"},
                 {Key("key"), Str("field")}),
             1, 1, 1, {"RO"}));
  r.Add(Keys(Cmd("hdel", -3, kWrite | kFast, HDel, {"write", "hash", "fast"},
                 {"Delete one or more hash fields", "2.0.0", "hash",
                  "O(N) where N is the number of fields to be removed."},
                 {Key("key"), Multiple(Str("field"))}),
             1, 1, 1, {"RW", "delete"}));
  r.Add(Keys(
      Cmd("hincrby", 4, kWrite | kCmdDenyOom | kFast | kLease, HIncrBy, {"write", "hash", "fast"},
          {"Increment the integer value of a hash field by the given number", "2.0.0", "hash",
           "O(1)"},
          {Key("key"), Str("field"), Int("increment")}),
      1, 1, 1, {"RW", "access", "update"}));
  r.Add(Keys(Cmd("hincrbyfloat", 4, kWrite | kCmdDenyOom | kFast | kLease, HIncrByFloat,
                 {"write", "hash", "fast"},
                 {"Increment the float value of a hash field by the given amount", "2.6.0", "hash",
                  "O(1)"},
                 {Key("key"), Str("field"), Double("increment")}),
             1, 1, 1, {"RW", "access", "update"}));
  r.Add(Keys(
      Cmd("hrandfield", -2, kRead, HRandField, {"read", "hash", "slow"},
          {"Get one or multiple random fields from a hash", "6.2.0", "hash",
           "O(N) where N is the number of fields returned"},
          {Key("key"), Optional(Block("options", {Int("count"),
                                                  Optional(Token("withvalues", "WITHVALUES"))}))}),
      1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("hscan", -3, kRead, HScan, {"read", "hash", "slow"},
                 {"Incrementally iterate hash fields and associated values", "2.8.0", "hash",
                  "O(1) for every call. O(N) for a complete iteration, including enough command "
                  "calls for the cursor to return back to 0. N is the number of elements inside "
                  "the collection."},
                 {Key("key"), Int("cursor"), Optional(Pattern("pattern", "MATCH")),
                  Optional(Int("count", "COUNT"))}),
             1, 1, 1, {"RO", "access"}));
}

}  // namespace latch::commands
