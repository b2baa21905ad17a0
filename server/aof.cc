#include "server/aof.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "server/effects.h"
#include "server/keyspace.h"
#include "server/log.h"

namespace latch {

namespace {

// Redis waits this long for a running background fsync before writing anyway.
constexpr int64_t kMaxPostponeMs = 2000;

bool WriteAll(int fd, const char* data, size_t len, size_t* written, int* err) {
  *written = 0;
  while (*written < len) {
    ssize_t n = ::write(fd, data + *written, len - *written);
    if (n < 0) {
      if (errno == EINTR) continue;
      *err = errno;
      return false;
    }
    if (n == 0) {
      *err = ENOSPC;
      return false;
    }
    *written += static_cast<size_t>(n);
  }
  return true;
}

// fsync of the directory that holds `path`, so a rename in it is durable.
bool FsyncDirectoryOf(const std::string& path) {
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
  UniqueFd fd(::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return fd && ::fsync(fd.get()) == 0;
}

}  // namespace

Aof::Aof(const Config& config, Keyspace& db, BackgroundIo& bio)
    : config_(config), db_(db), bio_(bio) {}

Aof::~Aof() {
  if (rewrite_pid_ > 0) {
    ::kill(rewrite_pid_, SIGKILL);
    ::waitpid(rewrite_pid_, nullptr, 0);
    ::unlink(rewrite_tmp_.c_str());
  }
}

std::optional<std::string> Aof::Open() {
  UniqueFd fd(::open(path().c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) {
    return "Can't open the append-only file '" + path() + "': " + std::strerror(errno);
  }
  struct stat st {};
  ::fstat(fd.get(), &st);
  current_size_ = base_size_ = static_cast<uint64_t>(st.st_size);
  fd_ = std::move(fd);
  // What is there at start-up was loaded from disk; make sure it stays.
  if (::fdatasync(fd_.get()) == 0) synced_size_ = current_size_;
  return std::nullopt;
}

std::string Aof::write_error() const {
  return std::string("Errors writing to the AOF file: ") + std::strerror(write_errno_);
}

void Aof::SetWriteError(int err, const char* what) {
  bool first = write_errno_ == 0;
  write_errno_ = err;
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
                 .count();
  // One line per burst of failures, not one per loop iteration.
  if (first || now - last_error_log_ms_ > 30'000) {
    log::Warning(
        "Error {} the append-only file '{}': {}. Write commands are refused (MISCONF) "
        "until the log can be written again.",
        what, path(), std::strerror(err));
    last_error_log_ms_ = now;
  }
}

void Aof::ClearWriteError() {
  if (write_errno_ == 0) return;
  write_errno_ = 0;
  log::Warning("The append-only file can be written again: write commands are accepted.");
}

bool Aof::WriteBatch() {
  if (batch_.empty()) return true;
  size_t written = 0;
  int err = 0;
  if (WriteAll(fd_.get(), batch_.data(), batch_.size(), &written, &err)) {
    ++writes_;
    current_size_ += batch_.size();
    appended_base_ += batch_.size();
    batch_.clear();
    rewrite_mark_ = 0;
    unsynced_ = true;
    return true;
  }
  if (written > 0) {
    // Cut the half-written record back off, so the retry does not leave a
    // fragment in the middle of the log. If that fails too, keep what was
    // written and retry only the rest (what Redis does).
    if (::ftruncate(fd_.get(), static_cast<off_t>(current_size_)) != 0) {
      current_size_ += written;
      appended_base_ += written;
      batch_.erase(0, written);
      rewrite_mark_ = rewrite_mark_ > written ? rewrite_mark_ - written : 0;
      unsynced_ = true;
    }
  }
  SetWriteError(err, "writing to");
  return false;
}

bool Aof::FsyncNow() {
  auto start = std::chrono::steady_clock::now();
  int rc = ::fdatasync(fd_.get());
  int err = errno;
  sync_fsync_micros_ += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                  std::chrono::steady_clock::now() - start)
                                                  .count());
  ++sync_fsyncs_;
  if (rc != 0) {
    SetWriteError(err, "syncing");
    return false;
  }
  unsynced_ = false;
  synced_size_ = current_size_;
  return true;
}

void Aof::SimulatePowerLoss() {
  bio_.Drain();
  uint64_t keep = synced_size_.load();
  log::Warning(
      "DEBUG POWERLOSS: cutting the log from {} to its {} fsynced bytes and exiting "
      "without a clean shutdown.",
      current_size_ + batch_.size(), keep);
  if (::ftruncate(fd_.get(), static_cast<off_t>(keep)) != 0 || ::fsync(fd_.get()) != 0) {
    log::Warning("DEBUG POWERLOSS: cutting the log failed: {}", std::strerror(errno));
  }
  ::_exit(1);
}

void Aof::Flush(int64_t now_ms, bool force) {
  if (!fd_) return;
  if (batch_.empty() && write_ok()) return;
  // Effects that arrive during a rewrite also go to the new log.
  if (rewrite_pid_ > 0 && rewrite_mark_ < batch_.size()) {
    rewrite_buf_.append(batch_, rewrite_mark_);
    rewrite_mark_ = batch_.size();
  }
  const FsyncPolicy policy = config_.appendfsync;
  if (policy == FsyncPolicy::kEverysec && !force && bio_.pending_fsyncs() > 0) {
    // A write() now would block behind the running fsync of the same file.
    if (postponed_since_ms_ == 0) postponed_since_ms_ = now_ms;
    if (now_ms - postponed_since_ms_ < kMaxPostponeMs) return;
    ++delayed_fsync_;
    log::Notice(
        "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer "
        "without waiting for fsync to complete, this may slow down latch.");
  }
  postponed_since_ms_ = 0;
  if (!WriteBatch()) return;
  if (policy == FsyncPolicy::kAlways) {
    // Group commit: one fdatasync covers every write of this iteration.
    if (!FsyncNow()) return;
  } else if (policy == FsyncPolicy::kEverysec && now_ms - last_fsync_ms_ >= 1000 &&
             bio_.pending_fsyncs() == 0) {
    bio_.Fsync(fd_.get(), &synced_size_, current_size_);
    last_fsync_ms_ = now_ms;
    unsynced_ = false;
  }
  durable_end_ = appended_end();
}

void Aof::Cron(int64_t now_ms, TimeSnapshot now) {
  if (!fd_) return;
  if (rewrite_pid_ > 0) {
    int status = 0;
    if (::waitpid(rewrite_pid_, &status, WNOHANG) == rewrite_pid_) {
      FinishRewrite(WIFEXITED(status) && WEXITSTATUS(status) == 0, now_ms);
    }
  }
  // A failed background fsync makes the log unsafe just like a failed write.
  if (int err = bio_.TakeFsyncError(); err != 0) SetWriteError(err, "syncing");
  if (!write_ok()) {
    // Retry once per cron run: the disk may have space again. Recovery
    // syncs on the loop: write commands are being refused meanwhile anyway.
    Flush(now_ms, true);
    if (batch_.empty() && FsyncNow()) {
      durable_end_ = appended_end();
      ClearWriteError();
    }
    return;
  }
  // A write postponed behind a slow fsync, while no client wakes the loop.
  if (!batch_.empty()) Flush(now_ms);
  if (config_.appendfsync == FsyncPolicy::kEverysec && unsynced_ &&
      now_ms - last_fsync_ms_ >= 1000 && bio_.pending_fsyncs() == 0) {
    bio_.Fsync(fd_.get(), &synced_size_, current_size_);
    last_fsync_ms_ = now_ms;
    unsynced_ = false;
  }
  // Automatic compaction once the log has grown enough since the last one.
  if (rewrite_pid_ <= 0 && config_.auto_aof_rewrite_percentage > 0 &&
      current_size_ > static_cast<uint64_t>(config_.auto_aof_rewrite_min_size)) {
    uint64_t base = base_size_ > 0 ? base_size_ : 1;
    uint64_t growth = (current_size_ - std::min(current_size_, base)) * 100 / base;
    if (growth >= static_cast<uint64_t>(config_.auto_aof_rewrite_percentage)) {
      log::Notice("Starting automatic rewriting of AOF on {}% growth", growth);
      if (auto err = Rewrite(now)) log::Warning("Can't rewrite the append-only file: {}", *err);
    }
  }
}

int64_t Aof::current_rewrite_time_sec(int64_t now_ms) const {
  return rewrite_pid_ > 0 ? (now_ms - rewrite_start_ms_) / 1000 : -1;
}

std::optional<std::string> Aof::Rewrite(TimeSnapshot now) {
  if (!fd_) return "the append-only log is disabled (appendonly no)";
  if (rewrite_pid_ > 0) return "Background append only file rewriting already in progress";
  // Start from an empty batch: everything applied so far is in the snapshot,
  // everything after goes to the rewrite buffer.
  Flush(now.mono, true);
  if (!write_ok() || !batch_.empty()) return "the log cannot be written: " + write_error();
  rewrite_tmp_ = "temp-rewriteaof-bg-" + std::to_string(::getpid()) + ".aof";
  if (size_t slash = path().rfind('/'); slash != std::string::npos) {
    rewrite_tmp_ = path().substr(0, slash + 1) + rewrite_tmp_;
  }
  auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid < 0) return std::string("Can't fork for the rewrite: ") + std::strerror(errno);
  if (pid == 0) {
    // The child: write the snapshot it inherited and leave without running
    // any destructor of the parent's objects.
    ::_exit(WriteSnapshot(db_, now, rewrite_tmp_) ? 0 : 1);
  }
  auto fork_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count();
  rewrite_pid_ = pid;
  rewrite_buf_.clear();
  rewrite_mark_ = 0;
  rewrite_start_ms_ = now.mono;
  log::Notice("Background append only file rewriting started by pid {} (fork took {} us)", pid,
              fork_us);
  return std::nullopt;
}

bool Aof::WriteSnapshot(const Keyspace& db, TimeSnapshot now, const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) return false;
  std::string buf;
  buf.reserve(1 << 20);
  bool ok = true;
  auto drain = [&] {
    size_t written;
    int err;
    ok = ok && WriteAll(fd.get(), buf.data(), buf.size(), &written, &err);
    buf.clear();
  };
  db.ForEach([&](const Keyspace::Entry& e) {
    if (!ok) return;
    if (e.has_deadline() && now.mono > e.deadline) return;  // expired: leave it out
    AppendSetRecord(buf, e.key(), e.value(), e.has_deadline() ? now.WallFromMono(e.deadline) : 0);
    if (buf.size() >= (1 << 20)) drain();
  });
  drain();
  return ok && ::fdatasync(fd.get()) == 0 && ::close(fd.release()) == 0;
}

void Aof::FinishRewrite(bool child_ok, int64_t now_ms) {
  auto fail = [&](const std::string& why) {
    rewrite_pid_ = -1;
    ::unlink(rewrite_tmp_.c_str());
    rewrite_buf_.clear();
    rewrite_buf_.shrink_to_fit();
    last_rewrite_ok_ = false;
    log::Warning("Background AOF rewrite failed: {}. The old log is still in use, untouched.", why);
  };
  if (!child_ok) return fail("the rewriting child did not complete (see above)");

  // Bring the new file up to date with everything applied since the fork.
  // rewrite_pid_ is still set here, so Flush() also copies what it writes
  // into the rewrite buffer.
  Flush(now_ms, true);
  if (rewrite_mark_ < batch_.size()) {
    rewrite_buf_.append(batch_, rewrite_mark_);
    rewrite_mark_ = batch_.size();
  }
  rewrite_pid_ = -1;
  UniqueFd tmp(::open(rewrite_tmp_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!tmp) return fail(std::string("can't open the new file: ") + std::strerror(errno));
  size_t written;
  int err = 0;
  if (!WriteAll(tmp.get(), rewrite_buf_.data(), rewrite_buf_.size(), &written, &err)) {
    return fail(std::string("can't append the changes made meanwhile: ") + std::strerror(err));
  }
  if (::fdatasync(tmp.get()) != 0) {
    return fail(std::string("can't sync the new file: ") + std::strerror(errno));
  }
  if (::rename(rewrite_tmp_.c_str(), path().c_str()) != 0) {
    return fail(std::string("can't rename the new file over the log: ") + std::strerror(errno));
  }
  if (!FsyncDirectoryOf(path())) {
    log::Warning("Could not fsync the directory of '{}' after the rewrite: {}", path(),
                 std::strerror(errno));
  }
  // An fsync still queued on the old file must not report its size as the
  // new file's synced size.
  bio_.Drain();
  // The new file is the log now. Whatever was still in the batch is in it.
  appended_base_ += batch_.size();
  batch_.clear();
  rewrite_mark_ = 0;
  durable_end_ = appended_end();
  bio_.Close(std::move(fd_));  // after any fsync still queued on it
  fd_ = std::move(tmp);
  struct stat st {};
  ::fstat(fd_.get(), &st);
  current_size_ = base_size_ = static_cast<uint64_t>(st.st_size);
  synced_size_ = current_size_;
  unsynced_ = false;
  ClearWriteError();
  rewrite_buf_.clear();
  rewrite_buf_.shrink_to_fit();
  last_rewrite_ok_ = true;
  last_rewrite_time_sec_ = (now_ms - rewrite_start_ms_) / 1000;
  ++rewrites_;
  log::Notice("Background AOF rewrite finished successfully: {} bytes", current_size_);
}

void Aof::Shutdown() {
  if (!fd_) return;
  if (rewrite_pid_ > 0) {
    log::Notice("Killing the running rewrite (pid {}) before shutdown", rewrite_pid_);
    ::kill(rewrite_pid_, SIGKILL);
    ::waitpid(rewrite_pid_, nullptr, 0);
    ::unlink(rewrite_tmp_.c_str());
    rewrite_pid_ = -1;
  }
  bio_.Drain();
  Flush(0, true);
  if (!batch_.empty()) {
    log::Warning("{} bytes of effects could not be written to the log at shutdown: {}",
                 batch_.size(), write_error());
  }
  if (FsyncNow()) durable_end_ = appended_end();
  fd_.reset();
  log::Notice("The append-only file was synced and closed.");
}

}  // namespace latch
