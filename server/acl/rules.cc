// The ACL rules (user.h): applying them to a user and checking a command
// against the result, as Redis 7.0's acl.c does.
#include <algorithm>
#include <cctype>

#include "common/glob.h"
#include "common/sha256.h"
#include "protocol/text.h"
#include "server/acl/user.h"
#include "server/command_keys.h"

namespace latch::acl {

bool KeyPattern::Matches(std::string_view key) const {
  const size_t n = pattern.size();
  if (prefix_only_ < 0) {
    // Only a '*' at the end, and no special character before it.
    prefix_only_ = n > 0 && pattern[n - 1] == '*' && pattern.find_first_of("*?[\\") == n - 1;
  }
  if (prefix_only_ == 1) {
    // A short prefix ("lock:") compared in place: cheaper than a call to
    // memcmp for the few bytes it usually is.
    const size_t len = n - 1;
    if (key.size() < len) return false;
    for (size_t i = 0; i < len; ++i) {
      if (key[i] != pattern[i]) return false;
    }
    return true;
  }
  return GlobMatch(pattern, key);
}

namespace {

constexpr std::string_view kCategories[] = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting"};

// Redis's reasons (ACLSetUserStringError).
constexpr std::string_view kUnknown = "Unknown command or category name in ACL";
constexpr std::string_view kSyntax = "Syntax error";
constexpr std::string_view kKeysAfterAll =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have "
    "any effect. Try 'resetkeys' to start with an empty list of patterns";
constexpr std::string_view kChannelsAfterAll =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not "
    "have any effect. Try 'resetchannels' to start with an empty list of channels";
constexpr std::string_view kNoSuchPassword =
    "The password you are trying to remove from the user does not exist";
constexpr std::string_view kBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
    "characters";
constexpr std::string_view kFirstArgOfSub = "Allowing first-arg of a subcommand is not supported";

// Spaces or NUL in a pattern: refused (ACLStringHasSpaces).
bool HasSpaces(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return c == 0 || std::isspace(static_cast<unsigned char>(c)) != 0;
  });
}

bool ValidHash(std::string_view h) {
  return h.size() == 64 && std::all_of(h.begin(), h.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The channels a command publishes to or subscribes to, with whether they
// are patterns (Redis's getChannelsFromCommand; unsubscribing is free).
void ChannelsOf(const CommandSpec& cmd, std::span<const std::string_view> argv,
                std::vector<std::pair<int, bool>>* out) {
  using Special = CommandSpec::AclSpecial;
  if (cmd.acl_special == Special::kPublish) {
    if (argv.size() > 1) out->emplace_back(1, false);
  } else if (cmd.acl_special == Special::kSubscribe || cmd.acl_special == Special::kPSubscribe) {
    const bool patterns = cmd.acl_special == Special::kPSubscribe;
    for (size_t i = 1; i < argv.size(); ++i) out->emplace_back(static_cast<int>(i), patterns);
  }
}

}  // namespace

std::span<const std::string_view> Categories() {
  return kCategories;
}

bool InCategory(const CommandSpec& cmd, std::string_view category) {
  for (const std::string& c : cmd.acl_categories) {
    if (EqualsIgnoreCase(c, category)) return true;
  }
  return false;
}

const CommandSpec* FindCommand(const CommandRegistry& registry, std::string_view name) {
  const size_t bar = name.find('|');
  const CommandSpec* c = registry.Find(name.substr(0, bar));
  if (c == nullptr || bar == std::string_view::npos) return c;
  for (const CommandSpec& s : c->subcommands) {
    if (EqualsIgnoreCase(s.name, name.substr(bar + 1))) return &s;
  }
  return nullptr;
}

std::string_view DeniedReason(Denied d) {
  switch (d) {
    case Denied::kCommand:
      return "command";
    case Denied::kKey:
      return "key";
    case Denied::kChannel:
      return "channel";
    case Denied::kAuth:
      return "auth";
    case Denied::kNone:
      break;
  }
  return "";
}

// ------------------------------------------------------------ selectors

Selector::Selector(const CommandRegistry& r)
    : allowed(r.count(), false), first_args(r.count()), registry(&r) {}

bool Selector::CanRunEverything() const {
  return all_keys && all_channels && future_commands &&
         std::all_of(allowed.begin(), allowed.end(), [](bool b) { return b; });
}

// A command and its subcommands allowed or not (ACLChangeSelectorPerm).
void Selector::Change(const CommandSpec& cmd, bool allow) {
  allowed[cmd.index] = allow;
  first_args[cmd.index].clear();
  for (const CommandSpec& s : cmd.subcommands) allowed[s.index] = allow;
}

bool Selector::SetCategory(std::string_view category, bool allow) {
  if (std::find_if(kCategories, std::end(kCategories), [&](std::string_view c) {
        return EqualsIgnoreCase(c, category);
      }) == std::end(kCategories)) {
    return false;
  }
  for (const CommandSpec& c : registry->commands()) {
    if (InCategory(c, category)) Change(c, allow);
    for (const CommandSpec& s : c.subcommands) {
      if (InCategory(s, category)) Change(s, allow);
    }
  }
  return true;
}

std::optional<std::string> Selector::Apply(std::string_view op) {
  if (EqualsIgnoreCase(op, "allkeys") || op == "~*") {
    all_keys = true;
    keys.clear();
  } else if (EqualsIgnoreCase(op, "resetkeys")) {
    all_keys = false;
    keys.clear();
  } else if (EqualsIgnoreCase(op, "allchannels") || op == "&*") {
    all_channels = true;
    channels.clear();
  } else if (EqualsIgnoreCase(op, "resetchannels")) {
    all_channels = false;
    channels.clear();
  } else if (EqualsIgnoreCase(op, "allcommands") || EqualsIgnoreCase(op, "+@all")) {
    std::fill(allowed.begin(), allowed.end(), true);
    for (auto& f : first_args) f.clear();
    future_commands = true;
  } else if (EqualsIgnoreCase(op, "nocommands") || EqualsIgnoreCase(op, "-@all")) {
    std::fill(allowed.begin(), allowed.end(), false);
    for (auto& f : first_args) f.clear();
    future_commands = false;
  } else if (op[0] == '~' || op[0] == '%') {
    if (all_keys) return std::string(kKeysAfterAll);
    int perms = 0;
    size_t offset = 1;
    if (op[0] == '%') {
      bool tilde = false;
      for (; offset < op.size(); ++offset) {
        const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(op[offset])));
        if (c == 'R' && !(perms & kPermRead)) {
          perms |= kPermRead;
        } else if (c == 'W' && !(perms & kPermWrite)) {
          perms |= kPermWrite;
        } else if (op[offset] == '~') {
          ++offset;
          tilde = true;
          break;
        } else {
          return std::string(kSyntax);
        }
      }
      if (!tilde || perms == 0) return std::string(kSyntax);
    } else {
      perms = kPermAll;
    }
    std::string_view pattern = op.substr(offset);
    if (HasSpaces(pattern)) return std::string(kSyntax);
    auto it = std::find_if(keys.begin(), keys.end(),
                           [&](const KeyPattern& k) { return k.pattern == pattern; });
    if (it == keys.end()) {
      keys.push_back({std::string(pattern), perms});
    } else {
      it->perms |= perms;
    }
  } else if (op[0] == '&') {
    if (all_channels) return std::string(kChannelsAfterAll);
    std::string_view pattern = op.substr(1);
    if (HasSpaces(pattern)) return std::string(kSyntax);
    if (std::find(channels.begin(), channels.end(), pattern) == channels.end()) {
      channels.emplace_back(pattern);
    }
  } else if (op[0] == '+' && (op.size() < 2 || op[1] != '@')) {
    const size_t bar = op.rfind('|');
    if (bar == std::string_view::npos) {
      const CommandSpec* cmd = FindCommand(*registry, op.substr(1));
      if (cmd == nullptr) return std::string(kUnknown);
      Change(*cmd, true);
    } else {
      const CommandSpec* cmd = FindCommand(*registry, op.substr(1, bar - 1));
      if (cmd == nullptr) return std::string(kUnknown);
      if (cmd->fullname.find('|') != std::string::npos) return std::string(kFirstArgOfSub);
      const std::string_view sub = op.substr(bar + 1);
      if (sub.empty()) return std::string(kSyntax);
      if (!cmd->subcommands.empty()) {
        const CommandSpec* s = FindCommand(*registry, op.substr(1));
        if (s == nullptr) return std::string(kUnknown);
        Change(*s, true);
      } else {
        // A first argument of an otherwise refused command (+select|0):
        // Redis deprecates it but still takes it.
        auto& list = first_args[cmd->index];
        if (std::none_of(list.begin(), list.end(),
                         [&](const std::string& a) { return EqualsIgnoreCase(a, sub); })) {
          list.emplace_back(sub);
        }
      }
    }
  } else if (op[0] == '-' && (op.size() < 2 || op[1] != '@')) {
    const CommandSpec* cmd = FindCommand(*registry, op.substr(1));
    if (cmd == nullptr) return std::string(kUnknown);
    Change(*cmd, false);
  } else if ((op[0] == '+' || op[0] == '-') && op[1] == '@') {
    if (!SetCategory(op.substr(2), op[0] == '+')) return std::string(kUnknown);
  } else {
    return std::string(kSyntax);
  }
  return std::nullopt;
}

namespace {

// The argument positions [first, last] of a plain_keys command's keys sent
// with `argc` arguments (step: its spec's); false when there are none
// (KeyPositions' rule: a variadic command sent short has the keys present).
bool PlainKeyRange(const CommandSpec& cmd, int argc, int* first, int* last) {
  const KeySpec& spec = cmd.key_specs[0];
  *first = spec.index;
  *last = spec.lastkey >= 0 ? *first + spec.lastkey : argc + spec.lastkey;
  if ((*last >= argc || *last < *first) && cmd.arity < 0 && *first < argc) *last = argc - 1;
  return *first < argc && *last < argc && *last >= *first;
}

}  // namespace

Denied Selector::Check(const CommandSpec& cmd, std::span<const std::string_view> argv,
                       int* pos) const {
  // The command (AUTH, HELLO and the like are always allowed: one must be
  // able to log in).
  if (!cmd.has(kCmdNoAuth) && !allowed[cmd.index]) {
    const auto& list = first_args[cmd.index];
    if (argv.size() < 2 || std::none_of(list.begin(), list.end(), [&](const std::string& a) {
          return EqualsIgnoreCase(a, argv[1]);
        })) {
      return Denied::kCommand;
    }
  }
  // The keys, each with the access its key spec says: reading it
  // ("access") needs R, changing it (insert, update, delete) needs W.
  if (!all_keys) {
    auto reaches = [&](std::string_view key, int need) {
      return std::any_of(keys.begin(), keys.end(), [&](const KeyPattern& k) {
        return (k.perms & need) == need && k.Matches(key);
      });
    };
    if (cmd.plain_keys) {
      // The usual shape (GET, SET, HSET, DEL…): one fixed range with fixed
      // flags, walked in place.
      const KeySpec& spec = cmd.key_specs[0];
      int first = 0, last = 0;
      const KeyAccess access = KeyAccessFor(cmd, spec, argv);  // SET … GET reads too
      const int need = (access.reads ? kPermRead : 0) | (access.writes ? kPermWrite : 0);
      if (PlainKeyRange(cmd, static_cast<int>(argv.size()), &first, &last)) {
        for (int i = first; i <= last; i += std::max(spec.keystep, 1)) {
          if (!reaches(argv[static_cast<size_t>(i)], need)) {
            *pos = i;
            return Denied::kKey;
          }
        }
      }
    } else {
      // Allocation-free: the specs are the command's own (no copy), their
      // flags read once by the registry, and the positions go into a buffer
      // each thread keeps (its capacity stays once grown).
      const std::span<const KeySpec> specs = KeySpecsOf(cmd);
      thread_local std::vector<std::pair<int, const KeySpec*>> positions;
      positions.clear();
      if (!specs.empty() && KeyPositions(cmd, argv, &positions, specs)) {
        for (const auto& [i, spec] : positions) {
          const KeyAccess access = KeyAccessFor(cmd, *spec, argv);
          if (access.not_key) continue;
          const int need = (access.reads ? kPermRead : 0) | (access.writes ? kPermWrite : 0);
          if (!reaches(argv[static_cast<size_t>(i)], need)) {
            *pos = i;
            return Denied::kKey;
          }
        }
      }
    }
    // SORT's STORE key, which no key spec finds (Redis's sortGetKeys): it
    // is written over (OW update).
    if (cmd.acl_special == CommandSpec::AclSpecial::kSort) {
      if (std::optional<int> store = SortStoreKey(argv)) {
        if (!reaches(argv[static_cast<size_t>(*store)], kPermWrite)) {
          *pos = *store;
          return Denied::kKey;
        }
      }
    }
  }
  // The channels: a pattern (PSUBSCRIBE) must be one of the user's
  // patterns literally, a channel must match one.
  if (!all_channels && cmd.acl_special != CommandSpec::AclSpecial::kNone) {
    std::vector<std::pair<int, bool>> found;
    ChannelsOf(cmd, argv, &found);
    for (const auto& [i, pattern_flag] : found) {
      const bool is_pattern = pattern_flag;  // (a lambda cannot capture a binding)
      const std::string_view ch = argv[static_cast<size_t>(i)];
      const bool ok = std::any_of(channels.begin(), channels.end(), [&](const std::string& p) {
        return is_pattern ? p == ch : GlobMatch(p, ch);
      });
      if (!ok) {
        *pos = i;
        return Denied::kChannel;
      }
    }
  }
  return Denied::kNone;
}

// ----------------------------------------------------------------- users

User::User(std::string n, const CommandRegistry& registry) : name(std::move(n)) {
  selectors.emplace_back(registry);
  selectors[0].root = true;
}

std::optional<std::string> User::Apply(std::string_view op) {
  if (op.empty()) return std::nullopt;
  if (EqualsIgnoreCase(op, "on")) {
    enabled = true;
  } else if (EqualsIgnoreCase(op, "off")) {
    enabled = false;
  } else if (EqualsIgnoreCase(op, "skip-sanitize-payload")) {
    sanitize = 2;
  } else if (EqualsIgnoreCase(op, "sanitize-payload")) {
    sanitize = 1;
  } else if (EqualsIgnoreCase(op, "nopass")) {
    nopass = true;
    passwords.clear();
  } else if (EqualsIgnoreCase(op, "resetpass")) {
    nopass = false;
    passwords.clear();
  } else if (op[0] == '>' || op[0] == '#') {
    std::string hash;
    if (op[0] == '>') {
      hash = Sha256Hex(op.substr(1));
    } else {
      if (!ValidHash(op.substr(1))) return std::string(kBadHash);
      hash = op.substr(1);
    }
    if (std::find(passwords.begin(), passwords.end(), hash) == passwords.end()) {
      passwords.push_back(std::move(hash));
    }
    nopass = false;
  } else if (op[0] == '<' || op[0] == '!') {
    std::string hash;
    if (op[0] == '<') {
      hash = Sha256Hex(op.substr(1));
    } else {
      if (!ValidHash(op.substr(1))) return std::string(kBadHash);
      hash = op.substr(1);
    }
    auto it = std::find(passwords.begin(), passwords.end(), hash);
    if (it == passwords.end()) return std::string(kNoSuchPassword);
    passwords.erase(it);
  } else if (op[0] == '(' && op.back() == ')') {
    // A selector: its rules, separated by spaces, applied to a new one.
    Selector s(*selectors[0].registry);
    std::string_view body = op.substr(1, op.size() - 2);
    while (!body.empty()) {
      const size_t space = body.find(' ');
      const std::string_view rule = body.substr(0, space);
      if (!rule.empty()) {
        if (auto err = s.Apply(rule)) return err;
      }
      if (space == std::string_view::npos) break;
      body.remove_prefix(space + 1);
    }
    selectors.push_back(std::move(s));
  } else if (EqualsIgnoreCase(op, "clearselectors")) {
    selectors.resize(1, Selector(*selectors[0].registry));
  } else if (EqualsIgnoreCase(op, "reset")) {
    for (std::string_view r : {"resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload",
                               "clearselectors", "-@all"}) {
      (void)Apply(r);
    }
  } else {
    return selectors[0].Apply(op);
  }
  return std::nullopt;
}

std::optional<std::string> User::ApplyAll(std::span<const std::string_view> ops) {
  // A selector given as several arguments ("(~a*" "+get)") is one rule
  // (ACLMergeSelectorArguments).
  std::vector<std::string> merged;
  std::optional<size_t> open;
  for (size_t j = 0; j < ops.size(); ++j) {
    const std::string_view op = ops[j];
    if (!open && !op.empty() && op[0] == '(' && op.back() != ')') {
      open = j;
      merged.emplace_back(op);
      continue;
    }
    if (open) {
      merged.back() += ' ';
      merged.back() += op;
      if (!op.empty() && op.back() == ')') open.reset();
      continue;
    }
    merged.emplace_back(op);
  }
  if (open) {
    return "Unmatched parenthesis in acl selector starting at '" + std::string(ops[*open]) + "'.";
  }
  User staged = *this;
  for (const std::string& op : merged) {
    if (auto err = staged.Apply(op)) {
      return "Error in ACL SETUSER modifier '" + op + "': " + *err;
    }
  }
  *this = std::move(staged);
  RefreshCaches();
  return std::nullopt;
}

void User::RefreshCaches() {
  unrestricted_cache = Unrestricted();
  fast_prefix_.reset();
  if (selectors.size() != 1) return;
  const Selector& s = selectors[0];
  if (s.all_keys || s.keys.size() != 1 || s.keys[0].perms != kPermAll) return;
  const std::string& p = s.keys[0].pattern;
  // Only a '*' at the end, and no special character before it.
  if (!p.empty() && p.back() == '*' && p.find_first_of("*?[\\") == p.size() - 1) {
    fast_prefix_ = p.substr(0, p.size() - 1);
  }
}

bool User::CheckPassword(std::string_view password) const {
  if (nopass) return true;
  const std::string hash = Sha256Hex(password);
  // Compared in full whatever differs (Redis's time_independent_strcmp).
  bool found = false;
  for (const std::string& p : passwords) {
    int diff = 0;
    for (size_t i = 0; i < 64; ++i) diff |= p[i] ^ hash[i];
    found |= diff == 0;
  }
  return found;
}

bool User::AllKeysFor(const CommandSpec& cmd, std::span<const std::string_view> argv,
                      int perms) const {
  // Redis's ACLUserCheckCmdWithUnrestrictedKeyAccess: a selector that lets
  // the command run and reaches every key with `perms`.
  for (const Selector& s : selectors) {
    int p = 0;
    if (s.Check(cmd, argv, &p) != Denied::kNone) continue;
    if (s.all_keys) return true;
    for (const KeyPattern& k : s.keys) {
      if ((k.perms & perms) == perms && k.pattern == "*") return true;
    }
  }
  return false;
}

Denied User::Check(const CommandSpec& cmd, std::span<const std::string_view> argv, int* pos) const {
  // Any selector may allow it. If none does, the refusal reported is the
  // most specific (key or channel over command), the last argument at fault
  // among equals (ACLCheckAllUserCommandPerm).
  if (fast_prefix_ && cmd.plain_keys &&
      (cmd.acl_special == CommandSpec::AclSpecial::kNone ||
       cmd.acl_special == CommandSpec::AclSpecial::kSet)) {
    // The usual restricted user (one `~prefix*` pattern for reading and
    // writing, see RefreshCaches) running a command it may run on keys in
    // one plain range: allowed when every key has the prefix. Anything
    // else, refusals included, takes the whole check below.
    const Selector& s = selectors[0];
    int first = 0, last = 0;
    if (cmd.has(kCmdNoAuth) || s.allowed[cmd.index]) {
      if (!PlainKeyRange(cmd, static_cast<int>(argv.size()), &first, &last)) {
        return Denied::kNone;
      }
      const std::string_view prefix = *fast_prefix_;
      bool all = true;
      for (int i = first; i <= last && all; i += std::max(cmd.key_specs[0].keystep, 1)) {
        all = argv[static_cast<size_t>(i)].starts_with(prefix);
      }
      if (all) return Denied::kNone;
    }
  }
  if (selectors.size() == 1) return selectors[0].Check(cmd, argv, pos);  // the usual user
  Denied worst = Denied::kCommand;
  int worst_pos = 0;
  for (const Selector& s : selectors) {
    int p = 0;
    const Denied d = s.Check(cmd, argv, &p);
    if (d == Denied::kNone) return d;
    if (d > worst || (d == worst && p > worst_pos)) {
      worst = d;
      worst_pos = p;
    }
  }
  *pos = worst_pos;
  return worst;
}

}  // namespace latch::acl
