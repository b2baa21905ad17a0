#include "server/aof_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "protocol/text.h"
#include "server/keyspace.h"
#include "server/log.h"

namespace latch {

namespace {
constexpr size_t kChunk = 4 << 20;
}

std::optional<std::string> AofLoader::Open() {
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
  return std::nullopt;
}

void AofLoader::Apply(std::span<const std::string_view> args, TimeSnapshot now) {
  // Records were validated by AofReader; only their meaning is left.
  std::string_view cmd = args[0];
  if (EqualsIgnoreCase(cmd, "SET")) {
    int64_t deadline = kNoDeadline;
    if (args.size() == 5) {
      int64_t at = *ParseInt64(args[4]);
      if (at <= now.wall_ms) {
        // Expired while the server was down: the key is gone.
        db_.Erase(args[1]);
        ++expired_on_load_;
        return;
      }
      deadline = now.MonoFromWall(at);
    }
    db_.Set(args[1], args[2], deadline);
  } else if (EqualsIgnoreCase(cmd, "DEL")) {
    for (size_t i = 1; i < args.size(); ++i) db_.Erase(args[i]);
  } else if (EqualsIgnoreCase(cmd, "PEXPIREAT")) {
    int64_t at = *ParseInt64(args[2]);
    if (at <= now.wall_ms) {
      if (db_.Erase(args[1])) ++expired_on_load_;
    } else {
      db_.SetDeadline(args[1], now.MonoFromWall(at));
    }
  } else if (EqualsIgnoreCase(cmd, "PERSIST")) {
    db_.SetDeadline(args[1], kNoDeadline);
  } else if (EqualsIgnoreCase(cmd, "FLUSHALL") || EqualsIgnoreCase(cmd, "FLUSHDB")) {
    db_.Clear();
  }
  // SELECT 0: nothing to do.
}

AofLoader::State AofLoader::Step(TimeSnapshot now, int64_t budget_us) {
  if (!fd_) return State::kDone;
  auto start = std::chrono::steady_clock::now();
  auto elapsed_us = [&] {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  };
  while (elapsed_us() < budget_us) {
    // Apply every complete record in the buffer.
    while (buf_start_ < buf_end_) {
      std::string_view in(buf_.data() + buf_start_, buf_end_ - buf_start_);
      AofReader::Status st = reader_.Next(in);
      if (st == AofReader::Status::kNeedMore) break;
      if (st == AofReader::Status::kCorrupt) {
        const std::string& path = config_.appendfilename;
        error_ = "Bad file format reading the append only file '" + path + "' at offset " +
                 std::to_string(offset_) + ": " + reader_.error() +
                 ". latch did not start and did not change the file. Keep a copy of it, then "
                 "repair it with: latch-check-aof --fix " +
                 path + " (it cuts the log at the last valid record, offset " +
                 std::to_string(offset_) + ", and keeps a backup).";
        return State::kFailed;
      }
      std::span<const std::string_view> args = reader_.args();
      if (EqualsIgnoreCase(args[0], "MULTI") || EqualsIgnoreCase(args[0], "EXEC")) {
        bool multi = EqualsIgnoreCase(args[0], "MULTI");
        if (multi == in_transaction_) {
          error_ = "Bad file format reading the append only file '" + config_.appendfilename +
                   "' at offset " + std::to_string(offset_) + ": " +
                   (multi ? "MULTI inside a transaction" : "EXEC without MULTI") +
                   ". latch did not start and did not change the file. Repair it with: "
                   "latch-check-aof --fix " +
                   config_.appendfilename;
          return State::kFailed;
        }
        if (multi) {
          in_transaction_ = true;
          transaction_start_ = offset_;
        } else {
          for (const auto& record : transaction_) {
            std::vector<std::string_view> views(record.begin(), record.end());
            Apply(views, now);
          }
          transaction_.clear();
          in_transaction_ = false;
        }
      } else if (in_transaction_) {
        transaction_.emplace_back(args.begin(), args.end());
      } else {
        Apply(args, now);
      }
      ++records_;
      buf_start_ += reader_.consumed();
      offset_ += reader_.consumed();
    }
    if (eof_) return Finish();
    // Keep the incomplete record at the front and read the next chunk.
    if (buf_start_ > 0) {
      std::memmove(buf_.data(), buf_.data() + buf_start_, buf_end_ - buf_start_);
      buf_end_ -= buf_start_;
      buf_start_ = 0;
    }
    if (buf_.size() - buf_end_ < kChunk) buf_.resize(buf_end_ + kChunk);
    ssize_t n = ::read(fd_.get(), buf_.data() + buf_end_, buf_.size() - buf_end_);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = "Error reading the append only file '" + config_.appendfilename + "' at offset " +
               std::to_string(offset_ + (buf_end_ - buf_start_)) + ": " + std::strerror(errno);
      return State::kFailed;
    }
    if (n == 0) eof_ = true;
    buf_end_ += static_cast<size_t>(n);
  }
  return State::kMore;
}

AofLoader::State AofLoader::Finish() {
  size_t leftover = buf_end_ - buf_start_;
  fd_.reset();
  buf_ = {};
  if (in_transaction_) {
    // The log ends inside MULTI ... EXEC: the transaction was never complete
    // (its reply was never sent), so none of it is applied and the cut goes
    // before its MULTI.
    leftover += offset_ - transaction_start_;
    offset_ = transaction_start_;
    transaction_.clear();
    in_transaction_ = false;
  }
  if (leftover == 0) return State::kDone;
  const std::string& path = config_.appendfilename;
  if (!config_.aof_load_truncated) {
    error_ = "The append only file '" + path + "' ends with an incomplete record at offset " +
             std::to_string(offset_) + " (" + std::to_string(leftover) +
             " bytes; a crash while writing?). latch did not start. Set aof-load-truncated yes "
             "to load the log without that record, or repair it with: latch-check-aof --fix " +
             path;
    return State::kFailed;
  }
  // The incomplete record was never acknowledged to a client: its write did
  // not finish. Cut it off so new records are appended after a valid one.
  if (::truncate(path.c_str(), static_cast<off_t>(offset_)) != 0) {
    error_ = "The append only file '" + path + "' ends with an incomplete record at offset " +
             std::to_string(offset_) + " and cutting it off failed: " + std::strerror(errno);
    return State::kFailed;
  }
  truncated_at_ = static_cast<int64_t>(offset_);
  log::Warning(
      "!!! Warning: short read while loading the append only file '{}': the last record, at "
      "offset {}, is incomplete ({} bytes; probably a crash mid-write). It was cut off and the "
      "{} bytes before it were loaded (aof-load-truncated yes).",
      path, offset_, leftover, offset_);
  return State::kDone;
}

}  // namespace latch
