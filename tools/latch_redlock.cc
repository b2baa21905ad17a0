// latch-redlock: flock(1) for a lock held on N latch nodes with RedLock.
//
//   latch-redlock --nodes H:P,… --key NAME --ttl 30s [--wait 10s] -- COMMAND [ARGS…]
//   latch-redlock acquire|release|status --nodes H:P,… --key NAME …
//
// Run mode acquires the lock, runs the command while a watchdog renews the
// lock every ttl/3, and releases it when the command exits. If the lock is
// lost (renewal cannot reach a quorum before the validity ends), the command
// is stopped at once: SIGTERM to its process group, SIGKILL after a grace
// period, and latch-redlock exits with its own code so a script can tell.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "tools/redlock/cli_args.h"
#include "tools/redlock/redlock.h"

namespace {

using latch::FormatDuration;
using latch::LockClock;
using latch::Millis;

// Exit statuses (documented in --help and README).
constexpr int kExitNotHeld = 1;          // status: no quorum holds the key
constexpr int kExitUsage = 64;           // EX_USAGE
constexpr int kExitUnreachable = 69;     // EX_UNAVAILABLE
constexpr int kExitInternal = 70;        // EX_SOFTWARE: fork failed and the like
constexpr int kExitNotAcquired = 75;     // EX_TEMPFAIL: try again later
constexpr int kExitLost = 76;            // the lock was lost while the command ran
constexpr int kExitCannotExecute = 126;  // as the shell reports it
constexpr int kExitNotFound = 127;

const char kUsage[] =
    "Usage: latch-redlock --nodes HOST:PORT,... --key NAME --ttl DURATION [--wait DURATION]\n"
    "                     [--password P] [--kill-after DURATION] [--node-timeout DURATION]\n"
    "                     [--verbose] [--] COMMAND [ARGS...]\n"
    "       latch-redlock acquire --nodes ... --key NAME --ttl DURATION [--wait DURATION]\n"
    "       latch-redlock release --nodes ... --key NAME --token TOKEN\n"
    "       latch-redlock status  --nodes ... --key NAME\n"
    "       latch-redlock --help\n";

const char kHelp[] =
    "\n"
    "Runs COMMAND while holding a RedLock lock on a majority of the given latch\n"
    "(or Redis) nodes: a distributed flock(1).\n"
    "\n"
    "The lock is acquired with SET key token NX PX ttl on every node in parallel;\n"
    "it is held when N/2+1 nodes granted it, for ttl - elapsed - (ttl/100 + 2 ms).\n"
    "While COMMAND runs, a watchdog renews it every ttl/3 (SET key token IFEQ token\n"
    "PX ttl). If a renewal cannot reach a majority before the lock's validity ends,\n"
    "the lock is lost: COMMAND's process group gets SIGTERM, then SIGKILL after\n"
    "--kill-after, and latch-redlock exits with status 76. When COMMAND exits, the\n"
    "lock is released on every node (DELIFEQ key token).\n"
    "\n"
    "COMMAND runs in its own process group (as with timeout(1)) so that the signals\n"
    "reach everything it started; SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to\n"
    "latch-redlock are passed on to that group. Being in the background, COMMAND\n"
    "cannot read from a terminal.\n"
    "\n"
    "Options:\n"
    "  --nodes LIST          comma-separated HOST:PORT of every node ([ADDR]:PORT for IPv6)\n"
    "  --key NAME            the lock's key\n"
    "  --ttl DURATION        lease time, renewed while COMMAND runs (e.g. 30s, 500ms, 2m;\n"
    "                        a bare number is seconds); at most the nodes' max-lock-ttl\n"
    "  --wait DURATION       keep trying this long if the lock is busy (default 0: one try)\n"
    "  --password P          AUTH P on every connection (or env LATCH_PASSWORD)\n"
    "  --kill-after DURATION grace between SIGTERM and SIGKILL on lock loss (default 3s)\n"
    "  --node-timeout D      per-node reply timeout (default ttl/20, 10 ms to 200 ms)\n"
    "  --token TOKEN         release: the token printed by acquire\n"
    "  -v, --verbose         print every node's answer and its timing, for every round\n"
    "  -h, --help            this text\n"
    "\n"
    "Subcommands, for scripts:\n"
    "  acquire   acquire and keep the lock (no watchdog); prints \"TOKEN VALIDITY_MS\"\n"
    "  release   release the lock held with --token\n"
    "  status    print each node's value and PTTL for the key, and who holds a majority\n"
    "\n"
    "Exit status:\n"
    "  COMMAND's own status when it ran with the lock held throughout\n"
    "      (128+N when it was killed by signal N)\n"
    "  1    status: no token is held by a majority of the nodes\n"
    "  64   usage error\n"
    "  69   nodes unreachable or failing: fewer than a majority gave a usable answer\n"
    "       (down, timed out, garbage, refused AUTH, an error such as a TTL over\n"
    "       max-lock-ttl)\n"
    "  70   internal error (could not start COMMAND: fork failed)\n"
    "  75   the lock was not acquired within --wait (held by another owner, or\n"
    "       nodes in restart quarantine)\n"
    "  76   the lock was lost while COMMAND ran (COMMAND was stopped), or\n"
    "       release: the token was no longer held by a majority\n"
    "  126  COMMAND was found but could not be executed\n"
    "  127  COMMAND was not found\n";

struct Args {
  std::string sub;  // "", "acquire", "release", "status"
  std::string nodes, key, password, token;
  std::optional<Millis> ttl;
  Millis wait{0};
  Millis kill_after{3000};
  Millis node_timeout{0};
  bool verbose = false;
  std::vector<std::string> command;
};

[[noreturn]] void UsageError(const std::string& message) {
  std::fprintf(stderr, "latch-redlock: %s\n%s", message.c_str(), kUsage);
  std::exit(kExitUsage);
}

Millis DurationArg(const std::string& name, const std::string& value) {
  auto d = latch::ParseDuration(value);
  if (!d) UsageError("bad duration for " + name + ": '" + value + "' (e.g. 30s, 500ms, 2m)");
  return *d;
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  if (const char* pw = std::getenv("LATCH_PASSWORD")) a.password = pw;
  int i = 1;
  while (i < argc) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      std::printf("%s%s", kUsage, kHelp);
      std::exit(0);
    }
    if (arg == "-v" || arg == "--verbose") {
      a.verbose = true;
      ++i;
      continue;
    }
    if (arg.rfind("--", 0) == 0) {
      std::string name = arg, value;
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
      } else {
        if (i + 1 >= argc) UsageError("option " + name + " needs a value");
        value = argv[++i];
      }
      ++i;
      if (name == "--nodes") {
        a.nodes = value;
      } else if (name == "--key") {
        a.key = value;
      } else if (name == "--ttl") {
        a.ttl = DurationArg(name, value);
      } else if (name == "--wait") {
        a.wait = DurationArg(name, value);
      } else if (name == "--password") {
        a.password = value;
      } else if (name == "--token") {
        a.token = value;
      } else if (name == "--kill-after") {
        a.kill_after = DurationArg(name, value);
      } else if (name == "--node-timeout") {
        a.node_timeout = DurationArg(name, value);
      } else {
        UsageError("unknown option " + name);
      }
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') UsageError("unknown option " + arg);
    // The first word that is not an option: a subcommand, or COMMAND.
    if (a.sub.empty() && (arg == "acquire" || arg == "release" || arg == "status")) {
      a.sub = arg;
      ++i;
      continue;
    }
    break;
  }
  for (; i < argc; ++i) a.command.push_back(argv[i]);

  if (a.nodes.empty()) UsageError("--nodes is required");
  if (a.key.empty()) UsageError("--key is required");
  if (a.sub.empty() && a.command.empty()) UsageError("no COMMAND to run");
  if (!a.sub.empty() && !a.command.empty()) {
    UsageError("'" + a.sub + "' takes no COMMAND (got '" + a.command[0] + "')");
  }
  if ((a.sub.empty() || a.sub == "acquire") && (!a.ttl || a.ttl->count() <= 0)) {
    UsageError("--ttl is required and must be positive");
  }
  if (a.sub == "release" && a.token.empty()) UsageError("release needs --token");
  return a;
}

// --verbose: one block per round, from whichever thread ran it.
void PrintRound(const latch::RoundReport& r, const latch::RedLock& rl) {
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "latch-redlock: %s \"%s\"", r.op, r.key.c_str());
  out += line;
  if (r.attempt > 0) out += " attempt " + std::to_string(r.attempt);
  std::snprintf(line, sizeof(line), ": %zu of %zu yes (quorum %zu) in %.2f ms", r.yes,
                r.nodes.size(), r.quorum, ms(r.elapsed));
  out += line;
  if (std::string_view(r.op) == "acquire" || std::string_view(r.op) == "extend") {
    out += r.success ? ", validity " + FormatDuration(r.validity) : ", failed";
  }
  out += "\n";
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const latch::NodeOutcome& o = r.nodes[i];
    std::snprintf(line, sizeof(line), "  %-22s %-11s %-20s %8.2f ms\n",
                  rl.endpoint(i).ToString().c_str(), latch::AnswerName(o.answer),
                  o.text.substr(0, 200).c_str(), ms(o.latency));
    out += line;
  }
  std::fputs(out.c_str(), stderr);
}

// Why an acquire failed, in one line.
int ReportAcquireFailure(const Args& a, const latch::RedLock& rl, const latch::AcquireResult& res) {
  const latch::RoundReport& r = res.last;
  if (!res.reachable) {
    std::string why;
    size_t usable = 0;
    for (size_t i = 0; i < r.nodes.size(); ++i) {
      const latch::NodeOutcome& o = r.nodes[i];
      if (o.answer == latch::NodeAnswer::kNoAnswer || o.answer == latch::NodeAnswer::kError) {
        why += "; " + rl.endpoint(i).ToString() + ": " + o.text;
      } else {
        ++usable;
      }
    }
    std::fprintf(stderr,
                 "latch-redlock: nodes unreachable or failing: %zu of %zu nodes gave a usable "
                 "answer (quorum %zu)%s\n",
                 usable, r.nodes.size(), r.quorum, why.c_str());
    return kExitUnreachable;
  }
  size_t held = 0, quarantined = 0;
  for (const latch::NodeOutcome& o : r.nodes) {
    held += o.answer == latch::NodeAnswer::kNo;
    quarantined += o.answer == latch::NodeAnswer::kQuarantined;
  }
  std::string detail = std::to_string(res.attempts) + " attempt" + (res.attempts == 1 ? "" : "s") +
                       "; last: held elsewhere on " + std::to_string(held) + " of " +
                       std::to_string(r.nodes.size()) + " nodes";
  if (quarantined > 0) detail += ", " + std::to_string(quarantined) + " in restart quarantine";
  std::fprintf(stderr, "latch-redlock: lock \"%s\" not acquired within %s (%s)\n", a.key.c_str(),
               FormatDuration(a.wait).c_str(), detail.c_str());
  return kExitNotAcquired;
}

int Acquire(const Args& a, latch::RedLock& rl) {
  latch::AcquireResult res = rl.acquire(a.key, *a.ttl, a.wait);
  if (!res) return ReportAcquireFailure(a, rl, res);
  // The script owns the lock now: it must not be released when we exit.
  res.lock->Detach();
  std::printf("%s %lld\n", res.lock->token().c_str(),
              static_cast<long long>(res.lock->remaining().count()));
  return 0;
}

int Release(const Args& a, latch::RedLock& rl) {
  auto r = rl.release(a.key, a.token);
  std::printf("released on %zu of %zu nodes (%zu answered, quorum %zu)\n", r.deleted, rl.size(),
              r.answered, rl.quorum());
  if (r.deleted >= rl.quorum()) return 0;
  if (r.answered >= rl.quorum()) {
    std::fprintf(stderr,
                 "latch-redlock: the token was not held by a majority (it expired or was "
                 "taken over)\n");
    return kExitLost;
  }
  std::fprintf(stderr, "latch-redlock: nodes unreachable: only %zu of %zu answered\n", r.answered,
               rl.size());
  return kExitUnreachable;
}

int Status(const Args& a, latch::RedLock& rl) {
  std::vector<latch::KeyState> states = rl.inspect(a.key);
  std::map<std::string, size_t> holders;
  size_t answered = 0;
  for (size_t i = 0; i < states.size(); ++i) {
    const latch::KeyState& s = states[i];
    double ms = std::chrono::duration<double, std::milli>(s.latency).count();
    std::string ep = rl.endpoint(i).ToString();
    if (!s.answered) {
      std::printf("%-22s unreachable (%s)\n", ep.c_str(), s.detail.c_str());
      continue;
    }
    ++answered;
    if (s.value) {
      ++holders[*s.value];
      std::printf("%-22s %-34s pttl %8" PRId64 " ms  %7.2f ms\n", ep.c_str(), s.value->c_str(),
                  s.pttl_ms, ms);
    } else {
      std::printf("%-22s %-34s %16s  %7.2f ms\n", ep.c_str(), "(no key)", "", ms);
    }
  }
  if (answered < rl.quorum()) {
    std::printf("unknown: only %zu of %zu nodes answered (quorum %zu)\n", answered, rl.size(),
                rl.quorum());
    return kExitUnreachable;
  }
  for (const auto& [value, count] : holders) {
    if (count >= rl.quorum()) {
      std::printf("held by %s on %zu of %zu nodes (quorum %zu)\n", value.c_str(), count, rl.size(),
                  rl.quorum());
      return 0;
    }
  }
  std::printf("not held: no value is on a majority (quorum %zu)\n", rl.quorum());
  return kExitNotHeld;
}

// Signals COMMAND's process group, so that what it started gets the signal
// too; if COMMAND moved itself to another group, at least COMMAND itself.
void SignalCommand(pid_t pid, int sig) {
  if (::kill(-pid, sig) != 0 && errno == ESRCH) ::kill(pid, sig);
}

// Run mode: acquire, run COMMAND under the watchdog, release.
int Run(const Args& a, latch::RedLock& rl) {
  latch::AcquireResult res = rl.acquire(a.key, *a.ttl, a.wait);
  if (!res) return ReportAcquireFailure(a, rl, res);
  latch::Lock& lock = *res.lock;
  if (a.verbose) {
    std::fprintf(stderr, "latch-redlock: acquired \"%s\" (token %s), running %s\n", a.key.c_str(),
                 lock.token().c_str(), a.command[0].c_str());
  }

  // From here on the signals we care about arrive through a signalfd, read
  // by this thread only: block them before the watchdog thread exists, so
  // that it inherits the mask. The child gets the old mask back before exec.
  sigset_t handled, old_mask;
  sigemptyset(&handled);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&handled, sig);
  sigprocmask(SIG_BLOCK, &handled, &old_mask);
  latch::UniqueFd sigfd(::signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK));
  latch::UniqueFd lostfd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!sigfd || !lostfd) {
    std::perror("latch-redlock: signalfd/eventfd");
    return kExitInternal;
  }

  // exec failure is reported through a close-on-exec pipe: the parent reads
  // EOF when exec succeeded, or the child's errno when it did not.
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    std::perror("latch-redlock: pipe");
    return kExitInternal;
  }
  latch::UniqueFd exec_read(exec_pipe[0]), exec_write(exec_pipe[1]);
  std::vector<char*> child_argv;
  for (const std::string& s : a.command) child_argv.push_back(const_cast<char*>(s.c_str()));
  child_argv.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("latch-redlock: fork");
    return kExitInternal;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGPIPE, SIG_DFL);  // ignored in latch-redlock; COMMAND expects the default
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    ::execvp(child_argv[0], child_argv.data());
    int err = errno;
    ssize_t ignored = ::write(exec_write.get(), &err, sizeof(err));
    (void)ignored;
    ::_exit(err == ENOENT ? kExitNotFound : kExitCannotExecute);
  }
  ::setpgid(pid, pid);  // also here: whichever runs first, the group exists before kill()
  exec_write.reset();
  int exec_errno = 0;
  if (::read(exec_read.get(), &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::fprintf(stderr, "latch-redlock: cannot run %s: %s\n", a.command[0].c_str(),
                 std::strerror(exec_errno));
    lock.release();
    return exec_errno == ENOENT ? kExitNotFound : kExitCannotExecute;
  }

  std::mutex loss_mu;
  std::string loss_reason;
  latch::Watchdog watchdog(lock, [&](const latch::LossReport& loss) {
    {
      std::lock_guard<std::mutex> g(loss_mu);
      loss_reason = loss.reason;
    }
    uint64_t one = 1;
    ssize_t ignored = ::write(lostfd.get(), &one, sizeof(one));
    (void)ignored;
  });

  bool lost = false;
  std::optional<LockClock::time_point> kill_at;
  int status = 0;
  while (true) {
    pollfd fds[2] = {{sigfd.get(), POLLIN, 0}, {lostfd.get(), POLLIN, 0}};
    int timeout_ms = -1;
    if (kill_at) {
      auto left = std::chrono::ceil<Millis>(*kill_at - LockClock::now()).count();
      timeout_ms = static_cast<int>(std::max<int64_t>(left, 0));
    }
    ::poll(fds, 2, timeout_ms);
    if (fds[1].revents & POLLIN) {
      uint64_t n;
      ssize_t ignored = ::read(lostfd.get(), &n, sizeof(n));
      (void)ignored;
      lost = true;
      std::string why;
      {
        std::lock_guard<std::mutex> g(loss_mu);
        why = loss_reason;
      }
      std::fprintf(
          stderr, "latch-redlock: lock \"%s\" lost: %s; sending SIGTERM to %s (SIGKILL in %s)\n",
          a.key.c_str(), why.c_str(), a.command[0].c_str(), FormatDuration(a.kill_after).c_str());
      SignalCommand(pid, SIGTERM);
      kill_at = LockClock::now() + a.kill_after;
    }
    if (kill_at && LockClock::now() >= *kill_at) {
      std::fprintf(stderr, "latch-redlock: %s still running after %s: SIGKILL\n",
                   a.command[0].c_str(), FormatDuration(a.kill_after).c_str());
      SignalCommand(pid, SIGKILL);
      kill_at.reset();
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si;
      while (::read(sigfd.get(), &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo != SIGCHLD) SignalCommand(pid, static_cast<int>(si.ssi_signo));
      }
    }
    // Has COMMAND exited? Look without reaping it first: while it is a
    // zombie its process group id cannot be reused, so the group can still
    // be killed safely.
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      if (lost) SignalCommand(pid, SIGKILL);  // whatever it left behind in its group
      ::waitpid(pid, &status, 0);
      break;
    }
  }
  watchdog.Stop();

  if (lost) {
    lock.release();  // nothing to lose: it may still be ours on some nodes
    return kExitLost;
  }
  bool released = lock.release();
  if (a.verbose || !released) {
    std::fprintf(stderr, "latch-redlock: %s exited; lock %s\n", a.command[0].c_str(),
                 released ? "released" : "released on fewer than a majority of the nodes");
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitInternal;
}

}  // namespace

int main(int argc, char** argv) {
  Args a = ParseArgs(argc, argv);
  std::string error;
  auto endpoints = latch::ParseEndpoints(a.nodes, &error);
  if (!endpoints) UsageError("--nodes: " + error);

  latch::RedLockOptions options;
  options.password = a.password;
  options.node_timeout = a.node_timeout;
  latch::RedLock* self = nullptr;
  if (a.verbose) {
    options.observer = [&self](const latch::RoundReport& r) { PrintRound(r, *self); };
  }
  latch::RedLock rl(std::move(*endpoints), options);
  self = &rl;
  std::signal(SIGPIPE, SIG_IGN);

  if (a.sub == "acquire") return Acquire(a, rl);
  if (a.sub == "release") return Release(a, rl);
  if (a.sub == "status") return Status(a, rl);
  return Run(a, rl);
}
