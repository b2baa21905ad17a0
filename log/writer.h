// Appends batches of records to the log file, syncs them as the policy says,
// and compacts the file in the background (BGREWRITEAOF).
//
// The contract every caller relies on (see docs/architecture.md):
//  - appended_end() counts every byte ever put into batch(); durable_end()
//    is how much of that a reply may report: written to the file (everysec,
//    no) or written and fsynced (always). A reply that reports an effect
//    waits until durable_end() covers the effect's record, so a process crash
//    never loses an acknowledged write, and under `always` neither does a
//    machine crash.
//  - Flush() writes the whole batch with one write() (group commit: every
//    record of one event-loop iteration), then, under `always`, one
//    fdatasync. Under `everysec` the fdatasync runs on the background thread
//    at most once a second; while one runs, the write waits for it (up to 2 s,
//    as Redis) rather than block the loop behind it, and replies wait too.
//  - A failed write or fsync puts the writer in an error state (write_ok()
//    false: the server refuses writes with MISCONF) until a retry succeeds. A
//    failed fsync under `always` is fatal (fatal_error()): Linux may drop the
//    dirty pages and report a later fsync as successful, so nothing written
//    since can be promised; Redis exits too. Under the other policies it taints
//    the run: Shutdown() then reports that not everything is known to be on
//    disk, so the run is not recorded as clean.
//  - A rewrite never starts inside a transaction (a MULTI in the batch
//    without its EXEC): it would split the transaction between the snapshot
//    and the records that follow. It is deferred until the EXEC.
//
// A rewrite forks; the child writes a snapshot of the live dataset (given by
// the caller as a function) to a temporary file, while the parent keeps
// serving and also copies every new record into a rewrite buffer. When the
// child is done, the parent appends the buffer, fsyncs, renames the file over
// the log and fsyncs the directory: the switch is atomic, and a failed
// rewrite leaves the old log untouched. fork() gives the child a consistent
// snapshot for free (copy on write); the loop pays only for the page tables.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/unique_fd.h"
#include "log/bio.h"
#include "log/record.h"
#include "log/sync_policy.h"
#include "log/written_mark.h"

namespace latch::aof {

enum class Severity { kNotice, kWarning };

// Removes the temporary files of rewrites that never finished (their
// server was killed) from the directory of the log at `log_path`. Open()
// does it; call it only while holding the data directory.
void RemoveRewriteLeftovers(const std::string& log_path);

// fdatasync of an existing file (the log a previous run left, before this
// one trusts it). 0, or the errno. Honours injected faults (log-fsync).
int SyncExisting(const std::string& path);

// Where the writer's messages go; the server points it at its logger.
// Default: stderr.
void SetMessageSink(void (*sink)(Severity, const std::string&));

// Writes the live dataset into `out`, calling drain() whenever `out` is
// large (drain writes and clears it; it returns false on a write error, and
// the snapshot should stop). Runs in the rewrite's child process.
using SnapshotFn = std::function<bool(Batch& out, const std::function<bool()>& drain)>;

// What the writer tells its owner as it happens, so that nobody needs to
// poll it: each is called on the loop thread, from inside the writer's call
// that caused it (Open, Flush, Cron, Rewrite, Shutdown).
class WriterEvents {
 public:
  // Every byte appended before appended_end() == `end` is in the file now
  // (handed to write()): durable_end() may have moved.
  virtual void OnWritten(uint64_t end) = 0;
  // A completed fsync covers the log up to `end` (synced_end()).
  virtual void OnSynced(uint64_t end) = 0;
  // A write or an fsync failed (write_ok() is false, or a sync failed).
  virtual void OnError() = 0;
  // The log can be written again after an error.
  virtual void OnRecovered() = 0;
  // Another log file is in use (a new one at Open, a rewrite's): `log_id`.
  virtual void OnNewFile(const std::string& log_id) = 0;
  // A rewrite forked: records appended from now on go to its buffer too.
  virtual void OnRewriteStarted() = 0;

 protected:
  ~WriterEvents() = default;
};

class Writer {
 public:
  Writer(std::string path, SyncPolicy policy, BackgroundIo& bio, WriterEvents* events = nullptr);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Opens the log for appending, creating it if needed (a new file starts
  // with its id line, fsynced). An error text on failure.
  std::optional<std::string> Open();
  const std::string& path() const { return path_; }
  // The id of the log file in use (empty for a file without one), and how
  // many rewrites replaced it so far (the id changes with each).
  const std::string& log_id() const { return log_id_; }

  void set_policy(SyncPolicy p) { policy_ = p; }
  SyncPolicy policy() const { return policy_; }

  // Where the Store appends records until the next Flush().
  Batch& batch() { return batch_; }

  // Writes the batch (and fsyncs it under `always`). `now_ms` is monotonic.
  // With force, an everysec write is not postponed behind a running fsync.
  void Flush(int64_t now_ms, bool force = false);
  // Several times a second: everysec fsync, retries after an error, rewrite
  // completion, a deferred or automatic rewrite.
  void Cron(int64_t now_ms);
  // The final write and fsync before the process exits. True when every
  // record ever appended is written and known to be on disk (no failed
  // fsync during the run): only then may the run be recorded as clean.
  bool Shutdown();

  // Starts a background rewrite (deferred to the end of a transaction in
  // progress). nullopt when started or deferred; otherwise why not.
  std::optional<std::string> Rewrite(SnapshotFn snapshot, int64_t now_ms);

  uint64_t appended_end() const { return appended_base_ + batch_.size(); }
  uint64_t durable_end() const {
    return policy_ == SyncPolicy::kAlways ? synced_end_ : written_end_;
  }
  // How much of appended_end() is known to be on disk (fsynced), whatever
  // the policy: WAITAOF's answer.
  uint64_t synced_end() const { return synced_end_; }

  bool write_ok() const { return write_errno_ == 0; }
  std::string write_error() const;
  // Set after a failed fsync under `always`: the process must stop now.
  const std::string& fatal_error() const { return fatal_; }
  // A failed fsync happened this run (under everysec or no).
  bool sync_failed() const { return sync_failed_; }
  // A write or an fsync of the log failed this run (even if a retry
  // succeeded since).
  bool had_errors() const { return sync_failed_ || write_failed_; }

  // INFO persistence.
  bool rewrite_in_progress() const { return rewrite_pid_ > 0; }
  bool rewrite_scheduled() const { return static_cast<bool>(pending_snapshot_); }
  bool last_rewrite_ok() const { return last_rewrite_ok_; }
  int64_t last_rewrite_time_sec() const { return last_rewrite_time_sec_; }
  int64_t current_rewrite_time_sec(int64_t now_ms) const;
  uint64_t rewrites() const { return rewrites_; }
  uint64_t current_size() const { return current_size_; }
  uint64_t base_size() const { return base_size_; }
  uint64_t buffer_length() const { return batch_.size(); }
  int64_t pending_bio_fsync() const { return bio_.pending_fsyncs(); }
  uint64_t delayed_fsync() const { return delayed_fsync_; }
  uint64_t fsyncs() const { return sync_fsyncs_ + bio_.completed_fsyncs(); }
  uint64_t fsync_micros() const { return sync_fsync_micros_ + bio_.fsync_micros(); }
  uint64_t writes() const { return writes_; }
  // Bytes of the file known to be on disk.
  uint64_t synced_size() const { return synced_size_.load(); }

  // DEBUG POWERLOSS: what a machine crash does to the log. Cuts the file back
  // to what was fsynced (the page cache is lost), then ends the process at
  // once, without the clean-shutdown record.
  [[noreturn]] void SimulatePowerLoss();

 private:
  bool WriteBatch();
  bool FsyncNow();
  void StartBackgroundFsync(int64_t now_ms);
  void SetWriteError(int err, const char* what);
  void ClearWriteError();
  void FinishRewrite(bool child_ok, int64_t now_ms);
  std::optional<std::string> StartRewriteNow(int64_t now_ms);

  std::string path_;
  std::string log_id_;
  std::string rewrite_id_;  // the id of the file a running rewrite writes
  SyncPolicy policy_;
  BackgroundIo& bio_;
  WriterEvents* events_;
  UniqueFd fd_;

  Batch batch_;
  uint64_t appended_base_ = 0;  // appended_end() of the first byte of batch_
  uint64_t written_end_ = 0;    // appended bytes handed to write()
  uint64_t synced_end_ = 0;     // appended bytes known to be on disk
  uint64_t current_size_ = 0;
  uint64_t base_size_ = 0;
  uint64_t writes_ = 0;
  uint64_t sync_fsyncs_ = 0;
  uint64_t sync_fsync_micros_ = 0;
  std::atomic<uint64_t> synced_size_{0};
  // The background fsync's success is reported as a file size; this maps
  // the appended_end() at the time the fsync was queued, for synced_end_.
  uint64_t bg_fsync_appended_end_ = 0;
  uint64_t bg_fsync_file_size_ = 0;

  // everysec
  int64_t last_fsync_ms_ = 0;
  bool unsynced_ = false;           // data written since the last fsync
  int64_t postponed_since_ms_ = 0;  // write postponed behind a running fsync
  uint64_t delayed_fsync_ = 0;

  // Errors
  int write_errno_ = 0;
  int64_t last_error_log_ms_ = 0;
  bool sync_failed_ = false;
  bool write_failed_ = false;
  std::string fatal_;
  // How much of the log this process wrote, for the next start (written_mark.h).
  WrittenMark mark_;

  // Rewrite
  SnapshotFn pending_snapshot_;  // deferred to the end of a transaction
  SnapshotFn running_snapshot_;
  pid_t rewrite_pid_ = -1;
  std::string rewrite_tmp_;
  std::string rewrite_buf_;  // records appended since the fork
  size_t rewrite_mark_ = 0;  // bytes of batch_ already copied to rewrite_buf_
  int64_t rewrite_start_ms_ = 0;
  int64_t last_rewrite_time_sec_ = -1;
  bool last_rewrite_ok_ = true;
  uint64_t rewrites_ = 0;
};

}  // namespace latch::aof
