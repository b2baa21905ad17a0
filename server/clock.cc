#include "server/clock.h"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>

namespace latch {

int64_t SystemClock::RealMonoUs() const {
  // CLOCK_BOOTTIME: monotonic like CLOCK_MONOTONIC, but it keeps counting
  // while the machine is suspended. A lease must expire after its TTL in real
  // time, as the other RedLock nodes and the clients measure it; a clock that
  // stopped during a suspend would keep a lock alive too long.
  timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  // +1 ms keeps the value strictly positive even right after boot: 0 means
  // "no deadline" in the keyspace.
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000 + 1000;
}

int64_t SystemClock::MonoMs() const {
  return MonoUs() / 1000;
}

bool SystemClock::WarpMono(double rate, int64_t jump_ms) {
  if (rate < 0 || jump_ms < 0) return false;  // the boot clock never goes back
  // Re-anchor at the current virtual reading, so the clock is continuous
  // across a change of speed and only ever moves forward.
  int64_t real = RealMonoUs();
  int64_t now = MonoUs();
  anchor_real_us_ = real;
  anchor_mono_us_ = now + jump_ms * 1000;
  rate_ = rate;
  warped_.store(true, std::memory_order_release);
  return true;
}

int64_t SystemClock::MonoUs() const {
  int64_t real = RealMonoUs();
  if (!warped_.load(std::memory_order_acquire)) return real;
  // A warped clock (FAULT CLOCK RATE/JUMP): the virtual reading goes on from
  // where the last warp left it, at the new speed.
  return anchor_mono_us_ +
         static_cast<int64_t>(static_cast<double>(real - anchor_real_us_) * rate_);
}

int64_t SystemClock::WallUs() const {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000 + wall_offset_us_;
}

std::string SystemClock::Id() const {
  std::string id = id_override_.empty() ? RealId() : id_override_;
  return warped_ ? id + "+warped" : id;
}

std::string SystemClock::RealId() const {
  // The boot: a random id the kernel picks at each boot.
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  if (boot.empty()) {
    // Unknown: then this process's clock is comparable with nothing but
    // itself (a reboot must never pass for the same boot).
    static const std::string unique = [] {
      timespec ts{};
      clock_gettime(CLOCK_REALTIME, &ts);
      return "unknown-boot-" + std::to_string(getpid()) + "-" + std::to_string(ts.tv_nsec);
    }();
    boot = unique;
  }
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
