// Replays the append-only log into the keyspace at start-up.
//
// Loading runs on the event loop in slices (Step), so clients that connect
// meanwhile are answered with -LOADING instead of hanging. Records are
// effects, so replay applies them directly to the keyspace: no command
// handler runs, and absolute expiries (PXAT, PEXPIREAT) are converted to the
// monotonic clock once, as they are applied; keys whose time already passed
// are not loaded.
//
// A log that ends in the middle of a record (a crash mid-write) is cut back to
// its last complete record when aof-load-truncated is yes, with a warning
// naming the byte offset; otherwise, and for any corruption before the end,
// loading fails with a message naming the file, the offset, what is wrong and
// the command that repairs it. Nothing is dropped silently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/aof_format.h"
#include "server/clock.h"
#include "server/config.h"
#include "common/unique_fd.h"

namespace latch {

class Keyspace;

class AofLoader {
 public:
  enum class State { kMore, kDone, kFailed };

  AofLoader(const Config& config, Keyspace& db) : config_(config), db_(db) {}

  // Opens the log. Returns an error text if it exists but cannot be read.
  // A missing log is not an error: exists() is then false.
  std::optional<std::string> Open();
  bool exists() const { return static_cast<bool>(fd_); }

  // Loads for about budget_us microseconds. kFailed: error() says why.
  State Step(TimeSnapshot now, int64_t budget_us);
  const std::string& error() const { return error_; }

  uint64_t total_bytes() const { return total_bytes_; }
  uint64_t loaded_bytes() const { return offset_; }
  uint64_t records() const { return records_; }
  uint64_t expired_on_load() const { return expired_on_load_; }
  // When the tail was cut off: the offset it was cut at (else -1).
  int64_t truncated_at() const { return truncated_at_; }

 private:
  void Apply(std::span<const std::string_view> args, TimeSnapshot now);
  State Finish();

  const Config& config_;
  Keyspace& db_;
  UniqueFd fd_;
  AofReader reader_;
  std::vector<char> buf_;
  size_t buf_start_ = 0, buf_end_ = 0;
  bool eof_ = false;
  uint64_t total_bytes_ = 0;
  uint64_t offset_ = 0;  // file offset of buf_start_: end of the last valid record
  // A MULTI ... EXEC block being read: its records wait for EXEC, so a log
  // that ends inside one applies none of it.
  bool in_transaction_ = false;
  uint64_t transaction_start_ = 0;
  std::vector<std::vector<std::string>> transaction_;
  uint64_t records_ = 0;
  uint64_t expired_on_load_ = 0;
  int64_t truncated_at_ = -1;
  std::string error_;
};

}  // namespace latch
