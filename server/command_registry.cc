#include <algorithm>
#include <string_view>
#include <utility>

#include "protocol/text.h"
#include "server/command.h"

namespace latch {

// ---------------------------------------------------------------- builders

namespace spec {

ArgDoc Arg(std::string name, std::string type, std::string token) {
  ArgDoc a;
  a.name = std::move(name);
  a.type = std::move(type);
  a.token = std::move(token);
  return a;
}
ArgDoc Key(std::string name, bool multiple) {
  ArgDoc a = Arg(std::move(name), "key");
  a.key_spec_index = 0;
  a.multiple = multiple;
  return a;
}
ArgDoc Str(std::string name, std::string token) {
  return Arg(std::move(name), "string", std::move(token));
}
ArgDoc Int(std::string name, std::string token) {
  return Arg(std::move(name), "integer", std::move(token));
}
ArgDoc Double(std::string name, std::string token) {
  return Arg(std::move(name), "double", std::move(token));
}
ArgDoc Time(std::string name, std::string token) {
  return Arg(std::move(name), "unix-time", std::move(token));
}
ArgDoc Pattern(std::string name, std::string token) {
  return Arg(std::move(name), "pattern", std::move(token));
}
ArgDoc Token(std::string name, std::string token) {
  return Arg(std::move(name), "pure-token", std::move(token));
}
ArgDoc OneOf(std::string name, std::vector<ArgDoc> args) {
  ArgDoc a = Arg(std::move(name), "oneof");
  a.args = std::move(args);
  return a;
}
ArgDoc Block(std::string name, std::vector<ArgDoc> args, std::string token) {
  ArgDoc a = Arg(std::move(name), "block", std::move(token));
  a.args = std::move(args);
  return a;
}
ArgDoc Optional(ArgDoc a, std::string since) {
  a.optional = true;
  a.since = std::move(since);
  return a;
}
ArgDoc Multiple(ArgDoc a) {
  a.multiple = true;
  return a;
}

CommandSpec Cmd(std::string name, int arity, uint32_t flags, CommandHandler handler,
                std::vector<std::string> acl, Doc doc, std::vector<ArgDoc> args) {
  CommandSpec c;
  c.name = std::move(name);
  c.arity = arity;
  c.flags = flags;
  c.handler = handler;
  c.acl_categories = std::move(acl);
  c.summary = std::move(doc.summary);
  c.since = std::move(doc.since);
  c.group = std::move(doc.group);
  c.complexity = std::move(doc.complexity);
  c.args = std::move(args);
  return c;
}

CommandSpec Keys(CommandSpec c, int first, int last, int step, std::vector<std::string> flags) {
  c.first_key = first;
  c.last_key = last;
  c.key_step = step;
  c.key_spec_flags = std::move(flags);
  return c;
}

CommandSpec KeySpecs(CommandSpec c, int first, int last, int step, std::vector<KeySpec> specs) {
  c.first_key = first;
  c.last_key = last;
  c.key_step = step;
  for (const KeySpec& k : specs) {
    if (k.keynum || k.unknown) c.flags |= kCmdMovableKeys;
  }
  c.key_specs = std::move(specs);
  return c;
}

KeySpec RangeSpec(std::vector<std::string> flags, int index, int lastkey, int keystep, int limit) {
  KeySpec k;
  k.flags = std::move(flags);
  k.index = index;
  k.lastkey = lastkey;
  k.keystep = keystep;
  k.limit = limit;
  return k;
}

KeySpec UnknownSpec(std::vector<std::string> flags) {
  KeySpec k;
  k.flags = std::move(flags);
  k.unknown = true;
  return k;
}

KeySpec KeyNumSpec(std::vector<std::string> flags, int index, int keynumidx, int firstkey,
                   int keystep) {
  KeySpec k;
  k.flags = std::move(flags);
  k.index = index;
  k.keynum = true;
  k.keynumidx = keynumidx;
  k.firstkey = firstkey;
  k.keystep = keystep;
  return k;
}

ArgDoc KeyAt(std::string name, int spec_index, bool multiple) {
  ArgDoc a = Key(std::move(name), multiple);
  a.key_spec_index = spec_index;
  return a;
}

CommandSpec Container(std::string name, std::vector<std::string> acl, Doc doc,
                      std::vector<CommandSpec> subs) {
  CommandSpec c = Cmd(std::move(name), -2, 0, nullptr, std::move(acl), std::move(doc));
  c.subcommands = std::move(subs);
  return c;
}

}  // namespace spec

namespace {

void WriteArgDoc(const ArgDoc& a, resp::ReplySink& w) {
  size_t fields = 2 + (a.key_spec_index >= 0) + !a.token.empty() + !a.since.empty() +
                  (a.optional || a.multiple) + !a.args.empty();
  w.Map(fields);
  w.Bulk("name");
  w.Bulk(a.name);
  w.Bulk("type");
  w.Bulk(a.type);
  if (a.key_spec_index >= 0) {
    w.Bulk("key_spec_index");
    w.Int(a.key_spec_index);
  }
  if (!a.token.empty()) {
    w.Bulk("token");
    w.Bulk(a.token);
  }
  if (!a.since.empty()) {
    w.Bulk("since");
    w.Bulk(a.since);
  }
  if (a.optional || a.multiple) {
    w.Bulk("flags");
    w.Set(static_cast<size_t>(a.optional) + static_cast<size_t>(a.multiple));
    if (a.optional) w.Simple("optional");
    if (a.multiple) w.Simple("multiple");
  }
  if (!a.args.empty()) {
    w.Bulk("arguments");
    w.Array(a.args.size());
    for (const ArgDoc& sub : a.args) WriteArgDoc(sub, w);
  }
}

void WriteKeySpec(const KeySpec& k, resp::ReplySink& w) {
  w.Map(3);
  w.Bulk("flags");
  w.Set(k.flags.size());
  for (const std::string& f : k.flags) w.Simple(f);
  if (k.unknown) {
    for (const char* part : {"begin_search", "find_keys"}) {
      w.Bulk(part);
      w.Map(2);
      w.Bulk("type");
      w.Bulk("unknown");
      w.Bulk("spec");
      w.Map(0);
    }
    return;
  }
  w.Bulk("begin_search");
  w.Map(2);
  w.Bulk("type");
  w.Bulk("index");
  w.Bulk("spec");
  w.Map(1);
  w.Bulk("index");
  w.Int(k.index);
  w.Bulk("find_keys");
  w.Map(2);
  w.Bulk("type");
  w.Bulk(k.keynum ? "keynum" : "range");
  w.Bulk("spec");
  w.Map(3);
  if (k.keynum) {
    w.Bulk("keynumidx");
    w.Int(k.keynumidx);
    w.Bulk("firstkey");
    w.Int(k.firstkey);
    w.Bulk("keystep");
    w.Int(k.keystep);
  } else {
    w.Bulk("lastkey");
    w.Int(k.lastkey);
    w.Bulk("keystep");
    w.Int(k.keystep);
    w.Bulk("limit");
    w.Int(k.limit);
  }
}

}  // namespace

void CommandRegistry::Add(CommandSpec spec) {
  commands_.push_back(std::move(spec));
}

CommandRegistry::CommandRegistry() {
  // The families, each registering its own commands (server/commands/).
  commands::RegisterStrings(*this);
  commands::RegisterStringOps(*this);
  commands::RegisterExpiry(*this);
  commands::RegisterConnection(*this);
  commands::RegisterKeyspace(*this);
  commands::RegisterServer(*this);
  commands::RegisterConfig(*this);
  commands::RegisterIntrospection(*this);
  commands::RegisterTransactions(*this);
  commands::RegisterScripting(*this);
  commands::RegisterFaults(*this);
  commands::RegisterDiagnostics(*this);
  commands::RegisterDurability(*this);
  commands::RegisterLocks(*this);
  commands::RegisterPubSub(*this);
  commands::RegisterHashes(*this);
  commands::RegisterSets(*this);
  commands::RegisterSetOps(*this);
  commands::RegisterSort(*this);
  commands::RegisterZSets(*this);
  commands::RegisterLists(*this);
  commands::RegisterListMoves(*this);
  commands::RegisterAcl(*this);
  Index();
}

namespace {

// A command's key specs made complete once: the one its legacy range
// (Keys()) stands for when it declared none, and each spec's flags read
// into booleans (KeySpec::reads…). The ACL check then takes them as they
// are, without a copy per request.
void ResolveKeySpecs(CommandSpec& c) {
  if (c.key_specs.empty() && c.first_key > 0) {
    KeySpec k;
    k.flags = c.key_spec_flags;
    k.index = c.first_key;
    k.lastkey = c.last_key < 0 ? c.last_key : c.last_key - c.first_key;
    k.keystep = c.key_step;
    c.key_specs.push_back(std::move(k));
  }
  for (KeySpec& k : c.key_specs) {
    auto has = [&](std::string_view f) {
      return std::find(k.flags.begin(), k.flags.end(), f) != k.flags.end();
    };
    k.reads = has("access");
    k.writes = has("insert") || has("delete") || has("update");
    k.not_key = has("not_key");
    k.variable_flags = has("variable_flags");
  }
  using Special = CommandSpec::AclSpecial;
  const std::string& n = c.fullname;
  // (SORT_RO takes no STORE: Redis's sortROGetKeys finds its first key only.)
  c.acl_special = n == "sort"                             ? Special::kSort
                  : n == "set"                            ? Special::kSet
                  : n == "publish" || n == "spublish"     ? Special::kPublish
                  : n == "subscribe" || n == "ssubscribe" ? Special::kSubscribe
                  : n == "psubscribe"                     ? Special::kPSubscribe
                                                          : Special::kNone;
  c.plain_keys = false;
  if (c.key_specs.size() == 1) {
    const KeySpec& k = c.key_specs[0];
    c.plain_keys = !k.unknown && !k.keynum && !k.not_key &&
                   (!k.variable_flags || c.acl_special == Special::kSet) &&
                   (k.lastkey >= 0 || k.limit == 0);
  }
  // Where the pipeline prefetch (prefetch.h) finds the key a request will
  // look up first, and the field or member it will look up in that key's
  // collection: a hint, so a position that is sometimes wrong (ZADD's
  // flags before its first score) costs one wasted load.
  c.prefetch_key = 0;
  c.prefetch_member = 0;
  if (!c.key_specs.empty()) {
    const KeySpec& k = c.key_specs[0];
    if (!k.unknown && !k.not_key) c.prefetch_key = k.keynum ? k.index + k.firstkey : k.index;
  }
  static constexpr std::pair<std::string_view, int> kMemberAt[] = {
      {"hset", 2},    {"hsetnx", 2}, {"hmset", 2},        {"hget", 2},       {"hmget", 2},
      {"hincrby", 2}, {"hdel", 2},   {"hincrbyfloat", 2}, {"hexists", 2},    {"hstrlen", 2},
      {"sadd", 2},    {"srem", 2},   {"sismember", 2},    {"smismember", 2}, {"zadd", 3},
      {"zincrby", 3}, {"zrem", 2},   {"zscore", 2},       {"zmscore", 2},    {"zrank", 2},
      {"zrevrank", 2}};
  for (const auto& [name, at] : kMemberAt) {
    if (n == name) c.prefetch_member = at;
  }
}

}  // namespace

void CommandRegistry::Index() {
  for (CommandSpec& c : commands_) {
    c.fullname = c.name;
    c.index = count_++;
    ResolveKeySpecs(c);
    for (CommandSpec& s : c.subcommands) {
      s.fullname = c.name + "|" + s.name;
      s.index = count_++;
      ResolveKeySpecs(s);
    }
  }
  size_t n = 64;
  while (n < commands_.size() * 4) n *= 2;
  slots_.assign(n, nullptr);
  for (const CommandSpec& c : commands_) {
    size_t i = NameHash(c.name) & (slots_.size() - 1);
    while (slots_[i] != nullptr) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = &c;
  }
}

uint32_t CommandRegistry::NameHash(std::string_view lower) {
  uint32_t h = 2166136261u;
  for (char c : lower) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

std::string CommandRegistry::ReleaseCommands() const {
  std::string out;
  for (const CommandSpec& c : commands_) {
    if (!c.has(kCmdWrite) || c.has(kCmdGrantsLease) || c.has(kCmdAdmin)) continue;
    if (!out.empty()) out += ", ";
    for (char ch : c.name) out.push_back(ch >= 'a' && ch <= 'z' ? static_cast<char>(ch - 32) : ch);
  }
  return out;
}

const CommandRegistry& CommandRegistry::Get() {
  static const CommandRegistry registry;
  return registry;
}

const CommandSpec* CommandRegistry::Find(std::string_view name) const {
  // Every request looks its command up: fold the name to lower case in a
  // small stack buffer, then one hash lookup. No command name is longer.
  char lower[32];
  if (name.empty() || name.size() > sizeof(lower)) return nullptr;
  for (size_t i = 0; i < name.size(); ++i) lower[i] = AsciiLower(name[i]);
  std::string_view key(lower, name.size());
  for (size_t i = NameHash(key) & (slots_.size() - 1); slots_[i] != nullptr;
       i = (i + 1) & (slots_.size() - 1)) {
    if (slots_[i]->name == key) return slots_[i];
  }
  return nullptr;
}

void CommandRegistry::WriteInfo(const CommandSpec& c, resp::ReplySink& w) {
  w.Array(10);
  w.Bulk(c.fullname);
  w.Int(c.arity);
  static const std::pair<uint32_t, const char*> kFlagNames[] = {
      {kCmdWrite, "write"},      {kCmdReadonly, "readonly"},    {kCmdDenyOom, "denyoom"},
      {kCmdAdmin, "admin"},      {kCmdNoScript, "noscript"},    {kCmdBlocking, "blocking"},
      {kCmdLoading, "loading"},  {kCmdStale, "stale"},          {kCmdSkipSlowlog, "skip_slowlog"},
      {kCmdFast, "fast"},        {kCmdNoAuth, "no_auth"},       {kCmdSentinel, "sentinel"},
      {kCmdNoMulti, "no_multi"}, {kCmdAllowBusy, "allow_busy"}, {kCmdMovableKeys, "movablekeys"},
  };
  size_t nflags = 0;
  for (const auto& [bit, name] : kFlagNames) nflags += c.has(bit);
  w.Set(nflags);
  for (const auto& [bit, name] : kFlagNames) {
    if (c.has(bit)) w.Simple(name);
  }
  w.Int(c.first_key);
  w.Int(c.last_key);
  w.Int(c.key_step);
  w.Set(c.acl_categories.size());
  for (const std::string& cat : c.acl_categories) w.Simple("@" + cat);
  w.Set(c.tips.size());
  for (const std::string& t : c.tips) w.Bulk(t);
  if (!c.key_specs.empty()) {
    w.Set(c.key_specs.size());  // (sets in RESP3, as Redis writes them)
    for (const KeySpec& k : c.key_specs) WriteKeySpec(k, w);
  } else if (c.first_key > 0) {
    KeySpec k;
    k.flags = c.key_spec_flags;
    k.index = c.first_key;
    k.lastkey = c.last_key < 0 ? c.last_key : c.last_key - c.first_key;
    k.keystep = c.key_step;
    w.Set(1);
    WriteKeySpec(k, w);
  } else {
    w.Set(0);
  }
  w.Set(c.subcommands.size());
  for (const CommandSpec& s : c.subcommands) WriteInfo(s, w);
}

void CommandRegistry::WriteDocs(const CommandSpec& c, resp::ReplySink& w) {
  size_t fields = 4 + !c.args.empty() + !c.subcommands.empty();
  w.Map(fields);
  w.Bulk("summary");
  w.Bulk(c.summary);
  w.Bulk("since");
  w.Bulk(c.since);
  w.Bulk("group");
  w.Bulk(c.group);
  w.Bulk("complexity");
  w.Bulk(c.complexity);
  if (!c.args.empty()) {
    w.Bulk("arguments");
    w.Array(c.args.size());
    for (const ArgDoc& a : c.args) WriteArgDoc(a, w);
  }
  if (!c.subcommands.empty()) {
    w.Bulk("subcommands");
    w.Map(c.subcommands.size());
    for (const CommandSpec& s : c.subcommands) {
      w.Bulk(s.fullname);
      WriteDocs(s, w);
    }
  }
}

}  // namespace latch
