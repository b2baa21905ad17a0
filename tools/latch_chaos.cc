// latch-chaos: does RedLock over latch keep mutual exclusion under faults?
//
//   latch-chaos --nodes 5 --workers 8 --duration 30s --seed 1 --quarantine auto|never
//               --appendfsync always|everysec|no [--appendonly yes|no] [--timeline out.svg]
//
// It starts N latch-server processes on free loopback ports (each with its
// own data directory under a temporary directory), then M worker threads,
// each a separate RedLock client, that loop: acquire one shared key, note the
// interval during which they may act as its holder, hold it for a random
// time (sometimes past its validity, as a GC pause would), release it.
// Meanwhile the main thread injects faults from a schedule that depends only
// on the seed: kill -9 and restart, SIGSTOP/SIGCONT pauses, DEBUG POWERLOSS
// (a machine crash: the node loses what its log had not fsynced) and restart,
// the same with a torn last record in the log, and "amnesia": a power loss of
// a majority of the nodes right after a worker acquired the lock.
//
// Amnesia is the fault RedLock cannot survive by itself: if a majority of
// nodes forget a lock they granted and come back at once, a second worker
// wins a majority while the first still holds the lock. latch's restart
// quarantine (a node that may have forgotten locks grants nothing for
// max-lock-ttl) is the remedy. So with --quarantine auto the check finds no
// violation, and with --quarantine never --appendfsync no it finds some:
// proof that the checker can see a violation when there is one.
//
// The check: a worker may act as the holder from the moment acquire returned
// until its validity ends or it starts releasing, whichever is first. No two
// of these intervals, over all workers, may overlap. All times are on the
// harness's monotonic clock, shared by the workers (one process).
//
// Exit status: 0 no violation, 1 violations found, 2 harness error.
// The last line of the report is exactly "violations: N".
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "protocol/request_writer.h"
#include "protocol/text.h"
#include "tools/redlock/cli_args.h"
#include "tools/redlock/node_set.h"
#include "tools/redlock/redlock.h"

namespace {

using Clock = latch::LockClock;  // the same clock as the library (CLOCK_BOOTTIME)
using latch::Millis;
using std::chrono::duration_cast;

constexpr int kExitOk = 0;
constexpr int kExitViolations = 1;
constexpr int kExitHarness = 2;
constexpr const char* kKey = "latch-chaos:lock";

// Set by SIGINT/SIGTERM: stop early, clean up, exit 2.
std::atomic<bool> g_interrupted{false};

struct HarnessError {
  std::string message;
};

// ---------------------------------------------------------------- options

struct Options {
  int nodes = 5;
  int workers = 8;
  Millis duration{30'000};
  uint64_t seed = 1;
  std::string quarantine = "auto";
  std::string appendfsync = "everysec";
  std::string appendonly = "yes";
  Millis ttl{1000};
  std::string timeline;
  std::string server;
  bool keep = false;
  bool verbose = false;
  bool schedule_only = false;
};

const char kUsage[] =
    "Usage: latch-chaos --nodes N --workers M --duration D --seed S\n"
    "                   --quarantine auto|never|always --appendfsync always|everysec|no\n"
    "                   [--appendonly yes|no] [--ttl D] [--timeline out.svg] [--server PATH]\n"
    "                   [--keep] [--verbose] [--schedule-only]\n";

const char kHelp[] =
    "\n"
    "Starts N latch-server processes on loopback, runs M RedLock clients that take\n"
    "turns on one key while faults are injected from a seeded schedule, and checks\n"
    "that no two clients ever held the lock at the same time.\n"
    "\n"
    "  --nodes N            latch-server processes, 1-9 (default 5)\n"
    "  --workers M          client threads, 1-64 (default 8)\n"
    "  --duration D         length of the run, up to 1h (default 30s)\n"
    "  --seed S             the fault schedule depends only on S (and N, D, ttl)\n"
    "  --quarantine Q       the servers' --quarantine (default auto)\n"
    "  --appendfsync P      the servers' --appendfsync (default everysec)\n"
    "  --appendonly yes|no  the servers' --appendonly (default yes)\n"
    "  --ttl D              the lock's TTL, also the servers' max-lock-ttl, 100ms-10s\n"
    "                       (default 1s)\n"
    "  --timeline FILE      write an SVG picture of the run (open it in a browser)\n"
    "  --server PATH        latch-server binary (default: next to this program's\n"
    "                       directory, or $LATCH_BUILD_DIR/latch-server)\n"
    "  --keep               keep the temporary directory (server logs, data)\n"
    "  --verbose            print faults and restarts as they happen\n"
    "  --schedule-only      print the fault schedule and exit\n"
    "\n"
    "Exit status: 0 no violation, 1 violations found, 2 harness error.\n"
    "The report's last line is \"violations: N\".\n";

[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr, "latch-chaos: %s\n%s", message.c_str(), kUsage);
  std::exit(kExitHarness);
}

int64_t IntArg(const std::string& name, const std::string& v, int64_t lo, int64_t hi) {
  auto n = latch::ParseInt64(v);
  if (!n || *n < lo || *n > hi) {
    Usage(name + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return *n;
}

std::string ChoiceArg(const std::string& name, const std::string& v,
                      std::initializer_list<const char*> choices) {
  for (const char* c : choices) {
    if (v == c) return v;
  }
  Usage("bad value '" + v + "' for " + name);
}

std::string DefaultServerPath() {
  // Built layout: build/tools/latch-chaos next to build/latch-server.
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto p = self.parent_path().parent_path() / "latch-server";
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  if (const char* b = std::getenv("LATCH_BUILD_DIR")) return std::string(b) + "/latch-server";
  return "latch-server";
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("%s%s", kUsage, kHelp);
      std::exit(0);
    }
    if (a == "--keep") {
      o.keep = true;
      continue;
    }
    if (a == "--verbose" || a == "-v") {
      o.verbose = true;
      continue;
    }
    if (a == "--schedule-only") {
      o.schedule_only = true;
      continue;
    }
    std::string value;
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else {
      if (i + 1 >= argc) Usage("option " + a + " needs a value");
      value = argv[++i];
    }
    auto duration = [&](Millis lo, Millis hi) {
      auto d = latch::ParseDuration(value);
      if (!d || *d < lo || *d > hi) Usage("bad duration '" + value + "' for " + a);
      return *d;
    };
    if (a == "--nodes") {
      o.nodes = static_cast<int>(IntArg(a, value, 1, 9));
    } else if (a == "--workers") {
      o.workers = static_cast<int>(IntArg(a, value, 1, 64));
    } else if (a == "--duration") {
      o.duration = duration(Millis{1000}, Millis{3'600'000});
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(IntArg(a, value, 0, INT64_MAX));
    } else if (a == "--quarantine") {
      o.quarantine = ChoiceArg(a, value, {"auto", "never", "always"});
    } else if (a == "--appendfsync") {
      o.appendfsync = ChoiceArg(a, value, {"always", "everysec", "no"});
    } else if (a == "--appendonly") {
      o.appendonly = ChoiceArg(a, value, {"yes", "no"});
    } else if (a == "--ttl") {
      o.ttl = duration(Millis{100}, Millis{10'000});
    } else if (a == "--timeline") {
      o.timeline = value;
    } else if (a == "--server") {
      o.server = value;
    } else {
      Usage("unknown option " + a);
    }
  }
  if (o.server.empty()) o.server = DefaultServerPath();
  return o;
}

// ---------------------------------------------------------------- the schedule

// Uniform integer in [lo, hi] from the raw engine output: the standard
// distributions may differ between library versions, the engine may not,
// and the schedule must be the same for a seed everywhere.
int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

enum class FaultKind { kCrash, kPause, kPowerLoss, kTornWrite, kAmnesia };

const char* FaultName(FaultKind k) {
  switch (k) {
    case FaultKind::kCrash:
      return "kill -9";
    case FaultKind::kPause:
      return "pause";
    case FaultKind::kPowerLoss:
      return "power loss";
    case FaultKind::kTornWrite:
      return "power loss + torn log tail";
    case FaultKind::kAmnesia:
      return "majority power loss after a grant";
  }
  return "?";
}

struct Fault {
  Millis gap{0};  // quiet time after the previous fault ended
  FaultKind kind = FaultKind::kCrash;
  std::vector<int> nodes;
  Millis length{0};  // pause: how long stopped; others: downtime before restart
};

// Faults run one after another (each ends before the next starts), so the
// schedule is a list of gaps and faults rather than absolute times; how long
// a restart takes does not change what comes next.
std::vector<Fault> MakeSchedule(const Options& o) {
  std::mt19937_64 rng(o.seed);
  const int64_t ttl = o.ttl.count();
  const int majority = o.nodes / 2 + 1;
  std::vector<Fault> out;
  // Estimated time line, only to know when to stop adding faults.
  int64_t t = ttl / 2;
  int since_amnesia = 0;
  while (true) {
    Fault f;
    f.gap = Millis{Uniform(rng, ttl / 4, ttl)};
    int64_t roll = Uniform(rng, 0, 99);
    // At least every third fault is an amnesia: any seed then gives the
    // check something to catch when the nodes run without quarantine.
    if (since_amnesia == 2) roll = 99;
    int count = 1;
    if (roll < 20) {
      f.kind = FaultKind::kCrash;
      f.length = Millis{Uniform(rng, 0, ttl / 2)};
    } else if (roll < 40) {
      f.kind = FaultKind::kPause;
      count = static_cast<int>(Uniform(rng, 1, majority));
      f.length = Millis{Uniform(rng, ttl / 4, 2 * ttl)};
    } else if (roll < 55) {
      f.kind = FaultKind::kPowerLoss;
      f.length = Millis{Uniform(rng, 0, ttl / 10)};
    } else if (roll < 70) {
      f.kind = o.appendonly == "yes" ? FaultKind::kTornWrite : FaultKind::kPowerLoss;
      f.length = Millis{Uniform(rng, 0, ttl / 10)};
    } else {
      // Restart at once: the sooner the majority is back, the sooner a
      // second worker can win it while the first still holds the lock.
      f.kind = FaultKind::kAmnesia;
      count = majority;
    }
    // `count` distinct nodes: a partial Fisher-Yates shuffle.
    std::vector<int> all(o.nodes);
    for (int i = 0; i < o.nodes; ++i) all[i] = i;
    for (int i = 0; i < count; ++i) {
      std::swap(all[i], all[Uniform(rng, i, o.nodes - 1)]);
      f.nodes.push_back(all[i]);
    }
    std::sort(f.nodes.begin(), f.nodes.end());
    since_amnesia = f.kind == FaultKind::kAmnesia ? 0 : since_amnesia + 1;
    // Amnesia waits for a grant (about ttl/2); every restart ~100 ms.
    t += f.gap.count() + f.length.count() + (f.kind == FaultKind::kAmnesia ? ttl / 2 : 0) + 100;
    if (t > o.duration.count() - ttl) break;
    out.push_back(std::move(f));
  }
  return out;
}

std::string NodeList(const std::vector<int>& nodes) {
  std::string s;
  for (int n : nodes) s += (s.empty() ? "" : ",") + std::to_string(n);
  return s;
}

void PrintSchedule(const std::vector<Fault>& schedule) {
  for (size_t i = 0; i < schedule.size(); ++i) {
    const Fault& f = schedule[i];
    std::printf("fault %zu: after %lld ms, %s on node%s %s", i + 1,
                static_cast<long long>(f.gap.count()), FaultName(f.kind),
                f.nodes.size() == 1 ? "" : "s", NodeList(f.nodes).c_str());
    if (f.kind == FaultKind::kPause) {
      std::printf(" for %lld ms", static_cast<long long>(f.length.count()));
    } else if (f.kind != FaultKind::kAmnesia) {
      std::printf(", down %lld ms", static_cast<long long>(f.length.count()));
    }
    std::printf("\n");
  }
}

// ---------------------------------------------------------------- what happened

double Secs(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// One worker's turn as holder.
struct Hold {
  int worker = 0;
  Clock::time_point granted;       // acquire returned
  Clock::time_point validity_end;  // after any successful extend
  Clock::time_point released;      // release started
  Clock::time_point end;           // min(validity_end, released): the claim ends
  size_t grants = 0;
  bool extended = false;
};

// Something that happened to a node, for the report and the picture.
struct NodeEvent {
  enum Kind { kDown, kPaused, kQuarantine, kMarkCrash, kMarkPowerLoss, kMarkTorn } kind;
  int node = 0;
  Clock::time_point start, end;  // marks: start == end
  std::string note;
};

struct Violation {
  const Hold* a;
  const Hold* b;
  Clock::time_point from, to;
};

struct WorkerStats {
  int64_t acquisitions = 0;
  int64_t attempts = 0;
  int64_t contended = 0;
  int64_t quarantine_answers = 0;
  int64_t extends_ok = 0;
  int64_t extends_failed = 0;
  int64_t expired_before_use = 0;
  int64_t past_validity = 0;
};

// ---------------------------------------------------------------- the nodes

class Cluster {
 public:
  Cluster(const Options& o, std::string root) : o_(o), root_(std::move(root)) {}
  ~Cluster() { KillAll(); }

  const std::vector<latch::Endpoint>& endpoints() const { return endpoints_; }
  std::vector<NodeEvent>& events() { return events_; }
  int restarts() const { return restarts_; }
  int quarantines() const { return quarantines_; }
  int torn_tails_cut() const { return torn_cut_; }

  void StartAll() {
    nodes_.resize(o_.nodes);
    for (int i = 0; i < o_.nodes; ++i) {
      Node& n = nodes_[i];
      n.dir = root_ + "/node" + std::to_string(i);
      std::filesystem::create_directories(n.dir);
    }
    // A fresh port per node: bind port 0, read it back, close. The server
    // binds it a moment later; if someone took it meanwhile, try another.
    for (int i = 0; i < o_.nodes; ++i) {
      bool ok = false;
      for (int tries = 0; tries < 5 && !ok; ++tries) {
        nodes_[i].port = FreePort();
        Spawn(i);
        ok = WaitReady(i, Millis{10'000});
      }
      if (!ok) throw HarnessError{"node " + std::to_string(i) + " did not start: " + LogTail(i)};
      endpoints_.push_back(latch::Endpoint{"127.0.0.1", nodes_[i].port});
    }
  }

  // kill -9 (nothing lost when appendonly yes: writes reach the kernel before
  // the reply leaves; everything lost when appendonly no).
  void Crash(int i) {
    Node& n = nodes_[i];
    ::kill(n.pid, SIGKILL);
    Reap(i);
    Mark(NodeEvent::kMarkCrash, i, "kill -9");
    n.down_since = Clock::now();
  }

  // DEBUG POWERLOSS on several nodes at once: each cuts its log to what was
  // fsynced and exits at once, as if its machine had lost power.
  void PowerLoss(const std::vector<int>& which, NodeEvent::Kind mark, const char* note) {
    std::vector<latch::Endpoint> eps;
    for (int i : which) eps.push_back(endpoints_[i]);
    latch::NodeSet admin(eps);
    std::string req;
    latch::resp::AppendRequest(req, {"DEBUG", "POWERLOSS"});
    auto results = admin.Round(req, 1, std::chrono::milliseconds(1000));
    for (size_t k = 0; k < which.size(); ++k) {
      const latch::NodeResult& r = results[k];
      if (r.ok() && r.replies[0].is_error()) {
        throw HarnessError{"DEBUG POWERLOSS refused by node " + std::to_string(which[k]) + ": " +
                           r.replies[0].str};
      }
    }
    auto now = Clock::now();
    for (int i : which) {
      // It should be gone already; a node that did not get the request
      // (or hangs) is killed, which under appendonly yes loses nothing more.
      if (!WaitExit(i, Millis{2000})) {
        ::kill(nodes_[i].pid, SIGKILL);
        Reap(i);
      }
      Mark(mark, i, note);
      nodes_[i].down_since = now;
    }
  }

  // A machine crash in the middle of writing a record: the log ends with
  // part of one. The loader must cut it off (aof-load-truncated yes).
  void TearLogTail(int i) {
    std::string path = nodes_[i].dir + "/latch.aof";
    std::ofstream f(path, std::ios::app | std::ios::binary);
    f << "*5\r\n$3\r\nSET\r\n$16\r\nlatch-chaos:lock\r\n$32\r\n0123456789";
    nodes_[i].torn = true;
  }

  void Pause(const std::vector<int>& which) {
    auto now = Clock::now();
    for (int i : which) {
      ::kill(nodes_[i].pid, SIGSTOP);
      nodes_[i].paused_since = now;
    }
  }

  void Resume(const std::vector<int>& which) {
    auto now = Clock::now();
    for (int i : which) {
      ::kill(nodes_[i].pid, SIGCONT);
      events_.push_back(NodeEvent{NodeEvent::kPaused, i, nodes_[i].paused_since, now, "SIGSTOP"});
    }
  }

  // Starts the given (stopped) nodes again on their ports, all at once, and
  // waits until each answers PING; notes any restart quarantine.
  void Restart(const std::vector<int>& which) {
    for (int i : which) Spawn(i);
    for (int i : which) {
      bool ok = WaitReady(i, Millis{5000});
      for (int tries = 0; !ok && tries < 3; ++tries) {
        // The port may be in use for a moment; try again.
        std::this_thread::sleep_for(Millis{200});
        Spawn(i);
        ok = WaitReady(i, Millis{5000});
      }
      if (!ok) {
        throw HarnessError{"node " + std::to_string(i) + " did not restart: " + LogTail(i)};
      }
      ++restarts_;
      Node& n = nodes_[i];
      auto ready = Clock::now();
      events_.push_back(NodeEvent{NodeEvent::kDown, i, n.down_since, ready, "down"});
      auto info = Info(i);
      int64_t q = 0;
      if (auto v = Field(info, "quarantine_remaining_ms")) q = latch::ParseInt64(*v).value_or(0);
      if (q > 0) {
        ++quarantines_;
        events_.push_back(NodeEvent{NodeEvent::kQuarantine, i, ready, ready + Millis{q},
                                    "quarantine " + std::to_string(q) + " ms"});
      }
      if (n.torn) {
        n.torn = false;
        if (Field(info, "latch_aof_truncated_at_load")) ++torn_cut_;
      }
    }
  }

  void KillAll() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].pid > 0) {
        ::kill(nodes_[i].pid, SIGKILL);  // works on stopped processes too
        Reap(static_cast<int>(i));
      }
    }
  }

  // A clean shutdown at the end, so the logs are tidy for --keep.
  void StopAll() {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].pid <= 0) continue;
      ::kill(nodes_[i].pid, SIGCONT);
      ::kill(nodes_[i].pid, SIGTERM);
      if (!WaitExit(static_cast<int>(i), Millis{3000})) {
        ::kill(nodes_[i].pid, SIGKILL);
        Reap(static_cast<int>(i));
      }
    }
  }

 private:
  struct Node {
    std::string dir;
    uint16_t port = 0;
    pid_t pid = -1;
    Clock::time_point down_since, paused_since;
    bool torn = false;
  };

  static uint16_t FreePort() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    uint16_t port = 0;
    if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
    if (fd >= 0) ::close(fd);
    if (port == 0) throw HarnessError{"cannot find a free port"};
    return port;
  }

  void Spawn(int i) {
    Node& n = nodes_[i];
    std::vector<std::string> args = {o_.server,
                                     "--port",
                                     std::to_string(n.port),
                                     "--bind",
                                     "127.0.0.1",
                                     "--dir",
                                     n.dir,
                                     "--appendonly",
                                     o_.appendonly,
                                     "--appendfsync",
                                     o_.appendfsync,
                                     "--quarantine",
                                     o_.quarantine,
                                     "--max-lock-ttl",
                                     std::to_string(o_.ttl.count()),
                                     "--enable-debug-command",
                                     "yes"};
    std::vector<char*> argv;
    for (std::string& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::string log = n.dir + "/server.log";
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) throw HarnessError{std::string("fork: ") + std::strerror(errno)};
    if (pid == 0) {
      // Only async-signal-safe calls here: other threads exist.
      // If the harness dies, so do its servers.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      int devnull = ::open("/dev/null", O_RDONLY);
      if (devnull >= 0) ::dup2(devnull, 0);
      // The harness ignores SIGPIPE; give the server the default back.
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      ::sigaction(SIGPIPE, &dfl, nullptr);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    n.pid = pid;
  }

  bool WaitExit(int i, Millis limit) {
    auto until = Clock::now() + limit;
    while (Clock::now() < until) {
      int status;
      if (::waitpid(nodes_[i].pid, &status, WNOHANG) == nodes_[i].pid) {
        nodes_[i].pid = -1;
        return true;
      }
      std::this_thread::sleep_for(Millis{1});
    }
    return false;
  }

  void Reap(int i) {
    int status;
    ::waitpid(nodes_[i].pid, &status, 0);
    nodes_[i].pid = -1;
  }

  bool WaitReady(int i, Millis limit) {
    Node& n = nodes_[i];
    latch::NodeSet probe({latch::Endpoint{"127.0.0.1", n.port}});
    std::string ping;
    latch::resp::AppendRequest(ping, {"PING"});
    auto until = Clock::now() + limit;
    while (Clock::now() < until) {
      int status;
      if (::waitpid(n.pid, &status, WNOHANG) == n.pid) {  // exited: port taken, bad args…
        n.pid = -1;
        return false;
      }
      auto r = probe.Round(ping, 1, std::chrono::milliseconds(200));
      if (r[0].ok() && r[0].replies[0].str == "PONG") return true;
      std::this_thread::sleep_for(Millis{2});
    }
    ::kill(n.pid, SIGKILL);
    Reap(i);
    return false;
  }

  std::string Info(int i) {
    latch::NodeSet probe({endpoints_[i]});
    std::string req;
    latch::resp::AppendRequest(req, {"INFO", "all"});
    auto r = probe.Round(req, 1, std::chrono::milliseconds(500));
    return r[0].ok() ? r[0].replies[0].str : "";
  }

  static std::optional<std::string> Field(const std::string& info, const std::string& name) {
    std::istringstream in(info);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.rfind(name + ":", 0) == 0) return line.substr(name.size() + 1);
    }
    return std::nullopt;
  }

  std::string LogTail(int i) {
    std::ifstream f(nodes_[i].dir + "/server.log");
    std::stringstream ss;
    ss << f.rdbuf();
    std::string s = ss.str();
    return s.size() > 1500 ? s.substr(s.size() - 1500) : s;
  }

  void Mark(NodeEvent::Kind k, int i, const std::string& note) {
    auto now = Clock::now();
    events_.push_back(NodeEvent{k, i, now, now, note});
  }

  const Options& o_;
  std::string root_;
  std::vector<Node> nodes_;
  std::vector<latch::Endpoint> endpoints_;
  std::vector<NodeEvent> events_;
  int restarts_ = 0;
  int quarantines_ = 0;
  int torn_cut_ = 0;
};

// ---------------------------------------------------------------- workers

// Grants, as they happen: an amnesia fault waits for the next one.
class GrantSignal {
 public:
  void Notify() {
    {
      std::lock_guard<std::mutex> g(mu_);
      ++count_;
    }
    cv_.notify_all();
  }
  uint64_t count() {
    std::lock_guard<std::mutex> g(mu_);
    return count_;
  }
  // Waits until the count passes `seen`, or until `until`.
  bool WaitPast(uint64_t seen, Clock::time_point until) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_until(lk, until, [&] { return count_ > seen || g_interrupted; }) &&
           count_ > seen;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t count_ = 0;
};

struct Shared {
  const Options* o;
  std::vector<latch::Endpoint> endpoints;
  Clock::time_point end;
  GrantSignal grants;
  std::mutex mu;  // guards holds and stats
  std::vector<Hold> holds;
  WorkerStats stats;
};

void Worker(Shared& sh, int id) {
  const Options& o = *sh.o;
  const Millis ttl = o.ttl;
  // Hold times come from the seed too (their interleaving does not).
  std::mt19937_64 rng(o.seed * 1'000'003 + static_cast<uint64_t>(id));
  WorkerStats st;
  latch::RedLockOptions ro;
  // Short retry pauses: several workers contend all the time.
  ro.retry_delay_min = Millis{10};
  ro.retry_delay_max = Millis{60};
  ro.observer = [&st](const latch::RoundReport& r) {
    for (const latch::NodeOutcome& n : r.nodes) {
      st.quarantine_answers += n.answer == latch::NodeAnswer::kQuarantined;
    }
  };
  latch::RedLock rl(sh.endpoints, ro);
  auto sleep = [](int64_t ms) { std::this_thread::sleep_for(Millis{ms}); };
  const int64_t t = ttl.count();

  while (!g_interrupted) {
    auto now = Clock::now();
    if (now >= sh.end) break;
    auto wait = std::min(duration_cast<Millis>(sh.end - now), 2 * ttl);
    latch::AcquireResult res = rl.acquire(kKey, ttl, wait);
    st.attempts += res.attempts;
    st.contended += res.contended;
    if (!res) continue;
    latch::Lock& lock = *res.lock;
    Hold h;
    h.worker = id;
    h.granted = Clock::now();
    h.grants = lock.grants();
    sh.grants.Notify();

    int64_t roll = Uniform(rng, 0, 99);
    if (roll < 15) {
      sleep(Uniform(rng, 0, t / 4));  // a quick critical section
    } else if (roll < 65) {
      sleep(Uniform(rng, t / 4, t * 9 / 10));
    } else if (roll < 85) {
      // Work that needs more time: extend once, midway.
      sleep(Uniform(rng, t / 4, t / 2));
      if (lock.extend(ttl) == latch::Lock::ExtendResult::kExtended) {
        ++st.extends_ok;
        h.extended = true;
      } else {
        ++st.extends_failed;
      }
      sleep(Uniform(rng, t / 4, t * 9 / 10));
    } else {
      // A GC pause: the holder wakes up after its validity ended. Its
      // claim ends with the validity; the check must not count the rest.
      sleep(Uniform(rng, t * 11 / 10, t * 16 / 10));
    }
    h.validity_end = lock.validity_end();
    h.released = Clock::now();
    lock.release();
    h.end = std::min(h.validity_end, h.released);
    ++st.acquisitions;
    // Think time before the next turn, so that the releasing worker does not
    // win again and again while the others sleep between their retries.
    auto think = Millis{Uniform(rng, 0, t / 4)};
    if (h.released > h.validity_end) ++st.past_validity;
    {
      std::lock_guard<std::mutex> g(sh.mu);
      if (h.end > h.granted) {
        sh.holds.push_back(h);
      } else {
        ++st.expired_before_use;  // descheduled past its validity before it could act
      }
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(think, sh.end - Clock::now()));
  }
  std::lock_guard<std::mutex> g(sh.mu);
  sh.stats.acquisitions += st.acquisitions;
  sh.stats.attempts += st.attempts;
  sh.stats.contended += st.contended;
  sh.stats.quarantine_answers += st.quarantine_answers;
  sh.stats.extends_ok += st.extends_ok;
  sh.stats.extends_failed += st.extends_failed;
  sh.stats.expired_before_use += st.expired_before_use;
  sh.stats.past_validity += st.past_validity;
}

// ---------------------------------------------------------------- the check

std::vector<Violation> FindOverlaps(std::vector<Hold>& holds) {
  std::sort(holds.begin(), holds.end(),
            [](const Hold& a, const Hold& b) { return a.granted < b.granted; });
  std::vector<Violation> out;
  for (size_t i = 0; i < holds.size(); ++i) {
    // Sorted by start: every later hold that starts before this one ends
    // overlaps it.
    for (size_t j = i + 1; j < holds.size() && holds[j].granted < holds[i].end; ++j) {
      out.push_back(
          Violation{&holds[i], &holds[j], holds[j].granted, std::min(holds[i].end, holds[j].end)});
    }
  }
  return out;
}

// ---------------------------------------------------------------- the picture

// printf into a std::string (the compiler checks the format).
__attribute__((format(printf, 2, 0))) void VAppendf(std::string& out, const char* fmt, va_list ap) {
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

__attribute__((format(printf, 2, 3))) void Appendf(std::string& out, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  VAppendf(out, fmt, ap);
  va_end(ap);
}

__attribute__((format(printf, 1, 2))) std::string Format(const char* fmt, ...) {
  std::string out;
  va_list ap;
  va_start(ap, fmt);
  VAppendf(out, fmt, ap);
  va_end(ap);
  return out;
}

struct FaultRecord {
  FaultKind kind;
  std::vector<int> nodes;
  Clock::time_point at;
};

void WriteTimeline(const std::string& path, const Options& o, Clock::time_point t0,
                   Clock::time_point t_end, const std::vector<Hold>& holds,
                   const std::vector<NodeEvent>& events, const std::vector<FaultRecord>& faults,
                   const std::vector<Violation>& violations) {
  const double total = std::max(Secs(t_end - t0), 1.0);
  const double pxs = std::clamp(2400.0 / total, 40.0, 200.0);  // pixels per second
  const double left = 120, lane = 20, top = 70;
  const int lanes = o.workers + o.nodes;
  const double width = left + total * pxs + 30;
  const double height = top + lanes * lane + 60;
  auto X = [&](Clock::time_point t) { return left + Secs(t - t0) * pxs; };
  auto worker_y = [&](int w) { return top + w * lane; };
  auto node_y = [&](int n) { return top + (o.workers + n) * lane; };
  std::string s;
  Appendf(s,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
          "font-family=\"sans-serif\" font-size=\"11\">\n",
          width, height);
  Appendf(s, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
  Appendf(s,
          "<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">latch-chaos: %d nodes, %d "
          "workers, %.1f s, seed %llu, quarantine %s, appendfsync %s, appendonly %s, ttl %lld ms: "
          "%zu violation%s</text>\n",
          o.nodes, o.workers, total, static_cast<unsigned long long>(o.seed), o.quarantine.c_str(),
          o.appendfsync.c_str(), o.appendonly.c_str(), static_cast<long long>(o.ttl.count()),
          violations.size(), violations.size() == 1 ? "" : "s");
  // Legend.
  double lx = 8;
  auto legend = [&](const char* color, const char* label) {
    Appendf(s,
            "<rect x=\"%.0f\" y=\"30\" width=\"14\" height=\"10\" fill=\"%s\"/>"
            "<text x=\"%.0f\" y=\"39\">%s</text>\n",
            lx, color, lx + 18, label);
    lx += 26 + 6.2 * static_cast<double>(std::strlen(label));
  };
  legend("#4a7fc1", "lock held (until validity end or release)");
  legend("#c8c8c8", "held past validity (GC pause)");
  legend("#e53935", "violation");
  legend("#444", "node down");
  legend("#9e9e9e", "node paused (SIGSTOP)");
  legend("#f5a623", "restart quarantine");
  Appendf(s,
          "<text x=\"%.0f\" y=\"39\">marks: X kill -9, P power loss, T torn log tail; dashed red "
          "line: majority power loss</text>\n",
          lx);
  // Lanes and the time axis.
  for (int w = 0; w < o.workers; ++w) {
    Appendf(s,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"%s\"/>"
            "<text x=\"8\" y=\"%.0f\">worker %d</text>\n",
            left, worker_y(w), total * pxs, lane, w % 2 ? "#f7f7f7" : "#efefef", worker_y(w) + 14,
            w);
  }
  for (int n = 0; n < o.nodes; ++n) {
    Appendf(s,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"%s\"/>"
            "<text x=\"8\" y=\"%.0f\">node %d</text>\n",
            left, node_y(n), total * pxs, lane, n % 2 ? "#f2f7ee" : "#e8f0e0", node_y(n) + 14, n);
  }
  const double axis_y = top + lanes * lane;
  int step = total <= 40 ? 1 : total <= 200 ? 5 : total <= 600 ? 20 : 60;
  for (int sec = 0; sec <= static_cast<int>(total); sec += step) {
    double x = left + sec * pxs;
    Appendf(s,
            "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
            "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d s</text>\n",
            x, top, x, axis_y + 4, x, axis_y + 16, sec);
  }
  // Holds.
  for (const Hold& h : holds) {
    double y = worker_y(h.worker) + 3;
    Appendf(
        s,
        "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"#4a7fc1\" "
        "stroke=\"white\" stroke-width=\"0.6\"><title>worker %d: from %.3f s to %.3f s (validity "
        "end %.3f s, release %.3f s), %zu "
        "nodes%s</title></rect>\n",
        X(h.granted), y, std::max(X(h.end) - X(h.granted), 0.5), lane - 6, h.worker,
        Secs(h.granted - t0), Secs(h.end - t0), Secs(h.validity_end - t0), Secs(h.released - t0),
        h.grants, h.extended ? ", extended" : "");
    if (h.released > h.validity_end) {
      Appendf(s,
              "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"#c8c8c8\">"
              "<title>worker %d held on past its validity until %.3f s</title></rect>\n",
              X(h.validity_end), y, std::max(X(h.released) - X(h.validity_end), 0.5), lane - 6,
              h.worker, Secs(h.released - t0));
    }
  }
  // Node events.
  for (const NodeEvent& e : events) {
    double y = node_y(e.node) + 3;
    const char* color = nullptr;
    const char* mark = nullptr;
    switch (e.kind) {
      case NodeEvent::kDown:
        color = "#444";
        break;
      case NodeEvent::kPaused:
        color = "#9e9e9e";
        break;
      case NodeEvent::kQuarantine:
        color = "#f5a623";
        break;
      case NodeEvent::kMarkCrash:
        mark = "X";
        break;
      case NodeEvent::kMarkPowerLoss:
        mark = "P";
        break;
      case NodeEvent::kMarkTorn:
        mark = "T";
        break;
    }
    if (color) {
      Appendf(s,
              "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\">"
              "<title>node %d: %s, %.3f s to %.3f s</title></rect>\n",
              X(e.start), y, std::max(X(e.end) - X(e.start), 1.0), lane - 6, color, e.node,
              e.note.c_str(), Secs(e.start - t0), Secs(e.end - t0));
    } else {
      Appendf(s,
              "<text x=\"%.2f\" y=\"%.0f\" fill=\"#b00\" font-weight=\"bold\" font-size=\"13\" "
              "text-anchor=\"end\">%s<title>node %d: %s at %.3f s</title></text>\n",
              X(e.start) - 1, y + 12, mark, e.node, e.note.c_str(), Secs(e.start - t0));
    }
  }
  for (const FaultRecord& f : faults) {
    if (f.kind != FaultKind::kAmnesia) continue;
    Appendf(s,
            "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#e53935\" "
            "stroke-dasharray=\"4,3\"><title>power loss of nodes %s right after a grant, at %.3f "
            "s</title></line>\n",
            X(f.at), top, X(f.at), axis_y, NodeList(f.nodes).c_str(), Secs(f.at - t0));
  }
  // Violations: red over both holds, and a band across the picture.
  int k = 0;
  for (const Violation& v : violations) {
    ++k;
    Appendf(s,
            "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"#e53935\" "
            "opacity=\"0.12\"/>\n",
            X(v.from), top, std::max(X(v.to) - X(v.from), 1.0), lanes * lane);
    for (const Hold* h : {v.a, v.b}) {
      Appendf(s,
              "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"#e53935\">"
              "<title>violation %d: workers %d and %d both held the lock from %.3f s to %.3f "
              "s</title></rect>\n",
              X(v.from), worker_y(h->worker) + 3, std::max(X(v.to) - X(v.from), 1.0), lane - 6, k,
              v.a->worker, v.b->worker, Secs(v.from - t0), Secs(v.to - t0));
    }
    // Labels on three staggered rows, so that close violations stay legible.
    Appendf(s, "<text x=\"%.2f\" y=\"%.0f\" fill=\"#e53935\" font-weight=\"bold\">V%d</text>\n",
            X(v.from), top - 2 - 9 * ((k - 1) % 3), k);
  }
  s += "</svg>\n";
  std::ofstream f(path, std::ios::trunc | std::ios::binary);
  f << s;
  if (!f) throw HarnessError{"cannot write " + path};
}

// ---------------------------------------------------------------- the run

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
  const auto t0 = Clock::now();
  sh.end = t0 + o.duration;
  std::vector<std::thread> workers;
  for (int w = 0; w < o.workers; ++w) workers.emplace_back(Worker, std::ref(sh), w);

  auto log = [&](const std::string& line) {
    if (o.verbose) std::printf("[%8.3f s] %s\n", Secs(Clock::now() - t0), line.c_str());
  };

  std::vector<FaultRecord> done;
  std::map<FaultKind, int> by_kind;
  std::string error;
  try {
    auto next = t0;
    for (const Fault& f : schedule) {
      next += f.gap;
      SleepUntil(next);
      if (g_interrupted || Clock::now() >= sh.end - o.ttl) break;
      FaultRecord rec{f.kind, f.nodes, Clock::now()};
      switch (f.kind) {
        case FaultKind::kCrash:
          log(Format("kill -9 node %d, down %lld ms", f.nodes[0],
                     static_cast<long long>(f.length.count())));
          cluster.Crash(f.nodes[0]);
          std::this_thread::sleep_for(f.length);
          cluster.Restart(f.nodes);
          break;
        case FaultKind::kPause:
          log(Format("SIGSTOP nodes %s for %lld ms", NodeList(f.nodes).c_str(),
                     static_cast<long long>(f.length.count())));
          cluster.Pause(f.nodes);
          SleepUntil(Clock::now() + f.length);
          cluster.Resume(f.nodes);
          break;
        case FaultKind::kPowerLoss:
        case FaultKind::kTornWrite:
          log(Format("%s on node %d, down %lld ms", FaultName(f.kind), f.nodes[0],
                     static_cast<long long>(f.length.count())));
          cluster.PowerLoss(
              f.nodes,
              f.kind == FaultKind::kTornWrite ? NodeEvent::kMarkTorn : NodeEvent::kMarkPowerLoss,
              FaultName(f.kind));
          if (f.kind == FaultKind::kTornWrite) cluster.TearLogTail(f.nodes[0]);
          std::this_thread::sleep_for(f.length);
          cluster.Restart(f.nodes);
          break;
        case FaultKind::kAmnesia: {
          // Strike right after a grant: the new holder's lock is then
          // the one the majority forgets.
          uint64_t seen = sh.grants.count();
          bool granted = sh.grants.WaitPast(seen, Clock::now() + 3 * o.ttl);
          rec.at = Clock::now();
          log(Format("power loss of nodes %s %s", NodeList(f.nodes).c_str(),
                     granted ? "right after a grant" : "(no grant came)"));
          cluster.PowerLoss(f.nodes, NodeEvent::kMarkPowerLoss, "majority power loss");
          cluster.Restart(f.nodes);
          break;
        }
      }
      next = Clock::now();
      done.push_back(rec);
      ++by_kind[f.kind];
    }
  } catch (const HarnessError& e) {
    error = e.message;
    g_interrupted = true;  // stops the workers
  }
  SleepUntil(sh.end);
  for (std::thread& t : workers) t.join();
  const auto t_end = Clock::now();
  cluster.StopAll();

  if (!error.empty() || g_interrupted) {
    std::printf("harness error: %s (data kept in %s)\n",
                error.empty() ? "interrupted" : error.c_str(), root.c_str());
    return kExitHarness;
  }

  std::vector<Hold> holds = std::move(sh.holds);
  std::vector<Violation> violations = FindOverlaps(holds);
  const WorkerStats& st = sh.stats;

  // The report.
  std::printf(
      "acquisitions: %lld (by %d workers; %lld held on past validity, %lld expired "
      "before use)\n",
      static_cast<long long>(st.acquisitions), o.workers, static_cast<long long>(st.past_validity),
      static_cast<long long>(st.expired_before_use));
  std::printf("attempts: %lld, contended attempts: %lld (a node said the key was taken)\n",
              static_cast<long long>(st.attempts), static_cast<long long>(st.contended));
  std::printf("extends: %lld succeeded, %lld failed\n", static_cast<long long>(st.extends_ok),
              static_cast<long long>(st.extends_failed));
  std::printf("quarantine refusals seen by clients: %lld\n",
              static_cast<long long>(st.quarantine_answers));
  std::string kinds;
  for (const auto& [kind, count] : by_kind) {
    kinds += (kinds.empty() ? "" : ", ") + std::to_string(count) + " " + FaultName(kind);
  }
  std::printf("faults injected: %zu (%s)\n", done.size(), kinds.empty() ? "none" : kinds.c_str());
  std::printf("node restarts: %d, restart quarantines: %d, torn log tails cut at load: %d\n",
              cluster.restarts(), cluster.quarantines(), cluster.torn_tails_cut());
  int k = 0;
  for (const Violation& v : violations) {
    ++k;
    // The last fault before the overlap began: usually the cause.
    const FaultRecord* cause = nullptr;
    for (const FaultRecord& f : done) {
      if (f.at <= v.from) cause = &f;
    }
    std::printf(
        "violation %d: worker %d held the lock %.3f-%.3f s, worker %d held it "
        "%.3f-%.3f s: both from %.3f s to %.3f s (%.0f ms)",
        k, v.a->worker, Secs(v.a->granted - t0), Secs(v.a->end - t0), v.b->worker,
        Secs(v.b->granted - t0), Secs(v.b->end - t0), Secs(v.from - t0), Secs(v.to - t0),
        Secs(v.to - v.from) * 1000);
    if (cause) {
      std::printf("; last fault: %s on node%s %s at %.3f s", FaultName(cause->kind),
                  cause->nodes.size() == 1 ? "" : "s", NodeList(cause->nodes).c_str(),
                  Secs(cause->at - t0));
    }
    std::printf("\n");
  }
  if (!o.timeline.empty()) {
    WriteTimeline(o.timeline, o, t0, t_end, holds, cluster.events(), done, violations);
    std::printf("timeline: %s\n", o.timeline.c_str());
  }
  if (o.keep) {
    std::printf("data and server logs kept in %s\n", root.c_str());
  } else {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  std::printf("violations: %zu\n", violations.size());
  return violations.empty() ? kExitOk : kExitViolations;
}

}  // namespace

int main(int argc, char** argv) {
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
