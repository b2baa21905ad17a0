// Expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX/XX/GT/LT),
// TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST.
//
// A lock's TTL is its lease: the promise that the lock frees itself if its
// holder dies. Deadlines are kept on the monotonic clock; the replies and
// the log speak Unix time where Redis's interface does, converted once.
#include "server/commands/common.h"
#include "server/pubsub.h"

namespace latch::commands {

namespace {

enum ExpireFlag { kNx = 1, kXx = 2, kGt = 4, kLt = 8 };

// Parses NX/XX/GT/LT. Returns nullopt after replying with an error.
std::optional<int> ParseExpireFlags(CommandContext& ctx) {
  int flags = 0;
  for (size_t j = 3; j < ctx.argv.size(); ++j) {
    std::string_view opt = ctx.argv[j];
    if (IsWord(opt, "NX")) {
      flags |= kNx;
    } else if (IsWord(opt, "XX")) {
      flags |= kXx;
    } else if (IsWord(opt, "GT")) {
      flags |= kGt;
    } else if (IsWord(opt, "LT")) {
      flags |= kLt;
    } else {
      ctx.reply.Error("ERR Unsupported option " + std::string(UpToNul(opt)));
      return std::nullopt;
    }
  }
  if ((flags & kNx) && (flags & (kXx | kGt | kLt))) {
    ctx.reply.Error("ERR NX and XX, GT or LT options at the same time are not compatible");
    return std::nullopt;
  }
  if ((flags & kGt) && (flags & kLt)) {
    ctx.reply.Error("ERR GT and LT options at the same time are not compatible");
    return std::nullopt;
  }
  return flags;
}

// The common body of the four EXPIRE commands. `basetime_ms` is the current
// Unix time for the relative forms and 0 for the absolute ones; `seconds`
// says the argument's unit.
void ExpireGeneric(CommandContext& ctx, int64_t basetime_ms, bool seconds, std::string_view name) {
  std::string_view key = ctx.argv[1];
  auto flags = ParseExpireFlags(ctx);
  if (!flags) return;
  auto when_arg = IntArgOrReply(ctx, ctx.argv[2]);
  if (!when_arg) return;
  int64_t when = *when_arg;  // becomes Unix ms
  if (seconds) {
    if (when > INT64_MAX / 1000 || when < INT64_MIN / 1000) {
      ReplyInvalidExpire(ctx, name);
      return;
    }
    when *= 1000;
  }
  if (when > INT64_MAX - basetime_ms) {
    ReplyInvalidExpire(ctx, name);
    return;
  }
  when += basetime_ms;
  if (when > ctx.now.wall_ms && !ctx.CheckTtl(when - ctx.now.wall_ms)) return;

  const Keyspace::Entry* e = ctx.store.Find(key, ctx.now);
  if (e == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  if (*flags != 0) {
    // "No TTL" counts as an infinite one for GT and LT.
    bool has_ttl = e->has_deadline();
    int64_t current = has_ttl ? ctx.now.WallFromMono(e->deadline) : -1;
    if (((*flags & kNx) && has_ttl) || ((*flags & kXx) && !has_ttl) ||
        ((*flags & kGt) && (!has_ttl || when <= current)) ||
        ((*flags & kLt) && has_ttl && when >= current)) {
      ctx.reply.Int(0);
      return;
    }
  }
  if (when <= ctx.now.wall_ms) {
    // A deadline already past deletes the key (a release), and the log says DEL.
    ctx.store.Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
  } else {
    // A new lease term for whoever holds the key: the lease policy decides.
    int64_t deadline = ctx.now.MonoFromWall(when);
    if (!ctx.AdmitGrant(deadline)) return;
    ctx.store.SetDeadline(key, deadline, ctx.now);
    ctx.Notify(kNotifyGeneric, "expire", key);
  }
  ctx.reply.Int(1);
}

// TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 without key, -1 without TTL.
void TtlGeneric(CommandContext& ctx, bool ms, bool absolute) {
  // Asking about a key is not an access to it (OBJECT IDLETIME), but a
  // read all the same (hits, misses, keymiss), as Redis.
  const Keyspace::Entry* e = FindNoTouch(ctx, ctx.argv[1]);
  if (e == nullptr) {
    ctx.reply.Int(-2);
    return;
  }
  if (!e->has_deadline()) {
    ctx.reply.Int(-1);
    return;
  }
  int64_t ttl = absolute ? ctx.now.WallFromMono(e->deadline) : e->deadline - ctx.now.mono;
  if (ttl < 0) ttl = 0;
  // Rounded to the nearest second without overflowing (ttl + 500) near INT64_MAX.
  ctx.reply.Int(ms ? ttl : ttl / 1000 + (ttl % 1000 >= 500 ? 1 : 0));
}

}  // namespace

void Expire(CommandContext& ctx) {
  ExpireGeneric(ctx, ctx.now.wall_ms, true, "expire");
}
void PExpire(CommandContext& ctx) {
  ExpireGeneric(ctx, ctx.now.wall_ms, false, "pexpire");
}
void ExpireAt(CommandContext& ctx) {
  ExpireGeneric(ctx, 0, true, "expireat");
}
void PExpireAt(CommandContext& ctx) {
  ExpireGeneric(ctx, 0, false, "pexpireat");
}

void Ttl(CommandContext& ctx) {
  TtlGeneric(ctx, false, false);
}
void PTtl(CommandContext& ctx) {
  TtlGeneric(ctx, true, false);
}
void ExpireTime(CommandContext& ctx) {
  TtlGeneric(ctx, false, true);
}
void PExpireTime(CommandContext& ctx) {
  TtlGeneric(ctx, true, true);
}

void Persist(CommandContext& ctx) {
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e = ctx.store.Find(key, ctx.now);
  if (e == nullptr || !e->has_deadline()) {
    ctx.reply.Int(0);
    return;
  }
  // A lease without end: a grant too (the quarantine refuses it).
  if (!ctx.AdmitGrant(kNoDeadline)) return;
  ctx.store.Persist(key);
  ctx.Notify(kNotifyGeneric, "persist", key);
  ctx.reply.Int(1);
}

// ---------------------------------------------------------------- registration

void RegisterExpiry(CommandRegistry& r) {
  using namespace spec;
  const std::vector<ArgDoc> expire_condition = {
      Optional(OneOf("condition",
                     {Token("nx", "NX"), Token("xx", "XX"), Token("gt", "GT"), Token("lt", "LT")}),
               "7.0.0")};
  auto expire_args = [&](ArgDoc when) {
    std::vector<ArgDoc> args = {Key(), std::move(when)};
    args.insert(args.end(), expire_condition.begin(), expire_condition.end());
    return args;
  };
  const std::vector<std::string> kRW_UPDATE = {"RW", "update"};
  const std::vector<std::string> kRO_ACCESS = {"RO", "access"};
  // ---- expiry: the lease
  const Doc kGen = {"", "", "generic", "O(1)"};
  auto doc = [&](std::string summary, std::string since) {
    Doc d = kGen;
    d.summary = std::move(summary);
    d.since = std::move(since);
    return d;
  };
  r.Add(Keys(Cmd("expire", -3, kWrite | kFast | kLease, Expire, {"keyspace", "write", "fast"},
                 doc("Set a key's time to live in seconds", "1.0.0"), expire_args(Int("seconds"))),
             1, 1, 1, kRW_UPDATE));
  r.Add(Keys(Cmd("pexpire", -3, kWrite | kFast | kLease, PExpire, {"keyspace", "write", "fast"},
                 doc("Set a key's time to live in milliseconds", "2.6.0"),
                 expire_args(Int("milliseconds"))),
             1, 1, 1, kRW_UPDATE));
  r.Add(Keys(Cmd("expireat", -3, kWrite | kFast | kLease, ExpireAt, {"keyspace", "write", "fast"},
                 doc("Set the expiration for a key as a UNIX timestamp", "1.2.0"),
                 expire_args(Time("unix-time-seconds"))),
             1, 1, 1, kRW_UPDATE));
  r.Add(Keys(Cmd("pexpireat", -3, kWrite | kFast | kLease, PExpireAt, {"keyspace", "write", "fast"},
                 doc("Set the expiration for a key as a UNIX timestamp specified in "
                     "milliseconds",
                     "2.6.0"),
                 expire_args(Time("unix-time-milliseconds"))),
             1, 1, 1, kRW_UPDATE));
  r.Add(Keys(Cmd("ttl", 2, kRead | kFast, Ttl, {"keyspace", "read", "fast"},
                 doc("Get the time to live for a key in seconds", "1.0.0"), {Key()}),
             1, 1, 1, kRO_ACCESS));
  r.Add(Keys(Cmd("pttl", 2, kRead | kFast, PTtl, {"keyspace", "read", "fast"},
                 doc("Get the time to live for a key in milliseconds", "2.6.0"), {Key()}),
             1, 1, 1, kRO_ACCESS));
  r.Add(Keys(Cmd("expiretime", 2, kRead | kFast, ExpireTime, {"keyspace", "read", "fast"},
                 doc("Get the expiration Unix timestamp for a key", "7.0.0"), {Key()}),
             1, 1, 1, kRO_ACCESS));
  r.Add(Keys(
      Cmd("pexpiretime", 2, kRead | kFast, PExpireTime, {"keyspace", "read", "fast"},
          doc("Get the expiration Unix timestamp for a key in milliseconds", "7.0.0"), {Key()}),
      1, 1, 1, kRO_ACCESS));
  r.Add(Keys(Cmd("persist", 2, kWrite | kFast | kLease, Persist, {"keyspace", "write", "fast"},
                 doc("Remove the expiration from a key", "2.2.0"), {Key()}),
             1, 1, 1, kRW_UPDATE));
}

}  // namespace latch::commands
