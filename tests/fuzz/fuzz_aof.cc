// Fuzz target: the append-only log's reader and loader (server/aof_format.*,
// server/aof_loader.*). A log is read back after crashes, full disks and
// hand edits: whatever its bytes, loading must end in "loaded", "tail cut
// off" or a clear refusal, never in a crash or a half-understood record.
//
// Input: a flags byte, then the bytes of the log file.
//   flags bit 0: aof-load-truncated yes (else no)
//
// Each run reads the bytes with AofReader (records, then the first incomplete
// or corrupt one; MULTI ... EXEC applied as a whole), then writes them to a
// temporary file and loads it with AofLoader into a Keyspace, and checks that:
//  - the loader stops exactly where the reader does: the same number of
//    records, the corruption reported at the reader's offset, an incomplete
//    tail cut off at that offset (and the file truncated there) or refused
//    when aof-load-truncated is no;
//  - the keyspace holds what replaying the records on a simple model (a map
//    of key → value, deadline) gives: same keys, values and deadlines.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/text.h"
#include "server/aof_format.h"
#include "server/aof_loader.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/keyspace.h"

namespace {

void Check(bool ok, const char* what, std::string_view detail = {}) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_aof: property violated: %s\n%.*s\n", what,
                 static_cast<int>(detail.size()), detail.data());
    std::abort();
  }
}

std::string TempPath() {
  static std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string p =
        std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/latch-fuzz-aof-XXXXXX";
    int fd = ::mkstemp(p.data());
    Check(fd >= 0, "mkstemp failed");
    ::close(fd);
    static std::string to_remove;
    to_remove = p;
    std::atexit([] { ::unlink(to_remove.c_str()); });
    return p;
  }();
  return path;
}

void WriteFile(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  Check(fd >= 0, "cannot open the temporary file");
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    Check(n > 0, "cannot write the temporary file");
    off += static_cast<size_t>(n);
  }
  ::close(fd);
}

// What replaying the records must give: key → (value, monotonic deadline).
using Model = std::map<std::string, std::pair<std::string, int64_t>, std::less<>>;

void ApplyToModel(Model& m, std::span<const std::string_view> args, latch::TimeSnapshot now) {
  using latch::EqualsIgnoreCase;
  std::string_view cmd = args[0];
  if (EqualsIgnoreCase(cmd, "SET")) {
    int64_t deadline = latch::kNoDeadline;
    if (args.size() == 5) {
      int64_t at = *latch::ParseInt64(args[4]);
      if (at <= now.wall_ms) {
        m.erase(std::string(args[1]));
        return;
      }
      deadline = now.MonoFromWall(at);
    }
    m[std::string(args[1])] = {std::string(args[2]), deadline};
  } else if (EqualsIgnoreCase(cmd, "DEL")) {
    for (size_t i = 1; i < args.size(); ++i) m.erase(std::string(args[i]));
  } else if (EqualsIgnoreCase(cmd, "PEXPIREAT")) {
    auto it = m.find(args[1]);
    if (it == m.end()) return;
    int64_t at = *latch::ParseInt64(args[2]);
    if (at <= now.wall_ms) {
      m.erase(it);
    } else {
      it->second.second = now.MonoFromWall(at);
    }
  } else if (EqualsIgnoreCase(cmd, "PERSIST")) {
    auto it = m.find(args[1]);
    if (it != m.end()) it->second.second = latch::kNoDeadline;
  } else if (EqualsIgnoreCase(cmd, "FLUSHALL") || EqualsIgnoreCase(cmd, "FLUSHDB")) {
    m.clear();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("fuzz"));
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool load_truncated = data[0] & 1;
  std::string_view log(reinterpret_cast<const char*>(data + 1), size - 1);
  // A fixed instant: a realistic boot-time clock and wall clock.
  const latch::TimeSnapshot now{5'000'000, 1'700'000'000'000};

  // 1. The reader alone, over the bytes in memory, with the transaction
  // rules on top: the records between MULTI and EXEC apply together at the
  // EXEC; a log that ends inside a transaction ends before its MULTI; a
  // MULTI inside a transaction or an EXEC outside one is corruption.
  latch::AofReader reader;
  Model model;
  std::vector<std::vector<std::string>> transaction;
  bool in_transaction = false;
  size_t transaction_start = 0;
  bool bad_transaction = false;
  uint64_t records = 0;
  size_t offset = 0;
  latch::AofReader::Status last = latch::AofReader::Status::kNeedMore;
  while (offset < log.size()) {
    last = reader.Next(log.substr(offset));
    if (last != latch::AofReader::Status::kRecord) break;
    Check(reader.consumed() > 0 && reader.consumed() <= log.size() - offset,
          "record length out of range");
    Check(latch::ValidateAofRecord(reader.args()).empty(), "an invalid record was accepted");
    std::span<const std::string_view> args = reader.args();
    bool multi = latch::EqualsIgnoreCase(args[0], "MULTI");
    if (multi || latch::EqualsIgnoreCase(args[0], "EXEC")) {
      if (multi == in_transaction) {
        bad_transaction = true;
        break;
      }
      if (multi) transaction_start = offset;
      for (const auto& record : transaction) {
        std::vector<std::string_view> views(record.begin(), record.end());
        ApplyToModel(model, views, now);
      }
      transaction.clear();
      in_transaction = multi;
    } else if (in_transaction) {
      transaction.emplace_back(args.begin(), args.end());
    } else {
      ApplyToModel(model, args, now);
    }
    ++records;
    offset += reader.consumed();
  }
  const bool corrupt = bad_transaction || last == latch::AofReader::Status::kCorrupt;
  const bool tail = !corrupt && (offset < log.size() || in_transaction);
  // Where the log stops being loadable: the bad or incomplete record, or the
  // MULTI of an unfinished transaction.
  if (!corrupt && in_transaction) offset = transaction_start;

  // 2. The loader, over the same bytes in a file.
  const std::string path = TempPath();
  WriteFile(path, log);
  latch::Config config;
  config.appendfilename = path;
  config.aof_load_truncated = load_truncated;
  latch::Keyspace db;
  latch::AofLoader loader(config, db);
  Check(!loader.Open().has_value(), "cannot open the log");
  latch::AofLoader::State state;
  do {
    state = loader.Step(now, 1'000'000);
  } while (state == latch::AofLoader::State::kMore);

  Check(loader.records() == records, "loader and reader disagree on the number of records");
  const std::string where = "at offset " + std::to_string(offset);
  if (corrupt) {
    Check(state == latch::AofLoader::State::kFailed, "corruption not reported");
    Check(loader.error().find(where) != std::string::npos, "corruption reported elsewhere",
          loader.error());
  } else if (tail && !load_truncated) {
    Check(state == latch::AofLoader::State::kFailed,
          "incomplete tail loaded with "
          "aof-load-truncated no");
    Check(loader.error().find(where) != std::string::npos, "tail reported elsewhere",
          loader.error());
  } else {
    Check(state == latch::AofLoader::State::kDone, "a loadable log was refused", loader.error());
    Check(loader.truncated_at() == (tail ? static_cast<int64_t>(offset) : -1),
          "tail cut at the wrong offset");
    struct stat st {};
    Check(::stat(path.c_str(), &st) == 0 && static_cast<size_t>(st.st_size) == offset,
          "file not cut back to its last complete record");
  }

  // 3. The keyspace against the model (only what was applied counts: a
  // refused log still applied the records before the bad one).
  Check(db.size() == model.size(), "keyspace size differs from the model");
  for (const auto& [key, entry] : model) {
    const latch::Keyspace::Entry* e = db.Find(key, now.mono);
    Check(e != nullptr, "a key of the model is missing", key);
    Check(e->value() == entry.first, "value differs from the model", key);
    Check(e->deadline == entry.second, "deadline differs from the model", key);
  }
  return 0;
}
