#include "server/clock.h"

#include <ctime>

namespace latch {

int64_t SystemClock::MonoMs() const {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
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
