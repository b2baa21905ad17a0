// What SCAN, HSCAN, SSCAN and ZSCAN share: the cursor and the options,
// parsed with Redis's rules (db.c, parseScanCursorOrReply and
// scanGenericCommand), and the reply.
//
// A collection in a compact encoding (listpack, intset) is small by
// definition, so its scan returns everything in one step with cursor 0; a
// hashtable is walked with Dict::Scan's reversed-bit cursor, whose promise
// (an element present for the whole walk is returned at least once) holds
// however the table grows or shrinks between calls.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/glob.h"
#include "server/commands/common.h"

namespace latch::commands {

// The cursor, parsed as Redis parses it (strtoul of the C string): optional
// sign, decimal digits, no leading space, nothing after; "-1" wraps to the
// largest cursor, and the empty string is 0.
inline std::optional<uint64_t> ParseScanCursor(std::string_view arg) {
  std::string s(UpToNul(arg));
  if (!s.empty() && std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return static_cast<uint64_t>(v);
}

// "ERR invalid cursor", or the cursor.
inline std::optional<uint64_t> ScanCursorOrReply(CommandContext& ctx, std::string_view arg) {
  auto c = ParseScanCursor(arg);
  if (!c) ctx.reply.Error("ERR invalid cursor");
  return c;
}

struct ScanOptions {
  int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;  // a pattern other than "*"
  std::string_view type;     // SCAN only
  bool use_type = false;

  bool Matches(std::string_view element) const {
    return !use_pattern || GlobMatch(pattern, element);
  }
  // How many cursor steps a call may take before it returns with fewer
  // elements than asked: ten times COUNT, so a sparse table cannot make one
  // call long.
  int64_t max_steps() const { return count > INT64_MAX / 10 ? INT64_MAX : count * 10; }
};

// The options from argv[first] on: COUNT n (n >= 1), MATCH pattern, and
// for SCAN (allow_type) TYPE type; each may repeat, the last wins. Replies
// Redis's error and returns nullopt on anything else.
inline std::optional<ScanOptions> ParseScanOptions(CommandContext& ctx, size_t first,
                                                   bool allow_type) {
  ScanOptions o;
  for (size_t j = first; j < ctx.argv.size(); j += 2) {
    std::string_view opt = ctx.argv[j];
    const bool has_value = j + 1 < ctx.argv.size();
    if (IsWord(opt, "COUNT") && has_value) {
      auto n = IntArgOrReply(ctx, ctx.argv[j + 1]);
      if (!n) return std::nullopt;
      if (*n < 1) {
        ctx.reply.Error(kSyntaxError);
        return std::nullopt;
      }
      o.count = *n;
    } else if (IsWord(opt, "MATCH") && has_value) {
      o.pattern = ctx.argv[j + 1];
      o.use_pattern = o.pattern != "*";
    } else if (allow_type && IsWord(opt, "TYPE") && has_value) {
      o.type = UpToNul(ctx.argv[j + 1]);  // compared as a C string, as Redis
      o.use_type = true;
    } else {
      ctx.reply.Error(kSyntaxError);
      return std::nullopt;
    }
  }
  return o;
}

// [cursor, [elements…]]: the reply of every scan.
inline void ReplyScan(CommandContext& ctx, uint64_t cursor,
                      const std::vector<std::string>& elements) {
  ctx.reply.Array(2);
  ctx.reply.Bulk(std::to_string(cursor));
  ctx.reply.Array(elements.size());
  for (const std::string& e : elements) ctx.reply.Bulk(e);
}

}  // namespace latch::commands
