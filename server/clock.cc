#include "server/clock.h"

#include <ctime>
#include <fstream>
#include <sstream>

namespace latch {

int64_t SystemClock::MonoMs() const {
  // CLOCK_BOOTTIME: monotonic like CLOCK_MONOTONIC, but it keeps counting
  // while the machine is suspended. A lease must expire after its TTL in real
  // time, as the other RedLock nodes and the clients measure it; a clock that
  // stopped during a suspend would keep a lock alive too long.
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  // +1 keeps the value strictly positive even right after boot: 0 means "no
  // deadline" in the keyspace.
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000 + 1;
}

int64_t SystemClock::MonoUs() const {
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  // +1 ms, as MonoMs().
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000 + 1000;
}

int64_t SystemClock::WallUs() const {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000 + wall_offset_us_;
}

std::string SystemClock::Id() const {
  if (!id_override_.empty()) return id_override_;
  // The boot: a random id the kernel picks at each boot.
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  if (boot.empty()) boot = "unknown-boot";
  // The time namespace: a container may see CLOCK_BOOTTIME shifted by an
  // offset (/proc/self/timens_offsets, "boottime <secs> <nsecs>"); its
  // readings do not compare with the host's, nor with another namespace's.
  std::ifstream offsets("/proc/self/timens_offsets");
  std::string line, name;
  long long secs = 0, nsecs = 0;
  while (std::getline(offsets, line)) {
    std::istringstream in(line);
    if (in >> name && name == "boottime") in >> secs >> nsecs;
  }
  return boot + "+" + std::to_string(secs) + "." + std::to_string(nsecs);
}

}  // namespace latch
