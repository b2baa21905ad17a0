#include "server/quarantine.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "protocol/text.h"
#include "server/log.h"
#include "common/unique_fd.h"

namespace latch {

namespace {

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string ReadBootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id.empty() ? "unknown" : id;
}

bool WriteFileDurably(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) return false;
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd.get(), content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return false;
  fd.reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) return false;
  UniqueFd dir(::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return dir && ::fsync(dir.get()) == 0;
}

}  // namespace

std::string RunRecord::Serialize() const {
  std::string body = "latch-state 1\n";
  body += std::string("status ") + (clean ? "clean" : "running") + "\n";
  body += std::string("appendonly ") + (appendonly ? "yes" : "no") + "\n";
  body += std::string("fsync-always ") + (fsync_always ? "yes" : "no") + "\n";
  body += "boot-id " + boot_id + "\n";
  body += "lease-bound " + (lease_bound_ms ? std::to_string(*lease_bound_ms) : "none") + "\n";
  body += "max-lock-ttl " + std::to_string(max_lock_ttl_ms) + "\n";
  return body + "checksum " + Hex64(XXH64(body.data(), body.size(), 0)) + "\n";
}

std::optional<RunRecord> RunRecord::Parse(const std::string& text) {
  size_t at = text.rfind("checksum ");
  if (at == std::string::npos) return std::nullopt;
  std::string body = text.substr(0, at);
  std::string sum = text.substr(at + 9);
  while (!sum.empty() && (sum.back() == '\n' || sum.back() == '\r')) sum.pop_back();
  if (sum != Hex64(XXH64(body.data(), body.size(), 0))) return std::nullopt;

  RunRecord r;
  int seen = 0;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    size_t sp = line.find(' ');
    if (sp == std::string::npos) return std::nullopt;
    std::string key = line.substr(0, sp), value = line.substr(sp + 1);
    auto yes_no = [&](bool* out) {
      if (value != "yes" && value != "no") return false;
      *out = value == "yes";
      return true;
    };
    bool ok = true;
    if (key == "latch-state") {
      ok = value == "1";
    } else if (key == "status") {
      ok = value == "clean" || value == "running";
      r.clean = value == "clean";
    } else if (key == "appendonly") {
      ok = yes_no(&r.appendonly);
    } else if (key == "fsync-always") {
      ok = yes_no(&r.fsync_always);
    } else if (key == "boot-id") {
      r.boot_id = value;
    } else if (key == "lease-bound") {
      if (value != "none") {
        auto v = ParseInt64(value);
        ok = v.has_value();
        if (ok) r.lease_bound_ms = *v;
      }
    } else if (key == "max-lock-ttl") {
      auto v = ParseInt64(value);
      ok = v && *v >= 0;
      if (ok) r.max_lock_ttl_ms = *v;
    } else {
      ok = false;
    }
    if (!ok) return std::nullopt;
    ++seen;
  }
  if (seen != 7) return std::nullopt;
  return r;
}

void Quarantine::ReadPrevious(bool log_exists) {
  log_existed_ = log_exists;
  boot_id_ = ReadBootId();
  std::ifstream in(kStateFile);
  if (!in) return;
  state_existed_ = true;
  std::stringstream text;
  text << in.rdbuf();
  previous_ = RunRecord::Parse(text.str());
}

RunRecord Quarantine::Current(bool clean, std::optional<int64_t> own_bound) const {
  RunRecord r;
  r.clean = clean;
  r.appendonly = config_.appendonly;
  r.fsync_always = fsync_always_;
  r.boot_id = boot_id_;
  r.max_lock_ttl_ms = max_lock_ttl_seen_;
  r.lease_bound_ms = carried_bound_;
  if (own_bound && (!r.lease_bound_ms || *own_bound > *r.lease_bound_ms)) {
    r.lease_bound_ms = own_bound;
  }
  return r;
}

void Quarantine::WriteRecord(const RunRecord& r) {
  if (!WriteFileDurably(kStateFile, r.Serialize())) {
    // Without a durable record the next start treats this run as unsafe and
    // quarantines: the safe direction.
    log::Warning("Could not write the quarantine state file {}: {}", kStateFile,
                 std::strerror(errno));
  }
}

void Quarantine::Start(int64_t now) {
  fsync_always_ = config_.appendonly && config_.appendfsync == FsyncPolicy::kAlways;
  int64_t prev_ttl = previous_ ? previous_->max_lock_ttl_ms : 0;
  max_lock_ttl_seen_ = std::max(config_.max_lock_ttl, prev_ttl);
  int64_t base = config_.quarantine_ms >= 0 ? config_.quarantine_ms : max_lock_ttl_seen_;

  // Decide whether the previous run may have forgotten acknowledged locks.
  bool quarantine = false;
  bool may_shorten = previous_.has_value();
  std::string why;
  switch (config_.quarantine) {
    case QuarantineMode::kNever:
      why = "quarantine never";
      break;
    case QuarantineMode::kAlways:
      quarantine = true;
      may_shorten = false;
      why = "quarantine always";
      break;
    case QuarantineMode::kAuto:
      if (!state_existed_ && !log_existed_ && config_.appendonly) {
        why = "a fresh data directory: no lock was ever granted from it";
      } else if (!state_existed_) {
        quarantine = true;
        why = config_.appendonly ? "the log exists but the state record latch.state is missing"
                                 : "appendonly no, and no record of an earlier run";
      } else if (!previous_) {
        quarantine = true;
        why = "the state record latch.state is damaged";
      } else if (!config_.appendonly) {
        quarantine = true;
        why = "appendonly no: locks granted before the restart were not logged";
      } else if (!previous_->appendonly) {
        quarantine = true;
        why = "the previous run did not log its locks (appendonly no)";
      } else if (!log_existed_) {
        quarantine = true;
        why = "the log of the previous run is missing";
      } else if (previous_->clean) {
        why = "the previous run shut down cleanly and its log was fully synced";
      } else if (previous_->fsync_always) {
        why =
            "the previous run crashed, but with appendfsync always every acknowledged write "
            "was on disk, and the log replayed without loss";
      } else {
        quarantine = true;
        why =
            "the previous run crashed with appendfsync everysec or no: acknowledged locks may "
            "have been lost";
      }
      break;
  }

  int64_t remaining = quarantine ? base : 0;
  if (quarantine && may_shorten) {
    // Shorten by the time provably elapsed since the previous run's last grant.
    const RunRecord& p = *previous_;
    if (!p.lease_bound_ms) {
      remaining = 0;
      why += "; but it granted no lock that can still be alive";
    } else if (p.boot_id == boot_id_) {
      remaining = std::clamp(*p.lease_bound_ms + base - now, int64_t{0}, base);
    } else {
      // A reboot since: the grant happened before this boot began.
      remaining = std::clamp(base - now, int64_t{0}, base);
    }
    if (quarantine && remaining == 0 && p.lease_bound_ms) {
      why += "; but every lock it could have granted has expired since";
    }
  }
  quarantine = remaining > 0;
  if (quarantine) carried_bound_ = now + remaining - base;
  duration_ms_ = remaining;
  reason_ = why;
  WriteRecord(Current(false, std::nullopt));

  if (quarantine) {
    active_ = true;
    end_ms_ = now + remaining;
    log::Warning(
        "Restart quarantine: {}. latch grants, renews and extends no lock for {} ms "
        "(until every lock it may have forgotten has expired); reads and releases "
        "are served.",
        reason_, remaining);
  } else {
    log::Notice("No restart quarantine: {}.", reason_);
  }
}

std::string Quarantine::RefusalText(int64_t now) const {
  return "QUARANTINE latch restarted and may have forgotten locks it granted (" + reason_ +
         "). It grants, renews and extends no lock for another " +
         std::to_string(remaining_ms(now)) +
         " ms; reads and releases (GET, DEL, DELIFEQ, DELEX) are allowed.";
}

void Quarantine::End(int64_t now, const char* why) {
  if (!active_) return;
  active_ = false;
  end_ms_ = now;
  log::Notice("Restart quarantine over: {}. Locks are granted again.", why);
}

void Quarantine::RefreshBoundNow(int64_t now) {
  // Let a background refresh finish first: it must not land after this one.
  bio_.Drain();
  if (now < durable_bound_.load(std::memory_order_acquire)) return;
  int64_t bound = now + kBoundAheadMs;
  WriteRecord(Current(false, bound));
  durable_bound_.store(bound, std::memory_order_release);
  granted_since_refresh_ = false;
}

void Quarantine::Cron(int64_t now) {
  if (active_ && now >= end_ms_) End(now, "every lock it may have forgotten has expired");
  // Keep the recorded bound ahead of the grants, off the loop.
  if (!granted_since_refresh_) return;
  int64_t ahead = std::max(durable_bound_.load(std::memory_order_acquire), queued_bound_);
  if (ahead - now > kRefreshBeforeMs) return;
  int64_t bound = now + kBoundAheadMs;
  std::string text = Current(false, bound).Serialize();
  queued_bound_ = bound;
  granted_since_refresh_ = false;
  bio_.Run([this, text = std::move(text), bound] {
    if (WriteFileDurably(kStateFile, text)) {
      durable_bound_.store(bound, std::memory_order_release);
    }
  });
}

void Quarantine::OnConfigChange(int64_t now) {
  bool changed = false;
  if (fsync_always_ && !(config_.appendonly && config_.appendfsync == FsyncPolicy::kAlways)) {
    fsync_always_ = false;  // the run is no longer "always throughout"
    changed = true;
  }
  if (config_.max_lock_ttl > max_lock_ttl_seen_) {
    max_lock_ttl_seen_ = config_.max_lock_ttl;
    changed = true;
  }
  if (changed) {
    // Durable before CONFIG SET returns, so no write is acknowledged under a
    // weaker policy than the record says.
    bio_.Drain();
    int64_t bound = durable_bound_.load();
    WriteRecord(Current(false, bound == INT64_MIN ? std::nullopt : std::optional<int64_t>(bound)));
  }
  if (active_ && config_.quarantine == QuarantineMode::kNever) {
    End(now, "ended early by CONFIG SET quarantine never (an operator's choice)");
  }
}

void Quarantine::CleanShutdown() {
  bio_.Drain();
  int64_t bound = durable_bound_.load();
  WriteRecord(Current(true, bound == INT64_MIN ? std::nullopt : std::optional<int64_t>(bound)));
}

}  // namespace latch
