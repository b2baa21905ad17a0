// Reads an append-only log as a sequence of *units*: a single record, or a
// whole MULTI … EXEC transaction. The one reader behind the server's replay,
// latch-check-aof and the fuzzer, so "valid" means the same to all three.
//
// Contract (LevelDB's log::Reader, for a text format):
//  - Next() returns the next complete unit, kEnd at a clean end of file, or
//    why it stopped: kTruncated (the file ends inside a record or inside a
//    transaction: a crash mid-write; the rest was never acknowledged),
//    kCorrupt (bytes that are not a record latch writes, or MULTI/EXEC out of
//    place), kIoError.
//  - safe_offset() is always the end of the last complete unit: where a
//    truncated or corrupt log can be cut to keep everything before it, and
//    nothing half-applied. A transaction cut anywhere is dropped whole.
//  - The records of a unit (records()) stay valid until the next call.
//  - Annotations: the clock annotation is returned as a record of its own
//    (Op::kClock, also inside a transaction); a fence annotation (Op::kFence)
//    is returned in one unit with the SET it belongs to, which must follow
//    it; any other line starting with '#' (Redis's #TS:) is skipped.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "log/record.h"
#include "protocol/request_parser.h"

namespace latch::aof {

class Reader {
 public:
  enum class Status { kUnit, kEnd, kTruncated, kCorrupt, kIoError };

  // Reads from an open file descriptor (not owned), from its current offset.
  explicit Reader(int fd);
  // Reads the bytes of a log held in memory (the fuzzer, tests).
  explicit Reader(std::string_view bytes);

  Status Next();

  std::span<const Record> records() const { return records_; }
  // Bytes of the log that form complete units so far.
  uint64_t safe_offset() const { return safe_offset_; }
  // kUnit: the offset of the unit's first byte (its MULTI, or its record).
  uint64_t unit_offset() const { return unit_offset_; }
  // kTruncated: how many bytes follow safe_offset(). kCorrupt, kIoError: what
  // is wrong, for a message that also names safe_offset().
  uint64_t tail_bytes() const { return tail_bytes_; }
  const std::string& error() const { return error_; }
  // Records read so far (annotations included), and bytes read from the source.
  uint64_t record_count() const { return record_count_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  enum class Parse { kRecord, kSkipped, kNeedMore, kCorrupt };
  // Parses the record starting at buffer offset `pos`; on kRecord or
  // kSkipped sets *end past it.
  Parse ParseAt(size_t pos, size_t* end, Record* rec, std::vector<std::string_view>* args);
  // Reads more of the source; false at end of file (or on error, with
  // error_ set and io_error_ true).
  bool Fill();
  Status Fail(Status s, std::string why);

  int fd_ = -1;
  std::string_view memory_;
  bool from_memory_ = false;
  std::vector<char> buf_;
  size_t start_ = 0;  // first byte of the current unit in buf_
  size_t end_ = 0;    // end of valid data in buf_
  bool eof_ = false;
  bool io_error_ = false;

  resp::RequestParser parser_;
  std::vector<Record> records_;
  std::vector<std::vector<std::string_view>> arg_store_;
  uint64_t safe_offset_ = 0;
  uint64_t unit_offset_ = 0;
  uint64_t tail_bytes_ = 0;
  uint64_t record_count_ = 0;
  uint64_t bytes_read_ = 0;
  std::string error_;
};

}  // namespace latch::aof
