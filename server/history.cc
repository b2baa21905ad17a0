#include "server/history.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "common/json_string.h"
#include "server/clock.h"
#include "server/log.h"
#include "server/store.h"

namespace latch {

namespace {

// Real Unix time in ms with microseconds: the one time line nodes and
// clients share (never shifted by FAULT WALLCLOCK, never warped).
std::string RealUnixMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%" PRId64 ".%03ld",
                static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000,
                (ts.tv_nsec / 1000) % 1000);
  return buf;
}

}  // namespace

History::History(std::string path, std::string node, const Clock& clock)
    : path_(std::move(path)), node_(std::move(node)), clock_(clock) {}

std::optional<std::string> History::Open() {
  fd_.reset(::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd_) return "Can't open the history file '" + path_ + "': " + std::strerror(errno);
  std::string line = Begin("start");
  line += ",\"pid\":" + std::to_string(::getpid()) + ",\"clock\":";
  AppendJsonString(line, clock_.Id());
  line += ",\"format\":1";
  Write(line);
  return std::nullopt;
}

std::string History::Begin(std::string_view ev) const {
  std::string line = "{\"t\":" + RealUnixMs() + ",\"node\":";
  AppendJsonString(line, node_);
  line += ",\"ev\":";
  AppendJsonString(line, ev);
  return line;
}

void History::Write(std::string& line) {
  line += "}\n";
  // One write per event, O_APPEND: the line is in the file (the kernel's
  // page cache) before the reply that reports it leaves.
  ssize_t n = ::write(fd_.get(), line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size()) && !error_logged_) {
    error_logged_ = true;
    log::Warning("Writing the history file '{}' failed ({}): the history is incomplete", path_,
                 n < 0 ? std::strerror(errno) : "short write");
  }
}

void History::OnChange(const KeyChange& c) {
  if (!fd_) return;
  auto with_key = [&](std::string_view ev, std::string_view value) {
    std::string line = Begin(ev);
    line += ",\"key\":";
    AppendJsonString(line, c.key);
    line += ",\"value\":";
    AppendJsonString(line, value);
    return line;
  };
  // The lease the node gives, on its own lease clock: what the client asked
  // for (a fast clock ends it sooner in real time; the checker knows).
  auto ttl = [&](int64_t deadline) {
    if (deadline == kNoDeadline) return std::string(",\"ttl_ms\":-1");
    return ",\"ttl_ms\":" + std::to_string(std::max<int64_t>(0, deadline - clock_.MonoMs()));
  };
  std::string line;
  switch (c.kind) {
    case KeyChange::kFlush:
      line = Begin("flush");
      break;
    case KeyChange::kExpire:
      if (!c.had) return;
      line = with_key("expire", c.old_value);
      break;
    case KeyChange::kWrite:
      if (c.had && !c.has) {
        line = with_key("release", c.old_value);
      } else if (!c.had && c.has) {
        line = with_key("grant", c.value) + ttl(c.deadline);
      } else if (c.had && c.has && c.value != c.old_value) {
        line = with_key("grant", c.value) + ttl(c.deadline) + ",\"replaced\":";
        AppendJsonString(line, c.old_value);
      } else if (c.had && c.has && c.deadline != c.old_deadline) {
        line = with_key("renew", c.value) + ttl(c.deadline);
      } else {
        return;  // nothing changed (SET of the same value, KEEPTTL)
      }
      break;
  }
  Write(line);
}

void History::Fault(std::string_view what) {
  if (!fd_) return;
  std::string line = Begin("fault");
  line += ",\"fault\":";
  AppendJsonString(line, what);
  Write(line);
}

}  // namespace latch
