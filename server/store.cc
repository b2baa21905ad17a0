#include "server/store.h"

#include <algorithm>

namespace latch {

namespace {

// 0 means "no lease" in the keyspace; an instant that long past is as good
// as any other past one.
int64_t NonZero(int64_t deadline) {
  return deadline == kNoDeadline ? -1 : deadline;
}

}  // namespace

// Captures `key` as it is before a mutator runs and tells the change
// observer what it became, when the mutator returns. Inactive (one branch)
// without an observer, and inside another Observed (SetDeadline → Delete).
class Store::Observed {
 public:
  Observed(Store& store, std::string_view key) : store_(store), key_(key) {
    if (!store_.on_change_ || store_.observing_++ > 0) return;
    active_ = true;
    if (const Keyspace::Entry* e = store_.keys_.Peek(key)) {
      had_ = true;
      old_value_ = e->value();
      old_deadline_ = e->deadline;
    }
  }
  ~Observed() {
    if (!store_.on_change_) return;
    --store_.observing_;
    if (!active_) return;
    KeyChange c;
    c.key = key_;
    c.had = had_;
    c.old_value = old_value_;
    c.old_deadline = old_deadline_;
    if (const Keyspace::Entry* e = store_.keys_.Peek(key_)) {
      c.has = true;
      c.value = e->value();
      c.deadline = e->deadline;
    }
    store_.on_change_(c);
  }
  Observed(const Observed&) = delete;
  Observed& operator=(const Observed&) = delete;

 private:
  Store& store_;
  std::string_view key_;
  bool active_ = false;
  bool had_ = false;
  std::string old_value_;  // a copy: the write may free the entry
  int64_t old_deadline_ = kNoDeadline;
};

int64_t ReplayClock::Deadline(int64_t unix_ms) {
  if (have_mark && mark.clock_id == clock_id) {
    // Written on this very clock: the boot-clock deadline it was converted
    // from, exactly, whatever the wall clock did since.
    return unix_ms - mark.offset();
  }
  // Another boot, host or time namespace, or a log without annotations
  // (written by Redis or an older latch): only the wall clock relates the
  // two. The lease policy quarantines such a restart until the carried
  // horizon, and no lease may outlive it.
  ++foreign_times;
  int64_t d = now.MonoFromWall(unix_ms);
  if (foreign_bound > 0) d = std::min(d, foreign_bound);
  return d;
}

Store::Store(std::string clock_id) : clock_id_(std::move(clock_id)) {
  keys_.set_expiry_listener([this](std::string_view key) { OnExpired(key); });
}

bool Store::Note(std::string_view key) {
  ++changes_;
  if (on_key_) on_key_(key);
  if (log_ == nullptr) return false;
  NoteTransaction();
  return true;
}

void Store::NoteTransaction() {
  if (transaction_ == kOpenNotLogged) {
    if (tx_single_unwrapped_) {
      tx_first_offset_ = log_->size();
      transaction_ = kOpenOneRecord;
    } else {
      log_->Multi();
      transaction_ = kOpenLogged;
    }
  } else if (transaction_ == kOpenOneRecord) {
    // A second record: the script's effects are a transaction after all.
    log_->InsertMulti(tx_first_offset_);
    transaction_ = kOpenLogged;
  }
}

bool Store::NoteFlush() {
  ++changes_;
  if (on_flush_) on_flush_();
  if (log_ == nullptr) return false;
  NoteTransaction();
  return true;
}

void Store::NoteClock(const TimeSnapshot& now) {
  int64_t offset = now.wall_ms - now.mono;
  if (last_mark_valid_ && offset == last_mark_offset_) return;
  log_->Clock(aof::ClockMark{clock_id_, now.mono, now.wall_ms});
  last_mark_valid_ = true;
  last_mark_offset_ = offset;
}

void Store::OnExpired(std::string_view key) {
  if (on_expired_) on_expired_(key);
  if (on_change_) {
    // Told before the entry goes, so the expired value is still there.
    const Keyspace::Entry* e = keys_.Peek(key);
    KeyChange c;
    c.kind = KeyChange::kExpire;
    c.key = key;
    c.had = e != nullptr;
    if (e != nullptr) {
      c.old_value = e->value();
      c.old_deadline = e->deadline;
    }
    on_change_(c);
  }
  // A key removed because its lease passed is an effect like any other: the
  // log says DEL, so the log and memory agree.
  if (Note(key)) log_->Del(key);
}

void Store::EndTransaction() {
  if (tx_depth_ == 0 || --tx_depth_ > 0) return;
  if (transaction_ == kOpenLogged && log_ != nullptr) log_->Exec();
  transaction_ = kNone;
}

void Store::Put(std::string_view key, std::string_view value, Lease lease, const TimeSnapshot& now,
                ValueKind kind, uint64_t token) {
  Observed observed(*this, key);
  if (lease.kind == Lease::kUntil && lease.deadline < now.mono) {
    // Already in the past (EXAT/PXAT before now): the key ends up deleted.
    // Even when there was nothing to delete it counts as a write to the key
    // for WATCH, as in Redis.
    if (keys_.Erase(key)) {
      if (Note(key)) log_->Del(key);
    } else if (on_key_) {
      on_key_(key);
    }
    return;
  }
  int64_t deadline = lease.kind == Lease::kUntil ? lease.deadline : kNoDeadline;
  if (lease.kind == Lease::kKeep) {
    // The record states the deadline the key keeps.
    const Keyspace::Entry* old = keys_.Peek(key);
    deadline = old != nullptr ? old->deadline : kNoDeadline;
  }
  keys_.Tick(now.mono);
  const Keyspace::Entry* e =
      keys_.Set(key, value, deadline, false, static_cast<uint8_t>(kind), token);
  if (!Note(key)) return;
  // The fence annotation goes right before its SET (after any clock
  // annotation): the reader keeps the two together.
  if (deadline == kNoDeadline) {
    if (e->fenced) log_->Fence(e->token());
    log_->Set(key, value, 0);
  } else {
    NoteClock(now);
    if (e->fenced) log_->Fence(e->token());
    log_->Set(key, value, now.WallFromMono(deadline));
  }
}

void Store::Delete(std::string_view key) {
  Observed observed(*this, key);
  if (keys_.Erase(key) && Note(key)) log_->Del(key);
}

void Store::SetDeadline(std::string_view key, int64_t deadline, const TimeSnapshot& now) {
  Observed observed(*this, key);
  if (deadline <= now.mono) {
    Delete(key);
    return;
  }
  if (!keys_.SetDeadline(key, deadline) || !Note(key)) return;
  NoteClock(now);
  log_->PExpireAt(key, now.WallFromMono(deadline));
}

void Store::Persist(std::string_view key) {
  Observed observed(*this, key);
  if (keys_.SetDeadline(key, kNoDeadline) && Note(key)) log_->Persist(key);
}

void Store::Clear() {
  if (on_change_) {
    KeyChange c;
    c.kind = KeyChange::kFlush;
    on_change_(c);
  }
  if (NoteFlush()) log_->FlushAll();  // first: WATCH needs to see which keys go
  keys_.Clear();
}

void Store::Replay(const aof::Record& r, ReplayClock& clock) {
  keys_.Tick(clock.now.mono);  // a replayed key was last written at the replay
  switch (r.op) {
    case aof::Op::kClock:
      clock.have_mark = true;
      clock.mark = r.clock;
      return;
    case aof::Op::kFence:
      // The token of the key the next SET stores.
      clock.pending_token = r.token;
      return;
    case aof::Op::kSet: {
      // A lease that has ended since is still applied: a later record may
      // extend it or remove its end (PERSIST), exactly as it did live.
      // FinishReplay() drops what is expired once every record is in.
      // The key's token is the fence annotation right before (0: none).
      int64_t deadline = r.unix_ms != 0 ? NonZero(clock.Deadline(r.unix_ms)) : kNoDeadline;
      keys_.Set(r.key, r.value, deadline, false, 0, clock.pending_token);
      clock.pending_token = 0;
      return;
    }
    case aof::Op::kDel:
      for (std::string_view k : r.keys) keys_.Erase(k);
      return;
    case aof::Op::kPExpireAt:
      keys_.SetDeadline(r.key, NonZero(clock.Deadline(r.unix_ms)));
      return;
    case aof::Op::kPersist:
      keys_.SetDeadline(r.key, kNoDeadline);
      return;
    case aof::Op::kFlushAll:
      keys_.Clear();
      return;
    case aof::Op::kSelect:  // one database
    case aof::Op::kMulti:   // the reader hands whole transactions over
    case aof::Op::kExec:
      return;
  }
}

size_t Store::FinishReplay(ReplayClock& clock) {
  size_t n = keys_.EraseExpired(clock.now.mono);
  clock.expired += n;
  return n;
}

bool Store::WriteSnapshot(aof::Batch& out, const std::function<bool()>& drain,
                          const TimeSnapshot& now) const {
  out.Clock(aof::ClockMark{clock_id_, now.mono, now.wall_ms});
  bool ok = true;
  keys_.ForEach([&](const Keyspace::Entry& e) {
    if (!ok) return;
    if (e.has_deadline() && now.mono > e.deadline) return;  // expired: leave it out
    if (e.fenced) out.Fence(e.token());
    out.Set(e.key(), e.value(), e.has_deadline() ? now.WallFromMono(e.deadline) : 0);
    if (out.size() >= (1 << 20)) ok = drain();
  });
  return ok;
}

}  // namespace latch
