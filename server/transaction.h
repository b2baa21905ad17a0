// MULTI … EXEC for one client, as a value its session owns: whether a
// transaction is open, the requests it queued (copied: the query buffer
// moves on), whether one was refused while queueing (EXEC then aborts with
// EXECABORT, Redis's rule), and the keys it WATCHes with whether one of them
// changed since (the WatchRegistry, watch.h, sets that).
//
// The gate queues into it (gate.cc, step 6) and marks it failed when it
// refuses a request; transactions.cc opens, runs and discards it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace latch {

class Transaction {
 public:
  using Requests = std::vector<std::vector<std::string>>;

  bool open() const { return open_; }
  bool failed() const { return failed_; }
  const Requests& queued() const { return queued_; }

  // MULTI.
  void Begin() {
    Discard();
    open_ = true;
  }
  // A request to run at EXEC. A transaction already doomed (a refused
  // request, a watched key changed) keeps nothing: EXEC will not run it.
  void Queue(std::span<const std::string_view> argv) {
    if (!failed_ && !watched_key_touched) queued_.emplace_back(argv.begin(), argv.end());
  }
  // A request refused while the transaction is open: EXEC aborts.
  void Fail() {
    if (open_) failed_ = true;
  }
  // EXEC: closes the transaction and hands over what it queued.
  Requests Take() {
    open_ = failed_ = false;
    return std::exchange(queued_, {});
  }
  // DISCARD, RESET, a refused EXEC: closed, nothing kept. (The watched keys
  // are the registry's to drop: WatchRegistry::UnwatchAll.)
  void Discard() {
    open_ = failed_ = false;
    queued_.clear();
  }

  // WATCH: the keys as db-prefixed slots (db_key.h), and whether one was
  // changed, expired or deleted since.
  std::vector<std::string> watched_keys;
  bool watched_key_touched = false;

 private:
  bool open_ = false;
  bool failed_ = false;
  Requests queued_;
};

}  // namespace latch
