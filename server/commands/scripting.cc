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
#include "server/known_scripts.h"

namespace latch::commands {

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
  RunKnownScript(*script, ctx, rest.first(n), rest.subspan(n), read_only);
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
  if (ctx.argv.size() > 3 || (ctx.argv.size() == 3 && !EqualsIgnoreCase(ctx.argv[2], "ASYNC") &&
                              !EqualsIgnoreCase(ctx.argv[2], "SYNC"))) {
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

// FCALL, FCALL_RO, FUNCTION: latch has no functions at all.
void NoScripting(CommandContext& ctx) {
  ctx.reply.Error(
      "ERR latch runs no scripts or functions. To release a lock use DELIFEQ key token (or "
      "DELEX key IFEQ token); to renew it use SET key token IFEQ token PX ms.");
}

}  // namespace latch::commands
