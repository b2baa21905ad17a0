// The append-only log: durable locks.
//
// A lock server that forgets a lock on a crash breaks mutual exclusion, so
// every change to the keyspace is appended to a file in Redis's single-file
// AOF format (see aof_format.h) and replayed at start-up (aof_loader.h).
//
// Writing. Handlers state their effects (effects.h) into batch(). Before the
// loop sleeps, Flush() writes the whole batch with one write(), then:
//  - appendfsync always: one fdatasync for the batch (group commit: every
//    write executed in this loop iteration shares it), and only then do the
//    replies leave. Connections hold back replies that report an effect until
//    durable_end() has reached it (see Server::Dispatch and
//    Connection::Flush), so a client is never told "OK" for a lock that is
//    not on disk.
//  - everysec: an fdatasync at most once a second on the background thread,
//    never blocking the loop. If the previous one is still running, the
//    write waits (up to 2 s, like Redis) rather than block behind it, then
//    goes ahead with a warning and counts a delayed fsync.
//  - no: the kernel decides.
// A failed write or fsync (disk full, EIO) puts the log in an error state:
// write commands are refused with -MISCONF until a retry from the cron
// succeeds; reads keep working. A short write is cut back off the file so a
// half record never precedes the retried one.
//
// Compaction. Rewrite() forks; the child writes the live dataset (one
// `SET k v [PXAT t]` per key) to a temporary file while the parent keeps
// serving and also copies every new effect into a rewrite buffer. When the
// child is done, the parent appends the buffer, fsyncs, renames the file over
// the log and fsyncs the directory: the switch is atomic, and a failed
// rewrite leaves the old log untouched. fork() is chosen over an incremental
// rewrite because the child sees a consistent snapshot for free (copy on
// write), the loop pays only for copying page tables, and the rewrite code is
// a plain loop over the keyspace.
#pragma once

#include <sys/types.h>

#include <atomic>

#include <cstdint>
#include <memory>
#include <string>

#include "server/bio.h"
#include "server/clock.h"
#include "server/config.h"
#include "common/unique_fd.h"

namespace latch {

class Keyspace;

class Aof {
 public:
  // `config` is the server's live configuration (policy changes apply at
  // once); `db` is what a rewrite snapshots.
  Aof(const Config& config, Keyspace& db, BackgroundIo& bio);
  ~Aof();
  Aof(const Aof&) = delete;
  Aof& operator=(const Aof&) = delete;

  // Opens the log for appending, creating it if needed. On failure returns an
  // error text.
  std::optional<std::string> Open();

  // Where effects are appended until the next Flush().
  std::string* batch() { return &batch_; }

  // Writes the batch (and fsyncs it for appendfsync always). `now_ms` is
  // monotonic. With force, an everysec write is not postponed.
  void Flush(int64_t now_ms, bool force = false);
  // Once a second and more: everysec fsync, retries after an error, rewrite
  // completion and the automatic rewrite trigger.
  void Cron(int64_t now_ms, TimeSnapshot now);
  // Final write and fsync, for shutdown. Kills a running rewrite.
  void Shutdown();

  // Starts a background rewrite. Returns an error text if it cannot.
  std::optional<std::string> Rewrite(TimeSnapshot now);

  // Replies that report an effect wait for it to be durable (always only).
  bool holds_replies() const { return config_.appendfsync == FsyncPolicy::kAlways; }
  // Total bytes ever appended to the batch, and how many of them are durable
  // (written, and fsynced under always).
  uint64_t appended_end() const { return appended_base_ + batch_.size(); }
  uint64_t durable_end() const { return durable_end_; }

  // False after a failed write or fsync, until a retry succeeds.
  bool write_ok() const { return write_errno_ == 0; }
  std::string write_error() const;

  // INFO persistence.
  bool rewrite_in_progress() const { return rewrite_pid_ > 0; }
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
  // Bytes of the log known to be on disk (fsynced).
  uint64_t synced_size() const { return synced_size_.load(); }

  // DEBUG POWERLOSS: what a machine crash does to the log. Cuts the file back
  // to what was fsynced (the page cache is lost), then ends the process at
  // once, without the clean-shutdown record.
  [[noreturn]] void SimulatePowerLoss();
  const std::string& path() const { return config_.appendfilename; }

 private:
  bool WriteBatch();
  bool FsyncNow();
  void SetWriteError(int err, const char* what);
  void ClearWriteError();
  void FinishRewrite(bool child_ok, int64_t now_ms);
  static bool WriteSnapshot(const Keyspace& db, TimeSnapshot now, const std::string& path);

  const Config& config_;
  Keyspace& db_;
  BackgroundIo& bio_;
  UniqueFd fd_;

  std::string batch_;
  uint64_t appended_base_ = 0;  // appended_end() of the first byte of batch_
  uint64_t durable_end_ = 0;
  uint64_t current_size_ = 0;
  uint64_t base_size_ = 0;
  uint64_t writes_ = 0;
  uint64_t sync_fsyncs_ = 0;
  uint64_t sync_fsync_micros_ = 0;
  std::atomic<uint64_t> synced_size_{0};

  // everysec
  int64_t last_fsync_ms_ = 0;
  bool unsynced_ = false;           // data written since the last fsync
  int64_t postponed_since_ms_ = 0;  // write postponed behind a running fsync
  uint64_t delayed_fsync_ = 0;

  // Error state
  int write_errno_ = 0;
  int64_t last_error_log_ms_ = 0;

  // Rewrite
  pid_t rewrite_pid_ = -1;
  std::string rewrite_tmp_;
  std::string rewrite_buf_;  // effects since the fork
  size_t rewrite_mark_ = 0;  // bytes of batch_ already copied to rewrite_buf_
  int64_t rewrite_start_ms_ = 0;
  int64_t last_rewrite_time_sec_ = -1;
  bool last_rewrite_ok_ = true;
  uint64_t rewrites_ = 0;
};

}  // namespace latch
