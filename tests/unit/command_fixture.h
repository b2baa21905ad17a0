// The fixture of the command tests: an in-process server on a ManualClock
// (test_server.h) and the reply and record encoders the tests compare with,
// written out independently of the server's own.
//
// Replies and error texts for commands latch shares with Redis were checked
// against Debian's redis-server 7.0; DELEX/DIGEST/SET IF* follow Redis 8.4 and
// DELIFEQ Valkey 9.0.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "log/record.h"
#include "protocol/request_parser.h"
#include "server/command.h"
#include "test_server.h"

namespace latch::test {

using resp::Reply;

inline const std::string kOk = "+OK\r\n";
inline const std::string kNull = "$-1\r\n";
inline const std::string kSyntax = "-ERR syntax error\r\n";
inline const std::string kNotInt = "-ERR value is not an integer or out of range\r\n";
inline constexpr const char* kWrongTypeText =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline const std::string kDigestLen = "-ERR must be exactly 16 hexadecimal characters\r\n";

inline std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
inline std::string Int(int64_t n) {
  return ":" + std::to_string(n) + "\r\n";
}
inline std::string Arr(const std::vector<std::string>& items) {
  std::string out = "*" + std::to_string(items.size()) + "\r\n";
  for (const std::string& i : items) out += i;
  return out;
}
inline std::string Err(std::string_view text) {
  return "-" + std::string(text) + "\r\n";
}
inline std::string Arity(std::string_view name) {
  return "-ERR wrong number of arguments for '" + std::string(name) + "' command\r\n";
}
inline std::string InvalidExpire(std::string_view name) {
  return "-ERR invalid expire time in '" + std::string(name) + "' command\r\n";
}
// A log record: a RESP array of bulk strings (written out independently of
// the server's encoder).
inline std::string Req(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += Bulk(a);
  return out;
}

// Known XXH3-64 digests (see the notes: they match Redis's docs and tests).
inline constexpr const char* kDigestEmpty = "2d06800538d394c2";
inline constexpr const char* kDigestHello = "9555e8555c62dcfd";

// Redis's semantics: no cap on lease length (max-lock-ttl 0), so TTLs of any
// size can be tested. The cap itself is a separate feature.
inline Config UncappedConfig() {
  Config c = test::TestConfig();
  c.max_lock_ttl = 0;
  return c;
}

class CommandsTest : public ::testing::Test {
 protected:
  CommandsTest() : ts_(UncappedConfig()) {}

  std::string Run(const std::vector<std::string>& args) { return ts_.Run(args); }
  Reply RunParsed(const std::vector<std::string>& args) { return ts_.RunParsed(args); }
  ManualClock& clock() { return ts_.clock(); }
  int64_t WallMs() { return clock().WallMs(); }
  std::string WallMsPlus(int64_t ms) { return std::to_string(WallMs() + ms); }

  TestServer ts_;
};

// A command test with several clients of its own, for the blocking commands:
// each client's replies wait in its output until the test takes them, and
// the records the store writes collect in log_.
inline std::unique_ptr<Connection> ClientOf(TestServer& ts, uint64_t id) {
  auto c = std::make_unique<Connection>(ts.server(), id);
  c->authenticated = true;
  return c;
}
// What the server has written to c since the last call.
inline std::string Take(Connection& c) {
  std::string out = std::move(c.output());
  c.output().clear();
  return out;
}

class BlockingTest : public CommandsTest {
 protected:
  BlockingTest() { ts_.server().store().set_log(&log_); }
  ~BlockingTest() override { ts_.server().store().set_log(nullptr); }

  std::unique_ptr<Connection> Client(uint64_t id) { return ClientOf(ts_, id); }
  std::string From(Connection& c, std::vector<std::string_view> argv) {
    ts_.server().Dispatch(c, argv);
    return Take(c);
  }

  aof::Batch log_;
};

}  // namespace latch::test
