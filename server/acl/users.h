// The server's users (ACL SETUSER…), the `default` user every connection
// starts as, and the ACL LOG of refusals (acl.c's Users rax and ACLLog).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/acl/user.h"

namespace latch {
class Session;
}

namespace latch::acl {

// Where a refusal happened (ACL LOG's context).
enum class Context { kToplevel, kMulti, kLua };

struct LogEntry {
  uint64_t count = 1;
  Denied reason = Denied::kNone;
  Context context = Context::kToplevel;
  std::string object, username;
  int64_t ctime_ms = 0;  // wall clock of the last occurrence
  std::string client_info;
};

class Users {
 public:
  explicit Users(const CommandRegistry& registry);

  // The user of that name, or nullptr.
  User* Find(std::string_view name);
  User& Default() { return *default_; }
  // The user of that name, created (off, no rights) if needed.
  User& Get(std::string_view name);
  // Removes a user (not `default`), ending the sessions logged in as it.
  bool Delete(std::string_view name);
  // Every user by name (ACL LIST and ACL USERS print them in this order).
  const std::map<std::string, std::unique_ptr<User>, std::less<>>& all() const { return users_; }
  // Replaces every user but `default`, which is reset to its initial state
  // first (ACL LOAD, the aclfile at start).
  void Clear();

  // ACL LOAD / the aclfile: every user from `text` ("user <name> <rules>"
  // lines), all or none; on failure Redis's messages naming `filename` and
  // the line. The users replaced lose their sessions (as Redis's).
  std::optional<std::string> Load(std::string_view text, std::string_view filename);
  std::optional<std::string> LoadFile(const std::string& path);
  // ACL SAVE: ACL LIST's lines, written to a temporary file renamed over
  // `path`.
  std::optional<std::string> SaveFile(const std::string& path) const;

  // requirepass: the default user's only password (none: nopass), as
  // Redis's CONFIG SET requirepass does.
  void SetRequirePass(std::string_view password);

  // The user `session` runs as.
  const User& Of(const Session& session) const;
  // Called after any change to a user: its cached "may run everything".
  static void Refresh(User& u) { u.RefreshCaches(); }

  // ACL LOG: a refusal, merged with an equal one of the last 60 s (among
  // the 10 newest), newest first, at most max_len entries.
  void Log(Denied reason, Context context, std::string_view object, std::string_view username,
           int64_t now_ms, const Session& session);
  const std::deque<LogEntry>& log() const { return log_; }
  void ResetLog() { log_.clear(); }
  size_t log_max_len = 128;

  // CLIENT LIST's line for a session (ACL LOG's client-info), and how to
  // end the sessions of a deleted user: set by the server.
  std::function<std::string(const Session&)> client_info;
  std::function<void(const User*)> on_delete;

 private:
  const CommandRegistry& registry_;
  std::map<std::string, std::unique_ptr<User>, std::less<>> users_;
  User* default_ = nullptr;
  std::deque<LogEntry> log_;
};

}  // namespace latch::acl

namespace latch {
struct Config;
}

namespace latch::acl {

// A config file's `user <name> <rules…>` line (words[0] is "user"):
// Redis's error for a bad one.
std::optional<std::string> CheckUserLine(const std::vector<std::string>& words);
// `user` lines and `aclfile` together (Redis refuses that), and an aclfile
// that does not load (its messages name the file and line).
std::optional<std::string> CheckAclConfig(const Config& config);
// The users the configuration declares (user lines or the aclfile), into
// `users` at start.
std::optional<std::string> LoadConfigured(Users& users, const Config& config);

}  // namespace latch::acl
