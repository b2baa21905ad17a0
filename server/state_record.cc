#include "server/state_record.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <sstream>

#include "common/io_faults.h"
#include "common/unique_fd.h"
#include "protocol/text.h"

namespace latch {

namespace {

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string OptMs(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : std::string("none");
}

}  // namespace

std::string StateRecord::Serialize() const {
  std::string body = "latch-state 3\n";
  body += std::string("status ") + (clean ? "clean" : "running") + "\n";
  body += "clock " + clock_id + "\n";
  body += "written-at " + std::to_string(written_at) + "\n";
  body += "horizon " + OptMs(horizon) + "\n";
  body += "at-risk " + OptMs(at_risk) + "\n";
  body += "forgotten-until " + OptMs(forgotten_until) + "\n";
  body += "ttl-cap " + OptMs(ttl_cap) + "\n";
  body += std::string("appendonly ") + (appendonly ? "yes" : "no") + "\n";
  body += std::string("fsync-always ") + (fsync_always ? "yes" : "no") + "\n";
  body += std::string("log-errors ") + (log_errors ? "yes" : "no") + "\n";
  body += "log " + (log_id.empty() ? std::string("none") : log_id) + " " +
          std::to_string(log_synced) + "\n";
  body += "fence-reserved " + std::to_string(fence_reserved) + "\n";
  return body + "checksum " + Hex64(XXH64(body.data(), body.size(), 0)) + "\n";
}

std::optional<StateRecord> StateRecord::Parse(const std::string& text) {
  size_t at = text.rfind("checksum ");
  if (at == std::string::npos) return std::nullopt;
  std::string body = text.substr(0, at);
  std::string sum = text.substr(at + 9);
  while (!sum.empty() && (sum.back() == '\n' || sum.back() == '\r')) sum.pop_back();
  if (sum != Hex64(XXH64(body.data(), body.size(), 0))) return std::nullopt;

  StateRecord r;
  int seen = 0;
  int version = 0;
  bool have_at_risk = false;
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
    auto opt_ms = [&](std::optional<int64_t>* out) {
      if (value == "none") return true;
      auto v = ParseInt64(value);
      if (v) *out = *v;
      return v.has_value();
    };
    bool ok = true;
    if (key == "latch-state") {
      // Version 2 (before the at-risk horizon) is read too: its horizon is
      // also its at-risk bound, and it knew of no log errors but fsync's.
      ok = seen == 0 && (value == "2" || value == "3");
      version = value == "3" ? 3 : 2;
    } else if (key == "status") {
      ok = value == "clean" || value == "running";
      r.clean = value == "clean";
    } else if (key == "clock") {
      ok = !value.empty() && value.find(' ') == std::string::npos;
      r.clock_id = value;
    } else if (key == "written-at") {
      auto v = ParseInt64(value);
      ok = v.has_value();
      if (ok) r.written_at = *v;
    } else if (key == "horizon") {
      ok = opt_ms(&r.horizon);
    } else if (key == "at-risk" && version == 3) {
      ok = opt_ms(&r.at_risk);
      have_at_risk = true;
    } else if (key == "log-errors" && version == 3) {
      ok = yes_no(&r.log_errors);
    } else if (key == "forgotten-until") {
      ok = opt_ms(&r.forgotten_until);
    } else if (key == "ttl-cap") {
      ok = opt_ms(&r.ttl_cap);
    } else if (key == "appendonly") {
      ok = yes_no(&r.appendonly);
    } else if (key == "fsync-always") {
      ok = yes_no(&r.fsync_always);
    } else if (key == "log") {
      size_t sp2 = value.find(' ');
      auto n = sp2 == std::string::npos ? std::nullopt : ParseInt64(value.substr(sp2 + 1));
      ok = n && *n >= 0 && sp2 > 0;
      if (ok) {
        std::string id = value.substr(0, sp2);
        r.log_id = id == "none" ? std::string() : id;
        r.log_synced = static_cast<uint64_t>(*n);
      }
    } else if (key == "fence-reserved") {
      // Unsigned: a build before the reservation stopped at the largest
      // token could write more; the next run then starts exhausted.
      uint64_t v = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      ok = ec == std::errc() && end == value.data() + value.size() && !value.empty();
      if (ok) r.fence_reserved = v;
    } else {
      ok = false;
    }
    if (!ok) return std::nullopt;
    ++seen;
  }
  if (seen != (version == 3 ? 13 : 11)) return std::nullopt;
  if (version == 2) {
    r.at_risk = r.horizon;
    r.log_errors = !r.fsync_always;  // unknown: as if something failed
  } else if (!have_at_risk) {
    return std::nullopt;
  }
  return r;
}

int WriteStateFile(const std::string& path, const std::string& text) {
  if (int injected = IoFaults::Check(IoOp::kStateWrite); injected != 0) return injected;
  std::string tmp = path + ".tmp";
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) return errno;
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd.get(), text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return ENOSPC;
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return errno;
  fd.reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) return errno;
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
  UniqueFd d(::open(dir.empty() ? "/" : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d) return errno;
  if (::fsync(d.get()) != 0) return errno;
  return 0;
}

}  // namespace latch
