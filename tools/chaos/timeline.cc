#include "tools/chaos/timeline.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>

#include "tools/chaos/schedule.h"

namespace latch::chaos {

bool ExplainedByNever(const Violation& v, const std::vector<NodeRun>& runs, Millis ttl) {
  const uint32_t shared = v.a->granted_by & v.b->granted_by;
  if (shared == 0) return false;  // unknown (majorities always share a node)
  // The first lock reached its nodes up to one round (ttl/20 at most)
  // before acquire returned.
  const Clock::time_point from = v.a->granted - ttl / 20;
  for (int n = 0; n < 32; ++n) {
    if (!(shared & (1u << n))) continue;
    const NodeRun* active = nullptr;  // the run that granted the second lock
    bool restarted = false;
    for (const NodeRun& r : runs) {
      if (r.node != n || r.start > v.from) continue;
      active = &r;  // runs are in start order
      restarted |= r.restart && r.start >= from;
    }
    if (active == nullptr || !restarted || active->conf.quarantine != "never") return false;
  }
  return true;
}

bool RunFailed(const RunRecord& run) {
  return !run.violations.empty() || (run.acks != nullptr && run.acks->lost_unallowed() > 0);
}

namespace {

template <typename Key>
std::string Counts(const std::map<Key, int64_t>& m, const std::function<std::string(Key)>& name) {
  std::string s;
  for (const auto& [k, count] : m) {
    s += (s.empty() ? "" : ", ") + std::to_string(count) + " " + name(k);
  }
  return s.empty() ? "none" : s;
}

// How long the restart quarantines refused grants, in all: each restart's
// quarantine (its remaining time as INFO latch gave it at the restart) up to
// its end, the node's next stop, or the end of the run, whichever is first;
// one "until an operator ends it" counts to the end of the run.
struct QuarantineTotals {
  int64_t count = 0;
  double seconds = 0;
  double longest = 0;
};

QuarantineTotals SumQuarantines(const RunRecord& run) {
  QuarantineTotals t;
  for (const NodeEvent& q : run.events) {
    if (q.kind != NodeEvent::kQuarantine) continue;
    Clock::time_point end = std::min(q.end, run.t_end);
    for (const NodeEvent& d : run.events) {
      if ((d.kind == NodeEvent::kDown || d.kind == NodeEvent::kDead) && d.node == q.node &&
          d.start >= q.start && d.start < end) {
        end = d.start;
      }
    }
    const double s = end > q.start ? Secs(end - q.start) : 0;
    ++t.count;
    t.seconds += s;
    t.longest = std::max(t.longest, s);
  }
  return t;
}

}  // namespace

void PrintReport(const Options& o, const RunRecord& run) {
  const WorkerStats& st = run.stats;
  std::printf(
      "acquisitions: %lld (by %d workers; %lld held on past validity, %lld expired "
      "before use)\n",
      static_cast<long long>(st.acquisitions), o.workers, static_cast<long long>(st.past_validity),
      static_cast<long long>(st.expired_before_use));
  std::printf("attempts: %lld, contended attempts: %lld (a node said the key was taken)\n",
              static_cast<long long>(st.attempts), static_cast<long long>(st.contended));
  std::printf("extends: %lld succeeded, %lld failed\n", static_cast<long long>(st.extends_ok),
              static_cast<long long>(st.extends_failed));
  std::printf("quarantine refusals seen by clients: %lld, MISCONF refusals: %lld\n",
              static_cast<long long>(st.quarantine_answers),
              static_cast<long long>(st.misconf_answers));
  std::map<FaultKind, int64_t> by_kind;
  for (const FaultRecord& f : run.faults) ++by_kind[f.kind];
  auto kind_name = [](FaultKind k) { return std::string(FaultName(k)); };
  std::printf("faults injected: %zu (%s)\n", run.faults.size(),
              Counts<FaultKind>(by_kind, kind_name).c_str());
  int skipped = 0;
  std::map<FaultKind, int64_t> skipped_by;
  for (const auto& [k, n] : run.skipped) {
    skipped += n;
    skipped_by[k] = n;
  }
  if (skipped > 0) {
    std::string why;
    for (const auto& [k, knob] : run.skipped_for) {
      why += (why.empty() ? "" : "; ") + std::string(FaultName(k)) + " needs " + knob;
    }
    std::printf("faults skipped: %d (%s), the server lacks the knobs (%s)\n", skipped,
                Counts<FaultKind>(skipped_by, kind_name).c_str(), why.c_str());
  } else {
    std::printf("faults skipped: 0\n");
  }
  std::printf("server knobs: DEBUG FAULT-IO %s, --debug-wall-offset-ms %s, --debug-clock-id %s\n",
              run.knobs.fault_io ? "yes" : "no", run.knobs.wall_offset ? "yes" : "no",
              run.knobs.clock_id ? "yes" : "no");
  if (const Cluster* c = run.cluster) {
    std::printf("node restarts: %d, restart quarantines: %d, torn log tails cut at load: %d\n",
                c->restarts(), c->quarantines(), c->torn_tails_cut());
    const QuarantineTotals qt = SumQuarantines(run);
    std::printf(
        "restarts that quarantined: %lld of %d, %.1f s of quarantine in all (longest %.1f s; "
        "each cut at the node's next stop or the end of the run)\n",
        static_cast<long long>(qt.count), c->restarts(), qt.seconds, qt.longest);
    if (!o.vary_appendfsync.empty() || !o.vary_quarantine.empty()) {
      std::map<std::string, int64_t> fsync_runs, mode_runs;
      for (const NodeRun& r : run.runs) {
        ++fsync_runs[r.conf.appendfsync];
        ++mode_runs[r.conf.quarantine];
      }
      auto str = [](std::string k) { return k; };
      std::printf(
          "configuration changes at restart: %d; node runs by appendfsync: %s; by quarantine: "
          "%s\n",
          c->config_changes(), Counts<std::string>(fsync_runs, str).c_str(),
          Counts<std::string>(mode_runs, str).c_str());
    }
    std::printf(
        "node exits on their own: %d after a failed fsync under appendfsync always (by design), "
        "%zu others\n",
        c->fsync_exits(), c->unexpected_exits().size());
    for (const std::string& e : c->unexpected_exits()) std::printf("  exit: %s\n", e.c_str());
    std::printf(
        "nodes whose log would not load: %zu repaired with latch-check-aof --fix, %zu left "
        "down\n",
        c->repaired().size(), c->dead().size());
    for (size_t i = 0; i < c->repaired().size() && i < 10; ++i) {
      std::printf("  %s\n", c->repaired()[i].c_str());
    }
    if (c->repaired().size() > 10) std::printf("  … %zu more\n", c->repaired().size() - 10);
    for (const std::string& d : c->dead()) std::printf("  down: %s\n", d.c_str());
    std::printf("locks lengthened at replay: %zu (longest PTTL right after a restart: %lld ms)\n",
                c->lengthened().size(), static_cast<long long>(c->longest_pttl_after_restart()));
    for (const std::string& l : c->lengthened()) std::printf("  %s\n", l.c_str());
  }
  if (const AckBook* a = run.acks) {
    const AckBook::WriterStats& w = a->writer_stats();
    std::printf(
        "rewrites: %lld started (%lld transactions with BGREWRITEAOF inside), %lld "
        "refused inside a transaction, %lld given up after 5 s of refusals%s%s\n",
        static_cast<long long>(w.rewrites), static_cast<long long>(w.rewrites_in_multi),
        static_cast<long long>(w.rewrites_refused), static_cast<long long>(w.rewrites_given_up),
        w.last_refusal.empty() ? "" : "; last refusal: ", w.last_refusal.c_str());
    if (!a->tracking()) {
      std::printf("acknowledged writes: not tracked (appendonly no forgets them by design)\n");
      std::printf("acknowledged writes lost: 0 (not tracked)\n");
    } else {
      auto str = [](std::string k) { return k; };
      std::printf(
          "acknowledged writes: %lld (%lld sent, %lld refused (%s), %lld unanswered); %lld checks "
          "read back %lld writes in %.2f s (%lld checks could not read the node)\n",
          static_cast<long long>(a->acked()), static_cast<long long>(w.sent),
          static_cast<long long>(w.refused), Counts<std::string>(w.refusals, str).c_str(),
          static_cast<long long>(w.unknown), static_cast<long long>(a->checks()),
          static_cast<long long>(a->checked_writes()), Secs(a->check_time()),
          static_cast<long long>(a->unreadable_checks()));
      std::printf("acknowledged writes lost after a power loss under everysec/no (allowed): %lld",
                  static_cast<long long>(a->lost_allowed()));
      if (a->lost_allowed() > 0) {
        std::printf(" (%s; the oldest acknowledged %.0f ms before its power loss)",
                    Counts<std::string>(a->allowed_by_cause(), str).c_str(),
                    std::chrono::duration<double, std::milli>(a->oldest_allowed()).count());
      }
      std::printf("\n");
      std::printf("acknowledged writes lost: %lld (allowed: %lld)\n",
                  static_cast<long long>(a->lost_unallowed()),
                  static_cast<long long>(a->lost_allowed()));
      if (a->lost_unallowed() > 0) {
        std::printf("  lost by fault: %s\n",
                    Counts<std::string>(a->unallowed_by_cause(), str).c_str());
      }
      // The first ones in full; the rest are in the --verbose log.
      const size_t shown = std::min<size_t>(a->findings().size(), 10);
      for (size_t i = 0; i < shown; ++i) std::printf("  lost: %s\n", a->findings()[i].c_str());
      if (a->findings().size() > shown) {
        std::printf("  lost: … %zu more losses\n", a->findings().size() - shown);
      }
    }
  }
  const auto t0 = run.t0;
  bool any_never = false;
  for (const NodeRun& r : run.runs) any_never |= r.conf.quarantine == "never";
  size_t with_never = 0;
  std::map<FaultKind, int64_t> by_cause;
  int k = 0;
  for (const Violation& v : run.violations) {
    ++k;
    // The last fault before the overlap began: usually the cause.
    const FaultRecord* cause = nullptr;
    for (const FaultRecord& f : run.faults) {
      if (f.at <= v.from) cause = &f;
    }
    if (cause) ++by_cause[cause->kind];
    const bool never = ExplainedByNever(v, run.runs, o.ttl);
    with_never += never;
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
    std::vector<int> shared;
    for (int n = 0; n < o.nodes; ++n) {
      if (v.a->granted_by & v.b->granted_by & (1u << n)) shared.push_back(n);
    }
    std::printf("; granted by both: node%s %s", shared.size() == 1 ? "" : "s",
                NodeList(shared).c_str());
    if (never) std::printf(", each restarted into quarantine never since the first grant");
    std::printf("\n");
  }
  if (!run.violations.empty()) {
    std::printf("violations by the last fault before them: %s\n",
                Counts<FaultKind>(by_cause, kind_name).c_str());
  }
  if (any_never) {
    std::printf(
        "violations explained by quarantine never (every node that granted both had restarted "
        "into never since the first grant): %zu; others: %zu\n",
        with_never, run.violations.size() - with_never);
  }
}

void WriteTimeline(const std::string& path, const Options& o, const RunRecord& run) {
  const Clock::time_point t0 = run.t0, t_end = run.t_end;
  const std::vector<Hold>& holds = run.holds;
  const std::vector<NodeEvent>& events = run.events;
  const std::vector<FaultRecord>& faults = run.faults;
  const std::vector<Violation>& violations = run.violations;
  const double total = std::max(Secs(t_end - t0), 1.0);
  const double pxs = std::clamp(2400.0 / total, 40.0, 200.0);  // pixels per second
  const double left = 120, lane = 20, top = 86;
  const int lanes = o.workers + o.nodes;
  const double width = left + total * pxs + 30;
  const double height = top + lanes * lane + 60;
  // Intervals still open at the end (a quarantine without end, a node that
  // would not start again) are drawn to the end.
  auto X = [&](Clock::time_point t) { return left + Secs(std::min(t, t_end) - t0) * pxs; };
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
  legend("#ad1457", "disk error");
  legend("#ffd54f", "slow disk");
  legend("#8e24aa", "run with quarantine never");
  legend("#000", "would not start again");
  Appendf(s,
          "<text x=\"8\" y=\"56\">marks: X kill -9, P power loss, T torn log tail, S SIGTERM, "
          "E exit of its own, W wall-clock step, B boot-id change, L log lost, R log repaired; "
          "dashed red "
          "line: majority power loss after a grant</text>\n");
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
      case NodeEvent::kDiskFault:
        color = "#ad1457";
        break;
      case NodeEvent::kSlowDisk:
        color = "#ffd54f";
        break;
      case NodeEvent::kDead:
        color = "#000";
        break;
      case NodeEvent::kMarkClean:
        mark = "S";
        break;
      case NodeEvent::kMarkExit:
        mark = "E";
        break;
      case NodeEvent::kMarkWall:
        mark = "W";
        break;
      case NodeEvent::kMarkClock:
        mark = "B";
        break;
      case NodeEvent::kMarkLogLost:
        mark = "L";
        break;
      case NodeEvent::kMarkRepair:
        mark = "R";
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
              e.note.c_str(), Secs(e.start - t0), Secs(std::min(e.end, t_end) - t0));
    } else {
      Appendf(s,
              "<text x=\"%.2f\" y=\"%.0f\" fill=\"#b00\" font-weight=\"bold\" font-size=\"13\" "
              "text-anchor=\"end\">%s<title>node %d: %s at %.3f s</title></text>\n",
              X(e.start) - 1, y + 12, mark, e.node, e.note.c_str(), Secs(e.start - t0));
    }
  }
  // Runs with quarantine never: a thin bar along the bottom of the lane.
  for (const NodeRun& r : run.runs) {
    if (r.conf.quarantine != "never") continue;
    const Clock::time_point end = r.end.value_or(t_end);
    Appendf(s,
            "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"3\" fill=\"#8e24aa\">"
            "<title>node %d: quarantine never, %.3f s to %.3f s</title></rect>\n",
            X(r.start), node_y(r.node) + lane - 3, std::max(X(end) - X(r.start), 1.0), r.node,
            Secs(r.start - t0), Secs(std::min(end, t_end) - t0));
  }
  for (const FaultRecord& f : faults) {
    if (f.kind != FaultKind::kAmnesia && f.kind != FaultKind::kRestartInQuarantine) continue;
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

}  // namespace latch::chaos
