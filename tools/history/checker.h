// The RedLock checker: did two clients ever hold the same lock at once?
//
// Input: histories in JSON lines (docs/testbench.md), merged on one time
// line (real Unix ms; every node and client of a test bench runs on one
// host):
//   * each node's history (history-file, server/history.h): grant, renew,
//     release, expire, flush, start (a restart), fault;
//   * optionally the clients' history, written by the test:
//       {"t":…,"client":"A","ev":"acquire","key":"k"}
//       {"t":…,"client":"A","ev":"acquired","key":"k","token":"…","validity_ms":2980}
//       {"t":…,"client":"A","ev":"extended","key":"k","token":"…","validity_ms":…}
//       {"t":…,"client":"A","ev":"release","key":"k","token":"…"}   (logged
//           when the client starts releasing, before its first release
//           request: from then on the nodes may let the next client in)
//       {"t":…,"client":"A","ev":"failed","key":"k"}
//     ("until": an absolute end may stand for validity_ms);
//   * the harness's own marks (latch-fixture's kills and pauses), written
//     as node lines with "ev":"fault".
//
// RedLock's rules, as the checker applies them:
//   * A node's promise. A node that granted token T a lease of ttl ms at
//     real time g promised T the key until g + ttl in real time, unless T
//     was released (or renewed: then from the renewal on). The node's own
//     expiry does not end the promise early: a node whose clock runs fast
//     (FAULT CLOCK RATE), that skipped time (FAULT CLOCK JUMP) or that
//     forgot the lease (power loss) and then grants the key to someone else
//     breaks its promise, and that is exactly how RedLock fails.
//   * T holds the lock at instant t when a majority of the nodes have a
//     live promise for T at t.
//   * With a client history, client C holds the lock while it claims it
//     (from "acquired" to the end of its validity, or its release) AND its
//     token holds by the rule above; a claim without that majority is
//     reported as unsupported (the client believed more than the nodes
//     granted). Without one, each token is a "client".
//   * A violation is an interval in which two clients (two different
//     tokens) both hold the same key.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace latch::history {

// One line of a history.
struct Event {
  double t = 0;  // real Unix time, ms
  bool from_node = true;
  std::string who;  // "127.0.0.1:7001" or a client's name
  std::string ev;
  std::string key, token;
  double ttl_ms = -1;  // node: the lease given (-1: none)
  double until = -1;   // client: the end of the validity (absolute ms; -1: unknown)
  std::string fault;   // node: what the fault was
  std::string where;   // "file:line", for messages
};

struct Histories {
  std::vector<Event> events;
};

// Adds every line of `path` (node and client lines may be mixed). The error
// names the file and line.
std::optional<std::string> LoadHistory(const std::string& path, Histories& h);

// A time interval of one lane.
struct Interval {
  std::string who;  // node or client (or "token …")
  std::string key;
  std::string token;
  double from = 0, to = 0;
  std::string note;
};

struct Violation {
  size_t a = 0, b = 0;  // indexes into Report::holds
  std::string key;
  double from = 0, to = 0;
  // The nodes whose promise for each one's token was live when it began.
  std::vector<std::string> a_nodes, b_nodes;
};

struct Options {
  int nodes = 0;  // how many nodes the lock spans; 0: as many as the histories name
  // The nodes' addresses in the harness's numbering (latch-fixture's node 0,
  // 1, …): reports and pages name nodes by that index, as the command line
  // does. Empty: the order in which the histories first name them.
  std::vector<std::string> node_order;
};

struct Report {
  std::vector<std::string> nodes, clients;  // nodes: in the harness's order
  // "node 2 (127.0.0.1:7003)": how reports and pages name a node.
  std::string NodeName(const std::string& who) const;
  // Its index in `nodes` ("2"), or the address for one no history named.
  std::string NodeIndex(const std::string& who) const;
  int quorum = 0;
  bool have_clients = false;
  std::vector<Interval> promises;     // who = node: a live lease by the rules
  std::vector<Interval> node_spans;   // who = node: what the node itself held
  std::vector<Interval> claims;       // who = client: what the client believed
  std::vector<Interval> holds;        // who = client: held by RedLock's rules
  std::vector<Interval> unsupported;  // who = client: claimed without a majority
  std::vector<Violation> violations;
  std::vector<Event> marks;  // faults and restarts
  double t0 = 0, t1 = 0;
};

Report Check(const Histories& h, const Options& o);

// The report as text: counts, then one line per violation and per
// unsupported claim. The last line is always "violations: N".
std::string FormatReport(const Report& r);

// The generic part, shared with latch-chaos (tools/chaos/checker.cc): the
// pairs (i, j), i < j, of intervals of different owners that overlap, in
// order of start. Intervals must be sorted by `from`.
struct Span {
  double from = 0, to = 0;
  int owner = 0;
};
std::vector<std::pair<size_t, size_t>> Overlaps(const std::vector<Span>& sorted);

}  // namespace latch::history
