// latch-check-aof: validates an append-only log, and repairs it on request.
//
//   latch-check-aof FILE              report; exit 0 if valid, 1 if not
//   latch-check-aof --fix FILE        cut FILE at its last valid record, after
//                                     asking (or --yes), keeping a backup
//
// It uses the server's own reader (server/aof_format.h), so "valid" means
// exactly what latch-server will load.
#include <fcntl.h>
#include <getopt.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include "server/aof_format.h"
#include "common/unique_fd.h"

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
  latch::AofReader reader;
  std::vector<char> buf(4 << 20);
  size_t start = 0, end = 0;
  // A MULTI ... EXEC block is valid only as a whole: while one is open, the
  // last point the log could be cut at is before its MULTI.
  bool in_transaction = false;
  uint64_t transaction_start = 0, offset = 0;
  auto cut_point = [&] { return in_transaction ? transaction_start : offset; };
  while (true) {
    while (start < end) {
      auto st = reader.Next(std::string_view(buf.data() + start, end - start));
      if (st == latch::AofReader::Status::kNeedMore) break;
      std::string_view name =
          st == latch::AofReader::Status::kRecord ? reader.args()[0] : std::string_view();
      bool multi = name == "MULTI" || name == "multi";
      bool exec = name == "EXEC" || name == "exec";
      if (st == latch::AofReader::Status::kRecord &&
          ((multi && in_transaction) || (exec && !in_transaction))) {
        st = latch::AofReader::Status::kCorrupt;
      }
      if (st == latch::AofReader::Status::kCorrupt) {
        scan->corrupt = true;
        scan->error = multi  ? "MULTI inside a transaction"
                      : exec ? "EXEC without MULTI"
                             : reader.error();
        scan->valid_up_to = cut_point();
        return true;
      }
      if (multi) {
        in_transaction = true;
        transaction_start = offset;
      } else if (exec) {
        in_transaction = false;
      }
      start += reader.consumed();
      offset += reader.consumed();
      scan->valid_up_to = cut_point();
      ++scan->records;
    }
    if (start > 0) {
      std::memmove(buf.data(), buf.data() + start, end - start);
      end -= start;
      start = 0;
    }
    if (buf.size() - end < (1 << 20)) buf.resize(buf.size() * 2);
    ssize_t n = ::read(fd.get(), buf.data() + end, buf.size() - end);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "Error reading %s: %s\n", path.c_str(), std::strerror(errno));
      return false;
    }
    if (n == 0) break;
    end += static_cast<size_t>(n);
    scan->size += static_cast<uint64_t>(n);
  }
  scan->truncated = end > start || in_transaction;
  return true;
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

int Usage() {
  std::fprintf(stderr,
               "Usage: latch-check-aof [--fix [--yes]] FILE\n"
               "Validates a latch (Redis single-file) append-only log. With --fix, cuts the file\n"
               "at its last valid record after asking (or with --yes), keeping a backup copy.\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool fix = false, yes = false;
  static const option kOptions[] = {
      {"fix", no_argument, nullptr, 'f'},
      {"yes", no_argument, nullptr, 'y'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  // getopt_long names a bad option itself; the usage follows, exit 2. Options
  // may come before or after FILE (getopt permutes them).
  int c;
  while ((c = getopt_long(argc, argv, "yh", kOptions, nullptr)) != -1) {
    switch (c) {
      case 'f':
        fix = true;
        break;
      case 'y':
        yes = true;
        break;
      case 'h':
        Usage();
        return 0;
      default:
        return Usage();
    }
  }
  if (argc - optind != 1) return Usage();  // exactly one FILE
  const std::string path = argv[optind];

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
