#include "log/writer.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "common/io_faults.h"

namespace latch::aof {

namespace {

// A rewrite's temporary file: <prefix><pid>.aof in the log's directory.
constexpr const char* kRewriteTmpPrefix = "temp-rewriteaof-bg-";

// Redis waits this long for a running background fsync before writing anyway.
constexpr int64_t kMaxPostponeMs = 2000;

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool WriteAll(int fd, const char* data, size_t len, size_t* written, int* err) {
  *written = 0;
  if (int injected = IoFaults::Check(IoOp::kLogWrite); injected != 0) {
    *err = injected;
    return false;
  }
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

int Fdatasync(int fd) {
  if (int injected = IoFaults::Check(IoOp::kLogFsync); injected != 0) {
    errno = injected;
    return -1;
  }
  return ::fdatasync(fd);
}

// fsync of the directory that holds `path`, so a rename in it is durable.
bool FsyncDirectoryOf(const std::string& path) {
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
  UniqueFd fd(::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return fd && ::fsync(fd.get()) == 0;
}

void DefaultSink(Severity, const std::string& text) {
  std::fprintf(stderr, "%s\n", text.c_str());
}

void (*g_sink)(Severity, const std::string&) = DefaultSink;

// The writer's messages go through a sink the server points at its logger
// (log/ depends on nothing but protocol/ and common/).
template <typename... Args>
void Say(Severity severity, const char* fmt, Args... args) {
  char buf[1024];
  if constexpr (sizeof...(Args) == 0) {
    std::snprintf(buf, sizeof(buf), "%s", fmt);  // a message without arguments
  } else {
    std::snprintf(buf, sizeof(buf), fmt, args...);
  }
  g_sink(severity, buf);
}
template <typename... Args>
void Warn(const char* fmt, Args... args) {
  Say(Severity::kWarning, fmt, args...);
}
template <typename... Args>
void Notice(const char* fmt, Args... args) {
  Say(Severity::kNotice, fmt, args...);
}

}  // namespace

int SyncExisting(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return errno;
  return Fdatasync(fd.get()) == 0 ? 0 : errno;
}

void SetMessageSink(void (*sink)(Severity, const std::string&)) {
  g_sink = sink != nullptr ? sink : DefaultSink;
}

// The owner's events, when there is an owner that listens.
namespace {
class NoEvents final : public WriterEvents {
 public:
  void OnWritten(uint64_t) override {}
  void OnSynced(uint64_t) override {}
  void OnError() override {}
  void OnRecovered() override {}
  void OnNewFile(const std::string&) override {}
  void OnRewriteStarted() override {}
};
NoEvents g_no_events;
}  // namespace

Writer::Writer(std::string path, SyncPolicy policy, BackgroundIo& bio, WriterEvents* events)
    : path_(std::move(path)),
      policy_(policy),
      bio_(bio),
      events_(events != nullptr ? events : &g_no_events) {}

Writer::~Writer() {
  if (rewrite_pid_ > 0) {
    ::kill(rewrite_pid_, SIGKILL);
    ::waitpid(rewrite_pid_, nullptr, 0);
    ::unlink(rewrite_tmp_.c_str());
  }
}

void RemoveRewriteLeftovers(const std::string& log_path) {
  std::string dir = ".";
  if (size_t slash = log_path.rfind('/'); slash != std::string::npos) {
    dir = log_path.substr(0, slash);
  }
  DIR* d = ::opendir(dir.empty() ? "/" : dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind(kRewriteTmpPrefix, 0) != 0 || name.size() < 4 ||
        name.compare(name.size() - 4, 4, ".aof") != 0) {
      continue;
    }
    const std::string path = dir + "/" + name;
    if (::unlink(path.c_str()) == 0) {
      Notice("Removed %s, left by a rewrite that did not finish", path.c_str());
    }
  }
  ::closedir(d);
}

std::optional<std::string> Writer::Open() {
  // One server per data directory (the caller holds its lock): a rewrite's
  // temporary file found now belongs to a run that ended before finishing it.
  RemoveRewriteLeftovers(path_);
  UniqueFd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (!fd) return "Can't open the append-only file '" + path_ + "': " + std::strerror(errno);
  struct stat st {};
  ::fstat(fd.get(), &st);
  current_size_ = base_size_ = static_cast<uint64_t>(st.st_size);
  fd_ = std::move(fd);
  bool created = false;
  if (current_size_ == 0) {
    // A new log: its first line says which file it is (the state record
    // names the log its promises rest on).
    Batch head;
    log_id_ = NewLogId();
    head.LogId(log_id_);
    size_t written;
    int err = 0;
    if (!WriteAll(fd_.get(), head.bytes().data(), head.size(), &written, &err)) {
      return "Can't write the append-only file '" + path_ + "': " + std::strerror(err);
    }
    current_size_ = base_size_ = head.size();
    created = true;
  } else {
    log_id_ = ReadLogIdentity(path_).id;
  }
  // The written mark (written_mark.h): from now on it says how much of this
  // file this process wrote.
  if (auto err = mark_.Open(WrittenMark::PathFor(path_))) {
    Warn("%s: a crash of this run will be treated as one that may have lost writes.", err->c_str());
  }
  mark_.Reset(log_id_, current_size_);
  // What is there at start-up was loaded from disk; make sure it stays.
  if (Fdatasync(fd_.get()) == 0) {
    synced_size_ = current_size_;
  } else {
    sync_failed_ = true;
    Warn("Could not sync the append-only file '%s' at start: %s", path_.c_str(),
         std::strerror(errno));
    events_->OnError();
  }
  if (created) events_->OnNewFile(log_id_);
  return std::nullopt;
}

std::string Writer::write_error() const {
  return std::string("Errors writing to the AOF file: ") + std::strerror(write_errno_);
}

void Writer::SetWriteError(int err, const char* what) {
  bool first = write_errno_ == 0;
  write_errno_ = err;
  events_->OnError();
  int64_t now = SteadyMs();
  // One line per burst of failures, not one per loop iteration.
  if (first || now - last_error_log_ms_ > 30'000) {
    Warn(
        "Error %s the append-only file '%s': %s. Write commands are refused (MISCONF) until "
        "the log can be written again.",
        what, path_.c_str(), std::strerror(err));
    last_error_log_ms_ = now;
  }
}

void Writer::ClearWriteError() {
  if (write_errno_ == 0) return;
  write_errno_ = 0;
  Warn("The append-only file can be written again: write commands are accepted.");
  events_->OnRecovered();
}

bool Writer::WriteBatch() {
  if (batch_.empty()) return true;
  size_t written = 0;
  int err = 0;
  const std::string& bytes = batch_.bytes();
  if (WriteAll(fd_.get(), bytes.data(), bytes.size(), &written, &err)) {
    ++writes_;
    current_size_ += bytes.size();
    appended_base_ += bytes.size();
    written_end_ = appended_base_;
    batch_.Clear();
    rewrite_mark_ = 0;
    unsynced_ = true;
    mark_.Advance(current_size_);
    events_->OnWritten(written_end_);
    return true;
  }
  if (written > 0) {
    // Cut the half-written record back off, so the retry does not leave a
    // fragment in the middle of the log. If that fails too, keep what was
    // written and retry only the rest (what Redis does).
    if (::ftruncate(fd_.get(), static_cast<off_t>(current_size_)) != 0) {
      current_size_ += written;
      appended_base_ += written;
      batch_.Consume(written);
      rewrite_mark_ = rewrite_mark_ > written ? rewrite_mark_ - written : 0;
      unsynced_ = true;
      mark_.Advance(current_size_);
    }
  }
  write_failed_ = true;
  SetWriteError(err, "writing to");
  return false;
}

bool Writer::FsyncNow() {
  auto start = std::chrono::steady_clock::now();
  int rc = Fdatasync(fd_.get());
  int err = errno;
  sync_fsync_micros_ += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                  std::chrono::steady_clock::now() - start)
                                                  .count());
  ++sync_fsyncs_;
  if (rc != 0) {
    sync_failed_ = true;
    if (policy_ == SyncPolicy::kAlways) {
      // After a failed fsync the kernel may have dropped the dirty pages and
      // will not say so again: nothing written since the last good fsync can
      // be promised. Redis exits here, and so does latch.
      fatal_ = std::string("Can't persist the append-only file '") + path_ +
               "' (fsync failed: " + std::strerror(err) +
               ") while appendfsync is always: exiting, since acknowledged writes might not be "
               "on disk. The next start treats this run as a crash.";
    }
    SetWriteError(err, "syncing");
    return false;
  }
  unsynced_ = false;
  synced_size_ = current_size_;
  synced_end_ = written_end_;
  events_->OnSynced(synced_end_);
  return true;
}

void Writer::StartBackgroundFsync(int64_t now_ms) {
  bg_fsync_file_size_ = current_size_;
  bg_fsync_appended_end_ = written_end_;
  bio_.Fsync(fd_.get(), &synced_size_, current_size_);
  last_fsync_ms_ = now_ms;
  unsynced_ = false;
}

void Writer::SimulatePowerLoss() {
  // What the last *completed* fsync covered: a sync still running when the
  // power goes does not count (the pessimistic and realistic case).
  uint64_t keep = synced_size_.load();
  Warn(
      "DEBUG POWERLOSS: cutting the log from %llu to its %llu fsynced bytes and exiting without "
      "a clean shutdown.",
      static_cast<unsigned long long>(current_size_ + batch_.size()),
      static_cast<unsigned long long>(keep));
  if (::ftruncate(fd_.get(), static_cast<off_t>(keep)) != 0 || ::fsync(fd_.get()) != 0) {
    Warn("DEBUG POWERLOSS: cutting the log failed: %s", std::strerror(errno));
  }
  ::_exit(1);
}

void Writer::Flush(int64_t now_ms, bool force) {
  if (!fd_ || !fatal_.empty()) return;
  // A background fsync that finished moves the synced mark.
  if (bg_fsync_file_size_ > 0 && synced_size_.load() >= bg_fsync_file_size_) {
    synced_end_ = std::max(synced_end_, bg_fsync_appended_end_);
    bg_fsync_file_size_ = 0;
    events_->OnSynced(synced_end_);
  }
  if (batch_.empty() && write_ok()) return;
  // Records appended during a rewrite also go to the new log.
  if (rewrite_pid_ > 0 && rewrite_mark_ < batch_.size()) {
    rewrite_buf_.append(batch_.bytes(), rewrite_mark_);
    rewrite_mark_ = batch_.size();
  }
  if (policy_ == SyncPolicy::kEverysec && !force && bio_.pending_fsyncs() > 0) {
    // A write() now would block behind the running fsync of the same file.
    // The replies that report these records wait with them.
    if (postponed_since_ms_ == 0) postponed_since_ms_ = now_ms;
    if (now_ms - postponed_since_ms_ < kMaxPostponeMs) return;
    ++delayed_fsync_;
    Notice(
        "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer "
        "without waiting for fsync to complete, this may slow down latch.");
  }
  postponed_since_ms_ = 0;
  if (!WriteBatch()) return;
  if (policy_ == SyncPolicy::kAlways) {
    // Group commit: one fdatasync covers every write of this iteration.
    FsyncNow();
  } else if (policy_ == SyncPolicy::kEverysec && now_ms - last_fsync_ms_ >= 1000 &&
             bio_.pending_fsyncs() == 0) {
    StartBackgroundFsync(now_ms);
  }
}

void Writer::Cron(int64_t now_ms) {
  if (!fd_ || !fatal_.empty()) return;
  if (rewrite_pid_ > 0) {
    int status = 0;
    if (::waitpid(rewrite_pid_, &status, WNOHANG) == rewrite_pid_) {
      FinishRewrite(WIFEXITED(status) && WEXITSTATUS(status) == 0, now_ms);
    }
  }
  // A failed background fsync makes the log unsafe just like a failed write.
  if (int err = bio_.TakeFsyncError(); err != 0) {
    sync_failed_ = true;
    bg_fsync_file_size_ = 0;
    SetWriteError(err, "syncing");
  }
  if (!write_ok()) {
    // Retry once per cron run: the disk may have space again. Recovery
    // syncs on the loop: write commands are being refused meanwhile anyway.
    Flush(now_ms, true);
    if (fatal_.empty() && batch_.empty() && FsyncNow()) ClearWriteError();
    return;
  }
  // A write postponed behind a slow fsync, while no client wakes the loop.
  if (!batch_.empty()) Flush(now_ms);
  if (policy_ == SyncPolicy::kEverysec && unsynced_ && now_ms - last_fsync_ms_ >= 1000 &&
      bio_.pending_fsyncs() == 0) {
    StartBackgroundFsync(now_ms);
  }
  // A rewrite asked for inside a transaction starts once it is over.
  if (pending_snapshot_ && rewrite_pid_ <= 0 && !batch_.in_transaction()) {
    if (auto err = StartRewriteNow(now_ms)) {
      Warn("Can't start the deferred rewrite of the append-only file: %s", err->c_str());
      last_rewrite_ok_ = false;
    }
  }
}

int64_t Writer::current_rewrite_time_sec(int64_t now_ms) const {
  return rewrite_pid_ > 0 ? (now_ms - rewrite_start_ms_) / 1000 : -1;
}

std::optional<std::string> Writer::Rewrite(SnapshotFn snapshot, int64_t now_ms) {
  if (!fd_) return "the append-only log is disabled (appendonly no)";
  if (rewrite_pid_ > 0 || pending_snapshot_) {
    return "Background append only file rewriting already in progress";
  }
  pending_snapshot_ = std::move(snapshot);
  // Inside a transaction (BGREWRITEAOF within MULTI … EXEC): the snapshot
  // would hold the transaction's first effects and the rewrite buffer the
  // rest after a lone EXEC. Wait for the EXEC: the next Cron starts it.
  if (batch_.in_transaction()) return std::nullopt;
  return StartRewriteNow(now_ms);
}

std::optional<std::string> Writer::StartRewriteNow(int64_t now_ms) {
  SnapshotFn snapshot = std::move(pending_snapshot_);
  pending_snapshot_ = nullptr;
  // Start from an empty batch: everything applied so far is in the snapshot,
  // everything after goes to the rewrite buffer.
  Flush(now_ms, true);
  if (!write_ok() || !batch_.empty()) return "the log cannot be written: " + write_error();
  rewrite_tmp_ = kRewriteTmpPrefix + std::to_string(::getpid()) + ".aof";
  rewrite_id_ = NewLogId();
  if (size_t slash = path_.rfind('/'); slash != std::string::npos) {
    rewrite_tmp_ = path_.substr(0, slash + 1) + rewrite_tmp_;
  }
  auto start = std::chrono::steady_clock::now();
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return std::string("Can't fork for the rewrite: ") + std::strerror(errno);
  if (pid == 0) {
    // The child: write the snapshot it inherited and leave without running
    // any destructor of the parent's objects. It dies with the server (a
    // kill -9 of the server must not leave it running: its snapshot is of no
    // use to anyone, and the next start cleans its file up), and keeps none
    // of the server's descriptors: not the data directory's lock
    // (latch.lock), which would refuse the next start while it ran, nor the
    // listening sockets. stderr stays.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the server died before prctl
    if (::close_range(3, ~0U, 0) != 0) {
      for (int fd = 3; fd < 65536; ++fd) ::close(fd);
    }
    UniqueFd out(::open(rewrite_tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!out) ::_exit(1);
    Batch buf;
    buf.LogId(rewrite_id_);  // the new file is another log
    bool ok = true;
    auto drain = [&] {
      size_t written;
      int err;
      ok = ok && WriteAll(out.get(), buf.bytes().data(), buf.size(), &written, &err);
      buf.Clear();
      return ok;
    };
    ok = snapshot(buf, drain) && drain();
    ok = ok && ::fdatasync(out.get()) == 0 && ::close(out.release()) == 0;
    ::_exit(ok ? 0 : 1);
  }
  auto fork_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count();
  rewrite_pid_ = pid;
  rewrite_buf_.clear();
  rewrite_mark_ = 0;
  rewrite_start_ms_ = now_ms;
  events_->OnRewriteStarted();
  Notice("Background append only file rewriting started by pid %d (fork took %lld us)",
         static_cast<int>(pid), static_cast<long long>(fork_us));
  return std::nullopt;
}

void Writer::FinishRewrite(bool child_ok, int64_t now_ms) {
  auto fail = [&](const std::string& why) {
    rewrite_pid_ = -1;
    ::unlink(rewrite_tmp_.c_str());
    rewrite_buf_.clear();
    rewrite_buf_.shrink_to_fit();
    last_rewrite_ok_ = false;
    Warn("Background AOF rewrite failed: %s. The old log is still in use, untouched.", why.c_str());
  };
  if (!child_ok) return fail("the rewriting child did not complete (see above)");

  // Bring the new file up to date with everything applied since the fork.
  // rewrite_pid_ is still set here, so Flush() also copies what it writes
  // into the rewrite buffer.
  Flush(now_ms, true);
  if (rewrite_mark_ < batch_.size()) {
    rewrite_buf_.append(batch_.bytes(), rewrite_mark_);
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
  if (Fdatasync(tmp.get()) != 0) {
    return fail(std::string("can't sync the new file: ") + std::strerror(errno));
  }
  if (::rename(rewrite_tmp_.c_str(), path_.c_str()) != 0) {
    return fail(std::string("can't rename the new file over the log: ") + std::strerror(errno));
  }
  if (!FsyncDirectoryOf(path_)) {
    // The switch may not survive a power loss (the old file could come
    // back): this run can no longer promise that its log is on disk.
    sync_failed_ = true;
    Warn("Could not fsync the directory of '%s' after the rewrite: %s", path_.c_str(),
         std::strerror(errno));
    events_->OnError();
  }
  // An fsync still queued on the old file must not report its size as the
  // new file's synced size.
  bio_.Drain();
  bg_fsync_file_size_ = 0;
  // The new file is the log now, synced: whatever was still in the batch is in it.
  log_id_ = rewrite_id_;
  appended_base_ += batch_.size();
  batch_.Clear();
  rewrite_mark_ = 0;
  written_end_ = synced_end_ = appended_base_;
  bio_.Close(std::move(fd_));  // after any fsync still queued on it
  fd_ = std::move(tmp);
  struct stat st {};
  ::fstat(fd_.get(), &st);
  current_size_ = base_size_ = static_cast<uint64_t>(st.st_size);
  synced_size_ = current_size_;
  mark_.Reset(log_id_, current_size_);
  unsynced_ = false;
  ClearWriteError();
  events_->OnNewFile(log_id_);
  events_->OnWritten(written_end_);
  events_->OnSynced(synced_end_);
  rewrite_buf_.clear();
  rewrite_buf_.shrink_to_fit();
  last_rewrite_ok_ = true;
  last_rewrite_time_sec_ = (now_ms - rewrite_start_ms_) / 1000;
  ++rewrites_;
  Notice("Background AOF rewrite finished successfully: %llu bytes",
         static_cast<unsigned long long>(current_size_));
}

bool Writer::Shutdown() {
  if (!fd_) return true;
  if (rewrite_pid_ > 0) {
    Notice("Killing the running rewrite (pid %d) before shutdown", static_cast<int>(rewrite_pid_));
    ::kill(rewrite_pid_, SIGKILL);
    ::waitpid(rewrite_pid_, nullptr, 0);
    ::unlink(rewrite_tmp_.c_str());
    rewrite_pid_ = -1;
  }
  bio_.Drain();
  if (int err = bio_.TakeFsyncError(); err != 0) {
    sync_failed_ = true;
    SetWriteError(err, "syncing");
  }
  if (fatal_.empty()) Flush(0, true);
  bool complete = batch_.empty();
  if (!complete) {
    Warn("%llu bytes of records could not be written to the log at shutdown: %s",
         static_cast<unsigned long long>(batch_.size()), write_error().c_str());
  }
  bool synced = fatal_.empty() && FsyncNow();
  fd_.reset();
  bool clean = complete && synced && !sync_failed_;
  if (clean) {
    Notice("The append-only file was synced and closed.");
  } else {
    Warn("The append-only file was closed, but not every record is known to be on disk%s.",
         sync_failed_ ? " (an fsync failed during this run)" : "");
  }
  return clean;
}

}  // namespace latch::aof
