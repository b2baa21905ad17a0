#include "server/grant.h"

#include "server/db_key.h"
#include "server/lease_policy.h"
#include "server/waiters.h"

namespace latch {

bool Grants::Queued(int db, std::string_view key) const {
  // The common case, nobody waiting anywhere, pays no hashing.
  return !waiters_.empty() && waiters_.waiters(DbKey(db, key)) > 0;
}

size_t Grants::Waiters(int db, std::string_view key) const {
  return waiters_.empty() ? 0 : waiters_.waiters(DbKey(db, key));
}

std::optional<std::string> Grants::Admit(int64_t deadline, int64_t now, bool blind) {
  return policy_.Admit(deadline, now, blind);
}

std::optional<std::string> Grants::CheckTtl(int64_t ttl_ms) const {
  return policy_.CheckTtl(ttl_ms);
}

Grants::Result Grants::Token(std::string_view key, std::string_view value, uint64_t min,
                             const TimeSnapshot& now) {
  Result r;
  // A renewal (the same value) keeps the holder's token, unless MIN asks
  // for a larger one: the token names the holder, not the term.
  const Keyspace::Entry* old = store_.Peek(key);
  const uint64_t held = old != nullptr && old->value() == value ? old->token() : 0;
  if (held != 0 && held >= min) {
    r.token = held;
    return r;
  }
  if (auto t = policy_.IssueToken(now.mono, min)) {
    r.token = *t;
    return r;
  }
  r.outcome = policy_.exhausted(min) ? Result::kRefusedForGood : Result::kRefused;
  r.refusal = policy_.TokenRefusal();
  return r;
}

Grants::Result Grants::Grant(const Request& req, const TimeSnapshot& now, bool check_ttl) {
  Result r;
  const bool deletes = req.lease.kind == Lease::kUntil && req.lease.deadline < now.mono;
  if (!deletes) {
    int64_t deadline = req.lease.deadline;
    if (req.lease.kind == Lease::kKeep) {
      const Keyspace::Entry* old = store_.Peek(req.key);
      deadline = old != nullptr ? old->deadline : kNoDeadline;
    }
    if (check_ttl && deadline != kNoDeadline) {
      if (auto err = policy_.CheckTtl(deadline - now.mono)) {
        r.outcome = Result::kRefusedForGood;
        r.refusal = std::move(*err);
        return r;
      }
    }
    if (auto err = policy_.Admit(deadline, now.mono, req.blind)) {
      r.outcome = Result::kRefused;
      r.refusal = std::move(*err);
      return r;
    }
  }
  // Without FENCE the key keeps its token if its value stays (store.h).
  uint64_t token = Keyspace::kKeepTokenIfSame;
  if (req.fence && !deletes) {
    Result t = Token(req.key, req.value, req.min, now);
    if (!t.granted()) return t;
    token = r.token = t.token;
  }
  // (A deadline already past deletes the key, and the log says DEL.)
  store_.Put(req.key, req.value, req.lease, now, req.kind, token);
  return r;
}

}  // namespace latch
