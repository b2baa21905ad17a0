#include "log/bio.h"

#include "common/io_faults.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace latch {

BackgroundIo::BackgroundIo() : thread_([this] { Loop(); }) {}

BackgroundIo::~BackgroundIo() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundIo::Fsync(int fd, std::atomic<uint64_t>* synced, uint64_t size) {
  ++pending_fsyncs_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Job job;
    job.fsync_fd = fd;
    job.synced = synced;
    job.synced_size = size;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void BackgroundIo::Close(UniqueFd fd) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Job job;
    job.close_fd = std::move(fd);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void BackgroundIo::Run(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    Job job;
    job.fn = std::move(fn);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void BackgroundIo::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return jobs_.empty() && !running_job_; });
}

void BackgroundIo::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) {
      if (stop_) return;
      continue;
    }
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    running_job_ = true;
    lock.unlock();
    if (job.fsync_fd >= 0) {
      auto start = std::chrono::steady_clock::now();
      int injected = IoFaults::Check(IoOp::kLogFsync);
      int rc = injected != 0 ? -1 : fdatasync(job.fsync_fd);
      if (rc != 0) {
        last_errno_.store(injected != 0 ? injected : errno);
      } else if (job.synced != nullptr) {
        job.synced->store(job.synced_size);
      }
      fsync_micros_ += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                 std::chrono::steady_clock::now() - start)
                                                 .count());
      ++completed_fsyncs_;
      --pending_fsyncs_;
    }
    job.close_fd.reset();
    if (job.fn) job.fn();
    lock.lock();
    running_job_ = false;
    if (jobs_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace latch
