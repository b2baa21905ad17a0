// CONFIG GET / SET / RESETSTAT / REWRITE / HELP: the configuration registry
// (server/config.h) seen from a client, with Redis's replies and errors.
#include "server/config.h"
#include "common/glob.h"
#include "server/acl/users.h"
#include "server/commands/common.h"
#include "server/config_rewrite.h"
#include "server/control.h"
#include "server/log.h"

namespace latch::commands {

void ConfigGet(CommandContext& ctx) {
  // As Redis 7.0: a pattern without glob characters is an exact (case-
  // insensitive) name and is echoed as typed; a glob matches every name. Each
  // parameter appears once.
  std::vector<std::pair<std::string, const ConfigParam*>> found;
  auto seen = [&](const ConfigParam* p) {
    for (const auto& f : found) {
      if (f.second == p) return true;
    }
    return false;
  };
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    std::string_view pattern = ctx.argv[i];
    if (pattern.find_first_of("[*?") == std::string_view::npos) {
      const ConfigParam* p = FindConfigParam(pattern);
      if (p != nullptr && !seen(p)) found.emplace_back(std::string(pattern), p);
      continue;
    }
    for (const ConfigParam& p : ConfigParams()) {
      if (!seen(&p) && GlobMatch(pattern, p.name, true)) found.emplace_back(p.name, &p);
    }
  }
  ctx.reply.Map(found.size());
  for (const auto& [name, param] : found) {
    ctx.reply.Bulk(name);
    ctx.reply.Bulk(param->get(ctx.admin().config()));
  }
}

void ConfigSet(CommandContext& ctx) {
  // CONFIG SET name value [name value …]: all or nothing.
  if (ctx.argv.size() % 2 != 0) {
    ctx.reply.Error(kSyntaxError);  // what Redis 7.0 answers to an odd count
    return;
  }
  std::vector<const ConfigParam*> params;
  for (size_t i = 2; i < ctx.argv.size(); i += 2) {
    const ConfigParam* p = FindConfigParam(ctx.argv[i]);
    // A password is never shown in the slow log, as Redis.
    if (p != nullptr && p->name == "requirepass") ctx.Redact(i + 1);
    if (p == nullptr) {
      ctx.reply.Error("ERR Unknown option or number of arguments for CONFIG SET - '" +
                      std::string(UpToNul(ctx.argv[i])) + "'");
      return;
    }
    auto fail = [&](const std::string& why) {
      ctx.reply.Error("ERR CONFIG SET failed (possibly related to argument '" +
                      std::string(ctx.argv[i]) + "') - " + why);
    };
    if (!p->mutable_at_runtime) {
      fail("can't set immutable config");
      return;
    }
    if (std::find(params.begin(), params.end(), p) != params.end()) {
      fail("duplicate parameter");
      return;
    }
    params.push_back(p);
  }
  Config updated = ctx.admin().config();
  for (size_t k = 0; k < params.size(); ++k) {
    std::string_view value = ctx.argv[3 + 2 * k];
    std::vector<std::string> words;
    if (params[k]->arity == -1) {
      words = SplitArgs(value).value_or(std::vector<std::string>{});
      if (words.empty()) words.push_back("");
    } else {
      words.emplace_back(value);
    }
    if (auto err = params[k]->set(updated, words)) {
      ctx.reply.Error("ERR CONFIG SET failed (possibly related to argument '" +
                      std::string(ctx.argv[2 + 2 * k]) + "') - " + *err);
      return;
    }
  }
  if (auto err = CheckConfig(updated)) {
    // A combination the server could not run with (quarantine always
    // without a duration, …): the message's last line says why.
    std::string why = *err;
    why = why.substr(why.find_last_of('\n') + 1);
    ctx.reply.Error("ERR CONFIG SET failed - " + why);
    return;
  }
  uint32_t effects = 0;
  for (const ConfigParam* p : params) effects |= p->effects;
  if (auto err = ctx.admin().Reconfigure(updated, effects)) {
    // All or nothing: the server kept the old values.
    ctx.reply.Error("ERR CONFIG SET failed (possibly related to argument '" +
                    std::string(ctx.argv[2]) + "') - " + *err);
    return;
  }
  for (const ConfigParam* p : params) {
    log::Notice("CONFIG SET {} = {}", p->name,
                p->name == "requirepass" ||
                        p->name.ends_with("key-file-pass")  // (tls-*: keys' passphrases)
                    ? std::string("(hidden)")
                    : p->get(ctx.admin().config()));
  }
  ctx.reply.Ok();
}

void ConfigResetStat(CommandContext& ctx) {
  Stats& st = ctx.diagnostics().stats();
  st = Stats{};
  ctx.reply.Ok();
}

void ConfigRewrite(CommandContext& ctx) {
  // The running values back into the file the server was started with,
  // keeping its comments and order (config_rewrite.h).
  Config c = ctx.admin().config();
  if (c.config_file.empty()) {
    ctx.reply.Error("ERR The server is running without a config file");
    return;
  }
  // The users as they are now, as `user` lines (ACL LIST's words).
  c.users.clear();
  for (const auto& [name, u] : ctx.acl().acl_users().all()) {
    std::vector<std::string> words = {name};
    const std::string rules = u->Describe();
    for (size_t at = 0; at < rules.size();) {
      const size_t sp = rules.find(' ', at);
      words.push_back(rules.substr(at, sp - at));
      if (sp == std::string::npos) break;
      at = sp + 1;
    }
    c.users.push_back(std::move(words));
  }
  if (auto err = RewriteConfigFile(c.config_file, c)) {
    log::Warning("CONFIG REWRITE failed: {}", *err);
    ctx.reply.Error("ERR Rewriting config file: " + *err);
    return;
  }
  log::Notice("CONFIG REWRITE executed with success.");
  ctx.reply.Ok();
}

void ConfigHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Print this help.",
  };
  ReplyHelp(ctx, kLines);
}

// ---------------------------------------------------------------- registration

void RegisterConfig(CommandRegistry& r) {
  using namespace spec;
  auto srv = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "server", std::move(complexity)};
  };
  constexpr uint32_t kAdminFlags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;
  r.Add(Container(
      "config", {"slow"}, srv("A container for server configuration commands", "2.0.0"),
      {Cmd("get", -3, kAdminFlags, ConfigGet, {"admin", "slow", "dangerous"},
           srv("Get the values of configuration parameters", "2.0.0",
               "O(N) when N is the number of configuration parameters provided"),
           {Multiple(Str("parameter"))}),
       Cmd("set", -4, kAdminFlags, ConfigSet, {"admin", "slow", "dangerous"},
           srv("Set configuration parameters to the given values", "2.0.0",
               "O(N) when N is the number of configuration parameters provided"),
           {Multiple(Block("data", {Str("parameter"), Str("value")}))}),
       Cmd("resetstat", 2, kAdminFlags, ConfigResetStat, {"admin", "slow", "dangerous"},
           srv("Reset the stats returned by INFO", "2.0.0")),
       Cmd("rewrite", 2, kAdminFlags, ConfigRewrite, {"admin", "slow", "dangerous"},
           srv("Rewrite the configuration file with the in memory configuration", "2.8.0")),
       Cmd("help", 2, kCmdLoading | kCmdStale, ConfigHelp, {"slow"},
           srv("Show helpful text about the different subcommands", "5.0.0"))}));
}

}  // namespace latch::commands
