// Lock waiters (SET key value NX … WAIT timeout-ms): the server's side of
// the queues kept in waiters.h.
//
// A handoff happens where a key is released: Server::Dispatch runs
// ServeLockWaits after every command that changed a key with waiters, so the
// first waiter is granted before any other request is read — a competing
// SET NX that arrives later finds the key held. The grant is a write like
// any other: the grant operation (grant.h) admits it (the restart
// quarantine, the lease horizon, max-lock-ttl), the Store applies it and
// logs it, the TTL counts from this moment, and the reply (OK, or the
// fencing token) is held until the log has the record, as any reply is.
//
// Expiry: a held key with waiters is watched to its deadline by one timer
// (lock_timer_), armed at the earliest lease end or waiter timeout, so a
// lease that runs out passes to the next holder within a millisecond rather
// than at the expiry cycle's next sample.
#include <algorithm>

#include "protocol/reply_writer.h"
#include "server/connection.h"
#include "server/db_key.h"
#include "server/server.h"

namespace latch {

void Server::ParkForLock(Session& s, std::string_view key, LockWaitRequest request) {
  auto& c = static_cast<Connection&>(s);
  c.blocked = true;
  // Queues are per key of a database (db_key.h): the session's.
  const std::string db_key = DbKey(s.db, key);
  lock_waits_.Park(c, db_key, std::move(request));
  // The key is held (that is why it waits): once the command is over,
  // ServeLockWaits (from Dispatch) looks at it again and watches its lease.
  lock_waits_.Touched(db_key);
}

void Server::ServeLockWaits() {
  if (lock_waits_.empty()) {
    lock_waits_.TakeTouched();
    ArmLockTimer(0);
    return;
  }
  const TimeSnapshot now = Now();
  // Waiters whose time is up get nil, as a refused SET NX would.
  for (LockWaits::Waiter& w : lock_waits_.TakeTimedOut(now.mono)) {
    AnswerWaiter(w, store_.changes(), [](resp::ReplySink& r) { r.Null(); });
  }
  // Leases that ended: their keys are looked at below (the lookup removes
  // them, logged as DEL, which notes them again: harmless).
  lock_waits_.TouchExpired(now.mono);
  // A grant changes the key, which notes it again; the second look finds it
  // held and only watches its lease. So this ends after a few rounds.
  while (lock_waits_.has_touched()) {
    for (const std::string& key : lock_waits_.TakeTouched()) HandOff(key, now);
  }
  ArmLockTimer(now.mono);
}

void Server::HandOff(const std::string& db_key, const TimeSnapshot& now) {
  // The key's own database, for the lookup and the grant; the gate selects
  // the next command's database before it runs.
  store_.Select(DbOf(db_key));
  const std::string_view key = KeyOf(db_key);
  // Not an access to the key (OBJECT IDLETIME): the server looks, nobody reads.
  if (const Keyspace::Entry* e = store_.Find(key, now, /*touch=*/false)) {
    lock_waits_.WatchExpiry(db_key, e->deadline);  // still held: wait for its end
    return;
  }
  lock_waits_.WatchExpiry(db_key, kNoDeadline);
  while (const LockWaits::Waiter* first = lock_waits_.Front(db_key)) {
    const LockWaitRequest& r = first->request;
    // A log that cannot be written acknowledges no write (the gate's
    // MISCONF): the waiter keeps its place until it can.
    if (!persistence_->write_ok()) {
      lock_waits_.RetryLater(db_key);
      return;
    }
    // The grant operation decides as for any SET NX. A refusal for now (the
    // restart quarantine, a state record that cannot be written) keeps the
    // waiter first in line: the cron tries again at every tick, and the
    // waiter's own timeout still ends the wait. A refusal for good (a TTL
    // over a max-lock-ttl lowered since the client parked, an exhausted
    // token counter) answers the waiter with the error, and the next one
    // moves up.
    // The TTL counts from now, later than the request: bounded so that the
    // lease's Unix time (PXAT in the log, PEXPIRETIME) is still a number
    // (clock.h, DeadlineIn).
    const int64_t deadline = r.ttl_ms > 0 ? now.DeadlineIn(r.ttl_ms) : kNoDeadline;
    Grants::Request g;
    g.key = key;
    g.value = r.value;
    g.lease = deadline == kNoDeadline ? Lease::None() : Lease::Until(deadline);
    g.fence = r.fence;
    g.min = r.min;
    const uint64_t changes_before = store_.changes();
    Grants::Result result = grants_.Grant(g, now, /*check_ttl=*/true);
    if (result.outcome == Grants::Result::kRefused) {
      lock_waits_.RetryLater(db_key);
      return;
    }
    LockWaits::Waiter w = lock_waits_.PopFront(db_key);
    if (!result.granted()) {
      AnswerWaiter(w, changes_before, [&](resp::ReplySink& out) { out.Error(result.refusal); });
      continue;
    }
    lock_waits_.CountHandoff();
    // The waiter's SET, with the events a SET sends.
    pubsub_.Notify(kNotifyString, "set", key, DbOf(db_key));
    if (deadline != kNoDeadline) pubsub_.Notify(kNotifyGeneric, "expire", key, DbOf(db_key));
    AnswerWaiter(w, changes_before, [&](resp::ReplySink& out) {
      if (w.request.fence) {
        out.Int(static_cast<int64_t>(result.token));
      } else {
        out.Ok();
      }
    });
    return;
  }
}

void Server::AnswerWaiter(LockWaits::Waiter& w, uint64_t changes_before,
                          const std::function<void(resp::ReplySink&)>& write) {
  auto& c = static_cast<Connection&>(*w.session);
  const size_t start = c.output().size();
  resp::ReplyWriter reply(&c.output(), c.resp);
  reply.set_error_observer(this);
  write(reply);
  persistence_->Hold(c, start, changes_before);
  Unpark(c, start);
}

void Server::ArmLockTimer(int64_t now) {
  const int64_t due = lock_waits_.NextDue();
  if (due == lock_timer_due_) return;
  lock_timer_due_ = due;
  if (lock_timer_.get() == nullptr) return;  // shutting down
  if (due == INT64_MAX) {
    if (lock_timer_.initialized()) uv_timer_stop(lock_timer_.get());
    return;
  }
  if (!lock_timer_.initialized()) {
    uv_timer_init(&loop_, lock_timer_.get());
    lock_timer_.MarkInitialized();
    lock_timer_->data = this;
  }
  // libuv counts from the loop's cached time: bring it up to date so the
  // timer does not fire early by the time this iteration has taken.
  uv_update_time(&loop_);
  uv_timer_start(lock_timer_.get(), OnLockTimer,
                 static_cast<uint64_t>(std::max<int64_t>(due - now, 0)), 0);
}

void Server::OnLockTimer(uv_timer_t* t) {
  auto* server = static_cast<Server*>(t->data);
  // The timer is spent: whatever is due next is armed anew.
  server->lock_timer_due_ = INT64_MAX;
  server->ServeLockWaits();
}

}  // namespace latch
