// The table of known lock scripts and their native equivalents (see
// known_scripts.h for the contract).
//
// Each handler below is a line-by-line transliteration of its Lua script:
// `s.Call(line, {...})` is `redis.call(...)` at that line of the script,
// `s.PCall` is `redis.pcall`, `s.Key(i)` / `s.Arg(i)` are KEYS[i] / ARGV[i]
// (nil past the end). The line numbers are the script's own (line 1 is the
// text's first line, which is empty when the library's template literal
// starts with a newline): they appear in error replies exactly as Redis
// prints them.
#include "server/scripting/known_scripts.h"

#include <optional>

#include "common/sha1.h"
#include "protocol/text.h"
#include "server/control.h"
#include "server/scripting/runner.h"
#include "server/session.h"
#include "server/store.h"

namespace latch::scripting {

std::string_view KnownScript::text() const {
  return EmbeddedScript(path);
}

namespace {

using Type = resp::Reply::Type;

// ---- shared bodies: npm redlock 4.2.0 and @sesamecare-oss/redlock 1.4.0 use
// the same three loops, with different ARGV positions and line numbers.

// for i, key in ipairs(KEYS) do
//   if redis.call("exists", key) == 1 then return 0 end
// end
// for i, key in ipairs(KEYS) do
//   redis.call("set", key, ARGV[value], "PX", ARGV[ttl])
// end
// return #KEYS
void LockAllKeys(ScriptRun& s, size_t value, size_t ttl, int exists_line, int set_line) {
  for (size_t i = 1; i <= s.NumKeys(); ++i) {
    auto r = s.Call(exists_line, {"exists", s.Key(i)});
    if (!r) return;
    if ((r->type == Type::kInteger && r->integer == 1) || s.Queued(i)) {
      s.reply().Int(0);
      return;
    }
  }
  for (size_t i = 1; i <= s.NumKeys(); ++i) {
    if (!s.Call(set_line, {"set", s.Key(i), s.Arg(value), "PX", s.Arg(ttl)})) return;
  }
  s.reply().Int(static_cast<int64_t>(s.NumKeys()));
}

// for i, key in ipairs(KEYS) do
//   if redis.call("get", key) ~= ARGV[value] then return 0 end
// end
// for i, key in ipairs(KEYS) do
//   redis.call("set", key, ARGV[value], "PX", ARGV[ttl])
// end
// return #KEYS
void ExtendAllKeys(ScriptRun& s, size_t value, size_t ttl, int get_line, int set_line) {
  for (size_t i = 1; i <= s.NumKeys(); ++i) {
    auto r = s.Call(get_line, {"get", s.Key(i)});
    if (!r) return;
    if (!LuaEquals(*r, s.Arg(value))) {
      s.reply().Int(0);
      return;
    }
  }
  for (size_t i = 1; i <= s.NumKeys(); ++i) {
    if (!s.Call(set_line, {"set", s.Key(i), s.Arg(value), "PX", s.Arg(ttl)})) return;
  }
  s.reply().Int(static_cast<int64_t>(s.NumKeys()));
}

// local count = 0
// for i, key in ipairs(KEYS) do
//   if redis.call("get", key) == ARGV[value] then
//     redis.pcall("del", key)
//     count = count + 1
//   end
// end
// return count
void UnlockAllKeys(ScriptRun& s, size_t value, int get_line) {
  int64_t count = 0;
  for (size_t i = 1; i <= s.NumKeys(); ++i) {
    bool held;
    std::optional<std::string_view> current;
    if (s.DirectGet("get", i, &current)) {  // (the fast path: runner.h)
      held = current && s.Arg(value) && *current == *s.Arg(value);
    } else {
      auto r = s.Call(get_line, {"get", s.Key(i)});
      if (!r) return;
      held = LuaEquals(*r, s.Arg(value));
    }
    if (held) {
      // pcall: a failure (a read-only EVAL_RO) is ignored and still counted.
      if (!s.DirectDel("del", i) && !s.PCall({"del", s.Key(i)})) return;
      ++count;
    }
  }
  s.reply().Int(count);
}

// ---- npm redlock 4.2.0 (redlock.js): ARGV[1] value, ARGV[2] ttl.
void RedlockLock(ScriptRun& s) {
  LockAllKeys(s, 1, 2, 4, 11);
}
void RedlockUnlock(ScriptRun& s) {
  UnlockAllKeys(s, 1, 5);
}
void RedlockExtend(ScriptRun& s) {
  ExtendAllKeys(s, 1, 2, 4, 11);
}

// ---- npm @sesamecare-oss/redlock 1.4.0 (build/scripts.js): ARGV[1] db,
// ARGV[2] value, ARGV[3] ttl. Each starts with
//   redis.pcall("SELECT", tonumber(ARGV[1]))
// The SELECT lasts for the rest of the script (RunKnownScript puts the
// caller back in its own database afterwards, as Redis 7 does); an index
// that is not a number or past `databases` fails, the pcall ignores the
// error, and the script goes on in the caller's database.
bool SesameSelect(ScriptRun& s) {
  return s.PCall({"SELECT", LuaToNumber(s.Arg(1))});
}
void SesameAcquire(ScriptRun& s) {
  if (SesameSelect(s)) LockAllKeys(s, 2, 3, 9, 16);
}
void SesameExtend(ScriptRun& s) {
  if (SesameSelect(s)) ExtendAllKeys(s, 2, 3, 9, 16);
}
void SesameRelease(ScriptRun& s) {
  if (SesameSelect(s)) UnlockAllKeys(s, 2, 10);
}

// The ownership check most single-key scripts open with, on the line
// `get_line` with the command spelled `get`:
//   if redis.call(get, KEYS[1]) == ARGV[1] then … else return 0 end
// Returns false after replying (0, or the GET's error).
bool HeldByArg1(ScriptRun& s, int get_line, const char* get) {
  bool held;
  std::optional<std::string_view> value;
  if (s.DirectGet(get, 1, &value)) {  // (the fast path: runner.h)
    held = value && s.Arg(1) && *value == *s.Arg(1);
  } else {
    auto r = s.Call(get_line, {get, s.Key(1)});
    if (!r) return false;
    held = LuaEquals(*r, s.Arg(1));
  }
  if (!held) {
    s.reply().Int(0);
    return false;
  }
  return true;
}

// The classic compare-and-delete several libraries ship, differing only in
// where the calls sit in the script (error texts name the line) and how the
// command names are spelled:
//   if redis.call(get, KEYS[1]) == ARGV[1] then return redis.call(del, KEYS[1]) end
//   return 0
void DeleteIfEqual(ScriptRun& s, int get_line, const char* get, int del_line, const char* del) {
  if (!HeldByArg1(s, get_line, get)) return;
  if (s.DirectDel(del, 1)) {
    s.reply().Int(1);
    return;
  }
  auto deleted = s.Call(del_line, {del, s.Key(1)});
  if (deleted) s.reply().Int(deleted->integer);
}

// ---- npm redis-semaphore 5.8.0
// lib/mutex/release.js delIfEqualLua:
//   if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
//   return 0
void SemaphoreRelease(ScriptRun& s) {
  DeleteIfEqual(s, 5, "get", 6, "del");
}

// lib/mutex/refresh.js expireIfEqualLua:
//   if redis.call('get', KEYS[1]) == ARGV[1] then
//     redis.call('pexpire', KEYS[1], ARGV[2]); return 1
//   end
//   return 0
void SemaphoreRefresh(ScriptRun& s) {
  if (!HeldByArg1(s, 6, "get")) return;
  if (s.Call(9, {"pexpire", s.Key(1), s.Arg(2)})) s.reply().Int(1);
}

// ---- npm redlock-universal 0.8.5 (dist/index.js, src/adapters/BaseAdapter.ts)
// DELETE_IF_MATCH_SCRIPT:
//   if GET(KEYS[1]) == ARGV[1] then return DEL(KEYS[1]) else return 0 end
void UniversalDeleteIfMatch(ScriptRun& s) {
  DeleteIfEqual(s, 1, "GET", 2, "DEL");
}

// EXTEND_IF_MATCH_SCRIPT:
//   if GET(KEYS[1]) == ARGV[1] then return PEXPIRE(KEYS[1], ARGV[2]) else return 0 end
void UniversalExtendIfMatch(ScriptRun& s) {
  if (!HeldByArg1(s, 1, "GET")) return;
  auto px = s.Call(2, {"PEXPIRE", s.Key(1), s.Arg(2)});
  if (px) s.reply().Int(px->integer);
}

// ATOMIC_EXTEND_SCRIPT: ARGV[1] value, ARGV[2] minimum remaining TTL,
// ARGV[3] new TTL. Replies {code, ttl}: {-1, -2} no key, {0, ttl} less than
// the minimum left, {1, ttl} extended, {-1, ttl} held by someone else.
void UniversalAtomicExtend(ScriptRun& s) {
  auto pttl = s.Call(1, {"PTTL", s.Key(1)});
  if (!pttl) return;
  int64_t current_ttl = pttl->integer;
  std::optional<double> min_ttl = LuaToNumber(s.Arg(2));
  std::optional<double> new_ttl = LuaToNumber(s.Arg(3));
  auto pair = [&](int64_t a, int64_t b) {
    s.reply().Array(2);
    s.reply().Int(a);
    s.reply().Int(b);
  };
  if (current_ttl == -2) {
    pair(-1, -2);
    return;
  }
  if (!min_ttl) {
    s.RuntimeError(11, "attempt to compare number with nil");
    return;
  }
  if (static_cast<double>(current_ttl) < *min_ttl) {
    pair(0, current_ttl);
    return;
  }
  auto value = s.Call(16, {"GET", s.Key(1)});
  if (!value) return;
  if (!LuaEquals(*value, s.Arg(1))) {
    pair(-1, current_ttl);
    return;
  }
  if (s.Call(18, {"PEXPIRE", s.Key(1), new_ttl})) pair(1, current_ttl);
}

// BATCH_ACQUIRE_SCRIPT: KEYS the locks, ARGV[i] the value for KEYS[i], the
// last ARGV the TTL. Replies {0, i, KEYS[i]} for the first key already held
// (nothing set), else sets them all and replies {1, #KEYS}.
void UniversalBatchAcquire(ScriptRun& s) {
  for (size_t i = 1; i <= s.NumKeys(); ++i) {
    auto r = s.Call(3, {"EXISTS", s.Key(i)});
    if (!r) return;
    if ((r->type == Type::kInteger && r->integer == 1) || s.Queued(i)) {
      s.reply().Array(3);
      s.reply().Int(0);
      s.reply().Int(static_cast<int64_t>(i));
      s.reply().Bulk(*s.Key(i));
      return;
    }
  }
  // ARGV[#ARGV]: ARGV[0], nil, when there are no arguments.
  std::optional<double> ttl = LuaToNumber(s.Arg(s.NumArgs()));
  for (size_t i = 1; i <= s.NumKeys(); ++i) {
    if (!s.Call(11, {"SET", s.Key(i), s.Arg(i), "PX", ttl})) return;
  }
  s.reply().Array(2);
  s.reply().Int(1);
  s.reply().Int(static_cast<int64_t>(s.NumKeys()));
}

// INSPECT_SCRIPT: nil for a missing key, else {value, PTTL}.
void UniversalInspect(ScriptRun& s) {
  auto value = s.Call(1, {"GET", s.Key(1)});
  if (!value) return;
  if (value->type != Type::kBulk) {
    s.reply().Null();
    return;
  }
  // (A call's reply lasts until the next call: the value is kept first.)
  const std::string held = value->str;
  auto ttl = s.Call(6, {"PTTL", s.Key(1)});
  if (!ttl) return;
  s.reply().Array(2);
  s.reply().Bulk(held);
  s.reply().Int(ttl->integer);
}

// ---- Debian python3-redis 4.3.4 (redis/lock.py, class Lock). Each starts
//   local token = redis.call('get', KEYS[1])
//   if not token or token ~= ARGV[1] then return 0 end
// (Lua's `not token` case is the nil that never equals ARGV[1].)
bool PyOwnsLock(ScriptRun& s) {
  return HeldByArg1(s, 2, "get");
}

// LUA_RELEASE_SCRIPT: redis.call('del', KEYS[1]); return 1
void PyRelease(ScriptRun& s) {
  if (!PyOwnsLock(s)) return;
  if (s.DirectDel("del", 1) || s.Call(6, {"del", s.Key(1)})) s.reply().Int(1);
}

// LUA_EXTEND_SCRIPT: ARGV[2] milliseconds, ARGV[3] "0" to add them to the
// remaining TTL, anything else to replace it. A lock without TTL gets 0.
void PyExtend(ScriptRun& s) {
  if (!PyOwnsLock(s)) return;
  auto expiration = s.Call(6, {"pttl", s.Key(1)});
  if (!expiration) return;
  if (expiration->integer < 0) {
    s.reply().Int(0);
    return;
  }
  LuaArg newttl = s.Arg(2);
  Str mode = s.Arg(3);
  if (mode && *mode == "0") {
    // newttl = ARGV[2] + expiration: Lua arithmetic on a string. (ARGV[2]
    // exists here, since ARGV[3] does.)
    std::optional<double> n = LuaToNumber(s.Arg(2));
    if (!n) {
      s.RuntimeError(16, "attempt to perform arithmetic on field '?' (a string value)");
      return;
    }
    newttl = std::optional<double>(*n + static_cast<double>(expiration->integer));
  }
  if (s.Call(18, {"pexpire", s.Key(1), newttl})) s.reply().Int(1);
}

// LUA_REACQUIRE_SCRIPT: redis.call('pexpire', KEYS[1], ARGV[2]); return 1
void PyReacquire(ScriptRun& s) {
  if (!PyOwnsLock(s)) return;
  if (s.Call(6, {"pexpire", s.Key(1), s.Arg(2)})) s.reply().Int(1);
}

// ---------------------------------------------------------------- the table

constexpr std::string_view kRedlock = "redlock";
constexpr std::string_view kSesame = "@sesamecare-oss/redlock";
constexpr std::string_view kSemaphore = "redis-semaphore";
constexpr std::string_view kUniversal = "redlock-universal";
constexpr std::string_view kPyRedis = "python3-redis";

// sha1, library, version, file in the package, name, summary, text file, handler
const KnownScript kScripts[] = {
    {"e5a322e2634ef59a516e8ea150cb085afafee684", kRedlock, "4.2.0", "redlock.js", "lockScript",
     "Acquires the lock on every key of KEYS at once: if any key exists, replies 0 and changes "
     "nothing; otherwise SETs each key to ARGV[1] with PX ARGV[2] and replies the number of keys. "
     "A bad or over-the-cap TTL ends it with the SET's error.",
     "redlock-4.2.0/lock.lua", RedlockLock},
    {"0f0f23b9048b36752b5be114f357ba083449f908", kRedlock, "4.2.0", "redlock.js", "unlockScript",
     "Releases the lock: DELs each key of KEYS whose value is ARGV[1] (keys holding another value "
     "or missing are left alone) and replies how many matched. The library counts the release as "
     "done on a node only if that number equals the number of keys.",
     "redlock-4.2.0/unlock.lua", RedlockUnlock},
    {"ce46f80993d5dac20dd066eb301a4e37994bdbed", kRedlock, "4.2.0", "redlock.js", "extendScript",
     "Extends the lock: if any key of KEYS does not hold ARGV[1] (missing or another value), "
     "replies 0 and changes nothing; otherwise SETs each key again to ARGV[1] with PX ARGV[2] (a "
     "new TTL, not an addition) and replies the number of keys.",
     "redlock-4.2.0/extend.lua", RedlockExtend},
    {"1b77b94aa78451d55dfa97e18819bfbfc596cb5b", kSesame, "1.4.0", "build/scripts.js",
     "ACQUIRE_SCRIPT (acquireLock)",
     "Acquires the lock on every key of KEYS at once, after a protected SELECT of database ARGV[1] "
     "(for the rest of the script; an index out of range fails and the pcall ignores it): if any "
     "key exists, replies 0 and changes nothing; otherwise SETs each key to ARGV[2] with PX "
     "ARGV[3] and replies the number of keys.",
     "sesamecare-redlock-1.4.0/acquire.lua", SesameAcquire},
    {"820e9778d2b6733e9ed771e4be90ae73a95a6f3b", kSesame, "1.4.0", "build/scripts.js",
     "EXTEND_SCRIPT (extendLock)",
     "Extends the lock, after the protected SELECT of ARGV[1]: if any key of KEYS does not hold "
     "ARGV[2], replies 0 and changes nothing; otherwise SETs each key again to ARGV[2] with PX "
     "ARGV[3] and replies the number of keys.",
     "sesamecare-redlock-1.4.0/extend.lua", SesameExtend},
    {"df51f6837dcfe303d334e6abea9aeae192bab216", kSesame, "1.4.0", "build/scripts.js",
     "RELEASE_SCRIPT (releaseLock)",
     "Releases the lock, after the protected SELECT of ARGV[1]: DELs each key of KEYS whose value "
     "is ARGV[2] and replies how many matched.",
     "sesamecare-redlock-1.4.0/release.lua", SesameRelease},
    {"7157921a7cc7cfba979acf6d63f073151df17d12", kSemaphore, "5.8.0", "lib/mutex/release.js",
     "delIfEqualLua",
     "Releases the mutex: if KEYS[1] holds ARGV[1], DELs it and replies DEL's count (1); otherwise "
     "replies 0.",
     "redis-semaphore-5.8.0/mutex-release.lua", SemaphoreRelease},
    {"594683e49a64ebaf975caf5f8079a1d097c438f1", kSemaphore, "5.8.0", "lib/mutex/refresh.js",
     "expireIfEqualLua",
     "Refreshes the mutex: if KEYS[1] holds ARGV[1], PEXPIREs it to ARGV[2] ms (a time of 0 or "
     "less deletes it, as PEXPIRE does) and replies 1; otherwise replies 0.",
     "redis-semaphore-5.8.0/mutex-refresh.lua", SemaphoreRefresh},
    {"fd83166fb3d7235e3ace652b700c9e217c1adc1f", kUniversal, "0.8.5", "dist/index.js",
     "DELETE_IF_MATCH_SCRIPT (delIfMatch)",
     "Releases the lock: if KEYS[1] holds ARGV[1], DELs it and replies DEL's count (1); otherwise "
     "replies 0.",
     "redlock-universal-0.8.5/delete-if-match.lua", UniversalDeleteIfMatch},
    {"e218d686a8f90368e5cd45074f06ce766cad9987", kUniversal, "0.8.5", "dist/index.js",
     "EXTEND_IF_MATCH_SCRIPT (extendIfMatch)",
     "Extends the lock: if KEYS[1] holds ARGV[1], replies PEXPIRE KEYS[1] ARGV[2] (1); otherwise "
     "replies 0.",
     "redlock-universal-0.8.5/extend-if-match.lua", UniversalExtendIfMatch},
    {"c000e088bd4aca36ab429d3b7a16fc736f4cb6f1", kUniversal, "0.8.5", "dist/index.js",
     "ATOMIC_EXTEND_SCRIPT (atomicExtend, used by using()'s auto-extension)",
     "Extends the lock only while enough of it is left: replies {-1, -2} if KEYS[1] is missing; "
     "{0, pttl} if its PTTL is below tonumber(ARGV[2]); {1, pttl} after PEXPIRE KEYS[1] "
     "tonumber(ARGV[3]) if it holds ARGV[1]; {-1, pttl} if it holds another value. pttl is the TTL "
     "before the extension (-1 for a key without one).",
     "redlock-universal-0.8.5/atomic-extend.lua", UniversalAtomicExtend},
    {"514d8d1b08387624661da2a9098d3949b633eb3a", kUniversal, "0.8.5", "dist/index.js",
     "BATCH_ACQUIRE_SCRIPT (batchSetNX, used by LockManager.acquireBatch)",
     "Acquires several locks all or nothing: if KEYS[i] exists (the first such i), replies {0, i, "
     "KEYS[i]} and changes nothing; otherwise SETs each KEYS[i] to ARGV[i] with PX "
     "tonumber(ARGV[#ARGV]) and replies {1, #KEYS}.",
     "redlock-universal-0.8.5/batch-acquire.lua", UniversalBatchAcquire},
    {"994908155dadb1bed08a5af6dee7fedf956c4826", kUniversal, "0.8.5", "dist/index.js",
     "INSPECT_SCRIPT (inspect)",
     "Reads a lock: replies nil if KEYS[1] is missing, else {value, PTTL}.",
     "redlock-universal-0.8.5/inspect.lua", UniversalInspect},
    {"c3f8721cbb97f72bc19e972846bd7aaf91901658", kPyRedis, "4.3.4",
     "/usr/lib/python3/dist-packages/redis/lock.py", "Lock.LUA_RELEASE_SCRIPT",
     "Releases the lock: if KEYS[1] holds ARGV[1], DELs it and replies 1; otherwise (missing or "
     "another token) replies 0, which Lock.release() raises as LockNotOwnedError.",
     "python3-redis-4.3.4/lock-release.lua", PyRelease},
    {"a4e8783852e6b949f9ef3a97212805108459a890", kPyRedis, "4.3.4",
     "/usr/lib/python3/dist-packages/redis/lock.py", "Lock.LUA_EXTEND_SCRIPT",
     "Extends the lock: replies 0 unless KEYS[1] holds ARGV[1] and has a TTL; then PEXPIREs it to "
     "ARGV[2] ms, or to ARGV[2] + the remaining PTTL when ARGV[3] is \"0\", and replies 1.",
     "python3-redis-4.3.4/lock-extend.lua", PyExtend},
    {"1cac51482acf5858da00f6d685d68f886cd6b6b2", kPyRedis, "4.3.4",
     "/usr/lib/python3/dist-packages/redis/lock.py", "Lock.LUA_REACQUIRE_SCRIPT",
     "Resets the lock's TTL: if KEYS[1] holds ARGV[1], PEXPIREs it to ARGV[2] ms and replies 1; "
     "otherwise replies 0.",
     "python3-redis-4.3.4/lock-reacquire.lua", PyReacquire},
};

}  // namespace

// ---------------------------------------------------------------- lookup

std::span<const KnownScript> KnownScripts() {
  return kScripts;
}

const KnownScript* FindKnownScript(std::string_view sha1) {
  if (sha1.size() != 40) return nullptr;
  for (const KnownScript& s : kScripts) {
    if (EqualsIgnoreCase(s.sha1, sha1)) return &s;
  }
  return nullptr;
}

const KnownScript* FindKnownScriptByText(std::string_view text) {
  const KnownScript* s = FindKnownScript(Sha1Hex(text));
  // The text itself is compared too: a match is the exact bytes, not a hash.
  return s != nullptr && s->text() == text ? s : nullptr;
}

std::string KnownScriptLibraries() {
  std::string out;
  std::string_view last_library;
  for (const KnownScript& s : kScripts) {
    if (s.library != last_library) {
      if (!out.empty()) out += "), ";
      out += std::string(s.library) + " " + std::string(s.version) + " (";
      last_library = s.library;
    } else {
      out += ", ";
    }
    // The short name: the first word ("lockScript", "ACQUIRE_SCRIPT", ...).
    std::string_view name = s.name.substr(0, s.name.find(' '));
    out += std::string(name);
  }
  if (!out.empty()) out += ")";
  return out;
}

void RunKnownScript(const KnownScript& script, CommandContext& ctx,
                    std::span<const std::string_view> keys, std::span<const std::string_view> args,
                    bool read_only) {
  ++ctx.stats.known_script_calls;
  ScriptClient client(ctx, read_only);
  ScriptRun run(script, client, keys, args);
  // A script's writes are one effect: two or more are logged as a
  // transaction, so a replay never applies half a script.
  ctx.store.BeginTransaction(/*single_unwrapped=*/true);
  const int db = ctx.session.db;
  script.run(run);
  // A SELECT inside the script (@sesamecare-oss/redlock's) lasts for the
  // rest of the script only: the caller stays in its database, as Redis 7.
  ctx.session.db = db;
  ctx.store.Select(db);
  ctx.store.EndTransaction();
}

}  // namespace latch::scripting
