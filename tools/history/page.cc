#include "tools/history/page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

namespace latch::history {

namespace {

std::string Esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

std::string Secs(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f s", ms / 1000.0);
  return buf;
}

std::string ShortToken(const std::string& t) {
  return t.size() <= 12 ? t : t.substr(0, 10) + "…";
}

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 16px; color: #222; }
h1 { font-size: 18px; margin: 0 0 6px 0; }
p.summary { margin: 2px 0; font-size: 13px; }
#verdict { display: inline-block; margin: 8px 0; padding: 4px 10px; font-weight: bold; border-radius: 4px; }
#verdict.bad { background: #fde0df; color: #b71c1c; }
#verdict.good { background: #e3f4e1; color: #1b5e20; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 14px; height: 10px; margin-right: 4px; vertical-align: middle; }
.timeline { overflow-x: auto; border: 1px solid #ddd; margin: 8px 0; }
svg text { font-size: 11px; }
rect.hold { fill: #4a7fc1; }
rect.claim { fill: none; stroke: #4a7fc1; stroke-dasharray: 3,2; }
rect.unsupported { fill: #f5a623; }
rect.lease { opacity: 0.85; }
rect.promise { fill: none; stroke: #555; stroke-dasharray: 2,2; }
rect.down { fill: #444; }
rect.paused { fill: #9e9e9e; }
rect.quarantine { fill: #f5a623; }
rect.past { fill: #c8c8c8; }
rect.violation { fill: #e53935; }
rect.band { fill: #e53935; opacity: 0.12; }
rect.band.focus { opacity: 0.35; }
line.mark { stroke: #b00; stroke-dasharray: 4,3; }
text.mark { fill: #b00; font-weight: bold; }
text.vlabel { fill: #e53935; font-weight: bold; }
ol#violations li { color: #b71c1c; margin: 4px 0; cursor: pointer; font-size: 13px; }
)";

// Checks that the picture and the list agree, so that a browser test (and a
// reader) can tell the page rendered whole; any script error is recorded on
// the body too.
constexpr const char* kScript = R"(
window.addEventListener('error', function (e) {
  document.body.setAttribute('data-error', String(e.message));
});
(function () {
  var bands = document.querySelectorAll('rect.band');
  var items = document.querySelectorAll('ol#violations li');
  var shown = document.getElementById('shown');
  shown.textContent = bands.length + ' violation' + (bands.length === 1 ? '' : 's') +
      ' drawn, ' + items.length + ' listed';
  var timeline = document.querySelector('.timeline');
  function show(band) {
    bands.forEach(function (b) { b.classList.remove('focus'); });
    if (!band) return;
    band.classList.add('focus');
    // The band in view, a little of what led to it on its left.
    var x = Number(band.getAttribute('x'));
    timeline.scrollLeft = Math.max(0, x - Math.min(300, timeline.clientWidth / 3));
  }
  items.forEach(function (li) {
    li.addEventListener('click', function () {
      show(document.getElementById('band-' + li.getAttribute('data-n')));
    });
  });
  if (bands.length > 0) show(bands[0]);
  // For a browser test: whether the first violation is in the visible part
  // of the timeline (it may be seconds to the right on a long run).
  if (bands.length > 0) {
    var bx = Number(bands[0].getAttribute('x'));
    var seen = bx >= timeline.scrollLeft && bx < timeline.scrollLeft + timeline.clientWidth;
    document.body.setAttribute('data-violation-in-view', seen ? 'yes' : 'no');
  }
  document.body.setAttribute('data-rendered', bands.length === items.length ? 'ok' : 'mismatch');
})();
)";

}  // namespace

std::string TokenColor(const std::string& token) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : token) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  char buf[40];
  std::snprintf(buf, sizeof(buf), "hsl(%u, 55%%, 55%%)", h % 360);
  return buf;
}

PageModel ModelFromReport(const Report& r, const std::string& title) {
  PageModel m;
  m.title = title;
  m.t0 = r.t0;
  m.t1 = std::max(r.t1, r.t0 + 1);
  char buf[256];
  std::snprintf(buf, sizeof(buf), "%zu nodes (a lock needs %d), %zu clients%s, %.1f s",
                r.nodes.size(), r.quorum, r.clients.size(),
                r.have_clients ? "" : " (no client history: one lane per token)",
                (m.t1 - m.t0) / 1000.0);
  m.summary.push_back(buf);
  m.summary.push_back(
      "A client holds the lock while it claims it and a majority of nodes promised its token a "
      "live lease (granted, not released, within its TTL in real time).");
  std::map<std::string, int> lane_of;
  auto lane = [&](const std::string& who, const std::string& group) {
    auto [it, fresh] = lane_of.emplace(group + "\n" + who, static_cast<int>(m.lanes.size()));
    if (fresh) m.lanes.push_back({who, group});
    return it->second;
  };
  if (r.have_clients) {
    for (const std::string& c : r.clients) lane("client " + c, "clients");
  }
  for (const Interval& h : r.holds) {
    if (!r.have_clients) lane(h.who, "tokens");
  }
  // Nodes by the index the command line uses (latch-fixture kill 1), in
  // that order, with the address beside it.
  for (const std::string& n : r.nodes) lane(r.NodeName(n), "nodes");
  auto node_lane = [&](const std::string& n) { return lane(r.NodeName(n), "nodes"); };
  auto who_lane = [&](const Interval& i) {
    return r.have_clients ? lane("client " + i.who, "clients") : lane(i.who, "tokens");
  };
  for (const Interval& c : r.claims) {
    m.bars.push_back({lane("client " + c.who, "clients"), c.from, c.to, "claim", "",
                      c.who + " claims \"" + c.key + "\" (token " + ShortToken(c.token) +
                          "): " + Secs(c.from - r.t0) + " to " + Secs(c.to - r.t0)});
  }
  for (const Interval& h : r.holds) {
    m.bars.push_back({who_lane(h), h.from, h.to, "hold", TokenColor(h.token),
                      h.who + " holds \"" + h.key + "\" by RedLock's rules: " +
                          Secs(h.from - r.t0) + " to " + Secs(h.to - r.t0)});
  }
  for (const Interval& u : r.unsupported) {
    m.bars.push_back({who_lane(u), u.from, u.to, "unsupported", "",
                      u.who + " believed it held \"" + u.key + "\" without a majority: " +
                          Secs(u.from - r.t0) + " to " + Secs(u.to - r.t0)});
  }
  for (const Interval& s : r.node_spans) {
    m.bars.push_back({node_lane(s.who), s.from, s.to, "lease", TokenColor(s.token),
                      r.NodeName(s.who) + " held \"" + s.key + "\" = " + ShortToken(s.token) +
                          " from " + Secs(s.from - r.t0) + " to " + Secs(s.to - r.t0) + " (" +
                          s.note + ")"});
  }
  for (const Interval& p : r.promises) {
    double to = std::isinf(p.to) ? m.t1 : p.to;
    m.bars.push_back({node_lane(p.who), p.from, to, "promise", "",
                      r.NodeName(p.who) + " promised \"" + p.key + "\" to " + ShortToken(p.token) +
                          " until " + Secs(to - r.t0)});
  }
  // (The checker leaves each node's first start out: only restarts are R.)
  for (const Event& e : r.marks) {
    std::string label = e.ev == "start" ? "R" : "F";
    std::string what = e.ev == "start" ? "restart" : e.fault;
    m.marks.push_back({node_lane(e.who), e.t, label,
                       r.NodeName(e.who) + ": " + what + " at " + Secs(e.t - r.t0)});
  }
  int k = 0;
  for (const Violation& v : r.violations) {
    const Interval& a = r.holds[v.a];
    const Interval& b = r.holds[v.b];
    auto join = [&](const std::vector<std::string>& x) {
      std::string s;
      for (const std::string& n : x) s += (s.empty() ? "" : ", ") + r.NodeIndex(n);
      return s.empty() ? std::string("none") : s;
    };
    std::snprintf(buf, sizeof(buf), "V%d: ", ++k);
    m.violations.push_back({v.from,
                            v.to,
                            {who_lane(a), who_lane(b)},
                            std::string(buf) + a.who + " and " + b.who + " both held \"" + v.key +
                                "\" from " + Secs(v.from - r.t0) + " to " + Secs(v.to - r.t0) +
                                " (" + std::to_string(static_cast<long long>(v.to - v.from)) +
                                " ms). " + a.who + "'s token was live on nodes " + join(v.a_nodes) +
                                "; " + b.who + "'s on " + join(v.b_nodes) + "."});
  }
  m.legend = {{"hold", "held by RedLock's rules (colour: token)"},
              {"claim", "claimed by the client (acquired → validity end or release)"},
              {"unsupported", "claimed without a majority"},
              {"lease", "the node holds the key (colour: token)"},
              {"promise", "the node's promise (TTL in real time)"},
              {"violation", "two clients at once"}};
  return m;
}

std::string RenderPage(const PageModel& m) {
  const double span = std::max(m.t1 - m.t0, 1.0);
  const double total_s = span / 1000.0;
  // Pixels per second: the whole run in about 900 px (a laptop's window)
  // when that leaves 20 px a second or more; longer runs scroll, and the page
  // scrolls to the first violation when it opens.
  const double pxs = std::clamp(900.0 / total_s, 20.0, 600.0);
  const double left = 190, lane_h = 22, head = 26;
  // Group headings take a lane's height each.
  std::vector<double> lane_y(m.lanes.size());
  std::vector<std::pair<double, std::string>> headings;
  double y = head;
  for (size_t i = 0; i < m.lanes.size(); ++i) {
    if (i == 0 || m.lanes[i].group != m.lanes[i - 1].group) {
      headings.emplace_back(y, m.lanes[i].group);
      y += lane_h;
    }
    lane_y[i] = y;
    y += lane_h;
  }
  const double bottom = y;
  const double width = left + total_s * pxs + 40;
  const double height = bottom + 30;
  auto X = [&](double t) { return left + (t - m.t0) / 1000.0 * pxs; };

  std::string s;
  s += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" + Esc(m.title) +
       "</title>\n<style>" + kStyle + "</style></head>\n<body>\n";
  s += "<h1>" + Esc(m.title) + "</h1>\n";
  for (const std::string& line : m.summary) s += "<p class=\"summary\">" + Esc(line) + "</p>\n";
  s += "<div id=\"verdict\" class=\"" + std::string(m.violations.empty() ? "good" : "bad") + "\">" +
       std::to_string(m.violations.size()) + " violation" + (m.violations.size() == 1 ? "" : "s") +
       "</div> <span id=\"shown\"></span>\n";
  s += "<div class=\"legend\">";
  for (const auto& [cls, text] : m.legend) {
    std::string swatch = cls == "claim"         ? "border:1px dashed #4a7fc1"
                         : cls == "promise"     ? "border:1px dashed #555"
                         : cls == "hold"        ? "background:#4a7fc1"
                         : cls == "lease"       ? "background:hsl(200,55%,55%)"
                         : cls == "violation"   ? "background:#e53935"
                         : cls == "unsupported" ? "background:#f5a623"
                         : cls == "down"        ? "background:#444"
                         : cls == "paused"      ? "background:#9e9e9e"
                         : cls == "quarantine"  ? "background:#f5a623"
                         : cls == "past"        ? "background:#c8c8c8"
                                                : "background:#888";
    s += "<span><i style=\"" + swatch + "\"></i>" + Esc(text) + "</span>";
  }
  s += "<span><b style=\"color:#b00\">F</b> fault, <b style=\"color:#b00\">R</b> restart</span>";
  s += "</div>\n<div class=\"timeline\">\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(width) + "\" height=\"" +
       Num(height) + "\">\n";
  for (const auto& [hy, text] : headings) {
    s += "<text x=\"6\" y=\"" + Num(hy + 15) + "\" font-weight=\"bold\">" + Esc(text) + "</text>\n";
  }
  for (size_t i = 0; i < m.lanes.size(); ++i) {
    s += "<rect x=\"" + Num(left) + "\" y=\"" + Num(lane_y[i]) + "\" width=\"" +
         Num(total_s * pxs) + "\" height=\"" + Num(lane_h) + "\" fill=\"" +
         (i % 2 ? "#f7f7f7" : "#efefef") + "\"/><text x=\"14\" y=\"" + Num(lane_y[i] + 15) + "\">" +
         Esc(m.lanes[i].label) + "</text>\n";
  }
  // The time axis.
  double step = total_s <= 4     ? 0.5
                : total_s <= 20  ? 1
                : total_s <= 100 ? 5
                : total_s <= 600 ? 30
                                 : 120;
  for (double sec = 0; sec <= total_s + 1e-9; sec += step) {
    double x = left + sec * pxs;
    char label[32];
    std::snprintf(label, sizeof(label), step < 1 ? "%.1f s" : "%.0f s", sec);
    s += "<line x1=\"" + Num(x) + "\" y1=\"" + Num(head) + "\" x2=\"" + Num(x) + "\" y2=\"" +
         Num(bottom + 4) + "\" stroke=\"#ddd\"/><text x=\"" + Num(x) + "\" y=\"" +
         Num(bottom + 16) + "\" text-anchor=\"middle\">" + label + "</text>\n";
  }
  // Bars: outlines (claims, promises) last, so they stay visible.
  auto draw = [&](bool outlines) {
    for (const PageModel::Bar& b : m.bars) {
      bool outline = b.kind == "claim" || b.kind == "promise";
      if (outline != outlines || b.lane < 0 || b.lane >= static_cast<int>(m.lanes.size())) continue;
      double inset = b.kind == "promise" ? 2 : b.kind == "claim" ? 2 : 4;
      s += "<rect class=\"" + Esc(b.kind) + "\" x=\"" + Num(X(b.from)) + "\" y=\"" +
           Num(lane_y[b.lane] + inset) + "\" width=\"" + Num(std::max(X(b.to) - X(b.from), 1.0)) +
           "\" height=\"" + Num(lane_h - 2 * inset) + "\"" +
           (b.color.empty() ? "" : " style=\"fill:" + Esc(b.color) + "\"") + "><title>" +
           Esc(b.title) + "</title></rect>\n";
    }
  };
  draw(false);
  draw(true);
  for (const PageModel::Mark& mk : m.marks) {
    double x = X(mk.t);
    double y0 = mk.lane < 0 ? head : lane_y[mk.lane];
    double y1 = mk.lane < 0 ? bottom : lane_y[mk.lane] + lane_h;
    s += "<g><line class=\"mark\" x1=\"" + Num(x) + "\" y1=\"" + Num(y0) + "\" x2=\"" + Num(x) +
         "\" y2=\"" + Num(y1) + "\"/><text class=\"mark\" x=\"" + Num(x + 2) + "\" y=\"" +
         Num(y0 + 11) + "\">" + Esc(mk.label) + "</text><title>" + Esc(mk.title) + "</title></g>\n";
  }
  int k = 0;
  for (const PageModel::Violation& v : m.violations) {
    ++k;
    s += "<rect class=\"band\" id=\"band-" + std::to_string(k) + "\" x=\"" + Num(X(v.from)) +
         "\" y=\"" + Num(head) + "\" width=\"" + Num(std::max(X(v.to) - X(v.from), 2.0)) +
         "\" height=\"" + Num(bottom - head) + "\"><title>" + Esc(v.text) + "</title></rect>\n";
    for (int l : v.lanes) {
      if (l < 0 || l >= static_cast<int>(m.lanes.size())) continue;
      s += "<rect class=\"violation\" x=\"" + Num(X(v.from)) + "\" y=\"" + Num(lane_y[l] + 4) +
           "\" width=\"" + Num(std::max(X(v.to) - X(v.from), 2.0)) + "\" height=\"" +
           Num(lane_h - 8) + "\"><title>" + Esc(v.text) + "</title></rect>\n";
    }
    s += "<text class=\"vlabel\" x=\"" + Num(X(v.from)) + "\" y=\"" +
         Num(head - 4 - 9 * ((k - 1) % 2)) + "\">V" + std::to_string(k) + "</text>\n";
  }
  s += "</svg>\n</div>\n";
  s += "<h2 style=\"font-size:15px\">Violations</h2>\n<ol id=\"violations\">\n";
  k = 0;
  for (const PageModel::Violation& v : m.violations) {
    ++k;
    s += "<li id=\"violation-" + std::to_string(k) + "\" data-n=\"" + std::to_string(k) + "\">" +
         Esc(v.text) + "</li>\n";
  }
  s += "</ol>\n";
  if (m.violations.empty()) s += "<p>None: no two clients held a lock at the same time.</p>\n";
  s += "<script>" + std::string(kScript) + "</script>\n</body></html>\n";
  return s;
}

std::optional<std::string> WritePage(const std::string& path, const PageModel& m) {
  std::ofstream f(path, std::ios::trunc | std::ios::binary);
  f << RenderPage(m);
  f.close();
  if (!f) return "cannot write " + path;
  return std::nullopt;
}

}  // namespace latch::history
