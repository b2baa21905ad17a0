// The list family, continued (lists.cc has the rest and the lock rule): the
// moves LMOVE and RPOPLPUSH, LMPOP, and the blocking pops BLPOP, BRPOP,
// BLMPOP, BLMOVE and BRPOPLPUSH.
//
// A blocking pop is its plain self when there is something to pop (BLPOP
// pops and replies as LPOP would, and is logged as LPOP key 1). When there
// is nothing, it parks the client on its keys (commands/blocking.h); the
// server runs the same handler again, with ctx.serving_key, when one of
// them receives elements (server/waits.cc) — so what a served pop does,
// logs and replies is written once, here. Inside MULTI or a script nothing
// blocks: the answer is the timeout's, at once (Redis's rule).
//
// Every one of them hands data out: kLease, admitted once it is known that
// something will be popped (lists.cc says why).
#include <string>
#include <vector>

#include "server/commands/blocking.h"
#include "server/commands/lists.h"

namespace latch::commands {

namespace {

using End = ListValue::End;

// LMOVE source destination LEFT|RIGHT LEFT|RIGHT, RPOPLPUSH, and the
// blocking forms once their timeout is parsed: the element moved, or nil
// when the source is missing (or, for the blocking forms, the wait).
void Move(CommandContext& ctx, End from, End to, bool blocking, int64_t timeout_at) {
  const std::string_view src = ctx.argv[1], dst = ctx.argv[2];
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, src, &e, &list, Access::kWrite)) return;
  if (list == nullptr) {
    if (!blocking) {
      ctx.reply.Null();
      return;
    }
    const std::string_view keys[] = {src};
    ParkOrAnswer(ctx, keys, ValueType::kList, timeout_at, TimeoutReply::kNull);
    return;
  }
  MoveAndReply(ctx, src, e, dst, from, to);
}

void LMove(CommandContext& ctx) {
  End from, to;
  if (!ListEndOrReply(ctx, ctx.argv[3], &from) || !ListEndOrReply(ctx, ctx.argv[4], &to)) return;
  Move(ctx, from, to, false, 0);
}

void RPopLPush(CommandContext& ctx) {
  Move(ctx, End::kTail, End::kHead, false, 0);
}

void BLMove(CommandContext& ctx) {
  End from, to;
  if (!ListEndOrReply(ctx, ctx.argv[3], &from) || !ListEndOrReply(ctx, ctx.argv[4], &to)) return;
  int64_t at;
  if (!BlockTimeoutOrReply(ctx, ctx.argv[5], &at)) return;
  Move(ctx, from, to, true, at);
}

void BRPopLPush(CommandContext& ctx) {
  int64_t at;
  if (!BlockTimeoutOrReply(ctx, ctx.argv[3], &at)) return;
  Move(ctx, End::kTail, End::kHead, true, at);
}

// The pop of every multi-key form: from the first of `keys` that holds a
// non-empty list (only `ctx.serving_key` when serving a parked client).
// With `with_key`, the reply is [key, element] (BLPOP) or, with
// `as_array`, [key, [elements]] (LMPOP). False when no key had anything
// (nothing replied), true once replied (popped, or WRONGTYPE).
bool PopFirst(CommandContext& ctx, std::span<const std::string_view> keys, End end, int64_t count,
              bool as_array) {
  for (std::string_view key : keys) {
    if (ctx.serving_key && *ctx.serving_key != key) continue;
    const Keyspace::Entry* e;
    const ListValue* list;
    if (!FindList(ctx, key, &e, &list, Access::kWrite)) return true;
    if (list == nullptr) continue;
    if (!ctx.AdmitGrant(DeadlineOf(e))) return true;
    ctx.reply.Array(2);
    ctx.reply.Bulk(key);
    PopAndReply(ctx, key, *list, end, count, as_array);
    return true;
  }
  return false;
}

// BLPOP/BRPOP key [key ...] timeout: [key, element], or the wait.
void BlockingPop(CommandContext& ctx, End end) {
  int64_t at;
  if (!BlockTimeoutOrReply(ctx, ctx.argv.back(), &at)) return;
  const auto keys = ctx.argv.subspan(1, ctx.argv.size() - 2);
  if (PopFirst(ctx, keys, end, 1, false)) return;
  ParkOrAnswer(ctx, keys, ValueType::kList, at, TimeoutReply::kNullArray);
}

void BLPop(CommandContext& ctx) {
  BlockingPop(ctx, End::kHead);
}
void BRPop(CommandContext& ctx) {
  BlockingPop(ctx, End::kTail);
}

// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count], and BLMPOP timeout
// numkeys …: [key, [elements]] from the first non-empty list, or a null
// array (or the wait).
void MultiPop(CommandContext& ctx, bool blocking) {
  const size_t numkeys_at = blocking ? 2 : 1;
  auto numkeys = ParseInt64(ctx.argv[numkeys_at]);
  if (!numkeys || *numkeys < 1) {
    ctx.reply.Error("ERR numkeys should be greater than 0");
    return;
  }
  // The keys, then where; past the arguments there is no where.
  const size_t first_key = numkeys_at + 1;
  if (static_cast<uint64_t>(*numkeys) >= ctx.argv.size() - first_key) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  const size_t where_at = first_key + static_cast<size_t>(*numkeys);
  End end;
  if (!ListEndOrReply(ctx, ctx.argv[where_at], &end)) return;
  int64_t count = -1;
  for (size_t j = where_at + 1; j < ctx.argv.size(); ++j) {
    if (count == -1 && IsWord(ctx.argv[j], "COUNT") && j + 1 < ctx.argv.size()) {
      auto n = ParseInt64(ctx.argv[++j]);
      if (!n || *n < 1) {
        ctx.reply.Error("ERR count should be greater than 0");
        return;
      }
      count = *n;
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  if (count == -1) count = 1;
  int64_t at = 0;
  if (blocking && !BlockTimeoutOrReply(ctx, ctx.argv[1], &at)) return;
  const auto keys = ctx.argv.subspan(first_key, static_cast<size_t>(*numkeys));
  if (PopFirst(ctx, keys, end, count, true)) return;
  if (!blocking) {
    ctx.reply.NullArray();
    return;
  }
  ParkOrAnswer(ctx, keys, ValueType::kList, at, TimeoutReply::kNullArray);
}

void LMPop(CommandContext& ctx) {
  MultiPop(ctx, false);
}
void BLMPop(CommandContext& ctx) {
  MultiPop(ctx, true);
}

}  // namespace

// ---------------------------------------------------------------- registration

void RegisterListMoves(CommandRegistry& r) {
  using namespace spec;
  auto doc = [](std::string summary, std::string since, std::string complexity) {
    return Doc{std::move(summary), std::move(since), "list", std::move(complexity)};
  };
  auto ends = [](std::string name) {
    return OneOf(std::move(name), {Token("left", "LEFT"), Token("right", "RIGHT")});
  };
  ArgDoc destination = Key("destination");
  destination.key_spec_index = 1;
  const uint32_t kBlock = kWrite | kCmdNoScript | kCmdBlocking | kLease;
  r.Add(KeySpecs(
      Cmd("lmove", 5, kWrite | kCmdDenyOom | kLease, LMove, {"write", "list", "slow"},
          doc("Pop an element from a list, push it to another list and return it", "6.2.0", "O(1)"),
          {Key("source"), destination, ends("wherefrom"), ends("whereto")}),
      1, 2, 1, {RangeSpec({"RW", "access", "delete"}, 1), RangeSpec({"RW", "insert"}, 2)}));
  r.Add(KeySpecs(
      Cmd("rpoplpush", 3, kWrite | kCmdDenyOom | kLease, RPopLPush, {"write", "list", "slow"},
          doc("Remove the last element in a list, prepend it to another list and return it",
              "1.2.0", "O(1)"),
          {Key("source"), destination}),
      1, 2, 1, {RangeSpec({"RW", "access", "delete"}, 1), RangeSpec({"RW", "insert"}, 2)}));
  // LMPOP and BLMPOP count their keys (numkeys): a keynum key spec, which
  // makes them "movablekeys".
  r.Add(KeySpecs(
      Cmd("lmpop", -4, kWrite | kLease, LMPop, {"write", "list", "slow"},
          doc("Pop elements from a list", "7.0.0",
              "O(N+M) where N is the number of provided keys and M is the number of elements "
              "returned."),
          {Int("numkeys"), Key("key", true), ends("where"), Optional(Int("count", "COUNT"))}),
      0, 0, 0, {KeyNumSpec({"RW", "access", "delete"}, 1)}));
  r.Add(Keys(Cmd("blpop", -3, kBlock, BLPop, {"write", "list", "slow", "blocking"},
                 doc("Remove and get the first element in a list, or block until one is available",
                     "2.0.0", "O(N) where N is the number of provided keys."),
                 {Key("key", true), Double("timeout")}),
             1, -2, 1, {"RW", "access", "delete"}));
  r.Add(Keys(Cmd("brpop", -3, kBlock, BRPop, {"write", "list", "slow", "blocking"},
                 doc("Remove and get the last element in a list, or block until one is available",
                     "2.0.0", "O(N) where N is the number of provided keys."),
                 {Key("key", true), Double("timeout")}),
             1, -2, 1, {"RW", "access", "delete"}));
  r.Add(KeySpecs(
      Cmd("blmove", 6, kBlock | kCmdDenyOom, BLMove, {"write", "list", "slow", "blocking"},
          doc("Pop an element from a list, push it to another list and return it; or block "
              "until one is available",
              "6.2.0", "O(1)"),
          {Key("source"), destination, ends("wherefrom"), ends("whereto"), Double("timeout")}),
      1, 2, 1, {RangeSpec({"RW", "access", "delete"}, 1), RangeSpec({"RW", "insert"}, 2)}));
  r.Add(KeySpecs(
      Cmd("brpoplpush", 4, kBlock | kCmdDenyOom, BRPopLPush, {"write", "list", "slow", "blocking"},
          doc("Pop an element from a list, push it to another list and return it; or block "
              "until one is available",
              "2.2.0", "O(1)"),
          {Key("source"), destination, Double("timeout")}),
      1, 2, 1, {RangeSpec({"RW", "access", "delete"}, 1), RangeSpec({"RW", "insert"}, 2)}));
  r.Add(KeySpecs(Cmd("blmpop", -5, kWrite | kCmdBlocking | kLease, BLMPop,
                     {"write", "list", "slow", "blocking"},
                     doc("Pop elements from a list, or block until one is available", "7.0.0",
                         "O(N+M) where N is the number of provided keys and M is the number of "
                         "elements returned."),
                     {Double("timeout"), Int("numkeys"), Key("key", true), ends("where"),
                      Optional(Int("count", "COUNT"))}),
                 0, 0, 0, {KeyNumSpec({"RW", "access", "delete"}, 2)}));
}

}  // namespace latch::commands
