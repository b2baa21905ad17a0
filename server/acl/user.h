// An ACL user as Redis 7.0 has them (acl.c): whether it is on, its
// passwords (SHA-256 in hex), and its selectors: the root selector, then
// any "(…)" ones. A selector says which commands (a bit per command and
// subcommand of the registry, CommandSpec::index), which keys (patterns
// with read and/or write access) and which pub/sub channels the user may
// use; a command runs when one selector allows all three.
//
// Rules are applied one by one (User::Apply) in SETUSER's words: on, off,
// >pw, <pw, #hash, !hash, nopass, resetpass, ~pat, %R~pat, %W~pat, %RW~pat,
// allkeys, resetkeys, &pat, allchannels, resetchannels, +cmd, -cmd,
// +cmd|sub, +@cat, -@cat, allcommands, nocommands, (…), clearselectors,
// reset. Describe() prints them back as Redis's ACL LIST does.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/command.h"

namespace latch::acl {

// Why a command was refused (Redis's ACL_DENIED_*: the numbers order
// which refusal is reported when several selectors refuse differently).
enum class Denied { kNone = 0, kCommand = 1, kKey = 2, kAuth = 3, kChannel = 4 };

inline constexpr int kPermRead = 1;
inline constexpr int kPermWrite = 2;
inline constexpr int kPermAll = kPermRead | kPermWrite;

struct KeyPattern {
  KeyPattern() = default;
  KeyPattern(std::string p, int permissions) : pattern(std::move(p)), perms(permissions) {}

  std::string pattern;
  int perms = kPermAll;

  // Whether `key` matches, as Redis's glob: a pattern that is a prefix and
  // one trailing '*' (the usual `~app1:*`) is told once and then compared
  // as a prefix, so the check a restricted user pays on every request is a
  // memcmp rather than a glob walk.
  bool Matches(std::string_view key) const;

 private:
  mutable signed char prefix_only_ = -1;  // unknown until the first match
};

struct Selector {
  bool root = false;
  bool all_keys = false;
  bool all_channels = false;
  // Set only by +@all (allcommands), cleared only by -@all: the user may
  // also run commands added later (Redis's reserved "future" bit); ACL LIST
  // then starts with +@all.
  bool future_commands = false;
  std::vector<bool> allowed;  // by CommandSpec::index
  // First arguments allowed for a command otherwise refused (+select|0),
  // by CommandSpec::index; empty for most.
  std::vector<std::vector<std::string>> first_args;
  std::vector<KeyPattern> keys;
  std::vector<std::string> channels;

  explicit Selector(const CommandRegistry& registry);
  // One rule; on failure, Redis's reason (ACLSetUserStringError).
  std::optional<std::string> Apply(std::string_view op);
  // Whether `cmd` sent with `argv` may run; on a refusal, the argument
  // at fault (a key or channel) in *pos.
  Denied Check(const CommandSpec& cmd, std::span<const std::string_view> argv, int* pos) const;
  bool CanRunEverything() const;
  // The selector's rules: keys, channels, commands (ACLDescribeSelector).
  std::string Describe() const;
  std::string DescribeCommands() const;
  std::string DescribeKeys() const;
  std::string DescribeChannels() const;

  const CommandRegistry* registry;

 private:
  void Change(const CommandSpec& cmd, bool allow);
  bool SetCategory(std::string_view category, bool allow);
};

struct User {
  std::string name;
  bool enabled = false;
  bool nopass = false;
  int sanitize = 0;                    // 1: sanitize-payload, 2: skip-sanitize-payload
  std::vector<std::string> passwords;  // SHA-256 hex, in the order added
  std::vector<Selector> selectors;     // [0]: the root selector
  // Unrestricted(), kept up to date by the registry (Users::Refresh) so the
  // gate's check for the usual all-powerful default user is one branch.
  bool unrestricted_cache = false;

  User(std::string name, const CommandRegistry& registry);
  // One rule (see above); on failure, Redis's reason.
  std::optional<std::string> Apply(std::string_view op);
  // Several rules as ACL SETUSER takes them, a "(…)" selector possibly
  // spread over several arguments; all or nothing. On failure, the full
  // error text (without "ERR ").
  std::optional<std::string> ApplyAll(std::span<const std::string_view> ops);
  // Whether `password` is one of the user's (any, with nopass).
  bool CheckPassword(std::string_view password) const;
  Denied Check(const CommandSpec& cmd, std::span<const std::string_view> argv, int* pos) const;
  // Whether a selector that allows `cmd` reaches every key with `perms`
  // (SORT's BY and GET patterns read keys no check can name in advance).
  bool AllKeysFor(const CommandSpec& cmd, std::span<const std::string_view> argv, int perms) const;
  // Whether the user may run every command on every key and channel: the
  // gate then skips the check (one branch on the hot path).
  bool Unrestricted() const { return enabled && selectors[0].CanRunEverything(); }
  // Recomputes unrestricted_cache and the fast form of the usual restricted
  // user (one selector whose only key pattern is `prefix*` for R and W):
  // after any change to the rules (ApplyAll does; Users::Refresh too).
  void RefreshCaches();
  // "on nopass ~* &* +@all": ACL LIST's line without "user <name>".
  std::string Describe() const;
  std::string DescribeFlags(bool with_space) const;

 private:
  // The prefix of the user's only key pattern, when RefreshCaches found the
  // usual shape: User::Check then allows a plain command with a memcmp per
  // key, and leaves everything else to the selectors.
  std::optional<std::string> fast_prefix_;
};

// Redis's categories, in its order (ACL CAT).
std::span<const std::string_view> Categories();
// Whether `cmd` is in `category` (without '@').
bool InCategory(const CommandSpec& cmd, std::string_view category);
// The command or subcommand a rule names ("get", "config|get"), or nullptr.
const CommandSpec* FindCommand(const CommandRegistry& registry, std::string_view name);
// Redis's reasons, shared by the config loaders.
std::string_view DeniedReason(Denied d);

}  // namespace latch::acl
