// latch-chaos: does RedLock over latch keep mutual exclusion under faults?
//
//   latch-chaos --nodes 5 --workers 8 --duration 30s --seed 1 --quarantine auto|never
//               --appendfsync always|everysec|no [--appendonly yes|no] [--timeline out.svg]
//
// The options (options.cc) describe a run. It starts N latch-server
// processes on free loopback ports (cluster.h), then M worker threads, each
// a separate RedLock client, that take turns on one key (workers.h).
// Meanwhile this thread injects faults from a schedule that depends only on
// the seed (schedule.h): kill -9 and restart, SIGSTOP/SIGCONT pauses, power
// loss, torn log tails, and "amnesia", a power loss of a majority right
// after a grant. At the end every hold is checked against every other
// (checker.h) and the run is reported, in text and as an SVG timeline
// (timeline.h).
//
// Amnesia is the fault RedLock cannot survive by itself: if a majority of
// nodes forget a lock they granted and come back at once, a second worker
// wins a majority while the first still holds the lock. latch's restart
// quarantine (a node that may have forgotten locks grants nothing for
// max-lock-ttl) is the remedy. So with --quarantine auto the check finds no
// violation, and with --quarantine never --appendfsync no it finds some:
// proof that the checker can see a violation when there is one.
//
// Exit status: 0 no violation, 1 violations found, 2 harness error.
// The last line of the report is exactly "violations: N".
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

int RunChaos(const Options& o, const std::vector<Fault>& schedule) {
  if (::access(o.server.c_str(), X_OK) != 0) {
    throw HarnessError{"latch-server not found at " + o.server + " (use --server PATH)"};
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "latch-chaos.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw HarnessError{std::string("mkdtemp: ") + std::strerror(errno)};
  }
  const std::string root = tmpl;
  std::printf(
      "latch-chaos: %d nodes, %d workers, %.1f s, seed %llu, quarantine %s, appendfsync "
      "%s, appendonly %s, ttl %lld ms, %zu faults scheduled\n",
      o.nodes, o.workers, static_cast<double>(o.duration.count()) / 1000.0,
      static_cast<unsigned long long>(o.seed), o.quarantine.c_str(), o.appendfsync.c_str(),
      o.appendonly.c_str(), static_cast<long long>(o.ttl.count()), schedule.size());
  std::fflush(stdout);

  Cluster cluster(o, root);
  cluster.StartAll();

  // Time zero of the report and the picture: when the workers start.
  Shared sh;
  sh.o = &o;
  sh.endpoints = cluster.endpoints();
  RunRecord run;
  run.t0 = Clock::now();
  sh.end = run.t0 + o.duration;
  std::vector<std::thread> workers;
  for (int w = 0; w < o.workers; ++w) workers.emplace_back(Worker, std::ref(sh), w);

  auto log = [&](const std::string& line) {
    if (o.verbose) std::printf("[%8.3f s] %s\n", Secs(Clock::now() - run.t0), line.c_str());
  };
  auto wait_for_grant = [&] {
    uint64_t seen = sh.grants.count();
    return sh.grants.WaitPast(seen, Clock::now() + 3 * o.ttl);
  };

  std::string error;
  try {
    auto next = run.t0;
    for (const Fault& f : schedule) {
      next += f.gap;
      SleepUntil(next);
      if (g_interrupted || Clock::now() >= sh.end - o.ttl) break;
      run.faults.push_back(cluster.Inflict(f, wait_for_grant, log));
      next = Clock::now();
    }
  } catch (const HarnessError& e) {
    error = e.message;
    g_interrupted = true;  // stops the workers
  } catch (const std::exception& e) {
    error = e.what();
    g_interrupted = true;
  }
  SleepUntil(sh.end);
  for (std::thread& t : workers) t.join();
  run.t_end = Clock::now();
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
  run.restarts = cluster.restarts();
  run.quarantines = cluster.quarantines();
  run.torn_tails_cut = cluster.torn_tails_cut();

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
    PrintTokenOrder(found, run.t0);
    inversions = found.size();
  }
  std::printf("violations: %zu\n", run.violations.size());
  return run.violations.empty() && inversions == 0 ? kExitOk : kExitViolations;
}

}  // namespace
}  // namespace latch::chaos

int main(int argc, char** argv) {
  using namespace latch::chaos;
  Options o = ParseOptions(argc, argv);
  std::vector<Fault> schedule = MakeSchedule(o);
  if (o.schedule_only) {
    PrintSchedule(schedule);
    return kExitOk;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    return RunChaos(o, schedule);
  } catch (const HarnessError& e) {
    std::printf("harness error: %s\n", e.message.c_str());
    return kExitHarness;
  } catch (const std::exception& e) {
    std::printf("harness error: %s\n", e.what());
    return kExitHarness;
  }
}
