#include "server/faults.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "protocol/text.h"
#include "server/command.h"
#include "server/connection.h"
#include "server/history.h"
#include "server/log.h"
#include "server/server.h"

namespace latch {

uint64_t RealUs() {
  return uv_hrtime() / 1000;
}

namespace {

std::string FormatRate(double rate) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", rate);
  return buf;
}

}  // namespace

std::string Faults::Rule::Describe() const {
  std::string out = "id=" + std::to_string(id);
  switch (kind) {
    case kDelay:
      out += " kind=delay ms=" + std::to_string(delay_ms);
      break;
    case kDrop:
      out += " kind=drop probability=" + FormatRate(probability);
      break;
    case kPartition:
      out += std::string(" kind=partition mode=") + (stall ? "stall" : "refuse");
      break;
  }
  out += " command=" + (command.empty() ? std::string("*") : command);
  out += " client=" + (client.empty() ? std::string("*") : client);
  out += " count=" + std::to_string(count) + " hits=" + std::to_string(hits);
  return out;
}

Faults::Faults(Server& server, Clock& clock, History* history)
    : server_(server), clock_(clock), history_(history) {}

bool Faults::enabled() const {
  return server_.config().enable_fault_injection;
}

void Faults::Note(const std::string& what) {
  log::Warning("FAULT {}", what);
  if (history_ != nullptr) history_->Fault(what);
  last_fault_ = what;
  last_fault_real_us_ = static_cast<int64_t>(RealUs());
}

// ---------------------------------------------------------------- clocks

void Faults::WarpChanged() {
  // From the first warp on, the clock has another id (clock.h): the log's
  // next annotation and the lease policy's next record name it, so a later
  // start trusts none of the warped times.
  std::string id = clock_.Id();
  server_.store().set_clock_id(id);
  server_.lease_policy().set_clock_id(id);
  warped_ = true;
}

std::optional<std::string> Faults::ClockRate(double rate) {
  if (!(rate >= 0 && rate <= 1000)) return "ERR the clock rate must be between 0 and 1000";
  if (!clock_.WarpMono(rate, 0)) return "ERR this server's clock cannot be warped";
  rate_ = rate;
  WarpChanged();
  Note("CLOCK RATE " + FormatRate(rate));
  return std::nullopt;
}

std::optional<std::string> Faults::ClockJump(int64_t ms) {
  if (ms < 0 || ms > (int64_t{1} << 40)) {
    return "ERR the lease clock only jumps forward: ms must be between 0 and 2^40";
  }
  if (!clock_.WarpMono(rate_, ms)) return "ERR this server's clock cannot be warped";
  jumped_ms_ += ms;
  WarpChanged();
  Note("CLOCK JUMP " + std::to_string(ms));
  return std::nullopt;
}

std::optional<std::string> Faults::WallOffset(int64_t ms) {
  if (ms < -(int64_t{1} << 50) || ms > (int64_t{1} << 50)) {
    return "ERR value is not an integer or out of range";
  }
  if (!clock_.SetWallOffsetMs(ms)) return "ERR this server's clock cannot be shifted";
  wall_offset_ms_ = ms;
  Note("WALLCLOCK OFFSET " + std::to_string(ms));
  return std::nullopt;
}

// ---------------------------------------------------------------- rules

uint64_t Faults::Add(Rule rule) {
  rule.id = next_id_++;
  rules_.push_back(rule);
  Note(rule.Describe());
  if (rule.kind == Rule::kPartition) ApplyPartitions();
  return rule.id;
}

bool Faults::Clear(std::optional<uint64_t> id) {
  if (id) {
    auto it =
        std::find_if(rules_.begin(), rules_.end(), [&](const Rule& r) { return r.id == *id; });
    if (it == rules_.end()) return false;
    rules_.erase(it);
    Note("CLEAR " + std::to_string(*id));
  } else {
    rules_.clear();
    if (rate_ != 1.0) clock_.WarpMono(1.0, 0);
    rate_ = 1.0;
    if (wall_offset_ms_ != 0) clock_.SetWallOffsetMs(0);
    wall_offset_ms_ = 0;
    Note("CLEAR");
  }
  // Delayed replies stay delayed (they were promised a time); stalled
  // clients whose partition is gone resume.
  ApplyPartitions();
  return true;
}

std::vector<std::string> Faults::List() const {
  std::vector<std::string> out;
  if (warped_) {
    out.push_back("clock rate=" + FormatRate(rate_) + " jumped_ms=" + std::to_string(jumped_ms_));
  }
  if (wall_offset_ms_ != 0) out.push_back("wallclock offset_ms=" + std::to_string(wall_offset_ms_));
  for (const Rule& r : rules_) out.push_back(r.Describe());
  return out;
}

std::string Faults::InfoSection() const {
  std::string out = "# Faults\r\n";
  auto field = [&](std::string_view name, const std::string& value) {
    out.append(name);
    out += ':';
    out += value;
    out += "\r\n";
  };
  field("fault_injection", enabled() ? "1" : "0");
  field("fault_clock_rate", FormatRate(rate_));
  field("fault_clock_jumped_ms", std::to_string(jumped_ms_));
  field("fault_clock_warped", warped_ ? "1" : "0");
  field("fault_wallclock_offset_ms", std::to_string(wall_offset_ms_));
  field("faults_active", std::to_string(rules_.size()));
  field("fault_hits", std::to_string(hits_));
  for (const Rule& r : rules_) {
    std::string d = r.Describe();
    std::replace(d.begin(), d.end(), ' ', ',');
    field("fault_" + std::to_string(r.id), d);
  }
  field("last_fault", last_fault_);
  field("last_fault_ms_ago",
        last_fault_.empty()
            ? std::string("-1")
            : std::to_string((static_cast<int64_t>(RealUs()) - last_fault_real_us_) / 1000));
  return out;
}

// ---------------------------------------------------------------- the request path

bool Faults::Matches(const Rule& r, const Session& s, const CommandSpec* cmd) const {
  if (!r.client.empty() && s.name != r.client) return false;
  if (r.kind == Rule::kPartition) return true;
  // FAULT itself is never delayed or dropped: the test must keep control.
  if (cmd != nullptr && cmd->fullname.rfind("fault", 0) == 0) return false;
  if (r.command.empty()) return true;
  if (cmd == nullptr) return false;
  // "evalsha", or a container's whole family ("client") or one member
  // ("client|setname").
  std::string_view full = cmd->fullname;
  return full == r.command || full.substr(0, full.find('|')) == r.command;
}

bool Faults::Refuses(const Session& s) const {
  if (s.name.empty()) return false;
  for (const Rule& r : rules_) {
    if (r.kind == Rule::kPartition && !r.stall && r.client == s.name) return true;
  }
  return false;
}

bool Faults::Stalls(const Session& s) const {
  if (rules_.empty() || s.name.empty()) return false;
  for (const Rule& r : rules_) {
    if (r.kind == Rule::kPartition && r.stall && r.client == s.name) return true;
  }
  return false;
}

void Faults::AfterCommand(Connection& c, const CommandSpec* cmd, size_t reply_start) {
  bool drop = false;
  int64_t delay = 0;
  for (auto it = rules_.begin(); it != rules_.end();) {
    Rule& r = *it;
    bool hit = false;
    if (r.kind == Rule::kPartition) {
      // The command that named the client into a partition (CLIENT SETNAME)
      // is its last: the reply is dropped and the connection closed.
      hit = !r.stall && Matches(r, c, cmd);
      drop = drop || hit;
    } else if (Matches(r, c, cmd)) {
      if (r.kind == Rule::kDelay) {
        hit = true;
        delay = std::max(delay, r.delay_ms);
      } else {
        std::uniform_real_distribution<double> coin(0.0, 1.0);
        hit = r.probability >= 1.0 || coin(rng_) < r.probability;
        drop = drop || hit;
      }
    }
    if (hit) {
      ++r.hits;
      ++hits_;
      if (r.count > 0 && r.hits >= r.count) {
        log::Warning("FAULT id={} removed after {} hits", r.id, r.hits);
        it = rules_.erase(it);
        continue;
      }
    }
    ++it;
  }
  if (drop) {
    // The command ran (and is logged); its reply never leaves, and the
    // connection closes once the replies before it are out.
    c.output().resize(reply_start);
    if (c.held_from != Connection::kNotHeld && c.held_from > reply_start) {
      c.held_from = reply_start;
    }
    log::Verbose("FAULT: dropped the reply to '{}' for client id={} name={}",
                 cmd != nullptr ? cmd->fullname : std::string("?"), c.id(), c.name);
    c.CloseAfterReply();
    return;
  }
  if (delay > 0 && c.output().size() > reply_start) {
    uint64_t due = RealUs() + static_cast<uint64_t>(delay) * 1000;
    c.DelayOutput(reply_start, due);
    ArmTimer(due);
  }
}

void Faults::ApplyPartitions() {
  server_.ForEachSession([&](Session& s) {
    auto& c = static_cast<Connection&>(s);
    if (c.closing()) return;
    if (Refuses(c)) {
      // Closed once its pending replies are out (the FAULT command's own
      // connection may be among them: never closed under its own feet).
      log::Verbose("FAULT PARTITION: closing client id={} name={}", c.id(), c.name);
      c.CloseAfterReply();
      server_.OnClientOutput(c);
    } else if (c.stalled() && !Stalls(c)) {
      // Reading resumes now; what it had sent meanwhile runs from the timer,
      // outside the FAULT command that ended the partition.
      c.Unstall();
      ArmTimer(RealUs());
    }
  });
}

// ---------------------------------------------------------------- the delay timer

void Faults::ArmTimer(uint64_t due_us) {
  if (!timer_.initialized()) {
    uv_timer_init(server_.loop(), timer_.get());
    timer_.MarkInitialized();
    timer_->data = this;
  }
  if (timer_due_ != 0 && timer_due_ <= due_us) return;
  timer_due_ = due_us;
  uint64_t now = RealUs();
  // libuv's timers count whole ms: round up, never fire early.
  uv_timer_start(timer_.get(), OnTimer, due_us > now ? (due_us - now + 999) / 1000 : 0, 0);
}

void Faults::OnTimer(uv_timer_t* t) {
  static_cast<Faults*>(t->data)->ReleaseDueReplies();
}

void Faults::ReleaseDueReplies() {
  timer_due_ = 0;
  uint64_t now = RealUs();
  uint64_t next = 0;
  server_.ForEachSession([&](Session& s) {
    auto& c = static_cast<Connection&>(s);
    c.ProcessPending();  // a client a partition let go
    uint64_t due = c.next_delay_due();
    if (due == 0) return;
    if (due <= now) {
      server_.OnClientOutput(c);  // flushed before the loop sleeps
      due = c.next_delay_due(now);
    }
    if (due != 0 && (next == 0 || due < next)) next = due;
  });
  if (next != 0) ArmTimer(next);
}

void Faults::Close() {
  timer_.Close();
}

}  // namespace latch
