#include "tools/chaos/cluster.h"

#include <fstream>
#include <sstream>
#include <thread>

#include "protocol/request_writer.h"
#include "protocol/text.h"

namespace latch::chaos {

Cluster::Cluster(const Options& o, std::string root) : o_(o), root_(std::move(root)) {}

void Cluster::StartAll() {
  for (int i = 0; i < o_.nodes; ++i) {
    launch::ServerSpec spec;
    spec.binary = o_.server;
    spec.dir = root_ + "/node" + std::to_string(i);
    spec.args = {
        "--appendonly",           o_.appendonly, "--appendfsync",  o_.appendfsync,
        "--quarantine",           o_.quarantine, "--max-lock-ttl", std::to_string(o_.ttl.count()),
        "--enable-debug-command", "yes"};
    nodes_.push_back(Node{launch::ServerProcess(std::move(spec)), {}, {}, false});
  }
  for (int i = 0; i < o_.nodes; ++i) {
    try {
      nodes_[i].server.Start();
    } catch (const launch::LaunchError& e) {
      throw HarnessError{"node " + std::to_string(i) + ": " + e.what()};
    }
    endpoints_.push_back(latch::Endpoint{nodes_[i].server.host(), nodes_[i].server.port()});
  }
}

void Cluster::StopAll() {
  for (Node& n : nodes_) n.server.Stop(Millis{3000});
}

FaultRecord Cluster::Inflict(const Fault& f, const std::function<bool()>& wait_for_grant,
                             const std::function<void(const std::string&)>& log) {
  FaultRecord rec{f.kind, f.nodes, Clock::now()};
  switch (f.kind) {
    case FaultKind::kCrash:
      log(Format("kill -9 node %d, down %lld ms", f.nodes[0],
                 static_cast<long long>(f.length.count())));
      Crash(f.nodes[0]);
      std::this_thread::sleep_for(f.length);
      Restart(f.nodes);
      break;
    case FaultKind::kPause: {
      log(Format("SIGSTOP nodes %s for %lld ms", NodeList(f.nodes).c_str(),
                 static_cast<long long>(f.length.count())));
      Pause(f.nodes);
      const auto until = Clock::now() + f.length;
      while (!g_interrupted && Clock::now() < until) {
        std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), Millis{50}));
      }
      Resume(f.nodes);
      break;
    }
    case FaultKind::kPowerLoss:
    case FaultKind::kTornWrite:
      log(Format("%s on node %d, down %lld ms", FaultName(f.kind), f.nodes[0],
                 static_cast<long long>(f.length.count())));
      PowerLoss(f.nodes,
                f.kind == FaultKind::kTornWrite ? NodeEvent::kMarkTorn : NodeEvent::kMarkPowerLoss,
                FaultName(f.kind));
      if (f.kind == FaultKind::kTornWrite) TearLogTail(f.nodes[0]);
      std::this_thread::sleep_for(f.length);
      Restart(f.nodes);
      break;
    case FaultKind::kAmnesia: {
      // Strike right after a grant: the new holder's lock is then the one
      // the majority forgets.
      bool granted = wait_for_grant();
      rec.at = Clock::now();
      log(Format("power loss of nodes %s %s", NodeList(f.nodes).c_str(),
                 granted ? "right after a grant" : "(no grant came)"));
      PowerLoss(f.nodes, NodeEvent::kMarkPowerLoss, "majority power loss");
      Restart(f.nodes);
      break;
    }
  }
  return rec;
}

void Cluster::Crash(int i) {
  Node& n = nodes_[i];
  n.server.Kill();
  Mark(NodeEvent::kMarkCrash, i, "kill -9");
  n.down_since = Clock::now();
}

void Cluster::PowerLoss(const std::vector<int>& which, NodeEvent::Kind mark, const char* note) {
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
    if (!nodes_[i].server.WaitExit(Millis{2000})) nodes_[i].server.Kill();
    Mark(mark, i, note);
    nodes_[i].down_since = now;
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

void Cluster::Restart(const std::vector<int>& which) {
  try {
    for (int i : which) nodes_[i].server.Spawn();
    for (int i : which) {
      launch::ServerProcess& s = nodes_[i].server;
      if (!s.WaitReady(Millis{5000})) {
        // The port may be in use for a moment: try again, with pauses.
        s.Kill();
        s.Restart();
      }
    }
  } catch (const launch::LaunchError& e) {
    throw HarnessError{std::string("a node did not restart: ") + e.what()};
  }
  for (int i : which) {
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

std::string Cluster::Info(int i) {
  latch::NodeSet probe({endpoints_[i]});
  std::string req;
  latch::resp::AppendRequest(req, {"INFO", "all"});
  auto r = probe.Round(req, 1, std::chrono::milliseconds(500));
  return r[0].ok() ? r[0].replies[0].str : "";
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
