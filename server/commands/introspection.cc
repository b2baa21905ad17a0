// COMMAND and its subcommands: the registry (server/command.h) seen from a
// client. redis-cli reads COMMAND DOCS for its hints, and client libraries
// read COMMAND INFO for key positions.
#include <algorithm>

#include "common/glob.h"
#include "server/command_keys.h"
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
  const std::span<const KeySpec> specs = KeySpecsOf(*cmd);
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
    const std::vector<std::string> declared = KeyFlagsFor(*cmd, spec, target);
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
