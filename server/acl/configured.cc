// The users a configuration declares: `user` lines in the config file, or
// an `aclfile` (never both, as in Redis).
#include <fstream>
#include <sstream>

#include "server/acl/users.h"
#include "server/config.h"

namespace latch::acl {

std::optional<std::string> CheckUserLine(const std::vector<std::string>& words) {
  if (words.size() < 2) return "Bad directive or wrong number of arguments";
  User u(words[1], CommandRegistry::Get());
  std::vector<std::string_view> rules(words.begin() + 2, words.end());
  if (auto err = u.ApplyAll(rules)) return "Error in user declaration '" + words[1] + "': " + *err;
  return std::nullopt;
}

std::optional<std::string> CheckAclConfig(const Config& config) {
  if (!config.users.empty() && !config.aclfile.empty()) {
    return "Configuring Redis with users defined in redis.conf and at the same setting an ACL "
           "file path is invalid. This setup is very likely to lead to configuration errors and "
           "security holes, please define either an ACL file or declare users directly in your "
           "redis.conf, but not both.";
  }
  if (!config.aclfile.empty()) {
    Users scratch(CommandRegistry::Get());
    if (auto err = scratch.LoadFile(config.aclfile)) {
      return "Aborting Redis startup because of ACL errors: " + *err;
    }
  }
  return std::nullopt;
}

std::optional<std::string> LoadConfigured(Users& users, const Config& config) {
  if (!config.aclfile.empty()) return users.LoadFile(config.aclfile);
  for (const std::vector<std::string>& line : config.users) {
    User& u = users.Get(line[0]);
    std::vector<std::string_view> rules(line.begin() + 1, line.end());
    if (auto err = u.ApplyAll(rules)) return err;
    Users::Refresh(u);
  }
  return std::nullopt;
}

}  // namespace latch::acl
