// CONFIG SET appendonly: the append-only log turned on or off while the
// server runs, as Redis allows, without weakening what the state record
// (lease_policy.h) vouches for.
//
//   yes -> no   every record so far is written and fsynced, the log is
//               closed, then the record says "appendonly no": a restart from
//               here on quarantines (the locks granted meanwhile are not
//               logged), as one after a run started with appendonly no.
//   no -> yes   a file left by an earlier run is moved aside (it does not
//               hold this dataset), a new log is created, and the whole
//               dataset is written into it at once, as a rewrite would, and
//               fsynced, before the record names that log: a log the record
//               vouches for always holds every live lock. The command takes
//               as long as writing the dataset takes (Redis rewrites in the
//               background instead, and its log lags meanwhile).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <unistd.h>

#include "server/log.h"
#include "server/persistence.h"
#include "server/server.h"

namespace latch {

std::optional<std::string> Server::SwitchAppendOnly() {
  if (config_.appendonly && gate_.loading()) return "the server is still loading";
  std::optional<std::string> err = persistence_->SwitchAppendOnly(config_.appendonly, Now());
  gate_.set_log(persistence_->log());
  return err;
}

std::optional<std::string> Persistence::SwitchAppendOnly(bool on, const TimeSnapshot& now) {
  const int64_t now_ms = now.mono;
  if (!on) {
    if (log_ == nullptr) return std::nullopt;
    log_->Shutdown();
    store_.set_log(nullptr);
    log_.reset();
    policy_->OnLogChanged(now_ms);
    log::Notice(
        "CONFIG SET appendonly no: the append-only log is closed; a restart from now on "
        "quarantines until every lease granted has ended.");
    return std::nullopt;
  }
  if (log_ != nullptr) return std::nullopt;
  // A file from an earlier run: kept, under another name.
  if (::access(config_.appendfilename.c_str(), F_OK) == 0) {
    std::string aside = config_.appendfilename + ".bak-" + std::to_string(std::time(nullptr));
    if (::rename(config_.appendfilename.c_str(), aside.c_str()) != 0) {
      return "can't move the old append-only file aside: " + std::string(std::strerror(errno));
    }
    log::Warning("CONFIG SET appendonly yes: the old append-only file is now {}", aside);
  }
  auto writer = std::make_unique<aof::Writer>(config_.appendfilename, config_.appendfsync, *bio_);
  if (auto err = writer->Open()) return *err;
  aof::Writer* w = writer.get();
  bool ok = store_.WriteSnapshot(
      w->batch(),
      [w, now_ms]() {
        w->Flush(now_ms, /*force=*/true);
        return w->write_ok();
      },
      now);
  w->Flush(now_ms, /*force=*/true);
  if (!ok || !w->write_ok() || !w->Shutdown()) {
    return "can't write the dataset into the new append-only file: " + w->write_error();
  }
  // Shutdown() closed it, synced: open it again for appending, with this
  // component hearing its events as it does the log opened at start-up.
  aof::WriterEvents* events = this;
  writer =
      std::make_unique<aof::Writer>(config_.appendfilename, config_.appendfsync, *bio_, events);
  if (auto err = writer->Open()) return *err;
  log_ = std::move(writer);
  store_.set_log(&log_->batch());
  policy_->OnLogChanged(now_ms);
  log::Notice("CONFIG SET appendonly yes: the dataset ({} keys) is in the new append-only file {}",
              store_.total_size(), config_.appendfilename);
  return std::nullopt;
}

}  // namespace latch
