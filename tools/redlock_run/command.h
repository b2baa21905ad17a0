// latch-redlock's command: what the tool does to the process it runs under
// the lock — whether its process group still lives, how it is signalled,
// when it must be stopped (backwards from the lock's validity end), and a
// timer on the lock's own clock. Kept apart from latch_redlock.cc (options,
// the acquire/release/status modes and the run loop) because these are the
// rules a reviewer of the stop guarantee reads on their own.
#pragma once

#include <sys/timerfd.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

#include "common/unique_fd.h"
#include "tools/redlock/redlock.h"

namespace latch::redlock_command {

// Whether a process of group `pgid` other than `leader` is alive (a zombie
// is not: its work is over). COMMAND (the group's leader) stays unreaped
// while this is asked, so the group's id cannot be reused meanwhile. Read
// from /proc: the group's other members are not our children (they are
// COMMAND's, or init's once it exits), so no SIGCHLD tells of them.
bool GroupLives(pid_t pgid, pid_t leader);

// Signals COMMAND's process group, so that what it started gets the signal
// too; if COMMAND moved itself to another group, at least COMMAND itself.
void SignalCommand(pid_t pid, int sig);

// When COMMAND must be stopped (issue 14, item 10).
//
// Once the lock's validity has ended, another client may win it and start
// working. Waiting until the loss is certain (the validity is over) and only
// then sending SIGTERM, with --kill-after more before SIGKILL, would leave
// COMMAND running seconds into the next holder's lease. So the stop is
// scheduled backwards from the validity end instead:
//
//   stop point = validity end - grace - margin   SIGTERM, unless a renewal
//                                                 has moved the validity end
//   kill point = validity end - margin            SIGKILL at the latest
//
// and COMMAND is dead before the lease can pass to anyone else. Each
// successful renewal moves both points along with the validity.
struct StopTiming {
  // SIGTERM to SIGKILL: --kill-after, but at most ttl/3. The watchdog first
  // renews at ttl/3 after the grant and the validity ends at about ttl, so
  // with grace <= ttl/3 and margin <= ttl/20 the stop point comes no sooner
  // than 0.6 ttl after the last renewal: the watchdog gets several tries (one
  // every ttl/20) before a command is stopped for want of a renewal.
  Millis grace;
  // SIGKILL to the validity end: ttl/20, from 10 ms to 500 ms. It covers our
  // own wake-up lateness and the moment the kernel needs to tear the killed
  // processes down.
  Millis margin;
};

StopTiming StopTimingFor(Millis ttl, Millis kill_after);

// A timer on the lock's own clock (CLOCK_BOOTTIME): if the machine is
// suspended, the deadline is still reached at the right moment of lease
// time, where poll()'s timeout (CLOCK_MONOTONIC) would stop counting.
class DeadlineTimer {
 public:
  DeadlineTimer() : fd_(::timerfd_create(CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK)) {}
  int fd() const { return fd_.get(); }
  explicit operator bool() const { return static_cast<bool>(fd_); }

  // Fires at `at` (at once if that has passed); nullopt disarms it.
  void Arm(std::optional<LockClock::time_point> at) {
    itimerspec spec{};
    if (at) {
      int64_t ns = std::max<int64_t>(at->time_since_epoch().count(), 1);
      spec.it_value.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
      spec.it_value.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    }
    ::timerfd_settime(fd_.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
  }

  void Drain() {
    uint64_t expirations;
    ssize_t ignored = ::read(fd_.get(), &expirations, sizeof(expirations));
    (void)ignored;
  }

 private:
  latch::UniqueFd fd_;
};

// How long until `t`, as the tool prints durations ("1.50 s").
std::string Until(LockClock::time_point t);

}  // namespace latch::redlock_command
