// The two clocks of the server, behind one small interface.
//
// Lock TTLs live on the monotonic clock, which never jumps: stepping the
// system clock (NTP, an operator, a VM migration) must not shorten or lengthen
// a lease. Wall-clock time is used only where the interface demands it:
// EXAT/PXAT arguments, absolute expiries in the log, TIME and INFO. Each is
// converted to the monotonic clock once, when applied.
#pragma once

#include <cstdint>

namespace latch {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds on a clock that only moves forward and counts time spent
  // suspended (CLOCK_BOOTTIME): since boot, so it also orders events across
  // restarts of the process within one boot. Always > 0.
  virtual int64_t MonoMs() const = 0;
  // Microseconds since the Unix epoch (may jump).
  virtual int64_t WallUs() const = 0;
  int64_t WallMs() const { return WallUs() / 1000; }
};

// CLOCK_MONOTONIC and CLOCK_REALTIME.
class SystemClock final : public Clock {
 public:
  int64_t MonoMs() const override;
  int64_t WallUs() const override;
};

// A clock the tests move by hand.
class ManualClock final : public Clock {
 public:
  int64_t MonoMs() const override { return mono_ms_; }
  int64_t WallUs() const override { return wall_us_; }
  void Advance(int64_t ms) {
    mono_ms_ += ms;
    wall_us_ += ms * 1000;
  }
  // Steps only the wall clock, as an NTP correction would.
  void StepWall(int64_t ms) { wall_us_ += ms * 1000; }

 private:
  int64_t mono_ms_ = 1'000'000;
  int64_t wall_us_ = 1'700'000'000'000'000;
};

// Converts between the clocks at one instant: `mono` and `wall_ms` are the two
// readings taken for the command being executed.
struct TimeSnapshot {
  int64_t mono = 0;
  int64_t wall_ms = 0;
  // A deadline on the monotonic clock for an absolute Unix time in ms.
  int64_t MonoFromWall(int64_t unix_ms) const { return mono + (unix_ms - wall_ms); }
  // The Unix time in ms of a monotonic deadline.
  int64_t WallFromMono(int64_t deadline) const { return wall_ms + (deadline - mono); }
};

}  // namespace latch
