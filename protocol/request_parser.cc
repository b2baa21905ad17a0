#include "protocol/request_parser.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "protocol/text.h"

namespace latch::resp {

namespace {

// Length lines are parsed for every argument of every request: a fast path
// for the common case (1 to 18 digits, no sign, no leading zero), with the
// exact Redis rules of ParseInt64 for everything else.
std::optional<int64_t> ParseLength(std::string_view s) {
  if (!s.empty() && s.size() <= 18 && s[0] >= '1' && s[0] <= '9') {
    int64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return ParseInt64(s);
      v = v * 10 + (c - '0');
    }
    return v;
  }
  return ParseInt64(s);
}

// Reads a length line in its common form, "<digits>\r" followed by one more
// byte, starting at `from` (just after '*' or '$'): finding the end of the
// line and parsing it in one pass. Returns -1 for anything else (a sign,
// a leading zero, a long number, an incomplete line): the caller then takes
// the exact, slower path.
int64_t FastLength(std::string_view in, size_t from, size_t* cr) {
  if (from >= in.size() || in[from] < '1' || in[from] > '9') return -1;
  size_t end = std::min(in.size(), from + 18);
  int64_t v = 0;
  size_t i = from;
  for (; i < end && in[i] >= '0' && in[i] <= '9'; ++i) v = v * 10 + (in[i] - '0');
  if (i + 1 >= in.size() || in[i] != '\r') return -1;
  *cr = i;
  return v;
}

}  // namespace

void RequestParser::Reset() {
  pos_ = 0;
  started_ = false;
  inline_ = false;
  elements_left_ = 0;
  bulk_len_ = -1;
  bytes_wanted_ = 0;
  spans_.clear();
}

RequestParser::Result RequestParser::Fail(std::string text) {
  error_ = std::move(text);
  SanitizeErrorText(error_);
  Reset();
  return Result::kError;
}

RequestParser::Result RequestParser::Complete(std::string_view in, size_t end) {
  args_.clear();
  if (inline_) {
    for (const std::string& w : inline_words_) args_.emplace_back(w);
  } else {
    for (auto [off, len] : spans_) args_.emplace_back(in.data() + off, len);
  }
  consumed_ = end;
  bool was_inline = inline_;
  Reset();
  inline_ = was_inline;
  return Result::kRequest;
}

RequestParser::Result RequestParser::Parse(std::string_view in, const ParseLimits& limits) {
  if (in.empty()) return Result::kNeedMore;
  if (!started_) {
    // Like Redis, the first byte decides: '*' starts a multibulk request,
    // anything else is an inline line.
    started_ = true;
    inline_ = in[0] != '*';
    pos_ = 0;
    if (inline_ && limits.strict) {
      return Fail(std::string("ERR Protocol error: expected '*', got '") + in[0] + "'");
    }
  }
  return inline_ ? ParseInline(in) : ParseMultibulk(in, limits);
}

RequestParser::Result RequestParser::ParseInline(std::string_view in) {
  // pos_ is how far we have already searched for the newline.
  const char* nl = static_cast<const char*>(std::memchr(in.data() + pos_, '\n', in.size() - pos_));
  if (nl == nullptr) {
    pos_ = in.size();
    if (in.size() > kMaxInlineSize) return Fail("ERR Protocol error: too big inline request");
    return Result::kNeedMore;
  }
  size_t nl_at = static_cast<size_t>(nl - in.data());
  size_t line_len = nl_at;
  if (line_len > 0 && in[line_len - 1] == '\r') --line_len;
  auto words = SplitArgs(in.substr(0, line_len));
  if (!words) return Fail("ERR Protocol error: unbalanced quotes in request");
  inline_words_ = std::move(*words);
  return Complete(in, nl_at + 1);
}

bool RequestParser::ParseWhole(std::string_view in, const ParseLimits& limits) {
  // Pipelined requests arrive whole nearly always: the arguments go straight
  // into args_, with no progress kept between bulks and no spans to copy.
  // Whatever this path does not take (an empty or long length, a limit
  // reached, a byte out of place, a request cut short) is left to the
  // general path, which words the errors.
  size_t cr;
  const int64_t count = FastLength(in, 1, &cr);
  if (count <= 0 || count > 1024) return false;
  if (limits.unauthenticated && count > kUnauthMaxElements) return false;
  if (limits.strict && in[cr + 1] != '\n') return false;
  size_t pos = cr + 2;
  args_.clear();
  for (int64_t k = 0; k < count; ++k) {
    if (pos >= in.size() || in[pos] != '$') return false;
    const int64_t len = FastLength(in, pos + 1, &cr);
    if (len < 0 || len > limits.max_bulk_len) return false;
    if (limits.unauthenticated && len > kUnauthMaxBulkLen) return false;
    if (limits.strict && in[cr + 1] != '\n') return false;
    pos = cr + 2;
    const auto n = static_cast<size_t>(len);
    if (in.size() - pos < n + 2) return false;
    if (limits.strict && (in[pos + n] != '\r' || in[pos + n + 1] != '\n')) return false;
    args_.emplace_back(in.data() + pos, n);
    pos += n + 2;
  }
  consumed_ = pos;
  Reset();
  return true;
}

RequestParser::Result RequestParser::ParseMultibulk(std::string_view in,
                                                    const ParseLimits& limits) {
  if (elements_left_ == 0 && ParseWhole(in, limits)) return Result::kRequest;
  // Finds the "\r" ending a length line that starts at `from`. Like Redis, the
  // byte after '\r' is taken to be '\n' without being checked; it only has to
  // have arrived. Returns npos while the line is incomplete.
  auto find_line_end = [&](size_t from) -> size_t {
    const char* cr =
        static_cast<const char*>(std::memchr(in.data() + from, '\r', in.size() - from));
    if (cr == nullptr) return std::string_view::npos;
    size_t at = static_cast<size_t>(cr - in.data());
    if (at + 1 >= in.size()) return std::string_view::npos;
    return at;
  };
  auto bad_line_end = [&](size_t cr) { return limits.strict && in[cr + 1] != '\n'; };

  if (elements_left_ == 0) {
    // The "*<count>\r\n" header.
    size_t cr;
    std::optional<int64_t> count = FastLength(in, 1, &cr);
    if (*count < 0) {
      cr = find_line_end(0);
      if (cr == std::string_view::npos) {
        if (in.size() > kMaxInlineSize) {
          return Fail("ERR Protocol error: too big mbulk count string");
        }
        return Result::kNeedMore;
      }
      count = ParseLength(in.substr(1, cr - 1));
    }
    if (bad_line_end(cr)) return Fail("ERR Protocol error: expected CRLF after length");
    if (!count || *count > std::numeric_limits<int32_t>::max()) {
      return Fail("ERR Protocol error: invalid multibulk length");
    }
    if (limits.unauthenticated && *count > kUnauthMaxElements) {
      return Fail("ERR Protocol error: unauthenticated multibulk length");
    }
    pos_ = cr + 2;
    if (*count <= 0) {
      // `*0` and `*-1` are empty requests: consumed and skipped.
      spans_.clear();
      return Complete(in, pos_);
    }
    elements_left_ = *count;
    spans_.clear();
    // Do not trust the count for a reservation: a stranger could claim 2^31.
    spans_.reserve(static_cast<size_t>(std::min<int64_t>(*count, 1024)));
  }

  while (elements_left_ > 0) {
    if (bulk_len_ < 0) {
      // The "$<len>\r\n" header of the next bulk.
      size_t cr;
      // (The next header may not have arrived at all: pos_ == in.size().)
      std::optional<int64_t> len =
          pos_ < in.size() && in[pos_] == '$' ? FastLength(in, pos_ + 1, &cr) : -1;
      if (*len < 0) {
        cr = find_line_end(pos_);
        if (cr == std::string_view::npos) {
          if (in.size() - pos_ > kMaxInlineSize) {
            return Fail("ERR Protocol error: too big bulk count string");
          }
          return Result::kNeedMore;
        }
        if (in[pos_] != '$') {
          return Fail(std::string("ERR Protocol error: expected '$', got '") + in[pos_] + "'");
        }
        len = ParseLength(in.substr(pos_ + 1, cr - pos_ - 1));
      }
      if (bad_line_end(cr)) return Fail("ERR Protocol error: expected CRLF after length");
      if (!len || *len < 0 || *len > limits.max_bulk_len) {
        return Fail("ERR Protocol error: invalid bulk length");
      }
      if (limits.unauthenticated && *len > kUnauthMaxBulkLen) {
        return Fail("ERR Protocol error: unauthenticated bulk length");
      }
      pos_ = cr + 2;
      bulk_len_ = *len;
      bytes_wanted_ = pos_ + static_cast<size_t>(bulk_len_) + 2;
    }
    // The payload and its trailing CRLF (which Redis skips unchecked).
    size_t need = static_cast<size_t>(bulk_len_) + 2;
    if (in.size() - pos_ < need) return Result::kNeedMore;
    if (limits.strict && (in[pos_ + need - 2] != '\r' || in[pos_ + need - 1] != '\n')) {
      return Fail("ERR Protocol error: expected CRLF after bulk");
    }
    spans_.emplace_back(pos_, static_cast<size_t>(bulk_len_));
    pos_ += need;
    bulk_len_ = -1;
    bytes_wanted_ = 0;
    --elements_left_;
  }
  return Complete(in, pos_);
}

}  // namespace latch::resp
