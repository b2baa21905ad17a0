// latch::RedLock: one lock held on a majority of N independent nodes.
//
// The algorithm (REFERENCE.md, "RedLock"; seeds 002 and 003):
//  1. Note the time t0 on the monotonic clock.
//  2. Send `SET key token NX PX ttl` to every node at once (NodeSet::Round),
//     with a per-node timeout far below the TTL.
//  3. The lock is held if at least N/2+1 nodes granted it and time is left:
//     validity = ttl - elapsed - drift, i.e. it ends at t0 + ttl - drift.
//     t0 is before any node could have set the key, so every granting node
//     keeps it at least until t0 + ttl; drift (ttl/100 + 2 ms) covers clock
//     rate differences and the milliseconds the nodes round down.
//  4. Otherwise release on every node (a node that timed out may still have
//     granted) and retry after a random delay, so that clients that collided
//     do not collide again, until `wait` is used up.
// Release is `DELIFEQ key token` on every node: it only deletes our own lock.
// Extend is `SET key token IFEQ token PX ttl`: it only renews our own lock,
// and counts only if a majority renewed it before the current validity ended.
//
// Every network step is one parallel round bounded by the node timeout, so a
// node that is down, slow, paused, quarantined or answering garbage costs at
// most that timeout and counts as a failure; it never hangs the caller.
//
// A Watchdog (as in Redisson) renews a held lock every ttl/3 from a thread and
// reports, through a callback, the moment the lock can no longer be trusted.
//
// Fencing (RedLockOptions::fence, latch nodes only). Each node's tokens come
// from its own counter, so they cannot be compared across nodes. A fenced
// acquire takes them in two steps:
//  1. `SET key token NX PX ttl FENCE` everywhere: each granting node replies
//     its token; T is the largest one of the majority.
//  2. Raise the floor: every granting node whose token is below T gets
//     `SET key token IFEQ token KEEPTTL FENCE MIN T`, which moves its
//     counter to at least T. The lock's token is T once a majority of nodes
//     (fence_raises, if larger) is at T or above; otherwise the attempt fails
//     like one without a quorum.
// Then any later acquire — one whose first request leaves after T was known
// — gets a larger token: its majority shares a node with the raised one,
// whose counter was already at T or above when it granted. docs/guide.md
// ("Fencing tokens for RedLock") has the proof and its assumptions.
//
// All timing uses CLOCK_BOOTTIME (LockClock below): monotonic like
// steady_clock, but it keeps counting while the machine is suspended, as the
// server's lease clock does. A client that sleeps through part of its lease
// must see its validity shrink by that much.
#pragma once

#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tools/redlock/node_set.h"

namespace latch {

struct BootClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<BootClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept {
    timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return time_point(duration(static_cast<rep>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec));
  }
};
using LockClock = BootClock;
using Millis = std::chrono::milliseconds;

// How one node answered one lock command, reduced to what RedLock needs.
enum class NodeAnswer {
  kYes,          // granted / renewed / deleted
  kNo,           // a clean refusal: the key is held by someone else (or not ours)
  kQuarantined,  // -QUARANTINE: the node restarted and grants nothing for now
  kError,        // another error reply (e.g. TTL over max-lock-ttl, NOAUTH, LOADING)
  kNoAnswer,     // down, timed out, closed, garbage: the outcome is unknown
};
const char* AnswerName(NodeAnswer a);

struct NodeOutcome {
  NodeAnswer answer = NodeAnswer::kNoAnswer;
  std::string text;     // the reply as redis-cli would show it, or the failure's reason
  int64_t integer = 0;  // an integer reply's value (SET … FENCE: the node's token)
  std::chrono::microseconds latency{0};
  bool sent = false;  // the request left for the node (else it cannot have applied it)
};

// One parallel round of one operation, for --verbose output and statistics.
struct RoundReport {
  const char* op = "";  // "acquire", "release", "extend", "release-after-failure"
  std::string key;
  int attempt = 0;  // acquire: 1, 2, …
  std::vector<NodeOutcome> nodes;
  size_t yes = 0;
  size_t quorum = 0;
  LockClock::duration elapsed{};
  bool success = false;
  Millis validity{0};  // acquire/extend success: the validity it gave
  uint64_t fence = 0;  // a fenced acquire's token (the largest the majority gave)
};

struct RedLockOptions {
  std::string password;  // sent with AUTH on every new connection when non-empty
  std::string user;      // …as AUTH user password when non-empty (an ACL user)
  // Non-null: the nodes are reached over TLS (tls_client.h: --tls …).
  std::shared_ptr<const TlsClient> tls;
  // Per-node timeout of one round; 0 = derived from the TTL (see NodeTimeout).
  Millis node_timeout{0};
  // Random delay between acquire attempts, uniformly in [min, max).
  Millis retry_delay_min{50};
  Millis retry_delay_max{250};
  // Called after every round (from whichever thread ran it).
  std::function<void(const RoundReport&)> observer;
  // Acquire with fencing tokens (latch nodes only: see the top of this
  // file). Lock::fence_token() is then the lock's token.
  bool fence = false;
  // How many nodes must be at the token or above before it is used: a
  // majority when 0. More tolerates nodes losing their counters (their
  // storage): with N nodes and a majority q, N - q + f + 1 raises survive f
  // such nodes.
  size_t fence_raises = 0;
};

class RedLock;

// A lock held on a quorum. Move-only. Unless Detach()ed, a lock still held
// is released when the object goes; it must not outlive its RedLock.
// Thread-safe: a Watchdog may renew it while another thread reads it.
class Lock {
 public:
  Lock(Lock&&) noexcept;
  Lock& operator=(Lock&&) noexcept;
  ~Lock();

  const std::string& key() const;
  const std::string& token() const;  // 32 hex digits: 128 random bits
  Millis ttl() const;
  LockClock::time_point acquired_at() const;  // when the quorum was known
  // When the winning attempt's requests left: any acquire whose requests
  // leave after acquired_at() gets a larger fencing token.
  LockClock::time_point requested_at() const;
  // The fencing token (RedLockOptions::fence), 0 without fencing.
  uint64_t fence_token() const;
  LockClock::time_point validity_end() const;
  Millis remaining() const;           // until validity_end, 0 when over
  std::vector<bool> granted() const;  // which nodes granted (or last renewed) it
  size_t grants() const;
  bool lost() const;      // renewal failed for good (see Watchdog)
  bool released() const;  // release() was called
  // Not released, not lost, and validity not over: the holder may act.
  bool held() const;

  // DELIFEQ on every node. True when it was deleted on a quorum (false: it
  // had already expired or been taken on most nodes). Idempotent.
  bool release();

  enum class ExtendResult {
    kExtended,  // a quorum renewed it within the current validity
    kFailed,    // no quorum this time; the old validity still stands
    kLost,      // cannot succeed any more: validity over, or a majority
                // answered that the key is not (or no longer) ours
  };
  // SET key token IFEQ token PX ttl on every node. On success the validity
  // becomes (start of this round) + ttl - drift.
  ExtendResult extend(Millis ttl);
  // Why the last extend() did not return kExtended (for messages).
  std::string last_error() const;
  // Marks the lock lost (the watchdog does this when it gives up).
  void MarkLost();
  // Keeps the lock on the nodes when this object goes (latch-redlock acquire).
  void Detach();

 private:
  friend class RedLock;
  struct State;
  explicit Lock(std::unique_ptr<State> s);
  void ReleaseUnlessDone();
  std::unique_ptr<State> s_;
};

struct AcquireResult {
  std::optional<Lock> lock;
  int attempts = 0;
  int contended = 0;    // attempts where some node said the key was taken
  int quarantined = 0;  // attempts where some node answered -QUARANTINE
  int unfenced = 0;     // attempts that won a majority but could not raise the floor
  // Whether a quorum of nodes gave a usable answer (yes, no or quarantine)
  // in the last attempt: false means the nodes are unreachable or failing
  // (down, timing out, garbage, error replies) rather than busy.
  bool reachable = false;
  RoundReport last;  // the last acquire round
  explicit operator bool() const { return lock.has_value(); }
};

// A node's view of one key (latch-redlock status).
struct KeyState {
  bool answered = false;
  std::optional<std::string> value;  // nullopt: no such key
  int64_t pttl_ms = -2;
  std::string detail;  // when !answered
  std::chrono::microseconds latency{0};
};

class RedLock {
 public:
  explicit RedLock(std::vector<Endpoint> nodes, RedLockOptions options = {});
  ~RedLock();
  RedLock(const RedLock&) = delete;
  RedLock& operator=(const RedLock&) = delete;

  size_t size() const { return nodes_.size(); }
  size_t quorum() const { return Quorum(nodes_.size()); }
  const Endpoint& endpoint(size_t i) const { return nodes_.endpoint(i); }

  // Tries to acquire `key` for `ttl`, retrying until `wait` has passed (0:
  // one attempt). Returns within about wait + two node timeouts.
  AcquireResult acquire(const std::string& key, Millis ttl, Millis wait = Millis{0});

  // Releases a lock known only by its token (latch-redlock release).
  struct ReleaseResult {
    size_t deleted = 0;   // nodes where the key held the token and was deleted
    size_t answered = 0;  // nodes that answered at all
  };
  ReleaseResult release(const std::string& key, const std::string& token);

  // GET and PTTL of `key` on every node.
  std::vector<KeyState> inspect(const std::string& key);

  // N/2+1: any two quorums share a node, so two clients cannot both hold one.
  static size_t Quorum(size_t n) { return n / 2 + 1; }
  // ttl/100 + 2 ms.
  static Millis Drift(Millis ttl) { return ttl / 100 + Millis{2}; }
  // clamp(ttl/20, 10 ms, 200 ms): small against the TTL, generous for a LAN.
  static Millis DefaultNodeTimeout(Millis ttl);
  static constexpr Millis kMaxDefaultNodeTimeout{200};
  // A fresh 128-bit token from getrandom(), as 32 hex digits.
  static std::string NewToken();

 private:
  friend class Lock;
  // The per-node timeout for a lock of this TTL (options_.node_timeout wins).
  Millis NodeTimeout(Millis ttl) const;
  // For commands with no TTL to scale by (release by token, inspect).
  Millis UntimedNodeTimeout() const;
  // One round of one command on the selected nodes (all when `which` is
  // empty), each answer classified by `classify`. The observer is not told:
  // callers first fill in attempt/success, then call Notify.
  RoundReport RunRound(const char* op, const std::string& key,
                       std::initializer_list<std::string_view> args,
                       std::chrono::microseconds timeout, const std::vector<bool>& which,
                       NodeAnswer (*classify)(const resp::Reply&));
  void Notify(const RoundReport& report) const;
  ReleaseResult ReleaseOn(const std::string& key, const std::string& token,
                          const std::vector<bool>& which, Millis timeout, const char* op);
  Millis RetryDelay();
  // Fencing, step 2 (see the top of this file): raises the floor to the
  // largest token of `rep` on the granting nodes below it. The token once
  // enough nodes are at it or above, else 0; *round is the raising round
  // (left empty when every granting node gave that token already), for the
  // observer, which hears of it after the acquire round.
  uint64_t RaiseFloor(const std::string& key, const std::string& token, const RoundReport& rep,
                      std::chrono::microseconds timeout, std::optional<RoundReport>* round);

  RedLockOptions options_;
  std::mutex round_mu_;  // one round at a time on the shared connections
  NodeSet nodes_;
  std::mutex rng_mu_;
  std::mt19937_64 rng_;
};

// Why the watchdog gave up.
struct LossReport {
  std::string reason;
  LockClock::time_point when;
};

// Renews `lock` every ttl/3 (Redisson's watchdog) from its own thread until
// Stop() or destruction. When a renewal cannot reach a quorum, it retries
// until the validity ends; when the validity ends without one, or when a
// majority says the key is no longer ours, it marks the lock lost and calls
// on_lost once, from the watchdog thread, at that moment.
class Watchdog {
 public:
  Watchdog(Lock& lock, std::function<void(const LossReport&)> on_lost);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Stops renewing (waits for a renewal in flight, at most a node timeout).
  void Stop();
  int renewals() const;

 private:
  void Run();

  Lock& lock_;
  std::function<void(const LossReport&)> on_lost_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  int renewals_ = 0;
  std::thread thread_;
};

}  // namespace latch
