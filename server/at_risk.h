// The two small ledgers behind the at-risk horizon (lease_policy.h).
//
// UncoveredGrants: the grants whose log records no completed fsync covers
// yet. The lease policy adds each admitted lease end; the log says how far
// it has appended (every grant added so far has its record before that
// offset) and how far a completed fsync reaches. What is left is what a power
// loss could take: Max() is the latest lease end among it.
//
// RecordedBound: the at-risk value as the state record holds it. Records are
// written in order, some on the background thread, so while writes are
// queued the file may hold the value of any of them. Grants are admitted
// without a write only under Bound(): the least of the value on disk and
// every value still queued — whichever lands, it covers them. (The plain
// horizon only ever rises, so its largest value does; the at-risk bound
// also falls, which is why it needs this.)
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>

namespace latch {

class UncoveredGrants {
 public:
  // A lease ending at `deadline` was admitted; its record follows.
  void Add(int64_t deadline) { open_ = std::max(open_, deadline); }
  // The log holds every record appended so far before logical offset `end`.
  void Appended(uint64_t end) {
    if (open_ == INT64_MIN) return;
    if (stretches_.size() >= kMaxStretches) {
      // An fsync that does not come (a slow disk): coarser, never wrong.
      stretches_.back().end = end;
      stretches_.back().max = std::max(stretches_.back().max, open_);
    } else {
      stretches_.push_back({end, open_});
    }
    open_ = INT64_MIN;
  }
  // A completed fsync covers the log up to `synced`.
  void Synced(uint64_t synced) {
    while (!stretches_.empty() && stretches_.front().end <= synced) stretches_.pop_front();
  }
  // The latest lease end not yet covered (INT64_MIN: none).
  int64_t Max() const {
    int64_t m = open_;
    for (const Stretch& s : stretches_) m = std::max(m, s.max);
    return m;
  }

 private:
  static constexpr size_t kMaxStretches = 64;
  struct Stretch {
    uint64_t end;
    int64_t max;
  };
  std::deque<Stretch> stretches_;
  int64_t open_ = INT64_MIN;
};

class RecordedBound {
 public:
  // The value every record written from now on carries, until changed.
  int64_t intended() const { return intended_; }
  // A write of `v` is queued for the background thread: returns its number,
  // for Done().
  uint64_t Queue(int64_t v) {
    Settle();
    intended_ = v;
    pending_.push_back({++next_seq_, v});
    return next_seq_;
  }
  // On the background thread, once write `seq` is over (`ok`: it landed).
  void Done(uint64_t seq, bool ok) {
    if (ok) ok_seq_.store(seq, std::memory_order_release);
    done_seq_.store(seq, std::memory_order_release);
  }
  // A synchronous write of `v` (nothing queued any more) is over.
  void Wrote(int64_t v, bool ok) {
    Settle();
    intended_ = v;
    if (ok) landed_ = v;
  }
  // What a grant may be admitted under without a write (INT64_MIN: none).
  int64_t Bound() {
    Settle();
    int64_t b = landed_;
    for (const Pending& p : pending_) b = std::min(b, p.value);
    return b;
  }
  // An in-process server without a record: everything is admitted.
  void SetUnbounded() { landed_ = intended_ = INT64_MAX; }

 private:
  void Settle() {
    const uint64_t ok = ok_seq_.load(std::memory_order_acquire);
    const uint64_t done = done_seq_.load(std::memory_order_acquire);
    while (!pending_.empty() && pending_.front().seq <= done) {
      if (pending_.front().seq == ok) landed_ = pending_.front().value;
      pending_.pop_front();
    }
  }
  struct Pending {
    uint64_t seq;
    int64_t value;
  };
  std::deque<Pending> pending_;
  uint64_t next_seq_ = 0;
  std::atomic<uint64_t> ok_seq_{0}, done_seq_{0};
  int64_t landed_ = INT64_MIN;
  int64_t intended_ = INT64_MIN;
};

}  // namespace latch
