#include "tools/chaos/acks.h"

#include <algorithm>
#include <thread>

#include "protocol/request_writer.h"

namespace latch::chaos {

std::string AckKey(int node, int64_t n) {
  return "ack:" + std::to_string(node) + ":" + std::to_string(n);
}

LossVerdict JudgeLoss(const std::vector<Ack>& acks, const std::vector<bool>& present, int ended_run,
                      bool power_loss, const std::function<bool(int)>& may_lose,
                      Clock::time_point stop_at) {
  LossVerdict v;
  // The last survivor that surely came from a stopped run: the log reached
  // at least that far, so everything acknowledged before it was on disk.
  // (A survivor that may come from the new run proves nothing about the old
  // log.)
  std::ptrdiff_t bound = -1;
  for (size_t i = 0; i < acks.size(); ++i) {
    if (present[i] && acks[i].run_hi <= ended_run) bound = static_cast<std::ptrdiff_t>(i);
  }
  for (size_t i = 0; i < acks.size(); ++i) {
    if (present[i]) continue;
    const Ack& a = acks[i];
    std::string why;
    if (!power_loss) {
      why = "not a power loss";
    } else if (static_cast<std::ptrdiff_t>(i) < bound) {
      why = "a later write survived (n=" + std::to_string(acks[bound].n) + ")";
    } else if (a.durable) {
      why = "a clean shutdown had fsynced it";
    }
    // Under always the reply waited for the fsync. A write whose round
    // spanned a stop may come from either run: the stricter one decides.
    for (int r = a.run_lo; why.empty() && r <= std::min(a.run_hi, ended_run); ++r) {
      if (!may_lose(r)) why = "run " + std::to_string(r) + " acknowledged under appendfsync always";
    }
    if (why.empty()) {
      v.allowed.push_back(a.n);
      v.oldest_allowed = std::max(v.oldest_allowed, stop_at - a.at);
    } else {
      if (v.unallowed.empty()) {
        v.why = Format("n=%lld from runs %d-%d (the stopped run: %d): %s",
                       static_cast<long long>(a.n), a.run_lo, a.run_hi, ended_run, why.c_str());
      }
      v.unallowed.push_back(a.n);
    }
  }
  return v;
}

AckBook::AckBook(int nodes, bool tracking) : tracking_(tracking), nodes_(nodes) {}

int AckBook::run(int node) {
  std::lock_guard<std::mutex> g(mu_);
  return nodes_[node].run;
}

void AckBook::Record(int node, int64_t n, int run_lo, int run_hi, Clock::time_point at) {
  std::lock_guard<std::mutex> g(mu_);
  nodes_[node].acks.push_back(Ack{n, run_lo, run_hi, at, false});
  ++acked_;
}

void AckBook::AddStats(const WriterStats& s) {
  std::lock_guard<std::mutex> g(mu_);
  stats_.sent += s.sent;
  stats_.acked += s.acked;
  stats_.refused += s.refused;
  stats_.unknown += s.unknown;
  stats_.rewrites += s.rewrites;
  stats_.rewrites_in_multi += s.rewrites_in_multi;
  stats_.rewrites_refused += s.rewrites_refused;
  stats_.rewrites_given_up += s.rewrites_given_up;
  if (!s.last_refusal.empty()) stats_.last_refusal = s.last_refusal;
  for (const auto& [word, count] : s.refusals) stats_.refusals[word] += count;
}

void AckBook::RunStarted(int node, const std::string& appendfsync) {
  std::lock_guard<std::mutex> g(mu_);
  Node& n = nodes_[node];
  if (n.policy.size() <= static_cast<size_t>(n.run)) n.policy.resize(n.run + 1);
  n.policy[n.run] = appendfsync;
}

void AckBook::RunEnding(int node) {
  std::lock_guard<std::mutex> g(mu_);
  ++nodes_[node].run;
}

void AckBook::CleanStop(int node, Clock::time_point at) {
  std::lock_guard<std::mutex> g(mu_);
  Node& n = nodes_[node];
  // Replies read before the process exited came from it (or earlier runs).
  for (Ack& a : n.acks) {
    if (a.run_lo < n.run && a.at <= at) a.durable = true;
  }
}

bool AckBook::MayLose(const Node& n, int run) const {
  // A run whose policy is not known yet acknowledged nothing; count it as
  // strict.
  if (run < 0 || static_cast<size_t>(run) >= n.policy.size()) return false;
  return n.policy[run] == "everysec" || n.policy[run] == "no";
}

int64_t AckBook::acked() const {
  std::lock_guard<std::mutex> g(mu_);
  return acked_;
}

namespace {

std::string Sample(int node, const std::vector<int64_t>& ns) {
  std::string s;
  for (size_t i = 0; i < ns.size() && i < 4; ++i) {
    s += (i ? ", " : "") + AckKey(node, ns[i]);
  }
  if (ns.size() > 4) s += Format(", … (%zu more)", ns.size() - 4);
  return s;
}

}  // namespace

std::optional<std::string> AckBook::Verify(int node, StopKind how, const std::string& cause,
                                           Clock::time_point stop_at, const ReadBack& read,
                                           bool repaired) {
  if (!tracking_) return std::nullopt;
  std::vector<Ack> acks;
  int ended;
  {
    std::lock_guard<std::mutex> g(mu_);
    const Node& n = nodes_[node];
    ended = how == StopKind::kNone ? n.run : n.run - 1;
    for (const Ack& a : n.acks) {
      if (a.run_lo <= ended) acks.push_back(a);
    }
  }
  std::vector<int64_t> ns;
  ns.reserve(acks.size());
  for (const Ack& a : acks) ns.push_back(a.n);
  std::optional<std::vector<bool>> present;
  const auto read_start = Clock::now();
  for (int attempt = 0; attempt < 5 && !present && !g_interrupted; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(Millis{200});
    present = read(ns);
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    check_time_ += Clock::now() - read_start;
  }
  if (!present || present->size() != ns.size()) {
    std::lock_guard<std::mutex> g(mu_);
    ++unreadable_checks_;
    return std::nullopt;  // checked again at the next restart or at the end
  }
  const bool power_loss = how == StopKind::kPowerLoss && !repaired;
  LossVerdict v;
  {
    std::lock_guard<std::mutex> g(mu_);
    const Node& n = nodes_[node];
    v = JudgeLoss(
        acks, *present, ended, power_loss, [&](int r) { return MayLose(n, r); }, stop_at);
  }
  if (repaired && !v.unallowed.empty()) {
    v.why = v.why.substr(0, v.why.rfind(": ")) + ": cut when the log was repaired";
  }
  std::lock_guard<std::mutex> g(mu_);
  ++checks_;
  checked_writes_ += static_cast<int64_t>(ns.size());
  Node& n = nodes_[node];
  if (v.allowed.empty() && v.unallowed.empty()) return std::nullopt;
  // Lost writes are counted once: they leave the expected set.
  std::vector<int64_t> gone = v.allowed;
  gone.insert(gone.end(), v.unallowed.begin(), v.unallowed.end());
  std::sort(gone.begin(), gone.end());
  std::erase_if(n.acks,
                [&](const Ack& a) { return std::binary_search(gone.begin(), gone.end(), a.n); });
  lost_allowed_ += static_cast<int64_t>(v.allowed.size());
  lost_unallowed_ += static_cast<int64_t>(v.unallowed.size());
  oldest_allowed_ = std::max(oldest_allowed_, v.oldest_allowed);
  if (!v.allowed.empty()) allowed_by_[cause] += static_cast<int64_t>(v.allowed.size());
  std::string line = Format("node %d, %s (%s%s): ", node,
                            how == StopKind::kNone ? "at the end" : "after its restart",
                            how == StopKind::kNone ? "no stop" : StopName(how),
                            repaired ? ", log repaired with latch-check-aof --fix" : "");
  if (!v.unallowed.empty()) {
    unallowed_by_[cause] += static_cast<int64_t>(v.unallowed.size());
    line += Format("%zu acknowledged writes lost (%s; %s)", v.unallowed.size(),
                   Sample(node, v.unallowed).c_str(), v.why.c_str());
    if (!v.allowed.empty()) line += Format(", and %zu allowed", v.allowed.size());
    line += "; fault: " + cause;
    findings_.push_back(line);
    return line;
  }
  line += Format(
      "%zu acknowledged writes lost after the last fsync, as a power loss under "
      "everysec/no may (%s; the oldest acknowledged %.0f ms before the power loss)",
      v.allowed.size(), Sample(node, v.allowed).c_str(),
      std::chrono::duration<double, std::milli>(v.oldest_allowed).count());
  return line;
}

std::string AckBook::NodeGone(int node, const std::string& cause) {
  std::lock_guard<std::mutex> g(mu_);
  Node& n = nodes_[node];
  std::vector<int64_t> ns;
  for (const Ack& a : n.acks) ns.push_back(a.n);
  n.acks.clear();
  lost_unallowed_ += static_cast<int64_t>(ns.size());
  if (!ns.empty()) unallowed_by_[cause] += static_cast<int64_t>(ns.size());
  std::string line =
      Format("node %d would not start again: its %zu acknowledged writes count as lost; cause: %s",
             node, ns.size(), cause.c_str());
  findings_.push_back(line);
  return line;
}

// ---------------------------------------------------------------- writer

namespace {

bool IsOk(const resp::Reply& r) {
  return r.type == resp::Reply::Type::kSimple && r.str == "OK";
}

// "MISCONF", "EXECABORT", …: what kind of refusal.
std::string FirstWord(const resp::Reply& r) {
  if (r.is_error()) return r.str.substr(0, r.str.find(' '));
  // EXEC's array: the first command that failed inside the transaction.
  for (const resp::Reply& e : r.elements) {
    if (e.is_error()) return FirstWord(e);
  }
  return "unexpected reply";
}

}  // namespace

void AckWriter(AckBook& book, const Options& o, int node, latch::Endpoint ep,
               std::vector<Rewrite> plan, Clock::time_point t0, Clock::time_point end) {
  std::unique_ptr<latch::NodeSet> conn = o.Connect({ep});
  AckBook::WriterStats st;
  const bool writes = o.ack_rate > 0;
  const auto interval =
      writes ? std::chrono::microseconds(1'000'000 / o.ack_rate) : std::chrono::microseconds(0);
  // Longer than any injected slow disk, so that a slow node still
  // acknowledges; a paused one costs this much, once.
  const auto timeout = std::chrono::microseconds(std::max<int64_t>(2000, 2 * o.ttl.count()) * 1000);
  int64_t next_n = 1;
  auto next_write = t0;
  size_t next_rewrite = 0;
  auto rewrite_due = plan.empty() ? end : t0 + plan[0].at;
  constexpr Millis kRewriteRetryFor{5000};

  // Sends `request` (`replies` commands) and returns the replies, or nothing
  // when the node did not answer: the outcome is then unknown, and the
  // writes in it are neither acknowledged nor refused.
  auto round = [&](const std::string& request, size_t replies, int* lo, int* hi) {
    *lo = book.run(node);
    auto r = conn->Round(request, replies, timeout);
    *hi = book.run(node);
    std::optional<std::vector<resp::Reply>> out;
    if (r[0].ok()) {
      out = std::move(r[0].replies);
    } else {
      ++st.unknown;
      // Down (refused at once) or cut off: do not spin.
      std::this_thread::sleep_for(Millis{20});
    }
    return out;
  };

  // One rewrite, alone or inside MULTI between two SETs; true when it went
  // through (started, or refused by the server inside the transaction that
  // still acknowledged both writes).
  auto try_rewrite = [&](bool in_multi) {
    std::string req;
    int lo, hi;
    if (!in_multi) {
      resp::AppendRequest(req, {"BGREWRITEAOF"});
      auto r = round(req, 1, &lo, &hi);
      if (!r || (*r)[0].is_error()) {
        if (r) st.last_refusal = (*r)[0].str;
        return false;
      }
      ++st.rewrites;
      return true;
    }
    // Two acknowledged writes around the rewrite, in one transaction: the
    // rewrite must start after EXEC, never between the two.
    int64_t a = next_n++, b = next_n++;
    std::string ka = AckKey(node, a), va = std::to_string(a);
    std::string kb = AckKey(node, b), vb = std::to_string(b);
    resp::AppendRequest(req, {"MULTI"});
    resp::AppendRequest(req, {"SET", ka, va});
    resp::AppendRequest(req, {"BGREWRITEAOF"});
    resp::AppendRequest(req, {"SET", kb, vb});
    resp::AppendRequest(req, {"EXEC"});
    st.sent += 2;
    auto r = round(req, 5, &lo, &hi);
    if (!r) return false;
    const resp::Reply& exec = r->back();
    if (exec.type != resp::Reply::Type::kArray || exec.elements.size() != 3 ||
        !IsOk(exec.elements[0]) || !IsOk(exec.elements[2])) {
      st.refused += 2;
      st.refusals[FirstWord(exec)] += 2;
      return false;
    }
    auto at = Clock::now();
    book.Record(node, a, lo, hi, at);
    book.Record(node, b, lo, hi, at);
    st.acked += 2;
    ++st.rewrites_in_multi;
    if (exec.elements[1].is_error()) {
      ++st.rewrites_refused;  // one already running, say: the SETs still count
      st.last_refusal = exec.elements[1].str;
    } else {
      ++st.rewrites;
    }
    return true;
  };

  while (!g_interrupted) {
    auto now = Clock::now();
    if (now >= end) break;
    if (next_rewrite < plan.size() && now >= rewrite_due) {
      // A refused or unanswered attempt (a node in quarantine refuses the
      // SETs, one rewriting already refuses another) is tried again shortly:
      // the point is to have rewrites, inside MULTI too, while faults strike.
      if (try_rewrite(plan[next_rewrite].in_multi)) {
        ++next_rewrite;
        if (next_rewrite < plan.size()) rewrite_due = t0 + plan[next_rewrite].at;
      } else if (now - (t0 + plan[next_rewrite].at) > kRewriteRetryFor) {
        ++st.rewrites_given_up;
        ++next_rewrite;
        if (next_rewrite < plan.size()) rewrite_due = t0 + plan[next_rewrite].at;
      } else {
        rewrite_due = now + Millis{200};
      }
      continue;
    }
    if (writes && now >= next_write) {
      // Keep the rate, but do not burst to catch up after a stall.
      next_write = std::max(next_write + interval, now - Millis{100});
      int64_t n = next_n++;
      std::string req;
      resp::AppendRequest(req, {"SET", AckKey(node, n), std::to_string(n)});
      ++st.sent;
      int lo, hi;
      auto r = round(req, 1, &lo, &hi);
      if (!r) continue;
      if (IsOk((*r)[0])) {
        book.Record(node, n, lo, hi, Clock::now());
        ++st.acked;
      } else {
        ++st.refused;  // MISCONF: the log cannot be written (a disk error)
        st.refusals[FirstWord((*r)[0])] += 1;
      }
      continue;
    }
    auto wake = end;
    if (writes) wake = std::min(wake, next_write);
    if (next_rewrite < plan.size()) wake = std::min(wake, rewrite_due);
    std::this_thread::sleep_for(std::min<Clock::duration>(wake - now, Millis{50}));
  }
  book.AddStats(st);
}

}  // namespace latch::chaos
