// Parking a client: a command that cannot be answered yet leaves the client
// waiting, reading no further request, until the server answers it later
// (from the loop, once what it waits for has happened or its time is up).
// The server implements it (waits.cc, log_waits.cc); handlers reach it
// through ctx.parking(), and only when ctx.may_block (a client's own request,
// never one queued in MULTI or called by a script).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "server/waiters.h"

namespace latch {

class Session;

class Parking {
 public:
  // SET … NX WAIT (waiters.h): parks `s` at the tail of the queue of `key`
  // in its database, until the key is granted to it (the reply is OK, or its
  // fencing token with FENCE), its timeout passes (nil) or it disconnects.
  virtual void ParkForLock(Session& s, std::string_view key, LockWaitRequest request) = 0;
  // A blocking pop with nothing to pop (BLPOP, BLMOVE, BZPOPMIN…,
  // commands/blocking.h): parks `s` in the queue of each of `keys` in its
  // database, until one of them holds a value of request.type and the
  // command, run again for that key, serves it; or its timeout passes (a
  // null array); or it disconnects or is unblocked (CLIENT UNBLOCK).
  virtual void ParkForKeys(Session& s, std::span<const std::string_view> keys,
                           PopWaitRequest request) = 0;
  // WAITAOF that cannot be answered yet: parks `s` until the log has
  // fsynced s.last_write_offset (when `local`) and `numreplicas` replicas
  // acknowledged it (never: latch has none), or until `deadline` (boot-clock
  // ms; 0: none). Then the server replies [local fsync done, 0].
  virtual void ParkForFsync(Session& s, bool local, int64_t numreplicas, int64_t deadline) = 0;

 protected:
  ~Parking() = default;
};

}  // namespace latch
