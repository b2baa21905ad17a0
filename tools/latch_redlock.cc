// latch-redlock: flock(1) for a lock held on N latch nodes with RedLock.
//
//   latch-redlock --nodes H:P,… --key NAME --ttl 30s [--wait 10s] -- COMMAND [ARGS…]
//   latch-redlock acquire|release|status --nodes H:P,… --key NAME …
//
// Run mode acquires the lock, runs the command while a watchdog renews the
// lock every ttl/3, and releases it when the command — and every process it
// started in its process group — has exited. If renewals fail,
// the command is stopped so that it is gone *before* the lock's validity
// ends (see StopTiming): SIGTERM to its process group, then SIGKILL, and
// latch-redlock exits with its own code (76) so a script can tell. A command
// whose exit is only seen after the validity ended gets the same code: its
// work may have overlapped the next holder's.
//
// --fence: the lock is acquired with fencing tokens (RedLock's two steps in
// tools/redlock/redlock.h) and the command finds its token in LATCH_FENCE,
// to send with every write to the resource it protects; a resource that
// refuses a token smaller than one it has seen stops a holder that was
// paused past its lease (docs/guide.md).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
#include <string_view>
#include <vector>

#include "common/unique_fd.h"
#include "tools/cli/options.h"
#include "tools/redlock/connect_options.h"
#include "tools/redlock/redlock.h"
#include "tools/redlock_run/command.h"

namespace {

using latch::LockClock;
using latch::Millis;
using latch::cli::FormatDuration;
using latch::redlock_command::DeadlineTimer;
using latch::redlock_command::GroupLives;
using latch::redlock_command::SignalCommand;
using latch::redlock_command::StopTiming;
using latch::redlock_command::StopTimingFor;
using latch::redlock_command::Until;

// Exit statuses (documented in --help and README).
constexpr int kExitNotHeld = 1;          // status: no quorum holds the key
constexpr int kExitUnreachable = 69;     // EX_UNAVAILABLE
constexpr int kExitInternal = 70;        // EX_SOFTWARE: fork failed and the like
constexpr int kExitNotAcquired = 75;     // EX_TEMPFAIL: try again later
constexpr int kExitLost = 76;            // the lock was lost while the command ran
constexpr int kExitCannotExecute = 126;  // as the shell reports it
constexpr int kExitNotFound = 127;

const latch::cli::Manual kManual = {
    "latch-redlock", "run a command while holding a RedLock lock: a distributed flock(1)",
    "latch-redlock [--nodes HOST:PORT,...] --key NAME --ttl DURATION [--wait DURATION]\n"
    "              [--user NAME] [--pass P] [--kill-after DURATION] [--node-timeout DURATION]\n"
    "              [--tls [--cacert FILE] [--cacertdir DIR] [--cert FILE --tls-key FILE]\n"
    "               [--sni NAME] [--insecure]] [--fence] [--verbose] [--] COMMAND [ARGS...]\n"
    "latch-redlock acquire [--nodes ...] --key NAME --ttl DURATION [--wait DURATION] [--fence]\n"
    "latch-redlock release [--nodes ...] --key NAME --token TOKEN\n"
    "latch-redlock status  [--nodes ...] --key NAME",
    R"MAN(DESCRIPTION
    Runs COMMAND while holding a RedLock lock on a majority of the given latch
    (or Redis) nodes.

    The lock is acquired with SET key token NX PX ttl on every node in
    parallel; it is held when N/2+1 nodes granted it, for
    ttl - elapsed - (ttl/100 + 2 ms). While COMMAND runs, a watchdog renews it
    every ttl/3 (SET key token IFEQ token PX ttl). When COMMAND has exited,
    and every process it started in its process group too (sh -c 'work &':
    the lock is held until work is gone, as flock(1) holds its lock while any
    process keeps the fd), the lock is released on every node (DELIFEQ key
    token).

    Once the validity has ended, another client may hold the lock, so COMMAND
    must be gone by then. If no renewal has reached a majority by
        validity end - grace - margin     COMMAND's process group gets SIGTERM,
        validity end - margin             and SIGKILL at the latest,
    where grace = --kill-after, at most ttl/3, and margin = ttl/20 (10 ms to
    500 ms); latch-redlock then exits with status 76. The same happens at once
    if a majority answers that the key is no longer ours (SIGKILL after the
    grace, or at the kill point if that comes first). An exit of COMMAND that
    latch-redlock sees only after the validity ended (it was frozen or
    suspended meanwhile) is a loss too: status 76.

    COMMAND runs in its own process group (as with timeout(1)) so that the
    signals reach everything it started; SIGINT, SIGTERM, SIGHUP and SIGQUIT
    sent to latch-redlock are passed on to that group. Being in the
    background, COMMAND cannot read from a terminal.

COMMANDS
    (none)     run COMMAND with the lock held, as above
    acquire    acquire and keep the lock (no watchdog); prints
               "TOKEN VALIDITY_MS" (with --fence: "TOKEN VALIDITY_MS FENCING_TOKEN")
    release    release the lock held with --token
    status     print each node's value and PTTL for the key, and who holds a
               majority

OPTIONS
    --nodes LIST          comma-separated HOST:PORT of every node ([ADDR]:PORT
                          for IPv6); default $LATCH_NODES
    --key NAME            the lock's key
    --ttl DURATION        lease time, renewed while COMMAND runs (500ms, 30s,
                          2m: durations always have a unit); at most the
                          nodes' max-lock-ttl
    --wait DURATION       keep trying this long if the lock is busy (default:
                          one try)
    --user NAME           log in as that ACL user (AUTH NAME P; needs --pass)
    -a, --pass P          the password sent with AUTH on every connection
                          (--password: the same; default $REDISCLI_AUTH, as
                          redis-cli, else $LATCH_PASSWORD)
    --tls                 connect to the nodes' tls-port with TLS (the options
                          below are redis-cli's)
    --cacert FILE         trust the CA certificates in FILE (default: the
                          system's)
    --cacertdir DIR       trust the CA certificates in DIR (c_rehash layout)
    --cert FILE           a client certificate (tls-auth-clients yes)
    --tls-key FILE        its private key (redis-cli's --key: here --key
                          names the lock)
    --sni NAME            the server name sent and checked (default: the
                          node's host)
    --insecure            do not verify the nodes' certificates
    --kill-after DURATION grace between SIGTERM and SIGKILL on lock loss
                          (default 3s, at most ttl/3: see above)
    --node-timeout DURATION
                          per-node reply timeout (default ttl/20, 10ms to 200ms)
    --token TOKEN         release: the token printed by acquire
    --fence               acquire with a fencing token (latch nodes only):
                          COMMAND gets it in the environment as LATCH_FENCE; it
                          grows with every new holder as long as the nodes keep
                          their counters
    -v, --verbose         print every node's answer and its timing, for every
                          round
    -h, --help            this manual
    --version             the version

EXIT STATUS
    COMMAND's own status when it ran with the lock held throughout
        (128+N when it was killed by signal N)
    1    status: no token is held by a majority of the nodes
    64   usage error
    69   nodes unreachable or failing: fewer than a majority gave a usable
         answer (down, timed out, garbage, refused AUTH, an error such as a
         TTL over max-lock-ttl)
    70   internal error (could not start COMMAND: fork failed)
    75   the lock was not acquired within --wait (held by another owner, or
         nodes in restart quarantine)
    76   the lock was lost while COMMAND ran: renewals failed and COMMAND was
         stopped before the validity ended, or COMMAND's exit was seen only
         after it ended; release: the token was no longer held by a majority
    126  COMMAND was found but could not be executed
    127  COMMAND was not found

ENVIRONMENT
    LATCH_NODES           the default --nodes (latch-fixture up prints it)
    REDISCLI_AUTH         the default --pass (redis-cli's variable)
    LATCH_PASSWORD        the default --pass when REDISCLI_AUTH is not set
    LATCH_FENCE           set for COMMAND with --fence: the fencing token

EXAMPLES
    latch-redlock --nodes 127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003 \
        --key report --ttl 10s -- ./make-report.sh
    latch-redlock --key nightly --ttl 30s --wait 2s -- ./backup.sh
    read token validity < <(latch-redlock acquire --key job --ttl 1m)

SEE ALSO
    flock(1), timeout(1), tools/redlock/README.md, docs/guide.md
)MAN"};

struct Args {
  std::string sub;  // "", "acquire", "release", "status"
  std::string nodes, key, token;
  std::optional<Millis> ttl;
  Millis wait{0};
  Millis kill_after{3000};
  Millis node_timeout{0};
  bool verbose = false;
  bool fence = false;
  std::vector<std::string> command;
  latch::ConnectOptions connect;  // --user, --pass, --tls and its options
};

[[noreturn]] void UsageError(const std::string& message) {
  latch::cli::UsageError(kManual, message);
}

bool IsSubcommand(std::string_view word) {
  return word == "acquire" || word == "release" || word == "status";
}

Args ParseArgs(int argc, char** argv) {
  Args a;
  a.connect.FromEnvironment();
  if (const char* nodes = std::getenv("LATCH_NODES")) a.nodes = nodes;
  Millis ttl{0};
  latch::cli::Parser p(kManual);
  const Millis day{86'400'000};
  p.Text("nodes", &a.nodes)
      .Text("key", &a.key)
      .Duration("ttl", &ttl, Millis{1}, day)
      .Duration("wait", &a.wait, Millis{0}, day)
      .Text("token", &a.token)
      .Duration("kill-after", &a.kill_after, Millis{0}, day)
      .Duration("node-timeout", &a.node_timeout, Millis{1}, day)
      .Flag("fence", &a.fence)
      .Flag("verbose", &a.verbose, 'v');
  a.connect.Declare(p);
  // Stop at the first operand, as env(1) and timeout(1) do, so that
  // COMMAND's own options stay COMMAND's. A subcommand comes first, or
  // first after the options ("--key k status"); its options may follow it.
  int first = 1;
  if (argc > 1 && IsSubcommand(argv[1])) {
    a.sub = argv[1];
    first = 2;
  }
  latch::cli::Parser::Result r = p.Parse(argc, argv, first, /*stop_at_operand=*/true);
  if (a.sub.empty() && !r.dashes && !r.operands.empty() && IsSubcommand(r.operands[0])) {
    a.sub = r.operands[0];
    const int at = argc - static_cast<int>(r.operands.size()) + 1;
    r = p.Parse(argc, argv, at, /*stop_at_operand=*/true);
  }
  a.command = r.operands;
  if (p.Given("ttl")) a.ttl = ttl;

  if (a.nodes.empty()) UsageError("--nodes is required (or LATCH_NODES in the environment)");
  if (a.key.empty()) UsageError("--key is required");
  if (a.sub.empty() && a.command.empty()) UsageError("no COMMAND to run");
  if (!a.sub.empty() && !a.command.empty()) {
    UsageError("'" + a.sub + "' takes no COMMAND (got '" + a.command[0] + "')");
  }
  if ((a.sub.empty() || a.sub == "acquire") && !a.ttl) UsageError("--ttl is required");
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
  if (std::string_view(r.op) == "fence") {
    out += r.success ? ", floor raised: fencing token " + std::to_string(r.fence)
                     : ", failed: too few nodes at the largest token";
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
  if (res.unfenced > 0) {
    detail += "; " + std::to_string(res.unfenced) +
              " won a majority but could not raise the fencing floor on enough nodes";
  }
  std::fprintf(stderr, "latch-redlock: lock \"%s\" not acquired within %s (%s)\n", a.key.c_str(),
               FormatDuration(a.wait).c_str(), detail.c_str());
  return kExitNotAcquired;
}

int Acquire(const Args& a, latch::RedLock& rl) {
  latch::AcquireResult res = rl.acquire(a.key, *a.ttl, a.wait);
  if (!res) return ReportAcquireFailure(a, rl, res);
  // The script owns the lock now: it must not be released when we exit.
  res.lock->Detach();
  std::printf("%s %lld", res.lock->token().c_str(),
              static_cast<long long>(res.lock->remaining().count()));
  if (a.fence) std::printf(" %llu", static_cast<unsigned long long>(res.lock->fence_token()));
  std::printf("\n");
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

// Run mode: acquire, run COMMAND under the watchdog, release.
int Run(const Args& a, latch::RedLock& rl) {
  latch::AcquireResult res = rl.acquire(a.key, *a.ttl, a.wait);
  if (!res) return ReportAcquireFailure(a, rl, res);
  latch::Lock& lock = *res.lock;
  if (a.verbose) {
    std::string fence =
        a.fence ? ", fencing token " + std::to_string(lock.fence_token()) : std::string();
    std::fprintf(stderr, "latch-redlock: acquired \"%s\" (token %s%s), running %s\n", a.key.c_str(),
                 lock.token().c_str(), fence.c_str(), a.command[0].c_str());
  }
  // The command's fencing token: to send with each write to the resource.
  if (a.fence) ::setenv("LATCH_FENCE", std::to_string(lock.fence_token()).c_str(), 1);
  const StopTiming timing = StopTimingFor(*a.ttl, a.kill_after);
  const char* name = a.command[0].c_str();

  // From here on the signals we care about arrive through a signalfd, read
  // by this thread only: block them before the watchdog thread exists, so
  // that it inherits the mask. The child gets the old mask back before exec.
  sigset_t handled, old_mask;
  sigemptyset(&handled);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&handled, sig);
  sigprocmask(SIG_BLOCK, &handled, &old_mask);
  latch::UniqueFd sigfd(::signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK));
  latch::UniqueFd lostfd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  DeadlineTimer timer;
  if (!sigfd || !lostfd || !timer) {
    std::perror("latch-redlock: signalfd/eventfd/timerfd");
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
    std::fprintf(stderr, "latch-redlock: cannot run %s: %s\n", name, std::strerror(exec_errno));
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

  // Stopping COMMAND: SIGTERM went at *term_sent; SIGKILL at the kill point.
  std::optional<LockClock::time_point> term_sent;
  bool killed = false;
  auto send_term = [&](const std::string& what) {
    term_sent = LockClock::now();
    const auto kill_at = std::min(*term_sent + timing.grace, lock.validity_end() - timing.margin);
    std::fprintf(stderr, "latch-redlock: lock \"%s\" %s; sending SIGTERM to %s (SIGKILL in %s)\n",
                 a.key.c_str(), what.c_str(), name, Until(std::max(kill_at, *term_sent)).c_str());
    SignalCommand(pid, SIGTERM);
  };

  int status = 0;
  LockClock::time_point exit_seen, validity_at_exit;
  bool lost_at_exit = false;
  // COMMAND has exited but processes it started in its group still run
  // (`sh -c 'work &'`): the lock is held, and renewed, until the whole group
  // is gone — as flock(1) holds its lock while any process keeps the fd.
  bool command_exited = false;
  while (true) {
    // The next deadline: the stop point while COMMAND runs undisturbed, the
    // kill point once it has had SIGTERM. Both follow the validity end,
    // which a renewal may have moved since the last turn.
    const auto end = lock.validity_end();
    std::optional<LockClock::time_point> wake;
    if (!term_sent) {
      wake = end - timing.grace - timing.margin;
    } else if (!killed) {
      wake = std::min(*term_sent + timing.grace, end - timing.margin);
    }
    timer.Arm(wake);
    pollfd fds[3] = {{sigfd.get(), POLLIN, 0}, {lostfd.get(), POLLIN, 0}, {timer.fd(), POLLIN, 0}};
    // While the rest of the group runs, look at it every 20 ms.
    ::poll(fds, 3, command_exited ? 20 : -1);
    timer.Drain();
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
    if (!command_exited &&
        ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      command_exited = true;
      if (a.verbose && GroupLives(pid, pid)) {
        std::fprintf(stderr,
                     "latch-redlock: %s exited; the lock is held until the processes it "
                     "started in its group are gone\n",
                     name);
      }
    }
    if (command_exited && !GroupLives(pid, pid)) {
      exit_seen = LockClock::now();
      validity_at_exit = lock.validity_end();
      lost_at_exit = lock.lost();
      // Whatever it left behind in its group must not outlive the lease.
      if (term_sent || lost_at_exit || exit_seen >= validity_at_exit) SignalCommand(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    if (fds[1].revents & POLLIN) {
      uint64_t n;
      ssize_t ignored = ::read(lostfd.get(), &n, sizeof(n));
      (void)ignored;
      std::string why;
      {
        std::lock_guard<std::mutex> g(loss_mu);
        why = loss_reason;
      }
      if (!term_sent) {
        send_term("lost: " + why);
      } else {
        std::fprintf(stderr, "latch-redlock: lock \"%s\" lost: %s\n", a.key.c_str(), why.c_str());
      }
    }
    const auto now = LockClock::now();
    const auto end_now = lock.validity_end();
    if (!term_sent && now >= end_now - timing.grace - timing.margin) {
      // No renewal has reached a quorum in time: the lock is not lost yet,
      // but COMMAND can only be stopped before its validity ends by
      // starting now.
      std::string last = lock.last_error();
      send_term("is being lost: no renewal reached a quorum" +
                (last.empty() ? std::string() : " (last try: " + last + ")") +
                " and its validity ends in " + Until(end_now) + ", when " + name + " must be gone");
    }
    if (term_sent && !killed &&
        now >= std::min(*term_sent + timing.grace, end_now - timing.margin)) {
      std::fprintf(stderr,
                   "latch-redlock: %s still running %s after SIGTERM, %s before the lock's "
                   "validity ends: SIGKILL\n",
                   name,
                   FormatDuration(std::chrono::duration_cast<Millis>(now - *term_sent)).c_str(),
                   Until(end_now).c_str());
      SignalCommand(pid, SIGKILL);
      killed = true;
    }
  }
  watchdog.Stop();

  // An exit seen only after the validity ended (latch-redlock was frozen,
  // the machine suspended, the process stuck beyond SIGKILL) may have come
  // after the lease passed to someone else: COMMAND's work was not
  // protected to its end, whatever its status says.
  const bool late = exit_seen >= validity_at_exit;
  if (late) {
    std::fprintf(
        stderr,
        "latch-redlock: lock \"%s\" lost: %s's exit was seen %s after the lock's "
        "validity ended; its work may have overlapped the next holder's\n",
        a.key.c_str(), name,
        FormatDuration(std::chrono::duration_cast<Millis>(exit_seen - validity_at_exit)).c_str());
  } else if (lost_at_exit && !term_sent) {
    std::string why;
    {
      std::lock_guard<std::mutex> g(loss_mu);
      why = loss_reason;
    }
    std::fprintf(stderr, "latch-redlock: lock \"%s\" lost as %s exited: %s\n", a.key.c_str(), name,
                 why.c_str());
  }
  if (term_sent || late || lost_at_exit) {
    lock.release();  // nothing to lose: it may still be ours on some nodes
    return kExitLost;
  }
  bool released = lock.release();
  if (a.verbose || !released) {
    std::fprintf(stderr, "latch-redlock: %s exited; lock %s\n", name,
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
  options.user = a.connect.user;
  options.password = a.connect.password;
  if (auto err = a.connect.Build(&options.tls)) UsageError(*err);
  options.node_timeout = a.node_timeout;
  options.fence = a.fence;
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
