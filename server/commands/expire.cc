// Expiry commands: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX/XX/GT/LT),
// TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST.
//
// A lock's TTL is its lease: the promise that the lock frees itself if its
// holder dies. Deadlines are kept on the monotonic clock; the replies and
// the log speak Unix time where Redis's interface does, converted once.
#include "server/commands/common.h"
#include "server/effects.h"
#include "server/keyspace.h"

namespace latch::commands {

namespace {

enum ExpireFlag { kNx = 1, kXx = 2, kGt = 4, kLt = 8 };

// Parses NX/XX/GT/LT. Returns nullopt after replying with an error.
std::optional<int> ParseExpireFlags(CommandContext& ctx) {
  int flags = 0;
  for (size_t j = 3; j < ctx.argv.size(); ++j) {
    std::string_view opt = ctx.argv[j];
    if (EqualsIgnoreCase(opt, "NX")) {
      flags |= kNx;
    } else if (EqualsIgnoreCase(opt, "XX")) {
      flags |= kXx;
    } else if (EqualsIgnoreCase(opt, "GT")) {
      flags |= kGt;
    } else if (EqualsIgnoreCase(opt, "LT")) {
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
  if (when > ctx.now.wall_ms && !LeaseWithinCap(ctx, when - ctx.now.wall_ms)) return;

  const Keyspace::Entry* e = ctx.db.Find(key, ctx.now.mono);
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
    // A deadline already past deletes the key, and the log says DEL.
    ctx.db.Erase(key);
    ctx.effects.Del(key);
  } else {
    ctx.db.SetDeadline(key, ctx.now.MonoFromWall(when));
    ctx.effects.PExpireAt(key, when);
  }
  ctx.reply.Int(1);
}

// TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 without key, -1 without TTL.
void TtlGeneric(CommandContext& ctx, bool ms, bool absolute) {
  const Keyspace::Entry* e = ctx.db.Find(ctx.argv[1], ctx.now.mono);
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
  const Keyspace::Entry* e = ctx.db.Find(key, ctx.now.mono);
  if (e == nullptr || !e->has_deadline()) {
    ctx.reply.Int(0);
    return;
  }
  ctx.db.SetDeadline(key, kNoDeadline);
  ctx.effects.Persist(key);
  ctx.reply.Int(1);
}

}  // namespace latch::commands
