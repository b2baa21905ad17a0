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

namespace latch::resp {

class ReplyWriter {
 public:
  // `protocol` is 2 or 3 (the version chosen with HELLO).
  ReplyWriter(std::string* out, int protocol) : out_(out), resp3_(protocol == 3) {}

  bool resp3() const { return resp3_; }
  std::string* buffer() const { return out_; }

  void Ok() { out_->append("+OK\r\n"); }
  void Simple(std::string_view s);
  // `text` is the whole error line without the leading '-' (for example
  // "ERR syntax error"). CR and LF are replaced with spaces.
  void Error(std::string_view text);
  void Int(int64_t v);
  void Bulk(std::string_view s);
  void Null();       // a missing value: `$-1` / `_`
  void NullArray();  // a missing aggregate: `*-1` / `_`
  void Array(size_t n);
  void Map(size_t pairs);
  void Set(size_t n);
  void Push(size_t n);
  void Double(double v);
  void Bool(bool v);
  // A verbatim string (`=`), e.g. format "txt" for INFO in RESP3.
  void Verbatim(std::string_view format, std::string_view text);

 private:
  void Header(char type, int64_t n);

  std::string* out_;
  bool resp3_;
};

}  // namespace latch::resp
