// Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, as
// Redis 7.0 has them (functions: functions.cc).
//
// A script is Lua 5.1 in Redis's sandbox (scripting/lua_state.h), and each
// redis.call it makes goes through the gate like the command sent alone
// (scripting/runner.h): the lease policy, max-lock-ttl, fencing and the lock
// waiters' queue hold for scripts exactly as for clients. The scripts of the
// well-known lock libraries run natively instead (scripting/known_scripts.h),
// with the same replies and log records.
//
// The script cache is Redis's: EVAL and SCRIPT LOAD add to it, SCRIPT FLUSH
// empties it, EVALSHA of a script not in it is NOSCRIPT (a client then sends
// EVAL or SCRIPT LOAD, as every library does with Redis).
#include "server/commands/common.h"
#include "server/scripting/engine.h"

namespace latch::commands {

using scripting::Engine;
using scripting::EvalScript;

namespace {

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

// EVAL script numkeys key… arg…, EVALSHA sha1 numkeys key… arg…, and their
// _RO forms, with Redis 7.0's checks in Redis's order: an EVALSHA digest that
// is not 40 characters long is NOSCRIPT at once; then numkeys (an integer,
// not more than the arguments, not negative); then the script lookup (EVAL
// compiles and caches a new script).
void EvalGeneric(CommandContext& ctx, bool by_sha, bool read_only) {
  if (by_sha && ctx.argv[1].size() != 40) {
    ctx.reply.Error(kNoScript);
    return;
  }
  auto numkeys = IntArgOrReply(ctx, ctx.argv[2]);
  if (!numkeys) return;
  int64_t available = static_cast<int64_t>(ctx.argv.size()) - 3;
  if (*numkeys > available) {
    ctx.reply.Error("ERR Number of keys can't be greater than number of args");
    return;
  }
  if (*numkeys < 0) {
    ctx.reply.Error("ERR Number of keys can't be negative");
    return;
  }
  Engine& engine = ctx.scripting().scripts();
  std::string_view sha = ctx.argv[1];
  if (!by_sha) {
    std::string error;
    const std::string* loaded = engine.Load(ctx.argv[1], &error);
    if (loaded == nullptr) {
      ctx.reply.Error(error);
      return;
    }
    sha = *loaded;
  }
  // (The cache's own copy of the SHA1, lower case: nothing allocated.)
  const std::string* key = nullptr;
  const EvalScript* script = engine.Find(sha, &key);
  if (script == nullptr) {
    ctx.reply.Error(kNoScript);
    return;
  }
  auto rest = ctx.argv.subspan(3);
  auto n = static_cast<size_t>(*numkeys);
  engine.RunEval(ctx, *key, *script, rest.first(n), rest.subspan(n), read_only);
}

}  // namespace

void Eval(CommandContext& ctx) {
  EvalGeneric(ctx, false, false);
}
void EvalSha(CommandContext& ctx) {
  EvalGeneric(ctx, true, false);
}
void EvalRo(CommandContext& ctx) {
  EvalGeneric(ctx, false, true);
}
void EvalShaRo(CommandContext& ctx) {
  EvalGeneric(ctx, true, true);
}

// SCRIPT LOAD script: compiles and caches it, replies its SHA1.
void ScriptLoad(CommandContext& ctx) {
  std::string error;
  const std::string* sha = ctx.scripting().scripts().Load(ctx.argv[2], &error);
  if (sha == nullptr) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Bulk(*sha);
}

// SCRIPT EXISTS sha1…: 1 or 0 for each, case-insensitively as Redis.
void ScriptExists(CommandContext& ctx) {
  Engine& engine = ctx.scripting().scripts();
  ctx.reply.Array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.Int(engine.Find(ctx.argv[i]) != nullptr ? 1 : 0);
  }
}

// SCRIPT FLUSH [ASYNC|SYNC]: empties the cache (a new Lua interpreter).
void ScriptFlush(CommandContext& ctx) {
  if (ctx.argv.size() > 3 ||
      (ctx.argv.size() == 3 && !IsWord(ctx.argv[2], "ASYNC") && !IsWord(ctx.argv[2], "SYNC"))) {
    ctx.reply.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return;
  }
  ctx.scripting().scripts().FlushScripts();
  ctx.reply.Ok();
}

// SCRIPT KILL: stops a busy script that has not written (engine.h).
void ScriptKill(CommandContext& ctx) {
  ctx.scripting().scripts().Kill(ctx, /*eval=*/true);
}

// SCRIPT DEBUG: latch has no Lua debugger; NO (the default) is accepted.
void ScriptDebug(CommandContext& ctx) {
  if (IsWord(ctx.argv[2], "NO")) {
    ctx.reply.Ok();
  } else if (IsWord(ctx.argv[2], "YES") || IsWord(ctx.argv[2], "SYNC")) {
    ctx.reply.Error("ERR latch does not provide the Lua debugger (SCRIPT DEBUG YES|SYNC)");
  } else {
    ctx.reply.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO");
  }
}

void ScriptHelp(CommandContext& ctx) {
  static const char* const kLines[] = {
      "DEBUG (YES|SYNC|NO)",
      "    Set the debug mode for subsequent scripts executed.",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Flush the Lua scripts cache. Very dangerous on replicas.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the scripts cache.",
      "    * SYNC: Synchronously flush the scripts cache.",
      "KILL",
      "    Kill the currently executing Lua script.",
      "LOAD <script>",
      "    Load a script into the scripts cache without executing it.",
  };
  ReplyRedisHelp(ctx, "SCRIPT", kLines);
}

// ---------------------------------------------------------------- registration

void RegisterFunctions(CommandRegistry& r);

void RegisterScripting(CommandRegistry& r) {
  using namespace spec;
  auto script = [](std::string summary, std::string since,
                   std::string complexity = "Depends on the script that is executed.") {
    return Doc{std::move(summary), std::move(since), "scripting", std::move(complexity)};
  };
  const std::vector<ArgDoc> eval_args = {Str("script"), Int("numkeys"), Optional(Multiple(Key())),
                                         Optional(Multiple(Str("arg")))};
  const std::vector<ArgDoc> evalsha_args = {Str("sha1"), Int("numkeys"), Optional(Multiple(Key())),
                                            Optional(Multiple(Str("arg")))};
  // EVAL and EVALSHA are not flagged as granting leases: each redis.call a
  // script makes is checked as the command itself.
  const uint32_t kEvalFlags = kCmdNoScript | kCmdStale | kCmdSkipMonitor;
  // The declared keys (numkeys at 2): what ACL key patterns check.
  r.Add(KeySpecs(Cmd("eval", -3, kEvalFlags, Eval, {"slow", "scripting"},
                     script("Execute a Lua script server side", "2.6.0"), eval_args),
                 0, 0, 0, {KeyNumSpec({"RW", "access", "update"}, 2)}));
  r.Add(KeySpecs(Cmd("evalsha", -3, kEvalFlags, EvalSha, {"slow", "scripting"},
                     script("Execute a Lua script server side", "2.6.0"), evalsha_args),
                 0, 0, 0, {KeyNumSpec({"RW", "access", "update"}, 2)}));
  r.Add(KeySpecs(Cmd("eval_ro", -3, kEvalFlags | kRead, EvalRo, {"slow", "scripting"},
                     script("Execute a read-only Lua script server side", "7.0.0"), eval_args),
                 0, 0, 0, {KeyNumSpec({"RO", "access"}, 2)}));
  r.Add(KeySpecs(Cmd("evalsha_ro", -3, kEvalFlags | kRead, EvalShaRo, {"slow", "scripting"},
                     script("Execute a read-only Lua script server side", "7.0.0"), evalsha_args),
                 0, 0, 0, {KeyNumSpec({"RO", "access"}, 2)}));
  r.Add(Container(
      "script", {"slow"},
      script("A container for Lua scripts management commands", "2.6.0", "Depends on subcommand."),
      {Cmd("debug", 3, kCmdNoScript, ScriptDebug, {"slow", "scripting"},
           script("Set the debug mode for executed scripts.", "3.2.0", "O(1)"),
           {OneOf("mode", {Token("yes", "YES"), Token("sync", "SYNC"), Token("no", "NO")})}),
       Cmd("exists", -3, kCmdNoScript, ScriptExists, {"slow", "scripting"},
           script("Check existence of scripts in the script cache.", "2.6.0",
                  "O(N) with N being the number of scripts to check (so checking a single "
                  "script is an O(1) operation)."),
           {Multiple(Str("sha1"))}),
       Cmd("flush", -2, kCmdNoScript, ScriptFlush, {"slow", "scripting"},
           script("Remove all the scripts from the script cache.", "2.6.0",
                  "O(N) with N being the number of scripts in cache"),
           {Optional(OneOf("async", {Token("async", "ASYNC"), Token("sync", "SYNC")}), "6.2.0")}),
       Cmd("help", 2, kCmdLoading | kCmdStale, ScriptHelp, {"slow", "scripting"},
           script("Show helpful text about the different subcommands", "5.0.0", "O(1)")),
       Cmd("kill", 2, kCmdNoScript | kCmdAllowBusy, ScriptKill, {"slow", "scripting"},
           script("Kill the script currently in execution.", "2.6.0", "O(1)")),
       Cmd("load", 3, kCmdNoScript | kCmdStale, ScriptLoad, {"slow", "scripting"},
           script("Load the specified Lua script into the script cache.", "2.6.0",
                  "O(N) with N being the length in bytes of the script body."),
           {Str("script")})}));
  RegisterFunctions(r);
}

}  // namespace latch::commands
