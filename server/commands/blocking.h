// What every blocking pop shares (BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH;
// the sorted sets' BZPOPMIN, BZPOPMAX, BZMPOP): Redis's timeout argument, and
// what to do when there is nothing to pop.
//
// A blocking pop is written as its non-blocking self plus two moments:
//  1. Sent by a client, it pops from the first of its keys that has
//     something, as the plain command would. When none has, it parks the
//     client on all of them (ParkOrAnswer) — unless it may not block (inside
//     MULTI or a script: Redis's rule is to answer as a timeout at once).
//  2. When one of its keys later receives something, the server runs the
//     same handler again with ctx.serving_key set to that key
//     (server/waits.cc): it pops from that key only, or, when the key cannot
//     serve it (emptied by an earlier waiter, or of another type now), sets
//     ctx.keep_waiting and writes nothing — the client stays parked in
//     every queue it was in.
// So a blocked pop's effects and reply are exactly the plain pop's: a served
// BLPOP logs LPOP key 1 and replies [key, element], held until the log has
// the record.
#pragma once

#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/common.h"
#include "server/parking.h"

namespace latch::commands {

// Parses a blocking command's timeout, in seconds, as Redis does
// (getTimeoutFromObjectOrReply): a float, 0 for "forever", and an absolute
// boot-clock deadline in *at (0: none). False after replying the error.
inline bool BlockTimeoutOrReply(CommandContext& ctx, std::string_view arg, int64_t* at) {
  auto secs = ParseLongDouble(arg);
  if (!secs) {
    ctx.reply.Error("ERR timeout is not a float or out of range");
    return false;
  }
  // Redis rounds up to the millisecond, as a long long; a value too large
  // for one becomes negative there, and is refused as such.
  const long double ms = std::ceil(*secs * 1000.0L);
  if (!(ms < 9223372036854775808.0L) || ms < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return false;
  }
  const auto whole = static_cast<int64_t>(ms);
  *at = whole == 0 ? 0 : whole > INT64_MAX - ctx.now.mono ? INT64_MAX : ctx.now.mono + whole;
  return true;
}

// Whether the handler runs for a client's request (nullopt), or to serve a
// parked client from one key: the keys it may pop from are then only that
// one.
inline bool ServingOther(const CommandContext& ctx, std::string_view key) {
  return ctx.serving_key && *ctx.serving_key != key;
}

// Nothing to pop from any of `keys`. Serving a parked client: it keeps
// waiting. A client's own request: parked on the keys until one can serve
// it, its timeout (`at`) passes, it disconnects or is unblocked — or, where
// it may not block (MULTI, scripts), answered at once as a timeout would be:
// a null array, or a null bulk for the moves (BLMOVE, BRPOPLPUSH).
enum class TimeoutReply { kNullArray, kNull };
inline void ParkOrAnswer(CommandContext& ctx, std::span<const std::string_view> keys,
                         ValueType type, int64_t at, TimeoutReply timeout_reply) {
  if (ctx.serving_key) {
    ctx.keep_waiting = true;
    return;
  }
  if (!ctx.may_block) {
    if (timeout_reply == TimeoutReply::kNull) {
      ctx.reply.Null();
    } else {
      ctx.reply.NullArray();
    }
    return;
  }
  PopWaitRequest r;
  r.type = type;
  r.cmd = &ctx.cmd;
  r.argv.assign(ctx.argv.begin(), ctx.argv.end());
  r.timeout_at = at;
  ctx.parking().ParkForKeys(ctx.session, keys, std::move(r));
}

}  // namespace latch::commands
