// COMMAND and its subcommands: the registry (server/command.h) seen from a
// client. redis-cli reads COMMAND DOCS for its hints, and client libraries
// read COMMAND INFO for key positions.
#include <algorithm>

#include "common/glob.h"
#include "server/commands/common.h"

namespace latch::commands {

namespace {

// A command by its name, or a subcommand by its full name ("config|get"),
// as COMMAND INFO and COMMAND DOCS take them.
const CommandSpec* FindByFullName(std::string_view name) {
  size_t bar = name.find('|');
  if (bar == std::string_view::npos) return CommandRegistry::Get().Find(name);
  const CommandSpec* c = CommandRegistry::Get().Find(name.substr(0, bar));
  if (c == nullptr) return nullptr;
  for (const CommandSpec& s : c->subcommands) {
    if (EqualsIgnoreCase(s.name, name.substr(bar + 1))) return &s;
  }
  return nullptr;
}

}  // namespace

void Command(CommandContext& ctx) {
  const auto& all = CommandRegistry::Get().commands();
  ctx.reply.Array(all.size());
  for (const CommandSpec& c : all) CommandRegistry::WriteInfo(c, ctx.reply);
}

void CommandCount(CommandContext& ctx) {
  ctx.reply.Int(static_cast<int64_t>(CommandRegistry::Get().commands().size()));
}

void CommandInfo(CommandContext& ctx) {
  if (ctx.argv.size() == 2) {
    Command(ctx);
    return;
  }
  ctx.reply.Array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    const CommandSpec* c = FindByFullName(ctx.argv[i]);
    if (c == nullptr) {
      ctx.reply.Null();  // Redis: addReplyNull, so $-1 in RESP2
    } else {
      CommandRegistry::WriteInfo(*c, ctx.reply);
    }
  }
}

void CommandDocs(CommandContext& ctx) {
  std::vector<const CommandSpec*> list;
  if (ctx.argv.size() == 2) {
    for (const CommandSpec& c : CommandRegistry::Get().commands()) list.push_back(&c);
  } else {
    for (size_t i = 2; i < ctx.argv.size(); ++i) {
      if (const CommandSpec* c = FindByFullName(ctx.argv[i])) list.push_back(c);
    }
  }
  ctx.reply.Map(list.size());
  for (const CommandSpec* c : list) {
    ctx.reply.Bulk(c->fullname);
    CommandRegistry::WriteDocs(*c, ctx.reply);
  }
}

void CommandList(CommandContext& ctx) {
  // COMMAND LIST [FILTERBY MODULE m | ACLCAT cat | PATTERN p]
  std::string_view kind, arg;
  if (ctx.argv.size() == 5 && IsWord(ctx.argv[2], "FILTERBY")) {
    kind = ctx.argv[3];
    arg = ctx.argv[4];
    if (!IsWord(kind, "MODULE") && !IsWord(kind, "ACLCAT") && !IsWord(kind, "PATTERN")) {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  } else if (ctx.argv.size() != 2) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  std::vector<std::string> names;
  auto consider = [&](const CommandSpec& c) {
    if (kind.empty()) {
      names.push_back(c.fullname);
    } else if (IsWord(kind, "PATTERN")) {
      if (GlobMatch(arg, c.fullname, true)) names.push_back(c.fullname);
    } else if (IsWord(kind, "ACLCAT")) {
      for (const std::string& cat : c.acl_categories) {
        if (IsWord(arg, cat)) names.push_back(c.fullname);
      }
    }
  };
  for (const CommandSpec& c : CommandRegistry::Get().commands()) {
    consider(c);
    for (const CommandSpec& s : c.subcommands) consider(s);
  }
  ctx.reply.Array(names.size());
  for (const std::string& n : names) ctx.reply.Bulk(n);
}

namespace {

// A command's key specs: its own (KeySpecs), or the one its legacy key
// range makes (first, last, step), as COMMAND INFO reports them.
std::vector<KeySpec> KeySpecsOf(const CommandSpec& cmd) {
  if (!cmd.key_specs.empty()) return cmd.key_specs;
  std::vector<KeySpec> specs;
  if (cmd.first_key > 0) {
    KeySpec k;
    k.flags = cmd.key_spec_flags;
    k.index = cmd.first_key;
    k.lastkey = cmd.last_key < 0 ? cmd.last_key : cmd.last_key - cmd.first_key;
    k.keystep = cmd.key_step;
    specs.push_back(std::move(k));
  }
  return specs;
}

// The positions of the keys in `argv` (the command's own, argv[0] its
// name), spec by spec, each with its spec's flags, as Redis 7.0's
// getKeysUsingKeySpecs finds them. False when a spec does not fit the
// arguments (numkeys past them, or less than one): Redis then asks the
// command's getkeys procedure, which finds no key either.
bool KeyPositions(const CommandSpec& cmd, std::span<const std::string_view> argv,
                  std::vector<std::pair<int, const KeySpec*>>* out,
                  const std::vector<KeySpec>& specs) {
  const int argc = static_cast<int>(argv.size());
  for (const KeySpec& spec : specs) {
    int first = spec.index, last;
    const int step = std::max(spec.keystep, 1);
    if (spec.keynum) {
      if (spec.keynumidx >= argc - first) continue;
      auto numkeys = ParseInt64(argv[static_cast<size_t>(first + spec.keynumidx)]);
      if (!numkeys || *numkeys < 0) continue;
      first += spec.firstkey;
      const int64_t l = first + *numkeys - 1;
      if (l >= argc) return false;
      last = static_cast<int>(l);
    } else if (spec.lastkey >= 0) {
      last = first + spec.lastkey;
    } else if (spec.limit == 0) {
      last = argc + spec.lastkey;
    } else {
      last = first + ((argc - first) / spec.limit + spec.lastkey);
    }
    if (last >= argc || last < first || first >= argc) {
      // Past the arguments given: a command of variable arity reports the
      // error itself when it runs, so there is simply no key there.
      if (!spec.keynum && cmd.arity < 0 && first < argc) last = argc - 1;
      if (last >= argc || last < first || first >= argc) return false;
    }
    for (int i = first; i <= last; i += step) out->emplace_back(i, &spec);
  }
  return true;
}

// COMMAND GETKEYS / GETKEYSANDFLAGS <full command>: the keys a command would
// touch, found from its key specs as Redis 7.0 finds them
// (getKeysUsingKeySpecs), with Redis's errors.
void GetKeys(CommandContext& ctx, bool with_flags) {
  std::span<const std::string_view> target = ctx.argv.subspan(2);
  const CommandSpec* cmd = CommandRegistry::Get().Find(target[0]);
  if (cmd != nullptr && !cmd->subcommands.empty() && target.size() >= 2) {
    // A container: the subcommand names the command (OBJECT ENCODING key).
    const CommandSpec* container = cmd;
    cmd = nullptr;
    for (const CommandSpec& sub : container->subcommands) {
      if (EqualsIgnoreCase(sub.name, target[1])) cmd = &sub;
    }
  }
  if (cmd == nullptr) {
    ctx.reply.Error("ERR Invalid command specified");
    return;
  }
  const std::vector<KeySpec> specs = KeySpecsOf(*cmd);
  if (specs.empty()) {
    ctx.reply.Error("ERR The command has no key arguments");
    return;
  }
  const int argc = static_cast<int>(target.size());
  if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
    ctx.reply.Error("ERR Invalid number of arguments specified for command");
    return;
  }
  std::vector<std::pair<int, const KeySpec*>> positions;
  if (!KeyPositions(*cmd, target, &positions, specs) || positions.empty()) {
    ctx.reply.Error("ERR Invalid arguments specified for command");
    return;
  }
  // The flags in Redis's order (addReplyFlagsForKeyArgs).
  static const char* kOrder[] = {
      "RW",     "RO",     "OW",      "RM",         "access",        "update",
      "insert", "delete", "not_key", "incomplete", "variable_flags"};
  auto flags_of = [&](const KeySpec& spec) {
    // A key spec with variable_flags has its flags decided by the arguments
    // (Redis's getkeys procedures): SET overwrites (OW update) unless GET
    // reads the old value (RW access update). Others: the declared flags.
    std::vector<std::string> declared = spec.flags;
    if (std::find(declared.begin(), declared.end(), "variable_flags") != declared.end()) {
      std::erase(declared, std::string("variable_flags"));
      if (cmd->fullname == "set") {
        bool get = false;
        for (size_t i = 3; i < target.size(); ++i) get |= IsWord(target[i], "GET");
        declared = get ? std::vector<std::string>{"RW", "access", "update"}
                       : std::vector<std::string>{"OW", "update"};
      }
    }
    std::vector<const char*> flags;
    for (const char* f : kOrder) {
      if (std::find(declared.begin(), declared.end(), f) != declared.end()) flags.push_back(f);
    }
    return flags;
  };
  ctx.reply.Array(positions.size());
  for (const auto& [i, spec] : positions) {
    if (!with_flags) {
      ctx.reply.Bulk(target[static_cast<size_t>(i)]);
      continue;
    }
    const std::vector<const char*> flags = flags_of(*spec);
    ctx.reply.Array(2);
    ctx.reply.Bulk(target[static_cast<size_t>(i)]);
    ctx.reply.Set(flags.size());
    for (const char* f : flags) ctx.reply.Simple(f);
  }
}

}  // namespace

void CommandGetKeys(CommandContext& ctx) {
  GetKeys(ctx, false);
}

void CommandGetKeysAndFlags(CommandContext& ctx) {
  GetKeys(ctx, true);
}

void CommandHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all commands.",
      "COUNT",
      "    Return the total number of commands in this server.",
      "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
      "    Return a list of all commands in this server.",
      "INFO [<command-name> ...]",
      "    Return details about the given commands, or all of them.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about the given commands, or all of them.",
      "GETKEYS <full-command>",
      "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP",
      "    Print this help.",
  };
  ReplyHelp(ctx, kLines);
}

// ---------------------------------------------------------------- registration

void RegisterIntrospection(CommandRegistry& r) {
  using namespace spec;
  auto srv = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "server", std::move(complexity)};
  };
  CommandSpec command =
      Container("command", {"slow", "connection"},
                srv("Get array of Redis command details", "2.8.13",
                    "O(N) where N is the total number of Redis commands"),
                {Cmd("count", 2, kCmdLoading | kCmdStale, CommandCount, {"slow", "connection"},
                     srv("Get total number of Redis commands", "2.8.13")),
                 Cmd("info", -2, kCmdLoading | kCmdStale, CommandInfo, {"slow", "connection"},
                     srv("Get array of specific Redis command details, or all when no argument "
                         "is given.",
                         "2.8.13", "O(N) where N is the number of commands to look up"),
                     {Optional(Multiple(Str("command-name")))}),
                 Cmd("docs", -2, kCmdLoading | kCmdStale, CommandDocs, {"slow", "connection"},
                     srv("Get array of specific Redis command documentation", "7.0.0",
                         "O(N) where N is the number of commands to look up"),
                     {Optional(Multiple(Str("command-name")))}),
                 Cmd("list", -2, kCmdLoading | kCmdStale, CommandList, {"slow", "connection"},
                     srv("Get an array of Redis command names", "7.0.0",
                         "O(N) where N is the total number of Redis commands"),
                     {Optional(Block(
                         "filterby",
                         {OneOf("filter", {Str("module-name", "MODULE"), Str("category", "ACLCAT"),
                                           Str("pattern", "PATTERN")})},
                         "FILTERBY"))}),
                 Cmd("getkeys", -4, kCmdLoading | kCmdStale, CommandGetKeys, {"slow", "connection"},
                     srv("Extract keys given a full Redis command", "2.8.13",
                         "O(N) where N is the number of arguments to the command")),
                 Cmd("getkeysandflags", -4, kCmdLoading | kCmdStale, CommandGetKeysAndFlags,
                     {"slow", "connection"},
                     srv("Extract keys and access flags given a full Redis command", "7.0.0",
                         "O(N) where N is the number of arguments to the command")),
                 Cmd("help", 2, kCmdLoading | kCmdStale, CommandHelp, {"slow", "connection"},
                     srv("Show helpful text about the different subcommands", "5.0.0"))});
  // COMMAND alone lists every command.
  command.arity = -1;
  command.flags = kCmdLoading | kCmdStale | kCmdSentinel;
  command.handler = Command;
  r.Add(std::move(command));
}

}  // namespace latch::commands
