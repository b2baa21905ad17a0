// Incremental parser for client requests in RESP.
//
// A request is either a multibulk array of bulk strings
// (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`) or an inline line (`GET k\r\n`). Bytes
// arrive from the network in arbitrary pieces, so the parser is resumable: it
// remembers how far it got and continues there when more bytes come, without
// rescanning and without copying bulk payloads. The arguments it returns are
// views into the caller's buffer.
//
// Contract:
//  - Parse() is given the bytes of the connection that have not been consumed
//    yet, starting at the first byte of the request being parsed.
//  - kNeedMore: the request is incomplete. Call again later with the same
//    bytes plus more (the caller may move them in memory in between).
//  - kRequest: args() holds the request (possibly empty, for `*0` or a blank
//    inline line, which callers skip) and consumed() its length in bytes. The
//    views stay valid until the caller changes its buffer.
//  - kError: error() holds the exact Redis error text (without the leading
//    '-'). The connection must reply with it and then close.
//
// The parser knows nothing about sockets, commands or the keyspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace latch::resp {

struct ParseLimits {
  // proto-max-bulk-len: longest bulk string accepted.
  int64_t max_bulk_len = 512LL * 1024 * 1024;
  // When a password is set and the client has not authenticated, Redis only
  // accepts small requests (10 elements, 16 KiB bulks) to bound what a
  // stranger can make the server buffer.
  bool unauthenticated = false;
  // Strict framing, for reading the append-only log: inline requests are
  // refused, and every line and bulk must end in CRLF. (Redis itself skips
  // the two bytes after a bulk unchecked; a log deserves a stricter reader,
  // so corruption is reported where it is, not somewhere later.)
  bool strict = false;
};

// Longest inline request or length line accepted without a newline.
inline constexpr size_t kMaxInlineSize = 64 * 1024;
inline constexpr int64_t kUnauthMaxElements = 10;
inline constexpr int64_t kUnauthMaxBulkLen = 16 * 1024;

class RequestParser {
 public:
  enum class Result { kRequest, kNeedMore, kError };

  Result Parse(std::string_view input, const ParseLimits& limits);

  const std::vector<std::string_view>& args() const { return args_; }
  size_t consumed() const { return consumed_; }
  const std::string& error() const { return error_; }
  bool inline_request() const { return inline_; }

  // While a bulk string is being received, the total number of bytes the
  // request needs to reach its end (so a reader can size its buffer once for a
  // large value). Zero when unknown.
  size_t bytes_wanted() const { return bytes_wanted_; }

  // Forgets any partial request.
  void Reset();

 private:
  Result ParseInline(std::string_view in);
  Result ParseMultibulk(std::string_view in, const ParseLimits& limits);
  // The common case in one pass: a whole request already in `in`, every
  // length in its usual form. False, with nothing consumed, for anything
  // else: ParseMultibulk's general path then reads it, step by step.
  bool ParseWhole(std::string_view in, const ParseLimits& limits);
  Result Fail(std::string text);
  Result Complete(std::string_view in, size_t end);

  // Progress inside the current request, relative to its first byte.
  size_t pos_ = 0;
  bool started_ = false;
  bool inline_ = false;
  int64_t elements_left_ = 0;  // multibulk elements still to read
  int64_t bulk_len_ = -1;      // length of the bulk being read, -1 before its header
  size_t bytes_wanted_ = 0;

  std::vector<std::pair<size_t, size_t>> spans_;  // (offset, length) of each bulk
  std::vector<std::string> inline_words_;         // inline args, unescaped
  std::vector<std::string_view> args_;
  size_t consumed_ = 0;
  std::string error_;
};

}  // namespace latch::resp
