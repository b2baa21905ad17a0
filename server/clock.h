// The two clocks of the server, behind one small interface.
//
// Lock TTLs live on the boot clock (CLOCK_BOOTTIME), which never jumps:
// stepping the system clock (NTP, an operator, a VM migration) must not
// shorten or lengthen a lease. Wall-clock time is used only where the
// interface demands it: EXAT/PXAT arguments, absolute expiries in the log,
// TIME and INFO. Each is converted to the boot clock once, when applied.
//
// Readings of the boot clock are comparable only on the same clock: the same
// boot of the same machine, seen from the same time namespace. Id() names it
// (the kernel's boot id and the namespace's boot-time offset); a log or state
// record written under another id says nothing about elapsed time.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

namespace latch {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds on a clock that only moves forward and counts time spent
  // suspended (CLOCK_BOOTTIME): since boot, so it also orders events across
  // restarts of the process within one boot. Always > 0.
  virtual int64_t MonoMs() const = 0;
  // The same clock in microseconds (MonoUs() / 1000 == MonoMs()), for
  // timing commands (SLOWLOG, LATENCY, INFO commandstats).
  virtual int64_t MonoUs() const { return MonoMs() * 1000; }
  // Microseconds since the Unix epoch (may jump).
  virtual int64_t WallUs() const = 0;
  int64_t WallMs() const { return WallUs() / 1000; }
  // Which boot clock MonoMs() reads (no spaces).
  virtual std::string Id() const = 0;
  // Tests: shifts the wall clock by `ms` from the real one (a step). False
  // where not supported.
  virtual bool SetWallOffsetMs(int64_t) { return false; }
  // Fault injection (FAULT CLOCK, server/faults.h): from now on MonoMs()
  // runs at `rate` times real speed, after jumping `jump_ms` forward. The
  // reading stays continuous and never goes back. False where not supported.
  virtual bool WarpMono(double /*rate*/, int64_t /*jump_ms*/) { return false; }
};

// CLOCK_BOOTTIME and CLOCK_REALTIME. The test knobs (debug-wall-offset-ms,
// debug-clock-id, behind enable-debug-command) shift the wall clock and
// rename the boot clock, as a clock step or a move to another host would.
class SystemClock final : public Clock {
 public:
  int64_t MonoMs() const override;
  int64_t MonoUs() const override;
  int64_t WallUs() const override;
  std::string Id() const override;
  void set_wall_offset_ms(int64_t ms) { wall_offset_us_ = ms * 1000; }
  bool SetWallOffsetMs(int64_t ms) override {
    set_wall_offset_ms(ms);
    return true;
  }
  void set_id_override(std::string id) { id_override_ = std::move(id); }
  // FAULT CLOCK. Once warped, Id() names another clock ("<id>+warped"): the
  // times this run records (the log's clock annotations, the lease policy's
  // state record) are then on a clock no later run shares, so a restart
  // trusts none of them (lease_policy.h: "another clock").
  bool WarpMono(double rate, int64_t jump_ms) override;

 private:
  int64_t RealMonoUs() const;
  std::string RealId() const;
  std::atomic<int64_t> wall_offset_us_{0};
  std::string id_override_;
  // The warp: mono = anchor_mono_us_ + (real - anchor_real_us_) * rate_.
  // Set and read on the loop thread only; warped_ is atomic because the
  // background thread may read the clock too.
  std::atomic<bool> warped_{false};
  double rate_ = 1.0;
  int64_t anchor_real_us_ = 0;
  int64_t anchor_mono_us_ = 0;
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
  std::string Id() const override { return id_; }
  void set_id(std::string id) { id_ = std::move(id); }

 private:
  std::string id_ = "manual-clock";
  int64_t mono_ms_ = 1'000'000;
  int64_t wall_us_ = 1'700'000'000'000'000;
};

// Time arithmetic that saturates instead of wrapping: a huge TTL,
// max-lock-ttl or quarantine-ms must never turn a deadline into the past
// (or a PXAT in the log into a negative number).
inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
inline int64_t SatSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? INT64_MAX : INT64_MIN;
  return r;
}

// Converts between the clocks at one instant: `mono` and `wall_ms` are the two
// readings taken for the command being executed. Both conversions saturate.
struct TimeSnapshot {
  int64_t mono = 0;
  int64_t wall_ms = 0;
  // A deadline on the monotonic clock for an absolute Unix time in ms.
  int64_t MonoFromWall(int64_t unix_ms) const { return SatAdd(mono, SatSub(unix_ms, wall_ms)); }
  // The Unix time in ms of a monotonic deadline.
  int64_t WallFromMono(int64_t deadline) const { return SatAdd(wall_ms, SatSub(deadline, mono)); }
  // The deadline of a lease of `ttl_ms` (> 0) from now, bounded so that its
  // Unix time is still a number (a lease handed over later than it was
  // asked for, SET … WAIT, must not overflow where the request did not).
  int64_t DeadlineIn(int64_t ttl_ms) const {
    return SatAdd(mono, std::min(ttl_ms, SatSub(INT64_MAX, wall_ms)));
  }
};

}  // namespace latch
