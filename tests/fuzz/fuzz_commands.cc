// Fuzz target: the whole command layer. Bytes are parsed into requests as a
// connection does, and each request runs through Server::Dispatch (lookup,
// arity, NOAUTH, the handler) against a real keyspace, in-process, on a
// ManualClock: the same set-up as the unit tests' TestServer (no socket, no
// log on disk, no event loop).
//
// Input: a flags byte, then the bytes a client sends (RESP or inline).
//   flags bit 0: requirepass "pw" is set and the client starts
//                unauthenticated (NOAUTH, AUTH, HELLO AUTH, pre-auth limits)
//         bit 1: max-lock-ttl 0 (no TTL cap) instead of the default
// Requests named FUZZ.* are the harness's, not the server's:
//   FUZZ.ADVANCE ms    moves both clocks forward (0..10^10 ms)
//   FUZZ.STEPWALL ms   steps only the wall clock (±10^10 ms), as NTP would
//   FUZZ.EXPIRE        runs an active expiry cycle, as the cron does
//   FUZZ.REHASH        moves some buckets of an ongoing rehash
//
// Beyond "no crash, no sanitizer report, no uncaught exception", each run
// checks:
//  - every request produces exactly one well-formed reply (RESP2 or RESP3;
//    SHUTDOWN produces none, nor a request whose reply CLIENT REPLY OFF or
//    SKIP drops, nor one that parks the client: WAITAOF, SET … NX WAIT on a
//    held key, a blocking pop with nothing to pop), with no trailing
//    bytes: a malformed or doubled reply would desynchronise every client
//    library;
//  - the keyspace's counters agree with its contents at the end.
// Before each request the pipeline prefetch reads ahead over the rest of
// the stream, as a connection does (ASan: never past its end).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_parser.h"
#include "protocol/request_parser.h"
#include "protocol/text.h"
#include "tests/unit/replay_check.h"
#include "tests/unit/test_server.h"

namespace {

constexpr size_t kMaxRequests = 512;

void Check(bool ok, const char* what, std::string_view detail = {}) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_commands: property violated: %s\n%.*s\n", what,
                 static_cast<int>(std::min<size_t>(detail.size(), 2000)), detail.data());
    std::abort();
  }
}

int64_t Clamp(std::string_view s, int64_t lo, int64_t hi) {
  auto v = latch::ParseInt64(s);
  return v ? std::clamp(*v, lo, hi) : 0;
}

// Runs a harness request; returns false if `argv` is not one.
bool RunHarnessRequest(latch::test::TestServer& ts, std::span<const std::string_view> argv) {
  using latch::EqualsIgnoreCase;
  if (argv[0].size() < 5 || !EqualsIgnoreCase(argv[0].substr(0, 5), "FUZZ.")) return false;
  std::string_view op = argv[0].substr(5);
  if (EqualsIgnoreCase(op, "ADVANCE") && argv.size() == 2) {
    ts.clock().Advance(Clamp(argv[1], 0, 10'000'000'000));
  } else if (EqualsIgnoreCase(op, "STEPWALL") && argv.size() == 2) {
    ts.clock().StepWall(Clamp(argv[1], -10'000'000'000, 10'000'000'000));
  } else if (EqualsIgnoreCase(op, "EXPIRE")) {
    ts.server().store().ActiveExpireCycle(ts.clock().MonoMs(), 1000);
  } else if (EqualsIgnoreCase(op, "REHASH")) {
    ts.server().store().RehashStep(100);
  } else {
    return false;
  }
  return true;
}

void CheckReplies(std::string_view out, std::string_view command, bool monitor, bool replied) {
  size_t pos = 0, replies = 0;
  while (pos < out.size()) {
    latch::resp::Reply reply;
    size_t consumed = 0;
    auto st = latch::resp::ParseReply(out.substr(pos), &reply, &consumed);
    Check(st == latch::resp::ReplyStatus::kOk, "malformed or incomplete reply", out);
    pos += consumed;
    ++replies;
  }
  if (latch::EqualsIgnoreCase(command, "SHUTDOWN")) {
    Check(replies <= 1, "more than one reply to SHUTDOWN", out);
  } else if (monitor) {
    // A monitor also receives the feed line of commands (its own included).
    Check(!replied || replies >= 1, "no reply", out);
  } else {
    Check(replies == (replied ? 1u : 0u), "not exactly the replies Dispatch reported", out);
  }
}

void CheckKeyspace(const latch::Keyspace& db) {
  size_t n = 0, with_deadline = 0;
  db.ForEach([&](const latch::Keyspace::Entry& e) {
    ++n;
    if (e.has_deadline()) ++with_deadline;
  });
  Check(n == db.size(), "Keyspace::size() disagrees with its entries");
  Check(with_deadline == db.keys_with_deadline(), "TTL index disagrees with the entries");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The server logs through spdlog's default logger: a logger without sinks
  // keeps the fuzzer's output readable (CONFIG SET loglevel may change its
  // level, not its sinks).
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("fuzz"));
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  latch::Config config = latch::test::TestConfig();
  config.quarantine = latch::QuarantineMode::kNever;
  if (flags & 1) config.requirepass = "pw";
  if (flags & 2) config.max_lock_ttl = 0;
  latch::test::TestServer ts(config);
  latch::Connection& conn = ts.conn();
  conn.authenticated = config.requirepass.empty();
  // Everything the commands change is logged, as in a server with a log.
  latch::aof::Batch log;
  ts.server().store().set_log(&log);

  latch::resp::RequestParser parser;
  size_t requests = 0;
  while (!stream.empty() && requests < kMaxRequests) {
    // As a connection does before a pipeline's requests run (prefetch.h):
    // reading ahead must stay inside the bytes and change nothing.
    (void)ts.server().Prefetch(conn, stream);
    latch::resp::ParseLimits limits;
    limits.max_bulk_len = ts.server().config().proto_max_bulk_len;
    limits.unauthenticated = !conn.authenticated;
    auto r = parser.Parse(stream, limits);
    if (r != latch::resp::RequestParser::Result::kRequest) break;  // incomplete, or closed
    std::vector<std::string_view> argv(parser.args().begin(), parser.args().end());
    stream.remove_prefix(parser.consumed());
    if (argv.empty()) continue;
    ++requests;
    if (RunHarnessRequest(ts, argv)) continue;

    bool replied = ts.server().Dispatch(conn, argv);
    CheckReplies(conn.output(), argv[0], conn.monitor, replied);
    conn.output().clear();
    // QUIT, CLIENT KILL of oneself: the connection reads nothing more; nor
    // does a client parked by WAITAOF, SET … WAIT or a blocking pop until it
    // is answered.
    if (conn.close_after_reply() || conn.blocked) break;
  }
  CheckKeyspace(ts.server().store().keyspace());
  ts.server().store().set_log(nullptr);

  // One applier: replaying the log rebuilds the live keyspace exactly.
  latch::TimeSnapshot now = ts.server().Now();
  latch::Store replayed(ts.clock().Id(), ts.server().store().databases());
  std::string err = latch::test::ReplayInto(log.bytes(), ts.clock().Id(), now, &replayed);
  Check(err.empty(), "the log the commands wrote does not read back", err);
  Check(latch::test::LiveKeys(replayed, now.mono) ==
            latch::test::LiveKeys(ts.server().store(), now.mono),
        "replaying the log does not rebuild the keyspace");
  return 0;
}
