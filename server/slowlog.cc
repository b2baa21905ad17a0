#include "server/slowlog.h"

#include <algorithm>

namespace latch {

void Slowlog::Push(std::span<const std::string_view> argv, uint64_t redacted, int64_t duration_us,
                   int64_t unix_s, std::string_view peer, std::string_view name, size_t max_len) {
  SlowlogEntry e;
  e.id = next_id_++;
  e.unix_s = unix_s;
  e.duration_us = duration_us;
  e.peer = std::string(peer);
  e.name = std::string(name);
  size_t kept = std::min(argv.size(), kMaxArgs);
  e.argv.reserve(kept);
  for (size_t j = 0; j < kept; ++j) {
    if (kept != argv.size() && j == kept - 1) {
      e.argv.push_back("... (" + std::to_string(argv.size() - kept + 1) + " more arguments)");
    } else if (j < 64 && (redacted >> j) & 1) {
      e.argv.emplace_back("(redacted)");
    } else if (argv[j].size() > kMaxArgBytes) {
      e.argv.push_back(std::string(argv[j].substr(0, kMaxArgBytes)) + "... (" +
                       std::to_string(argv[j].size() - kMaxArgBytes) + " more bytes)");
    } else {
      e.argv.emplace_back(argv[j]);
    }
  }
  entries_.push_front(std::move(e));
  Trim(max_len);
}

}  // namespace latch
