// A background thread for the log's slow system calls, like Redis's bio.
//
// appendfsync everysec must never block the event loop on the disk, so its
// fdatasync runs here. Closing the old log after a rewrite also runs here:
// the close of a file with unsynced data can block too, and queuing it after
// any pending fsync of the same fd guarantees the fd outlives that fsync.
// Jobs run one at a time, in order.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "common/unique_fd.h"

namespace latch {

class BackgroundIo {
 public:
  BackgroundIo();
  ~BackgroundIo();  // finishes queued jobs, then joins
  BackgroundIo(const BackgroundIo&) = delete;
  BackgroundIo& operator=(const BackgroundIo&) = delete;

  // Queues fdatasync(fd). The caller keeps fd open until the job ran (it
  // hands the fd to Close() below rather than closing it itself).
  // On success, stores `size` into *synced (how much of the file is now
  // known to be on disk).
  void Fsync(int fd, std::atomic<uint64_t>* synced = nullptr, uint64_t size = 0);
  // Queues the close of fd.
  void Close(UniqueFd fd);
  // Queues any other slow job (for instance writing the quarantine state).
  void Run(std::function<void()> job);
  // Blocks until every queued job has run.
  void Drain();

  // Fsyncs queued or running (INFO aof_pending_bio_fsync).
  int64_t pending_fsyncs() const { return pending_fsyncs_.load(); }
  uint64_t completed_fsyncs() const { return completed_fsyncs_.load(); }
  uint64_t fsync_micros() const { return fsync_micros_.load(); }
  // errno of a failed fsync since the last call (0 if none), and resets it.
  int TakeFsyncError() { return last_errno_.exchange(0); }

 private:
  struct Job {
    int fsync_fd = -1;
    std::atomic<uint64_t>* synced = nullptr;
    uint64_t synced_size = 0;
    UniqueFd close_fd;
    std::function<void()> fn;
  };
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<Job> jobs_;
  bool running_job_ = false;
  bool stop_ = false;
  std::atomic<int64_t> pending_fsyncs_{0};
  std::atomic<uint64_t> completed_fsyncs_{0};
  std::atomic<uint64_t> fsync_micros_{0};
  std::atomic<int> last_errno_{0};
  std::thread thread_;
};

}  // namespace latch
