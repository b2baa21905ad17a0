// Micro-benchmarks (Google Benchmark) for the hot paths that do not involve
// the network, one per stage of a request: parse, lookup, Store put, log
// append, reply, the keyspace, and one whole command through
// Server::Dispatch (which adds the gate and the handler). Not part of the
// test suite; run
//
//   cmake --build build --target latch_microbench && ./build/tests/latch_microbench
//
// to see whether a change made them slower. Figures are per request.
// tools/microbench-instructions counts their instructions instead (a count
// a loaded machine does not move): with LATCH_MICROBENCH_ITERATIONS=N set,
// every benchmark runs exactly N iterations.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "log/record.h"
#include "protocol/reply_writer.h"
#include "protocol/request_parser.h"
#include "protocol/request_writer.h"
#include "server/clock.h"
#include "server/connection.h"
#include "server/keyspace.h"
#include "server/server.h"
#include "server/store.h"

namespace {

// LATCH_MICROBENCH_ITERATIONS=N: a fixed number of iterations per benchmark
// (callgrind then counts N of them; see tools/microbench-instructions).
void FixedIterations(benchmark::internal::Benchmark* b) {
  if (const char* n = std::getenv("LATCH_MICROBENCH_ITERATIONS")) b->Iterations(std::atoll(n));
}
#define LATCH_BENCHMARK(fn) BENCHMARK(fn)->Apply(FixedIterations)

std::string LockKey(int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "lock:%012lld", static_cast<long long>(i));
  return buf;
}

const std::string kToken = "3f6c2a9e-8b1d-4e57-a0c4-9d2e7f5b1c86";

// A pipeline of 16 lock acquisitions, parsed request by request.
void BM_ParsePipeline(benchmark::State& state) {
  std::string buf;
  for (int i = 0; i < 16; ++i) {
    latch::resp::AppendRequest(buf, {"SET", LockKey(i), kToken, "NX", "PX", "30000"});
  }
  latch::resp::RequestParser parser;
  latch::resp::ParseLimits limits;
  for (auto _ : state) {
    std::string_view in(buf);
    while (!in.empty()) {
      parser.Parse(in, limits);
      benchmark::DoNotOptimize(parser.args().data());
      in.remove_prefix(parser.consumed());
    }
  }
  state.SetItemsProcessed(state.iterations() * 16);
}
LATCH_BENCHMARK(BM_ParsePipeline);

void BM_ParseInline(benchmark::State& state) {
  const std::string line = "SET lock:000000000042 \"token with spaces\" NX PX 30000\r\n";
  latch::resp::RequestParser parser;
  latch::resp::ParseLimits limits;
  for (auto _ : state) {
    parser.Parse(line, limits);
    benchmark::DoNotOptimize(parser.args().data());
  }
  state.SetItemsProcessed(state.iterations());
}
LATCH_BENCHMARK(BM_ParseInline);

void BM_WriteReplies(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    out.clear();
    latch::resp::ReplyWriter w(&out, 2);
    for (int i = 0; i < 16; ++i) {
      w.Ok();
      w.Bulk(kToken);
      w.Int(i);
      w.Null();
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
LATCH_BENCHMARK(BM_WriteReplies);

// Keyspace with state.range(0) keys: lookups of random existing keys.
void BM_KeyspaceFind(benchmark::State& state) {
  latch::Keyspace ks;
  const int64_t n = state.range(0);
  for (int64_t i = 0; i < n; ++i) ks.Set(LockKey(i), kToken, 2'000'000'000);
  std::vector<std::string> probe;
  for (int64_t i = 0; i < 4096; ++i) probe.push_back(LockKey((i * 7919) % n));
  size_t k = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ks.Find(probe[k++ & 4095], 1'000'000));
  }
  state.SetItemsProcessed(state.iterations());
}
LATCH_BENCHMARK(BM_KeyspaceFind)->Arg(1'000)->Arg(1'000'000);

// Lock churn: acquire (insert with TTL) then release (erase).
// (The keys made before, in a ring of 200,000: each is released 100,000
// iterations after it was taken, and taken again 100,000 after that.)
void BM_KeyspaceAcquireRelease(benchmark::State& state) {
  latch::Keyspace ks;
  constexpr int64_t kRing = 200'000;
  std::vector<std::string> keys;
  for (int64_t i = 0; i < kRing; ++i) keys.push_back(LockKey(i));
  for (int64_t i = 0; i < kRing / 2; ++i) ks.Set(keys[i], kToken, 2'000'000'000);
  int64_t i = kRing / 2;
  for (auto _ : state) {
    ks.Set(keys[i % kRing], kToken, 2'000'000'000);
    ks.Erase(keys[(i - kRing / 2) % kRing]);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
LATCH_BENCHMARK(BM_KeyspaceAcquireRelease);

// Lookup: a command's name (as clients send it, upper case) to its spec.
void BM_CommandLookup(benchmark::State& state) {
  const latch::CommandRegistry& registry = latch::CommandRegistry::Get();
  const std::string_view names[] = {"SET", "GET", "DELIFEQ", "PEXPIRE", "EVALSHA", "HINCRBY"};
  size_t k = 0;
  for (auto _ : state) benchmark::DoNotOptimize(registry.Find(names[k++ % 6]));
  state.SetItemsProcessed(state.iterations());
}
LATCH_BENCHMARK(BM_CommandLookup);

// Store put: a lock's key and token with a lease, into a Store of 100,000
// keys (the log off: BM_LogAppend is the record).
void BM_StorePut(benchmark::State& state) {
  latch::Store store("bench");
  latch::TimeSnapshot now{1'000'000, 1'700'000'000'000};
  for (int64_t i = 0; i < 100'000; ++i) {
    store.Put(LockKey(i), kToken, latch::Lease::Until(2'000'000'000), now);
  }
  std::vector<std::string> keys;
  for (int64_t i = 0; i < 4096; ++i) keys.push_back(LockKey(100'000 + i));
  size_t k = 0;
  for (auto _ : state) {
    store.Put(keys[k++ & 4095], kToken, latch::Lease::Until(2'000'000'000), now);
  }
  state.SetItemsProcessed(state.iterations());
}
LATCH_BENCHMARK(BM_StorePut);

// Log append: a grant's record (SET key token PXAT t) encoded into the
// batch the loop writes at the end of an iteration (cleared every 16).
void BM_LogAppend(benchmark::State& state) {
  latch::aof::Batch batch;
  const std::string key = LockKey(42);
  int n = 0;
  for (auto _ : state) {
    batch.Set(key, kToken, 1'700'000'030'000);
    if (++n % 16 == 0) batch.Clear();
  }
  benchmark::DoNotOptimize(batch.bytes().data());
  state.SetItemsProcessed(state.iterations());
}
LATCH_BENCHMARK(BM_LogAppend);

// One SET NX PX through the whole command layer (lookup, checks, handler,
// reply), without sockets. Arg 1: with Redis's defaults, commands are timed
// (the slow log is on): one more clock read per command. Arg 0: the slow
// log, the latency monitor and latency-tracking off: no timing at all.
// (Each iteration also reads the clocks for its "batch" of one request.)
void BM_DispatchLockAcquire(benchmark::State& state) {
  latch::Config config;
  config.appendonly = false;
  config.quarantine = latch::QuarantineMode::kNever;
  if (state.range(0) == 0) {
    config.slowlog_log_slower_than = -1;
    config.latency_monitor_threshold = 0;
    config.latency_tracking = false;
  }
  latch::Server server(config, std::make_unique<latch::SystemClock>());
  server.lease_policy().StartEphemeral();
  latch::Connection conn(server, 1);
  conn.authenticated = true;
  std::vector<std::string> keys;
  for (int i = 0; i < 4096; ++i) keys.push_back(LockKey(i));
  size_t k = 0;
  std::vector<std::string_view> argv = {"SET", "", kToken, "NX", "PX", "30000"};
  for (auto _ : state) {
    argv[1] = keys[k++ & 4095];
    server.Dispatch(conn, argv);
    conn.output().clear();
  }
  state.SetItemsProcessed(state.iterations());
}
LATCH_BENCHMARK(BM_DispatchLockAcquire)->ArgName("timed")->Arg(1)->Arg(0);

}  // namespace

BENCHMARK_MAIN();
