#include "server/store.h"

#include <algorithm>

namespace latch {

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
  if (transaction_ == kOpenNotLogged) {
    log_->Multi();
    transaction_ = kOpenLogged;
  }
  return true;
}

bool Store::NoteFlush() {
  ++changes_;
  if (on_flush_) on_flush_();
  if (log_ == nullptr) return false;
  if (transaction_ == kOpenNotLogged) {
    log_->Multi();
    transaction_ = kOpenLogged;
  }
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
  // A key removed because its lease passed is an effect like any other: the
  // log says DEL, so the log and memory agree.
  if (Note(key)) log_->Del(key);
}

void Store::EndTransaction() {
  if (transaction_ == kOpenLogged && log_ != nullptr) log_->Exec();
  transaction_ = kNone;
}

void Store::Put(std::string_view key, std::string_view value, Lease lease, const TimeSnapshot& now,
                ValueKind kind) {
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
  keys_.Set(key, value, deadline, false, static_cast<uint8_t>(kind));
  if (!Note(key)) return;
  if (deadline == kNoDeadline) {
    log_->Set(key, value, 0);
  } else {
    NoteClock(now);
    log_->Set(key, value, now.WallFromMono(deadline));
  }
}

void Store::Delete(std::string_view key) {
  if (keys_.Erase(key) && Note(key)) log_->Del(key);
}

void Store::SetDeadline(std::string_view key, int64_t deadline, const TimeSnapshot& now) {
  if (deadline <= now.mono) {
    Delete(key);
    return;
  }
  if (!keys_.SetDeadline(key, deadline) || !Note(key)) return;
  NoteClock(now);
  log_->PExpireAt(key, now.WallFromMono(deadline));
}

void Store::Persist(std::string_view key) {
  if (keys_.SetDeadline(key, kNoDeadline) && Note(key)) log_->Persist(key);
}

void Store::Clear() {
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
    case aof::Op::kSet: {
      Lease lease = Lease::None();
      if (r.unix_ms != 0) lease = Lease::Until(clock.Deadline(r.unix_ms));
      if (lease.kind == Lease::kUntil && lease.deadline <= clock.now.mono) {
        // Expired while the server was down: the key is gone.
        keys_.Erase(r.key);
        ++clock.expired;
        return;
      }
      keys_.Set(r.key, r.value, lease.kind == Lease::kUntil ? lease.deadline : kNoDeadline);
      return;
    }
    case aof::Op::kDel:
      for (std::string_view k : r.keys) keys_.Erase(k);
      return;
    case aof::Op::kPExpireAt: {
      int64_t d = clock.Deadline(r.unix_ms);
      if (d <= clock.now.mono) {
        if (keys_.Erase(r.key)) ++clock.expired;
      } else {
        keys_.SetDeadline(r.key, d);
      }
      return;
    }
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

bool Store::WriteSnapshot(aof::Batch& out, const std::function<bool()>& drain,
                          const TimeSnapshot& now) const {
  out.Clock(aof::ClockMark{clock_id_, now.mono, now.wall_ms});
  bool ok = true;
  keys_.ForEach([&](const Keyspace::Entry& e) {
    if (!ok) return;
    if (e.has_deadline() && now.mono > e.deadline) return;  // expired: leave it out
    out.Set(e.key(), e.value(), e.has_deadline() ? now.WallFromMono(e.deadline) : 0);
    if (out.size() >= (1 << 20)) ok = drain();
  });
  return ok;
}

}  // namespace latch
