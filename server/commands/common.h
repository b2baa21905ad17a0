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

}  // namespace latch::commands
