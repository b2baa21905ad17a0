// Acknowledged-write tracking: does every write a node acknowledged survive
// its restarts, as its fsync policy promises?
//
// One writer thread per node sends plain `SET ack:<node>:<n> <n>` (no TTL),
// n counting up, one at a time, and remembers which ones were acknowledged
// (+OK). Now and then, at offsets from the seed (schedule.h), it sends
// `MULTI; SET; BGREWRITEAOF; SET; EXEC` or a plain BGREWRITEAOF instead: a
// rewrite must neither split a transaction nor drop a write.
//
// After every restart of a node (and at the end of the run), the harness
// reads every acknowledged write of that node back. What may be missing
// depends on how the node stopped:
//
//   kill -9, SIGTERM, an exit of its own (a failed fsync under always): nothing. A
//     reply that reports a write leaves after the write reached the log file,
//     and the page cache survives the process, so a restart replays it.
//   a power loss (DEBUG POWERLOSS, torn tail, amnesia): the writes after the
//     last fsync, and only those. So a lost write is allowed only if
//       - the run that acknowledged it was under everysec or no (under always
//         the reply waits for the fsync);
//       - no later acknowledged write survived: the log is a sequence, fsync
//         makes a prefix durable, so what a power loss takes is a suffix of
//         the acknowledged writes. A survivor after a lost write means the
//         lost one had been fsynced (a later fsync covers the whole file);
//       - no clean shutdown came after it (a clean shutdown fsyncs all).
//     Such losses are counted apart, as allowed; anything else is a loss.
//   log lost (the file deleted): everything, which is the point of that
//     fault: it shows the tracker fails when writes are lost.
//
// Which run acknowledged a write matters for the policy. The cluster bumps a
// node's run number once the stopped process is gone (reaped), not when the
// stop begins: a process told to stop (DEBUG POWERLOSS, SIGTERM) may still
// acknowledge writes until it exits. A writer reads the number before sending
// and after the reply; the process that replied was alive in between, so its
// run lies between the two readings. A write whose round spanned a stop is
// thus known to come from one of two runs, and the rule assumes the stricter.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tools/chaos/chaos.h"
#include "tools/chaos/schedule.h"
#include "tools/redlock/node_set.h"

namespace latch::chaos {

// One acknowledged write.
struct Ack {
  int64_t n = 0;
  int run_lo = 0, run_hi = 0;  // it came from one of the node's runs lo..hi
  Clock::time_point at;        // when the writer had the reply
  bool durable = false;        // a clean shutdown came after it
};

// What a verification found missing.
struct LossVerdict {
  std::vector<int64_t> allowed;    // lost by a power loss, as the policy allows
  std::vector<int64_t> unallowed;  // lost, and nothing allowed it
  // Why the first unallowed loss is not excused, for the report.
  std::string why;
  // The allowed loss acknowledged longest before the stop (informative: under
  // everysec it should be a second or two at most, unless fsyncs were slow or
  // failing).
  Clock::duration oldest_allowed{0};
};

// The rule above as a pure function, for the harness and the unit tests.
// `acks`: the node's acknowledged writes from runs up to `ended_run` (the run
// that just stopped), in the order they were acknowledged; present[i]:
// acks[i] was read back intact. `power_loss`: the run ended in a power loss.
// `may_lose(run)`: that run's policy lets a power loss take acknowledged
// writes (appendfsync everysec or no). `stop_at`: when the stop began.
LossVerdict JudgeLoss(const std::vector<Ack>& acks, const std::vector<bool>& present, int ended_run,
                      bool power_loss, const std::function<bool(int)>& may_lose,
                      Clock::time_point stop_at);

// Reads keys back: for each n, whether ack:<node>:<n> holds n. nullopt when
// the node could not be read (the check is then left for the next time).
using ReadBack = std::function<std::optional<std::vector<bool>>(const std::vector<int64_t>& ns)>;

std::string AckKey(int node, int64_t n);

// The writes of every node, the runs they came from, and what was lost.
class AckBook {
 public:
  AckBook(int nodes, bool tracking);

  bool tracking() const { return tracking_; }

  // ---- the writers
  int run(int node);
  void Record(int node, int64_t n, int run_lo, int run_hi, Clock::time_point at);
  struct WriterStats {
    int64_t sent = 0, acked = 0, refused = 0, unknown = 0;
    int64_t rewrites = 0, rewrites_in_multi = 0, rewrites_refused = 0, rewrites_given_up = 0;
    std::string last_refusal;
    std::map<std::string, int64_t> refusals;  // refused writes by the error's first word
  };
  void AddStats(const WriterStats& s);

  // ---- the cluster
  // The node's run `run(node)` starts with this policy.
  void RunStarted(int node, const std::string& appendfsync);
  // The node's process is gone (reaped): later replies come from the next run.
  void RunEnding(int node);
  // The run before the current one ended with a clean shutdown (exit 0) at
  // `at`: everything it acknowledged was fsynced.
  void CleanStop(int node, Clock::time_point at);

  // After a restart (or at the end, with how == kNone): reads back every
  // write acknowledged before the stop and judges what is missing; `cause`
  // names the fault for the report. `repaired`: the log had to be cut by
  // latch-check-aof --fix before the node would start, so nothing missing is
  // excused. Returns a one-line account when something was lost.
  std::optional<std::string> Verify(int node, StopKind how, const std::string& cause,
                                    Clock::time_point stop_at, const ReadBack& read,
                                    bool repaired = false);
  // The node cannot be started again: everything it acknowledged is lost.
  std::string NodeGone(int node, const std::string& cause);

  // ---- the report
  int64_t acked() const;
  int64_t lost_allowed() const { return lost_allowed_; }
  int64_t lost_unallowed() const { return lost_unallowed_; }
  Clock::duration oldest_allowed() const { return oldest_allowed_; }
  int64_t checks() const { return checks_; }
  int64_t checked_writes() const { return checked_writes_; }
  int64_t unreadable_checks() const { return unreadable_checks_; }
  Clock::duration check_time() const { return check_time_; }  // spent reading back
  const WriterStats& writer_stats() const { return stats_; }
  // Unallowed and allowed losses by the fault that restarted the node (the
  // end-of-run check and exits between faults under "none").
  const std::map<std::string, int64_t>& unallowed_by_cause() const { return unallowed_by_; }
  const std::map<std::string, int64_t>& allowed_by_cause() const { return allowed_by_; }
  const std::vector<std::string>& findings() const { return findings_; }

 private:
  struct Node {
    std::vector<Ack> acks;            // still expected, ascending n
    std::vector<std::string> policy;  // by run
    int run = 0;
  };
  bool MayLose(const Node& n, int run) const;

  const bool tracking_;
  mutable std::mutex mu_;
  std::vector<Node> nodes_;
  int64_t acked_ = 0;
  int64_t lost_allowed_ = 0, lost_unallowed_ = 0;
  Clock::duration oldest_allowed_{0};
  int64_t checks_ = 0, checked_writes_ = 0, unreadable_checks_ = 0;
  Clock::duration check_time_{0};
  WriterStats stats_;
  std::map<std::string, int64_t> unallowed_by_, allowed_by_;
  std::vector<std::string> findings_;
};

// One node's writer: acknowledged SETs at o.ack_rate a second and the
// node's rewrites from `plan`, from t0 until `end` (or an interruption).
void AckWriter(AckBook& book, const Options& o, int node, latch::Endpoint ep,
               std::vector<Rewrite> plan, Clock::time_point t0, Clock::time_point end);

}  // namespace latch::chaos
