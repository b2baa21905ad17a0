// The append-only log's format: Redis's single-file AOF, restricted to the
// effect records latch writes.
//
//   SET key value [PXAT unix-ms]   DEL key [key …]   PEXPIREAT key unix-ms
//   PERSIST key                    FLUSHALL          SELECT 0
//
// Each record is a RESP array of bulk strings. AofReader cuts records out of
// the file's bytes with the strict RESP parser and validates each one, so
// the server's loader and the latch-check-aof tool agree on what a valid log
// is and where exactly it stops being one. It depends only on protocol/.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "protocol/request_parser.h"

namespace latch {

class AofReader {
 public:
  enum class Status { kRecord, kNeedMore, kCorrupt };

  // Reads the record at the start of `in` (bytes not consumed yet).
  // kRecord: args() and consumed() describe it. kNeedMore: the record is
  // incomplete (at end of file, that is a truncated tail). kCorrupt: error()
  // says what is wrong with the record starting at `in`.
  Status Next(std::string_view in);

  std::span<const std::string_view> args() const { return parser_.args(); }
  size_t consumed() const { return parser_.consumed(); }
  const std::string& error() const { return error_; }

 private:
  resp::RequestParser parser_;
  std::string error_;
};

// Checks that a parsed record is one latch can replay. Returns an empty string
// when valid, otherwise what is wrong.
std::string ValidateAofRecord(std::span<const std::string_view> args);

}  // namespace latch
