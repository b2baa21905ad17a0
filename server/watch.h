// WATCH: optimistic locking for MULTI … EXEC.
//
// A session that WATCHes a key has its next EXEC fail (a null reply, nothing
// runs) if any write touches that key before it, whoever makes it: the
// Store tells the registry about every key a write changes, including keys
// removed because their lease ran out.
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
  // `store` answers whether a key exists, for FLUSHALL (which touches only
  // the keys it removes).
  explicit WatchRegistry(Store& store) : store_(store) {}

  void Watch(Session& s, std::string_view key);
  void UnwatchAll(Session& s);
  // A write changed `key`.
  void Touched(std::string_view key);
  // FLUSHALL is about to remove every key.
  void TouchedAll();
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
