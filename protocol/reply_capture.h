// A reply kept as a value instead of bytes: what a known lock script's
// redis.call() returns (see server/scripting/). It builds the same Reply a
// client would parse from the wire in the chosen protocol, so a script sees
// RESP2's shapes (a map as a flat array, a double as a bulk string, a null
// as kNull) exactly as it would on Redis, without encoding and re-parsing.
#pragma once

#include <string>
#include <vector>

#include "protocol/reply_parser.h"
#include "protocol/reply_sink.h"

namespace latch::resp {

class ReplyCapture final : public ReplySink {
 public:
  explicit ReplyCapture(int protocol = 2) : resp3_(protocol == 3) {}

  // The first complete reply written (an empty kNull before any).
  const Reply& reply() const { return root_; }
  Reply& reply() { return root_; }
  bool complete() const { return done_; }

  int protocol() const override { return resp3_ ? 3 : 2; }
  void SetProtocol(int protocol) override { resp3_ = protocol == 3; }
  void Ok() override { Simple("OK"); }
  void Simple(std::string_view s) override;
  void Error(std::string_view text) override;
  void Int(int64_t v) override;
  void Bulk(std::string_view s) override;
  void Null() override;
  void NullArray() override;
  void Array(size_t n) override;
  void Map(size_t pairs) override;
  void Set(size_t n) override;
  void Push(size_t n) override;
  void Double(double v) override;
  void Bool(bool v) override;
  void Verbatim(std::string_view format, std::string_view text) override;
  void BigNumber(std::string_view digits) override;
  size_t Mark() const override { return done_ ? 1 : 0; }
  void RewindTo(size_t mark) override {
    if (mark == 0) {
      // Reset in place: a script's calls reuse one capture, and the root's
      // string and element buffers serve the next reply as they are.
      root_.type = Reply::Type::kNull;
      root_.str.clear();
      root_.integer = 0;
      root_.elements.clear();
      done_ = false;
      stack_.clear();
    }
  }

 private:
  // Where the next value goes: the root, or a new last element of the open
  // aggregate (nullptr once the root is complete: only the first reply is
  // kept). Placed() then closes the aggregates that value completed.
  Reply* Slot();
  void Placed();
  void Text(Reply::Type type, std::string_view s);
  void Number(Reply::Type type, int64_t v);
  void Open(Reply::Type type, size_t n);

  bool resp3_;
  Reply root_;
  bool done_ = false;
  // Open aggregates: the element and how many of its children are missing.
  struct Frame {
    Reply* reply;
    size_t missing;
  };
  std::vector<Frame> stack_;
};

}  // namespace latch::resp
