#include "server/clock.h"

#include <ctime>

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

int64_t SystemClock::WallUs() const {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

}  // namespace latch
