// Replays the append-only log into the Store at start-up.
//
// The log is read by the log library's reader (log/reader.h), one unit at a
// time — a record, or a whole MULTI … EXEC — and each record is applied by
// Store::Replay, the same Store the commands change, with its log off: one
// applier. Loading runs on the event loop in slices (Step), so clients that
// connect meanwhile are answered -LOADING instead of hanging.
//
// A log that ends in the middle of a record or of a transaction (a crash
// mid-write: that write was never acknowledged) is cut back to the end of its
// last complete unit when aof-load-truncated is yes, with a warning naming
// the offset; otherwise, and for any corruption before the end, loading
// fails with a message naming the file, the offset, what is wrong and the
// command that repairs it. Nothing is dropped silently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/unique_fd.h"
#include "log/reader.h"
#include "server/config.h"
#include "server/store.h"

namespace latch {

class Replay {
 public:
  enum class State { kMore, kDone, kFailed };

  Replay(const Config& config, Store& store) : config_(config), store_(store) {}

  // After a clean stop with this log fully synced, a torn tail cannot be a
  // crash's: it is damage, refused like any corruption.
  void set_tail_must_be_complete(bool v) { tail_must_be_complete_ = v; }

  // Opens the log. An error text if it exists but cannot be read; a missing
  // log is not an error (exists() is then false).
  std::optional<std::string> Open();
  bool exists() const { return static_cast<bool>(fd_); }

  // Applies records for about budget_us microseconds, converting times with
  // `clock`. kFailed: error() says why.
  State Step(ReplayClock& clock, int64_t budget_us);
  const std::string& error() const { return error_; }

  uint64_t total_bytes() const { return total_bytes_; }
  // How much of the log is read before the tables are sized for all of it
  // (Store::ExpectReplayGrowth).
  static constexpr uint64_t kSizingSample = 4 << 20;
  uint64_t loaded_bytes() const { return reader_ ? reader_->safe_offset() : 0; }
  uint64_t records() const { return reader_ ? reader_->record_count() : 0; }
  // When the tail was cut off: the offset it was cut at (else -1).
  int64_t truncated_at() const { return truncated_at_; }

 private:
  State Truncated(ReplayClock& clock);
  // At kSizingSample / 2 read, notes the keys; at kSizingSample, sizes the
  // tables for the keys the rest of the log is likely to bring.
  void SizeTables();

  const Config& config_;
  Store& store_;
  bool sized_ = false;
  uint64_t sample_at_ = kSizingSample / 2;
  size_t first_keys_ = 0;
  uint64_t first_at_ = 0;
  UniqueFd fd_;
  std::unique_ptr<aof::Reader> reader_;
  uint64_t total_bytes_ = 0;
  int64_t truncated_at_ = -1;
  bool tail_must_be_complete_ = false;
  std::string error_;
};

}  // namespace latch
