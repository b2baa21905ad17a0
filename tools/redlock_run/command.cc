#include "tools/redlock_run/command.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tools/cli/options.h"

namespace latch::redlock_command {

bool GroupLives(pid_t pgid, pid_t leader) {
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return false;
  bool lives = false;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid == leader) continue;
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    latch::UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
    if (!fd) continue;
    char buf[512];
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf) - 1);
    if (n <= 0) continue;
    buf[n] = '\0';
    // "pid (comm) state ppid pgrp …": comm may hold anything, even ')'.
    const char* rp = std::strrchr(buf, ')');
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (rp == nullptr || std::sscanf(rp + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    if (pgrp == pgid && state != 'Z' && state != 'X') {
      lives = true;
      break;
    }
  }
  ::closedir(d);
  return lives;
}

void SignalCommand(pid_t pid, int sig) {
  if (::kill(-pid, sig) != 0 && errno == ESRCH) ::kill(pid, sig);
}

StopTiming StopTimingFor(Millis ttl, Millis kill_after) {
  return StopTiming{std::min(kill_after, ttl / 3), std::clamp(ttl / 20, Millis{10}, Millis{500})};
}

std::string Until(LockClock::time_point t) {
  return cli::FormatDuration(std::chrono::duration_cast<Millis>(t - LockClock::now()));
}

}  // namespace latch::redlock_command
