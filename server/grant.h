// The grant operation: the one place that answers "may this key be given to
// a holder now?", and gives it.
//
// A lock is granted by a write: SET and its family (SETNX, SETEX, PSETEX,
// MSETNX), a key arriving in another database (MOVE), the handoff to a
// queued waiter (SET … NX WAIT, waits.cc), each redis.call of a script.
// Other writes re-grant or extend a lease without taking a free key: a new
// value for whoever holds the key (GETSET, INCR, APPEND…), a new term
// (PEXPIRE, GETEX). Every one of them comes here, in this order:
//
//   1. Is the key free to take? A write that takes a key only when it is
//      absent (NX, SETNX, MSETNX, MOVE's destination, an acquire script's
//      EXISTS) finds it taken when it is stored, or when clients wait in its
//      queue: a released key goes to its first waiter, even in the instant
//      between its release inside a transaction and the handoff once the
//      command is over. (Free, Queued)
//   2. The lease policy (lease_policy.h): the restart quarantine, a state
//      record that cannot be written, the lease horizon, max-lock-ttl.
//      (Admit, CheckTtl)
//   3. The fencing token, when the grant asks for one: the holder's own on a
//      renewal, else the next from the node's durable counter.
//   4. The Store's put (the keyspace change and its log record).
//
// Grant() does 2–4 for a value given to a holder; handlers that only extend
// or rewrite a held key call Admit before their own Store write. Nothing
// else asks the lease policy, so changing the admission contract means
// editing this file and lease_policy.{h,cc}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/clock.h"
#include "server/store.h"

namespace latch {

class LeasePolicy;
class Waiters;

class Grants {
 public:
  Grants(Store& store, LeasePolicy& policy, const latch::Waiters& waiters)
      : store_(store), policy_(policy), waiters_(waiters) {}
  Grants(const Grants&) = delete;
  Grants& operator=(const Grants&) = delete;

  // ---- 1. is the key free to take?
  // Whether clients wait in `key`'s queue in database `db` (SET … NX WAIT).
  // Costs one branch while nobody waits anywhere.
  bool Queued(int db, std::string_view key) const;
  // How many clients wait for `key` in database `db` (LOCKINFO).
  size_t Waiters(int db, std::string_view key) const;
  // Whether `key` (in the Store's selected database, which is `db`) is
  // neither stored nor waited for: what NX and its kin require.
  bool Free(int db, std::string_view key, const TimeSnapshot& now) {
    return store_.Find(key, now) == nullptr && !Queued(db, key);
  }

  // ---- 2. the lease policy
  // A write that grants, re-grants or extends a lease ending at `deadline`
  // (kNoDeadline: a key without one). `blind`: sent on its own, and its reply
  // does not depend on what the key held, so a restart quarantine lets it
  // through (lease_policy.h, "What a quarantine refuses"). The refusal text,
  // or nothing.
  std::optional<std::string> Admit(int64_t deadline, int64_t now, bool blind = false);
  // max-lock-ttl: the error for a lease of `ttl_ms` over the cap, or nothing.
  std::optional<std::string> CheckTtl(int64_t ttl_ms) const;

  // ---- 2–4. the whole grant of a value to a holder
  struct Request {
    std::string_view key;
    std::string_view value;
    Lease lease;
    ValueKind kind = ValueKind::kAsSet;
    // A fenced grant (SET … FENCE [MIN n]): the key gets a token of at least
    // `min` (the holder's own when it renews with the same value).
    bool fence = false;
    uint64_t min = 0;
    // A blind write (see Admit): SET without a condition, GET or FENCE,
    // sent on its own (CommandContext::alone).
    bool blind = false;
  };
  struct Result {
    enum Outcome {
      kGranted,
      // Refused for now (the quarantine, a state record that cannot be
      // written): asking again later may succeed.
      kRefused,
      // Refused for good (a lease over max-lock-ttl, an exhausted token
      // counter): asking again cannot succeed.
      kRefusedForGood,
    } outcome = kGranted;
    uint64_t token = 0;   // the key's fencing token (fenced grants)
    std::string refusal;  // the error reply, when refused
    bool granted() const { return outcome == kGranted; }
  };
  // Admits the lease (and its TTL when `check_ttl`), issues the token and
  // puts the value, in the selected database. A lease whose deadline has
  // already passed (EXAT/PXAT in the past) deletes the key instead, which
  // needs no admission and gets no token.
  Result Grant(const Request& r, const TimeSnapshot& now, bool check_ttl = false);

 private:
  // The token a fenced grant of `value` gives `key`, or the refusal.
  Result Token(std::string_view key, std::string_view value, uint64_t min, const TimeSnapshot& now);

  Store& store_;
  LeasePolicy& policy_;
  const latch::Waiters& waiters_;
};

}  // namespace latch
