// latch-contention: N clients taking turns on one lock key, for
// tools/bench-vs-redis's contention scenario.
//
//   latch-contention --port P [--clients 50] [--seconds 3] [--hold-us 0]
//                    --mode wait|poll [--poll-ms 100] [--release delifeq|lua]
//
// Each client is a thread with its own connection. A turn: acquire, hold the
// key for --hold-us, release, then wait for the round to end — every client
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
#include <getopt.h>
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
  explicit Client(int port) : c_("127.0.0.1", port) {}
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
  double seconds = 3;
  int64_t hold_us = 0;
  bool wait = true;
  int64_t poll_ms = 100;
  bool lua = false;
};

struct Turn {
  Clock::time_point granted, released;
  int client;
};

[[noreturn]] void Usage() {
  std::fprintf(stderr,
               "Usage: latch-contention --port P [--clients N] [--seconds S] [--hold-us U]\n"
               "                        --mode wait|poll [--poll-ms M] [--release delifeq|lua]\n");
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  static const option kOptions[] = {
      {"port", required_argument, nullptr, 'p'},    {"clients", required_argument, nullptr, 'c'},
      {"seconds", required_argument, nullptr, 's'}, {"hold-us", required_argument, nullptr, 'h'},
      {"mode", required_argument, nullptr, 'm'},    {"poll-ms", required_argument, nullptr, 'P'},
      {"release", required_argument, nullptr, 'r'}, {nullptr, 0, nullptr, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "", kOptions, nullptr)) != -1) {
    std::string v = optarg != nullptr ? optarg : "";
    switch (c) {
      case 'p':
        o.port = std::atoi(v.c_str());
        break;
      case 'c':
        o.clients = std::atoi(v.c_str());
        break;
      case 's':
        o.seconds = std::atof(v.c_str());
        break;
      case 'h':
        o.hold_us = std::atoll(v.c_str());
        break;
      case 'm':
        if (v != "wait" && v != "poll") Usage();
        o.wait = v == "wait";
        break;
      case 'P':
        o.poll_ms = std::atoll(v.c_str());
        break;
      case 'r':
        if (v != "delifeq" && v != "lua") Usage();
        o.lua = v == "lua";
        break;
      default:
        Usage();
    }
  }
  if (o.port <= 0 || o.clients < 2 || o.seconds <= 0 || o.poll_ms <= 0) Usage();
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  std::string sha;
  try {
    Client admin(o.port);
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
  const auto stop_at =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));

  auto client = [&](int id) {
    try {
      Client c(o.port);
      const std::string me = "client-" + std::to_string(id);
      std::mt19937_64 rng(static_cast<uint64_t>(id) * 7919 + 1);
      std::uniform_int_distribution<int64_t> sleep_us(o.poll_ms * 500, o.poll_ms * 1500);
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
        if (o.hold_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(o.hold_us));
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
      n, static_cast<double>(n) / o.seconds, pct(0.50), pct(0.99),
      n ? static_cast<double>(requests.load()) / static_cast<double>(n) : 0.0,
      sq > 0 ? sum * sum / (o.clients * sq) : 0.0);
  return 0;
}
