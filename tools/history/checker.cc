#include "tools/history/checker.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "tools/history/json_lines.h"

namespace latch::history {

namespace {

constexpr double kForever = std::numeric_limits<double>::infinity();

std::string Short(const std::string& token) {
  return token.size() <= 12 ? token : token.substr(0, 10) + "…";
}

}  // namespace

std::optional<std::string> LoadHistory(const std::string& path, Histories& h) {
  std::ifstream in(path);
  if (!in) return "cannot read " + path;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = path + ":" + std::to_string(number);
    std::string error;
    auto o = ParseJsonObject(line, &error);
    if (!o) return where + ": " + error;
    Event e;
    e.where = where;
    auto t = GetNumber(*o, "t");
    if (!t) return where + ": no \"t\" (real Unix time in ms)";
    e.t = *t;
    e.ev = GetString(*o, "ev");
    if (e.ev.empty()) return where + ": no \"ev\"";
    e.key = GetString(*o, "key");
    if (o->count("node")) {
      e.from_node = true;
      e.who = GetString(*o, "node");
      e.token = GetString(*o, "value");
      e.ttl_ms = GetNumber(*o, "ttl_ms").value_or(-1);
      e.fault = GetString(*o, "fault");
    } else if (o->count("client")) {
      e.from_node = false;
      e.who = GetString(*o, "client");
      e.token = GetString(*o, "token");
      if (auto v = GetNumber(*o, "validity_ms")) {
        e.until = e.t + *v;
      } else if (auto u = GetNumber(*o, "until")) {
        e.until = *u;
      }
    } else {
      return where + ": neither \"node\" nor \"client\"";
    }
    h.events.push_back(std::move(e));
  }
  return std::nullopt;
}

std::vector<std::pair<size_t, size_t>> Overlaps(const std::vector<Span>& sorted) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < sorted.size(); ++i) {
    // Sorted by start: every later span that starts before this one ends
    // overlaps it.
    for (size_t j = i + 1; j < sorted.size() && sorted[j].from < sorted[i].to; ++j) {
      if (sorted[j].owner != sorted[i].owner) out.emplace_back(i, j);
    }
  }
  return out;
}

Report Check(const Histories& h, const Options& o) {
  Report r;
  std::vector<Event> events = h.events;
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.t < b.t; });
  std::set<std::string> nodes, clients;
  for (const Event& e : events) (e.from_node ? nodes : clients).insert(e.who);
  // The harness's numbering first, then the others as the histories name
  // them (in time order).
  for (const std::string& n : o.node_order) {
    if (nodes.count(n)) r.nodes.push_back(n);
  }
  for (const Event& e : events) {
    if (e.from_node && std::find(r.nodes.begin(), r.nodes.end(), e.who) == r.nodes.end()) {
      r.nodes.push_back(e.who);
    }
  }
  r.clients.assign(clients.begin(), clients.end());
  r.have_clients = !clients.empty();
  int n = o.nodes > 0 ? o.nodes : static_cast<int>(nodes.size());
  r.quorum = n / 2 + 1;
  if (!events.empty()) r.t0 = events.front().t, r.t1 = events.back().t;

  // ---- the nodes: promises (by the rules) and spans (what each held).
  std::map<std::tuple<std::string, std::string, std::string>, size_t> open_promise;
  std::map<std::pair<std::string, std::string>, size_t> open_span;
  auto close_span = [&](const std::string& node, const std::string& key, double t,
                        const char* why) {
    auto it = open_span.find({node, key});
    if (it == open_span.end()) return;
    r.node_spans[it->second].to = t;
    r.node_spans[it->second].note = why;
    open_span.erase(it);
  };
  std::set<std::string> started;
  for (const Event& e : events) {
    if (!e.from_node) continue;
    const double end = e.ttl_ms < 0 ? kForever : e.t + e.ttl_ms;
    auto pk = std::make_tuple(e.who, e.key, e.token);
    if (e.ev == "grant" || e.ev == "renew") {
      auto it = open_promise.find(pk);
      if (e.ev == "renew" && it != open_promise.end() && r.promises[it->second].to >= e.t) {
        r.promises[it->second].to = end;  // renewed while live: from now on
      } else {
        if (it != open_promise.end()) {
          r.promises[it->second].to = std::min(r.promises[it->second].to, e.t);
        }
        open_promise[pk] = r.promises.size();
        r.promises.push_back({e.who, e.key, e.token, e.t, end, e.ev});
      }
      if (e.ev == "grant") {
        close_span(e.who, e.key, e.t, "replaced");
        open_span[{e.who, e.key}] = r.node_spans.size();
        r.node_spans.push_back({e.who, e.key, e.token, e.t, kForever, ""});
      }
    } else if (e.ev == "release") {
      auto it = open_promise.find(pk);
      if (it != open_promise.end()) {
        r.promises[it->second].to = std::min(r.promises[it->second].to, e.t);
        open_promise.erase(it);
      }
      close_span(e.who, e.key, e.t, "released");
    } else if (e.ev == "expire") {
      // The node's clock decided; the promise runs on in real time.
      close_span(e.who, e.key, e.t, "expired");
    } else if (e.ev == "flush") {
      for (auto it = open_promise.begin(); it != open_promise.end();) {
        if (std::get<0>(it->first) != e.who) {
          ++it;
          continue;
        }
        r.promises[it->second].to = std::min(r.promises[it->second].to, e.t);
        it = open_promise.erase(it);
      }
      for (auto it = open_span.begin(); it != open_span.end();) {
        if (it->first.first == e.who) {
          r.node_spans[it->second].to = e.t;
          r.node_spans[it->second].note = "flushed";
          it = open_span.erase(it);
        } else {
          ++it;
        }
      }
    } else if (e.ev == "start" || e.ev == "fault") {
      // A restart: what the node holds now is what it replayed (no event
      // says); its promises stand, whatever it remembers.
      if (e.ev == "start") {
        for (auto it = open_span.begin(); it != open_span.end();) {
          if (it->first.first == e.who) {
            r.node_spans[it->second].to = e.t;
            r.node_spans[it->second].note = "restarted";
            it = open_span.erase(it);
          } else {
            ++it;
          }
        }
      }
      // A node's first start is where its history begins, not a restart.
      if (e.ev == "fault" || started.count(e.who)) r.marks.push_back(e);
      if (e.ev == "start") started.insert(e.who);
    }
  }
  for (const Interval& p : r.promises) {
    if (p.to != kForever) r.t1 = std::max(r.t1, p.to);
  }
  for (Interval& s : r.node_spans) {
    if (s.to == kForever) s.to = r.t1, s.note = "held at the end";
  }

  // ---- majorities: per (key, token), where a quorum of nodes promised it.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> majority;
  {
    std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, int>>> edges;
    for (const Interval& p : r.promises) {
      if (p.to <= p.from) continue;
      edges[{p.key, p.token}].emplace_back(p.from, +1);
      edges[{p.key, p.token}].emplace_back(p.to, -1);
    }
    for (auto& [kt, list] : edges) {
      // Ends before starts at the same instant: touching leases do not add up.
      std::sort(list.begin(), list.end());
      int count = 0;
      double since = 0;
      for (const auto& [t, d] : list) {
        int before = count;
        count += d;
        if (before < r.quorum && count >= r.quorum) since = t;
        if (before >= r.quorum && count < r.quorum && t > since) {
          majority[kt].emplace_back(since, t);
        }
      }
    }
  }
  auto majority_pieces = [&](const std::string& key, const std::string& token, double from,
                             double to) {
    std::vector<std::pair<double, double>> out;
    auto it = majority.find({key, token});
    if (it == majority.end()) return out;
    for (const auto& [a, b] : it->second) {
      double x = std::max(a, from), y = std::min(b, to);
      if (x < y) out.emplace_back(x, y);
    }
    return out;
  };

  // ---- the clients' claims.
  std::map<std::pair<std::string, std::string>, size_t> open_claim;
  for (const Event& e : events) {
    if (e.from_node) continue;
    auto ck = std::make_pair(e.who, e.key);
    auto it = open_claim.find(ck);
    if (e.ev == "acquired") {
      if (it != open_claim.end()) {
        r.claims[it->second].to = std::min(r.claims[it->second].to, e.t);
      }
      open_claim[ck] = r.claims.size();
      r.claims.push_back({e.who, e.key, e.token, e.t, e.until >= 0 ? e.until : kForever, ""});
    } else if (e.ev == "extended") {
      if (it != open_claim.end() && r.claims[it->second].to >= e.t) {
        r.claims[it->second].to = e.until >= 0 ? e.until : kForever;
        r.claims[it->second].note = "extended";
      } else {
        open_claim[ck] = r.claims.size();
        r.claims.push_back(
            {e.who, e.key, e.token, e.t, e.until >= 0 ? e.until : kForever, "extended"});
      }
    } else if (e.ev == "release" && it != open_claim.end()) {
      r.claims[it->second].to = std::min(r.claims[it->second].to, e.t);
      r.claims[it->second].note = "released";
      open_claim.erase(it);
    }
  }
  for (Interval& c : r.claims) {
    if (c.to == kForever) c.to = r.t1;
    r.t1 = std::max(r.t1, c.to);
  }

  // ---- holds: claims backed by a majority, or (no clients) the majorities.
  if (r.have_clients) {
    for (const Interval& c : r.claims) {
      if (c.to <= c.from) continue;
      if (c.token.empty() || r.nodes.empty()) {
        r.holds.push_back(c);  // nothing to check it against
        continue;
      }
      double at = c.from;
      for (const auto& [x, y] : majority_pieces(c.key, c.token, c.from, c.to)) {
        if (x > at) r.unsupported.push_back({c.who, c.key, c.token, at, x, ""});
        r.holds.push_back({c.who, c.key, c.token, x, y, ""});
        at = y;
      }
      if (at < c.to) {
        // Ended by the client's own release, after the nodes had released:
        // the client logged "release" once done releasing, not when it
        // began (docs/testbench.md, "The client history").
        const bool late_release = c.note == "released" && at > c.from;
        r.unsupported.push_back(
            {c.who, c.key, c.token, at, c.to, late_release ? "late release" : ""});
      }
    }
  } else {
    for (const auto& [kt, list] : majority) {
      for (const auto& [x, y] : list) {
        r.holds.push_back(
            {"token " + Short(kt.second), kt.first, kt.second, x, y == kForever ? r.t1 : y, ""});
      }
    }
  }
  // The unsupported parts that last under a millisecond are the clients'
  // and nodes' clocks being read a few microseconds apart, not a claim.
  std::erase_if(r.unsupported, [](const Interval& i) { return i.to - i.from < 1.0; });

  // ---- violations: two tokens holding one key at once.
  std::stable_sort(r.holds.begin(), r.holds.end(), [](const Interval& a, const Interval& b) {
    return std::tie(a.key, a.from) < std::tie(b.key, b.from);
  });
  std::map<std::string, int> token_ids;
  for (size_t begin = 0; begin < r.holds.size();) {
    size_t end = begin;
    std::vector<Span> spans;
    while (end < r.holds.size() && r.holds[end].key == r.holds[begin].key) {
      const Interval& hi = r.holds[end];
      auto [it, _] = token_ids.emplace(hi.token, static_cast<int>(token_ids.size()));
      spans.push_back({hi.from, hi.to, it->second});
      ++end;
    }
    for (const auto& [i, j] : Overlaps(spans)) {
      const Interval& a = r.holds[begin + i];
      const Interval& b = r.holds[begin + j];
      Violation v{begin + i, begin + j, a.key, std::max(a.from, b.from), std::min(a.to, b.to),
                  {},        {}};
      for (const Interval& p : r.promises) {
        if (p.key != v.key || p.from > v.from || p.to <= v.from) continue;
        if (p.token == a.token) v.a_nodes.push_back(p.who);
        if (p.token == b.token) v.b_nodes.push_back(p.who);
      }
      r.violations.push_back(std::move(v));
    }
    begin = end;
  }
  return r;
}

std::string Report::NodeIndex(const std::string& who) const {
  auto it = std::find(nodes.begin(), nodes.end(), who);
  return it == nodes.end() ? who : std::to_string(it - nodes.begin());
}

std::string Report::NodeName(const std::string& who) const {
  auto it = std::find(nodes.begin(), nodes.end(), who);
  if (it == nodes.end()) return "node " + who;
  return "node " + std::to_string(it - nodes.begin()) + " (" + who + ")";
}

std::string FormatReport(const Report& r) {
  std::string out;
  char buf[1024];
  auto rel = [&](double t) { return (t - r.t0) / 1000.0; };
  // "nodes 0,2 (127.0.0.1:7001,127.0.0.1:7003)": the indexes the command
  // line uses, then the addresses.
  auto join = [&](const std::vector<std::string>& v) {
    std::vector<std::string> sorted = v;
    std::sort(sorted.begin(), sorted.end(), [&](const std::string& a, const std::string& b) {
      return std::find(r.nodes.begin(), r.nodes.end(), a) <
             std::find(r.nodes.begin(), r.nodes.end(), b);
    });
    std::string idx, addr;
    for (const std::string& x : sorted) {
      idx += (idx.empty() ? "" : ",") + r.NodeIndex(x);
      addr += (addr.empty() ? "" : ",") + x;
    }
    return sorted.empty() ? std::string("no node") : "nodes " + idx + " (" + addr + ")";
  };
  std::snprintf(buf, sizeof(buf), "nodes: %zu (a lock needs %d), clients: %zu%s\n", r.nodes.size(),
                r.quorum, r.clients.size(),
                r.have_clients ? "" : " (no client history: each token is a client)");
  out += buf;
  std::snprintf(buf, sizeof(buf),
                "node leases: %zu, holds by RedLock's rules: %zu, client claims: %zu, "
                "unsupported claims: %zu, faults and restarts marked: %zu\n",
                r.promises.size(), r.holds.size(), r.claims.size(), r.unsupported.size(),
                r.marks.size());
  out += buf;
  int k = 0;
  for (const Violation& v : r.violations) {
    const Interval& a = r.holds[v.a];
    const Interval& b = r.holds[v.b];
    std::snprintf(buf, sizeof(buf),
                  "violation %d: key \"%s\": %s (token %s) and %s (token %s) both held it from "
                  "%.3f s to %.3f s (%.0f ms); the first's token was live on %s, the second's on "
                  "%s\n",
                  ++k, v.key.c_str(), a.who.c_str(), Short(a.token).c_str(), b.who.c_str(),
                  Short(b.token).c_str(), rel(v.from), rel(v.to), v.to - v.from,
                  join(v.a_nodes).c_str(), join(v.b_nodes).c_str());
    out += buf;
  }
  k = 0;
  size_t late_releases = 0;
  for (const Interval& u : r.unsupported) {
    std::snprintf(buf, sizeof(buf),
                  "unsupported claim %d: %s believed it held \"%s\" (token %s) from %.3f s to "
                  "%.3f s without a majority of nodes%s\n",
                  ++k, u.who.c_str(), u.key.c_str(), Short(u.token).c_str(), rel(u.from), rel(u.to),
                  u.note == "late release" ? " (its release reached the nodes first)" : "");
    out += buf;
    late_releases += u.note == "late release";
  }
  if (late_releases > 0) {
    out += "note: " + std::to_string(late_releases) +
           " unsupported claims end with the client's release, logged after the nodes had "
           "released: log \"release\" before the first release request (docs/testbench.md, "
           "\"The client history\")\n";
  }
  out += "violations: " + std::to_string(r.violations.size()) + "\n";
  return out;
}

}  // namespace latch::history
