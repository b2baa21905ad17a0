// Injected disk errors, for tests: a full disk or a failing device on demand.
//
// The log writer and the state-record writer ask Check() before each
// write() and fsync(); when a fault is armed for that operation, they behave
// exactly as if the system call had failed with that errno (nothing reaches
// the file). Armed only through DEBUG FAULT-IO, which needs
// enable-debug-command; in production every check is one relaxed atomic
// load that answers 0.
#pragma once

#include <atomic>

namespace latch {

enum class IoOp { kLogWrite = 0, kLogFsync = 1, kStateWrite = 2, kCount = 3 };

class IoFaults {
 public:
  // The errno to fail `op` with, or 0.
  static int Check(IoOp op) { return slots()[static_cast<int>(op)].load(std::memory_order_relaxed); }
  static void Arm(IoOp op, int err) {
    slots()[static_cast<int>(op)].store(err, std::memory_order_relaxed);
  }
  static void ClearAll() {
    for (int i = 0; i < static_cast<int>(IoOp::kCount); ++i) slots()[i].store(0);
  }

 private:
  static std::atomic<int>* slots() {
    static std::atomic<int> s[static_cast<int>(IoOp::kCount)] = {};
    return s;
  }
};

}  // namespace latch
