#include "tools/chaos/cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "protocol/request_writer.h"
#include "protocol/text.h"

namespace latch::chaos {

namespace {

// Admin requests (DEBUG, INFO, PTTL) may wait behind a loop that an injected
// slow disk holds for up to a TTL per write: give them time.
constexpr Millis kAdminTimeout{5000};

std::string ExitText(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// The last line of a log excerpt: usually the reason a server stopped.
std::string LastLine(const std::string& text) {
  size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return "";
  size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - start);
}

}  // namespace

Cluster::Cluster(const Options& o, std::string root, AckBook& acks)
    : o_(o), root_(std::move(root)), acks_(acks) {}

std::vector<std::string> Cluster::Args(const NodeConf& c) const {
  std::vector<std::string> a = {
      "--appendonly",           o_.appendonly, "--appendfsync",  c.appendfsync,
      "--quarantine",           c.quarantine,  "--max-lock-ttl", std::to_string(o_.ttl.count()),
      "--enable-debug-command", "yes"};
  if (c.quarantine_ms >= 0) {
    a.insert(a.end(), {"--quarantine-ms", std::to_string(c.quarantine_ms)});
  }
  // Only when set: an old build refuses options it does not know.
  if (c.wall_offset_ms != 0) {
    a.insert(a.end(), {"--debug-wall-offset-ms", std::to_string(c.wall_offset_ms)});
  }
  if (!c.clock_id.empty()) a.insert(a.end(), {"--debug-clock-id", c.clock_id});
  // TLS and the user every connection logs in as (chaos.h: Connect).
  const std::vector<std::string> security =
      o_.connect.NodeOptions(c.tls_port != 0 ? &o_.certs : nullptr, c.tls_port);
  a.insert(a.end(), security.begin(), security.end());
  return a;
}

void Cluster::StartAll() {
  // Preloaded into every server (they inherit the environment): a no-op
  // until the slow-fsync fault writes a delay into a node's directory. A
  // sanitizer build wants its runtime first in the library list; the
  // preloaded library needs nothing from it, so that check is waived.
  const bool slow_fsync =
      std::find(o_.faults.begin(), o_.faults.end(), FaultKind::kSlowFsync) != o_.faults.end();
  if (slow_fsync && !o_.slow_fsync_lib.empty()) {
    ::setenv("LD_PRELOAD", o_.slow_fsync_lib.c_str(), 1);
    const char* asan = std::getenv("ASAN_OPTIONS");
    std::string opts = asan != nullptr && *asan != '\0' ? std::string(asan) + ":" : "";
    ::setenv("ASAN_OPTIONS", (opts + "verify_asan_link_order=0").c_str(), 1);
  }
  for (int i = 0; i < o_.nodes; ++i) {
    NodeConf conf{o_.appendfsync, o_.quarantine, o_.quarantine_ms, 0, "", 0};
    // The TLS port is fixed for the node's life, as its plain port.
    if (o_.tls) conf.tls_port = launch::FreePort();
    launch::ServerSpec spec;
    spec.binary = o_.server;
    spec.dir = root_ + "/node" + std::to_string(i);
    spec.args = Args(conf);
    spec.user = o_.connect.user;
    spec.password = o_.connect.password;
    nodes_.emplace_back(launch::ServerProcess(std::move(spec)), conf);
  }
  const auto now = Clock::now();
  for (int i = 0; i < o_.nodes; ++i) {
    try {
      nodes_[i].server.Start();
    } catch (const launch::LaunchError& e) {
      throw HarnessError{"node " + std::to_string(i) + ": " + e.what()};
    }
    // Every connection of the run goes to the TLS port when there is one
    // (the plain port serves only the launcher's readiness PING).
    const uint16_t port =
        nodes_[i].conf.tls_port != 0 ? nodes_[i].conf.tls_port : nodes_[i].server.port();
    endpoints_.push_back(latch::Endpoint{nodes_[i].server.host(), port});
    acks_.RunStarted(i, nodes_[i].conf.appendfsync);
    runs_.push_back(NodeRun{i, nodes_[i].conf, now, std::nullopt, false});
  }
}

ServerKnobs Cluster::ProbeKnobs() {
  ServerKnobs k;
  auto r = Command(0, {"DEBUG", "FAULT-IO", "OFF"}, kAdminTimeout);
  k.fault_io = r && !r->is_error();
  // The start-up options: an old build refuses an option it does not know
  // and exits at once, so a throwaway server tells.
  auto starts_with = [&](std::vector<std::string> extra) {
    launch::ServerSpec spec;
    spec.binary = o_.server;
    spec.dir = root_ + "/probe";
    spec.args = {"--appendonly", "no", "--enable-debug-command", "yes"};
    spec.args.insert(spec.args.end(), extra.begin(), extra.end());
    spec.start_timeout = Millis{3000};
    launch::ServerProcess p(std::move(spec));
    bool ok = true;
    try {
      p.Start();
      p.Stop(Millis{3000});
    } catch (const launch::LaunchError&) {
      ok = false;
    }
    std::error_code ec;
    std::filesystem::remove_all(root_ + "/probe", ec);
    return ok;
  };
  k.wall_offset = starts_with({"--debug-wall-offset-ms", "1"});
  k.clock_id = starts_with({"--debug-clock-id", "latch-chaos-probe"});
  knobs_ = k;
  return k;
}

std::optional<std::string> Cluster::Missing(const Fault& f) const {
  switch (f.kind) {
    case FaultKind::kDiskError:
    case FaultKind::kSlowDisk:
      if (!knobs_.fault_io) return "DEBUG FAULT-IO";
      break;
    case FaultKind::kWallStep:
      if (!knobs_.wall_offset) return "--debug-wall-offset-ms";
      break;
    case FaultKind::kClockChange:
      if (!knobs_.clock_id) return "--debug-clock-id";
      break;
    case FaultKind::kSlowFsync:
      if (o_.slow_fsync_lib.empty()) return "latch-chaos-slow-fsync.so next to latch-chaos";
      break;
    default:
      break;
  }
  return std::nullopt;
}

void Cluster::StopAll() {
  for (Node& n : nodes_) n.server.Stop(Millis{3000});
}

std::vector<int> Cluster::Alive(const std::vector<int>& which) const {
  std::vector<int> out;
  for (int i : which) {
    if (!nodes_[i].dead) out.push_back(i);
  }
  return out;
}

namespace {

// The change scheduled for node i, if any.
NodeChange ChangeFor(int i, const std::vector<int>& from, const std::vector<NodeChange>& changes) {
  for (size_t k = 0; k < from.size() && k < changes.size(); ++k) {
    if (from[k] == i) return changes[k];
  }
  return {};
}

}  // namespace

void Cluster::EndRun(int i) {
  for (auto it = runs_.rbegin(); it != runs_.rend(); ++it) {
    if (it->node == i) {
      if (!it->end) it->end = Clock::now();
      return;
    }
  }
}

void Cluster::StopNodes(const std::vector<int>& which, StopKind how) {
  std::vector<int> live;
  for (int i : which) {
    if (!CheckExited(i, [](const std::string&) {})) live.push_back(i);
  }
  if (how == StopKind::kPowerLoss) {
    PowerLoss(live, NodeEvent::kMarkPowerLoss, "power loss");
    return;
  }
  // Every signal first, then the waits: the nodes go down together. The
  // write tracker learns of a stop only once the process is gone: until
  // then it may still acknowledge writes (acks.h).
  for (int i : live) {
    Node& n = nodes_[i];
    if (how == StopKind::kSigterm) {
      if (n.server.paused()) n.server.Resume();
      ::kill(n.server.pid(), SIGTERM);
    } else {
      n.server.Kill();
      acks_.RunEnding(i);
    }
  }
  for (int i : live) {
    Node& n = nodes_[i];
    std::string note = StopName(how);
    if (how == StopKind::kSigterm) {
      auto status = n.server.WaitExit(Millis{5000});
      if (!status) n.server.Kill();
      acks_.RunEnding(i);
      if (!status) {
        note += ", SIGKILL after 5 s";
      } else {
        note += ", " + ExitText(*status);
        // A clean shutdown fsyncs the log: what the run acknowledged is now
        // on disk, and no power loss may take it. Not while an injected
        // fault was in force: the server knows it could not sync then.
        if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0 && !n.fault_armed) {
          acks_.CleanStop(i, Clock::now());
        }
      }
    }
    if (how == StopKind::kLogLost) {
      // Storage that lost its data: the log is gone, the state record stays.
      std::error_code ec;
      std::filesystem::remove(n.server.dir() + "/latch.aof", ec);
    }
    EndFault(i);
    EndRun(i);
    Mark(how == StopKind::kSigterm   ? NodeEvent::kMarkClean
         : how == StopKind::kLogLost ? NodeEvent::kMarkLogLost
                                     : NodeEvent::kMarkCrash,
         i, note);
    n.last_stop = how;
    n.down_since = Clock::now();
  }
}

void Cluster::PowerLoss(const std::vector<int>& which, NodeEvent::Kind mark, const char* note) {
  if (which.empty()) return;
  std::vector<latch::Endpoint> eps;
  for (int i : which) eps.push_back(endpoints_[i]);
  std::unique_ptr<latch::NodeSet> admin = o_.Connect(eps);
  std::string req;
  latch::resp::AppendRequest(req, {"DEBUG", "POWERLOSS"});
  // No reply comes: the node exits, and the closed connection ends the round.
  auto results = admin->Round(req, 1, kAdminTimeout);
  for (size_t k = 0; k < which.size(); ++k) {
    const latch::NodeResult& r = results[k];
    if (r.ok() && r.replies[0].is_error()) {
      throw HarnessError{"DEBUG POWERLOSS refused by node " + std::to_string(which[k]) + ": " +
                         r.replies[0].str};
    }
  }
  auto now = Clock::now();
  for (int i : which) {
    Node& n = nodes_[i];
    n.last_stop = StopKind::kPowerLoss;
    std::string what = note;
    // It should be gone already. One that did not get the request (or
    // hangs) is killed: a process crash, which must lose nothing, so it is
    // judged as one.
    if (!n.server.WaitExit(kAdminTimeout)) {
      n.server.Kill();
      n.last_stop = StopKind::kKill;
      what += " (did not exit: kill -9)";
    }
    // Only now: until it exited, it could still acknowledge writes (which
    // the power loss may then take, as its policy allows).
    acks_.RunEnding(i);
    EndFault(i);
    EndRun(i);
    Mark(mark, i, what);
    n.down_since = now;
  }
}

void Cluster::TearLogTail(int i) {
  std::string path = nodes_[i].server.dir() + "/latch.aof";
  std::ofstream f(path, std::ios::app | std::ios::binary);
  f << "*5\r\n$3\r\nSET\r\n$16\r\nlatch-chaos:lock\r\n$32\r\n0123456789";
  nodes_[i].torn = true;
}

void Cluster::Pause(const std::vector<int>& which) {
  auto now = Clock::now();
  for (int i : which) {
    nodes_[i].server.Pause();
    nodes_[i].paused_since = now;
  }
}

void Cluster::Resume(const std::vector<int>& which) {
  auto now = Clock::now();
  for (int i : which) {
    nodes_[i].server.Resume();
    events_.push_back(NodeEvent{NodeEvent::kPaused, i, nodes_[i].paused_since, now, "SIGSTOP"});
  }
}

void Cluster::ArmFault(const std::vector<int>& which, const Fault& f) {
  const bool slow = f.kind == FaultKind::kSlowDisk;
  const std::string value = slow ? std::to_string(f.delay_ms) : f.error;
  for (int i : which) {
    Node& n = nodes_[i];
    auto r = Command(i, {"DEBUG", "FAULT-IO", f.target, value}, kAdminTimeout);
    // No reply may mean it took effect at once: a failed fsync under always
    // ends the process before the reply to DEBUG FAULT-IO leaves.
    if (r && r->is_error()) continue;  // refused: nothing armed
    n.fault_armed = true;
    n.fault = f.target + (slow ? " +" + value + " ms" : " " + value);
    n.fault_event = slow ? NodeEvent::kSlowDisk : NodeEvent::kDiskFault;
    n.fault_since = Clock::now();
  }
}

void Cluster::SetFsyncDelay(int i, int64_t ms) {
  const std::string path = nodes_[i].server.dir() + "/" + kSlowFsyncFile;
  if (ms <= 0) {
    ::unlink(path.c_str());
    return;
  }
  std::ofstream(path, std::ios::trunc) << ms << "\n";
}

void Cluster::ClearFault(const std::vector<int>& which) {
  for (int i : which) {
    Command(i, {"DEBUG", "FAULT-IO", "OFF"}, kAdminTimeout);
    EndFault(i);
  }
}

void Cluster::EndFault(int i) {
  Node& n = nodes_[i];
  if (!n.fault_armed) return;
  n.fault_armed = false;
  events_.push_back(NodeEvent{n.fault_event, i, n.fault_since, Clock::now(), n.fault});
}

bool Cluster::CheckExited(int i, const Log& log) {
  Node& n = nodes_[i];
  if (n.dead || !n.server.running() || n.server.paused()) return false;
  auto status = n.server.WaitExit(Millis{0});
  if (!status) return false;
  acks_.RunEnding(i);
  // A failed fsync under appendfsync always is fatal, by design: the server
  // cannot know what reached the disk. Any other exit is a crash of its own.
  const bool fsync_fault =
      n.fault_armed && n.fault.rfind("log-fsync E", 0) == 0 && n.conf.appendfsync == "always";
  std::string note = "exited on its own (" + ExitText(*status) + ")";
  if (fsync_fault) {
    ++fsync_exits_;
    note += " after a failed fsync under appendfsync always";
  } else {
    unexpected_exits_.push_back(
        Format("node %d, %s: %s", i, note.c_str(), LastLine(n.server.LogTail(1000)).c_str()));
  }
  log(Format("node %d %s", i, note.c_str()));
  EndFault(i);
  EndRun(i);
  Mark(NodeEvent::kMarkExit, i, note);
  n.last_stop = StopKind::kExited;
  n.down_since = Clock::now();
  return true;
}

void Cluster::Supervise(const Log& log) {
  std::vector<int> exited;
  for (int i = 0; i < o_.nodes; ++i) {
    if (CheckExited(i, log)) exited.push_back(i);
  }
  if (!exited.empty()) Restart(exited, log);
}

void Cluster::Restart(const std::vector<int>& which_in, const std::vector<int>& from,
                      const std::vector<NodeChange>& changes, const Log& log) {
  const std::vector<int> which = Alive(which_in);
  if (which.empty()) return;
  const auto now = Clock::now();
  for (int i : which) {
    Node& n = nodes_[i];
    const NodeConf before = n.conf;
    NodeChange c = ChangeFor(i, from, changes);
    if (c.appendfsync) n.conf.appendfsync = *c.appendfsync;
    if (c.quarantine) {
      n.conf.quarantine = *c.quarantine;
      n.conf.quarantine_ms = c.quarantine_ms.value_or(o_.quarantine_ms);
    }
    if (c.wall_offset_ms) n.conf.wall_offset_ms = *c.wall_offset_ms;
    if (c.clock_id) n.conf.clock_id = *c.clock_id;
    if (n.conf.appendfsync != before.appendfsync || n.conf.quarantine != before.quarantine) {
      ++config_changes_;
    }
    if (n.conf.wall_offset_ms != before.wall_offset_ms) {
      Mark(NodeEvent::kMarkWall, i,
           Format("wall clock stepped by %+lld ms (now %+lld ms off)",
                  static_cast<long long>(n.conf.wall_offset_ms - before.wall_offset_ms),
                  static_cast<long long>(n.conf.wall_offset_ms)));
    }
    if (n.conf.clock_id != before.clock_id) {
      Mark(NodeEvent::kMarkClock, i, "boot clock " + n.conf.clock_id);
    }
    launch::ServerSpec spec = n.server.spec();
    spec.args = Args(n.conf);
    n.server = launch::ServerProcess(std::move(spec));
    acks_.RunStarted(i, n.conf.appendfsync);
    runs_.push_back(NodeRun{i, n.conf, now, std::nullopt, true});
  }
  std::vector<int> failed;
  for (int i : which) {
    try {
      nodes_[i].server.Spawn();
    } catch (const launch::LaunchError&) {
      // Tried again below, with the others' readiness.
    }
  }
  for (int i : which) {
    launch::ServerProcess& s = nodes_[i].server;
    if (s.running() && s.WaitReady(Millis{5000})) continue;
    // The port may be in use for a moment: try again, with pauses. The log
    // tail says why it failed for good.
    s.Kill();
    try {
      s.Restart();
    } catch (const launch::LaunchError&) {
      failed.push_back(i);
    }
  }
  for (int i : which) {
    Node& n = nodes_[i];
    bool repaired = false;
    if (std::find(failed.begin(), failed.end(), i) != failed.end()) {
      // It would not start: a log it cannot load, most likely. An operator
      // would cut the log at its last valid record and start again; what
      // the cut takes counts as lost.
      std::string last = LastLine(n.server.LogTail(2000));
      log(Format("node %d would not start again: %s", i, last.c_str()));
      if (RepairLog(i)) {
        try {
          n.server.Restart();
          repaired = true;
        } catch (const launch::LaunchError&) {
        }
      }
      if (repaired) {
        repaired_.push_back(Format("node %d after %s (%s): %s; repaired with latch-check-aof --fix",
                                   i, Cause().c_str(), StopName(n.last_stop), last.c_str()));
        Mark(NodeEvent::kMarkRepair, i, "log repaired with latch-check-aof --fix: " + last);
        log(Format("node %d started again after latch-check-aof --fix", i));
      } else {
        n.dead = true;
        EndRun(i);
        const auto t = Clock::now();
        events_.push_back(NodeEvent{NodeEvent::kDown, i, n.down_since, t, "down"});
        events_.push_back(
            NodeEvent{NodeEvent::kDead, i, t, Clock::time_point::max(), "would not start again"});
        dead_.push_back(Format("node %d after %s (%s): %s", i, Cause().c_str(),
                               StopName(n.last_stop), last.c_str()));
        log(acks_.NodeGone(i, "would not start again (" + Cause() + ")"));
        continue;
      }
    }
    ++restarts_;
    auto ready = Clock::now();
    events_.push_back(NodeEvent{NodeEvent::kDown, i, n.down_since, ready, "down"});
    auto info = Info(i);
    int64_t q = 0;
    if (auto v = Field(info, "quarantine_remaining_ms")) q = latch::ParseInt64(*v).value_or(0);
    if (q != 0) {
      // -1: until an operator ends it; drawn to the end of the run.
      ++quarantines_;
      auto until = q > 0 ? ready + Millis{q} : Clock::time_point::max();
      events_.push_back(NodeEvent{NodeEvent::kQuarantine, i, ready, until,
                                  q > 0 ? "quarantine " + std::to_string(q) + " ms"
                                        : std::string("quarantine until an operator ends it")});
    }
    if (n.torn) {
      n.torn = false;
      if (Field(info, "latch_aof_truncated_at_load")) ++torn_cut_;
    }
    // A replayed lock must not outlive what the node could have granted: a
    // wall-clock step between write and replay must not lengthen it.
    if (auto r = Command(i, {"PTTL", kKey}, kAdminTimeout);
        r && r->type == resp::Reply::Type::kInteger) {
      longest_pttl_ = std::max(longest_pttl_, r->integer);
      if (r->integer > o_.ttl.count()) {
        // Longer than any lease it granted: the replay moved the lock's end
        // (a wall-clock step, another clock). Up to the horizon it is safe.
        log(Format("node %d after %s: the replayed lock's PTTL is %lld ms, over the TTL", i,
                   Cause().c_str(), static_cast<long long>(r->integer)));
      }
      if (r->integer > 2 * o_.ttl.count() + 10'000) {
        lengthened_.push_back(Format("node %d after %s: the lock's PTTL is %lld ms (TTL %lld ms)",
                                     i, Cause().c_str(), static_cast<long long>(r->integer),
                                     static_cast<long long>(o_.ttl.count())));
      }
    }
    auto line = acks_.Verify(
        i, n.last_stop, repaired ? "log repaired after " + Cause() : Cause(), n.down_since,
        [&](const std::vector<int64_t>& ns) { return ReadBack(i, ns); }, repaired);
    if (line) log(*line);
  }
}

std::string Cluster::Cause() const {
  return current_ ? FaultName(*current_) : "an exit of its own";
}

bool Cluster::RepairLog(int i) {
  if (o_.check_aof.empty()) return false;
  const Node& n = nodes_[i];
  // Prepared before fork: the child of a threaded parent may only exec.
  std::vector<std::string> args = {o_.check_aof, "--fix", "--yes", n.server.dir() + "/latch.aof"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = n.server.dir() + "/check-aof.log";
  int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fd);
  if (pid < 0) return false;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void Cluster::VerifyAll(const Log& log) {
  for (int i = 0; i < o_.nodes; ++i) {
    if (nodes_[i].dead || !nodes_[i].server.running()) continue;
    auto line = acks_.Verify(i, StopKind::kNone, "end of run", Clock::now(),
                             [&](const std::vector<int64_t>& ns) { return ReadBack(i, ns); });
    if (line) log(*line);
  }
}

std::optional<std::vector<bool>> Cluster::ReadBack(int i, const std::vector<int64_t>& ns) {
  std::unique_ptr<latch::NodeSet> conn = o_.Connect({endpoints_[i]});
  std::vector<bool> out;
  out.reserve(ns.size());
  constexpr size_t kChunk = 1000;  // GETs per pipelined round
  for (size_t at = 0; at < ns.size(); at += kChunk) {
    size_t count = std::min(kChunk, ns.size() - at);
    std::string req;
    for (size_t k = 0; k < count; ++k) {
      resp::AppendRequest(req, {"GET", AckKey(i, ns[at + k])});
    }
    auto r = conn->Round(req, count, kAdminTimeout);
    if (!r[0].ok()) return std::nullopt;
    for (size_t k = 0; k < count; ++k) {
      const resp::Reply& reply = r[0].replies[k];
      if (reply.is_error()) return std::nullopt;  // LOADING, …: not readable yet
      out.push_back(reply.type == resp::Reply::Type::kBulk &&
                    reply.str == std::to_string(ns[at + k]));
    }
  }
  return out;
}

std::optional<resp::Reply> Cluster::Command(int i, std::initializer_list<std::string_view> args,
                                            Millis timeout) {
  std::unique_ptr<latch::NodeSet> probe = o_.Connect({endpoints_[i]});
  std::string req;
  latch::resp::AppendRequest(req, args);
  auto r = probe->Round(req, 1, timeout);
  if (!r[0].ok()) return std::nullopt;
  return r[0].replies[0];
}

std::string Cluster::Info(int i) {
  auto r = Command(i, {"INFO", "all"}, kAdminTimeout);
  return r ? r->str : "";
}

std::optional<std::string> Cluster::Field(const std::string& info, const std::string& name) {
  std::istringstream in(info);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(name + ":", 0) == 0) return line.substr(name.size() + 1);
  }
  return std::nullopt;
}

void Cluster::Mark(NodeEvent::Kind k, int i, const std::string& note) {
  auto now = Clock::now();
  events_.push_back(NodeEvent{k, i, now, now, note});
}

}  // namespace latch::chaos
