// Scripting commands: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT, and the
// refusals for FCALL and FUNCTION.
//
// latch embeds no interpreter: a lock server should not run arbitrary code.
// It recognises the exact scripts of the well-known lock libraries (by the
// SHA1 of their bytes) and runs a native equivalent of each — see
// known_scripts.h. Any other script is refused with a pointer to the native
// commands that replace the usual lock scripts: compare-and-delete (DELIFEQ,
// DELEX IFEQ) and compare-and-renew (SET IFEQ).
//
// The known scripts are always "loaded": EVALSHA works without a SCRIPT LOAD
// or EVAL first, SCRIPT EXISTS answers 1 for them, and SCRIPT FLUSH (which
// succeeds) cannot forget them.
#include "server/commands/common.h"
#include "server/scripting/known_scripts.h"

namespace latch::commands {

using scripting::FindKnownScript;
using scripting::FindKnownScriptByText;
using scripting::KnownScript;

namespace {

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

// The reply to a script latch does not know. It starts as the refusals of
// older latch versions did ("latch runs no scripts.").
constexpr std::string_view kUnknownScript =
    "ERR latch runs no scripts. It recognises only the exact scripts of known lock libraries "
    "(SCRIPT HELP lists them) and runs native equivalents; this one is not among them. To "
    "release a lock use DELIFEQ key token (or DELEX key IFEQ token); to renew it use SET key "
    "token IFEQ token PX ms.";

// EVAL script numkeys key… arg…, EVALSHA sha1 numkeys key… arg…, and their
// _RO forms, with Redis 7.0's checks in Redis's order: an EVALSHA digest that
// is not 40 characters long is NOSCRIPT at once; then numkeys (an integer,
// not more than the arguments, not negative); then the script lookup.
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
  const KnownScript* script =
      by_sha ? FindKnownScript(ctx.argv[1]) : FindKnownScriptByText(ctx.argv[1]);
  if (script == nullptr) {
    ctx.reply.Error(by_sha ? kNoScript : kUnknownScript);
    return;
  }
  auto rest = ctx.argv.subspan(3);
  auto n = static_cast<size_t>(*numkeys);
  scripting::RunKnownScript(*script, ctx, rest.first(n), rest.subspan(n), read_only);
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

// SCRIPT LOAD text: the SHA1 of a known script (nothing is stored: the known
// scripts are built in); the unknown-script error for any other text.
void ScriptLoad(CommandContext& ctx) {
  const KnownScript* script = FindKnownScriptByText(ctx.argv[2]);
  if (script == nullptr) {
    ctx.reply.Error(kUnknownScript);
    return;
  }
  ctx.reply.Bulk(script->sha1);
}

// SCRIPT EXISTS sha1…: 1 or 0 for each, case-insensitively as Redis.
void ScriptExists(CommandContext& ctx) {
  ctx.reply.Array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    ctx.reply.Int(FindKnownScript(ctx.argv[i]) != nullptr ? 1 : 0);
  }
}

// SCRIPT FLUSH [ASYNC|SYNC]: OK. There is no cache to empty: the known
// scripts stay known.
void ScriptFlush(CommandContext& ctx) {
  if (ctx.argv.size() > 3 ||
      (ctx.argv.size() == 3 && !IsWord(ctx.argv[2], "ASYNC") && !IsWord(ctx.argv[2], "SYNC"))) {
    ctx.reply.Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    return;
  }
  ctx.reply.Ok();
}

// SCRIPT KILL: no script ever runs for long here (each known script is one
// native command), so there is never one to kill — Redis's reply when idle.
void ScriptKill(CommandContext& ctx) {
  ctx.reply.Error("NOTBUSY No scripts in execution right now.");
}

void ScriptHelp(CommandContext& ctx) {
  std::vector<std::string> lines = {
      "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "EXISTS <sha1> [<sha1> ...]",
      "    Return information about the existence of the scripts in the script cache.",
      "FLUSH [ASYNC|SYNC]",
      "    Does nothing: latch has no script cache, only its built-in known scripts.",
      "KILL",
      "    Kill the currently executing Lua script (there never is one).",
      "LOAD <script>",
      "    Return the SHA1 of a known script; any other script is refused.",
      "HELP",
      "    Prints this help.",
      "latch runs no Lua. It runs natively the known scripts of these lock libraries:",
      "    " + KnownScriptLibraries(),
      "Known scripts (sha1 library version name):",
  };
  for (const KnownScript& s : KnownScripts()) {
    lines.push_back("    " + std::string(s.sha1) + " " + std::string(s.library) + " " +
                    std::string(s.version) + " " + std::string(s.name));
  }
  lines.push_back(
      "Any other script is refused: use DELIFEQ key token (or DELEX key IFEQ token) to release "
      "a lock and SET key token IFEQ token PX ms to renew it.");
  ReplyHelp(ctx, lines);
}

// FUNCTION FLUSH [ASYNC|SYNC]: removes every function library. (The
// libraries themselves come with the Lua engine; until then there are none,
// and flushing them is the one FUNCTION subcommand that already means what
// it does on Redis: Redis's test suite starts every unit with it.)
void FunctionFlush(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  if (ctx.argv.size() == 3 && !IsWord(ctx.argv[2], "SYNC") && !IsWord(ctx.argv[2], "ASYNC")) {
    ctx.reply.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    return;
  }
  ctx.reply.Ok();
}

// FCALL, FCALL_RO, the other FUNCTION subcommands: no functions yet.
void NoScripting(CommandContext& ctx) {
  ctx.reply.Error(
      "ERR latch runs no scripts or functions. To release a lock use DELIFEQ key token (or "
      "DELEX key IFEQ token); to renew it use SET key token IFEQ token PX ms.");
}

// ---------------------------------------------------------------- registration

void RegisterScripting(CommandRegistry& r) {
  using namespace spec;
  // ---- scripting: no Lua; the known lock-library scripts run natively (see
  // scripting.cc and known_scripts.h). EVAL and EVALSHA are not flagged as
  // granting leases: each known script decides on the path it takes.
  auto script = [](std::string summary, std::string since,
                   std::string complexity = "Depends on the script") {
    return Doc{std::move(summary), std::move(since), "scripting", std::move(complexity)};
  };
  const std::string known =
      " latch runs no Lua: it recognises the exact scripts of known lock libraries and runs "
      "them natively: " +
      KnownScriptLibraries() + ".";
  const std::vector<ArgDoc> eval_args = {Str("script"), Int("numkeys"), Optional(Multiple(Key())),
                                         Optional(Multiple(Str("arg")))};
  const std::vector<ArgDoc> evalsha_args = {Str("sha1"), Int("numkeys"), Optional(Multiple(Key())),
                                            Optional(Multiple(Str("arg")))};
  const uint32_t kScriptFlags = kCmdNoScript | kCmdStale;
  r.Add(Cmd("eval", -3, kScriptFlags, Eval, {"slow", "scripting"},
            script("Execute a Lua script server side." + known, "2.6.0"), eval_args));
  r.Add(Cmd("evalsha", -3, kScriptFlags, EvalSha, {"slow", "scripting"},
            script("Execute a Lua script server side." + known, "2.6.0"), evalsha_args));
  r.Add(Cmd("eval_ro", -3, kScriptFlags | kRead, EvalRo, {"slow", "scripting"},
            script("Execute a read-only Lua script server side." + known, "7.0.0"), eval_args));
  r.Add(Cmd("evalsha_ro", -3, kScriptFlags | kRead, EvalShaRo, {"slow", "scripting"},
            script("Execute a read-only Lua script server side." + known, "7.0.0"), evalsha_args));
  r.Add(Container(
      "script", {"slow"},
      script("A container for Lua scripts management commands." + known, "2.6.0",
             "Depends on subcommand."),
      {Cmd("load", 3, kScriptFlags, ScriptLoad, {"slow", "scripting"},
           script("Load the specified Lua script into the script cache.", "2.6.0",
                  "O(N) with N being the length in bytes of the script body."),
           {Str("script")}),
       Cmd("exists", -3, kCmdNoScript, ScriptExists, {"slow", "scripting"},
           script("Check existence of scripts in the script cache.", "2.6.0",
                  "O(N) with N being the number of scripts to check (so checking a single "
                  "script is an O(1) operation)."),
           {Multiple(Str("sha1"))}),
       Cmd("flush", -2, kCmdNoScript, ScriptFlush, {"slow", "scripting"},
           script("Remove all the scripts from the script cache.", "2.6.0",
                  "O(N) with N being the number of scripts in cache"),
           {Optional(OneOf("async", {Token("async", "ASYNC"), Token("sync", "SYNC")}), "6.2.0")}),
       Cmd("kill", 2, kCmdNoScript | kCmdAllowBusy, ScriptKill, {"slow", "scripting"},
           script("Kill the script currently in execution.", "2.6.0", "O(1)")),
       Cmd("help", 2, kCmdLoading | kCmdStale, ScriptHelp, {"slow", "scripting"},
           script("Show helpful text about the different subcommands", "5.0.0", "O(1)"))}));
  r.Add(Cmd("fcall", -3, kCmdNoScript, NoScripting, {"slow", "scripting"},
            script("Invoke a function", "7.0.0"), eval_args));
  r.Add(Cmd("fcall_ro", -3, kCmdNoScript | kRead, NoScripting, {"slow", "scripting"},
            script("Invoke a read-only function", "7.0.0"), eval_args));
  r.Add(Container(
      "function", {"slow"}, script("A container for function commands", "7.0.0"),
      {Cmd("flush", -2, kCmdNoScript | kWrite, FunctionFlush, {"write", "slow", "scripting"},
           script("Deleting all functions", "7.0.0",
                  "O(N) where N is the number of functions deleted"),
           {Optional(OneOf("async", {Token("async", "ASYNC"), Token("sync", "SYNC")}))}),
       Cmd("load", -3, kCmdNoScript | kWrite, NoScripting, {"write", "slow", "scripting"},
           script("Create a function with the given arguments (name, code, description)", "7.0.0",
                  "O(1) (considering compilation time is redundant)"),
           {Optional(Token("replace", "REPLACE")), Str("function-code")})}));
}

}  // namespace latch::commands
