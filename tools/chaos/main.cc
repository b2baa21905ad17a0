// latch-chaos: does RedLock over latch keep mutual exclusion, and every
// node its acknowledged writes, under faults?
//
//   latch-chaos --node-count 5 --workers 8 --duration 30s --seed 1 --quarantine auto|never|always
//               --appendfsync always|everysec|no [--faults LIST] [--vary-appendfsync LIST]
//               [--vary-quarantine LIST] [--timeline out.svg]
//
// The options (options.cc) describe a run. It starts N latch-server
// processes on free loopback ports (cluster.h), then M worker threads, each
// a separate RedLock client, that take turns on one key (workers.h), and one
// writer thread per node whose SETs are tracked until the end (acks.h).
// Meanwhile this thread injects faults from a schedule that depends only on
// the seed (schedule.h): kill -9, clean restarts, pauses, power loss, torn
// log tails, disk errors and slow disks, wall-clock steps and boot-id
// changes, and "amnesia", a power loss of a majority right after a grant,
// alone or followed by a restart while the quarantine runs. Restarts may
// change a node's fsync policy and quarantine mode. At the end every hold is
// checked against every other (checker.h), every node's acknowledged writes
// are read back, and the run is reported, in text and as an SVG timeline
// (timeline.h).
//
// Amnesia is the fault RedLock cannot survive by itself: if a majority of
// nodes forget a lock they granted and come back at once, a second worker
// wins a majority while the first still holds the lock. latch's restart
// quarantine (a node that may have forgotten locks grants nothing until
// every lease it may have granted has ended) is the remedy. So with
// --quarantine auto the check finds no violation, and with --quarantine
// never --appendfsync no it finds some: proof that the checker can see a
// violation when there is one.
//
// Against a server without the test knobs (an old build), the faults that
// need them are skipped, and the report says which.
//
// Exit status: 0 no violation and no acknowledged write lost, 1 otherwise,
// 2 harness error. The last line of the report is exactly "violations: N".
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tools/chaos/acks.h"
#include "tools/chaos/chaos.h"
#include "tools/chaos/checker.h"
#include "tools/chaos/cluster.h"
#include "tools/chaos/fencing.h"
#include "tools/chaos/page.h"
#include "tools/chaos/schedule.h"
#include "tools/chaos/timeline.h"
#include "tools/chaos/workers.h"

namespace latch::chaos {
namespace {

void OnSignal(int) {
  g_interrupted = true;
}

// Sleeps until `t` unless interrupted.
void SleepUntil(Clock::time_point t) {
  while (!g_interrupted && Clock::now() < t) {
    std::this_thread::sleep_for(std::min<Clock::duration>(t - Clock::now(), Millis{50}));
  }
}

std::string Joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

int RunChaos(Options o, const std::vector<Fault>& schedule, const std::vector<Rewrite>& rewrites) {
  if (::access(o.server.c_str(), X_OK) != 0) {
    throw HarnessError{"latch-server not found at " + o.server + " (use --server PATH)"};
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "latch-chaos.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw HarnessError{std::string("mkdtemp: ") + std::strerror(errno)};
  }
  const std::string root = tmpl;
  if (o.connect.tls.enabled) {
    // The run's own CA and certificates (tls/ in its directory): the
    // servers present one, the clients check it and present theirs.
    if (auto err = o.connect.UseGeneratedCerts(root + "/tls", &o.certs)) {
      throw HarnessError{"--tls: " + *err};
    }
    if (auto err = o.connect.Build(&o.tls)) throw HarnessError{*err};
  }
  std::string kinds;
  for (FaultKind k : o.faults) kinds += (kinds.empty() ? "" : ",") + std::string(FaultWord(k));
  std::printf(
      "latch-chaos: %d nodes, %d workers, %.1f s, seed %llu, quarantine %s, appendfsync "
      "%s, appendonly %s, ttl %lld ms, %zu faults scheduled (%s), %zu rewrites, %d acknowledged "
      "writes/s per node\n",
      o.nodes, o.workers, static_cast<double>(o.duration.count()) / 1000.0,
      static_cast<unsigned long long>(o.seed), o.quarantine.c_str(), o.appendfsync.c_str(),
      o.appendonly.c_str(), static_cast<long long>(o.ttl.count()), schedule.size(), kinds.c_str(),
      rewrites.size(), o.ack_rate);
  if (!o.vary_appendfsync.empty()) {
    std::printf("restarts draw appendfsync from {%s}\n", Joined(o.vary_appendfsync).c_str());
  }
  if (!o.vary_quarantine.empty()) {
    std::printf("restarts draw quarantine from {%s}\n", Joined(o.vary_quarantine).c_str());
  }
  std::fflush(stdout);

  // appendonly no forgets every write at a restart, by design: nothing to track.
  AckBook acks(o.nodes, o.appendonly == "yes");
  Cluster cluster(o, root, acks);
  cluster.StartAll();
  RunRecord run;
  run.knobs = cluster.ProbeKnobs();

  // Time zero of the report and the picture: when the workers start.
  Shared sh;
  sh.o = &o;
  sh.endpoints = cluster.endpoints();
  run.t0 = Clock::now();
  sh.end = run.t0 + o.duration;
  std::vector<std::thread> workers;
  for (int w = 0; w < o.workers; ++w) workers.emplace_back(Worker, std::ref(sh), w);
  std::vector<std::thread> writers;
  if (o.appendonly == "yes" && (o.ack_rate > 0 || !rewrites.empty())) {
    for (int n = 0; n < o.nodes; ++n) {
      std::vector<Rewrite> mine;
      for (const Rewrite& r : rewrites) {
        if (r.node == n) mine.push_back(r);
      }
      writers.emplace_back(AckWriter, std::ref(acks), std::cref(o), n, sh.endpoints[n],
                           std::move(mine), run.t0, sh.end);
    }
  }

  auto log = [&](const std::string& line) {
    if (o.verbose) std::printf("[%8.3f s] %s\n", Secs(Clock::now() - run.t0), line.c_str());
  };
  auto wait_for_grant = [&](Millis max) {
    uint64_t seen = sh.grants.count();
    return sh.grants.WaitPast(seen, Clock::now() + max);
  };

  std::string error;
  try {
    auto next = run.t0;
    for (const Fault& f : schedule) {
      next += f.gap;
      SleepUntil(next);
      if (g_interrupted || Clock::now() >= sh.end - o.ttl) break;
      if (auto knob = cluster.Missing(f)) {
        // The same schedule, minus what the server cannot do.
        ++run.skipped[f.kind];
        run.skipped_for[f.kind] = *knob;
        log(Format("skipped (the server lacks %s): %s", knob->c_str(), Describe(f).c_str()));
        next = Clock::now();
        continue;
      }
      run.faults.push_back(cluster.Inflict(f, wait_for_grant, log));
      cluster.Supervise(log);
      next = Clock::now();
    }
    SleepUntil(sh.end);
    for (std::thread& t : workers) t.join();
    for (std::thread& t : writers) t.join();
    workers.clear();
    writers.clear();
    run.t_end = Clock::now();
    if (!g_interrupted) {
      // Every node's acknowledged writes, one last time.
      cluster.Supervise(log);
      cluster.VerifyAll(log);
    }
  } catch (const HarnessError& e) {
    error = e.message;
    g_interrupted = true;  // stops the workers
  } catch (const std::exception& e) {
    error = e.what();
    g_interrupted = true;
  }
  for (std::thread& t : workers) t.join();
  for (std::thread& t : writers) t.join();
  if (run.t_end == Clock::time_point{}) run.t_end = Clock::now();
  cluster.StopAll();

  if (!error.empty() || g_interrupted) {
    std::printf("harness error: %s (data kept in %s)\n",
                error.empty() ? "interrupted" : error.c_str(), root.c_str());
    return kExitHarness;
  }

  run.holds = std::move(sh.holds);
  run.violations = FindOverlaps(run.holds);
  run.stats = sh.stats;
  run.events = cluster.events();
  run.runs = cluster.runs();
  run.cluster = &cluster;
  run.acks = &acks;

  PrintReport(o, run);
  if (!o.page.empty()) {
    WritePage(o.page, o, run);
    std::printf("page: %s\n", o.page.c_str());
  }
  if (!o.timeline.empty()) {
    WriteTimeline(o.timeline, o, run);
    std::printf("timeline: %s\n", o.timeline.c_str());
  }
  if (o.keep) {
    std::printf("data and server logs kept in %s\n", root.c_str());
  } else {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  // --fence: token order, reported apart from mutual exclusion (fencing.h).
  size_t inversions = 0;
  if (o.fence) {
    std::vector<TokenInversion> found = FindTokenInversions(run.holds);
    PrintTokenOrder(run.holds, found, run.t0);
    inversions = found.size();
  }
  std::printf("violations: %zu\n", run.violations.size());
  return RunFailed(run) || inversions > 0 ? kExitViolations : kExitOk;
}

}  // namespace
}  // namespace latch::chaos

int main(int argc, char** argv) {
  using namespace latch::chaos;
  Options o = ParseOptions(argc, argv);
  std::vector<Fault> schedule = MakeSchedule(o);
  std::vector<Rewrite> rewrites = MakeRewritePlan(o);
  if (o.schedule_only) {
    PrintSchedule(schedule, rewrites);
    return kExitOk;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    return RunChaos(o, schedule, rewrites);
  } catch (const HarnessError& e) {
    std::printf("harness error: %s\n", e.message.c_str());
    return kExitHarness;
  } catch (const std::exception& e) {
    std::printf("harness error: %s\n", e.what());
    return kExitHarness;
  }
}
