// What commands changed, in the form the append-only log stores.
//
// Handlers never write to the log themselves: after changing the keyspace they
// state the effect ("key K now holds V until Unix time T", "key K deleted"),
// and this class encodes it as a RESP request into the log's current batch.
// Effects are logged, not requests: a relative TTL becomes an absolute PXAT,
// a SET GET becomes a plain SET, a failed SET NX logs nothing, and keys that
// expire are logged as DEL. Replay therefore needs no command logic and gives
// the same result whenever it runs. Expiry, known lock scripts and compaction
// produce the same records, so the log has one writer and one format.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace latch {

// Appends the record `SET key value [PXAT unix_deadline_ms]` (no PXAT when
// the deadline is 0). Shared by Effects and the log rewrite.
void AppendSetRecord(std::string& out, std::string_view key, std::string_view value,
                     int64_t unix_deadline_ms);

class Effects {
 public:
  // `unix_deadline_ms` is 0 for a key without TTL.
  void Set(std::string_view key, std::string_view value, int64_t unix_deadline_ms);
  void Del(std::string_view key);
  void PExpireAt(std::string_view key, int64_t unix_ms);
  void Persist(std::string_view key);
  void FlushAll();

  // A MULTI/EXEC transaction: its effects are logged between MULTI and EXEC
  // records, so a replay applies all of them or (if the log ends inside) none.
  // Nothing is logged for a transaction that changed nothing.
  void BeginTransaction() { transaction_ = kOpenNotLogged; }
  void EndTransaction();

  // Called with every key an effect touches ("" for FLUSHALL): WATCH uses it.
  void set_key_observer(std::function<void(std::string_view key)> f) { observer_ = std::move(f); }

  // Where records go; nullptr when the log is off (effects are still counted).
  void set_sink(std::string* sink) { sink_ = sink; }
  // Number of effects since start: Redis's "changes since last save".
  uint64_t count() const { return count_; }

 private:
  // Counts the effect, tells the observer, and opens a pending transaction
  // in the log. Returns whether to write a record.
  bool Note(std::string_view key);

  std::string* sink_ = nullptr;
  uint64_t count_ = 0;
  enum { kNone, kOpenNotLogged, kOpenLogged } transaction_ = kNone;
  std::function<void(std::string_view)> observer_;
};

}  // namespace latch
