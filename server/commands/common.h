// Helpers shared by command handlers: argument parsing and the error replies
// several commands give in exactly the same words.
#pragma once

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/text.h"
#include "server/command.h"
#include "server/config.h"
#include "server/control.h"
#include "server/grant.h"
#include "server/pubsub.h"
#include "server/session.h"
#include "server/stats.h"
#include "server/store.h"
#include "server/types/value_ref.h"

namespace latch::commands {

// Short names for the flags the families' registrations use most.
inline constexpr uint32_t kWrite = kCmdWrite;
inline constexpr uint32_t kRead = kCmdReadonly;
inline constexpr uint32_t kFast = kCmdFast;
inline constexpr uint32_t kLease = kCmdGrantsLease;

inline constexpr std::string_view kSyntaxError = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

// Redis's ld2string(…, LD_STR_HUMAN): 17 decimals of a long double, without
// the trailing zeros (nor the point), and "0" for a negative zero. Long
// doubles are what INCRBYFLOAT and HINCRBYFLOAT add in, so the digits match
// Redis's.
inline std::string HumanLongDouble(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Large enough for any finite long double ("%.17Lf" of 1e4932 is about
  // 4950 characters); Redis's buffer is the same 5 KiB.
  char buf[5 * 1024];
  int len = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (len <= 0 || static_cast<size_t>(len) >= sizeof(buf)) return "";
  std::string s(buf, static_cast<size_t>(len));
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  // (A return, not `s = "0"`: GCC 12 under ASan warns a false -Wrestrict
  // on that assignment, and warnings are errors.)
  if (s == "-0") return "0";
  return s;
}

// Parses an integer argument, replying Redis's error when it is not one.
inline std::optional<int64_t> IntArgOrReply(CommandContext& ctx, std::string_view arg) {
  auto v = ParseInt64(arg);
  if (!v) ctx.reply.Error(kNotInteger);
  return v;
}

// The keyspace events of a write to a hash, set, sorted set or list:
// `event` in the family's class, then a generic "del" when the write took
// the last element — an empty collection is no key (the Store removed it),
// and Redis tells a subscriber so, in that order (t_hash.c, t_set.c…).
inline void NotifyCollection(CommandContext& ctx, uint32_t type, std::string_view event,
                             std::string_view key) {
  ctx.Notify(type, event, key);
  if ((ctx.pubsub.notify_flags() & kNotifyGeneric) != 0 && !ctx.store.Contains(key)) {
    ctx.Notify(kNotifyGeneric, "del", key);
  }
}

// "ERR invalid expire time in 'set' command": bad or overflowing TTLs.
inline void ReplyInvalidExpire(CommandContext& ctx, std::string_view command) {
  ctx.reply.Error("ERR invalid expire time in '" + std::string(command) + "' command");
}

// A HELP subcommand's reply: an array with one simple string per line.
template <typename Lines>
void ReplyHelp(CommandContext& ctx, const Lines& lines) {
  ctx.reply.Array(std::size(lines));
  for (const auto& line : lines) ctx.reply.Simple(line);
}

// Redis's option words are compared as C strings: "NX\0junk" is NX.
inline bool IsWord(std::string_view arg, std::string_view word) {
  return EqualsIgnoreCase(UpToNul(arg), word);
}

// A lookup by a command that reads the value (GET, MGET, STRLEN…): counts
// INFO's keyspace_hits and keyspace_misses, as Redis's lookupKeyRead does.
// A read of `key` counts as Redis's lookupKeyRead* counts it: a keyspace
// hit or miss, and "keymiss" for a missing key unless `notify` is false
// (OBJECT's LOOKUP_NONOTIFY).
inline void CountRead(CommandContext& ctx, std::string_view key, bool found, bool notify = true) {
  ++(found ? ctx.stats.keyspace_hits : ctx.stats.keyspace_misses);
  if (!found && notify) ctx.Notify(kNotifyKeyMiss, "keymiss", key);
}

inline const Keyspace::Entry* FindForRead(CommandContext& ctx, std::string_view key) {
  const Keyspace::Entry* e = ctx.store.Find(key, ctx.now);
  CountRead(ctx, key, e != nullptr);
  return e;
}

// A read that is not an access to the key (OBJECT IDLETIME stays): TYPE,
// TTL, EXISTS, OBJECT — Redis's LOOKUP_NOTOUCH, counted all the same.
inline const Keyspace::Entry* FindNoTouch(CommandContext& ctx, std::string_view key,
                                          bool notify = true) {
  const Keyspace::Entry* e = ctx.store.Find(key, ctx.now, /*touch=*/false);
  CountRead(ctx, key, e != nullptr, notify);
  return e;
}

// How a typed lookup counts: a read (keyspace hits and misses, as
// lookupKeyRead) or a write's look before it changes the key (lookupKeyWrite:
// not counted).
enum class Access { kRead, kWrite };

// Finds `key` for a command of `type`'s family. True with *out the live
// entry, or nullptr when the key is absent; false after replying WRONGTYPE
// when it holds another type (Redis's checkType).
inline bool FindTyped(CommandContext& ctx, std::string_view key, ValueType type,
                      const Keyspace::Entry** out, Access access = Access::kRead) {
  const Keyspace::Entry* e =
      access == Access::kRead ? FindForRead(ctx, key) : ctx.store.Find(key, ctx.now);
  if (e != nullptr && e->type() != type) {
    ctx.reply.Error(kWrongType);
    return false;
  }
  *out = e;
  return true;
}

// The same for a collection class T (types/: T::kType names its type):
// *out refers to the value (types/value_ref.h: stale after a write to the
// key), or to nothing when the key is absent.
template <typename T>
bool FindAs(CommandContext& ctx, std::string_view key, ValueRef<T>* out,
            Access access = Access::kRead) {
  const Keyspace::Entry* e;
  if (!FindTyped(ctx, key, T::kType, &e, access)) return false;
  out->Reset(e);
  return true;
}

// DEBUG OBJECT key (keyspace.cc, next to OBJECT; DEBUG itself is in
// server.cc).
void DebugObject(CommandContext& ctx);

// The reply to a HELP subcommand in Redis's words: "<COMMAND> <subcommand>
// [<arg> [value] [opt] ...]. Subcommands are:", the lines, then HELP.
template <typename Lines>
void ReplyRedisHelp(CommandContext& ctx, std::string_view command, const Lines& lines) {
  ctx.reply.Array(std::size(lines) + 3);
  ctx.reply.Simple(std::string(command) +
                   " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  for (const auto& line : lines) ctx.reply.Simple(line);
  ctx.reply.Simple("HELP");
  ctx.reply.Simple("    Prints this help.");
}

// "ERR unknown subcommand or wrong number of arguments for 'GET'. Try
// SLOWLOG HELP.": Redis's answer to a subcommand given the wrong
// arguments, naming it as the client typed it.
inline void ReplySubcommandSyntaxError(CommandContext& ctx) {
  std::string command(UpToNul(ctx.argv[0]));
  for (char& c : command) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  ctx.reply.Error("ERR unknown subcommand or wrong number of arguments for '" +
                  std::string(UpToNul(ctx.argv[1]).substr(0, 128)) + "'. Try " + command +
                  " HELP.");
}

}  // namespace latch::commands
