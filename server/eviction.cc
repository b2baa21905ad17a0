// maxmemory: what the server does when its memory passes the limit, by
// maxmemory-policy, and what each policy means for locks.
//
// The gate asks WithinMemoryLimit() before each client command while a
// limit is set (maxmemory > 0). Past the limit, the policy frees memory by
// deleting keys (each logged as DEL, as Redis logs an eviction), sampling
// maxmemory-samples keys at a time as Redis does; if the usage is still
// over, the commands that may grow memory (flag denyoom) and anything queued
// in MULTI are refused with Redis's "-OOM command not allowed when used
// memory > 'maxmemory'." Reads and releases go on.
//
// For a lock server, evicting a key is not like evicting a cache entry: a
// lock key deleted while its holder still works is a lock handed to the next
// client that asks (SET NX succeeds on the now absent key), and a RedLock
// node that evicted a lock broke its promise exactly as one that forgot it
// in a crash, without the restart quarantine to cover it. So:
//
//   noeviction       (the default) nothing is deleted: new grants, renewals
//                    and other writes that may grow memory get the OOM error
//                    until memory is freed (releases, expiry, FLUSHALL); the
//                    locks held stay held. The only policy that keeps every
//                    lock's promise.
//   volatile-ttl     deletes, among sampled keys with a TTL, the one whose
//                    lease ends soonest: an early release of a held lock.
//   volatile-lru     deletes the least recently used sampled key with a TTL:
//                    a held lock that is not renewed often (a long lease, a
//                    watchdog at ttl/3) is the first to go.
//   volatile-random  a random key with a TTL: any held lock.
//   allkeys-lru      the least recently used of any sampled key, with or
//   allkeys-random   without a TTL; or any key at all: any lock, and any
//                    counter or value.
//   volatile-lfu     refused: they rank keys by access frequency, which latch
//   allkeys-lfu      does not count (OBJECT FREQ answers Redis's error for a
//                    non-LFU policy); use the LRU ones, or noeviction.
//
// Use an eviction policy only for keys that are not locks (a cache kept on
// the same node), in another database than the locks, and prefer a node of
// its own for that.

#include <algorithm>

#include "server/log.h"
#include "server/server.h"
#include "server/used_memory.h"

namespace latch {

namespace {

bool Volatile(MaxMemoryPolicy p) {
  return p == MaxMemoryPolicy::kVolatileLru || p == MaxMemoryPolicy::kVolatileRandom ||
         p == MaxMemoryPolicy::kVolatileTtl;
}

}  // namespace

uint64_t Server::MemoryForEviction() {
  // As Redis: the memory the log's buffer holds does not count (it is freed
  // once written, and evicting keys would only grow it with DELs). The
  // allocation counter, read directly (O(1); memory() also walks every
  // client).
  const uint64_t used = used_memory::Counted() ? used_memory::Bytes() : memory().used;
  const aof::Writer* log = persistence_->log();
  uint64_t not_counted = log != nullptr ? log->buffer_length() : 0;
  return used > not_counted ? used - not_counted : 0;
}

bool Server::WithinMemoryLimit() {
  if (config_.maxmemory <= 0) return true;
  const uint64_t limit = static_cast<uint64_t>(config_.maxmemory);
  if (MemoryForEviction() <= limit) return true;
  const MaxMemoryPolicy policy = config_.maxmemory_policy;
  if (policy == MaxMemoryPolicy::kNoEviction) return false;

  const TimeSnapshot now = Now();
  const int selected = store_.selected();
  const uint32_t clock_now = static_cast<uint32_t>((now.mono / 1000) & ((1u << 24) - 1));
  auto idle = [&](const Keyspace::Entry& e) {
    return (clock_now - e.access_clock) & ((1u << 24) - 1);
  };
  bool within = false;
  // At most a few thousand deletions per command, so one command never
  // stalls the loop for long (Redis bounds its eviction time the same way).
  for (int round = 0; round < 4096 && !within; ++round) {
    std::string victim;
    int victim_db = -1;
    int64_t best = -1;
    for (int db = 0; db < store_.databases(); ++db) {
      if (store_.size_of(db) == 0) continue;
      if (Volatile(policy) && store_.keys_with_deadline_of(db) == 0) continue;
      store_.Select(db);
      for (int64_t i = 0, tries = 0; i < config_.maxmemory_samples && tries < 64; ++tries) {
        const Keyspace::Entry* e = store_.RandomEntry();
        if (e == nullptr) break;
        if (Volatile(policy) && !e->has_deadline()) continue;
        ++i;
        int64_t score;
        if (e->has_deadline() && e->deadline <= now.mono) {
          score = INT64_MAX;  // already expired: the first to go
        } else if (policy == MaxMemoryPolicy::kVolatileTtl) {
          score = INT64_MAX - 1 - e->deadline;
        } else if (policy == MaxMemoryPolicy::kAllKeysLru ||
                   policy == MaxMemoryPolicy::kVolatileLru) {
          score = idle(*e);
        } else {
          score = 0;  // random: the first sampled
        }
        if (score > best) {
          best = score;
          victim = std::string(e->key());
          victim_db = db;
        }
        if (policy == MaxMemoryPolicy::kAllKeysRandom ||
            policy == MaxMemoryPolicy::kVolatileRandom) {
          break;
        }
      }
      if ((policy == MaxMemoryPolicy::kAllKeysRandom ||
           policy == MaxMemoryPolicy::kVolatileRandom) &&
          victim_db >= 0) {
        break;
      }
    }
    if (victim_db < 0) break;  // nothing left that the policy may delete
    store_.Select(victim_db);
    if (store_.Peek(victim) != nullptr) {
      store_.Delete(victim);
      ++diagnostics_.stats().evicted_keys;
      // The "evicted" keyspace event (class e), as Redis's performEvictions
      // sends it: an operator watching locks sees one taken by the policy.
      pubsub_.Notify(kNotifyEvicted, "evicted", victim, victim_db);
    }
    within = MemoryForEviction() <= limit;
  }
  store_.Select(selected);
  return within;
}

}  // namespace latch
