// The records a test's Batch has collected, as the RESP text of each command,
// for comparing with what a test expects the log to say.
//
// Two kinds of bytes are left out, because the tests that use this check what
// a command logs, not the framing around it: annotation lines (`#latch-...`,
// log/record.h; store_test.cc checks those) and `SELECT 0` records. The store
// emits a SELECT before the first record and whenever the database a record
// belongs to changes (as Redis's AOF does), so a test that never leaves
// database 0 would otherwise see one `SELECT 0` in front of its first record.
// Records for any other database keep their SELECT; store_test.cc checks where
// SELECTs are placed.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "log/record.h"
#include "protocol/request_parser.h"

namespace latch::test {

inline std::string LoggedRecords(const std::string& bytes) {
  static const std::string kSelect0 = "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n";
  std::string out;
  resp::RequestParser parser;
  resp::ParseLimits strict;
  strict.strict = true;
  for (size_t pos = 0; pos < bytes.size();) {
    if (bytes[pos] == '#') {  // an annotation line
      pos = bytes.find('\n', pos) + 1;
      continue;
    }
    parser.Reset();
    if (parser.Parse(std::string_view(bytes).substr(pos), strict) !=
        resp::RequestParser::Result::kRequest) {
      ADD_FAILURE() << "unparsable log bytes at " << pos;
      break;
    }
    if (bytes.compare(pos, parser.consumed(), kSelect0) != 0) {
      out.append(bytes, pos, parser.consumed());
    }
    pos += parser.consumed();
  }
  return out;
}

// Takes the records out of `batch`: returns them as LoggedRecords does and
// clears the batch, so the next call sees only what was logged after this one.
inline std::string TakeLogged(aof::Batch& batch) {
  std::string out = LoggedRecords(batch.bytes());
  batch.Clear();
  return out;
}

}  // namespace latch::test
