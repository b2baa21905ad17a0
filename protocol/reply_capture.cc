#include "protocol/reply_capture.h"

#include <cmath>
#include <cstdio>

namespace latch::resp {

Reply* ReplyCapture::Place(Reply value) {
  Reply* at;
  if (stack_.empty()) {
    if (done_) return nullptr;  // only the first reply is kept
    root_ = std::move(value);
    at = &root_;
    done_ = true;
  } else {
    Frame& f = stack_.back();
    f.reply->elements.push_back(std::move(value));
    at = &f.reply->elements.back();
  }
  // Close every aggregate that this value completed.
  if (!stack_.empty()) {
    --stack_.back().missing;
    while (!stack_.empty() && stack_.back().missing == 0) stack_.pop_back();
  }
  return at;
}

void ReplyCapture::Open(Reply::Type type, size_t n) {
  Reply r;
  r.type = type;
  r.elements.reserve(n);
  Reply* at = Place(std::move(r));
  // Place() closed nothing for this one yet: it still waits for n children.
  if (at != nullptr && n > 0) stack_.push_back({at, n});
}

void ReplyCapture::Simple(std::string_view s) {
  Reply r;
  r.type = Reply::Type::kSimple;
  r.str = std::string(s);
  Place(std::move(r));
}

void ReplyCapture::Error(std::string_view text) {
  CountError(text);
  Reply r;
  r.type = Reply::Type::kError;
  r.str = std::string(text);
  for (char& c : r.str) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  Place(std::move(r));
}

void ReplyCapture::Int(int64_t v) {
  Reply r;
  r.type = Reply::Type::kInteger;
  r.integer = v;
  Place(std::move(r));
}

void ReplyCapture::Bulk(std::string_view s) {
  Reply r;
  r.type = Reply::Type::kBulk;
  r.str = std::string(s);
  Place(std::move(r));
}

void ReplyCapture::Null() {
  Place(Reply{});
}

void ReplyCapture::NullArray() {
  Place(Reply{});
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
  Reply r;
  r.type = resp3_ ? Reply::Type::kDouble : Reply::Type::kBulk;
  r.str.assign(buf, static_cast<size_t>(len));
  Place(std::move(r));
}

void ReplyCapture::Bool(bool v) {
  Reply r;
  r.type = resp3_ ? Reply::Type::kBoolean : Reply::Type::kInteger;
  r.integer = v ? 1 : 0;
  Place(std::move(r));
}

void ReplyCapture::Verbatim(std::string_view format, std::string_view text) {
  Reply r;
  r.type = resp3_ ? Reply::Type::kVerbatim : Reply::Type::kBulk;
  r.str = resp3_ ? std::string(format) + ":" + std::string(text) : std::string(text);
  Place(std::move(r));
}

void ReplyCapture::BigNumber(std::string_view digits) {
  Reply r;
  r.type = resp3_ ? Reply::Type::kBigNumber : Reply::Type::kBulk;
  r.str = std::string(digits);
  Place(std::move(r));
}

}  // namespace latch::resp
