// Helpers shared by command handlers: argument parsing and the error replies
// several commands give in exactly the same words.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/text.h"
#include "server/command_table.h"
#include "server/server.h"

namespace latch::commands {

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

// For handlers that decide at run time whether they grant a lease (known
// lock scripts): refuses during restart quarantine, exactly as Dispatch does
// for commands flagged kCmdGrantsLease. Returns false after replying.
inline bool LeaseAllowedOrReply(CommandContext& ctx) {
  Quarantine& q = ctx.server.quarantine();
  if (q.active(ctx.now.mono)) {
    ctx.reply.Error(q.RefusalText(ctx.now.mono));
    return false;
  }
  ctx.server.BeforeLeaseGrant(ctx.now.mono);
  return true;
}

// Leases are capped: a TTL longer than max-lock-ttl is refused (0: no cap).
// The cap is what makes the restart quarantine sound: a node that forgot
// its locks only has to wait max-lock-ttl for all of them to have expired.
// Returns false after replying with the error.
inline bool LeaseWithinCap(CommandContext& ctx, int64_t ttl_ms) {
  int64_t cap = ctx.server.config().max_lock_ttl;
  if (cap <= 0 || ttl_ms <= cap) return true;
  ctx.reply.Error("ERR TTL " + std::to_string(ttl_ms) + " ms exceeds max-lock-ttl (" +
                  std::to_string(cap) + " ms)");
  return false;
}

// A HELP subcommand's reply: an array with one simple string per line.
template <typename Lines>
void ReplyHelp(CommandContext& ctx, const Lines& lines) {
  ctx.reply.Array(std::size(lines));
  for (const auto& line : lines) ctx.reply.Simple(line);
}

}  // namespace latch::commands
