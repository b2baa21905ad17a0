// The written mark: how much of the log this process has written, kept where
// the next process on the same boot can read it, at no cost per write.
//
// Why. A reply that reports a write leaves only once the write is in the log
// file (writer.h), so a process that dies (kill -9, OOM kill, abort) leaves
// every acknowledged write in the kernel's page cache, and the next start on
// the same boot finds it in the file. Nothing acknowledged is lost, and no
// restart quarantine is needed (lease_policy.h) — provided the file is the
// one the dead process wrote, at least as long as it was. The state record
// names the file (its id), but it is written a few times a minute at most,
// not after every write; this mark is.
//
// How. The mark is a small file beside the log (`<log>.written`), mapped
// into memory shared: after each write() of the log the writer stores the
// log's new size into the mapping — one store, no system call. When the
// process dies the page stays in the page cache, so the next process on the
// same boot reads the last size stored. A power loss may lose the page (or
// keep an older one), but a power loss is also a new boot, where the mark is
// never consulted. The mark only ever says "at least this much was written
// to this log": the size is stored after the bytes are in the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace latch::aof {

class WrittenMark {
 public:
  WrittenMark() = default;
  ~WrittenMark();
  WrittenMark(const WrittenMark&) = delete;
  WrittenMark& operator=(const WrittenMark&) = delete;

  // The mark's file for the log at `log_path`.
  static std::string PathFor(const std::string& log_path) { return log_path + ".written"; }

  // Maps the mark file (creating it). An error text on failure: the writer
  // then runs without a mark, and the next start on the same boot cannot
  // tell a crash that lost nothing from one that did (it quarantines).
  std::optional<std::string> Open(const std::string& path);
  bool open() const { return mark_ != nullptr; }

  // A log file is now in use: `size` bytes of the file named `log_id`.
  void Reset(std::string_view log_id, uint64_t size);
  // The log file is now `size` bytes long (after a write()).
  void Advance(uint64_t size);

  // What a previous process left: the log's id and the size written.
  // nullopt when there is no mark, or it is unreadable or was cut off in the
  // middle of a Reset (the process died while switching files).
  struct Seen {
    std::string log_id;
    uint64_t size = 0;
  };
  static std::optional<Seen> Read(const std::string& path);

 private:
  struct Layout;
  Layout* mark_ = nullptr;
};

}  // namespace latch::aof
