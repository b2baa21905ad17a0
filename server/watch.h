// WATCH: optimistic locking for MULTI … EXEC.
//
// A session that WATCHes a key has its next EXEC fail (a null reply, nothing
// runs) if any write touches that key before it, whoever makes it: the
// Store tells the registry about every key a write changes, in which
// database, including keys removed because their lease ran out. A key is
// watched in the database the session had selected: the same name in
// another database is another key: watched keys are DbKeys (db_key.h), in
// Session::multi.watched_keys and here.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace latch {

class Session;
class Store;

class WatchRegistry {
 public:
  // `store` answers whether a key exists, for FLUSHALL/FLUSHDB/SWAPDB
  // (which touch only the keys they change).
  explicit WatchRegistry(Store& store) : store_(store) {}

  void Watch(Session& s, int db, std::string_view key);
  void UnwatchAll(Session& s);
  // A write changed `key` in database `db`.
  void Touched(int db, std::string_view key);
  // FLUSHDB (or FLUSHALL, db -1) is about to remove every key of `db`.
  void TouchedAll(int db);
  bool empty() const { return watchers_.empty(); }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  Store& store_;
  std::unordered_map<std::string, std::vector<Session*>, StringHash, std::equal_to<>> watchers_;
};

}  // namespace latch
