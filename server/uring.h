// One io_uring per server loop, for plain client connections (issue 28,
// `io-uring yes`; docs/bench/io_uring.md has the measurement).
//
// What it replaces: on the epoll path libuv asks epoll which sockets are
// readable, then read(2)s each one, and the server write(2)s each client's
// replies at the end of the loop iteration — a system call per socket per
// step. Here each connection keeps one multishot receive armed in the ring
// (the kernel fills buffers from a provided-buffer ring as bytes arrive and
// posts one completion per buffer), and the end of the iteration queues one
// send per connection with output, all handed to the kernel by a single
// io_uring_enter (Submit).
//
// How it fits in the libuv loop without blocking it: the ring's fd is
// pollable (readable while completions wait), so a uv_poll_t watches it and
// Reap() runs the completions from the loop's poll phase. Nothing waits in
// io_uring_enter.
//
// Completions name their owner by user_data: an object pointer (aligned to
// at least 4 bytes) with a 2-bit kind in the low bits (Tag/Owner/Kind). The
// handler may refuse a completion for now (its owner is in the middle of its
// own request: a busy script reaping the ring): the ring keeps a copy and
// delivers it again, before newer ones, on a later Reap (an idle handle keeps
// the loop from sleeping while any wait).
//
// Lifetime: the destructor unregisters the buffers and exits the ring. An
// owner must not be freed while a completion can still name it: owners count
// their operations in flight (Connection), and Drain() waits for every
// operation at shutdown.
#pragma once

#include <liburing.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/uv_handle.h"

namespace latch {

class IoRing {
 public:
  // What a completion tells its owner. Return false to have it delivered
  // again later (the owner cannot take it now).
  using Handler = bool (*)(IoRing& ring, void* owner, unsigned kind, int res, unsigned flags);

  // Provided receive buffers: kBuffers of kBufferSize bytes, in group kGroup.
  static constexpr unsigned kBuffers = 256;
  static constexpr size_t kBufferSize = 16 * 1024;
  static constexpr uint16_t kGroup = 0;

  // A ring of `entries` submission slots with its buffer ring registered.
  // nullptr when the kernel refuses (ENOSYS without io_uring, EPERM under
  // seccomp or io_uring_disabled, EINVAL for an entries count it does not
  // take): *error names why.
  static std::unique_ptr<IoRing> Create(unsigned entries, Handler handler, std::string* error);
  ~IoRing();
  IoRing(const IoRing&) = delete;
  IoRing& operator=(const IoRing&) = delete;

  // Watches the ring's fd on `loop`: completions are reaped from the loop.
  void Watch(uv_loop_t* loop);

  static uint64_t Tag(const void* owner, unsigned kind) {
    return reinterpret_cast<uint64_t>(owner) | kind;
  }

  // A submission slot, submitting what is queued when the queue is full.
  // Its user_data is set to `user_data` (0: a completion nobody handles).
  io_uring_sqe* Sqe(uint64_t user_data);
  // Hands every queued submission to the kernel (one io_uring_enter); no-op
  // when nothing is queued.
  void Submit();
  size_t queued() const { return queued_; }
  // Submits, and reaps what completed, without waiting (a busy script
  // serving other clients: busy.cc).
  void SubmitAndReap();
  // Runs every completion that waits (refused ones first), calling the
  // handler; reentrant (a handler's busy script reaps for other clients).
  void Reap();
  // Stops watching the loop (shutdown: before the loop closes).
  void CloseHandles();
  // Waits until at least one completion is there (tests; Drain).
  void Wait();
  // Submits, then reaps until no operation is in flight (shutdown, after
  // every owner cancelled its operations).
  void Drain();
  // Operations submitted or queued whose last completion has not been
  // reaped; owners report it with OpStarted/OpEnded.
  void OpStarted() { ++in_flight_; }
  void OpEnded() { --in_flight_; }
  size_t in_flight() const { return in_flight_; }

  // The provided buffer a receive completion's flags name, and giving it
  // back to the kernel once its bytes are copied.
  static bool HasBuffer(unsigned flags) { return (flags & IORING_CQE_F_BUFFER) != 0; }
  const char* Buffer(unsigned flags) const;
  void ReturnBuffer(unsigned flags);

  // Statistics (INFO): submissions to the kernel, completions reaped.
  uint64_t submits() const { return submits_; }
  uint64_t completions() const { return completions_; }

 private:
  struct Deferred {
    uint64_t user_data;
    int res;
    unsigned flags;
  };

  explicit IoRing(Handler handler) : handler_(handler) {}
  bool Deliver(uint64_t user_data, int res, unsigned flags);
  bool Waiting(uint64_t user_data) const;
  static void OnReadable(uv_poll_t* poll, int status, int events);
  static void OnIdle(uv_idle_t* idle);
  void UpdateIdle();

  io_uring ring_{};
  bool ring_ready_ = false;
  io_uring_buf_ring* buf_ring_ = nullptr;
  size_t buf_ring_bytes_ = 0;
  std::unique_ptr<char[]> buffers_;
  bool buffers_registered_ = false;
  Handler handler_;
  size_t queued_ = 0;
  size_t in_flight_ = 0;
  // Refused completions, oldest first; those an outer Reap is delivering
  // again (again_[again_next_...] still to go).
  std::vector<Deferred> deferred_;
  std::vector<Deferred> again_;
  std::vector<Deferred> refused_;
  size_t again_next_ = 0;
  uint64_t submits_ = 0;
  uint64_t completions_ = 0;
  UvHandle<uv_poll_t> poll_;
  UvHandle<uv_idle_t> idle_;
  bool idle_active_ = false;
};

}  // namespace latch
