// Parses server replies (RESP2 and RESP3) on the client side: used by the
// tools (RedLock client, chaos harness, demo, log checker) and by tests.
//
// Parsing restarts from the first byte of the reply each time; that is
// simple and cheap for the small replies lock clients deal with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace latch::resp {

struct Reply {
  enum class Type {
    kSimple,
    kError,
    kInteger,
    kBulk,
    kNull,
    kArray,
    kMap,
    kSet,
    kPush,
    kDouble,
    kBoolean,
    kVerbatim,
    kBigNumber
  };
  Type type = Type::kNull;
  std::string str;              // simple, error, bulk, verbatim, double and big number text
  int64_t integer = 0;          // integer; boolean as 0/1
  std::vector<Reply> elements;  // array, set, push; a map as key, value, key, value…

  bool is_error() const { return type == Type::kError; }
  bool is_null() const { return type == Type::kNull; }
  // A compact human-readable rendering, like redis-cli's (for logs and tools).
  std::string ToString() const;
};

enum class ReplyStatus { kOk, kIncomplete, kMalformed };

// Parses one reply from the start of `in`. On kOk sets *consumed to its length.
ReplyStatus ParseReply(std::string_view in, Reply* out, size_t* consumed);

}  // namespace latch::resp
