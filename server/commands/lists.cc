// The list family: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LINDEX,
// LRANGE, LSET, LINSERT, LREM, LTRIM, LPOS (this file); LMOVE, RPOPLPUSH,
// LMPOP and the blocking pops BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH
// (list_moves.cc). The value is a ListValue (types/list.h, Redis 7.0's
// quicklist); every write is one of the list records (log/record_kinds.h
// says why those), applied through Store::Apply.
//
// Each handler parses, then looks the key up, then decides and hands the
// Store the effect — in Redis's order, so that the same bad request gets the
// same error (LINDEX on a missing key answers nil even with a bad index;
// LRANGE checks its indexes first).
//
// The lock rule (types.md, issue 22): a write that adds or changes data
// (LPUSH, RPUSH, LPUSHX, RPUSHX, LSET, LINSERT) or hands it out (LPOP,
// RPOP, LMPOP, LMOVE, RPOPLPUSH and the blocking pops, served at once or
// later) is a grant: flagged kLease, it calls ctx.AdmitGrant with the key's
// deadline once it knows the write will happen, so the restart quarantine
// refuses it as it refuses SET (a blocked pop stays blocked meanwhile).
// LREM and LTRIM only remove: releases, never refused. Reads (LLEN, LINDEX,
// LRANGE, LPOS) are reads.
#include "server/commands/lists.h"

#include <string>
#include <vector>

namespace latch::commands {

namespace {

using End = ListValue::End;

aof::Op PopOp(End end) {
  return end == End::kHead ? aof::Op::kLPop : aof::Op::kRPop;
}

// LPUSH/RPUSH/LPUSHX/RPUSHX key element [element ...]: the new length, or 0
// for an X form on a missing key.
void Push(CommandContext& ctx, End end, bool only_existing) {
  const std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, key, &e, &list, Access::kWrite)) return;
  if (list == nullptr && only_existing) {
    ctx.reply.Int(0);
    return;
  }
  if (!ctx.AdmitGrant(DeadlineOf(e))) return;
  Applied a = ctx.store.Apply(end == End::kHead ? aof::Op::kLPush : aof::Op::kRPush, key,
                              ctx.argv.subspan(2), ctx.now);
  ctx.reply.Int(a.count);
  // LPUSHX/RPUSHX are "lpush"/"rpush" too, as in Redis.
  ctx.Notify(kNotifyList, end == End::kHead ? "lpush" : "rpush", key);
}

void LPush(CommandContext& ctx) {
  Push(ctx, End::kHead, false);
}
void RPush(CommandContext& ctx) {
  Push(ctx, End::kTail, false);
}
void LPushX(CommandContext& ctx) {
  Push(ctx, End::kHead, true);
}
void RPushX(CommandContext& ctx) {
  Push(ctx, End::kTail, true);
}

// LPOP/RPOP key [count]: a bulk (nil for a missing key), or with a count an
// array (a null array for a missing key, an empty one for count 0).
void Pop(CommandContext& ctx, End end) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error("ERR wrong number of arguments for '" + ctx.name() + "' command");
    return;
  }
  const bool has_count = ctx.argv.size() == 3;
  int64_t count = 0;
  if (has_count) {
    auto n = ParseInt64(ctx.argv[2]);
    if (!n || *n < 0) {
      ctx.reply.Error("ERR value is out of range, must be positive");
      return;
    }
    count = *n;
  }
  const std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, key, &e, &list, Access::kWrite)) return;
  if (list == nullptr) {
    if (has_count) {
      ctx.reply.NullArray();
    } else {
      ctx.reply.Null();
    }
    return;
  }
  if (has_count && count == 0) {
    ctx.reply.Array(0);
    return;
  }
  if (!ctx.AdmitGrant(DeadlineOf(e))) return;
  PopAndReply(ctx, key, *list, end, has_count ? count : 1, has_count);
}

void LPop(CommandContext& ctx) {
  Pop(ctx, End::kHead);
}
void RPop(CommandContext& ctx) {
  Pop(ctx, End::kTail);
}

void LLen(CommandContext& ctx) {
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, ctx.argv[1], &e, &list, Access::kRead)) return;
  ctx.reply.Int(list != nullptr ? static_cast<int64_t>(list->size()) : 0);
}

void LIndex(CommandContext& ctx) {
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, ctx.argv[1], &e, &list, Access::kRead)) return;
  if (list == nullptr) {
    ctx.reply.Null();
    return;
  }
  auto index = IntArgOrReply(ctx, ctx.argv[2]);
  if (!index) return;
  ListValue::Cursor c = list->At(*index);
  if (c.valid()) {
    ctx.reply.Bulk(c.value());
  } else {
    ctx.reply.Null();
  }
}

// Replies the elements [first, last] of `list`, head to tail.
void ReplyRange(CommandContext& ctx, const ListValue& list, size_t first, size_t last) {
  ctx.reply.Array(last - first + 1);
  ListValue::Cursor c = list.At(static_cast<int64_t>(first));
  for (size_t i = first; i <= last; ++i, c.Next()) ctx.reply.Bulk(c.value());
}

void LRange(CommandContext& ctx) {
  auto start = IntArgOrReply(ctx, ctx.argv[2]);
  if (!start) return;
  auto stop = IntArgOrReply(ctx, ctx.argv[3]);
  if (!stop) return;
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, ctx.argv[1], &e, &list, Access::kRead)) return;
  auto range = list != nullptr ? ListRange(*start, *stop, list->size()) : std::nullopt;
  if (!range) {
    ctx.reply.Array(0);
    return;
  }
  ReplyRange(ctx, *list, range->first, range->second);
}

void LSet(CommandContext& ctx) {
  const std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, key, &e, &list, Access::kWrite)) return;
  if (list == nullptr) {
    ctx.reply.Error("ERR no such key");
    return;
  }
  auto index = IntArgOrReply(ctx, ctx.argv[2]);
  if (!index) return;
  if (!list->At(*index).valid()) {
    ctx.reply.Error("ERR index out of range");
    return;
  }
  if (!ctx.AdmitGrant(DeadlineOf(e))) return;
  ctx.store.Apply(aof::Op::kLSet, key, ctx.argv.subspan(2), ctx.now);
  ctx.reply.Ok();
  ctx.Notify(kNotifyList, "lset", key);
}

void LInsert(CommandContext& ctx) {
  // (Compared as C strings, as Redis's strcasecmp: "after\0x" is AFTER.)
  std::string_view where;
  if (IsWord(ctx.argv[2], "AFTER")) {
    where = "AFTER";
  } else if (IsWord(ctx.argv[2], "BEFORE")) {
    where = "BEFORE";
  } else {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  const std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, key, &e, &list, Access::kWrite)) return;
  if (list == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  // Only a list that has the pivot changes (and so asks for admission).
  bool found = false;
  for (ListValue::Cursor c = list->Head(); c.valid() && !found; c.Next()) {
    found = c.value() == ctx.argv[3];
  }
  if (!found) {
    ctx.reply.Int(-1);
    return;
  }
  if (!ctx.AdmitGrant(DeadlineOf(e))) return;
  const std::string_view rest[] = {where, ctx.argv[3], ctx.argv[4]};
  ctx.reply.Int(ctx.store.Apply(aof::Op::kLInsert, key, rest, ctx.now).count);
  ctx.Notify(kNotifyList, "linsert", key);
}

void LRem(CommandContext& ctx) {
  auto count = IntArgOrReply(ctx, ctx.argv[2]);
  if (!count) return;
  const std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, key, &e, &list, Access::kWrite)) return;
  if (list == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  // A release: never refused. A removal that finds nothing logs nothing.
  const int64_t removed = ctx.store.Apply(aof::Op::kLRem, key, ctx.argv.subspan(2), ctx.now).count;
  if (removed > 0) NotifyCollection(ctx, kNotifyList, "lrem", key);
  ctx.reply.Int(removed);
}

void LTrim(CommandContext& ctx) {
  auto start = IntArgOrReply(ctx, ctx.argv[2]);
  if (!start) return;
  auto stop = IntArgOrReply(ctx, ctx.argv[3]);
  if (!stop) return;
  const std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, key, &e, &list, Access::kWrite)) return;
  // A release: never refused; a trim that keeps everything logs nothing,
  // but sends "ltrim" all the same (Redis notifies every LTRIM of a list).
  if (list != nullptr) {
    ctx.store.Apply(aof::Op::kLTrim, key, ctx.argv.subspan(2), ctx.now);
    NotifyCollection(ctx, kNotifyList, "ltrim", key);
  }
  ctx.reply.Ok();
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void LPos(CommandContext& ctx) {
  int64_t rank = 1, count = -1, maxlen = 0;  // count -1: no COUNT
  for (size_t j = 3; j < ctx.argv.size(); ++j) {
    const bool more = j + 1 < ctx.argv.size();
    if (IsWord(ctx.argv[j], "RANK") && more) {
      auto r = IntArgOrReply(ctx, ctx.argv[++j]);
      if (!r) return;
      if (*r == 0) {
        ctx.reply.Error(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
        return;
      }
      rank = *r;
    } else if (IsWord(ctx.argv[j], "COUNT") && more) {
      auto n = ParseInt64(ctx.argv[++j]);
      if (!n || *n < 0) {
        ctx.reply.Error("ERR COUNT can't be negative");
        return;
      }
      count = *n;
    } else if (IsWord(ctx.argv[j], "MAXLEN") && more) {
      auto n = ParseInt64(ctx.argv[++j]);
      if (!n || *n < 0) {
        ctx.reply.Error("ERR MAXLEN can't be negative");
        return;
      }
      maxlen = *n;
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  // A negative rank searches from the tail. (Redis negates it as a C long:
  // the most negative rank stays negative there, so every match counts and
  // COUNT never stops the search.)
  const bool backward = rank < 0;
  const bool min_rank = rank == INT64_MIN;
  if (backward && !min_rank) rank = -rank;
  const Keyspace::Entry* e;
  const ListValue* list;
  if (!FindList(ctx, ctx.argv[1], &e, &list, Access::kRead)) return;
  if (list == nullptr) {
    if (count != -1) {
      ctx.reply.Array(0);
    } else {
      ctx.reply.Null();
    }
    return;
  }
  const std::string_view element = ctx.argv[2];
  const auto len = static_cast<int64_t>(list->size());
  std::vector<int64_t> found;
  int64_t matches = 0;
  int64_t index = 0;
  for (ListValue::Cursor c = backward ? list->Tail() : list->Head();
       c.valid() && (maxlen == 0 || index < maxlen); ++index) {
    if (c.value() == element) {
      ++matches;
      if (min_rank || matches >= rank) {
        found.push_back(backward ? len - index - 1 : index);
        if (count == -1) break;
        if (!min_rank && count != 0 && matches - rank + 1 >= count) break;
      }
    }
    if (backward) {
      c.Prev();
    } else {
      c.Next();
    }
  }
  if (count != -1) {
    ctx.reply.Array(found.size());
    for (int64_t i : found) ctx.reply.Int(i);
  } else if (!found.empty()) {
    ctx.reply.Int(found.front());
  } else {
    ctx.reply.Null();
  }
}

}  // namespace

bool ListEndOrReply(CommandContext& ctx, std::string_view arg, ListValue::End* end) {
  // (Compared whole, as Redis's strcasecmp on the argument's C string.)
  if (IsWord(arg, "LEFT")) {
    *end = End::kHead;
  } else if (IsWord(arg, "RIGHT")) {
    *end = End::kTail;
  } else {
    ctx.reply.Error(kSyntaxError);
    return false;
  }
  return true;
}

void PopAndReply(CommandContext& ctx, std::string_view key, const ListValue& list, End end,
                 int64_t count, bool as_array) {
  const size_t n = std::min<size_t>(static_cast<size_t>(count), list.size());
  // The reply reads the elements in place, before the pop frees them.
  if (as_array) ctx.reply.Array(n);
  ListValue::Cursor c = end == End::kHead ? list.Head() : list.Tail();
  for (size_t i = 0; i < n; ++i) {
    ctx.reply.Bulk(c.value());
    if (end == End::kHead) {
      c.Next();
    } else {
      c.Prev();
    }
  }
  const std::string removed = std::to_string(n);
  const std::string_view rest[] = {removed};
  ctx.store.Apply(PopOp(end), key, rest, ctx.now);
  // One "lpop"/"rpop" however many went (a served BLPOP's too: it runs
  // this same pop), then "del" if the list went with them.
  NotifyCollection(ctx, kNotifyList, end == End::kHead ? "lpop" : "rpop", key);
}

void MoveAndReply(CommandContext& ctx, std::string_view src, const Keyspace::Entry* src_entry,
                  std::string_view dst, End from, End to) {
  const Keyspace::Entry* dst_entry;
  const ListValue* dst_list;
  // (The source's entry stays valid: a lookup removes only expired keys,
  // and the source was found live at this same instant.)
  if (!FindList(ctx, dst, &dst_entry, &dst_list, Access::kWrite)) return;
  if (!ctx.AdmitGrant(std::max(DeadlineOf(src_entry), DeadlineOf(dst_entry)))) return;
  const auto& list = *static_cast<const ListValue*>(src_entry->object());
  const std::string element(from == End::kHead ? list.Head().value() : list.Tail().value());
  const std::string_view pushed[] = {element};
  static const std::string_view kOne[] = {"1"};
  const aof::Op push = to == End::kHead ? aof::Op::kLPush : aof::Op::kRPush;
  {
    // A pop and a push, as one unit in the log. On a single list the push
    // goes first, so the list is never empty in between (it keeps its TTL,
    // as in Redis).
    Store::Atomic atomic(ctx.store);
    if (src == dst) {
      ctx.store.Apply(push, dst, pushed, ctx.now);
      ctx.store.Apply(PopOp(from), src, kOne, ctx.now);
    } else {
      ctx.store.Apply(PopOp(from), src, kOne, ctx.now);
      ctx.store.Apply(push, dst, pushed, ctx.now);
    }
  }
  // Redis's order whatever the order of the records: the destination's
  // push ("new" first, from the Store, if it was created), then the
  // source's pop, then "del" if the source is gone.
  ctx.Notify(kNotifyList, to == End::kHead ? "lpush" : "rpush", dst);
  NotifyCollection(ctx, kNotifyList, from == End::kHead ? "lpop" : "rpop", src);
  ctx.reply.Bulk(element);
}

// ---------------------------------------------------------------- registration

void RegisterLists(CommandRegistry& r) {
  using namespace spec;
  auto doc = [](std::string summary, std::string since, std::string complexity) {
    return Doc{std::move(summary), std::move(since), "list", std::move(complexity)};
  };
  const std::string kPushCost =
      "O(1) for each element added, so O(N) to add N elements when the command is called with "
      "multiple arguments.";
  const std::vector<ArgDoc> push_args = {Key(), Multiple(Str("element"))};
  const uint32_t kPush = kWrite | kCmdDenyOom | kFast | kLease;
  r.Add(Keys(Cmd("lpush", -3, kPush, LPush, {"write", "list", "fast"},
                 doc("Prepend one or multiple elements to a list", "1.0.0", kPushCost), push_args),
             1, 1, 1, {"RW", "insert"}));
  r.Add(Keys(Cmd("rpush", -3, kPush, RPush, {"write", "list", "fast"},
                 doc("Append one or multiple elements to a list", "1.0.0", kPushCost), push_args),
             1, 1, 1, {"RW", "insert"}));
  r.Add(Keys(Cmd("lpushx", -3, kPush, LPushX, {"write", "list", "fast"},
                 doc("Prepend an element to a list, only if the list exists", "2.2.0", kPushCost),
                 push_args),
             1, 1, 1, {"RW", "insert"}));
  r.Add(Keys(Cmd("rpushx", -3, kPush, RPushX, {"write", "list", "fast"},
                 doc("Append an element to a list, only if the list exists", "2.2.0", kPushCost),
                 push_args),
             1, 1, 1, {"RW", "insert"}));
  const std::vector<ArgDoc> pop_args = {Key(), Optional(Int("count"), "6.2.0")};
  r.Add(Keys(Cmd("lpop", -2, kWrite | kFast | kLease, LPop, {"write", "list", "fast"},
                 doc("Remove and get the first elements in a list", "1.0.0",
                     "O(N) where N is the number of elements returned"),
                 pop_args),
             1, 1, 1, {"RW", "access", "delete"}));
  r.Add(Keys(Cmd("rpop", -2, kWrite | kFast | kLease, RPop, {"write", "list", "fast"},
                 doc("Remove and get the last elements in a list", "1.0.0",
                     "O(N) where N is the number of elements returned"),
                 pop_args),
             1, 1, 1, {"RW", "access", "delete"}));
  r.Add(Keys(Cmd("llen", 2, kRead | kFast, LLen, {"read", "list", "fast"},
                 doc("Get the length of a list", "1.0.0", "O(1)"), {Key()}),
             1, 1, 1, {"RO"}));
  r.Add(Keys(Cmd("lindex", 3, kRead, LIndex, {"read", "list", "slow"},
                 doc("Get an element from a list by its index", "1.0.0",
                     "O(N) where N is the number of elements to traverse to get to the element "
                     "at index. This makes asking for the first or the last element of the list "
                     "O(1)."),
                 {Key(), Int("index")}),
             1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("lrange", 4, kRead, LRange, {"read", "list", "slow"},
                 doc("Get a range of elements from a list", "1.0.0",
                     "O(S+N) where S is the distance of start offset from HEAD for small lists, "
                     "from nearest end (HEAD or TAIL) for large lists; and N is the number of "
                     "elements in the specified range."),
                 {Key(), Int("start"), Int("stop")}),
             1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("lset", 4, kWrite | kCmdDenyOom | kLease, LSet, {"write", "list", "slow"},
                 doc("Set the value of an element in a list by its index", "1.0.0",
                     "O(N) where N is the length of the list. Setting either the first or the "
                     "last element of the list is O(1)."),
                 {Key(), Int("index"), Str("element")}),
             1, 1, 1, {"RW", "update"}));
  r.Add(Keys(
      Cmd("linsert", 5, kWrite | kCmdDenyOom | kLease, LInsert, {"write", "list", "slow"},
          doc("Insert an element before or after another element in a list", "2.2.0",
              "O(N) where N is the number of elements to traverse before seeing the value pivot. "
              "This means that inserting somewhere on the left end on the list (head) can be "
              "considered O(1) and inserting somewhere on the right end (tail) is O(N)."),
          {Key(), OneOf("where", {Token("before", "BEFORE"), Token("after", "AFTER")}),
           Str("pivot"), Str("element")}),
      1, 1, 1, {"RW", "insert"}));
  r.Add(Keys(Cmd("lrem", 4, kWrite, LRem, {"write", "list", "slow"},
                 doc("Remove elements from a list", "1.0.0",
                     "O(N+M) where N is the length of the list and M is the number of elements "
                     "removed."),
                 {Key(), Int("count"), Str("element")}),
             1, 1, 1, {"RW", "delete"}));
  r.Add(Keys(Cmd("ltrim", 4, kWrite, LTrim, {"write", "list", "slow"},
                 doc("Trim a list to the specified range", "1.0.0",
                     "O(N) where N is the number of elements to be removed by the operation."),
                 {Key(), Int("start"), Int("stop")}),
             1, 1, 1, {"RW", "delete"}));
  r.Add(Keys(Cmd("lpos", -3, kRead, LPos, {"read", "list", "slow"},
                 doc("Return the index of matching elements on a list", "6.0.6",
                     "O(N) where N is the number of elements in the list, for the average case. "
                     "When searching for elements near the head or the tail of the list, or when "
                     "the MAXLEN option is provided, the command may run in constant time."),
                 {Key(), Str("element"), Optional(Int("rank", "RANK")),
                  Optional(Int("num-matches", "COUNT")), Optional(Int("len", "MAXLEN"))}),
             1, 1, 1, {"RO", "access"}));
}

}  // namespace latch::commands
