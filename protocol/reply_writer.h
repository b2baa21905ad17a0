// Writes replies in RESP2 or RESP3 into a caller-owned byte buffer.
//
// The writer appends; it never flushes or allocates beyond growing the
// string it was given, so a connection can gather every reply produced by one
// read and send them with one write. RESP3-only types fall back to their
// RESP2 shapes exactly as Redis does: a map becomes a flat array of 2n items,
// a null becomes `$-1` (or `*-1` for a null array), a boolean becomes 1 or 0,
// a double and a verbatim string become bulk strings.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/reply_sink.h"

namespace latch::resp {

class ReplyWriter final : public ReplySink {
 public:
  // `protocol` is 2 or 3 (the version chosen with HELLO).
  ReplyWriter(std::string* out, int protocol) : out_(out), resp3_(protocol == 3) {}

  std::string* buffer() const { return out_; }

  int protocol() const override { return resp3_ ? 3 : 2; }
  void SetProtocol(int protocol) override { resp3_ = protocol == 3; }
  void Ok() override { out_->append("+OK\r\n"); }
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
  size_t Mark() const override { return out_->size(); }
  void RewindTo(size_t mark) override { out_->resize(mark); }

 private:
  void Header(char type, int64_t n);

  std::string* out_;
  bool resp3_;
};

}  // namespace latch::resp
