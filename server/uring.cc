#include "server/uring.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

namespace latch {

std::unique_ptr<IoRing> IoRing::Create(unsigned entries, Handler handler, std::string* error) {
  std::unique_ptr<IoRing> r(new IoRing(handler));
  // Completions are reaped from the loop, possibly many per submission (a
  // multishot receive posts one per buffer): a completion queue 8 times the
  // submission queue, and the kernel keeps any overflow (IORING_FEAT_NODROP).
  //
  // COOP_TASKRUN: the kernel runs the ring's deferred work (a receive that
  // became ready) when the server next enters the kernel — its epoll_wait,
  // or the loop's next system call — instead of interrupting it with an
  // IPI. Measured: without it the ring path served a third fewer requests
  // at pipeline 1 (docs/bench/io_uring.md). Kernels before 5.19 refuse the
  // flag: the ring is made without it.
  io_uring_params params{};
  params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
  params.cq_entries = entries * 8;
  int rc = io_uring_queue_init_params(entries, &r->ring_, &params);
  if (rc == -EINVAL) {
    params = {};
    params.flags = IORING_SETUP_CQSIZE;
    params.cq_entries = entries * 8;
    rc = io_uring_queue_init_params(entries, &r->ring_, &params);
  }
  if (rc < 0) {
    *error = std::string("io_uring_queue_init: ") + std::strerror(-rc);
    return nullptr;
  }
  r->ring_ready_ = true;
  // The provided-buffer ring: the kernel picks a buffer for each receive
  // completion; the ring's memory must be page-aligned (mmap gives that).
  r->buf_ring_bytes_ = kBuffers * sizeof(io_uring_buf);
  void* mem = ::mmap(nullptr, r->buf_ring_bytes_, PROT_READ | PROT_WRITE,
                     MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) {
    *error = std::string("mmap of the buffer ring: ") + std::strerror(errno);
    return nullptr;
  }
  r->buf_ring_ = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uint64_t>(mem);
  reg.ring_entries = kBuffers;
  reg.bgid = kGroup;
  rc = io_uring_register_buf_ring(&r->ring_, &reg, 0);
  if (rc < 0) {
    *error = std::string("io_uring_register_buf_ring: ") + std::strerror(-rc);
    return nullptr;
  }
  r->buffers_registered_ = true;
  r->buffers_.reset(new char[kBuffers * kBufferSize]);
  io_uring_buf_ring_init(r->buf_ring_);
  const int mask = io_uring_buf_ring_mask(kBuffers);
  for (unsigned i = 0; i < kBuffers; ++i) {
    io_uring_buf_ring_add(r->buf_ring_, r->buffers_.get() + i * kBufferSize, kBufferSize,
                          static_cast<unsigned short>(i), mask, static_cast<int>(i));
  }
  io_uring_buf_ring_advance(r->buf_ring_, kBuffers);
  return r;
}

void IoRing::CloseHandles() {
  poll_.Close();
  idle_.Close();
  idle_active_ = false;
}

IoRing::~IoRing() {
  CloseHandles();
  if (buffers_registered_) io_uring_unregister_buf_ring(&ring_, kGroup);
  if (ring_ready_) io_uring_queue_exit(&ring_);
  if (buf_ring_ != nullptr) ::munmap(buf_ring_, buf_ring_bytes_);
}

void IoRing::Watch(uv_loop_t* loop) {
  uv_poll_init(loop, poll_.get(), ring_.ring_fd);
  poll_.MarkInitialized();
  poll_->data = this;
  uv_poll_start(poll_.get(), UV_READABLE, OnReadable);
  uv_idle_init(loop, idle_.get());
  idle_.MarkInitialized();
  idle_->data = this;
}

void IoRing::OnReadable(uv_poll_t* poll, int status, int) {
  if (status < 0) return;
  static_cast<IoRing*>(poll->data)->Reap();
}

void IoRing::OnIdle(uv_idle_t* idle) {
  static_cast<IoRing*>(idle->data)->Reap();
}

void IoRing::UpdateIdle() {
  if (!idle_.initialized()) return;
  const bool want = !deferred_.empty();
  if (want && !idle_active_) uv_idle_start(idle_.get(), OnIdle);
  if (!want && idle_active_) uv_idle_stop(idle_.get());
  idle_active_ = want;
}

io_uring_sqe* IoRing::Sqe(uint64_t user_data) {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {
    // The submission queue is full: hand it to the kernel and take a slot.
    Submit();
    sqe = io_uring_get_sqe(&ring_);
  }
  // (Never null after a submit: the kernel consumed the whole queue.)
  io_uring_sqe_set_data64(sqe, user_data);
  ++queued_;
  return sqe;
}

void IoRing::Submit() {
  if (queued_ == 0) return;
  int rc;
  do {
    rc = io_uring_submit(&ring_);
  } while (rc == -EINTR);
  ++submits_;
  // EBUSY/EAGAIN (the kernel is short of room for completions): the
  // submissions stay queued and go with the next Submit.
  if (rc >= 0) queued_ = 0;
}

void IoRing::SubmitAndReap() {
  // One io_uring_enter that also runs the kernel's pending work, so
  // completions of bytes that arrived meanwhile are posted, then reaped.
  queued_ = 0;
  ++submits_;
  io_uring_submit_and_get_events(&ring_);
  Reap();
}

bool IoRing::Deliver(uint64_t user_data, int res, unsigned flags) {
  if (user_data == 0) return true;  // a cancellation's own completion
  void* owner = reinterpret_cast<void*>(user_data & ~uint64_t{3});
  return handler_(*this, owner, static_cast<unsigned>(user_data & 3), res, flags);
}

bool IoRing::Waiting(uint64_t user_data) const {
  // Completions of one owner keep their order: one arriving while an older
  // one of the same owner waits (deferred, refused again, or not yet
  // redelivered by an outer Reap) waits behind it.
  const uint64_t owner = user_data & ~uint64_t{3};
  auto same = [owner](const Deferred& d) { return (d.user_data & ~uint64_t{3}) == owner; };
  for (const Deferred& d : deferred_) {
    if (same(d)) return true;
  }
  for (const Deferred& d : refused_) {
    if (same(d)) return true;
  }
  for (size_t i = again_next_; i < again_.size(); ++i) {
    if (same(again_[i])) return true;
  }
  return false;
}

void IoRing::Reap() {
  // Reentrant: a handler may run a busy script, which reaps again to serve
  // the other clients (busy.cc); each completion is consumed before its
  // handler runs, so no completion is delivered twice.
  if (!deferred_.empty() && again_.empty()) {
    // Deliver the refused ones again, oldest first. Those refused once more
    // stay ahead of any deferred meanwhile (by a reap nested in a handler).
    again_.swap(deferred_);
    while (again_next_ < again_.size()) {
      const Deferred d = again_[again_next_++];
      const uint64_t owner = d.user_data & ~uint64_t{3};
      bool wait = false;
      for (const Deferred& r : refused_) wait = wait || (r.user_data & ~uint64_t{3}) == owner;
      if (wait || !Deliver(d.user_data, d.res, d.flags)) refused_.push_back(d);
    }
    refused_.insert(refused_.end(), deferred_.begin(), deferred_.end());
    deferred_.swap(refused_);
    refused_.clear();
    again_.clear();
    again_next_ = 0;
  }
  for (;;) {
    io_uring_cqe* cqe = nullptr;
    if (io_uring_peek_cqe(&ring_, &cqe) != 0 || cqe == nullptr) break;
    const Deferred d{cqe->user_data, cqe->res, cqe->flags};
    io_uring_cqe_seen(&ring_, cqe);
    ++completions_;
    const bool wait = (!deferred_.empty() || !refused_.empty() || again_next_ < again_.size()) &&
                      d.user_data != 0 && Waiting(d.user_data);
    if (wait || !Deliver(d.user_data, d.res, d.flags)) deferred_.push_back(d);
  }
  UpdateIdle();
}

void IoRing::Wait() {
  io_uring_cqe* cqe = nullptr;
  int rc;
  do {
    rc = io_uring_wait_cqe(&ring_, &cqe);
  } while (rc == -EINTR);
}

void IoRing::Drain() {
  Submit();
  Reap();  // (completions refused earlier, whose owners take them now)
  while (in_flight_ > 0) {
    Wait();
    Reap();
  }
}

const char* IoRing::Buffer(unsigned flags) const {
  const unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;
  return buffers_.get() + static_cast<size_t>(bid) * kBufferSize;
}

void IoRing::ReturnBuffer(unsigned flags) {
  const unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;
  io_uring_buf_ring_add(buf_ring_, buffers_.get() + static_cast<size_t>(bid) * kBufferSize,
                        kBufferSize, static_cast<unsigned short>(bid),
                        io_uring_buf_ring_mask(kBuffers), 0);
  io_uring_buf_ring_advance(buf_ring_, 1);
}

}  // namespace latch
