#include "server/waiters.h"

#include <algorithm>
#include <climits>

namespace latch {

Waiters::Queue* Waiters::Find(std::string_view key) {
  auto it = queues_.find(key);
  return it != queues_.end() ? &it->second : nullptr;
}

const Waiters::Queue* Waiters::Find(std::string_view key) const {
  auto it = queues_.find(key);
  return it != queues_.end() ? &it->second : nullptr;
}

Waiters::Queue& Waiters::QueueFor(std::string_view key) {
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    it = queues_.emplace(std::string(key), Queue{}).first;
    it->second.key = &it->first;
  }
  return it->second;
}

Waiters::Entry& Waiters::Add(Session& s, Waiter w, int64_t timeout_at) {
  Forget(s);  // (a session waits for one thing at a time)
  auto entry = std::make_unique<Entry>();
  entry->waiter = std::move(w);
  entry->waiter.session = &s;
  entry->timeout = timeout_at != 0 ? timeouts_.emplace(timeout_at, &s) : timeouts_.end();
  if (entry->waiter.kind == Kind::kLock) ++lock_waiters_;
  Entry& e = *entry;
  where_[&s] = std::move(entry);
  return e;
}

void Waiters::Park(Session& s, std::string_view key, LockWaitRequest r) {
  Waiter w;
  w.kind = Kind::kLock;
  const int64_t timeout_at = r.timeout_at;
  w.request = std::move(r);
  Entry& e = Add(s, std::move(w), timeout_at);
  Queue& q = QueueFor(key);
  q.waiters.push_back(&e);
  ++q.locks;
  e.places.emplace_back(&q, std::prev(q.waiters.end()));
}

void Waiters::ParkPop(Session& s, std::span<const std::string> keys, PopWaitRequest r) {
  Waiter w;
  w.kind = Kind::kPop;
  const int64_t timeout_at = r.timeout_at;
  w.pop = std::move(r);
  Entry& e = Add(s, std::move(w), timeout_at);
  for (const std::string& key : keys) {
    Queue& q = QueueFor(key);
    // A key named twice waits once (BLPOP k k 0).
    if (!q.waiters.empty() && q.waiters.back() == &e) continue;
    q.waiters.push_back(&e);
    e.places.emplace_back(&q, std::prev(q.waiters.end()));
  }
}

const Waiters::Waiter* Waiters::Front(std::string_view key) const {
  const Queue* q = Find(key);
  return q != nullptr && !q->waiters.empty() ? &q->waiters.front()->waiter : nullptr;
}

const Waiters::Waiter* Waiters::FrontLock(std::string_view key) const {
  const Queue* q = Find(key);
  if (q == nullptr || q->locks == 0) return nullptr;
  for (const Entry* e : q->waiters) {
    if (e->waiter.kind == Kind::kLock) return &e->waiter;
  }
  return nullptr;
}

const Waiters::Waiter* Waiters::FrontPop(std::string_view key, ValueType type) const {
  const Queue* q = Find(key);
  if (q == nullptr || q->locks == q->waiters.size()) return nullptr;
  for (const Entry* e : q->waiters) {
    if (e->waiter.kind == Kind::kPop && e->waiter.pop.type == type) return &e->waiter;
  }
  return nullptr;
}

Waiters::Waiter Waiters::PopFront(std::string_view key) {
  return Remove(Find(key)->waiters.front()->waiter.session);
}

Waiters::Waiter Waiters::Take(const Session& s) {
  return Remove(&s);
}

bool Waiters::Forget(const Session& s) {
  if (where_.find(&s) == where_.end()) return false;
  Remove(&s);
  return true;
}

const std::string* Waiters::WaitingFor(const Session& s) const {
  auto it = where_.find(&s);
  if (it == where_.end() || it->second->places.empty()) return nullptr;
  return it->second->places.front().first->key;
}

Waiters::Waiter Waiters::Remove(const Session* s) {
  auto pos = where_.find(s);
  std::unique_ptr<Entry> e = std::move(pos->second);
  where_.erase(pos);
  if (e->timeout != timeouts_.end()) timeouts_.erase(e->timeout);
  const bool lock = e->waiter.kind == Kind::kLock;
  if (lock) --lock_waiters_;
  for (auto& [q, it] : e->places) {
    q->waiters.erase(it);
    if (lock) --q->locks;
    if (q->waiters.empty()) {
      // Nobody waits for this key any more: forget it (its expiry watch
      // included). A note of it in touched_ or retry_ finds no queue and is
      // dropped.
      Unwatch(*q);
      queues_.erase(queues_.find(*q->key));
    } else if (q->locks == 0) {
      Unwatch(*q);  // only pops wait here now: no lease to watch for them
    }
  }
  return std::move(e->waiter);
}

size_t Waiters::waiters(std::string_view key) const {
  if (queues_.empty()) return 0;  // the common case: SET NX pays no hashing
  const Queue* q = Find(key);
  return q != nullptr ? q->locks : 0;
}

size_t Waiters::lock_keys() const {
  size_t n = 0;
  for (const auto& [key, q] : queues_) n += q.locks > 0 ? 1 : 0;
  return n;
}

void Waiters::Note(std::string_view key) {
  Queue* q = Find(key);
  if (q == nullptr || q->touched) return;
  q->touched = true;
  touched_.emplace_back(key);
}

void Waiters::TouchedAll() {
  for (auto& [key, q] : queues_) Note(key);
}

std::vector<std::string> Waiters::TakeTouched() {
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

void Waiters::RetryLater(std::string_view key) {
  Queue* q = Find(key);
  if (q == nullptr || q->retry) return;
  q->retry = true;
  retry_.emplace_back(key);
}

void Waiters::TouchRetries() {
  std::vector<std::string> keys;
  keys.swap(retry_);
  for (const std::string& key : keys) {
    if (Queue* q = Find(key)) {
      q->retry = false;
      Note(key);
    }
  }
}

void Waiters::Unwatch(Queue& q) {
  if (q.watched != 0) expiries_.erase({q.watched, *q.key});
  q.watched = 0;
}

void Waiters::WatchExpiry(std::string_view key, int64_t deadline) {
  Queue* q = Find(key);
  if (q == nullptr || q->watched == deadline) return;
  Unwatch(*q);
  if (deadline == 0) return;
  q->watched = deadline;
  expiries_.emplace(deadline, *q->key);
}

int64_t Waiters::NextDue() const {
  int64_t due = INT64_MAX;
  // A lease has ended once the clock is past its deadline (Redis's rule:
  // now > deadline), so the first moment to look is deadline + 1.
  if (!expiries_.empty()) due = expiries_.begin()->first + 1;
  if (!timeouts_.empty()) due = std::min(due, timeouts_.begin()->first);
  return due;
}

void Waiters::TouchExpired(int64_t now) {
  while (!expiries_.empty() && now > expiries_.begin()->first) {
    auto [deadline, key] = *expiries_.begin();
    expiries_.erase(expiries_.begin());
    if (Queue* q = Find(key)) {
      q->watched = 0;
      Note(key);
    }
  }
}

std::vector<Waiters::Waiter> Waiters::TakeTimedOut(int64_t now) {
  std::vector<Waiter> out;
  while (!timeouts_.empty() && now >= timeouts_.begin()->first) {
    out.push_back(Remove(timeouts_.begin()->second));
    ++timed_out_;
  }
  return out;
}

}  // namespace latch
