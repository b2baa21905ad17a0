#include "server/watch.h"

#include <algorithm>

#include "server/session.h"
#include "server/store.h"

namespace latch {

void WatchRegistry::Watch(Session& s, std::string_view key) {
  for (const std::string& k : s.watched_keys) {
    if (k == key) return;
  }
  s.watched_keys.emplace_back(key);
  auto it = watchers_.find(key);
  if (it == watchers_.end())
    it = watchers_.emplace(std::string(key), std::vector<Session*>{}).first;
  it->second.push_back(&s);
}

void WatchRegistry::UnwatchAll(Session& s) {
  for (const std::string& k : s.watched_keys) {
    auto it = watchers_.find(k);
    if (it == watchers_.end()) continue;
    std::erase(it->second, &s);
    if (it->second.empty()) watchers_.erase(it);
  }
  s.watched_keys.clear();
  s.watched_key_touched = false;
}

void WatchRegistry::TouchedAll() {
  // FLUSHALL touches the keys it removes (not the watched keys that do not
  // exist, as in Redis).
  for (auto& [k, sessions] : watchers_) {
    if (!store_.Contains(k)) continue;
    for (Session* s : sessions) s->watched_key_touched = true;
  }
}

void WatchRegistry::Touched(std::string_view key) {
  if (watchers_.empty()) return;
  auto it = watchers_.find(key);
  if (it == watchers_.end()) return;
  for (Session* s : it->second) s->watched_key_touched = true;
}

}  // namespace latch
