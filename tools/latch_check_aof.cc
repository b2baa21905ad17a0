// latch-check-aof: validates an append-only log, and repairs it on request.
//
//   latch-check-aof FILE              report; exit 0 if valid, 1 if not
//   latch-check-aof --fix FILE        cut FILE at its last valid record, after
//                                     asking (or --yes), keeping a backup
//
// It uses the log library's reader (log/reader.h), the same the server
// replays with, so "valid" means exactly what latch-server will load.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "log/reader.h"
#include "tools/cli/options.h"

namespace {

struct Scan {
  uint64_t size = 0;
  uint64_t valid_up_to = 0;  // end of the last valid record
  uint64_t records = 0;
  bool truncated = false;  // ends inside a record
  bool corrupt = false;
  std::string error;
};

bool ScanFile(const std::string& path, Scan* scan) {
  latch::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) {
    std::fprintf(stderr, "Cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  // The log library's reader, the one the server replays with: a unit is a
  // record or a whole MULTI ... EXEC, and safe_offset() the end of the last
  // complete one.
  latch::aof::Reader reader(fd.get());
  while (true) {
    latch::aof::Reader::Status st = reader.Next();
    scan->valid_up_to = reader.safe_offset();
    scan->records = reader.record_count();
    scan->size = reader.bytes_read();
    switch (st) {
      case latch::aof::Reader::Status::kUnit:
        continue;
      case latch::aof::Reader::Status::kEnd:
        return true;
      case latch::aof::Reader::Status::kTruncated:
        scan->truncated = true;
        return true;
      case latch::aof::Reader::Status::kCorrupt:
        scan->corrupt = true;
        scan->error = reader.error();
        // The rest of the file counts as what a repair would cut.
        {
          struct stat st_buf {};
          if (::fstat(fd.get(), &st_buf) == 0) scan->size = static_cast<uint64_t>(st_buf.st_size);
        }
        return true;
      case latch::aof::Reader::Status::kIoError:
        std::fprintf(stderr, "Error reading %s: %s\n", path.c_str(), reader.error().c_str());
        return false;
    }
  }
}

bool CopyFile(const std::string& from, const std::string& to) {
  latch::UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  latch::UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!in || !out) return false;
  std::vector<char> buf(1 << 20);
  while (true) {
    ssize_t n = ::read(in.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = ::write(out.get(), buf.data() + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      off += w;
    }
  }
  return ::fsync(out.get()) == 0;
}

const latch::cli::Manual kManual = {
    "latch-check-aof", "validate latch's append-only log, or cut it at its last valid record",
    "latch-check-aof [--fix [--yes]] FILE",
    R"MAN(DESCRIPTION
    Reads FILE, a latch (or Redis single-file) append-only log, the way
    latch-server replays it at start-up: whole records and transactions, in
    Redis's AOF format with latch's annotations. Prints what it found: the
    size, the records, and the offset up to which the log is valid. A log
    whose end was cut by a crash (an incomplete last record) and one corrupt
    in the middle are both reported with the offset.

    With --fix, after asking (or with --yes), the file is cut at that offset,
    keeping a backup copy (FILE.bak-<unix time>) of the whole. What the cut
    removes is lost: a node repaired so restarts in quarantine (the state
    record names the log's synced length), as latch-server's README explains.

OPTIONS
    --fix           cut FILE at its last valid record, keeping a backup
    -y, --yes       do not ask
    -h, --help      this manual
    --version       the version

EXIT STATUS
    0    FILE is valid (or --fix cut it)
    1    FILE is not valid (or the cut was declined or failed)
    2    FILE could not be read
    64   usage error

EXAMPLES
    latch-check-aof /var/lib/latch/latch.aof
    latch-check-aof --fix /var/lib/latch/latch.aof

SEE ALSO
    latch-server(1), redis-check-aof(1)
)MAN"};

}  // namespace

int main(int argc, char** argv) {
  bool fix = false, yes = false;
  latch::cli::Parser p(kManual);
  p.Flag("fix", &fix).Flag("yes", &yes, 'y');
  // Options may come before or after FILE.
  std::vector<std::string> files = p.Parse(argc, argv).operands;
  if (files.empty()) p.Fail("which FILE?");
  if (files.size() > 1) p.Fail("one FILE at a time (got '" + files[1] + "' too)");
  if (yes && !fix) p.Fail("--yes goes with --fix");
  const std::string path = files[0];

  Scan scan;
  if (!ScanFile(path, &scan)) return 2;
  std::printf("AOF analyzed: file=%s size=%llu records=%llu ok_up_to=%llu\n", path.c_str(),
              static_cast<unsigned long long>(scan.size),
              static_cast<unsigned long long>(scan.records),
              static_cast<unsigned long long>(scan.valid_up_to));
  if (!scan.corrupt && !scan.truncated) {
    std::printf("AOF %s is valid\n", path.c_str());
    return 0;
  }
  uint64_t lost = scan.size - scan.valid_up_to;
  if (scan.corrupt) {
    std::printf("AOF %s is corrupt at offset %llu: %s\n", path.c_str(),
                static_cast<unsigned long long>(scan.valid_up_to), scan.error.c_str());
  } else {
    std::printf("AOF %s ends with an incomplete record at offset %llu (%llu bytes)\n", path.c_str(),
                static_cast<unsigned long long>(scan.valid_up_to),
                static_cast<unsigned long long>(lost));
  }
  if (!fix) {
    std::printf("Run 'latch-check-aof --fix %s' to cut it at offset %llu.\n", path.c_str(),
                static_cast<unsigned long long>(scan.valid_up_to));
    return 1;
  }

  std::printf(
      "This will cut %s at offset %llu: the last %llu bytes are discarded (a backup "
      "copy is kept).\n",
      path.c_str(), static_cast<unsigned long long>(scan.valid_up_to),
      static_cast<unsigned long long>(lost));
  if (!yes) {
    std::printf("Continue? [y/N]: ");
    std::fflush(stdout);
    std::string answer;
    if (!std::getline(std::cin, answer) || (answer != "y" && answer != "Y" && answer != "yes")) {
      std::printf("Aborted: %s is unchanged.\n", path.c_str());
      return 1;
    }
  }
  std::string backup = path + ".bak-" + std::to_string(std::time(nullptr));
  if (!CopyFile(path, backup)) {
    std::fprintf(stderr, "Could not write the backup %s: %s. %s is unchanged.\n", backup.c_str(),
                 std::strerror(errno), path.c_str());
    return 1;
  }
  latch::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd || ::ftruncate(fd.get(), static_cast<off_t>(scan.valid_up_to)) != 0 ||
      ::fsync(fd.get()) != 0) {
    std::fprintf(stderr, "Failed to cut %s: %s (backup: %s)\n", path.c_str(), std::strerror(errno),
                 backup.c_str());
    return 1;
  }
  std::printf("Successfully truncated AOF %s to %llu bytes. Backup: %s\n", path.c_str(),
              static_cast<unsigned long long>(scan.valid_up_to), backup.c_str());
  return 0;
}
