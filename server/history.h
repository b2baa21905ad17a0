// The node's history: every grant, renewal, release and expiry of a key, as
// JSON lines in `history-file`, for the test bench's checker
// (latch-fixture check, tools/history/) to merge with the other nodes' and
// the clients' histories.
//
// Hooked on the Store's change observer (store.h), so it sees exactly what
// the keyspace did, whichever command (or script, or expiry) did it. Off by
// default: with no history-file the observer is not even set.
//
// The format (one object per line, format 1; docs/testbench.md has the
// whole of it):
//   {"t":1712345678901.234,"node":"127.0.0.1:7001","ev":"start","pid":42,
//    "clock":"<boot clock id>","format":1}
//   {"t":…,"node":…,"ev":"grant","key":"k","value":"tok","ttl_ms":3000}
//   {"t":…,"node":…,"ev":"renew","key":"k","value":"tok","ttl_ms":8000}
//   {"t":…,"node":…,"ev":"release","key":"k","value":"tok"}
//   {"t":…,"node":…,"ev":"expire","key":"k","value":"tok"}
//   {"t":…,"node":…,"ev":"flush"}
//   {"t":…,"node":…,"ev":"fault","fault":"CLOCK RATE 2"}
// `t` is real Unix time in milliseconds (CLOCK_REALTIME with microseconds,
// never shifted by FAULT WALLCLOCK), so histories of nodes and clients on
// one host merge on one time line. `ttl_ms` is the lease the node gave, on
// its own lease clock (-1: no lease); a grant over a live value also
// carries "replaced". Strings are JSON; a byte outside printable ASCII is
// written as \u00XX.
//
// Each line is one write() to a file opened O_APPEND, before the reply that
// reports the change leaves: a node killed with SIGKILL (or DEBUG
// POWERLOSS) still leaves every event a client could have seen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/unique_fd.h"

namespace latch {

class Clock;
struct KeyChange;

class History {
 public:
  History(std::string path, std::string node, const Clock& clock);

  // Opens (creates, appends to) the file and writes the start line. The
  // error text on failure.
  std::optional<std::string> Open();
  // The Store's change observer.
  void OnChange(const KeyChange& c);
  // A fault set or cleared (faults.h).
  void Fault(std::string_view what);

 private:
  // Starts a line with "t", "node" and "ev".
  std::string Begin(std::string_view ev) const;
  void Write(std::string& line);

  std::string path_;
  std::string node_;
  const Clock& clock_;
  UniqueFd fd_;
  bool error_logged_ = false;
};

}  // namespace latch
