// latch-chaos-slow-fsync.so: slow fsyncs for any latch-server build.
//
// latch-chaos preloads this library into the servers it starts (LD_PRELOAD).
// It wraps fsync(2) and fdatasync(2): before each call it reads the file
// latch-chaos-slow-fsync in the working directory (a server runs inside its
// data directory), and sleeps that many milliseconds first. No file, no
// delay: the library is inert until the harness writes one.
//
// With LATCH_FSYNC_TRACE naming a file, each call that returns appends a
// line to it: the CLOCK_MONOTONIC time it returned at, in nanoseconds, and
// the file it synced (its /proc/self/fd link). A test reads it to tell which
// fsyncs came before a reply (tests/integration/test_quarantine.py: the
// start fsyncs the log it inherited before its first grant).
//
// The new server has DEBUG FAULT-IO for slow disks; an old build has no such
// knob, yet the fault that matters most there (a process crash while
// everysec fsyncs are slow, with replies already sent for writes the loop
// postponed) needs slow fsyncs. Reading the file at each call costs an
// open() that fails, next to a disk flush: nothing.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

int DelayMs() {
  int fd = ::open("latch-chaos-slow-fsync", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  return std::atoi(buf);
}

void Wait() {
  if (int ms = DelayMs(); ms > 0) ::usleep(static_cast<useconds_t>(ms) * 1000);
}

void Trace(int fd) {
  const char* trace = std::getenv("LATCH_FSYNC_TRACE");
  if (trace == nullptr) return;
  char link[64];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char target[512];
  const ssize_t n = ::readlink(link, target, sizeof(target) - 1);
  target[n > 0 ? n : 0] = '\0';
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  char line[600];
  const int len =
      std::snprintf(line, sizeof(line), "%lld %s\n",
                    static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec, target);
  const int out = ::open(trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (out < 0) return;
  if (::write(out, line, static_cast<size_t>(len)) < 0) {
    // (a trace line lost: the test reading it fails, saying so)
  }
  ::close(out);
}

using SyncFn = int (*)(int);

SyncFn Next(const char* name) {
  return reinterpret_cast<SyncFn>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" int fsync(int fd) {
  static const SyncFn real = Next("fsync");
  Wait();
  const int rc = real(fd);
  Trace(fd);
  return rc;
}

extern "C" int fdatasync(int fd) {
  static const SyncFn real = Next("fdatasync");
  Wait();
  const int rc = real(fd);
  Trace(fd);
  return rc;
}
