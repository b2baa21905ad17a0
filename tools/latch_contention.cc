// latch-contention: N clients taking turns on one lock key, for
// tools/bench-vs-redis's contention scenario.
//
//   latch-contention --port P [--clients 50] [--duration 3s] [--hold 0us]
//                    --mode wait|poll [--poll 100ms] [--release delifeq|lua]
//
// Each client is a thread with its own connection. A turn: acquire, hold the
// key for --hold, release, then wait for the round to end — every client
// has one turn per round, so both ways of waiting serve all clients equally
// (without rounds a poller that just released takes the key straight back:
// the lock never changes hands). What differs is how the key passes on:
//   wait  SET key me NX PX 10000 WAIT 1000: the client queues on the server
//         and is granted the key the moment it is released (latch only);
//   poll  SET key me NX PX 10000, and on nil a sleep drawn in
//         [poll/2, 3 poll/2], then again: the loop lock libraries run
//         (redis-py's Lock sleeps 100 ms; others 50-250 ms with jitter).
// Release: DELIFEQ (latch) or the compare-and-delete Lua script by EVALSHA
// (Redis, as the libraries send it).
//
// Prints one line of key=value figures: handoffs (grants during the run),
// handoffs_s, p50_ms and p99_ms of the time from a release to the next grant
// (the releaser's clock reading before it sends the release, to the next
// holder's reading once its grant arrived: one clock, one process), requests
// per handoff, and Jain's fairness index over each client's turns.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "protocol/reply_parser.h"
#include "tools/cli/options.h"
#include "tools/launch/client.h"

namespace {

using Clock = std::chrono::steady_clock;
using latch::resp::Reply;

constexpr const char* kKey = "bench:contended";
constexpr const char* kUnlockLua =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else "
    "return 0 end";

// A blocking client whose error replies end the run: the benchmark only
// sends requests that cannot fail.
class Client {
 public:
  // Logs in first when a password is given (--user/--pass).
  Client(int port, const std::string& user, const std::string& password) : c_("127.0.0.1", port) {
    if (password.empty()) return;
    if (user.empty()) {
      Call({"AUTH", password});
    } else {
      Call({"AUTH", user, password});
    }
  }
  Reply Call(std::initializer_list<std::string_view> args) {
    Reply r = c_.Call(args);
    if (r.is_error()) throw std::runtime_error("error reply: " + r.str);
    return r;
  }

 private:
  latch::launch::Client c_;
};

struct Options {
  int port = 0;
  int clients = 50;
  std::chrono::milliseconds duration{3000};
  std::chrono::microseconds hold{0};
  bool wait = true;
  std::chrono::milliseconds poll{100};
  bool lua = false;
  std::string user, password;  // AUTH [user] password on every connection
};

struct Turn {
  Clock::time_point granted, released;
  int client;
};

const latch::cli::Manual kManual = {
    "latch-contention", "N clients taking turns on one lock key (the contention benchmark's load)",
    "latch-contention --port P --mode wait|poll [--clients N] [--duration D] [--hold D]\n"
    "                 [--poll D] [--release delifeq|lua] [--user NAME] [--pass P]",
    R"MAN(DESCRIPTION
    Each client is a thread with its own connection to 127.0.0.1:P. A turn:
    acquire, hold the key for --hold, release, then wait for the round to
    end: every client has one turn per round. What differs is how the key
    passes on: "wait" sends SET key me NX PX 10000 WAIT 1000 and is granted
    the key the moment it is released (latch only); "poll" sends SET NX PX
    and on nil sleeps a time drawn in [poll/2, 3 poll/2], as lock libraries
    do. Prints one line of key=value figures: handoffs, handoffs_s, p50_ms and
    p99_ms from a release to the next grant, requests per handoff, and Jain's
    fairness index. tools/bench-vs-redis runs it.

OPTIONS
    --port P              the server's port on 127.0.0.1
    --mode wait|poll      how a client waits for the key
    --clients N           clients, 2-10000 (default 50)
    --duration D          how long to run (default 3s)
    --hold D              the critical section (default 0us)
    --poll D              poll mode's mean sleep (default 100ms)
    --release delifeq|lua DELIFEQ (latch), or the compare-and-delete Lua
                          script by EVALSHA (as the libraries send it to Redis)
    --user NAME           every connection logs in as that ACL user (AUTH NAME
                          P; needs --pass): the load of an ACL-checked client
    -a, --pass P          the password (default $REDISCLI_AUTH, as redis-cli,
                          else $LATCH_PASSWORD)
    -h, --help            this manual
    --version             the version

EXIT STATUS
    0 done, 2 an error talking to the server (a refused AUTH too), 64 usage
    error

ENVIRONMENT
    REDISCLI_AUTH         the default --pass (redis-cli's variable)
    LATCH_PASSWORD        the default --pass when REDISCLI_AUTH is not set
)MAN"};

Options Parse(int argc, char** argv) {
  Options o;
  std::string mode, release = "delifeq";
  if (const char* pw = std::getenv("LATCH_PASSWORD"); pw != nullptr && *pw != '\0') o.password = pw;
  if (const char* pw = std::getenv("REDISCLI_AUTH"); pw != nullptr && *pw != '\0') o.password = pw;
  latch::cli::Parser p(kManual);
  p.Int("port", &o.port, 1, 65535)
      .Text("user", &o.user)
      .Text("pass", &o.password, 'a')
      .Int("clients", &o.clients, 2, 10000)
      .Duration("duration", &o.duration, std::chrono::milliseconds(1),
                std::chrono::milliseconds(3'600'000))
      .Duration("hold", &o.hold, std::chrono::microseconds(0),
                std::chrono::microseconds(60'000'000))
      .Choice("mode", &mode, {"wait", "poll"})
      .Duration("poll", &o.poll, std::chrono::milliseconds(1), std::chrono::milliseconds(60'000))
      .Choice("release", &release, {"delifeq", "lua"})
      .Refused("seconds", "now --duration D, with a unit (3s)")
      .Refused("hold-us", "now --hold D, with a unit (500us, 1ms)")
      .Refused("poll-ms", "now --poll D, with a unit (100ms)");
  if (!p.Parse(argc, argv).operands.empty()) p.Fail("takes no arguments");
  if (!p.Given("port")) p.Fail("--port is required");
  if (!p.Given("mode")) p.Fail("--mode is required");
  if (!o.user.empty() && o.password.empty()) p.Fail("--user needs a password (--pass)");
  o.wait = mode == "wait";
  o.lua = release == "lua";
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::string sha;
  try {
    Client admin(o.port, o.user, o.password);
    admin.Call({"DEL", kKey});
    if (o.lua) sha = admin.Call({"SCRIPT", "LOAD", kUnlockLua}).str;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "latch-contention: %s\n", e.what());
    return 2;
  }

  // Rounds: the last client of a round to be served opens the next one.
  std::mutex mu;
  std::condition_variable round_cv;
  uint64_t round = 0;
  int served = 0;
  std::vector<Turn> turns;
  std::atomic<uint64_t> requests{0};
  std::atomic<bool> failed{false};
  const auto start = Clock::now();
  const auto stop_at = start + std::chrono::duration_cast<Clock::duration>(o.duration);

  auto client = [&](int id) {
    try {
      Client c(o.port, o.user, o.password);
      const std::string me = "client-" + std::to_string(id);
      std::mt19937_64 rng(static_cast<uint64_t>(id) * 7919 + 1);
      const int64_t poll_ms = o.poll.count();
      std::uniform_int_distribution<int64_t> sleep_us(poll_ms * 500, poll_ms * 1500);
      while (Clock::now() < stop_at) {
        while (true) {
          if (Clock::now() < stop_at) ++requests;
          Reply r = o.wait ? c.Call({"SET", kKey, me, "NX", "PX", "10000", "WAIT", "1000"})
                           : c.Call({"SET", kKey, me, "NX", "PX", "10000"});
          if (!r.is_null()) break;
          if (Clock::now() >= stop_at) return;
          if (!o.wait) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us(rng)));
        }
        Turn t;
        t.client = id;
        t.granted = Clock::now();
        if (o.hold.count() > 0) std::this_thread::sleep_for(o.hold);
        t.released = Clock::now();
        if (t.granted < stop_at) ++requests;
        if (o.lua) {
          c.Call({"EVALSHA", sha, "1", kKey, me});
        } else {
          c.Call({"DELIFEQ", kKey, me});
        }
        std::unique_lock<std::mutex> lk(mu);
        turns.push_back(t);
        if (++served == o.clients) {
          served = 0;
          ++round;
          round_cv.notify_all();
        } else {
          const uint64_t mine = round;
          round_cv.wait_until(lk, stop_at, [&] { return round != mine; });
        }
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "latch-contention: client %d: %s\n", id, e.what());
      failed = true;
    }
    // Time is up: nobody waits any more for a round to end.
    std::lock_guard<std::mutex> g(mu);
    ++round;
    round_cv.notify_all();
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < o.clients; ++i) threads.emplace_back(client, i);
  for (auto& t : threads) t.join();
  if (failed) return 1;

  std::erase_if(turns, [&](const Turn& t) { return t.granted >= stop_at; });
  std::sort(turns.begin(), turns.end(),
            [](const Turn& a, const Turn& b) { return a.granted < b.granted; });
  std::vector<double> gaps;
  for (size_t i = 1; i < turns.size(); ++i) {
    if (turns[i].granted >= turns[i - 1].released) {
      gaps.push_back(
          std::chrono::duration<double, std::milli>(turns[i].granted - turns[i - 1].released)
              .count());
    }
  }
  std::sort(gaps.begin(), gaps.end());
  auto pct = [&](double p) {
    return gaps.empty() ? 0.0
                        : gaps[std::min(gaps.size() - 1, static_cast<size_t>(p * gaps.size()))];
  };
  std::vector<double> per(o.clients, 0);
  for (const Turn& t : turns) per[t.client] += 1;
  double sum = 0, sq = 0;
  for (double x : per) {
    sum += x;
    sq += x * x;
  }
  const size_t n = turns.size();
  std::printf(
      "handoffs=%zu handoffs_s=%.1f p50_ms=%.4f p99_ms=%.4f req_per_handoff=%.2f "
      "fairness=%.3f\n",
      n, static_cast<double>(n) / (static_cast<double>(o.duration.count()) / 1000.0), pct(0.50),
      pct(0.99), n ? static_cast<double>(requests.load()) / static_cast<double>(n) : 0.0,
      sq > 0 ? sum * sum / (o.clients * sq) : 0.0);
  return 0;
}
