#include "protocol/reply_capture.h"

#include <cmath>
#include <cstdio>

namespace latch::resp {

// Values are written where they go (the root, or the next element of the
// open aggregate), not built aside and moved there: a script's redis.call
// captures a reply per call, and each temporary Reply was a string and a
// vector to construct and destroy.
Reply* ReplyCapture::Slot() {
  if (stack_.empty()) {
    if (done_) return nullptr;  // only the first reply is kept
    done_ = true;
    return &root_;  // (fresh: set up by the constructor or RewindTo)
  }
  return &stack_.back().reply->elements.emplace_back();
}

void ReplyCapture::Placed() {
  // Close every aggregate that this value completed.
  if (!stack_.empty()) {
    --stack_.back().missing;
    while (!stack_.empty() && stack_.back().missing == 0) stack_.pop_back();
  }
}

void ReplyCapture::Text(Reply::Type type, std::string_view s) {
  if (Reply* r = Slot()) {
    r->type = type;
    r->str.assign(s);
  }
  Placed();
}

void ReplyCapture::Number(Reply::Type type, int64_t v) {
  if (Reply* r = Slot()) {
    r->type = type;
    r->integer = v;
  }
  Placed();
}

void ReplyCapture::Open(Reply::Type type, size_t n) {
  Reply* at = Slot();
  if (at != nullptr) {
    at->type = type;
    // (Reserved: the children are written into it through this pointer.)
    at->elements.reserve(n);
  }
  Placed();
  // Placed() closed nothing for this one yet: it still waits for n children.
  if (at != nullptr && n > 0) stack_.push_back({at, n});
}

void ReplyCapture::Simple(std::string_view s) {
  Text(Reply::Type::kSimple, s);
}

void ReplyCapture::Error(std::string_view text) {
  CountError(text);
  if (Reply* r = Slot()) {
    r->type = Reply::Type::kError;
    r->str.assign(text);
    for (char& c : r->str) {
      if (c == '\r' || c == '\n') c = ' ';
    }
  }
  Placed();
}

void ReplyCapture::Int(int64_t v) {
  Number(Reply::Type::kInteger, v);
}

void ReplyCapture::Bulk(std::string_view s) {
  Text(Reply::Type::kBulk, s);
}

void ReplyCapture::Null() {
  Slot();  // (a fresh Reply is a null)
  Placed();
}

void ReplyCapture::NullArray() {
  Null();
}

void ReplyCapture::Array(size_t n) {
  Open(Reply::Type::kArray, n);
}

void ReplyCapture::Map(size_t pairs) {
  Open(resp3_ ? Reply::Type::kMap : Reply::Type::kArray, pairs * 2);
}

void ReplyCapture::Set(size_t n) {
  Open(resp3_ ? Reply::Type::kSet : Reply::Type::kArray, n);
}

void ReplyCapture::Push(size_t n) {
  Open(resp3_ ? Reply::Type::kPush : Reply::Type::kArray, n);
}

void ReplyCapture::Double(double v) {
  char buf[64];
  int len = std::isinf(v) ? std::snprintf(buf, sizeof(buf), "%s", v > 0 ? "inf" : "-inf")
                          : std::snprintf(buf, sizeof(buf), "%.17g", v);
  Text(resp3_ ? Reply::Type::kDouble : Reply::Type::kBulk,
       std::string_view(buf, static_cast<size_t>(len)));
}

void ReplyCapture::Bool(bool v) {
  Number(resp3_ ? Reply::Type::kBoolean : Reply::Type::kInteger, v ? 1 : 0);
}

void ReplyCapture::Verbatim(std::string_view format, std::string_view text) {
  Text(resp3_ ? Reply::Type::kVerbatim : Reply::Type::kBulk,
       resp3_ ? std::string(format) + ":" + std::string(text) : std::string(text));
}

void ReplyCapture::BigNumber(std::string_view digits) {
  Text(resp3_ ? Reply::Type::kBigNumber : Reply::Type::kBulk, digits);
}

}  // namespace latch::resp
