// Lock introspection: FENCE and LOCKINFO (issue 17).
//
// A lock is a key whose value names its holder; latch can also say what a
// plain key cannot: the holder's fencing token (SET … FENCE, see store.h)
// and how many clients wait in the key's queue (SET … NX WAIT, waiters.h).
//
//   FENCE key     the current holder's token: an integer, or nil when the
//                 key is absent or was granted without FENCE. A client that
//                 lost track of its token (a restart, a library that only
//                 kept the value) can ask for it again.
//   LOCKINFO key  who holds the key and how things stand, in one reply:
//                 holder (the value, or nil), token (or nil), pttl (as PTTL:
//                 -2 absent, -1 no lease) and waiters (the queue's length,
//                 which may be non-zero for an absent key while a grant
//                 waits for the lease policy). A map in RESP3, a flat array
//                 of field, value in RESP2, as CONFIG GET and HELLO do.
//
// Neither counts as an access to the key (OBJECT IDLETIME), as TTL does not.
#include "server/commands/common.h"
#include "server/control.h"

namespace latch::commands {

namespace {

void Fence(CommandContext& ctx) {
  const Keyspace::Entry* e = ctx.store.Find(ctx.argv[1], ctx.now, /*touch=*/false);
  if (e == nullptr || !e->fenced) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Int(static_cast<int64_t>(e->token()));
}

void LockInfo(CommandContext& ctx) {
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e = ctx.store.Find(key, ctx.now, /*touch=*/false);
  if (e != nullptr && !e->is_string()) {
    ctx.reply.Error(kWrongType);  // a lock's holder is a string value
    return;
  }
  const int64_t waiters = static_cast<int64_t>(ctx.grants.Waiters(ctx.session.db, key));
  int64_t pttl = -2;
  if (e != nullptr)
    pttl = e->has_deadline() ? std::max<int64_t>(e->deadline - ctx.now.mono, 0) : -1;
  if (ctx.reply.resp3()) {
    ctx.reply.Map(4);
  } else {
    ctx.reply.Array(8);
  }
  ctx.reply.Bulk("holder");
  if (e != nullptr) {
    ctx.reply.Bulk(e->value());
  } else {
    ctx.reply.Null();
  }
  ctx.reply.Bulk("token");
  if (e != nullptr && e->fenced) {
    ctx.reply.Int(static_cast<int64_t>(e->token()));
  } else {
    ctx.reply.Null();
  }
  ctx.reply.Bulk("pttl");
  ctx.reply.Int(pttl);
  ctx.reply.Bulk("waiters");
  ctx.reply.Int(waiters);
}

}  // namespace

// ---------------------------------------------------------------- registration

void RegisterLocks(CommandRegistry& r) {
  using namespace spec;
  r.Add(Keys(Cmd("fence", 2, kRead | kFast, Fence, {"read", "string", "fast"},
                 {"Returns the fencing token of the key's current holder (SET ... FENCE), or nil",
                  "0.1.0", "string", "O(1)"},
                 {Key()}),
             1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("lockinfo", 2, kRead | kFast, LockInfo, {"read", "string", "fast"},
                 {"Returns a lock's holder (the key's value), fencing token, remaining lease in "
                  "milliseconds and the number of clients waiting for it (SET ... NX WAIT)",
                  "0.1.0", "string", "O(1)"},
                 {Key()}),
             1, 1, 1, {"RO", "access"}));
}

}  // namespace latch::commands
