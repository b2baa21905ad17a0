// Helpers shared by command handlers: argument parsing and the error replies
// several commands give in exactly the same words.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/text.h"
#include "server/command.h"
#include "server/control.h"
#include "server/session.h"
#include "server/store.h"

namespace latch::commands {

// Short names for the flags the families' registrations use most.
inline constexpr uint32_t kWrite = kCmdWrite;
inline constexpr uint32_t kRead = kCmdReadonly;
inline constexpr uint32_t kFast = kCmdFast;
inline constexpr uint32_t kLease = kCmdGrantsLease;

inline constexpr std::string_view kSyntaxError = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";

// Parses an integer argument, replying Redis's error when it is not one.
inline std::optional<int64_t> IntArgOrReply(CommandContext& ctx, std::string_view arg) {
  auto v = ParseInt64(arg);
  if (!v) ctx.reply.Error(kNotInteger);
  return v;
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
inline const Keyspace::Entry* FindForRead(CommandContext& ctx, std::string_view key) {
  const Keyspace::Entry* e = ctx.store.Find(key, ctx.now);
  Stats& stats = ctx.control().stats();
  ++(e != nullptr ? stats.keyspace_hits : stats.keyspace_misses);
  return e;
}

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
  for (char& c : command) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  ctx.reply.Error("ERR unknown subcommand or wrong number of arguments for '" +
                  std::string(UpToNul(ctx.argv[1]).substr(0, 128)) + "'. Try " + command +
                  " HELP.");
}

}  // namespace latch::commands
