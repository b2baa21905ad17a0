#include "server/watch.h"

#include <algorithm>
#include "server/db_key.h"
#include "server/session.h"
#include "server/store.h"

namespace latch {

void WatchRegistry::Watch(Session& s, int db, std::string_view key) {
  std::string slot = DbKey(db, key);
  for (const std::string& k : s.multi.watched_keys) {
    if (k == slot) return;
  }
  s.multi.watched_keys.push_back(slot);
  auto it = watchers_.find(slot);
  if (it == watchers_.end()) it = watchers_.emplace(slot, std::vector<Session*>{}).first;
  it->second.push_back(&s);
}

void WatchRegistry::UnwatchAll(Session& s) {
  for (const std::string& k : s.multi.watched_keys) {
    auto it = watchers_.find(k);
    if (it == watchers_.end()) continue;
    std::erase(it->second, &s);
    if (it->second.empty()) watchers_.erase(it);
  }
  s.multi.watched_keys.clear();
  s.multi.watched_key_touched = false;
}

void WatchRegistry::TouchedAll(int db) {
  // FLUSHALL/FLUSHDB touch the keys they remove (not the watched keys that
  // do not exist, as in Redis). SWAPDB calls this for both databases, before
  // the swap: a watched key that exists on either side changes.
  for (auto& [slot, sessions] : watchers_) {
    int key_db = DbOf(slot);
    if (db >= 0 && key_db != db) continue;
    if (!store_.ContainsIn(key_db, KeyOf(slot))) continue;
    for (Session* s : sessions) s->multi.watched_key_touched = true;
  }
}

void WatchRegistry::Touched(int db, std::string_view key) {
  if (watchers_.empty()) return;
  auto it = watchers_.find(DbKey(db, key));
  if (it == watchers_.end()) return;
  for (Session* s : it->second) s->multi.watched_key_touched = true;
}

}  // namespace latch
