#include "tools/redlock/redlock.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "protocol/request_writer.h"
#include "protocol/text.h"

namespace latch {

namespace {

using std::chrono::microseconds;

bool IsQuarantine(const resp::Reply& r) {
  return r.is_error() && r.str.compare(0, 10, "QUARANTINE") == 0;
}

NodeAnswer ErrorAnswer(const resp::Reply& r) {
  return IsQuarantine(r) ? NodeAnswer::kQuarantined : NodeAnswer::kError;
}

// SET … NX / SET … IFEQ: +OK when applied, a null bulk when the condition
// stopped it (someone else's key, or not ours any more).
NodeAnswer ClassifySet(const resp::Reply& r) {
  if (r.type == resp::Reply::Type::kSimple && r.str == "OK") return NodeAnswer::kYes;
  if (r.is_null()) return NodeAnswer::kNo;
  if (r.is_error()) return ErrorAnswer(r);
  return NodeAnswer::kNoAnswer;  // a well-formed but meaningless answer: unknown outcome
}

// SET … FENCE: the node's token (a positive integer) when applied, a null
// bulk when the condition stopped it.
NodeAnswer ClassifyFencedSet(const resp::Reply& r) {
  if (r.type == resp::Reply::Type::kInteger && r.integer > 0) return NodeAnswer::kYes;
  if (r.is_null()) return NodeAnswer::kNo;
  if (r.is_error()) return ErrorAnswer(r);
  return NodeAnswer::kNoAnswer;
}

// DELIFEQ: :1 deleted, :0 not ours (or gone).
NodeAnswer ClassifyDelIfEq(const resp::Reply& r) {
  if (r.type == resp::Reply::Type::kInteger && (r.integer == 0 || r.integer == 1)) {
    return r.integer == 1 ? NodeAnswer::kYes : NodeAnswer::kNo;
  }
  if (r.is_error()) return ErrorAnswer(r);
  return NodeAnswer::kNoAnswer;
}

Millis ToMillisFloor(LockClock::duration d) {
  return std::chrono::duration_cast<Millis>(d);
}

}  // namespace

const char* AnswerName(NodeAnswer a) {
  switch (a) {
    case NodeAnswer::kYes:
      return "yes";
    case NodeAnswer::kNo:
      return "no";
    case NodeAnswer::kQuarantined:
      return "quarantined";
    case NodeAnswer::kError:
      return "error";
    case NodeAnswer::kNoAnswer:
      return "no answer";
  }
  return "?";
}

// ---------------------------------------------------------------- Lock

struct Lock::State {
  RedLock* owner = nullptr;
  std::string key;
  std::string token;
  Millis ttl{0};
  mutable std::mutex mu;  // guards everything below
  LockClock::time_point acquired_at;
  LockClock::time_point requested_at;
  uint64_t fence = 0;
  LockClock::time_point validity_end;
  std::vector<bool> granted;
  bool lost = false;
  bool released = false;
  bool detached = false;
  std::string last_error;
};

Lock::Lock(std::unique_ptr<State> s) : s_(std::move(s)) {}
Lock::Lock(Lock&&) noexcept = default;
Lock& Lock::operator=(Lock&& o) noexcept {
  if (this != &o) {
    ReleaseUnlessDone();
    s_ = std::move(o.s_);
  }
  return *this;
}

Lock::~Lock() {
  ReleaseUnlessDone();
}

void Lock::ReleaseUnlessDone() {
  if (!s_) return;
  bool done;
  {
    std::lock_guard<std::mutex> g(s_->mu);
    done = s_->detached || s_->released;
  }
  if (!done) release();
}

const std::string& Lock::key() const {
  return s_->key;
}
const std::string& Lock::token() const {
  return s_->token;
}
Millis Lock::ttl() const {
  return s_->ttl;
}

LockClock::time_point Lock::acquired_at() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->acquired_at;
}

LockClock::time_point Lock::requested_at() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->requested_at;
}

uint64_t Lock::fence_token() const {
  return s_->fence;  // set once, before the Lock exists
}

LockClock::time_point Lock::validity_end() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->validity_end;
}

Millis Lock::remaining() const {
  auto left = validity_end() - LockClock::now();
  return left.count() > 0 ? ToMillisFloor(left) : Millis{0};
}

std::vector<bool> Lock::granted() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->granted;
}

size_t Lock::grants() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return static_cast<size_t>(std::count(s_->granted.begin(), s_->granted.end(), true));
}

bool Lock::lost() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->lost;
}

bool Lock::released() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->released;
}

bool Lock::held() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return !s_->lost && !s_->released && LockClock::now() < s_->validity_end;
}

std::string Lock::last_error() const {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->last_error;
}

void Lock::MarkLost() {
  std::lock_guard<std::mutex> g(s_->mu);
  s_->lost = true;
}

void Lock::Detach() {
  std::lock_guard<std::mutex> g(s_->mu);
  s_->detached = true;
}

bool Lock::release() {
  {
    std::lock_guard<std::mutex> g(s_->mu);
    s_->released = true;
  }
  // Every node, not only those that granted: a node that timed out during
  // acquire or extend may hold the key anyway.
  auto r = s_->owner->ReleaseOn(s_->key, s_->token, {}, s_->owner->NodeTimeout(s_->ttl), "release");
  return r.deleted >= s_->owner->quorum();
}

Lock::ExtendResult Lock::extend(Millis ttl) {
  LockClock::time_point end;
  {
    std::lock_guard<std::mutex> g(s_->mu);
    if (s_->released || s_->lost) {
      s_->last_error = s_->released ? "the lock was released" : "the lock was lost";
      return ExtendResult::kLost;
    }
    end = s_->validity_end;
  }
  RedLock& rl = *s_->owner;
  const auto t0 = LockClock::now();
  if (t0 >= end) {
    std::lock_guard<std::mutex> g(s_->mu);
    s_->last_error = "the validity had ended before the renewal started";
    return ExtendResult::kLost;
  }
  // A renewal that arrives after the validity ended proves nothing (another
  // client may already hold the lock), so the round may not outlast it.
  auto timeout = std::min<microseconds>(rl.NodeTimeout(ttl),
                                        std::chrono::duration_cast<microseconds>(end - t0));
  std::string ms = std::to_string(ttl.count());
  RoundReport rep =
      rl.RunRound("extend", s_->key, {"SET", s_->key, s_->token, "IFEQ", s_->token, "PX", ms},
                  timeout, {}, ClassifySet);
  const auto t1 = LockClock::now();
  size_t refused = 0;
  for (const NodeOutcome& o : rep.nodes) refused += o.answer == NodeAnswer::kNo;

  ExtendResult result;
  std::string why;
  {
    std::lock_guard<std::mutex> g(s_->mu);
    if (rep.yes >= rep.quorum && t1 < s_->validity_end && !s_->released) {
      // Every renewing node keeps the key until at least t0 + ttl.
      s_->validity_end = t0 + ttl - RedLock::Drift(ttl);
      s_->granted.assign(rep.nodes.size(), false);
      for (size_t i = 0; i < rep.nodes.size(); ++i) {
        s_->granted[i] = rep.nodes[i].answer == NodeAnswer::kYes;
      }
      rep.success = true;
      rep.validity = ToMillisFloor(s_->validity_end - t1);
      result = ExtendResult::kExtended;
    } else if (refused > rep.nodes.size() - rep.quorum) {
      // Fewer than a quorum can still hold our token: renewing is hopeless.
      why = std::to_string(refused) + " of " + std::to_string(rep.nodes.size()) +
            " nodes answered that the key is not (or no longer) ours";
      result = ExtendResult::kLost;
    } else {
      why = "only " + std::to_string(rep.yes) + " of " + std::to_string(rep.nodes.size()) +
            " nodes renewed it, quorum " + std::to_string(rep.quorum);
      result = ExtendResult::kFailed;
      if (t1 >= s_->validity_end) {
        why += " before its validity ended";
        result = ExtendResult::kLost;
      }
    }
    if (result != ExtendResult::kExtended) s_->last_error = why;
  }
  rl.Notify(rep);
  return result;
}

// ---------------------------------------------------------------- RedLock

RedLock::RedLock(std::vector<Endpoint> nodes, RedLockOptions options)
    : options_(std::move(options)),
      nodes_(std::move(nodes), options_.password, options_.tls, options_.user) {
  if (nodes_.size() == 0) throw std::invalid_argument("RedLock needs at least one node");
  uint64_t seed = 0;
  while (::getrandom(&seed, sizeof(seed), 0) != sizeof(seed) && errno == EINTR) {
  }
  rng_.seed(seed);
}

RedLock::~RedLock() = default;

Millis RedLock::DefaultNodeTimeout(Millis ttl) {
  return std::clamp(ttl / 20, Millis{10}, kMaxDefaultNodeTimeout);
}

Millis RedLock::NodeTimeout(Millis ttl) const {
  return options_.node_timeout.count() > 0 ? options_.node_timeout : DefaultNodeTimeout(ttl);
}

Millis RedLock::UntimedNodeTimeout() const {
  return options_.node_timeout.count() > 0 ? options_.node_timeout : kMaxDefaultNodeTimeout;
}

std::string RedLock::NewToken() {
  // The token is what makes DELIFEQ and IFEQ safe: only its holder can know
  // it, so it must be unguessable and never repeat, hence the OS's CSPRNG.
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed");
    }
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

Millis RedLock::RetryDelay() {
  std::lock_guard<std::mutex> g(rng_mu_);
  int64_t lo = options_.retry_delay_min.count();
  int64_t hi = std::max(options_.retry_delay_max.count(), lo + 1);
  return Millis{lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo))};
}

RoundReport RedLock::RunRound(const char* op, const std::string& key,
                              std::initializer_list<std::string_view> args, microseconds timeout,
                              const std::vector<bool>& which,
                              NodeAnswer (*classify)(const resp::Reply&)) {
  std::string request;
  resp::AppendRequest(request, args);
  RoundReport rep;
  rep.op = op;
  rep.key = key;
  rep.quorum = quorum();
  const auto start = LockClock::now();
  std::vector<NodeResult> results;
  {
    std::lock_guard<std::mutex> g(round_mu_);
    results = nodes_.Round(request, 1, timeout, which);
  }
  rep.elapsed = LockClock::now() - start;
  rep.nodes.resize(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    NodeOutcome& o = rep.nodes[i];
    const NodeResult& r = results[i];
    o.latency = r.latency;
    o.sent = r.sent;
    if (!which.empty() && !which[i]) {
      o.answer = NodeAnswer::kNoAnswer;
      o.text = "skipped";
      continue;
    }
    if (!r.ok()) {
      o.answer = NodeAnswer::kNoAnswer;
      o.text = std::string(StatusName(r.status)) + ": " + r.detail;
      continue;
    }
    o.answer = classify(r.replies[0]);
    o.text = r.replies[0].ToString();
    if (r.replies[0].type == resp::Reply::Type::kInteger) o.integer = r.replies[0].integer;
    if (o.answer == NodeAnswer::kNoAnswer) o.text = "unexpected reply: " + o.text;
    rep.yes += o.answer == NodeAnswer::kYes;
  }
  return rep;
}

void RedLock::Notify(const RoundReport& report) const {
  if (options_.observer) options_.observer(report);
}

RedLock::ReleaseResult RedLock::ReleaseOn(const std::string& key, const std::string& token,
                                          const std::vector<bool>& which, Millis timeout,
                                          const char* op) {
  RoundReport rep = RunRound(op, key, {"DELIFEQ", key, token}, timeout, which, ClassifyDelIfEq);
  ReleaseResult r;
  for (size_t i = 0; i < rep.nodes.size(); ++i) {
    if (!which.empty() && !which[i]) continue;
    NodeAnswer a = rep.nodes[i].answer;
    r.deleted += a == NodeAnswer::kYes;
    r.answered += a == NodeAnswer::kYes || a == NodeAnswer::kNo;
  }
  rep.success = r.deleted >= rep.quorum;
  Notify(rep);
  return r;
}

RedLock::ReleaseResult RedLock::release(const std::string& key, const std::string& token) {
  return ReleaseOn(key, token, {}, UntimedNodeTimeout(), "release");
}

AcquireResult RedLock::acquire(const std::string& key, Millis ttl, Millis wait) {
  AcquireResult result;
  // One token for every attempt of this call, so that a grant that arrives
  // late from an earlier attempt (a slow or paused node) holds our token and
  // the release after a later failed attempt, or the final release, removes
  // it.
  const std::string token = NewToken();
  const std::string ms = std::to_string(ttl.count());
  const Millis timeout = NodeTimeout(ttl);
  const auto give_up = LockClock::now() + wait;
  while (true) {
    ++result.attempts;
    const auto t0 = LockClock::now();
    RoundReport rep = options_.fence
                          ? RunRound("acquire", key, {"SET", key, token, "NX", "PX", ms, "FENCE"},
                                     timeout, {}, ClassifyFencedSet)
                          : RunRound("acquire", key, {"SET", key, token, "NX", "PX", ms}, timeout,
                                     {}, ClassifySet);
    rep.attempt = result.attempts;
    // Fencing: the token once the floor is raised on enough nodes (within
    // the validity, like the grants themselves).
    uint64_t fence = 0;
    std::optional<RoundReport> raise;
    if (options_.fence && rep.yes >= rep.quorum && LockClock::now() < t0 + ttl - Drift(ttl)) {
      auto left =
          std::chrono::duration_cast<microseconds>(t0 + ttl - Drift(ttl) - LockClock::now());
      fence = RaiseFloor(key, token, rep, std::min<microseconds>(timeout, left), &raise);
      if (fence == 0) ++result.unfenced;
    }
    const auto t1 = LockClock::now();
    // validity = ttl - elapsed - drift, i.e. the lock is ours until
    // t0 + ttl - drift: no granting node can have set the key before t0.
    const auto validity_end = t0 + ttl - Drift(ttl);
    size_t answered = 0;
    bool contended = false, quarantined = false;
    // Where our key may be now: every node the request reached. Even one
    // that refused this time may hold our token from an earlier attempt.
    std::vector<bool> maybe_set(rep.nodes.size(), false);
    for (size_t i = 0; i < rep.nodes.size(); ++i) {
      const NodeOutcome& o = rep.nodes[i];
      contended |= o.answer == NodeAnswer::kNo;
      quarantined |= o.answer == NodeAnswer::kQuarantined;
      // Usable answers: a lock decision (even a refusal). Errors such as a
      // TTL over max-lock-ttl or NOAUTH say the node cannot serve us at all.
      answered += o.answer == NodeAnswer::kYes || o.answer == NodeAnswer::kNo ||
                  o.answer == NodeAnswer::kQuarantined;
      maybe_set[i] = o.sent;
    }
    result.contended += contended;
    result.quarantined += quarantined;
    result.reachable = answered >= rep.quorum;

    if (rep.yes >= rep.quorum && t1 < validity_end && (!options_.fence || fence != 0)) {
      rep.success = true;
      rep.validity = ToMillisFloor(validity_end - t1);
      rep.fence = fence;
      auto s = std::make_unique<Lock::State>();
      s->owner = this;
      s->key = key;
      s->token = token;
      s->ttl = ttl;
      s->acquired_at = t1;
      s->requested_at = t0;
      s->fence = fence;
      s->validity_end = validity_end;
      s->granted.resize(rep.nodes.size());
      for (size_t i = 0; i < rep.nodes.size(); ++i) {
        s->granted[i] = rep.nodes[i].answer == NodeAnswer::kYes;
      }
      Notify(rep);
      if (raise) Notify(*raise);
      result.last = std::move(rep);
      result.lock.emplace(Lock(std::move(s)));
      return result;
    }
    Notify(rep);
    if (raise) Notify(*raise);
    // Failed: release on every node, so that the minority we got does not
    // block the next attempt (ours or anyone's) until it expires.
    if (std::find(maybe_set.begin(), maybe_set.end(), true) != maybe_set.end()) {
      ReleaseOn(key, token, maybe_set, timeout, "release-after-failure");
    }
    result.last = std::move(rep);
    auto now = LockClock::now();
    if (now >= give_up) return result;
    // A random pause, so that clients that split the votes between them do
    // not start their next attempts in step and split them again.
    auto pause = std::min<LockClock::duration>(RetryDelay(), give_up - now);
    std::this_thread::sleep_for(pause);
  }
}

uint64_t RedLock::RaiseFloor(const std::string& key, const std::string& token,
                             const RoundReport& rep, microseconds timeout,
                             std::optional<RoundReport>* round) {
  uint64_t top = 0;
  for (const NodeOutcome& o : rep.nodes) {
    if (o.answer == NodeAnswer::kYes) top = std::max(top, static_cast<uint64_t>(o.integer));
  }
  const size_t needed = std::max(quorum(), std::min(options_.fence_raises, size()));
  // Nodes that gave `top` itself already have their counter there.
  size_t at_top = 0;
  std::vector<bool> below(rep.nodes.size(), false);
  for (size_t i = 0; i < rep.nodes.size(); ++i) {
    if (rep.nodes[i].answer != NodeAnswer::kYes) continue;
    if (static_cast<uint64_t>(rep.nodes[i].integer) >= top) {
      ++at_top;
    } else {
      below[i] = true;
    }
  }
  if (at_top >= needed) return top;
  // A renewal of our own key that keeps its lease (KEEPTTL) and asks for a
  // token of at least `top`: the node's counter moves there. IFEQ: only
  // where the key is still ours.
  const std::string min = std::to_string(top);
  RoundReport raise =
      RunRound("fence", key, {"SET", key, token, "IFEQ", token, "KEEPTTL", "FENCE", "MIN", min},
               timeout, below, ClassifyFencedSet);
  size_t raised = at_top;
  for (size_t i = 0; i < raise.nodes.size(); ++i) {
    if (below[i] && raise.nodes[i].answer == NodeAnswer::kYes &&
        static_cast<uint64_t>(raise.nodes[i].integer) >= top) {
      ++raised;
    }
  }
  raise.yes = raised;
  raise.quorum = needed;
  raise.success = raised >= needed;
  raise.fence = raise.success ? top : 0;
  const uint64_t out = raise.fence;
  *round = std::move(raise);
  return out;
}

std::vector<KeyState> RedLock::inspect(const std::string& key) {
  std::string request;
  resp::AppendRequest(request, {"GET", key});
  resp::AppendRequest(request, {"PTTL", key});
  std::vector<NodeResult> results;
  {
    std::lock_guard<std::mutex> g(round_mu_);
    results = nodes_.Round(request, 2, UntimedNodeTimeout());
  }
  std::vector<KeyState> out(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    KeyState& k = out[i];
    const NodeResult& r = results[i];
    k.latency = r.latency;
    if (!r.ok()) {
      k.detail = std::string(StatusName(r.status)) + ": " + r.detail;
      continue;
    }
    const resp::Reply& get = r.replies[0];
    const resp::Reply& pttl = r.replies[1];
    if (get.is_error() || pttl.type != resp::Reply::Type::kInteger) {
      k.detail = "unexpected reply: " + get.ToString() + " / " + pttl.ToString();
      continue;
    }
    k.answered = true;
    if (get.type == resp::Reply::Type::kBulk) k.value = get.str;
    k.pttl_ms = pttl.integer;
  }
  return out;
}

// ---------------------------------------------------------------- Watchdog

Watchdog::Watchdog(Lock& lock, std::function<void(const LossReport&)> on_lost)
    : lock_(lock), on_lost_(std::move(on_lost)) {
  thread_ = std::thread([this] { Run(); });
}

Watchdog::~Watchdog() {
  Stop();
}

void Watchdog::Stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int Watchdog::renewals() const {
  std::lock_guard<std::mutex> g(mu_);
  return renewals_;
}

void Watchdog::Run() {
  const Millis ttl = lock_.ttl();
  // Renew when a third of the TTL has passed: two more chances remain
  // before the lease would run out (Redisson's internalLockLeaseTime / 3).
  const auto period = std::max(ttl / 3, Millis{1});
  // After a failed renewal, try again soon: the validity is running out.
  const auto retry = std::max(ttl / 20, Millis{5});
  auto next = lock_.acquired_at() + period;
  std::string reason;
  std::unique_lock<std::mutex> lk(mu_);
  // Leaving this loop means the lock is lost; Stop() returns from inside it
  // instead, so a watchdog stopped early (even before its first turn) never
  // reports a loss that did not happen.
  while (true) {
    if (stop_) return;
    const auto end = lock_.validity_end();
    // Wake for the next renewal, or at the very moment the validity ends.
    cv_.wait_until(lk, std::min(next, end), [&] { return stop_; });
    if (stop_) return;
    if (LockClock::now() >= end) {
      reason = "its validity ended before a renewal reached a quorum";
      if (std::string last = lock_.last_error(); !last.empty()) {
        reason += " (last try: " + last + ")";
      }
      break;
    }
    lk.unlock();
    const auto started = LockClock::now();
    Lock::ExtendResult r = lock_.extend(ttl);
    lk.lock();
    if (stop_) return;
    if (r == Lock::ExtendResult::kExtended) {
      ++renewals_;
      next = started + period;
    } else if (r == Lock::ExtendResult::kLost) {
      reason = lock_.last_error();
      break;
    } else {
      next = LockClock::now() + retry;
    }
  }
  lk.unlock();
  lock_.MarkLost();
  if (on_lost_) on_lost_(LossReport{reason, LockClock::now()});
}

}  // namespace latch
