#include "tools/chaos/page.h"

#include "tools/chaos/schedule.h"
#include "tools/history/page.h"

namespace latch::chaos {

void WritePage(const std::string& path, const Options& o, const RunRecord& run) {
  // The page's time line is in ms; the harness's clock is one monotonic
  // clock, so the run's time zero maps to 0.
  auto ms = [&](Clock::time_point t) { return Secs(t - run.t0) * 1000.0; };
  history::PageModel m;
  m.title = Format("latch-chaos: %d nodes, %d workers, seed %llu, quarantine %s, appendfsync %s",
                   o.nodes, o.workers, static_cast<unsigned long long>(o.seed),
                   o.quarantine.c_str(), o.appendfsync.c_str());
  m.summary.push_back(Format("%zu holds, %zu faults, ttl %lld ms, %.1f s", run.holds.size(),
                             run.faults.size(), static_cast<long long>(o.ttl.count()),
                             Secs(run.t_end - run.t0)));
  m.summary.push_back(
      "A worker holds the lock from the moment acquire returned until its validity ended or it "
      "began releasing; two holds at once are a violation.");
  m.t0 = 0;
  m.t1 = ms(run.t_end);
  for (int w = 0; w < o.workers; ++w) m.lanes.push_back({Format("worker %d", w), "workers"});
  for (int n = 0; n < o.nodes; ++n) m.lanes.push_back({Format("node %d", n), "nodes"});
  for (const Hold& h : run.holds) {
    m.bars.push_back(
        {h.worker, ms(h.granted), ms(h.end), "hold", "",
         Format("worker %d: %.3f s to %.3f s, %zu nodes%s", h.worker, ms(h.granted) / 1000,
                ms(h.end) / 1000, h.grants, h.extended ? ", extended" : "")});
    if (h.released > h.validity_end) {
      m.bars.push_back({h.worker, ms(h.validity_end), ms(h.released), "past", "",
                        Format("worker %d held on past its validity", h.worker)});
    }
  }
  for (const NodeEvent& e : run.events) {
    int lane = o.workers + e.node;
    const char* kind = e.kind == NodeEvent::kDown         ? "down"
                       : e.kind == NodeEvent::kPaused     ? "paused"
                       : e.kind == NodeEvent::kQuarantine ? "quarantine"
                                                          : nullptr;
    if (kind != nullptr) {
      m.bars.push_back(
          {lane, ms(e.start), ms(e.end), kind, "", Format("node %d: %s", e.node, e.note.c_str())});
    } else {
      const char* mark = e.kind == NodeEvent::kMarkCrash       ? "X"
                         : e.kind == NodeEvent::kMarkPowerLoss ? "P"
                                                               : "T";
      m.marks.push_back({lane, ms(e.start), mark, Format("node %d: %s", e.node, e.note.c_str())});
    }
  }
  for (const FaultRecord& f : run.faults) {
    m.marks.push_back(
        {-1, ms(f.at), "", Format("%s on nodes %s", FaultName(f.kind), NodeList(f.nodes).c_str())});
  }
  int k = 0;
  for (const Violation& v : run.violations) {
    m.violations.push_back(
        {ms(v.from),
         ms(v.to),
         {v.a->worker, v.b->worker},
         Format("V%d: workers %d and %d both held the lock from %.3f s to %.3f s", ++k, v.a->worker,
                v.b->worker, ms(v.from) / 1000, ms(v.to) / 1000)});
  }
  m.legend = {{"hold", "lock held"},        {"past", "held past validity"},
              {"down", "node down"},        {"paused", "node paused"},
              {"quarantine", "quarantine"}, {"violation", "two holders at once"}};
  if (auto err = history::WritePage(path, m)) throw HarnessError{*err};
}

}  // namespace latch::chaos
