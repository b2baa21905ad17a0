#include "server/replay.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "server/log.h"

namespace latch {

std::optional<std::string> Replay::Open() {
  const std::string& path = config_.appendfilename;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    return "Can't open the append-only file '" + path + "' for reading: " + std::strerror(errno);
  }
  fd_.reset(fd);
  struct stat st {};
  ::fstat(fd, &st);
  total_bytes_ = static_cast<uint64_t>(st.st_size);
  reader_ = std::make_unique<aof::Reader>(fd);
  return std::nullopt;
}

Replay::State Replay::Step(ReplayClock& clock, int64_t budget_us) {
  if (!fd_) return State::kDone;
  auto start = std::chrono::steady_clock::now();
  const std::string& path = config_.appendfilename;
  // Check the clock every 256 units: reading it costs more than a record.
  for (uint32_t n = 0;; ++n) {
    if ((n & 255) == 255 && std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - start)
                                    .count() >= budget_us) {
      return State::kMore;
    }
    switch (reader_->Next()) {
      case aof::Reader::Status::kUnit:
        // A unit applies whole or not at all: check every record first.
        for (const aof::Record& r : reader_->records()) {
          if (std::string why = store_.CheckReplayable(r); !why.empty()) {
            store_.FinishReplay(clock);
            error_ = "Can't load the append only file '" + path + "' at offset " +
                     std::to_string(reader_->unit_offset()) + ": " + why +
                     ". latch did not start and did not change the file; start it with "
                     "`databases` large enough for the log.";
            return State::kFailed;
          }
        }
        for (const aof::Record& r : reader_->records()) store_.Replay(r, clock);
        if (!sized_ && reader_->safe_offset() >= sample_at_) SizeTables();
        continue;
      case aof::Reader::Status::kEnd:
        fd_.reset();
        store_.FinishReplay(clock);
        return State::kDone;
      case aof::Reader::Status::kTruncated:
        return Truncated(clock);
      case aof::Reader::Status::kCorrupt: {
        store_.FinishReplay(clock);
        uint64_t at = reader_->safe_offset();
        error_ = "Bad file format reading the append only file '" + path + "' at offset " +
                 std::to_string(at) + ": " + reader_->error() +
                 ". latch did not start and did not change the file. Keep a copy of it, then "
                 "repair it with: latch-check-aof --fix " +
                 path + " (it cuts the log at the last valid record, offset " + std::to_string(at) +
                 ", and keeps a backup).";
        return State::kFailed;
      }
      case aof::Reader::Status::kIoError:
        store_.FinishReplay(clock);
        error_ = "Error reading the append only file '" + path + "' after offset " +
                 std::to_string(reader_->safe_offset()) + ": " + reader_->error();
        return State::kFailed;
    }
  }
}

void Replay::SizeTables() {
  const uint64_t at = reader_->safe_offset();
  const size_t keys = store_.keys_in_all_databases();
  if (sample_at_ == kSizingSample / 2) {
    // First look: how many keys half the sample made.
    first_keys_ = keys;
    first_at_ = at;
    sample_at_ = kSizingSample;
    return;
  }
  // The table sized once for the whole log, from how fast keys came in the
  // sample's second half (a lock server's log mostly writes the same keys
  // again: then hardly any), so that it never grows key by key (which
  // rehashes every key again at each doubling). A high estimate costs only
  // until the end of the replay, which resizes the table to its keys.
  sized_ = true;
  if (keys == 0 || at <= first_at_ || total_bytes_ <= at) return;
  const double rate =
      static_cast<double>(keys - std::min(keys, first_keys_)) / static_cast<double>(at - first_at_);
  const double expected = static_cast<double>(keys) + rate * static_cast<double>(total_bytes_ - at);
  if (expected > 2.0 * static_cast<double>(keys)) {
    store_.ExpectReplayGrowth(expected / static_cast<double>(keys));
  }
}

Replay::State Replay::Truncated(ReplayClock& clock) {
  fd_.reset();
  store_.FinishReplay(clock);
  const std::string& path = config_.appendfilename;
  uint64_t at = reader_->safe_offset();
  uint64_t tail = reader_->tail_bytes();
  if (tail_must_be_complete_) {
    error_ = "Bad file format reading the append only file '" + path + "' at offset " +
             std::to_string(at) + ": " + reader_->error() +
             ", but the previous run shut down cleanly with this log fully synced: it was "
             "damaged since, not cut by a crash. latch did not start and did not change the "
             "file. Keep a copy of it, then repair it with: latch-check-aof --fix " +
             path + " (the next start then quarantines: the repair may drop acknowledged locks).";
    return State::kFailed;
  }
  if (!config_.aof_load_truncated) {
    error_ = "The append only file '" + path + "' ends with an incomplete record at offset " +
             std::to_string(at) + " (" + std::to_string(tail) +
             " bytes; a crash while writing?). latch did not start. Set aof-load-truncated yes "
             "to load the log without that record, or repair it with: latch-check-aof --fix " +
             path;
    return State::kFailed;
  }
  // The incomplete record (or transaction) was never acknowledged to a
  // client: its write did not finish. Cut it off so new records are appended
  // after a valid one.
  if (::truncate(path.c_str(), static_cast<off_t>(at)) != 0) {
    error_ = "The append only file '" + path + "' ends with an incomplete record at offset " +
             std::to_string(at) + " and cutting it off failed: " + std::strerror(errno);
    return State::kFailed;
  }
  truncated_at_ = static_cast<int64_t>(at);
  log::Warning(
      "!!! Warning: short read while loading the append only file '{}': the last record, at "
      "offset {}, is incomplete ({} bytes; probably a crash mid-write). It was cut off and the "
      "{} bytes before it were loaded (aof-load-truncated yes).",
      path, at, tail, at);
  return State::kDone;
}

}  // namespace latch
