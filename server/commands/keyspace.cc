// Keyspace commands: DBSIZE, FLUSHALL, FLUSHDB, the databases (SWAPDB,
// MOVE; SELECT is a connection command), and the ones that look around:
// KEYS, SCAN, TYPE, RANDOMKEY, TOUCH, OBJECT.
//
// "Which locks exist?" is `SCAN 0 MATCH lock:*` (or redis-cli --scan
// --pattern 'lock:*'): a walk in small steps that never stops the server,
// where KEYS answers in one step however many keys there are.
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "common/glob.h"
#include "server/commands/common.h"
#include "server/commands/scan.h"
#include "server/pubsub.h"

namespace latch::commands {

void DbSize(CommandContext& ctx) {
  ctx.reply.Int(static_cast<int64_t>(ctx.store.size()));
}

// FLUSHALL / FLUSHDB [ASYNC|SYNC]: every key goes, of every database or of
// the selected one (a release of every lock there).
void FlushAll(CommandContext& ctx) {
  if (ctx.argv.size() > 2 ||
      (ctx.argv.size() == 2 && !IsWord(ctx.argv[1], "ASYNC") && !IsWord(ctx.argv[1], "SYNC"))) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  if (ctx.name() == "flushdb") {
    ctx.store.ClearSelected();
  } else {
    ctx.store.Clear();
  }
  ctx.reply.Ok();
}

// ---------------------------------------------------------------- databases

namespace {

// A database number as Redis reads one: a C int (else `error`), then one
// this server has (else "DB index is out of range").
std::optional<int> DbArg(CommandContext& ctx, std::string_view arg, std::string_view error) {
  auto v = ParseInt64(arg);
  if (!v || *v < INT32_MIN || *v > INT32_MAX) {
    if (error.empty()) {
      ctx.reply.Error(v ? "ERR value is out of range, value must between -2147483648 and "
                          "2147483647"
                        : kNotInteger);
    } else {
      ctx.reply.Error("ERR " + std::string(error));
    }
    return std::nullopt;
  }
  if (*v < 0 || *v >= ctx.store.databases()) {
    ctx.reply.Error("ERR DB index is out of range");
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

}  // namespace

// SWAPDB a b: the two databases exchange their keys; clients stay on their
// number, so they see the other keys at once (Redis's way to switch a
// prepared dataset in).
void SwapDb(CommandContext& ctx) {
  auto a = DbArg(ctx, ctx.argv[1], "invalid first DB index");
  if (!a) return;
  auto b = DbArg(ctx, ctx.argv[2], "invalid second DB index");
  if (!b) return;
  if (*a != *b) ctx.store.SwapDatabases(*a, *b);
  ctx.reply.Ok();
}

// MOVE key db: the key, with its lease, goes to another database if no key
// of that name is there. In the log: its DEL here and its SET there, as one
// transaction (effects, as everywhere).
void Move(CommandContext& ctx) {
  std::string_view key = ctx.argv[1];
  const int src = ctx.store.selected();
  auto dst = DbArg(ctx, ctx.argv[2], "");
  if (!dst) return;
  if (*dst == src) {
    ctx.reply.Error("ERR source and destination objects are the same");
    return;
  }
  const Keyspace::Entry* e = ctx.store.Find(key, ctx.now);
  if (e == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  // The key goes with its value, lease and encoding, not its fencing token:
  // in another database it is another lock, whose last holder may have had
  // a larger token (see "Fencing tokens" in store.h). Its holder now holds
  // it there: a grant, of a key that must be free to take there (not
  // stored, nobody queued for it).
  const int64_t deadline = e->deadline;
  ctx.store.Select(*dst);
  const bool free = ctx.grants.Free(*dst, key, ctx.now);
  ctx.store.Select(src);
  if (!free) {
    ctx.reply.Int(0);
    return;
  }
  if (!ctx.AdmitGrant(deadline)) return;
  ctx.store.MoveKey(key, *dst, ctx.now);
  ctx.pubsub.Notify(kNotifyGeneric, "move_from", key, src);
  ctx.pubsub.Notify(kNotifyGeneric, "move_to", key, *dst);
  ctx.reply.Int(1);
}

// RENAME key newkey / RENAMENX key newkey: the value and its lease under
// another name (replacing, or only if the name is free). The new name is
// another lock: the key arrives without its fencing token, and RENAMENX
// finds the name taken while clients wait for it (SET … NX WAIT), as SET NX
// would. Either gives newkey a value: the grant operation admits it.
void RenameGeneric(CommandContext& ctx, bool nx) {
  std::string_view from = ctx.argv[1], to = ctx.argv[2];
  const Keyspace::Entry* e = ctx.store.Find(from, ctx.now);
  if (e == nullptr) {
    ctx.reply.Error("ERR no such key");
    return;
  }
  if (from == to) {  // Redis: nothing to do (RENAMENX answers 0)
    if (nx) {
      ctx.reply.Int(0);
    } else {
      ctx.reply.Ok();
    }
    return;
  }
  const int64_t deadline = e->deadline;
  if (nx && ctx.TakenForAcquire(to)) {
    ctx.reply.Int(0);
    return;
  }
  if (!ctx.AdmitGrant(deadline)) return;
  ctx.store.Rename(from, to, ctx.now);
  ctx.Notify(kNotifyGeneric, "rename_from", from);
  ctx.Notify(kNotifyGeneric, "rename_to", to);
  if (nx) {
    ctx.reply.Int(1);
  } else {
    ctx.reply.Ok();
  }
}

void Rename(CommandContext& ctx) {
  RenameGeneric(ctx, false);
}

void RenameNx(CommandContext& ctx) {
  RenameGeneric(ctx, true);
}

// COPY source destination [DB destination-db] [REPLACE]: a copy of the
// value and its lease, in this or another database; 1 if copied, 0 if the
// destination exists without REPLACE. Like RENAMENX, a destination somebody
// waits for is taken; the copy is a grant of the destination.
void Copy(CommandContext& ctx) {
  std::string_view from = ctx.argv[1], to = ctx.argv[2];
  const int src = ctx.store.selected();
  int dst = src;
  bool replace = false;
  for (size_t j = 3; j < ctx.argv.size(); ++j) {
    if (IsWord(ctx.argv[j], "REPLACE")) {
      replace = true;
    } else if (IsWord(ctx.argv[j], "DB") && j + 1 < ctx.argv.size()) {
      auto v = ParseInt64(ctx.argv[++j]);
      if (!v || *v < INT32_MIN || *v > INT32_MAX) {
        ctx.reply.Error(kNotInteger);
        return;
      }
      if (*v < 0 || *v >= ctx.store.databases()) {
        ctx.reply.Error("ERR DB index is out of range");
        return;
      }
      dst = static_cast<int>(*v);
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  if (src == dst && from == to) {
    ctx.reply.Error("ERR source and destination objects are the same");
    return;
  }
  const Keyspace::Entry* e = FindForRead(ctx, from);  // (lookupKeyRead: counted)
  if (e == nullptr) {
    ctx.reply.Int(0);
    return;
  }
  const int64_t deadline = e->deadline;
  ctx.store.Select(dst);
  const bool exists = ctx.store.Find(to, ctx.now) != nullptr;
  const bool queued = ctx.grants.Queued(dst, to);
  ctx.store.Select(src);
  if ((exists && !replace) || queued) {
    ctx.reply.Int(0);
    return;
  }
  if (!ctx.AdmitGrant(deadline)) return;
  {
    Store::Atomic atomic(ctx.store);
    if (exists) {
      ctx.store.Select(dst);
      ctx.store.Delete(to);
      ctx.store.Select(src);
    }
    ctx.store.Copy(from, dst, to, ctx.now);
  }
  ctx.pubsub.Notify(kNotifyGeneric, "copy_to", to, dst);
  ctx.reply.Int(1);
}

// ---------------------------------------------------------------- KEYS, SCAN

namespace {

bool Expired(const Keyspace::Entry& e, const TimeSnapshot& now) {
  return e.has_deadline() && now.mono > e.deadline;
}

}  // namespace

void KeysCommand(CommandContext& ctx) {
  // Every live key matching the pattern, in table order. Expired keys are
  // skipped, not removed: the walk must not change the table it walks.
  std::string_view pattern = ctx.argv[1];
  const bool all = pattern == "*";
  std::vector<std::string_view> keys;
  ctx.store.keyspace().ForEach([&](const Keyspace::Entry& e) {
    if (Expired(e, ctx.now)) return;
    if (all || GlobMatch(pattern, e.key())) keys.push_back(e.key());
  });
  ctx.reply.Array(keys.size());
  for (std::string_view k : keys) ctx.reply.Bulk(k);
}

void Scan(CommandContext& ctx) {
  // SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
  auto cursor = ScanCursorOrReply(ctx, ctx.argv[1]);
  if (!cursor) return;
  auto opts = ParseScanOptions(ctx, 2, /*allow_type=*/true);
  if (!opts) return;
  // Walk buckets until `count` keys are collected, the walk is over, or ten
  // times `count` buckets were visited (a sparse table must not make one
  // call long). The keys are copied: the filtering below may expire some.
  std::vector<std::string> keys;
  int64_t budget = opts->max_steps();
  do {
    *cursor =
        ctx.store.Scan(*cursor, [&](const Keyspace::Entry& e) { keys.emplace_back(e.key()); });
  } while (*cursor != 0 && budget-- > 0 && static_cast<int64_t>(keys.size()) < opts->count);
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (std::string& k : keys) {
    if (!opts->Matches(k)) continue;
    // Looking the key up expires it if its lease is over; it is not an
    // access (OBJECT IDLETIME).
    const Keyspace::Entry* e = ctx.store.Find(k, ctx.now, /*touch=*/false);
    if (opts->use_type &&
        !EqualsIgnoreCase(opts->type, e != nullptr ? TypeName(e->type()) : "none")) {
      continue;
    }
    if (e == nullptr) continue;
    out.push_back(std::move(k));
  }
  ReplyScan(ctx, *cursor, out);
}

void Type(CommandContext& ctx) {
  const Keyspace::Entry* e = FindNoTouch(ctx, ctx.argv[1]);
  ctx.reply.Simple(e != nullptr ? TypeName(e->type()) : "none");
}

void RandomKey(CommandContext& ctx) {
  // A random stored key; one whose lease is over is expired on the way and
  // another is drawn, so the loop ends (each turn removes a key).
  for (;;) {
    const Keyspace::Entry* e = ctx.store.RandomEntry();
    if (e == nullptr) {
      ctx.reply.Null();
      return;
    }
    std::string key(e->key());
    if (ctx.store.Find(key, ctx.now, /*touch=*/false) != nullptr) {
      ctx.reply.Bulk(key);
      return;
    }
  }
}

void Touch(CommandContext& ctx) {
  // An access to each key (OBJECT IDLETIME goes back to 0).
  int64_t n = 0;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    if (FindForRead(ctx, ctx.argv[i]) != nullptr) ++n;
  }
  ctx.reply.Int(n);
}

// ---------------------------------------------------------------- OBJECT

namespace {

// What Redis would say about a string value: "int" for the bytes of a
// 64-bit integer of at most 20 characters set as they are, "embstr" up to
// 44 bytes, "raw" beyond, and "raw" for any value changed in place
// (APPEND, SETRANGE). INCRBYFLOAT's results are never "int" (Redis makes
// them as plain strings). latch stores every value the same way (one
// allocation with its key); the answer lets tools that branch on the
// encoding behave as with Redis.
std::string_view EncodingOf(const Keyspace::Entry& e, std::optional<int64_t>* as_int = nullptr) {
  constexpr uint32_t kEmbstrLimit = 44;
  if (!e.is_string()) {  // the type's own (types/)
    return WithObject(e, [](const Object& o) { return o.encoding(); });
  }
  auto kind = static_cast<ValueKind>(e.value_kind);
  if (kind == ValueKind::kRaw) return "raw";
  if (kind == ValueKind::kAsSet && e.value_len <= 20) {
    if (auto v = ParseInt64(e.value())) {
      if (as_int != nullptr) *as_int = v;
      return "int";
    }
  }
  return e.value_len <= kEmbstrLimit ? "embstr" : "raw";
}

// OBJECT's lookups are not accesses, and a missing key is a null reply.
const Keyspace::Entry* ObjectLookup(CommandContext& ctx) {
  // Counted, without "keymiss" (Redis's LOOKUP_NOTOUCH|LOOKUP_NONOTIFY).
  const Keyspace::Entry* e = FindNoTouch(ctx, ctx.argv[2], /*notify=*/false);
  if (e == nullptr) ctx.reply.Null();
  return e;
}

}  // namespace

// DEBUG OBJECT key (server.cc hands it here): Redis's one line about the
// value — where it is, its references, its encoding, its size as saved
// (latch has no RDB: the bytes of its elements and their lengths, an
// estimate of the same order), its access clock and idle seconds. Tests and
// tools look for the encoding in it.
void DebugObject(CommandContext& ctx) {
  const Keyspace::Entry* e = ctx.store.Find(ctx.argv[2], ctx.now, /*touch=*/false);
  if (e == nullptr) {
    ctx.reply.Error("ERR no such key");
    return;
  }
  size_t saved = e->value_len;
  // (A packed collection's image is its value bytes, as a string's.)
  if (e->boxed()) saved = e->object()->memory();
  char line[256];
  std::snprintf(line, sizeof(line),
                "Value at:%p refcount:1 encoding:%.*s serializedlength:%zu lru:%u "
                "lru_seconds_idle:%lld",
                static_cast<const void*>(e), static_cast<int>(EncodingOf(*e).size()),
                EncodingOf(*e).data(), saved, static_cast<unsigned>(e->access_clock),
                static_cast<long long>(Keyspace::IdleMs(*e, ctx.now.mono) / 1000));
  ctx.reply.Simple(line);
}

void ObjectEncoding(CommandContext& ctx) {
  if (const Keyspace::Entry* e = ObjectLookup(ctx)) ctx.reply.Bulk(EncodingOf(*e));
}

void ObjectRefcount(CommandContext& ctx) {
  // Redis shares the objects of the integers 0 to 9999 (maxmemory 0):
  // their count reads as INT_MAX. Every other value has one reference.
  const Keyspace::Entry* e = ObjectLookup(ctx);
  if (e == nullptr) return;
  std::optional<int64_t> v;
  bool shared = EncodingOf(*e, &v) == "int" && *v >= 0 && *v < 10000;
  ctx.reply.Int(shared ? INT_MAX : 1);
}

void ObjectIdletime(CommandContext& ctx) {
  // Seconds since the key was last read or written (the keyspace's access
  // clock), as under Redis's default maxmemory-policy.
  if (const Keyspace::Entry* e = ObjectLookup(ctx)) {
    ctx.reply.Int(Keyspace::IdleMs(*e, ctx.now.mono) / 1000);
  }
}

void ObjectFreq(CommandContext& ctx) {
  // latch never evicts (Redis's noeviction): no access frequency is kept.
  if (ObjectLookup(ctx) == nullptr) return;
  ctx.reply.Error(
      "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
      "that when switching between policies at runtime LRU and LFU data will take some time to "
      "adjust.");
}

void ObjectHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
  };
  ReplyRedisHelp(ctx, "OBJECT", kLines);
}

// ---------------------------------------------------------------- registration

void RegisterKeyspace(CommandRegistry& r) {
  using namespace spec;
  auto srv = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "server", std::move(complexity)};
  };
  auto gen = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "generic", std::move(complexity)};
  };
  r.Add(Cmd("dbsize", 1, kRead | kFast, DbSize, {"keyspace", "read", "fast"},
            srv("Return the number of keys in the selected database", "1.0.0")));
  const ArgDoc flush_type =
      Optional(OneOf("flush-type", {Token("async", "ASYNC"), Token("sync", "SYNC")}));
  r.Add(Cmd("flushall", -1, kWrite, FlushAll, {"keyspace", "write", "slow", "dangerous"},
            srv("Remove all keys from all databases", "1.0.0",
                "O(N) where N is the total number of keys in all databases"),
            {flush_type}));
  r.Add(Cmd("swapdb", 3, kWrite | kFast, SwapDb, {"keyspace", "write", "fast", "dangerous"},
            srv("Swaps two Redis databases", "4.0.0",
                "O(N) where N is the count of clients watching or blocking on keys from both "
                "databases."),
            {Int("index1"), Int("index2")}));
  r.Add(
      Keys(Cmd("move", 3, kWrite | kFast | kLease, Move, {"keyspace", "write", "fast"},
               {"Move a key to another database", "1.0.0", "generic", "O(1)"}, {Key(), Int("db")}),
           1, 1, 1, {"RW", "access", "update"}));
  // ---- names (any type)
  r.Add(KeySpecs(Cmd("rename", 3, kWrite | kLease, Rename, {"keyspace", "write", "slow"},
                     {"Rename a key", "1.0.0", "generic", "O(1)"}, {Key(), Key("newkey")}),
                 1, 2, 1,
                 {RangeSpec({"RW", "access", "delete"}, 1), RangeSpec({"OW", "update"}, 2)}));
  r.Add(KeySpecs(
      Cmd("renamenx", 3, kWrite | kFast | kLease, RenameNx, {"keyspace", "write", "fast"},
          {"Rename a key, only if the new key does not exist", "1.0.0", "generic", "O(1)"},
          {Key(), Key("newkey")}),
      1, 2, 1, {RangeSpec({"RW", "access", "delete"}, 1), RangeSpec({"OW", "insert"}, 2)}));
  r.Add(KeySpecs(
      Cmd("copy", -3, kWrite | kCmdDenyOom | kLease, Copy, {"keyspace", "write", "slow"},
          {"Copy a key", "6.2.0", "generic",
           "O(N) worst case for collections, where N is the number of nested items. O(1) for "
           "string values."},
          {Key("source"), Key("destination"), Optional(Int("destination-db", "DB")),
           Optional(Token("replace", "REPLACE"))}),
      1, 2, 1, {RangeSpec({"RO", "access"}, 1), RangeSpec({"OW", "update"}, 2)}));
  r.Add(Cmd("flushdb", -1, kWrite, FlushAll, {"keyspace", "write", "slow", "dangerous"},
            srv("Remove all keys from the current database", "1.0.0",
                "O(N) where N is the number of keys in the selected database"),
            {flush_type}));
  // ---- looking around
  r.Add(Cmd("keys", 2, kRead, KeysCommand, {"keyspace", "read", "slow", "dangerous"},
            gen("Find all keys matching the given pattern", "1.0.0",
                "O(N) with N being the number of keys in the database, under the assumption "
                "that the key names in the database and the given pattern have limited length."),
            {Pattern("pattern")}));
  r.Add(Cmd("scan", -2, kRead, Scan, {"keyspace", "read", "slow"},
            gen("Incrementally iterate the keys space", "2.8.0",
                "O(1) for every call. O(N) for a complete iteration, including enough command "
                "calls for the cursor to return back to 0. N is the number of elements inside "
                "the collection."),
            {Int("cursor"), Optional(Pattern("pattern", "MATCH")), Optional(Int("count", "COUNT")),
             Optional(Str("type", "TYPE"), "6.0.0")}));
  r.Add(Keys(Cmd("type", 2, kRead | kFast, Type, {"keyspace", "read", "fast"},
                 gen("Determine the type stored at key", "1.0.0"), {Key()}),
             1, 1, 1, {"RO"}));
  r.Add(Cmd("randomkey", 1, kRead, RandomKey, {"keyspace", "read", "slow"},
            gen("Return a random key from the keyspace", "1.0.0")));
  r.Add(Keys(Cmd("touch", -2, kRead | kFast, Touch, {"keyspace", "read", "fast"},
                 gen("Alters the last access time of a key(s). Returns the number of existing "
                     "keys specified.",
                     "3.2.1", "O(N) where N is the number of keys that will be touched."),
                 {Key("key", true)}),
             1, -1, 1, {"RO"}));
  // ---- OBJECT
  auto object_sub = [&](std::string name, CommandHandler h, std::string summary,
                        std::string since) {
    return Keys(Cmd(std::move(name), 3, kRead, h, {"keyspace", "read", "slow"},
                    gen(std::move(summary), std::move(since)), {Key()}),
                2, 2, 1, {"RO"});
  };
  r.Add(Container(
      "object", {"slow"},
      gen("A container for object introspection commands", "2.2.3", "Depends on subcommand."),
      {object_sub("encoding", ObjectEncoding, "Inspect the internal encoding of a Redis object",
                  "2.2.3"),
       object_sub("freq", ObjectFreq,
                  "Get the logarithmic access frequency counter of a Redis object", "4.0.0"),
       object_sub("refcount", ObjectRefcount,
                  "Get the number of references to the value of the key", "2.2.3"),
       object_sub("idletime", ObjectIdletime, "Get the time since a Redis object was last accessed",
                  "2.2.3"),
       Cmd("help", 2, kCmdLoading | kCmdStale, ObjectHelp, {"keyspace", "slow"},
           gen("Show helpful text about the different subcommands", "6.2.0"))}));
}

}  // namespace latch::commands
