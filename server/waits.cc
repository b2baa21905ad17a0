// Clients parked on keys (waiters.h): the server's side — serving them.
//
// Lock waiters (SET key value NX … WAIT timeout-ms) and blocked pops (BLPOP,
// BLMOVE, BZPOPMIN…) wait in the same queues and are served at the same
// moment: Server::Dispatch runs ServeWaiters after every command that
// changed a key with waiters, so a released lock or a pushed element goes to
// the first client waiting for it before any other request is read — a
// competing SET NX or LPOP that arrives later finds the key held, or the
// element gone. Serving can change other keys (BLMOVE pushes into its
// destination), which are served in turn, in the order they changed
// (Redis's handleClientsBlockedOnKeys).
//
// Either way the service is a write like any other, and a grant: the grant
// operation (grant.h) admits it (the restart quarantine, the lease horizon,
// max-lock-ttl), the Store applies it and logs it (a served BLPOP is logged
// as LPOP key 1), and the reply is held until the log has the record, as
// any reply is. A grant refused for now leaves the waiter first in line,
// retried at every cron tick, until it is admitted or its own timeout ends
// the wait.
//
// - A lock waiter's handoff happens here (HandOffLock): the key is absent,
//   the first lock waiter gets it with the TTL it asked for, counted from
//   this moment.
// - A blocked pop is served by its own command, run again with the key that
//   may serve it (RunParked, ctx.serving_key): the family's handler knows
//   what to pop and what to reply (commands/blocking.h), so a command's
//   whole behaviour stays in its family file.
//
// Expiry: a held key with lock waiters is watched to its deadline by one
// timer (lock_timer_), armed at the earliest lease end or waiter timeout, so
// a lease that runs out passes to the next holder within a millisecond
// rather than at the expiry cycle's next sample.
#include <algorithm>
#include <new>

#include "protocol/reply_writer.h"
#include "server/connection.h"
#include "server/db_key.h"
#include "server/log.h"
#include "server/server.h"

namespace latch {

void Server::ParkForLock(Session& s, std::string_view key, LockWaitRequest request) {
  auto& c = static_cast<Connection&>(s);
  c.blocked = true;
  // Queues are per key of a database (db_key.h): the session's.
  const std::string db_key = DbKey(s.db, key);
  waiters_.Park(c, db_key, std::move(request));
  // The key is held (that is why it waits): once the command is over,
  // ServeWaiters (from Dispatch) looks at it again and watches its lease.
  waiters_.Touched(db_key);
}

void Server::ParkForKeys(Session& s, std::span<const std::string_view> keys,
                         PopWaitRequest request) {
  auto& c = static_cast<Connection&>(s);
  c.blocked = true;
  std::vector<std::string> db_keys;
  db_keys.reserve(keys.size());
  for (std::string_view key : keys) db_keys.push_back(DbKey(s.db, key));
  // (Nothing to look at now: the command found every key empty.)
  waiters_.ParkPop(c, db_keys, std::move(request));
}

void Server::ServeWaiters() {
  if (waiters_.empty()) {
    waiters_.TakeTouched();
    ArmLockTimer(0);
    return;
  }
  const TimeSnapshot now = Now();
  // Waiters whose time is up get nil (a lock waiter: as a refused SET NX)
  // or a null array (a pop: Redis's reply to a blocked pop's timeout).
  for (Waiters::Waiter& w : waiters_.TakeTimedOut(now.mono)) {
    AnswerWaiter(w, store_.changes(), [&](resp::ReplySink& r) { ReplyTimedOut(w.kind, r); });
  }
  // Leases that ended: their keys are looked at below (the lookup removes
  // them, logged as DEL, which notes them again: harmless).
  waiters_.TouchExpired(now.mono);
  // A service changes the key (and a BLMOVE its destination), which notes
  // it again; the next look finds nothing more to do there. So this ends
  // after a few rounds.
  while (waiters_.has_touched()) {
    const std::vector<std::string> keys = waiters_.TakeTouched();
    // Lock waiters first: every touched key that is free goes to its first
    // lock waiter before any pop is served, so a pop whose push lands on
    // such a key (BLMOVE's destination) cannot create it in between and
    // take it from the queue.
    for (const std::string& key : keys) {
      store_.Select(DbOf(key));
      if (waiters_.FrontLock(key) != nullptr &&
          store_.Find(KeyOf(key), now, /*touch=*/false) == nullptr) {
        ServeKey(key, now);
      }
    }
    for (const std::string& key : keys) ServeKey(key, now);
  }
  ArmLockTimer(now.mono);
}

void Server::ReplyTimedOut(Waiters::Kind kind, resp::ReplySink& r) {
  if (kind == Waiters::Kind::kLock) {
    r.Null();
  } else {
    r.NullArray();
  }
}

void Server::ServeKey(const std::string& db_key, const TimeSnapshot& now) {
  // The key's own database, for the lookup and the service; the gate
  // selects the next command's database before it runs.
  store_.Select(DbOf(db_key));
  const std::string_view key = KeyOf(db_key);
  // Not an access to the key (OBJECT IDLETIME): the server looks, nobody reads.
  const Keyspace::Entry* e = store_.Find(key, now, /*touch=*/false);
  if (e == nullptr) {
    waiters_.WatchExpiry(db_key, kNoDeadline);
    HandOffLock(db_key, now);
    return;
  }
  // Held: lock waiters wait for its end; pops waiting for its type are
  // served while it has something for them.
  if (waiters_.waiters(db_key) > 0) waiters_.WatchExpiry(db_key, e->deadline);
  ServePops(db_key, e->type(), now);
}

void Server::HandOffLock(const std::string& db_key, const TimeSnapshot& now) {
  const std::string_view key = KeyOf(db_key);
  while (const Waiters::Waiter* first = waiters_.FrontLock(db_key)) {
    const LockWaitRequest& r = first->request;
    // A log that cannot be written acknowledges no write (the gate's
    // MISCONF): the waiter keeps its place until it can.
    if (!persistence_->write_ok()) {
      waiters_.RetryLater(db_key);
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
      waiters_.RetryLater(db_key);
      return;
    }
    Waiters::Waiter w = waiters_.Take(*first->session);
    if (!result.granted()) {
      AnswerWaiter(w, changes_before, [&](resp::ReplySink& out) { out.Error(result.refusal); });
      continue;
    }
    waiters_.CountHandoff();
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

void Server::ServePops(const std::string& db_key, ValueType type, const TimeSnapshot& now) {
  // The pops waiting for this type, first come first served, while the key
  // can serve them (FIFO per key, as Redis serves its blocked clients).
  while (const Waiters::Waiter* first = waiters_.FrontPop(db_key, type)) {
    if (!persistence_->write_ok()) {
      waiters_.RetryLater(db_key);
      return;
    }
    switch (RunParked(*first, KeyOf(db_key), now)) {
      case ParkedRun::kServed:
        continue;
      case ParkedRun::kRefused:
        // The quarantine (or a state record that cannot be written): the
        // waiter keeps its place; the cron tries again.
        waiters_.RetryLater(db_key);
        return;
      case ParkedRun::kNothing:
        // The key cannot serve this waiter (empty now, or of another
        // type): nor the ones behind it, who want the same.
        return;
    }
  }
}

Server::ParkedRun Server::RunParked(const Waiters::Waiter& w, std::string_view key,
                                    const TimeSnapshot& now) {
  auto& c = static_cast<Connection&>(*w.session);
  const PopWaitRequest& r = w.pop;
  std::vector<std::string_view> argv(r.argv.begin(), r.argv.end());
  // The reply goes to a scratch buffer first: a run that does not serve
  // (nothing to pop, a refused grant) leaves no trace in the client's
  // output nor in the error counts.
  struct Errors final : resp::ReplySink::ErrorObserver {
    std::vector<std::string> texts;
    void OnErrorReply(std::string_view text) override { texts.emplace_back(text); }
  } errors;
  std::string scratch;
  resp::ReplyWriter reply(&scratch, c.resp);
  reply.set_error_observer(&errors);
  store_.Select(c.db);
  CommandContext ctx(argv, c, store_, reply, now, *r.cmd, grants_, diagnostics_.stats(), config_,
                     pubsub_, gate_, *this, *this);
  ctx.serving_key = key;
  const uint64_t changes_before = store_.changes();
  try {
    r.cmd->handler(ctx);
  } catch (const std::bad_alloc&) {
    // Out of memory: the client is answered as the command sent now would be.
    reply.RewindTo(0);
    reply.Error("OOM command not allowed: out of memory");
  }
  if (ctx.lease_refused && store_.changes() == changes_before) return ParkedRun::kRefused;
  if (ctx.keep_waiting && store_.changes() == changes_before) return ParkedRun::kNothing;
  Waiters::Waiter served = waiters_.Take(c);
  AnswerWaiter(served, changes_before, [&](resp::ReplySink&) {
    c.output() += scratch;
    for (const std::string& text : errors.texts) OnErrorReply(text);
  });
  return ParkedRun::kServed;
}

void Server::AnswerWaiter(Waiters::Waiter& w, uint64_t changes_before,
                          const std::function<void(resp::ReplySink&)>& write) {
  auto& c = static_cast<Connection&>(*w.session);
  const size_t start = c.output().size();
  resp::ReplyWriter reply(&c.output(), c.resp);
  reply.set_error_observer(this);
  write(reply);
  persistence_->Hold(c, start, changes_before);
  Unpark(c, start);
}

bool Server::UnblockClient(uint64_t id, bool error) {
  Connection* target = clients_.Find(id);
  if (target == nullptr || !target->blocked) return false;
  auto answer = [&](const std::function<void(resp::ReplySink&)>& timed_out) {
    const size_t start = target->output().size();
    resp::ReplyWriter reply(&target->output(), target->resp);
    reply.set_error_observer(this);
    if (error) {
      reply.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK");
    } else {
      timed_out(reply);
    }
    Unpark(*target, start);
  };
  if (waiters_.Waiting(*target)) {
    const Waiters::Kind kind = waiters_.Take(*target).kind;
    answer([&](resp::ReplySink& r) { ReplyTimedOut(kind, r); });
    return true;
  }
  // WAITAOF: answered with what the log has fsynced so far, as at its
  // timeout.
  return persistence_->EndFsyncWait(*target, error);
}

void Server::ArmLockTimer(int64_t now) {
  const int64_t due = waiters_.NextDue();
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
  server->ServeWaiters();
}

}  // namespace latch
