// ACL and its subcommands: the users (server/acl) seen from a client, in
// Redis 7.0's words (acl.c's aclCommand). Every check itself is the gate's
// (gate.cc, Gate::CheckAcl); here the users are made, shown and removed.
#include <fstream>
#include <random>

#include "common/glob.h"
#include "server/acl/users.h"
#include "server/command_keys.h"
#include "server/commands/common.h"
#include "server/control.h"
#include "server/log.h"
#include "server/session.h"

namespace latch::commands {

namespace {

acl::Users& UsersOf(CommandContext& ctx) {
  return ctx.acl().acl_users();
}

// A user's channel rights narrowed: its sessions listening to a channel or
// pattern it may no longer use end (ACLKillPubsubClientsIfNeeded).
void EndRevokedSubscribers(CommandContext& ctx, const acl::User& u) {
  for (const acl::Selector& s : u.selectors) {
    if (s.all_channels) return;
  }
  auto allowed = [&](std::string_view ch, bool pattern) {
    for (const acl::Selector& s : u.selectors) {
      for (const std::string& p : s.channels) {
        if (pattern ? p == ch : GlobMatch(p, ch)) return true;
      }
    }
    return false;
  };
  acl::Users& users = UsersOf(ctx);
  ctx.clients().ForEachSession([&](Session& s) {
    if (&users.Of(s) != &u || !s.subscribed()) return;
    bool revoked = false;
    for (const std::string& p : s.patterns) revoked |= !allowed(p, true);
    for (const std::string& c : s.channels) revoked |= !allowed(c, false);
    for (const std::string& c : s.shard_channels) revoked |= !allowed(c, false);
    if (!revoked) return;
    if (&s == &ctx.session) {
      s.CloseAfterReply();
    } else {
      s.Close();
    }
  });
}

void AclSetUser(CommandContext& ctx) {
  // The rules may hold passwords: never in the slow log.
  for (size_t j = 2; j < ctx.argv.size(); ++j) ctx.Redact(j);
  const std::string_view name = ctx.argv[2];
  for (char c : name) {
    if (c == 0 || std::isspace(static_cast<unsigned char>(c)) != 0) {
      ctx.reply.Error("ERR Usernames can't contain spaces or null characters");
      return;
    }
  }
  acl::Users& users = UsersOf(ctx);
  acl::User* existing = users.Find(name);
  // Staged on a copy: all the rules apply, or none (ACLStringSetUser).
  acl::User staged =
      existing != nullptr ? *existing : acl::User(std::string(name), CommandRegistry::Get());
  if (auto err = staged.ApplyAll(ctx.argv.subspan(3))) {
    ctx.reply.Error("ERR " + *err);
    return;
  }
  acl::User& target = existing != nullptr ? *existing : users.Get(name);
  target = std::move(staged);
  acl::Users::Refresh(target);
  ctx.reply.Ok();
  if (existing != nullptr) EndRevokedSubscribers(ctx, target);
}

void AclGetUser(CommandContext& ctx) {
  const acl::User* u = UsersOf(ctx).Find(ctx.argv[2]);
  if (u == nullptr) {
    ctx.reply.Null();
    return;
  }
  resp::ReplySink& w = ctx.reply;
  auto selector = [&](const acl::Selector& s) {
    w.Bulk("commands");
    w.Bulk(s.DescribeCommands());
    w.Bulk("keys");
    w.Bulk(s.DescribeKeys());
    w.Bulk("channels");
    w.Bulk(s.DescribeChannels());
  };
  w.Map(6);
  w.Bulk("flags");
  std::vector<std::string> flags;
  std::string all = u->DescribeFlags(true);
  for (size_t at = 0; at < all.size();) {
    const size_t space = all.find(' ', at);
    flags.push_back(all.substr(at, space - at));
    at = space + 1;
  }
  w.Set(flags.size());
  for (const std::string& f : flags) w.Bulk(f);
  w.Bulk("passwords");
  w.Array(u->passwords.size());
  for (const std::string& p : u->passwords) w.Bulk(p);
  selector(u->selectors[0]);
  w.Bulk("selectors");
  w.Array(u->selectors.size() - 1);
  for (size_t i = 1; i < u->selectors.size(); ++i) {
    w.Map(3);
    selector(u->selectors[i]);
  }
}

void AclDelUser(CommandContext& ctx) {
  acl::Users& users = UsersOf(ctx);
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    if (ctx.argv[j] == "default") {
      ctx.reply.Error("ERR The 'default' user cannot be removed");
      return;
    }
  }
  int64_t deleted = 0;
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    // A session deleting its own user still gets this reply, then ends;
    // the user's other sessions end at once (Users::on_delete).
    if (ctx.session.user != nullptr && ctx.session.user->name == ctx.argv[j]) {
      ctx.session.user = nullptr;
      ctx.session.authenticated = false;
      ctx.session.CloseAfterReply();
    }
    deleted += users.Delete(ctx.argv[j]) ? 1 : 0;
  }
  ctx.reply.Int(deleted);
}

void AclList(CommandContext& ctx) {
  const auto& all = UsersOf(ctx).all();
  ctx.reply.Array(all.size());
  for (const auto& [name, u] : all) ctx.reply.Bulk("user " + name + " " + u->Describe());
}

void AclUsers(CommandContext& ctx) {
  const auto& all = UsersOf(ctx).all();
  ctx.reply.Array(all.size());
  for (const auto& [name, u] : all) ctx.reply.Bulk(name);
}

void AclWhoAmI(CommandContext& ctx) {
  ctx.reply.Bulk(UsersOf(ctx).Of(ctx.session).name);
}

void AclCat(CommandContext& ctx) {
  if (ctx.argv.size() == 2) {
    ctx.reply.Array(acl::Categories().size());
    for (std::string_view c : acl::Categories()) ctx.reply.Bulk(c);
    return;
  }
  if (ctx.argv.size() != 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  const std::string_view cat = ctx.argv[2];
  bool known = false;
  for (std::string_view c : acl::Categories()) known |= EqualsIgnoreCase(c, cat);
  if (!known) {
    ctx.reply.Error("ERR Unknown category '" + std::string(UpToNul(cat).substr(0, 128)) + "'");
    return;
  }
  std::vector<const std::string*> names;
  CommandRegistry::Get().ForEachCommand([&](const CommandSpec& c) {
    if (acl::InCategory(c, cat)) names.push_back(&c.fullname);
  });
  ctx.reply.Array(names.size());
  for (const std::string* n : names) ctx.reply.Bulk(*n);
}

void AclGenPass(CommandContext& ctx) {
  int64_t bits = 256;
  if (ctx.argv.size() == 3) {
    auto v = IntArgOrReply(ctx, ctx.argv[2]);
    if (!v) return;
    bits = *v;
  } else if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  if (bits <= 0 || bits > 4096) {
    ctx.reply.Error(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a "
        "positive number up to 4096");
    return;
  }
  // From the kernel's random source, as Redis's getRandomHexChars.
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string pass(static_cast<size_t>((bits + 3) / 4), '0');
  for (char& c : pass) c = kHex[rd() & 0xF];
  ctx.reply.Bulk(pass);
}

void AclLog(CommandContext& ctx) {
  acl::Users& users = UsersOf(ctx);
  int64_t count = 10;
  if (ctx.argv.size() == 3) {
    if (IsWord(ctx.argv[2], "RESET")) {
      users.ResetLog();
      ctx.reply.Ok();
      return;
    }
    auto v = IntArgOrReply(ctx, ctx.argv[2]);
    if (!v) return;
    count = std::max<int64_t>(*v, 0);
  } else if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  const auto& log = users.log();
  const size_t n = std::min(static_cast<size_t>(count), log.size());
  ctx.reply.Array(n);
  static constexpr const char* kContexts[] = {"toplevel", "multi", "lua"};
  for (size_t i = 0; i < n; ++i) {
    const acl::LogEntry& e = log[i];
    ctx.reply.Map(7);
    ctx.reply.Bulk("count");
    ctx.reply.Int(static_cast<int64_t>(e.count));
    ctx.reply.Bulk("reason");
    ctx.reply.Bulk(acl::DeniedReason(e.reason));
    ctx.reply.Bulk("context");
    ctx.reply.Bulk(kContexts[static_cast<int>(e.context)]);
    ctx.reply.Bulk("object");
    ctx.reply.Bulk(e.object);
    ctx.reply.Bulk("username");
    ctx.reply.Bulk(e.username);
    ctx.reply.Bulk("age-seconds");
    ctx.reply.Double(static_cast<double>(ctx.now.wall_ms - e.ctime_ms) / 1000);
    ctx.reply.Bulk("client-info");
    ctx.reply.Bulk(e.client_info);
  }
}

void AclDryRun(CommandContext& ctx) {
  const acl::User* u = UsersOf(ctx).Find(ctx.argv[2]);
  if (u == nullptr) {
    ctx.reply.Error("ERR User '" + std::string(UpToNul(ctx.argv[2])) + "' not found");
    return;
  }
  std::span<const std::string_view> target = ctx.argv.subspan(3);
  const CommandSpec* cmd = CommandRegistry::Get().Find(target[0]);
  if (cmd != nullptr && !cmd->subcommands.empty() && target.size() >= 2) {
    const CommandSpec* container = cmd;
    cmd = nullptr;
    for (const CommandSpec& s : container->subcommands) {
      if (EqualsIgnoreCase(s.name, target[1])) cmd = &s;
    }
  }
  if (cmd == nullptr) {
    ctx.reply.Error("ERR Command '" + std::string(UpToNul(target[0])) + "' not found");
    return;
  }
  const int argc = static_cast<int>(target.size());
  if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
    ctx.reply.Error("ERR wrong number of arguments for '" + cmd->fullname + "' command");
    return;
  }
  int pos = 0;
  switch (u->Check(*cmd, target, &pos)) {
    case acl::Denied::kNone:
      ctx.reply.Ok();
      return;
    case acl::Denied::kCommand:
      ctx.reply.Bulk("This user has no permissions to run the '" + cmd->fullname + "' command");
      return;
    case acl::Denied::kKey:
      ctx.reply.Bulk("This user has no permissions to access the '" +
                     std::string(target[static_cast<size_t>(pos)]) + "' key");
      return;
    default:
      ctx.reply.Bulk("This user has no permissions to access the '" +
                     std::string(target[static_cast<size_t>(pos)]) + "' channel");
      return;
  }
}

constexpr std::string_view kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify users "
    "via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis "
    "configuration file set) in order to store users in the Redis configuration.";

void AclSave(CommandContext& ctx) {
  const std::string& file = ctx.config.aclfile;
  if (file.empty()) {
    ctx.reply.Error(kNoAclFile);
    return;
  }
  if (auto err = UsersOf(ctx).SaveFile(file)) {
    log::Warning("ACL SAVE: {}", *err);
    ctx.reply.Error(
        "ERR There was an error trying to save the ACLs. Please check the server logs for more "
        "information");
    return;
  }
  ctx.reply.Ok();
}

void AclLoad(CommandContext& ctx) {
  const std::string& file = ctx.config.aclfile;
  if (file.empty()) {
    ctx.reply.Error(kNoAclFile);
    return;
  }
  if (auto err = UsersOf(ctx).LoadFile(file)) {
    ctx.reply.Error("ERR " + *err);
    return;
  }
  ctx.reply.Ok();
}

void AclHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      ("    Returns whether the user can execute the given command without executing the "
       "command."),
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
  };
  ReplyRedisHelp(ctx, "ACL", kLines);
}

}  // namespace

void RegisterAcl(CommandRegistry& r) {
  using namespace spec;
  auto srv = [](std::string summary, std::string since, std::string complexity) {
    return Doc{std::move(summary), std::move(since), "server", std::move(complexity)};
  };
  constexpr uint32_t kAdmin = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSentinel;
  constexpr uint32_t kPlain = kCmdNoScript | kCmdLoading | kCmdStale | kCmdSentinel;
  const std::vector<std::string> admin = {"admin", "slow", "dangerous"};
  const std::vector<std::string> slow = {"slow"};
  r.Add(Container(
      "acl", {"slow"},
      srv("A container for Access List Control commands", "6.0.0", "Depends on subcommand."),
      {Cmd("cat", -2, kPlain, AclCat, slow,
           srv("List the ACL categories or the commands inside a category", "6.0.0",
               "O(1) since the categories and commands are a fixed set."),
           {Optional(Str("categoryname"))}),
       Cmd("deluser", -3, kAdmin, AclDelUser, admin,
           srv("Remove the specified ACL users and the associated rules", "6.0.0",
               "O(1) amortized time considering the typical user."),
           {Multiple(Str("username"))}),
       Cmd("dryrun", -4, kAdmin, AclDryRun, admin,
           srv("Returns whether the user can execute the given command without executing the "
               "command.",
               "7.0.0", "O(1)."),
           {Str("username"), Str("command"), Optional(Multiple(Str("arg")))}),
       Cmd("genpass", -2, kPlain, AclGenPass, slow,
           srv("Generate a pseudorandom secure password to use for ACL users", "6.0.0", "O(1)"),
           {Optional(Int("bits"))}),
       Cmd("getuser", 3, kAdmin, AclGetUser, admin,
           srv("Get the rules for a specific ACL user", "6.0.0",
               "O(N). Where N is the number of password, command and pattern rules that the "
               "user has."),
           {Str("username")}),
       Cmd("help", 2, kCmdLoading | kCmdStale | kCmdSentinel, AclHelp, slow,
           srv("Show helpful text about the different subcommands", "6.0.0", "O(1)")),
       Cmd("list", 2, kAdmin, AclList, admin,
           srv("List the current ACL rules in ACL config file format", "6.0.0",
               "O(N). Where N is the number of configured users.")),
       Cmd("load", 2, kAdmin, AclLoad, admin,
           srv("Reload the ACLs from the configured ACL file", "6.0.0",
               "O(N). Where N is the number of configured users.")),
       Cmd("log", -2, kAdmin, AclLog, admin,
           srv("List latest events denied because of ACLs in place", "6.0.0",
               "O(N) with N being the number of entries shown."),
           {Optional(OneOf("operation", {Int("count"), Token("reset", "RESET")}))}),
       Cmd("save", 2, kAdmin, AclSave, admin,
           srv("Save the current ACL rules in the configured ACL file", "6.0.0",
               "O(N). Where N is the number of configured users.")),
       Cmd("setuser", -3, kAdmin, AclSetUser, admin,
           srv("Modify or create the rules for a specific ACL user", "6.0.0",
               "O(N). Where N is the number of rules provided."),
           {Str("username"), Optional(Multiple(Str("rule")))}),
       Cmd("users", 2, kAdmin, AclUsers, admin,
           srv("List the username of all the configured ACL rules", "6.0.0",
               "O(N). Where N is the number of configured users.")),
       Cmd("whoami", 2, kPlain, AclWhoAmI, slow,
           srv("Return the name of the user associated to the current connection", "6.0.0",
               "O(1)"))}));
}

}  // namespace latch::commands
