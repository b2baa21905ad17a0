// Injected disk errors, for tests: a full disk or a failing device on demand.
//
// The log writer and the state-record writer ask Check() before each
// write() and fsync(); when a fault is armed for that operation, they behave
// exactly as if the system call had failed with that errno (nothing reaches
// the file). Armed only through DEBUG FAULT-IO, which needs
// enable-debug-command; in production every check is one relaxed atomic
// load that answers 0.
#pragma once

#include <unistd.h>

#include <atomic>

namespace latch {

enum class IoOp { kLogWrite = 0, kLogFsync = 1, kStateWrite = 2, kCount = 3 };

class IoFaults {
 public:
  // The errno to fail `op` with, or 0 (after the injected delay, if any).
  static int Check(IoOp op) {
    int delay = DelayMs(op);
    if (delay > 0) ::usleep(static_cast<useconds_t>(delay) * 1000);
    return slots()[static_cast<int>(op)].load(std::memory_order_relaxed);
  }
  static void Arm(IoOp op, int err) {
    slots()[static_cast<int>(op)].store(err, std::memory_order_relaxed);
  }
  // A slow disk: each `op` first waits this many milliseconds.
  static int DelayMs(IoOp op) {
    return delays()[static_cast<int>(op)].load(std::memory_order_relaxed);
  }
  static void ArmDelay(IoOp op, int ms) {
    delays()[static_cast<int>(op)].store(ms, std::memory_order_relaxed);
  }
  static void ClearAll() {
    for (int i = 0; i < static_cast<int>(IoOp::kCount); ++i) {
      slots()[i].store(0);
      delays()[i].store(0);
    }
  }

 private:
  static std::atomic<int>* slots() {
    static std::atomic<int> s[static_cast<int>(IoOp::kCount)] = {};
    return s;
  }
  static std::atomic<int>* delays() {
    static std::atomic<int> d[static_cast<int>(IoOp::kCount)] = {};
    return d;
  }
};

}  // namespace latch
