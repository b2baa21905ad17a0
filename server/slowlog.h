// The slow log (SLOWLOG): the most recent commands that took at least
// slowlog-log-slower-than microseconds, newest first, at most
// slowlog-max-len of them, with Redis's entry format so redis-cli and
// monitoring tools read it unchanged.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace latch {

struct SlowlogEntry {
  uint64_t id = 0;
  int64_t unix_s = 0;       // when it was logged
  int64_t duration_us = 0;  // how long it ran
  std::vector<std::string> argv;
  std::string peer;  // "ip:port"
  std::string name;  // CLIENT SETNAME
};

class Slowlog {
 public:
  // As Redis: at most 32 arguments are kept (the last one then says how many
  // more there were), each cut to 128 bytes (saying how many more bytes).
  static constexpr size_t kMaxArgs = 32;
  static constexpr size_t kMaxArgBytes = 128;

  // Adds an entry for `argv`. Arguments whose bit is set in `redacted`
  // (AUTH's password…) are logged as "(redacted)". Entries beyond `max_len`
  // are dropped, oldest first.
  void Push(std::span<const std::string_view> argv, uint64_t redacted, int64_t duration_us,
            int64_t unix_s, std::string_view peer, std::string_view name, size_t max_len);
  // Drops the oldest entries beyond `max_len` (after CONFIG SET
  // slowlog-max-len, at the next command, as Redis).
  void Trim(size_t max_len) {
    while (entries_.size() > max_len) entries_.pop_back();
  }
  // Newest first.
  const std::deque<SlowlogEntry>& entries() const { return entries_; }
  // Forgets every entry (ids keep counting).
  void Reset() { entries_.clear(); }

 private:
  std::deque<SlowlogEntry> entries_;
  uint64_t next_id_ = 0;
};

}  // namespace latch
