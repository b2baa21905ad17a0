// Cluster::Inflict: how each fault of the schedule (schedule.h) is done to
// the nodes — kills, pauses, power losses, disk faults, clock faults — and
// how long it lasts. The rest of the cluster (starting, stopping, restarts,
// reading back) is in cluster.cc; this file holds the faults themselves.
#include <thread>

#include "tools/chaos/cluster.h"

namespace latch::chaos {

FaultRecord Cluster::Inflict(const Fault& f, const WaitForGrant& wait_for_grant, const Log& log) {
  const std::vector<int> nodes = Alive(f.nodes);
  FaultRecord rec{f.kind, nodes, Clock::now()};
  if (nodes.empty()) return rec;
  current_ = f.kind;
  auto sleep = [](Millis d) {
    const auto until = Clock::now() + d;
    while (!g_interrupted && Clock::now() < until) {
      std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), Millis{50}));
    }
  };
  auto strike_after_grant = [&](Millis max) {
    // Strike right after a grant: the new holder's lock is then the one
    // the nodes forget.
    bool granted = wait_for_grant(max);
    rec.at = Clock::now();
    return granted ? "right after a grant" : "(no grant came)";
  };
  switch (f.kind) {
    case FaultKind::kCrash:
    case FaultKind::kCleanRestart:
    case FaultKind::kLogLost:
      log(Format("%s on nodes %s, down %lld ms", FaultName(f.kind), NodeList(nodes).c_str(),
                 static_cast<long long>(f.length.count())));
      StopNodes(nodes, f.kind == FaultKind::kCrash ? StopKind::kKill : f.stop);
      sleep(f.length);
      Restart(nodes, f.nodes, f.changes, log);
      break;
    case FaultKind::kPause:
      log(Format("SIGSTOP nodes %s for %lld ms", NodeList(nodes).c_str(),
                 static_cast<long long>(f.length.count())));
      Pause(nodes);
      sleep(f.length);
      Resume(nodes);
      break;
    case FaultKind::kPowerLoss:
    case FaultKind::kTornWrite:
      log(Format("%s on node %s, down %lld ms", FaultName(f.kind), NodeList(nodes).c_str(),
                 static_cast<long long>(f.length.count())));
      PowerLoss(nodes,
                f.kind == FaultKind::kTornWrite ? NodeEvent::kMarkTorn : NodeEvent::kMarkPowerLoss,
                FaultName(f.kind));
      if (f.kind == FaultKind::kTornWrite) {
        for (int i : nodes) TearLogTail(i);
      }
      sleep(f.length);
      Restart(nodes, f.nodes, f.changes, log);
      break;
    case FaultKind::kAmnesia: {
      const char* when = strike_after_grant(3 * o_.ttl);
      log(Format("power loss of nodes %s %s", NodeList(nodes).c_str(), when));
      PowerLoss(nodes, NodeEvent::kMarkPowerLoss, "majority power loss");
      Restart(nodes, f.nodes, f.changes, log);
      break;
    }
    case FaultKind::kRestartInQuarantine: {
      const char* when = strike_after_grant(3 * o_.ttl);
      log(Format("power loss of nodes %s %s; %s %lld ms after their restart",
                 NodeList(nodes).c_str(), when, StopName(f.second_stop),
                 static_cast<long long>(f.then.count())));
      PowerLoss(nodes, NodeEvent::kMarkPowerLoss, "majority power loss");
      Restart(nodes, f.nodes, f.changes, log);
      sleep(f.then);
      // The quarantine the power loss started is running now: a restart,
      // clean or not, must carry it on.
      StopNodes(Alive(nodes), f.second_stop);
      Restart(Alive(nodes), f.nodes, f.changes_again, log);
      break;
    }
    case FaultKind::kDiskError:
    case FaultKind::kSlowDisk: {
      log(Format("%s", Describe(f).c_str()));
      ArmFault(nodes, f);
      if (f.stop == StopKind::kNone) {
        // Let it last, watching for nodes that give up (a failed fsync
        // under always ends the process, by design).
        const auto until = Clock::now() + f.length;
        std::vector<int> exited;
        while (!g_interrupted && Clock::now() < until) {
          std::this_thread::sleep_for(Millis{50});
          for (int i : nodes) {
            if (CheckExited(i, log)) exited.push_back(i);
          }
        }
        std::vector<int> running;
        for (int i : nodes) {
          if (nodes_[i].server.running()) running.push_back(i);
        }
        ClearFault(running);
        log(Format("disk fault cleared on nodes %s", NodeList(running).c_str()));
        Restart(exited, log);
      } else {
        const char* when = strike_after_grant(f.length);
        log(Format("%s of nodes %s while the disk fault lasts, %s", StopName(f.stop),
                   NodeList(nodes).c_str(), when));
        StopNodes(nodes, f.stop);
        sleep(f.downtime);
        Restart(nodes, f.nodes, f.changes, log);
      }
      break;
    }
    case FaultKind::kSlowFsync: {
      // The preloaded library (slow_fsync.cc) reads the delay from a file
      // in the server's directory at every fsync.
      log(Format("%s", Describe(f).c_str()));
      const auto since = Clock::now();
      for (int i : nodes) SetFsyncDelay(i, f.delay_ms);
      const auto until = Clock::now() + f.length;
      std::vector<int> exited;
      while (!g_interrupted && Clock::now() < until) {
        std::this_thread::sleep_for(Millis{50});
        for (int i : nodes) {
          if (CheckExited(i, log)) exited.push_back(i);
        }
      }
      // The nodes die while their fsyncs still wait: what they acknowledged
      // meanwhile must survive (a process crash loses nothing, whatever the
      // policy). The next run starts with a normal disk.
      if (f.stop != StopKind::kNone) StopNodes(nodes, f.stop);
      for (int i : nodes) {
        SetFsyncDelay(i, 0);
        events_.push_back(NodeEvent{NodeEvent::kSlowDisk, i, since, Clock::now(),
                                    "every fsync +" + std::to_string(f.delay_ms) + " ms"});
      }
      if (f.stop != StopKind::kNone) {
        sleep(f.downtime);
        Restart(nodes, f.nodes, f.changes, log);
      } else {
        Restart(exited, log);
      }
      break;
    }
    case FaultKind::kWallStep:
    case FaultKind::kClockChange: {
      const char* when = strike_after_grant(3 * o_.ttl);
      log(Format("%s of nodes %s %s, for a %s, down %lld ms", StopName(f.stop),
                 NodeList(nodes).c_str(), when, FaultName(f.kind),
                 static_cast<long long>(f.length.count())));
      StopNodes(nodes, f.stop);
      sleep(f.length);
      Restart(nodes, f.nodes, f.changes, log);
      break;
    }
  }
  current_.reset();
  return rec;
}

}  // namespace latch::chaos
