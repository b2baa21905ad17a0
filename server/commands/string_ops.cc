// The rest of the string family: counters (INCR, DECR, INCRBY, DECRBY,
// INCRBYFLOAT), several keys at once (MGET, MSET, MSETNX), read-and-change
// (GETDEL, GETEX, GETSET) and ranges (APPEND, STRLEN, GETRANGE, SUBSTR,
// SETRANGE).
//
// Lock-adjacent uses: fencing tokens and semaphores count with INCR; rate
// limiters with INCR and a TTL that INCR keeps. Every write goes through
// the Store, which logs its effect: INCR is logged as the SET of the new
// value with the key's lease, GETEX PX as a PEXPIREAT, GETDEL as a DEL. A
// write that stores a value (or gives, extends or removes a lease) asks the
// lease policy first, once it knows the write will happen.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "server/commands/common.h"
#include "server/control.h"
#include "server/pubsub.h"

namespace latch::commands {

namespace {

constexpr std::string_view kNotFloat = "ERR value is not a valid float";
constexpr std::string_view kTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

// INCR, DECR, INCRBY, DECRBY: the value as a 64-bit integer plus `delta`.
// The key keeps its lease (a rate limiter's window), and the log says SET
// with it.
void IncrBy(CommandContext& ctx, int64_t delta) {
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kString, &e, Access::kWrite)) return;
  int64_t value = 0;
  int64_t lease = kNoDeadline;
  if (e != nullptr) {
    auto v = ParseInt64(e->value());
    if (!v) {
      ctx.reply.Error(kNotInteger);
      return;
    }
    value = *v;
    lease = e->deadline;
  }
  if ((delta < 0 && value < 0 && delta < std::numeric_limits<int64_t>::min() - value) ||
      (delta > 0 && value > 0 && delta > std::numeric_limits<int64_t>::max() - value)) {
    ctx.reply.Error("ERR increment or decrement would overflow");
    return;
  }
  value += delta;
  if (!ctx.AdmitGrant(lease)) return;
  ctx.store.Put(key, std::to_string(value), Lease::Keep(), ctx.now);
  ctx.Notify(kNotifyString, "incrby", key);
  ctx.reply.Int(value);
}

// APPEND and SETRANGE refuse a value longer than proto-max-bulk-len (or
// than the 4 GiB a value's 32-bit length allows).
bool CheckLength(CommandContext& ctx, uint64_t size, uint64_t append) {
  uint64_t limit =
      static_cast<uint64_t>(std::min<int64_t>(ctx.config.proto_max_bulk_len, UINT32_MAX));
  if (size + append > limit) {
    ctx.reply.Error(kTooLong);
    return false;
  }
  return true;
}

// GETEX's options, parsed with Redis's rules (parseExtendedStringArguments
// for GET): one of EX/PX/EXAT/PXAT (the same one may repeat, the last
// wins) or PERSIST; words compared as C strings.
struct GetExArgs {
  enum Kind { kNone, kEx, kPx, kExAt, kPxAt, kPersist } kind = kNone;
  std::string_view when;
};

std::optional<GetExArgs> ParseGetEx(std::span<const std::string_view> argv) {
  GetExArgs a;
  using K = GetExArgs::Kind;
  for (size_t j = 2; j < argv.size(); ++j) {
    std::string_view opt = argv[j];
    bool has_next = j + 1 < argv.size();
    auto time_option = [&](K kind) {
      // Another time unit, or PERSIST, already given: a syntax error.
      if (!has_next || a.kind == K::kPersist || (a.kind != K::kNone && a.kind != kind)) {
        return false;
      }
      a.kind = kind;
      a.when = argv[++j];
      return true;
    };
    bool ok;
    if (IsWord(opt, "PERSIST")) {
      ok = a.kind == K::kNone || a.kind == K::kPersist;
      a.kind = K::kPersist;
    } else if (IsWord(opt, "EX")) {
      ok = time_option(K::kEx);
    } else if (IsWord(opt, "PX")) {
      ok = time_option(K::kPx);
    } else if (IsWord(opt, "EXAT")) {
      ok = time_option(K::kExAt);
    } else if (IsWord(opt, "PXAT")) {
      ok = time_option(K::kPxAt);
    } else {
      ok = false;  // NX, XX, GET, KEEPTTL are SET's
    }
    if (!ok) return std::nullopt;
  }
  return a;
}

}  // namespace

// ---------------------------------------------------------------- counters

void Incr(CommandContext& ctx) {
  IncrBy(ctx, 1);
}

void Decr(CommandContext& ctx) {
  IncrBy(ctx, -1);
}

void IncrByCommand(CommandContext& ctx) {
  auto delta = IntArgOrReply(ctx, ctx.argv[2]);
  if (!delta) return;
  IncrBy(ctx, *delta);
}

void DecrByCommand(CommandContext& ctx) {
  auto delta = IntArgOrReply(ctx, ctx.argv[2]);
  if (!delta) return;
  if (*delta == std::numeric_limits<int64_t>::min()) {
    ctx.reply.Error("ERR decrement would overflow");
    return;
  }
  IncrBy(ctx, -*delta);
}

void IncrByFloat(CommandContext& ctx) {
  // As Redis: the stored value is parsed first, then the increment, both
  // with strtold's syntax (so "0x10" and "1e3" are numbers), added in long
  // double precision; the result is stored as its decimal text, which the
  // log records (as SET with the key's lease), so a replay gives back the
  // same digits.
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kString, &e, Access::kWrite)) return;
  long double value = 0;
  int64_t lease = kNoDeadline;
  if (e != nullptr) {
    auto v = ParseLongDouble(e->value());
    if (!v) {
      ctx.reply.Error(kNotFloat);
      return;
    }
    value = *v;
    lease = e->deadline;
  }
  auto incr = ParseLongDouble(ctx.argv[2]);
  if (!incr) {
    ctx.reply.Error(kNotFloat);
    return;
  }
  value += *incr;
  if (std::isnan(value) || std::isinf(value)) {
    ctx.reply.Error("ERR increment would produce NaN or Infinity");
    return;
  }
  std::string text = HumanLongDouble(value);
  if (!ctx.AdmitGrant(lease)) return;
  ctx.store.Put(key, text, Lease::Keep(), ctx.now, ValueKind::kString);
  ctx.Notify(kNotifyString, "incrbyfloat", key);
  ctx.reply.Bulk(text);
}

// ---------------------------------------------------------------- several keys

void MGet(CommandContext& ctx) {
  ctx.reply.Array(ctx.argv.size() - 1);
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    const Keyspace::Entry* e = FindForRead(ctx, ctx.argv[i]);
    if (e == nullptr || !e->is_string()) {  // (another type reads as nil, as in Redis)
      ctx.reply.Null();
    } else {
      ctx.reply.Bulk(e->value());
    }
  }
}

namespace {

// MSET and MSETNX: key value pairs, every key without a lease afterwards.
void MSetGeneric(CommandContext& ctx, bool nx) {
  if (ctx.argv.size() % 2 == 0) {
    ctx.reply.Error("ERR wrong number of arguments for '" + ctx.name() + "' command");
    return;
  }
  if (nx) {
    for (size_t j = 1; j < ctx.argv.size(); j += 2) {
      if (ctx.TakenForAcquire(ctx.argv[j])) {  // (a key with waiters too)
        ctx.reply.Int(0);
        return;
      }
    }
  }
  // MSET's reply (OK) does not depend on what the keys held: blind.
  if (!ctx.AdmitGrant(kNoDeadline, /*blind=*/!nx)) return;
  // One command: the log records its SETs as one transaction. MSETNX gives
  // each key to its holder through the grant operation (admitted above: a
  // refusal cannot come half-way); MSET overwrites, as SET without NX.
  Store::Atomic atomic(ctx.store);
  for (size_t j = 1; j < ctx.argv.size(); j += 2) {
    if (nx) {
      ctx.grants.Grant({ctx.argv[j], ctx.argv[j + 1], Lease::None()}, ctx.now);
    } else {
      ctx.store.Put(ctx.argv[j], ctx.argv[j + 1], Lease::None(), ctx.now);
    }
    ctx.Notify(kNotifyString, "set", ctx.argv[j]);
  }
  if (nx) {
    ctx.reply.Int(1);
  } else {
    ctx.reply.Ok();
  }
}

}  // namespace

void MSet(CommandContext& ctx) {
  MSetGeneric(ctx, false);
}

void MSetNx(CommandContext& ctx) {
  MSetGeneric(ctx, true);
}

// ---------------------------------------------------------------- read and change

void GetDel(CommandContext& ctx) {
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kString, &e, Access::kRead)) return;
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  // A release: no lease is granted, the quarantine does not refuse it.
  ctx.reply.Bulk(e->value());
  ctx.store.Delete(key);
  ctx.Notify(kNotifyGeneric, "del", key);
}

void GetEx(CommandContext& ctx) {
  // GETEX key [EX s | PX ms | EXAT unix-s | PXAT unix-ms | PERSIST]. As in
  // Redis: the options' shape first, then the key (a missing key is null
  // even if the time is invalid), then the time.
  auto args = ParseGetEx(ctx.argv);
  if (!args) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kString, &e, Access::kRead)) return;
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  using K = GetExArgs::Kind;
  if (args->kind == K::kNone) {
    ctx.reply.Bulk(e->value());
    return;
  }
  if (args->kind == K::kPersist) {
    if (e->has_deadline()) {
      // A lease without end: a grant (the quarantine refuses it).
      if (!ctx.AdmitGrant(kNoDeadline)) return;
      ctx.reply.Bulk(e->value());
      ctx.store.Persist(key);
      ctx.Notify(kNotifyGeneric, "persist", key);
    } else {
      ctx.reply.Bulk(e->value());
    }
    return;
  }
  auto v = IntArgOrReply(ctx, args->when);
  if (!v) return;
  int64_t ms = *v;
  const bool seconds = args->kind == K::kEx || args->kind == K::kExAt;
  const bool relative = args->kind == K::kEx || args->kind == K::kPx;
  if (ms <= 0 || (seconds && ms > INT64_MAX / 1000)) {
    ReplyInvalidExpire(ctx, "getex");
    return;
  }
  if (seconds) ms *= 1000;
  if (relative && ms > INT64_MAX - ctx.now.wall_ms) {
    ReplyInvalidExpire(ctx, "getex");
    return;
  }
  const int64_t when = relative ? ctx.now.wall_ms + ms : ms;  // Unix ms
  if (when <= ctx.now.wall_ms) {
    // An absolute time already past: the key goes (a release), after its
    // value is returned; the log says DEL.
    ctx.reply.Bulk(e->value());
    ctx.store.Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
    return;
  }
  if (!ctx.CheckTtl(when - ctx.now.wall_ms)) return;
  const int64_t deadline = relative ? ctx.now.DeadlineIn(ms) : ctx.now.MonoFromWall(when);
  // A new lease term for whoever holds the key: the lease policy decides.
  if (!ctx.AdmitGrant(deadline)) return;
  ctx.reply.Bulk(e->value());
  ctx.store.SetDeadline(key, deadline, ctx.now);  // logged as PEXPIREAT
  ctx.Notify(kNotifyGeneric, "expire", key);
}

void GetSet(CommandContext& ctx) {
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kString, &e, Access::kRead)) return;
  // The new value replaces the old one and its lease.
  if (!ctx.AdmitGrant(kNoDeadline)) return;
  if (e == nullptr) {
    ctx.reply.Null();
  } else {
    ctx.reply.Bulk(e->value());
  }
  ctx.store.Put(key, ctx.argv[2], Lease::None(), ctx.now);
  ctx.Notify(kNotifyString, "set", key);
}

// ---------------------------------------------------------------- ranges

void Append(CommandContext& ctx) {
  std::string_view key = ctx.argv[1], tail = ctx.argv[2];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kString, &e, Access::kWrite)) return;
  if (e == nullptr) {
    // A new key, stored as SET would store it.
    if (!ctx.AdmitGrant(kNoDeadline)) return;
    ctx.store.Put(key, tail, Lease::None(), ctx.now);
    ctx.Notify(kNotifyString, "append", key);
    ctx.reply.Int(static_cast<int64_t>(tail.size()));
    return;
  }
  if (!CheckLength(ctx, e->value_len, tail.size())) return;
  if (!ctx.AdmitGrant(e->deadline)) return;
  // The value is rewritten whole (one allocation per key), and logged whole
  // as a SET with the key's lease: O(N) in the value's length, where Redis
  // appends in place. A lock server's values are short.
  std::string value;
  value.reserve(e->value_len + tail.size());
  value.append(e->value()).append(tail);
  ctx.store.Put(key, value, Lease::Keep(), ctx.now, ValueKind::kRaw);
  ctx.Notify(kNotifyString, "append", key);
  ctx.reply.Int(static_cast<int64_t>(value.size()));
}

void StrLen(CommandContext& ctx) {
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, ctx.argv[1], ValueType::kString, &e, Access::kRead)) return;
  ctx.reply.Int(e == nullptr ? 0 : static_cast<int64_t>(e->value_len));
}

void GetRange(CommandContext& ctx) {
  // GETRANGE key start end (and its old name SUBSTR): inclusive offsets,
  // negative ones from the end, clamped to the value, as Redis.
  auto start = IntArgOrReply(ctx, ctx.argv[2]);
  if (!start) return;
  auto end = IntArgOrReply(ctx, ctx.argv[3]);
  if (!end) return;
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, ctx.argv[1], ValueType::kString, &e, Access::kRead)) return;
  if (e == nullptr) {
    ctx.reply.Bulk("");
    return;
  }
  const int64_t len = e->value_len;
  int64_t s = *start, t = *end;
  if (s < 0 && t < 0 && s > t) {
    ctx.reply.Bulk("");
    return;
  }
  if (s < 0) s = len + s;
  if (t < 0) t = len + t;
  if (s < 0) s = 0;
  if (t < 0) t = 0;
  if (t >= len) t = len - 1;
  if (s > t || len == 0) {
    ctx.reply.Bulk("");
    return;
  }
  ctx.reply.Bulk(e->value().substr(static_cast<size_t>(s), static_cast<size_t>(t - s + 1)));
}

void SetRange(CommandContext& ctx) {
  std::string_view key = ctx.argv[1], patch = ctx.argv[3];
  auto offset = IntArgOrReply(ctx, ctx.argv[2]);
  if (!offset) return;
  if (*offset < 0) {
    ctx.reply.Error("ERR offset is out of range");
    return;
  }
  const auto at = static_cast<uint64_t>(*offset);
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kString, &e, Access::kWrite)) return;
  // Writing nothing changes nothing (and creates no key).
  if (patch.empty()) {
    ctx.reply.Int(e == nullptr ? 0 : static_cast<int64_t>(e->value_len));
    return;
  }
  if (!CheckLength(ctx, at, patch.size())) return;
  if (!ctx.AdmitGrant(e != nullptr ? e->deadline : kNoDeadline)) return;
  // Zero bytes fill any gap between the old end and the offset.
  std::string value = e != nullptr ? std::string(e->value()) : std::string();
  if (value.size() < at + patch.size()) value.resize(at + patch.size(), '\0');
  std::memcpy(value.data() + at, patch.data(), patch.size());
  ctx.store.Put(key, value, e != nullptr ? Lease::Keep() : Lease::None(), ctx.now, ValueKind::kRaw);
  ctx.Notify(kNotifyString, "setrange", key);
  ctx.reply.Int(static_cast<int64_t>(value.size()));
}

// ---------------------------------------------------------------- registration

void RegisterStringOps(CommandRegistry& r) {
  using namespace spec;
  auto str = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "string", std::move(complexity)};
  };
  const std::vector<std::string> kRwUpdate = {"RW", "access", "update"};
  const uint32_t kCounter = kWrite | kCmdDenyOom | kFast | kLease;
  const std::vector<std::string> kCounterAcl = {"write", "string", "fast"};
  // ---- counters
  r.Add(Keys(Cmd("incr", 2, kCounter, Incr, kCounterAcl,
                 str("Increment the integer value of a key by one", "1.0.0"), {Key()}),
             1, 1, 1, kRwUpdate));
  r.Add(Keys(Cmd("decr", 2, kCounter, Decr, kCounterAcl,
                 str("Decrement the integer value of a key by one", "1.0.0"), {Key()}),
             1, 1, 1, kRwUpdate));
  r.Add(Keys(Cmd("incrby", 3, kCounter, IncrByCommand, kCounterAcl,
                 str("Increment the integer value of a key by the given amount", "1.0.0"),
                 {Key(), Int("increment")}),
             1, 1, 1, kRwUpdate));
  r.Add(Keys(Cmd("decrby", 3, kCounter, DecrByCommand, kCounterAcl,
                 str("Decrement the integer value of a key by the given number", "1.0.0"),
                 {Key(), Int("decrement")}),
             1, 1, 1, kRwUpdate));
  r.Add(Keys(Cmd("incrbyfloat", 3, kCounter, IncrByFloat, kCounterAcl,
                 str("Increment the float value of a key by the given amount", "2.6.0"),
                 {Key(), Double("increment")}),
             1, 1, 1, kRwUpdate));
  // ---- several keys
  r.Add(Keys(Cmd("mget", -2, kRead | kFast, MGet, {"read", "string", "fast"},
                 str("Get the values of all the given keys", "1.0.0",
                     "O(N) where N is the number of keys to retrieve."),
                 {Key("key", true)}),
             1, -1, 1, {"RO", "access"}));
  const ArgDoc key_value = Multiple(Block("key_value", {Key(), Str("value")}));
  r.Add(Keys(Cmd("mset", -3, kWrite | kCmdDenyOom | kLease, MSet, {"write", "string", "slow"},
                 str("Set multiple keys to multiple values", "1.0.1",
                     "O(N) where N is the number of keys to set."),
                 {key_value}),
             1, -1, 2, {"OW", "update"}));
  r.Add(Keys(Cmd("msetnx", -3, kWrite | kCmdDenyOom | kLease, MSetNx, {"write", "string", "slow"},
                 str("Set multiple keys to multiple values, only if none of the keys exist",
                     "1.0.1", "O(N) where N is the number of keys to set."),
                 {key_value}),
             1, -1, 2, {"OW", "insert"}));
  // ---- read and change
  r.Add(Keys(Cmd("getdel", 2, kWrite | kFast, GetDel, {"write", "string", "fast"},
                 str("Get the value of a key and delete the key", "6.2.0"), {Key()}),
             1, 1, 1, {"RW", "access", "delete"}));
  r.Add(Keys(
      Cmd("getex", -2, kWrite | kFast | kLease, GetEx, {"write", "string", "fast"},
          str("Get the value of a key and optionally set its expiration", "6.2.0"),
          {Key(), Optional(OneOf("expiration", {Int("seconds", "EX"), Int("milliseconds", "PX"),
                                                Time("unix-time-seconds", "EXAT"),
                                                Time("unix-time-milliseconds", "PXAT"),
                                                Token("persist", "PERSIST")}))}),
      1, 1, 1, kRwUpdate));
  r.Add(Keys(
      Cmd("getset", 3, kWrite | kCmdDenyOom | kFast | kLease, GetSet, {"write", "string", "fast"},
          str("Set the string value of a key and return its old value", "1.0.0"),
          {Key(), Str("value")}),
      1, 1, 1, kRwUpdate));
  // ---- ranges
  r.Add(Keys(
      Cmd("append", 3, kWrite | kCmdDenyOom | kFast | kLease, Append, {"write", "string", "fast"},
          str("Append a value to a key", "2.0.0",
              "O(1). The amortized time complexity is O(1) assuming the appended value "
              "is small and the already present value is of any size, since the dynamic "
              "string library used by Redis will double the free space available on "
              "every reallocation."),
          {Key(), Str("value")}),
      1, 1, 1, {"RW", "insert"}));
  r.Add(Keys(Cmd("strlen", 2, kRead | kFast, StrLen, {"read", "string", "fast"},
                 str("Get the length of the value stored in a key", "2.2.0"), {Key()}),
             1, 1, 1, {"RO"}));
  const std::string range_complexity =
      "O(N) where N is the length of the returned string. The complexity is ultimately "
      "determined by the returned length, but because creating a substring from an existing "
      "string is very cheap, it can be considered O(1) for small strings.";
  r.Add(Keys(Cmd("getrange", 4, kRead, GetRange, {"read", "string", "slow"},
                 str("Get a substring of the string stored at a key", "2.4.0", range_complexity),
                 {Key(), Int("start"), Int("end")}),
             1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("substr", 4, kRead, GetRange, {"read", "string", "slow"},
                 str("Get a substring of the string stored at a key", "1.0.0", range_complexity),
                 {Key(), Int("start"), Int("end")}),
             1, 1, 1, {"RO", "access"}));
  r.Add(
      Keys(Cmd("setrange", 4, kWrite | kCmdDenyOom | kLease, SetRange, {"write", "string", "slow"},
               str("Overwrite part of a string at key starting at the specified offset", "2.2.0",
                   "O(1), not counting the time taken to copy the new string in place. "
                   "Usually, this string is very small so the amortized complexity is O(1). "
                   "Otherwise, complexity is O(M) with M being the length of the value "
                   "argument."),
               {Key(), Int("offset"), Str("value")}),
           1, 1, 1, {"RW", "update"}));
}

}  // namespace latch::commands
