// A key together with its database, as one string: the database number's
// four bytes, then the key's bytes. The same name in two databases is two
// keys, so whatever is kept per key across databases — WATCH's watched keys
// (watch.h), the lock queues (waiters.h) — is keyed by this.
#pragma once

#include <cstring>
#include <string>
#include <string_view>

namespace latch {

inline std::string DbKey(int db, std::string_view key) {
  std::string s(sizeof(db), '\0');
  std::memcpy(s.data(), &db, sizeof(db));
  s.append(key);
  return s;
}

inline int DbOf(std::string_view db_key) {
  int db;
  std::memcpy(&db, db_key.data(), sizeof(db));
  return db;
}

inline std::string_view KeyOf(std::string_view db_key) {
  return db_key.substr(sizeof(int));
}

}  // namespace latch
