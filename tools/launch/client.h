// A minimal blocking RESP client for the tools: one request, then its reply.
// latch-demo and latch-contention talk to their servers through it (the
// RedLock library has its own, parallel and with deadlines: tools/redlock/).
#pragma once

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/unique_fd.h"
#include "protocol/reply_parser.h"

namespace latch::launch {

class Client {
 public:
  // Connects to host:port (IPv4; "localhost" is 127.0.0.1) with TCP_NODELAY.
  // Throws std::runtime_error when it cannot.
  Client(const std::string& host, int port);

  // Sends the request and waits for its reply (an error reply is a reply,
  // not an exception). Throws std::runtime_error when the connection is lost,
  // the reply is malformed, or none arrives within 5 s.
  resp::Reply Call(std::initializer_list<std::string_view> args);
  resp::Reply Call(const std::vector<std::string>& args);

  // A subscriber's two halves: Send writes a request without waiting for its
  // reply; Receive reads the next reply or pushed message (a pub/sub
  // "message"), nullopt when none arrives within `timeout`.
  void Send(const std::vector<std::string>& args);
  std::optional<resp::Reply> Receive(std::chrono::milliseconds timeout);

 private:
  resp::Reply Exchange(const std::string& request);
  void Write(const std::string& request);

  UniqueFd fd_;
  std::string buf_;  // bytes received and not yet parsed
};

}  // namespace latch::launch
