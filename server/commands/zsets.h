// The sorted-set family (zsets.cc, zset_pops.cc, zset_ranges.cc,
// zset_algebra.cc): what its files share.
//
// The lock rule for every write of the family (the restart quarantine's, see
// grant.h): a write that adds to a sorted set, changes a score or hands
// elements out — ZADD, ZINCRBY, ZPOPMIN, ZPOPMAX, ZMPOP, the blocking pops
// (BZPOPMIN, BZPOPMAX, BZMPOP: when they pop at once and when they serve a
// parked client), and the *STORE commands when they store something — is a
// grant (kLease): it asks ctx.AdmitGrant (the key's deadline, or none for a
// new key) before it applies, so a quarantined node refuses it as it refuses
// SET (a semaphore's permit is a ZADD). A write that only removes — ZREM,
// ZREMRANGEBYSCORE, ZREMRANGEBYRANK, ZREMRANGEBYLEX, a *STORE whose result
// is empty (it deletes the destination) — is a release and is never refused.
//
// Every write is logged as its effect, in two record kinds (record_kinds.h):
// ZADD key score member … (the scores as they read back exactly) and ZREM
// key member …. ZINCRBY logs the ZADD of the new score, the pops and
// ZREMRANGEBY* the ZREM of what went (in records of at most 64 members, one
// transaction), the *STORE commands DEL of the destination then its ZADDs
// (one transaction, Store::Atomic).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/commands/common.h"
#include "server/types/zset.h"

namespace latch::commands {

// ---------------------------------------------------------------- pops
// The pop every pop command makes (zset_pops.cc: ZPOPMIN, ZPOPMAX, ZMPOP,
// and the blocking BZPOPMIN, BZPOPMAX, BZMPOP when they pop at once or
// serve a parked client).

enum class ZEnd { kMin, kMax };

// One popped element.
struct ZPopped {
  std::string member;
  double score = 0;
};

// Takes up to `count` (>= 1) elements from the low (kMin) or high (kMax) end
// of the sorted set under `key` in the Store's selected database, lowest
// (highest) first, and logs their removal as ZREM (the key goes with its
// last element). The caller found `key` holding a sorted set (FindAs), and
// admitted the write (ctx.AdmitGrant: a pop hands elements out). Returns
// what it took, in order.
std::vector<ZPopped> ZPop(Store& store, std::string_view key, ZEnd end, size_t count,
                          const TimeSnapshot& now);
// ZPop in the session's database, with the keyspace events of Redis's
// genericZpopCommand: one "zpopmin"/"zpopmax" however many elements went,
// then "del" when the set went with them. What every pop command calls.
std::vector<ZPopped> ZPopAndNotify(CommandContext& ctx, std::string_view key, ZEnd end,
                                   size_t count);

// The reply shapes of Redis's genericZpopCommand.
enum class ZPopShape {
  kFlat,           // ZPOPMIN/ZPOPMAX (RESP2, or no count): [m1, s1, m2, s2, …]
  kNested,         // ZPOPMIN/ZPOPMAX key count in RESP3: [[m1, s1], …]
  kFlatWithKey,    // BZPOPMIN/BZPOPMAX: [key, m, s]
  kNestedWithKey,  // ZMPOP/BZMPOP: [key, [[m1, s1], …]]
};
// Writes the reply for `popped` (taken from `key`) in `shape`; scores as
// doubles (a bulk string in RESP2, `,` in RESP3).
void ReplyPopped(resp::ReplySink& reply, std::string_view key, std::span<const ZPopped> popped,
                 ZPopShape shape);

// ---------------------------------------------------------------- shared

// Writes `n` elements with or without their scores, as ZRANGE … WITHSCORES
// replies: the array's header here, then ReplyElement per element.
void ReplyElementsHeader(CommandContext& ctx, size_t n, bool withscores);
// One element: [member, score] in RESP3 with scores, member then score in
// RESP2, the member alone without.
void ReplyElement(CommandContext& ctx, std::string_view member, double score, bool withscores);

// A *STORE command's result: `dst` gets exactly these (member, score)
// pairs (in score order, members distinct), replacing whatever it held, or
// goes when there are none. Logged as DEL then ZADD records of at most 64
// pairs, one transaction. The caller admitted the write when `elements` is
// not empty.
// Replies the result's size, then sends Redis's events: `event` for a
// stored result (after "new" if `dst` did not exist: an existing key is
// overwritten, not created), "del" when an empty result removed a key.
void StoreResult(CommandContext& ctx, std::string_view dst,
                 const std::vector<std::pair<std::string, double>>& elements,
                 std::string_view event);

// Removes `members` (distinct, present) from the sorted set under `key`:
// ZREM records of at most 64 members, one transaction.
void RemoveMembers(CommandContext& ctx, std::string_view key,
                   std::span<const std::string_view> members);

// The other files' commands, registered by RegisterZSets (zsets.cc).
void RegisterZSetPops(CommandRegistry& r);
void RegisterZSetRanges(CommandRegistry& r);
void RegisterZSetAlgebra(CommandRegistry& r);

}  // namespace latch::commands
