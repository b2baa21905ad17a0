// The set family, one set at a time: SADD, SREM, SISMEMBER, SMISMEMBER,
// SMEMBERS, SCARD, SPOP, SRANDMEMBER, SMOVE, SSCAN — Redis 7.0's, reply for
// reply (t_set.c). The operations across sets (SINTER, SUNION, SDIFF, their
// STORE forms, SINTERCARD) are in set_ops.cc.
//
// Lock-adjacent uses: node-redlock's test suite and others keep a set of
// resource names; a set of holders is the simplest shared semaphore.
//
// The lock rule for these writes: a write that adds members or hands one out
// (SADD, SPOP, SMOVE) is flagged kLease and asks ctx.AdmitGrant with the
// deadline of the key it adds to before it applies, so the restart
// quarantine refuses it as it refuses SET. SREM only removes: a release,
// never refused.
//
// Every write reaches a set through Store::Apply with its effect as the
// record (types/set.h): SPOP applies `SREM key member…` (or, popping most of
// the set, replaces it with what stays, as Redis does), SMOVE an SREM and an
// SADD as one unit (Store::Atomic).
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "server/commands/common.h"
#include "server/commands/scan.h"
#include "server/types/set.h"

namespace latch::commands {

namespace {

std::mt19937_64& Rng() {
  static std::mt19937_64 rng{std::random_device{}()};
  return rng;
}

int64_t DeadlineOf(const Keyspace::Entry* e) {
  return e != nullptr ? e->deadline : kNoDeadline;
}

ValueRef<SetValue> AsSet(const Keyspace::Entry* e) {
  return ValueRef<SetValue>(e);
}

// Every member of `s`, in its order.
std::vector<std::string> Members(const SetValue& s) {
  std::vector<std::string> out;
  out.reserve(s.size());
  s.ForEach([&](std::string_view m) { out.emplace_back(m); });
  return out;
}

constexpr std::string_view kOutOfRangeLong =
    "ERR value is out of range, value must between -9223372036854775807 and "
    "9223372036854775807";

}  // namespace

// ---------------------------------------------------------------- writes

void SAdd(CommandContext& ctx) {
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kSet, &e, Access::kWrite)) return;
  auto members = ctx.argv.subspan(2);
  if (ValueRef<SetValue> s(e); s) {
    // Nothing new: nothing to admit, nothing to log.
    bool any_new = false;
    for (std::string_view m : members) any_new = any_new || !s->Contains(m);
    if (!any_new) {
      ctx.reply.Int(0);
      return;
    }
  }
  if (!ctx.AdmitGrant(DeadlineOf(e))) return;
  const int64_t added = ctx.store.Apply(aof::Op::kSAdd, key, members, ctx.now).count;
  ctx.Notify(kNotifySet, "sadd", key);
  ctx.reply.Int(added);
}

void SRem(CommandContext& ctx) {
  // A release: never refused. The key goes with its last member.
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kSet, &e, Access::kWrite)) return;
  if (e == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  const int64_t removed = ctx.store.Apply(aof::Op::kSRem, key, ctx.argv.subspan(2), ctx.now).count;
  if (removed > 0) NotifyCollection(ctx, kNotifySet, "srem", key);
  ctx.reply.Int(removed);
}

void SMove(CommandContext& ctx) {
  // SMOVE source destination member. As Redis: a missing source answers 0
  // before the destination's type is looked at.
  std::string_view src = ctx.argv[1], dst = ctx.argv[2], member = ctx.argv[3];
  const Keyspace::Entry* se = ctx.store.Find(src, ctx.now);
  const Keyspace::Entry* de = ctx.store.Find(dst, ctx.now);
  if (se == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  if (se->type() != ValueType::kSet || (de != nullptr && de->type() != ValueType::kSet)) {
    ctx.reply.Error(kWrongType);
    return;
  }
  if (src == dst) {
    ctx.reply.Int(AsSet(se)->Contains(member) ? 1 : 0);
    return;
  }
  if (!AsSet(se)->Contains(member)) {
    ctx.reply.Int(0);
    return;
  }
  // The member is handed to the destination: a grant there.
  if (!ctx.AdmitGrant(DeadlineOf(de))) return;
  {
    Store::Atomic atomic(ctx.store);
    const std::string_view one[] = {member};
    // Redis's order of events: the source loses the member (and goes if
    // it was the last), then the destination is created ("new") and gains
    // it — "sadd" only if it was not a member there already.
    ctx.store.Apply(aof::Op::kSRem, src, one, ctx.now);
    NotifyCollection(ctx, kNotifySet, "srem", src);
    if (ctx.store.Apply(aof::Op::kSAdd, dst, one, ctx.now).count > 0) {
      ctx.Notify(kNotifySet, "sadd", dst);
    }
  }
  ctx.reply.Int(1);
}

// ---------------------------------------------------------------- SPOP

namespace {

// Redis's threshold between popping one by one and rebuilding the set from
// what stays (SPOP_MOVE_STRATEGY_MUL).
constexpr uint64_t kMoveStrategyMul = 5;

void PopWithCount(CommandContext& ctx) {
  // getPositiveLongFromObjectOrReply: one error for both a word that is no
  // integer and a negative one.
  auto l = ParseInt64(ctx.argv[2]);
  if (!l || *l < 0) {
    ctx.reply.Error("ERR value is out of range, must be positive");
    return;
  }
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kSet, &e, Access::kWrite)) return;
  const uint64_t count = static_cast<uint64_t>(*l);
  if (e == nullptr || count == 0) {
    ctx.reply.Set(0);
    return;
  }
  const int64_t deadline = e->deadline;
  if (!ctx.AdmitGrant(deadline)) return;
  // One "spop" however many go, sent before the set changes (as Redis),
  // then "del" if it was all of them.
  ctx.Notify(kNotifySet, "spop", key);
  const ValueRef<SetValue> ref(e);
  const SetValue& set = *ref;
  const uint64_t size = set.size();
  std::mt19937_64& rng = Rng();
  if (count >= size) {
    // The whole set, in the order a union of it would give (an intset's
    // members ascending), and the key goes: logged as DEL.
    SetValue all;
    set.ForEach([&](std::string_view m) { all.Add(m, ctx.store.encoding_limits()); });
    ctx.reply.Set(all.size());
    all.ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
    ctx.store.Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
    return;
  }
  ctx.reply.Set(count);
  const uint64_t remaining = size - count;
  if (remaining * kMoveStrategyMul > count) {
    // A few of many: draw and remove one at a time; the effect is SREM of
    // the popped members.
    Store::Atomic atomic(ctx.store);
    for (uint64_t i = 0; i < count; ++i) {
      std::string m = AsSet(ctx.store.Peek(key))->Random(rng);
      ctx.reply.Bulk(m);
      const std::string_view one[] = {m};
      ctx.store.Apply(aof::Op::kSRem, key, one, ctx.now);
    }
    return;
  }
  // Most of the set: draw the few that stay, answer the rest, and the set
  // becomes the ones that stay (as Redis's dbOverwrite: a new set, in the
  // encoding its first member calls for, keeping the key's lease). The
  // effect is DEL, SADD of what stays, PEXPIREAT: one unit.
  std::vector<std::string> members = Members(set);
  for (uint64_t i = 0; i < remaining; ++i) {
    std::swap(members[i], members[i + rng() % (members.size() - i)]);
  }
  std::vector<std::string_view> stay(members.begin(), members.begin() + remaining);
  for (size_t i = remaining; i < members.size(); ++i) ctx.reply.Bulk(members[i]);
  Store::Atomic atomic(ctx.store);
  Store::Overwriting overwriting(ctx.store, key, /*active=*/true);  // no "new"
  ctx.store.Delete(key);
  for (size_t i = 0; i < stay.size(); i += SetValue::kMembersPerRecord) {
    const size_t n = std::min(SetValue::kMembersPerRecord, stay.size() - i);
    ctx.store.Apply(aof::Op::kSAdd, key, std::span(stay).subspan(i, n), ctx.now);
  }
  if (deadline != kNoDeadline) ctx.store.SetDeadline(key, deadline, ctx.now);
}

}  // namespace

void SPop(CommandContext& ctx) {
  if (ctx.argv.size() == 3) {
    PopWithCount(ctx);
    return;
  }
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  std::string_view key = ctx.argv[1];
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, ValueType::kSet, &e, Access::kWrite)) return;
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  if (!ctx.AdmitGrant(e->deadline)) return;
  const std::string m = AsSet(e)->Random(Rng());
  const std::string_view one[] = {m};
  ctx.store.Apply(aof::Op::kSRem, key, one, ctx.now);
  ctx.reply.Bulk(m);
  NotifyCollection(ctx, kNotifySet, "spop", key);
}

// ---------------------------------------------------------------- reads

void SIsMember(CommandContext& ctx) {
  ValueRef<SetValue> s;
  if (!FindAs(ctx, ctx.argv[1], &s)) return;
  ctx.reply.Int(s != nullptr && s->Contains(ctx.argv[2]) ? 1 : 0);
}

void SMIsMember(CommandContext& ctx) {
  // A missing key is an empty set: a 0 per member.
  ValueRef<SetValue> s;
  if (!FindAs(ctx, ctx.argv[1], &s)) return;
  ctx.reply.Array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.Int(s != nullptr && s->Contains(ctx.argv[i]) ? 1 : 0);
  }
}

void SMembers(CommandContext& ctx) {
  // A set reply in RESP3; an intset's members ascending.
  ValueRef<SetValue> s;
  if (!FindAs(ctx, ctx.argv[1], &s)) return;
  ctx.reply.Set(s != nullptr ? s->size() : 0);
  if (s != nullptr) s->ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
}

void SCard(CommandContext& ctx) {
  ValueRef<SetValue> s;
  if (!FindAs(ctx, ctx.argv[1], &s)) return;
  ctx.reply.Int(s != nullptr ? static_cast<int64_t>(s->size()) : 0);
}

// SRANDMEMBER key [count], Redis's four cases: a negative count draws with
// repetition; a count at least the size returns the whole set; otherwise
// `count` distinct members, from a copy when they are most of the set, by
// repeated draws when they are few. An array reply, even in RESP3.
void SRandMember(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  if (ctx.argv.size() == 2) {
    ValueRef<SetValue> s;
    if (!FindAs(ctx, ctx.argv[1], &s)) return;
    if (s == nullptr) {
      ctx.reply.Null();
    } else {
      ctx.reply.Bulk(s->Random(Rng()));
    }
    return;
  }
  auto l = IntArgOrReply(ctx, ctx.argv[2]);
  if (!l) return;
  if (*l == std::numeric_limits<int64_t>::min()) {
    ctx.reply.Error(kOutOfRangeLong);
    return;
  }
  ValueRef<SetValue> s;
  if (!FindAs(ctx, ctx.argv[1], &s)) return;
  if (s == nullptr || *l == 0) {
    ctx.reply.Array(0);
    return;
  }
  std::mt19937_64& rng = Rng();
  const uint64_t size = s->size();
  const uint64_t count = *l > 0 ? static_cast<uint64_t>(*l) : static_cast<uint64_t>(-*l);
  if (*l < 0 || count == 1) {
    ctx.reply.Array(count);
    for (uint64_t i = 0; i < count; ++i) ctx.reply.Bulk(s->Random(rng));
    return;
  }
  if (count >= size) {
    ctx.reply.Array(size);
    s->ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
    return;
  }
  ctx.reply.Array(count);
  if (s->is_intset() || count * 3 > size) {
    std::vector<std::string> all = Members(*s);
    for (uint64_t i = 0; i < count; ++i) {
      std::swap(all[i], all[i + rng() % (all.size() - i)]);
      ctx.reply.Bulk(all[i]);
    }
    return;
  }
  std::unordered_set<std::string> seen;
  seen.reserve(count);
  while (seen.size() < count) {
    std::string m = s->Random(rng);
    if (seen.insert(m).second) ctx.reply.Bulk(m);
  }
}

void SScan(CommandContext& ctx) {
  // SSCAN key cursor [MATCH pattern] [COUNT count]: cursor, key, options,
  // in Redis's order. An intset is one step.
  auto cursor = ScanCursorOrReply(ctx, ctx.argv[2]);
  if (!cursor) return;
  ValueRef<SetValue> s;
  if (!FindAs(ctx, ctx.argv[1], &s)) return;
  if (s == nullptr) {
    ReplyScan(ctx, 0, {});
    return;
  }
  auto opts = ParseScanOptions(ctx, 3, /*allow_type=*/false);
  if (!opts) return;
  std::vector<std::string> out;
  auto take = [&](std::string_view m) {
    if (opts->Matches(m)) out.emplace_back(m);
  };
  if (s->is_intset()) {
    s->ForEach(take);
    ReplyScan(ctx, 0, out);
    return;
  }
  int64_t steps = opts->max_steps();
  int64_t walked = 0;
  uint64_t c = *cursor;
  do {
    c = s->Scan(c, [&](std::string_view m) {
      ++walked;
      take(m);
    });
  } while (c != 0 && steps-- > 0 && walked < opts->count);
  ReplyScan(ctx, c, out);
}

// ---------------------------------------------------------------- registration

void RegisterSets(CommandRegistry& r) {
  using namespace spec;
  auto key_at = [](std::string name, int index) {
    ArgDoc a = Key(std::move(name));
    a.key_spec_index = index;
    return a;
  };
  r.Add(Keys(Cmd("sadd", -3, kWrite | kCmdDenyOom | kFast | kLease, SAdd, {"write", "set", "fast"},
                 {"Add one or more members to a set", "1.0.0", "set",
                  "O(1) for each element added, so O(N) to add N elements when the command is "
                  "called with multiple arguments."},
                 {Key("key"), Multiple(Str("member"))}),
             1, 1, 1, {"RW", "insert"}));
  r.Add(Keys(Cmd("srem", -3, kWrite | kFast, SRem, {"write", "set", "fast"},
                 {"Remove one or more members from a set", "1.0.0", "set",
                  "O(N) where N is the number of members to be removed."},
                 {Key("key"), Multiple(Str("member"))}),
             1, 1, 1, {"RW", "delete"}));
  r.Add(Keys(Cmd("sismember", 3, kRead | kFast, SIsMember, {"read", "set", "fast"},
                 {"Determine if a given value is a member of a set", "1.0.0", "set", "O(1)"},
                 {Key("key"), Str("member")}),
             1, 1, 1, {"RO"}));
  r.Add(Keys(Cmd("smismember", -3, kRead | kFast, SMIsMember, {"read", "set", "fast"},
                 {"Returns the membership associated with the given elements for a set", "6.2.0",
                  "set", "O(N) where N is the number of elements being checked for membership"},
                 {Key("key"), Multiple(Str("member"))}),
             1, 1, 1, {"RO", "access"}));
  r.Add(Keys(
      Cmd("smembers", 2, kRead, SMembers, {"read", "set", "slow"},
          {"Get all the members in a set", "1.0.0", "set", "O(N) where N is the set cardinality."},
          {Key("key")}),
      1, 1, 1, {"RO", "access"}));
  r.Add(Keys(Cmd("scard", 2, kRead | kFast, SCard, {"read", "set", "fast"},
                 {"Get the number of members in a set", "1.0.0", "set", "O(1)"}, {Key("key")}),
             1, 1, 1, {"RO"}));
  r.Add(Keys(Cmd("spop", -2, kWrite | kFast | kLease, SPop, {"write", "set", "fast"},
                 {"Remove and return one or multiple random members from a set", "1.0.0", "set",
                  "Without the count argument O(1), otherwise O(N) where N is the value of the "
                  "passed count."},
                 {Key("key"), Optional(Int("count"), "3.2.0")}),
             1, 1, 1, {"RW", "access", "delete"}));
  r.Add(Keys(Cmd("srandmember", -2, kRead, SRandMember, {"read", "set", "slow"},
                 {"Get one or multiple random members from a set", "1.0.0", "set",
                  "Without the count argument O(1), otherwise O(N) where N is the absolute value "
                  "of the passed count."},
                 {Key("key"), Optional(Int("count"), "2.6.0")}),
             1, 1, 1, {"RO", "access"}));
  r.Add(KeySpecs(Cmd("smove", 4, kWrite | kFast | kLease, SMove, {"write", "set", "fast"},
                     {"Move a member from one set to another", "1.0.0", "set", "O(1)"},
                     {Key("source"), key_at("destination", 1), Str("member")}),
                 1, 2, 1,
                 {RangeSpec({"RW", "access", "delete"}, 1), RangeSpec({"RW", "insert"}, 2)}));
  r.Add(Keys(Cmd("sscan", -3, kRead, SScan, {"read", "set", "slow"},
                 {"Incrementally iterate Set elements", "2.8.0", "set",
                  "O(1) for every call. O(N) for a complete iteration, including enough command "
                  "calls for the cursor to return back to 0. N is the number of elements inside "
                  "the collection.."},
                 {Key("key"), Int("cursor"), Optional(Pattern("pattern", "MATCH")),
                  Optional(Int("count", "COUNT"))}),
             1, 1, 1, {"RO", "access"}));
}

}  // namespace latch::commands
