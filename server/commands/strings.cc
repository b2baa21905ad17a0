// String commands: SET (and SETFENCE, its fenced spelling), SETNX, GET, DEL
// (and UNLINK), EXISTS, and the compare-and-delete family (DELIFEQ, DELEX,
// DIGEST).
//
// These are the lock primitives. Acquire is `SET lock token NX PX ttl`: one
// command, so the key and its TTL appear together or not at all (the bug of
// SETNX followed by EXPIRE). Release is `DELIFEQ lock token` (or
// `DELEX lock IFEQ token`): compare and delete in one command, so a holder
// whose lease already expired cannot delete the next holder's lock — the race
// Redis users close with a Lua script. Renewal is
// `SET lock token IFEQ token PX ttl`.
//
// latch's own SET options (issue 17):
//  - FENCE [MIN n]: a grant replies the key's fencing token instead of OK
//    (store.h: the token stays with the holder; lease_policy.h: the node's
//    counter). A renewal keeps the holder's token, unless MIN asks for a
//    larger one: then the holder gets a new token of at least n — how a
//    RedLock client raises the floor on the nodes it holds (docs/guide.md,
//    "Fencing tokens for RedLock").
//  - WAIT timeout-ms (with NX): a held key parks the client in the key's
//    FIFO queue instead of answering nil; it is granted the key the moment
//    the key is released or expires, or gets nil at the timeout (0: none).
//    See waiters.h.
#include <xxhash.h>

#include <cstdio>

#include "server/commands/common.h"
#include "server/parking.h"
#include "server/pubsub.h"

namespace latch::commands {

namespace {

enum class Condition { kNone, kNx, kXx, kIfEq, kIfNe, kIfDeq, kIfDne };
enum class ExpireKind { kNone, kEx, kPx, kExAt, kPxAt, kKeepTtl };

// SET's arguments after parsing, before anything is applied.
struct SetArgs {
  std::string_view key, value;
  Condition condition = Condition::kNone;
  std::string_view match;  // operand of IFEQ/IFNE/IFDEQ/IFDNE
  bool get = false;
  ExpireKind expire = ExpireKind::kNone;
  std::string_view expire_arg;
  bool fence = false;  // FENCE: reply the fencing token
  bool has_min = false;
  std::string_view min_arg;  // FENCE MIN n
  bool wait = false;         // WAIT timeout-ms
  std::string_view wait_arg;
};

// Parses SET's options with Redis's rules: case-insensitive, any order,
// repeated identical flags allowed, conflicting ones a syntax error. Only the
// shape is checked here; the expire value is validated afterwards, as Redis
// does (so `EX abc XY` is a syntax error, not an integer error).
// An option word of up to 8 bytes as one integer, byte i in bits 8i..8i+7:
// SET's options are told apart by one switch on it instead of a string
// comparison per candidate (a SET NX PX compared its words up to 13 times).
// The words hold no NUL (UpToNul cut them), so two words of different
// lengths never give the same integer.
constexpr uint64_t OptionWord(std::string_view w) {
  uint64_t v = 0;
  for (size_t i = 0; i < w.size(); ++i) v |= uint64_t{static_cast<uint8_t>(w[i])} << (8 * i);
  return v;
}
uint64_t UpperOptionWord(std::string_view w) {
  if (w.empty() || w.size() > 8) return 0;
  uint64_t v = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    auto c = static_cast<uint8_t>(w[i]);
    if (c >= 'a' && c <= 'z') c = static_cast<uint8_t>(c - 32);
    v |= uint64_t{c} << (8 * i);
  }
  return v;
}

std::optional<SetArgs> ParseSet(std::span<const std::string_view> argv, bool fenced = false) {
  SetArgs a;
  a.key = argv[1];
  a.value = argv[2];
  a.fence = fenced;  // SETFENCE: FENCE without the word
  auto is_time = [&] { return a.expire != ExpireKind::kNone && a.expire != ExpireKind::kKeepTtl; };
  for (size_t j = 3; j < argv.size(); ++j) {
    // Compared as a C string (IsWord's rule): cut at its NUL.
    const bool has_next = j + 1 < argv.size();
    const bool cond_free = a.condition == Condition::kNone;
    // Each case either takes the word or refuses the whole SET (a word in
    // the wrong place is a syntax error, as in Redis).
    auto condition = [&](Condition c, bool takes_arg) {
      if (takes_arg ? !(cond_free && has_next) : !(cond_free || a.condition == c)) return false;
      a.condition = c;
      if (takes_arg) a.match = argv[++j];
      return true;
    };
    auto expire = [&](ExpireKind kind) {
      // The same unit twice is allowed (the last one wins); two different
      // ones, or one with KEEPTTL, are not.
      if (!has_next || (a.expire != ExpireKind::kNone && a.expire != kind)) return false;
      a.expire = kind;
      a.expire_arg = argv[++j];
      return true;
    };
    bool ok = true;
    switch (UpperOptionWord(UpToNul(argv[j]))) {
      case OptionWord("NX"):
        ok = condition(Condition::kNx, false);
        break;
      case OptionWord("XX"):
        ok = condition(Condition::kXx, false);
        break;
      case OptionWord("IFEQ"):
        ok = condition(Condition::kIfEq, true);
        break;
      case OptionWord("IFNE"):
        ok = condition(Condition::kIfNe, true);
        break;
      case OptionWord("IFDEQ"):
        ok = condition(Condition::kIfDeq, true);
        break;
      case OptionWord("IFDNE"):
        ok = condition(Condition::kIfDne, true);
        break;
      case OptionWord("GET"):
        a.get = true;
        break;
      case OptionWord("KEEPTTL"):
        ok = !is_time();
        if (ok) a.expire = ExpireKind::kKeepTtl;
        break;
      case OptionWord("EX"):
        ok = expire(ExpireKind::kEx);
        break;
      case OptionWord("PX"):
        ok = expire(ExpireKind::kPx);
        break;
      case OptionWord("EXAT"):
        ok = expire(ExpireKind::kExAt);
        break;
      case OptionWord("PXAT"):
        ok = expire(ExpireKind::kPxAt);
        break;
      case OptionWord("FENCE"):
        a.fence = true;
        break;
      case OptionWord("MIN"):
        ok = has_next;
        if (ok) {
          a.has_min = true;
          a.min_arg = argv[++j];
        }
        break;
      case OptionWord("WAIT"):
        ok = has_next;
        if (ok) {
          a.wait = true;
          a.wait_arg = argv[++j];
        }
        break;
      default:
        ok = false;
    }
    if (!ok) return std::nullopt;
  }
  // MIN is FENCE's; a fenced grant replies its token, so it cannot also
  // reply the old value (GET).
  if ((a.has_min && !a.fence) || (a.fence && a.get)) return std::nullopt;
  // WAIT waits for a key to be free: NX, and a lease counted from the grant
  // (EX/PX) or none; GET's old value would always be nil.
  if (a.wait && (a.condition != Condition::kNx || a.get || a.expire == ExpireKind::kExAt ||
                 a.expire == ExpireKind::kPxAt || a.expire == ExpireKind::kKeepTtl)) {
    return std::nullopt;
  }
  return a;
}

// The value's XXH3-64 digest as 16 lower-case hex digits (DIGEST, IFDEQ).
std::string DigestOf(std::string_view value) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(value.data(), value.size())));
  return std::string(buf, 16);
}

bool DigestMatches(std::string_view value, std::string_view digest) {
  return EqualsIgnoreCase(DigestOf(value), digest);
}

constexpr std::string_view kDigestLengthError = "ERR must be exactly 16 hexadecimal characters";

// Resolves SET's expiry to a deadline. Returns false after replying with an
// error. On success *deadline is the monotonic deadline (kNoDeadline when
// none) and *unix_ms the same instant on the wall clock, for the log.
bool ResolveSetExpiry(CommandContext& ctx, const SetArgs& a, int64_t* deadline) {
  std::string_view name = ctx.name();
  *deadline = kNoDeadline;
  if (a.expire == ExpireKind::kNone || a.expire == ExpireKind::kKeepTtl) return true;
  auto v = IntArgOrReply(ctx, a.expire_arg);
  if (!v) return false;
  int64_t ms = *v;
  bool seconds = a.expire == ExpireKind::kEx || a.expire == ExpireKind::kExAt;
  if (ms <= 0 || (seconds && ms > INT64_MAX / 1000)) {
    ReplyInvalidExpire(ctx, name);
    return false;
  }
  if (seconds) ms *= 1000;
  bool relative = a.expire == ExpireKind::kEx || a.expire == ExpireKind::kPx;
  if (relative) {
    if (ms > INT64_MAX - ctx.now.wall_ms) {
      ReplyInvalidExpire(ctx, name);
      return false;
    }
    *deadline = ctx.now.DeadlineIn(ms);
  } else {
    // An absolute time is converted to the boot clock once, here.
    *deadline = ctx.now.MonoFromWall(ms);
    // 0 would read as "no TTL" to the keyspace. That instant is in the past
    // (the monotonic clock is > 0), so any past deadline means the same.
    if (*deadline == kNoDeadline) *deadline = -1;
  }
  return true;
}

// A timeout in ms for WAIT, with the texts Redis's blocking commands give.
// *until: when to give up, on the boot clock (0: never).
bool ResolveWaitTimeout(CommandContext& ctx, std::string_view arg, int64_t* until) {
  auto ms = ParseInt64(arg);
  if (!ms) {
    ctx.reply.Error("ERR timeout is not an integer or out of range");
    return false;
  }
  if (*ms < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return false;
  }
  if (*ms > INT64_MAX - ctx.now.wall_ms) {
    ctx.reply.Error("ERR timeout is out of range");
    return false;
  }
  *until = *ms > 0 ? ctx.now.DeadlineIn(*ms) : 0;
  return true;
}

// Applies a parsed SET (also SETEX and PSETEX, which are SET with EX / PX).
void ApplySet(CommandContext& ctx, const SetArgs& a) {
  int64_t deadline;
  if (!ResolveSetExpiry(ctx, a, &deadline)) return;
  if (deadline != kNoDeadline && !ctx.CheckTtl(deadline - ctx.now.mono)) return;
  uint64_t min = 0;
  if (a.has_min) {
    auto v = ParseInt64(a.min_arg);
    if (!v || *v < 0) {
      ctx.reply.Error(kNotInteger);
      return;
    }
    min = static_cast<uint64_t>(*v);
  }
  int64_t wait_until = 0;
  if (a.wait && !ResolveWaitTimeout(ctx, a.wait_arg, &wait_until)) return;

  const Keyspace::Entry* old = ctx.store.Find(a.key, ctx.now);
  // GET reads the old value as GET does: a keyspace hit or miss, "keymiss"
  // (Redis's getGenericCommand, before the type check).
  if (a.get) CountRead(ctx, a.key, old != nullptr);
  // SET replaces a value of any type, but GET and the comparisons read the
  // old one, which must then be a string.
  const bool reads_old = a.get || (a.condition != Condition::kNone &&
                                   a.condition != Condition::kNx && a.condition != Condition::kXx);
  if (reads_old && old != nullptr && !old->is_string()) {
    ctx.reply.Error(kWrongType);
    return;
  }
  if ((a.condition == Condition::kIfDeq || a.condition == Condition::kIfDne) && old != nullptr &&
      a.match.size() != 16) {
    ctx.reply.Error(kDigestLengthError);
    return;
  }
  bool allowed = true;
  switch (a.condition) {
    case Condition::kNone:
      break;
    case Condition::kNx:
      allowed = old == nullptr;
      break;
    case Condition::kXx:
      allowed = old != nullptr;
      break;
    case Condition::kIfEq:
      allowed = old != nullptr && old->value() == a.match;
      break;
    case Condition::kIfNe:
      allowed = old == nullptr || old->value() != a.match;
      break;
    case Condition::kIfDeq:
      allowed = old != nullptr && DigestMatches(old->value(), a.match);
      break;
    case Condition::kIfDne:
      allowed = old == nullptr || !DigestMatches(old->value(), a.match);
      break;
  }
  // Clients queued for the key (WAIT) come first: while any waits, the key
  // is not free for a SET that takes it only when absent — not even in the
  // instant between its release or expiry and the handoff to the first
  // waiter, which happens as soon as this command is over (grant.h).
  const bool takes_absent = a.condition == Condition::kNx || a.condition == Condition::kIfNe ||
                            a.condition == Condition::kIfDne;
  if (allowed && old == nullptr && takes_absent && ctx.grants.Queued(ctx.session.db, a.key)) {
    allowed = false;
  }
  // WAIT on a held key: the client joins the key's queue instead of getting
  // nil. Inside MULTI or a script nothing may wait (as BLPOP there): the nil
  // comes at once.
  if (!allowed && a.wait && ctx.may_block) {
    LockWaitRequest r;
    r.value = std::string(a.value);
    r.ttl_ms = deadline == kNoDeadline ? 0 : deadline - ctx.now.mono;
    r.fence = a.fence;
    r.min = min;
    r.timeout_at = wait_until;
    ctx.parking().ParkForLock(ctx.session, a.key, std::move(r));
    return;
  }
  // With GET the reply is the previous value, whether or not the SET
  // happens (kept aside: the grant replaces it).
  std::optional<std::string> previous;
  if (a.get && old != nullptr) previous.emplace(old->value());
  if (!allowed) {
    if (a.get && previous) {
      ctx.reply.Bulk(*previous);
    } else {
      ctx.reply.Null();
    }
    return;
  }
  // A SET that stores a value grants the key (a lock) to whoever holds the
  // value: the grant operation decides, before anything is replied. (A
  // deadline already past deletes the key, and the log says DEL.)
  const bool deletes = deadline != kNoDeadline && ctx.now.mono > deadline;  // EXAT/PXAT past
  Grants::Request g;
  g.key = a.key;
  g.value = a.value;
  g.lease = a.expire == ExpireKind::kKeepTtl ? Lease::Keep()
            : deadline == kNoDeadline        ? Lease::None()
                                             : Lease::Until(deadline);
  g.fence = a.fence;
  g.min = min;
  // Its reply (OK) does not depend on what the key held: a restart
  // quarantine serves it when it comes alone (lease_policy.h).
  g.blind = ctx.alone && a.condition == Condition::kNone && !a.get && !a.fence;
  Grants::Result granted = ctx.grants.Grant(g, ctx.now);
  if (!granted.granted()) {
    ctx.ReplyRefusal(granted.refusal);
    return;
  }
  // Keyspace events as Redis's SET sends them: "set", then "expire" for a
  // lease (a past EXAT/PXAT too, which Redis stores and expires later).
  ctx.Notify(kNotifyString, "set", a.key);
  if (deadline != kNoDeadline) ctx.Notify(kNotifyGeneric, "expire", a.key);
  if (a.fence) {
    // The token of the grant; an EXAT/PXAT in the past granted nothing.
    if (deletes) {
      ctx.reply.Null();
    } else {
      ctx.reply.Int(static_cast<int64_t>(granted.token));
    }
  } else if (a.get) {
    if (previous) {
      ctx.reply.Bulk(*previous);
    } else {
      ctx.reply.Null();
    }
  } else {
    ctx.reply.Ok();
  }
}

}  // namespace

void Set(CommandContext& ctx) {
  auto args = ParseSet(ctx.argv);
  if (!args) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  ApplySet(ctx, *args);
}

// SETFENCE key value [options]: SET key value [options] FENCE under a name
// of its own. Standard clients pass its reply through untouched: the token
// (an integer) or nil. (redis-py's SET callback compares SET's reply with
// "OK", so a SET … FENCE that was granted looks refused there and its token
// is lost.) A grant like any other: through the grant operation.
void SetFence(CommandContext& ctx) {
  auto args = ParseSet(ctx.argv, /*fenced=*/true);
  if (!args) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  ApplySet(ctx, *args);
}

void SetEx(CommandContext& ctx) {
  // SETEX key seconds value / PSETEX key milliseconds value
  SetArgs a;
  a.key = ctx.argv[1];
  a.expire_arg = ctx.argv[2];
  a.value = ctx.argv[3];
  a.expire = ctx.name() == "psetex" ? ExpireKind::kPx : ExpireKind::kEx;
  ApplySet(ctx, a);
}

void SetNx(CommandContext& ctx) {
  // (A key with WAIT clients queued goes to them first: see ApplySet.)
  if (ctx.TakenForAcquire(ctx.argv[1])) {
    ctx.reply.Int(0);
    return;
  }
  Grants::Result granted = ctx.grants.Grant({ctx.argv[1], ctx.argv[2], Lease::None()}, ctx.now);
  if (!granted.granted()) {
    ctx.ReplyRefusal(granted.refusal);
    return;
  }
  ctx.Notify(kNotifyString, "set", ctx.argv[1]);
  ctx.reply.Int(1);
}

void Get(CommandContext& ctx) {
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, ctx.argv[1], ValueType::kString, &e)) return;
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(e->value());
}

void Del(CommandContext& ctx) {
  int64_t removed = 0;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    // Find first: an expired key is removed by expiry (and logged as such),
    // and does not count as deleted here.
    if (ctx.store.Find(ctx.argv[i], ctx.now) == nullptr) continue;
    ctx.store.Delete(ctx.argv[i]);
    ctx.Notify(kNotifyGeneric, "del", ctx.argv[i]);
    ++removed;
  }
  ctx.reply.Int(removed);
}

void Exists(CommandContext& ctx) {
  int64_t count = 0;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    // Not an access to the key (OBJECT IDLETIME), but a read all the same:
    // keyspace hits and misses, and "keymiss" (Redis's LOOKUP_NOTOUCH).
    if (FindNoTouch(ctx, ctx.argv[i]) != nullptr) {
      ++count;
    } else if (ctx.in_script && ctx.TakenForAcquire(ctx.argv[i])) {
      // Inside a script a key that clients wait for is taken: an acquire
      // script that tests EXISTS before its SET leaves it to the first
      // waiter (command.h, TakenForAcquire).
      ++count;
    }
  }
  ctx.reply.Int(count);
}

void DelIfEq(CommandContext& ctx) {
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kString, &e, Access::kWrite)) return;
  if (e == nullptr || e->value() != ctx.argv[2]) {
    ctx.reply.Int(0);
    return;
  }
  ctx.store.Delete(key);
  ctx.Notify(kNotifyGeneric, "del", key);  // a release, named as DEL would be
  ctx.reply.Int(1);
}

void DelEx(CommandContext& ctx) {
  // DELEX key                 → a one-key DEL
  // DELEX key <cond> <operand> → delete only if the condition holds
  // Redis checks the argument count before looking at the key, then answers
  // 0 for a missing key before validating the condition word.
  if (ctx.argv.size() != 2 && ctx.argv.size() != 4) {
    ctx.reply.Error("ERR wrong number of arguments for 'delex' command");
    return;
  }
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e = ctx.store.Find(key, ctx.now);
  if (e == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  bool matches = true;
  if (ctx.argv.size() == 4 && !e->is_string()) {
    ctx.reply.Error(kWrongType);  // a condition compares a string value
    return;
  }
  if (ctx.argv.size() == 4) {
    std::string_view cond = ctx.argv[2], operand = ctx.argv[3];
    if (IsWord(cond, "IFEQ")) {
      matches = e->value() == operand;
    } else if (IsWord(cond, "IFNE")) {
      matches = e->value() != operand;
    } else if (IsWord(cond, "IFDEQ") || IsWord(cond, "IFDNE")) {
      if (operand.size() != 16) {
        ctx.reply.Error(kDigestLengthError);
        return;
      }
      matches = DigestMatches(e->value(), operand) == IsWord(cond, "IFDEQ");
    } else {
      ctx.reply.Error("ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE");
      return;
    }
  }
  if (!matches) {
    ctx.reply.Int(0);
    return;
  }
  ctx.store.Delete(key);
  ctx.Notify(kNotifyGeneric, "del", key);
  ctx.reply.Int(1);
}

void Digest(CommandContext& ctx) {
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, ctx.argv[1], ValueType::kString, &e)) return;
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(DigestOf(e->value()));
}

// ---------------------------------------------------------------- registration

void RegisterStrings(CommandRegistry& r) {
  using namespace spec;
  const std::vector<std::string> kRO_ACCESS = {"RO", "access"};
  const std::vector<std::string> kRW_DELETE = {"RW", "delete"};
  // ---- strings: the lock primitives
  r.Add(Keys(Cmd("set", -3, kWrite | kCmdDenyOom | kLease, Set, {"write", "string", "slow"},
                 {"Set the string value of a key", "1.0.0", "string", "O(1)"},
                 {Key(), Str("value"),
                  Optional(OneOf("condition",
                                 {Token("nx", "NX"), Token("xx", "XX"), Str("ifeq-value", "IFEQ"),
                                  Str("ifne-value", "IFNE"), Str("ifdeq-digest", "IFDEQ"),
                                  Str("ifdne-digest", "IFDNE")}),
                           "2.6.12"),
                  Optional(Token("get", "GET"), "6.2.0"),
                  Optional(OneOf("expiration", {Int("seconds", "EX"), Int("milliseconds", "PX"),
                                                Time("unix-time-seconds", "EXAT"),
                                                Time("unix-time-milliseconds", "PXAT"),
                                                Token("keepttl", "KEEPTTL")})),
                  // latch's own: a fencing token, and waiting in the key's queue.
                  Optional(Block("fence", {Optional(Int("min", "MIN"))}, "FENCE"), "0.1.0"),
                  Optional(Int("timeout", "WAIT"), "0.1.0")}),
             1, 1, 1, {"RW", "access", "update", "variable_flags"}));
  r.Add(Keys(
      Cmd("setfence", -3, kWrite | kCmdDenyOom | kLease, SetFence, {"write", "string", "slow"},
          {"Set the string value of a key as SET ... FENCE does, and return the key's "
           "fencing token (nil when not set)",
           "0.1.0", "string", "O(1)"},
          {Key(), Str("value"),
           Optional(
               OneOf("condition", {Token("nx", "NX"), Token("xx", "XX"), Str("ifeq-value", "IFEQ"),
                                   Str("ifne-value", "IFNE"), Str("ifdeq-digest", "IFDEQ"),
                                   Str("ifdne-digest", "IFDNE")})),
           Optional(OneOf(
               "expiration",
               {Int("seconds", "EX"), Int("milliseconds", "PX"), Time("unix-time-seconds", "EXAT"),
                Time("unix-time-milliseconds", "PXAT"), Token("keepttl", "KEEPTTL")})),
           Optional(Int("min", "MIN")), Optional(Int("timeout", "WAIT"))}),
      1, 1, 1, {"RW", "access", "update", "variable_flags"}));
  r.Add(Keys(
      Cmd("setnx", 3, kWrite | kCmdDenyOom | kFast | kLease, SetNx, {"write", "string", "fast"},
          {"Set the value of a key, only if the key does not exist", "1.0.0", "string", "O(1)"},
          {Key(), Str("value")}),
      1, 1, 1, {"OW", "insert"}));
  r.Add(Keys(Cmd("setex", 4, kWrite | kCmdDenyOom | kLease, SetEx, {"write", "string", "slow"},
                 {"Set the value and expiration of a key", "2.0.0", "string", "O(1)"},
                 {Key(), Int("seconds"), Str("value")}),
             1, 1, 1, {"OW", "update"}));
  r.Add(
      Keys(Cmd("psetex", 4, kWrite | kCmdDenyOom | kLease, SetEx, {"write", "string", "slow"},
               {"Set the value and expiration in milliseconds of a key", "2.6.0", "string", "O(1)"},
               {Key(), Int("milliseconds"), Str("value")}),
           1, 1, 1, {"OW", "update"}));
  r.Add(Keys(Cmd("get", 2, kRead | kFast, Get, {"read", "string", "fast"},
                 {"Get the value of a key", "1.0.0", "string", "O(1)"}, {Key()}),
             1, 1, 1, kRO_ACCESS));
  r.Add(Keys(Cmd("del", -2, kWrite, Del, {"keyspace", "write", "slow"},
                 {"Delete a key", "1.0.0", "generic",
                  "O(N) where N is the number of keys that will be removed."},
                 {Key("key", true)}),
             1, -1, 1, {"RM", "delete"}));
  // UNLINK is DEL: freeing a value is cheap here (one allocation per key),
  // so there is nothing to hand to a background thread.
  r.Add(Keys(Cmd("unlink", -2, kWrite | kFast, Del, {"keyspace", "write", "fast"},
                 {"Delete a key asynchronously in another thread. Otherwise it is just as DEL, "
                  "but non blocking.",
                  "4.0.0", "generic",
                  "O(1) for each key removed regardless of its size. Then the command does O(N) "
                  "work in a different thread in order to reclaim memory, where N is the number "
                  "of allocations the deleted objects where composed of."},
                 {Key("key", true)}),
             1, -1, 1, {"RM", "delete"}));
  r.Add(Keys(Cmd("exists", -2, kRead | kFast, Exists, {"keyspace", "read", "fast"},
                 {"Determine if a key exists", "1.0.0", "generic",
                  "O(N) where N is the number of keys to check."},
                 {Key("key", true)}),
             1, -1, 1, {"RO"}));
  r.Add(Keys(Cmd("delifeq", 3, kWrite | kFast, DelIfEq, {"write", "string", "fast"},
                 {"Delete key if value matches string.", "9.0.0", "string", "O(1)"},
                 {Key(), Str("value")}),
             1, 1, 1, kRW_DELETE));
  r.Add(Keys(
      Cmd("delex", -2, kWrite | kFast, DelEx, {"write", "string", "fast"},
          {"Conditionally removes the specified key based on value or digest comparison.", "8.4.0",
           "string",
           "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string "
           "value."},
          {Key(), Optional(OneOf("condition",
                                 {Str("ifeq-value", "IFEQ"), Str("ifne-value", "IFNE"),
                                  Str("ifdeq-digest", "IFDEQ"), Str("ifdne-digest", "IFDNE")}))}),
      1, 1, 1, {"RW", "delete", "variable_flags"}));
  r.Add(Keys(Cmd("digest", 2, kRead | kFast, Digest, {"read", "string", "fast"},
                 {"Returns the hash digest of a string value", "8.4.0", "string",
                  "O(N) where N is the length of the string value."},
                 {Key()}),
             1, 1, 1, kRO_ACCESS));
}

}  // namespace latch::commands
