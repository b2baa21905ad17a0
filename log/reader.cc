#include "log/reader.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace latch::aof {

namespace {
constexpr size_t kChunk = 4 << 20;
// An annotation is one short line; anything longer without a newline is not one.
constexpr size_t kMaxAnnotation = 4096;
}  // namespace

Reader::Reader(int fd) : fd_(fd) {}

Reader::Reader(std::string_view bytes) : memory_(bytes), from_memory_(true) {
  end_ = bytes.size();
  bytes_read_ = bytes.size();
  eof_ = true;
}

bool Reader::Fill() {
  if (eof_ || from_memory_) return false;
  // Keep the unit being read at the front of the buffer, then read a chunk.
  if (start_ > 0) {
    std::memmove(buf_.data(), buf_.data() + start_, end_ - start_);
    end_ -= start_;
    start_ = 0;
  }
  if (buf_.size() - end_ < kChunk) buf_.resize(end_ + kChunk);
  while (true) {
    ssize_t n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error_ = std::string("read error: ") + std::strerror(errno);
      io_error_ = true;
      eof_ = true;
      return false;
    }
    if (n == 0) {
      eof_ = true;
      return false;
    }
    end_ += static_cast<size_t>(n);
    bytes_read_ += static_cast<uint64_t>(n);
    return true;
  }
}

Reader::Status Reader::Fail(Status s, std::string why) {
  error_ = std::move(why);
  records_.clear();
  return s;
}

Reader::Parse Reader::ParseAt(size_t pos, size_t* end, Record* rec,
                              std::vector<std::string_view>* args) {
  const char* data = from_memory_ ? memory_.data() : buf_.data();
  std::string_view in(data + pos, end_ - pos);
  if (in[0] == '#') {
    size_t nl = in.find('\n');
    if (nl == std::string_view::npos) {
      if (in.size() > kMaxAnnotation) {
        error_ = "an annotation line without an end";
        return Parse::kCorrupt;
      }
      return Parse::kNeedMore;
    }
    *end = pos + nl + 1;
    std::string_view line = in.substr(0, nl);
    constexpr std::string_view kClock = "#latch-clock ";
    constexpr std::string_view kFence = "#latch-fence ";
    bool clock = line.substr(0, kClock.size()) == kClock;
    bool fence = line.substr(0, kFence.size()) == kFence;
    if (!clock && !fence) return Parse::kSkipped;  // #TS: and the like
    if (line.empty() || line.back() != '\r') {
      error_ = "a latch annotation that does not end in CRLF";
      return Parse::kCorrupt;
    }
    line.remove_suffix(1);
    *rec = Record{};
    if (clock) {
      auto mark = DecodeClockAnnotation(line);
      if (!mark) {
        error_ = "a damaged clock annotation";
        return Parse::kCorrupt;
      }
      rec->op = Op::kClock;
      rec->clock = std::move(*mark);
    } else {
      auto token = DecodeFenceAnnotation(line);
      if (!token) {
        error_ = "a damaged fence annotation";
        return Parse::kCorrupt;
      }
      rec->op = Op::kFence;
      rec->token = *token;
    }
    return Parse::kRecord;
  }
  resp::ParseLimits limits;
  limits.strict = true;
  limits.max_bulk_len = INT32_MAX;
  parser_.Reset();
  switch (parser_.Parse(in, limits)) {
    case resp::RequestParser::Result::kNeedMore:
      return Parse::kNeedMore;
    case resp::RequestParser::Result::kError: {
      // Drop the "ERR Protocol error: " prefix meant for clients.
      error_ = parser_.error();
      constexpr std::string_view kPrefix = "ERR Protocol error: ";
      if (error_.rfind(kPrefix, 0) == 0) error_ = error_.substr(kPrefix.size());
      return Parse::kCorrupt;
    }
    case resp::RequestParser::Result::kRequest:
      break;
  }
  if (parser_.args().empty()) {
    error_ = "empty array";
    return Parse::kCorrupt;
  }
  *args = parser_.args();
  std::string why = Decode(*args, rec);
  if (!why.empty()) {
    error_ = std::move(why);
    return Parse::kCorrupt;
  }
  *end = pos + parser_.consumed();
  return Parse::kRecord;
}

Reader::Status Reader::Next() {
  records_.clear();
  arg_store_.clear();
  if (io_error_) return Status::kIoError;
  while (true) {
    const uint64_t unit_start = safe_offset_;
    // Parse one unit from start_. If the buffer has to grow midway, the unit
    // is parsed again from its first byte (its views would point into the
    // old buffer).
    records_.clear();
    arg_store_.clear();
    size_t pos = start_;
    bool in_transaction = false;
    // A fence annotation was read: the SET it belongs to must follow, in
    // the same unit (a tail torn between them cuts both, so a token can
    // never be left behind for whatever record a later run appends).
    bool fence_open = false;
    uint64_t seen = 0;
    bool need_more = false;
    bool skipped = false;
    while (!need_more && !skipped) {
      if (pos >= end_) {
        need_more = true;
        break;
      }
      size_t end = 0;
      Record rec;
      std::vector<std::string_view> args;
      switch (ParseAt(pos, &end, &rec, &args)) {
        case Parse::kNeedMore:
          need_more = true;
          continue;
        case Parse::kCorrupt:
          return Fail(Status::kCorrupt, error_);
        case Parse::kSkipped:
          pos = end;
          if (!in_transaction && !fence_open) {
            // An annotation between units: step over it and start again.
            safe_offset_ = unit_start + (pos - start_);
            start_ = pos;
            skipped = true;
          }
          continue;
        case Parse::kRecord:
          break;
      }
      ++seen;
      if (fence_open && rec.op != Op::kSet) {
        return Fail(Status::kCorrupt, "a fence annotation not followed by SET");
      }
      fence_open = rec.op == Op::kFence;
      if (rec.op == Op::kMulti) {
        if (in_transaction) return Fail(Status::kCorrupt, "MULTI inside a transaction");
        in_transaction = true;
        pos = end;
        continue;
      }
      if (rec.op == Op::kExec) {
        if (!in_transaction) return Fail(Status::kCorrupt, "EXEC without MULTI");
        in_transaction = false;
      } else {
        arg_store_.push_back(std::move(args));
        // The record's words (and DEL's key list) point into the vector just
        // stored, which lives as long as the unit.
        if (!Kind(rec.op).annotation()) rec.args = std::span(arg_store_.back());
        if (rec.op == Op::kDel) rec.keys = rec.args.subspan(1);
        records_.push_back(std::move(rec));
      }
      pos = end;
      if (!in_transaction && !fence_open) {
        unit_offset_ = unit_start;
        safe_offset_ = unit_start + (pos - start_);
        start_ = pos;
        record_count_ += seen;
        if (records_.empty()) {
          // MULTI directly followed by EXEC: nothing to apply; read on.
          skipped = true;
          break;
        }
        return Status::kUnit;
      }
    }
    if (skipped) continue;
    // The unit is not complete in the buffer.
    if (Fill()) continue;
    if (io_error_) return Fail(Status::kIoError, error_);
    if (end_ == start_) return Status::kEnd;
    tail_bytes_ = end_ - start_;
    records_.clear();
    return Fail(Status::kTruncated, in_transaction ? "the log ends inside a transaction"
                                                   : "the log ends inside a record");
  }
}

}  // namespace latch::aof
