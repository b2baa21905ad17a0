// An in-process server for unit tests: a latch::Server on a ManualClock and
// one Connection that is never started (no socket), so a test runs a command
// with Run({...}) and gets back the exact reply bytes it produced.
//
// Server::Dispatch only appends to the connection's output buffer, so no
// event loop, port or thread is involved, and time moves only when the test
// calls clock().Advance() or clock().StepWall().
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/reply_parser.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/connection.h"
#include "server/server.h"

namespace latch::test {

// A Config for in-process tests: no log, nothing on disk.
inline Config TestConfig() {
  Config c;
  c.appendonly = false;
  return c;
}

class TestServer {
 public:
  explicit TestServer(Config config = TestConfig()) {
    auto clock = std::make_unique<ManualClock>();
    clock_ = clock.get();
    server_ = std::make_unique<Server>(std::move(config), std::move(clock));
    // No data directory: the lease policy admits every grant (its own tests
    // use a real one).
    server_->lease_policy().StartEphemeral();
    conn_ = std::make_unique<Connection>(*server_, 1);
    conn_->authenticated = true;
  }
  ~TestServer() {
    // The connection refers to the server: it goes first.
    conn_.reset();
    server_.reset();
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  // Runs one request and returns the reply bytes it produced (the output
  // buffer is cleared afterwards). Arguments may hold any bytes.
  std::string Run(const std::vector<std::string>& args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    server_->Dispatch(*conn_, views);
    std::string out = std::move(conn_->output());
    conn_->output().clear();
    return out;
  }

  // Runs one request and parses its reply (for replies whose exact bytes
  // depend on ordering the test does not care about).
  resp::Reply RunParsed(const std::vector<std::string>& args) {
    std::string raw = Run(args);
    resp::Reply reply;
    size_t consumed = 0;
    if (resp::ParseReply(raw, &reply, &consumed) != resp::ReplyStatus::kOk ||
        consumed != raw.size()) {
      reply = resp::Reply{};
      reply.type = resp::Reply::Type::kError;
      reply.str = "test harness: unparsable or trailing reply bytes: " + raw;
    }
    return reply;
  }

  Server& server() { return *server_; }
  Connection& conn() { return *conn_; }
  ManualClock& clock() { return *clock_; }

 private:
  ManualClock* clock_ = nullptr;  // owned by the server
  std::unique_ptr<Server> server_;
  std::unique_ptr<Connection> conn_;
};

}  // namespace latch::test
