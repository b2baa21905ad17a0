// appendfsync: when the log's writes reach the disk.
#pragma once

namespace latch::aof {

// always: every write is fsynced before the replies that report it leave.
// everysec: fsynced at most once a second, on the background thread.
// no: the kernel decides.
enum class SyncPolicy { kAlways, kEverysec, kNo };

inline const char* SyncPolicyName(SyncPolicy p) {
  switch (p) {
    case SyncPolicy::kAlways:
      return "always";
    case SyncPolicy::kEverysec:
      return "everysec";
    case SyncPolicy::kNo:
      return "no";
  }
  return "?";
}

}  // namespace latch::aof
