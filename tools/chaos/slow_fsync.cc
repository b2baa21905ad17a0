// latch-chaos-slow-fsync.so: slow fsyncs for any latch-server build.
//
// latch-chaos preloads this library into the servers it starts (LD_PRELOAD).
// It wraps fsync(2) and fdatasync(2): before each call it reads the file
// latch-chaos-slow-fsync in the working directory (a server runs inside its
// data directory), and sleeps that many milliseconds first. No file, no
// delay: the library is inert until the harness writes one.
//
// The new server has DEBUG FAULT-IO for slow disks; an old build has no such
// knob, yet the fault that matters most there (a process crash while
// everysec fsyncs are slow, with replies already sent for writes the loop
// postponed) needs slow fsyncs. Reading the file at each call costs an
// open() that fails, next to a disk flush: nothing.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

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

using SyncFn = int (*)(int);

SyncFn Next(const char* name) {
  return reinterpret_cast<SyncFn>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" int fsync(int fd) {
  static const SyncFn real = Next("fsync");
  Wait();
  return real(fd);
}

extern "C" int fdatasync(int fd) {
  static const SyncFn real = Next("fdatasync");
  Wait();
  return real(fd);
}
