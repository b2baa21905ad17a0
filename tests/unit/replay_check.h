// The one-applier property: replaying the log a Store wrote rebuilds the
// Store's live keyspace exactly (keys, values, boot-clock deadlines, fencing
// tokens). Used by
// store_test.cc on random command sequences and by the command fuzzer.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "log/reader.h"
#include "server/keyspace.h"
#include "server/store.h"
#include "server/types/value_ref.h"

namespace latch::test {

// A copy of the collection `e` holds, packed in its entry or boxed (a view
// of a packed one would not outlive a change to the keyspace).
inline std::unique_ptr<Object> CopyOf(const Keyspace::Entry& e) {
  return WithObject(e, [](const Object& o) { return o.Clone(); });
}

// One key as the comparison sees it.
struct KeyState {
  std::string value;                     // a string's bytes
  std::shared_ptr<const Object> object;  // a collection's copy (compared with Object::Equals)
  int64_t deadline = kNoDeadline;
  uint64_t token = 0;
  bool operator==(const KeyState& o) const {
    if ((object == nullptr) != (o.object == nullptr)) return false;
    if (object != nullptr && !object->Equals(*o.object)) return false;
    return value == o.value && deadline == o.deadline && token == o.token;
  }
};
inline std::ostream& operator<<(std::ostream& os, const KeyState& k) {
  if (k.object != nullptr) {
    os << "{" << TypeName(k.object->type()) << " of " << k.object->size() << " ("
       << k.object->encoding() << ")";
  } else {
    os << "{" << k.value;
  }
  return os << ", deadline " << k.deadline << ", token " << k.token << "}";
}

// (database, key) -> its state.
using Snapshot = std::map<std::pair<int, std::string>, KeyState>;

// The keys visible at `now` in every database (a key whose deadline equals
// now is still visible: only now > deadline expires it; the replay drops
// deadline <= now, so both sides leave that instant out).
inline Snapshot LiveKeys(const Store& store, int64_t now) {
  Snapshot out;
  for (int db = 0; db < store.databases(); ++db) {
    store.keyspace_of(db).ForEach([&](const Keyspace::Entry& e) {
      if (e.has_deadline() && e.deadline <= now) return;
      KeyState k;
      if (e.is_string()) {
        k.value = std::string(e.value());
      } else {
        k.object = CopyOf(e);
      }
      k.deadline = e.deadline;
      k.token = e.token();
      out[{db, std::string(e.key())}] = std::move(k);
    });
  }
  return out;
}

// Replays `log` into a fresh Store on clock `clock_id` at `now`. Returns an
// empty string when the log read cleanly to its end, else what stopped it.
inline std::string ReplayInto(std::string_view log, const std::string& clock_id, TimeSnapshot now,
                              Store* out) {
  aof::Reader reader(log);
  ReplayClock clock;
  clock.clock_id = clock_id;
  clock.now = now;
  while (true) {
    switch (reader.Next()) {
      case aof::Reader::Status::kUnit:
        for (const aof::Record& r : reader.records()) {
          if (std::string why = out->Replay(r, clock); !why.empty()) return why;
        }
        continue;
      case aof::Reader::Status::kEnd:
        out->FinishReplay(clock);
        return {};
      default:
        return "the log did not read cleanly at offset " + std::to_string(reader.safe_offset()) +
               ": " + reader.error();
    }
  }
}

}  // namespace latch::test
