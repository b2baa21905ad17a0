#include "server/waiters.h"

#include <algorithm>
#include <climits>

namespace latch {

LockWaits::Queue* LockWaits::Find(std::string_view key) {
  auto it = queues_.find(key);
  return it != queues_.end() ? &it->second : nullptr;
}

const LockWaits::Queue* LockWaits::Find(std::string_view key) const {
  auto it = queues_.find(key);
  return it != queues_.end() ? &it->second : nullptr;
}

void LockWaits::Park(Session& s, std::string_view key, LockWaitRequest r) {
  Forget(s);  // (a session waits for one key at a time)
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    it = queues_.emplace(std::string(key), Queue{}).first;
    it->second.key = &it->first;
  }
  Queue& q = it->second;
  Timeouts::iterator timeout = timeouts_.end();
  if (r.timeout_at != 0) timeout = timeouts_.emplace(r.timeout_at, &s);
  q.waiters.push_back(Waiter{&s, std::move(r)});
  where_[&s] = Position{&q, std::prev(q.waiters.end()), timeout};
}

const LockWaits::Waiter* LockWaits::Front(std::string_view key) const {
  const Queue* q = Find(key);
  return q != nullptr && !q->waiters.empty() ? &q->waiters.front() : nullptr;
}

LockWaits::Waiter LockWaits::PopFront(std::string_view key) {
  return Remove(Find(key)->waiters.front().session);
}

bool LockWaits::Forget(const Session& s) {
  if (where_.find(&s) == where_.end()) return false;
  Remove(&s);
  return true;
}

const std::string* LockWaits::WaitingFor(const Session& s) const {
  auto it = where_.find(&s);
  return it != where_.end() ? it->second.queue->key : nullptr;
}

LockWaits::Waiter LockWaits::Remove(const Session* s) {
  auto pos = where_.find(s);
  Position p = pos->second;
  where_.erase(pos);
  if (p.timeout != timeouts_.end()) timeouts_.erase(p.timeout);
  Waiter w = std::move(*p.it);
  Queue& q = *p.queue;
  q.waiters.erase(p.it);
  if (q.waiters.empty()) {
    // Nobody waits for this key any more: forget it (its expiry watch
    // included). A note of it in touched_ or retry_ finds no queue and is
    // dropped.
    Unwatch(q);
    queues_.erase(queues_.find(*q.key));
  }
  return w;
}

size_t LockWaits::waiters(std::string_view key) const {
  if (queues_.empty()) return 0;  // the common case: SET NX pays no hashing
  const Queue* q = Find(key);
  return q != nullptr ? q->waiters.size() : 0;
}

void LockWaits::Note(std::string_view key) {
  Queue* q = Find(key);
  if (q == nullptr || q->touched) return;
  q->touched = true;
  touched_.emplace_back(key);
}

void LockWaits::TouchedAll() {
  for (auto& [key, q] : queues_) Note(key);
}

std::vector<std::string> LockWaits::TakeTouched() {
  std::vector<std::string> out;
  out.swap(touched_);
  std::erase_if(out, [&](const std::string& key) {
    Queue* q = Find(key);
    if (q == nullptr) return true;
    q->touched = false;
    return false;
  });
  return out;
}

void LockWaits::RetryLater(std::string_view key) {
  Queue* q = Find(key);
  if (q == nullptr || q->retry) return;
  q->retry = true;
  retry_.emplace_back(key);
}

void LockWaits::TouchRetries() {
  std::vector<std::string> keys;
  keys.swap(retry_);
  for (const std::string& key : keys) {
    if (Queue* q = Find(key)) {
      q->retry = false;
      Note(key);
    }
  }
}

void LockWaits::Unwatch(Queue& q) {
  if (q.watched != 0) expiries_.erase({q.watched, *q.key});
  q.watched = 0;
}

void LockWaits::WatchExpiry(std::string_view key, int64_t deadline) {
  Queue* q = Find(key);
  if (q == nullptr || q->watched == deadline) return;
  Unwatch(*q);
  if (deadline == 0) return;
  q->watched = deadline;
  expiries_.emplace(deadline, *q->key);
}

int64_t LockWaits::NextDue() const {
  int64_t due = INT64_MAX;
  // A lease has ended once the clock is past its deadline (Redis's rule:
  // now > deadline), so the first moment to look is deadline + 1.
  if (!expiries_.empty()) due = expiries_.begin()->first + 1;
  if (!timeouts_.empty()) due = std::min(due, timeouts_.begin()->first);
  return due;
}

void LockWaits::TouchExpired(int64_t now) {
  while (!expiries_.empty() && now > expiries_.begin()->first) {
    auto [deadline, key] = *expiries_.begin();
    expiries_.erase(expiries_.begin());
    if (Queue* q = Find(key)) {
      q->watched = 0;
      Note(key);
    }
  }
}

std::vector<LockWaits::Waiter> LockWaits::TakeTimedOut(int64_t now) {
  std::vector<Waiter> out;
  while (!timeouts_.empty() && now >= timeouts_.begin()->first) {
    out.push_back(Remove(timeouts_.begin()->second));
    ++timed_out_;
  }
  return out;
}

}  // namespace latch
