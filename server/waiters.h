// Waiters: every client parked on keys, in one FIFO queue per key — lock
// waiters (`SET key value NX … WAIT timeout-ms`) and blocked pops (BLPOP,
// BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH, and the sorted sets' BZPOPMIN,
// BZPOPMAX, BZMPOP). The keys here are DbKeys (db_key.h): the same name in
// two databases has two queues.
//
// Why one machinery. Both kinds wait for a key to change: a lock waiter for
// it to be released, a pop for it to hold something to pop. Both need the
// same books — FIFO per key, "which keys changed since", timeouts,
// disconnects, CLIENT UNBLOCK, INFO blocked_clients — and the same moment of
// service: right after the command that changed the key, before any other
// request runs (Server::ServeWaiters, waits.cc).
//
// Why a queue for locks. Every Redis lock library waits for a busy lock by
// polling: SET NX, a sleep, again. Each release then starts a race nobody
// orders (the fastest poller wins, not the one that waited longest), the lock
// stays free for whatever is left of the pollers' sleeps, and most requests
// are wasted. A queue on the server fixes all three: the lock goes to the
// client that asked first, at the moment it is released, with one request
// per grant.
//
// The rules (the server applies them: waits.cc; this class keeps the books
// — queues, which keys changed, what is due — and knows no sockets, no Store
// and no clock of its own):
//  - A waiting client reads no further request until it is answered.
//  - A lock waiter waits in one key's queue; a blocked pop in the queue of
//    each key it named (each once), and the first of them that can serve it
//    does; it then leaves them all.
//  - Every write and expiry of a key reports the key here (Touched, from the
//    Store's key observer); only keys with waiters are noted, in the order
//    they were first noted (Redis's ready keys). After the command that
//    changed it — before any other request runs — a key that is now absent
//    goes to its first lock waiter (released by DEL, DELIFEQ, UNLINK, GETDEL,
//    a known release script, FLUSHALL, or expired), and a key that holds the
//    type a pop waits for serves its pop waiters in order while it can.
//    Waiters of another kind than the key can serve keep their places.
//  - A key held by a lock holder, with lock waiters, is watched to its
//    deadline (WatchExpiry), so its expiry is noticed to the millisecond by a
//    timer, not by the sampling expiry cycle.
//  - A waiter leaves the queues when it is served, when its timeout passes
//    (it gets nil), when it disconnects (Forget) or is unblocked (CLIENT
//    UNBLOCK).
//  - A grant the lease policy refuses for now (restart quarantine, a state
//    record that cannot be written) leaves the waiter first in line: the key
//    is retried at every cron tick (RetryLater). Serving a pop hands out data
//    and is a grant like any other (the quarantine rule of types.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "server/types/object.h"

namespace latch {

class Session;
struct CommandSpec;

// What a parked SET asked for, kept until it is granted.
struct LockWaitRequest {
  std::string value;
  int64_t ttl_ms = 0;      // the lease, counted from the grant; 0: none
  bool fence = false;      // reply with a fencing token
  uint64_t min = 0;        // FENCE MIN
  int64_t timeout_at = 0;  // boot-clock ms when it gives up; 0: never
};

// What a blocked pop asked for: its command as sent, which the server runs
// again — serving from the one key that can serve it — when that key holds
// a value of `type` (commands/blocking.h).
struct PopWaitRequest {
  ValueType type = ValueType::kList;
  const CommandSpec* cmd = nullptr;
  std::vector<std::string> argv;
  int64_t timeout_at = 0;  // boot-clock ms when it gives up; 0: never
};

class Waiters {
 public:
  enum class Kind : uint8_t { kLock, kPop };
  struct Waiter {
    Session* session = nullptr;
    Kind kind = Kind::kLock;
    LockWaitRequest request;  // kLock
    PopWaitRequest pop;       // kPop
  };

  Waiters() = default;
  Waiters(const Waiters&) = delete;
  Waiters& operator=(const Waiters&) = delete;

  // ---- the queues
  // Parks `s` at the tail of `key`'s queue as a lock waiter. A session waits
  // for one thing at a time (it is parked: it sends nothing else).
  void Park(Session& s, std::string_view key, LockWaitRequest r);
  // Parks `s` at the tail of the queue of each of `keys` (a key named twice
  // counts once) as a blocked pop.
  void ParkPop(Session& s, std::span<const std::string> keys, PopWaitRequest r);
  // The first waiter for `key` (of any kind), or nullptr.
  const Waiter* Front(std::string_view key) const;
  // The first lock waiter for `key`, or nullptr.
  const Waiter* FrontLock(std::string_view key) const;
  // The first pop waiter for `key` that waits for a value of `type`, or
  // nullptr.
  const Waiter* FrontPop(std::string_view key, ValueType type) const;
  // Removes and returns the first waiter for `key` (which must have one).
  Waiter PopFront(std::string_view key);
  // Removes and returns the waiter `s` (which must wait), from every queue.
  Waiter Take(const Session& s);
  // Removes `s` from the queues it waits in (a disconnect); false if it
  // waited nowhere.
  bool Forget(const Session& s);
  // Whether `s` waits here.
  bool Waiting(const Session& s) const { return where_.count(&s) != 0; }
  // The (first) key `s` waits for, or nullptr.
  const std::string* WaitingFor(const Session& s) const;

  // Lock waiters in `key`'s queue (what makes a key taken for SET NX).
  size_t waiters(std::string_view key) const;
  // Waiting sessions (INFO blocked_clients, with WAITAOF's).
  size_t total() const { return where_.size(); }
  // Of them, lock waiters (INFO latch's lock_waiters).
  size_t lock_waiters() const { return lock_waiters_; }
  // Keys with a queue, and of them those with lock waiters.
  size_t keys() const { return queues_.size(); }
  size_t lock_keys() const;
  bool empty() const { return queues_.empty(); }

  // ---- what changed
  // A write or an expiry changed `key` (the Store's key observer: one branch
  // when nobody waits).
  void Touched(std::string_view key) {
    if (!queues_.empty()) Note(key);
  }
  // FLUSHALL, SWAPDB: every key with waiters.
  void TouchedAll();
  bool has_touched() const { return !touched_.empty(); }
  // The keys noted since the last call (each once, in the order noted) that
  // still have waiters.
  std::vector<std::string> TakeTouched();
  // Serving `key` was refused for now: try again at the next tick.
  void RetryLater(std::string_view key);
  // Notes every key waiting for a retry (the cron).
  void TouchRetries();

  // ---- what is due
  // The deadline of the lease on `key` that its lock waiters wait out
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
  struct Entry;
  using Timeouts = std::multimap<int64_t, const Session*>;
  // One waiting session: its request, and its place in each queue.
  struct Entry {
    Waiter waiter;
    std::vector<std::pair<Queue*, std::list<Entry*>::iterator>> places;
    Timeouts::iterator timeout;  // timeouts_.end(): none
  };
  struct Queue {
    const std::string* key = nullptr;  // the map's own key
    std::list<Entry*> waiters;
    size_t locks = 0;     // lock waiters among them
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
  Queue& QueueFor(std::string_view key);
  Entry& Add(Session& s, Waiter w, int64_t timeout_at);
  // Takes `s` out of its queues (and each queue out of the map when it was
  // its last waiter).
  Waiter Remove(const Session* s);
  void Unwatch(Queue& q);

  Queues queues_;
  std::unordered_map<const Session*, std::unique_ptr<Entry>> where_;
  Timeouts timeouts_;
  std::set<std::pair<int64_t, std::string>> expiries_;  // (deadline, key) of watched leases
  std::vector<std::string> touched_;
  std::vector<std::string> retry_;
  size_t lock_waiters_ = 0;
  uint64_t handoffs_ = 0;
  uint64_t timed_out_ = 0;
};

// The name SET … WAIT's code and tests know the books by.
using LockWaits = Waiters;

}  // namespace latch
