#include "server/acl/users.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "server/session.h"

namespace latch::acl {

namespace {

// The default user as Redis creates it: on, nopass, every key, channel and
// command.
void MakeDefault(User& u) {
  for (std::string_view r : {"+@all", "~*", "&*", "on", "nopass"}) (void)u.Apply(r);
  Users::Refresh(u);
}

constexpr int64_t kLogMergeMs = 60000;

}  // namespace

Users::Users(const CommandRegistry& registry) : registry_(registry) {
  Clear();
}

void Users::Clear() {
  users_.clear();
  auto d = std::make_unique<User>("default", registry_);
  MakeDefault(*d);
  default_ = d.get();
  users_.emplace("default", std::move(d));
}

User* Users::Find(std::string_view name) {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second.get();
}

User& Users::Get(std::string_view name) {
  if (User* u = Find(name)) return *u;
  auto u = std::make_unique<User>(std::string(name), registry_);
  User& ref = *u;
  users_.emplace(std::string(name), std::move(u));
  Refresh(ref);
  return ref;
}

bool Users::Delete(std::string_view name) {
  auto it = users_.find(name);
  if (it == users_.end() || it->second.get() == default_) return false;
  if (on_delete) on_delete(it->second.get());
  users_.erase(it);
  return true;
}

void Users::SetRequirePass(std::string_view password) {
  (void)default_->Apply("resetpass");
  if (password.empty()) {
    (void)default_->Apply("nopass");
  } else {
    (void)default_->Apply(">" + std::string(password));
  }
  Refresh(*default_);
}

const User& Users::Of(const Session& session) const {
  return session.user != nullptr ? *session.user : *default_;
}

void Users::Log(Denied reason, Context context, std::string_view object, std::string_view username,
                int64_t now_ms, const Session& session) {
  const std::string info = client_info ? client_info(session) : std::string();
  // An equal refusal (reason, context, object, user) within a minute among
  // the ten newest entries is counted there and moves to the front.
  size_t scanned = 0;
  for (auto it = log_.begin(); it != log_.end() && scanned < 10; ++it, ++scanned) {
    if (it->reason == reason && it->context == context && it->object == object &&
        it->username == username && std::llabs(it->ctime_ms - now_ms) <= kLogMergeMs) {
      LogEntry e = std::move(*it);
      log_.erase(it);
      ++e.count;
      e.ctime_ms = now_ms;
      e.client_info = info;
      log_.push_front(std::move(e));
      return;
    }
  }
  LogEntry e;
  e.reason = reason;
  e.context = context;
  e.object = object;
  e.username = username;
  e.ctime_ms = now_ms;
  e.client_info = info;
  log_.push_front(std::move(e));
  while (log_.size() > log_max_len) log_.pop_back();
}

}  // namespace latch::acl

namespace latch::acl {

std::optional<std::string> Users::Load(std::string_view text, std::string_view filename) {
  std::map<std::string, std::unique_ptr<User>, std::less<>> loaded;
  std::string errors;
  const std::string file(filename);
  int linenum = 0;
  while (!text.empty() || linenum == 0) {
    ++linenum;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    while (!line.empty() &&
           std::string_view(" \t\r\n").find(line.front()) != std::string_view::npos)
      line.remove_prefix(1);
    while (!line.empty() && std::string_view(" \t\r\n").find(line.back()) != std::string_view::npos)
      line.remove_suffix(1);
    if (line.empty()) {
      if (text.empty()) break;
      continue;
    }
    std::vector<std::string_view> argv;
    for (size_t at = 0; at <= line.size();) {
      const size_t sp = line.find(' ', at);
      const std::string_view word = line.substr(at, sp - at);
      if (!word.empty()) argv.push_back(word);
      if (sp == std::string_view::npos) break;
      at = sp + 1;
    }
    const std::string ln = std::to_string(linenum);
    if (argv.size() < 2 || argv[0] != "user") {
      errors += file + ":" + ln + " should start with user keyword followed by the username. ";
      continue;
    }
    const std::string name(argv[1]);
    if (loaded.count(name) != 0) {
      errors += "WARNING: Duplicate user '" + name + "' found on line " + ln + ". ";
      continue;
    }
    auto u = std::make_unique<User>(name, registry_);
    // A selector spread over several words is one rule.
    std::vector<std::string> rules;
    bool open = false;
    for (size_t j = 2; j < argv.size(); ++j) {
      const std::string_view op = argv[j];
      if (open) {
        rules.back() += " " + std::string(op);
        if (op.back() == ')') open = false;
      } else {
        rules.emplace_back(op);
        open = op[0] == '(' && op.back() != ')';
      }
    }
    if (open) {
      errors += file + ":" + ln + ": Unmatched parenthesis in selector definition.";
      continue;
    }
    bool syntax_error = false;
    for (const std::string& r : rules) {
      if (auto err = u->Apply(r)) {
        if (err->rfind("Unknown command", 0) == 0) {
          errors += file + ":" + ln + ": Error in applying operation '" + r + "': " + *err + ". ";
        } else if (!syntax_error) {
          errors += file + ":" + ln + ": " + *err + ". ";
          syntax_error = true;
        }
      }
    }
    Refresh(*u);
    loaded.emplace(name, std::move(u));
  }
  if (!errors.empty()) {
    errors.pop_back();  // the last ". "'s space
    return errors;
  }
  // The default user keeps its object (sessions point to it); the others
  // are replaced and their sessions end.
  User fresh_default("default", registry_);
  MakeDefault(fresh_default);
  if (auto it = loaded.find("default"); it != loaded.end()) {
    fresh_default = std::move(*it->second);
    loaded.erase(it);
  }
  for (auto& [name, u] : users_) {
    if (u.get() != default_ && on_delete) on_delete(u.get());
  }
  *default_ = std::move(fresh_default);
  Refresh(*default_);
  auto d = std::move(users_.at("default"));
  users_ = std::move(loaded);
  users_.emplace("default", std::move(d));
  return std::nullopt;
}

std::optional<std::string> Users::LoadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return "Error loading ACLs, opening file '" + path + "': " + std::strerror(errno);
  }
  std::stringstream text;
  text << in.rdbuf();
  return Load(text.str(), path);
}

std::optional<std::string> Users::SaveFile(const std::string& path) const {
  std::string text;
  for (const auto& [name, u] : users_) text += "user " + name + " " + u->Describe() + "\n";
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return "Opening temp ACL file for ACL SAVE: " + std::string(std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    return "Renaming ACL file for ACL SAVE: " + err;
  }
  return std::nullopt;
}

}  // namespace latch::acl
