// Where a command's reply goes: the one interface every handler writes to.
//
// Two implementations: ReplyWriter (reply_writer.h) encodes RESP2/RESP3
// bytes into a connection's output; ReplyCapture (reply_capture.h) keeps the
// reply as a value, for a caller that wants to look at it rather than send
// it (a known lock script looking at what its redis.call() returned).
// Handlers cannot tell them apart, so a command behaves the same whether a
// client or a script called it (Dragonfly's facade/reply_capture.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace latch::resp {

class ReplySink {
 public:
  // Told about every error written through a sink (the server's INFO
  // errorstats and total_error_replies count what its clients were told).
  class ErrorObserver {
   public:
    virtual ~ErrorObserver() = default;
    virtual void OnErrorReply(std::string_view text) = 0;
  };

  virtual ~ReplySink() = default;

  // The protocol the reply is written in: 2 or 3 (HELLO changes it for the
  // rest of its own reply).
  virtual int protocol() const = 0;
  virtual void SetProtocol(int protocol) = 0;
  bool resp3() const { return protocol() == 3; }

  virtual void Ok() = 0;
  virtual void Simple(std::string_view s) = 0;
  // `text` is the whole error line without the leading '-' (for example
  // "ERR syntax error"). CR and LF become spaces.
  virtual void Error(std::string_view text) = 0;
  virtual void Int(int64_t v) = 0;
  virtual void Bulk(std::string_view s) = 0;
  virtual void Null() = 0;       // a missing value: `$-1` / `_`
  virtual void NullArray() = 0;  // a missing aggregate: `*-1` / `_`
  virtual void Array(size_t n) = 0;
  virtual void Map(size_t pairs) = 0;
  virtual void Set(size_t n) = 0;
  virtual void Push(size_t n) = 0;
  virtual void Double(double v) = 0;
  virtual void Bool(bool v) = 0;
  // A verbatim string (`=`), e.g. format "txt" for INFO in RESP3.
  virtual void Verbatim(std::string_view format, std::string_view text) = 0;
  // A big number (`(`), a bulk string in RESP2: what a script's
  // {big_number = "…"} becomes.
  virtual void BigNumber(std::string_view digits) = 0;

  // Where the reply stands now, and a way back to it: a handler that runs
  // out of memory halfway through a reply leaves no half-written one.
  virtual size_t Mark() const = 0;
  virtual void RewindTo(size_t mark) = 0;

  // Error replies written through this sink so far (the gate's "did it
  // fail" question).
  uint64_t errors() const { return errors_; }
  void set_error_observer(ErrorObserver* observer) { observer_ = observer; }

 protected:
  // Implementations call this for every error they write.
  void CountError(std::string_view text) {
    ++errors_;
    if (observer_ != nullptr) observer_->OnErrorReply(text);
  }

 private:
  uint64_t errors_ = 0;
  ErrorObserver* observer_ = nullptr;
};

}  // namespace latch::resp
