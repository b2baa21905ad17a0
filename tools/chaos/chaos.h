// latch-chaos's shared vocabulary: the options of a run (parsed in
// options.cc), the one clock every timestamp is taken on, the exit statuses,
// and how a run ends early.
//
// The whole harness is one process (servers aside), so a single monotonic
// clock orders every event: grants and releases in the workers, faults in
// the main thread, restarts in the cluster. That is what lets the checker
// compare intervals from different threads without any clock skew, and the
// clock is the RedLock library's own (CLOCK_BOOTTIME), so a hold's validity
// and the harness's timestamps are directly comparable.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/redlock/connect_options.h"
#include "tools/redlock/redlock.h"

namespace latch::chaos {

using Clock = latch::LockClock;
using latch::Millis;

// Exit statuses: tests and scripts tell "unsafe" from "broken harness".
constexpr int kExitOk = 0;          // no violation, no acknowledged write lost
constexpr int kExitViolations = 1;  // mutual exclusion broken, or an acknowledged write lost
constexpr int kExitHarness = 2;     // bad options, a server that would not start, SIGINT

// The one key every worker competes for.
constexpr const char* kKey = "latch-chaos:lock";

// The kinds of fault the schedule draws from (schedule.h says what each
// does). The first five are the original model; the rest widen it.
enum class FaultKind {
  kCrash,
  kPause,
  kPowerLoss,
  kTornWrite,
  kAmnesia,
  kCleanRestart,
  kRestartInQuarantine,
  kDiskError,
  kSlowDisk,
  kWallStep,
  kClockChange,
  kLogLost,  // not in the default set: it loses acknowledged writes by design
  kSlowFsync,
};

struct Options {
  int nodes = 5;
  int workers = 8;
  Millis duration{30'000};
  uint64_t seed = 1;
  std::string quarantine = "auto";
  std::string appendfsync = "everysec";
  std::string appendonly = "yes";
  int64_t quarantine_ms = -1;  // the servers' --quarantine-ms; -1: not given
  Millis ttl{1000};            // the lock's TTL, and the servers' max-lock-ttl
  // Which faults the schedule draws (--faults).
  std::vector<FaultKind> faults;
  // Each restart of a node draws its next appendfsync / quarantine from these
  // lists (--vary-appendfsync, --vary-quarantine); empty: no change, every
  // run of every node uses --appendfsync and --quarantine.
  std::vector<std::string> vary_appendfsync;
  std::vector<std::string> vary_quarantine;
  // Acknowledged-write tracking: SETs per second per node (0: only those of
  // the rewrite side-job), and the rewrite side-job (BGREWRITEAOF, also
  // inside MULTI).
  int ack_rate = 100;
  bool rewrites = true;
  std::string timeline;
  std::string page;  // the shared HTML page (tools/history/page.h)
  std::string server;
  // latch-check-aof, to repair a node whose log will not load (empty: such
  // a node stays down).
  std::string check_aof;
  // latch-chaos-slow-fsync.so, preloaded into the servers for the slow-fsync
  // fault (empty: that fault is skipped).
  std::string slow_fsync_lib;
  bool keep = false;
  bool verbose = false;
  bool schedule_only = false;
  bool fence = false;  // acquire with fencing tokens and check their order (fencing.h)
  // --user/--pass/--tls…: how every connection to the nodes logs in and
  // whether it is TLS. With --tls the run makes its certificates (main.cc)
  // and `tls` is the client context built from them.
  latch::ConnectOptions connect;
  std::shared_ptr<const latch::TlsClient> tls;
  latch::GeneratedCerts certs;
  // A NodeSet to `eps` that logs in and speaks TLS as the options say.
  std::unique_ptr<latch::NodeSet> Connect(std::vector<latch::Endpoint> eps) const {
    return std::make_unique<latch::NodeSet>(std::move(eps), connect.password, tls, connect.user);
  }
};

// Parses the command line (options.cc, with tools/cli/options.h): --help
// prints the manual and exits 0; a bad option prints a message and the
// synopsis and exits 64, as in every tool.
Options ParseOptions(int argc, char** argv);

// Something in the harness failed (not the system under test): exit 2.
struct HarnessError {
  std::string message;
};

// Set by SIGINT/SIGTERM (and by a harness error, to stop the workers): every
// loop checks it, so the run ends early but cleanly, servers included.
inline std::atomic<bool> g_interrupted{false};

inline double Secs(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// printf into a std::string (the compiler checks the format): the report,
// the verbose log and the SVG are all built this way.
__attribute__((format(printf, 2, 0))) inline void VAppendf(std::string& out, const char* fmt,
                                                           va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  if (n > 0) {
    size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data() + at, static_cast<size_t>(n) + 1, fmt, again);
    out.resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

__attribute__((format(printf, 2, 3))) inline void Appendf(std::string& out, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VAppendf(out, fmt, ap);
  va_end(ap);
}

__attribute__((format(printf, 1, 2))) inline std::string Format(const char* fmt, ...) {
  std::string out;
  va_list ap;
  va_start(ap, fmt);
  VAppendf(out, fmt, ap);
  va_end(ap);
  return out;
}

}  // namespace latch::chaos
