// Lock waiters: clients parked by `SET key value NX … WAIT timeout-ms`, in
// one FIFO queue per key. The keys here are DbKeys (db_key.h): the same name
// in two databases has two queues.
//
// Why. Every Redis lock library waits for a busy lock by polling: SET NX, a
// sleep, again. Each release then starts a race nobody orders (the fastest
// poller wins, not the one that waited longest), the lock stays free for
// whatever is left of the pollers' sleeps, and most requests are wasted. A
// queue on the server fixes all three: the lock goes to the client that
// asked first, at the moment it is released, with one request per grant.
//
// The rules (the server applies them: lock_waits.cc; this class keeps the
// books — queues, which keys changed, what is due — and knows no sockets,
// no Store and no clock of its own):
//  - SET … NX WAIT on a held key parks the client at the tail of the key's
//    queue; it reads no further request until it is answered.
//  - Every write and expiry of a key reports the key here (Touched, from the
//    Store's key observer); only keys with waiters are noted. After the
//    command that changed it — before any other request runs — a key that is
//    now absent goes to its first waiter: released by DEL, DELIFEQ, DELEX,
//    UNLINK, GETDEL, a known release script, FLUSHALL, or expired.
//  - A key that is held is watched to its deadline (WatchExpiry), so its
//    expiry is noticed to the millisecond by a timer, not by the sampling
//    expiry cycle.
//  - A waiter leaves the queue when it is granted, when its timeout passes
//    (it gets nil), or when it disconnects (Forget).
//  - A grant the lease policy refuses for now (restart quarantine, a state
//    record that cannot be written) leaves the waiter at the head of the
//    queue: the key is retried at every cron tick (RetryLater).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace latch {

class Session;

// What a parked SET asked for, kept until it is granted.
struct LockWaitRequest {
  std::string value;
  int64_t ttl_ms = 0;      // the lease, counted from the grant; 0: none
  bool fence = false;      // reply with a fencing token
  uint64_t min = 0;        // FENCE MIN
  int64_t timeout_at = 0;  // boot-clock ms when it gives up; 0: never
};

class LockWaits {
 public:
  struct Waiter {
    Session* session = nullptr;
    LockWaitRequest request;
  };

  LockWaits() = default;
  LockWaits(const LockWaits&) = delete;
  LockWaits& operator=(const LockWaits&) = delete;

  // ---- the queues
  // Parks `s` at the tail of `key`'s queue. A session waits for one key at
  // a time (it is parked: it sends nothing else).
  void Park(Session& s, std::string_view key, LockWaitRequest r);
  // The first waiter for `key`, or nullptr.
  const Waiter* Front(std::string_view key) const;
  // Removes and returns the first waiter for `key` (which must have one).
  Waiter PopFront(std::string_view key);
  // Removes `s` from the queue it waits in (a disconnect); false if it
  // waited nowhere.
  bool Forget(const Session& s);
  // The key `s` waits for, or nullptr.
  const std::string* WaitingFor(const Session& s) const;

  size_t waiters(std::string_view key) const;
  size_t total() const { return where_.size(); }
  size_t keys() const { return queues_.size(); }
  bool empty() const { return queues_.empty(); }

  // ---- what changed
  // A write or an expiry changed `key` (the Store's key observer: one branch
  // when nobody waits).
  void Touched(std::string_view key) {
    if (!queues_.empty()) Note(key);
  }
  // FLUSHALL: every key with waiters.
  void TouchedAll();
  bool has_touched() const { return !touched_.empty(); }
  // The keys noted since the last call (each once) that still have waiters.
  std::vector<std::string> TakeTouched();
  // A grant for `key` was refused for now: try again at the next tick.
  void RetryLater(std::string_view key);
  // Notes every key waiting for a retry (the cron).
  void TouchRetries();

  // ---- what is due
  // The deadline of the lease on `key` that its waiters wait out
  // (kNoDeadline, 0: none); replaces the previous one.
  void WatchExpiry(std::string_view key, int64_t deadline);
  // The earliest boot-clock ms at which something is due: a watched lease
  // has ended (now > deadline) or a waiter's timeout passed. INT64_MAX:
  // nothing.
  int64_t NextDue() const;
  // Notes the keys whose watched lease has ended at `now`.
  void TouchExpired(int64_t now);
  // Removes and returns the waiters whose timeout has passed at `now`.
  std::vector<Waiter> TakeTimedOut(int64_t now);

  // ---- counters (INFO)
  uint64_t handoffs() const { return handoffs_; }
  uint64_t timeouts() const { return timed_out_; }
  void CountHandoff() { ++handoffs_; }

 private:
  struct Queue;
  using Timeouts = std::multimap<int64_t, const Session*>;
  struct Position {
    Queue* queue;
    std::list<Waiter>::iterator it;
    Timeouts::iterator timeout;  // timeouts_.end(): none
  };
  struct Queue {
    const std::string* key = nullptr;  // the map's own key
    std::list<Waiter> waiters;
    int64_t watched = 0;  // the lease deadline watched (0: none)
    bool touched = false;
    bool retry = false;
  };
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using Queues = std::unordered_map<std::string, Queue, Hash, std::equal_to<>>;

  void Note(std::string_view key);
  Queue* Find(std::string_view key);
  const Queue* Find(std::string_view key) const;
  // Takes `s` out of its queue (and the queue out of the map when it was
  // the last waiter).
  Waiter Remove(const Session* s);
  void Unwatch(Queue& q);

  Queues queues_;
  std::unordered_map<const Session*, Position> where_;
  Timeouts timeouts_;
  std::set<std::pair<int64_t, std::string>> expiries_;  // (deadline, key) of watched leases
  std::vector<std::string> touched_;
  std::vector<std::string> retry_;
  uint64_t handoffs_ = 0;
  uint64_t timed_out_ = 0;
};

}  // namespace latch
