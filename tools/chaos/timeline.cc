#include "tools/chaos/timeline.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include "tools/chaos/schedule.h"

namespace latch::chaos {

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
  std::printf("quarantine refusals seen by clients: %lld\n",
              static_cast<long long>(st.quarantine_answers));
  std::map<FaultKind, int> by_kind;
  for (const FaultRecord& f : run.faults) ++by_kind[f.kind];
  std::string kinds;
  for (const auto& [kind, count] : by_kind) {
    kinds += (kinds.empty() ? "" : ", ") + std::to_string(count) + " " + FaultName(kind);
  }
  std::printf("faults injected: %zu (%s)\n", run.faults.size(),
              kinds.empty() ? "none" : kinds.c_str());
  std::printf("node restarts: %d, restart quarantines: %d, torn log tails cut at load: %d\n",
              run.restarts, run.quarantines, run.torn_tails_cut);
  const auto t0 = run.t0;
  int k = 0;
  for (const Violation& v : run.violations) {
    ++k;
    // The last fault before the overlap began: usually the cause.
    const FaultRecord* cause = nullptr;
    for (const FaultRecord& f : run.faults) {
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
}

void WriteTimeline(const std::string& path, const Options& o, const RunRecord& run) {
  const Clock::time_point t0 = run.t0, t_end = run.t_end;
  const std::vector<Hold>& holds = run.holds;
  const std::vector<NodeEvent>& events = run.events;
  const std::vector<FaultRecord>& faults = run.faults;
  const std::vector<Violation>& violations = run.violations;
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

}  // namespace latch::chaos
