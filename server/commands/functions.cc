// Functions (Redis 7.0): FUNCTION LOAD/DELETE/LIST/FLUSH/DUMP/RESTORE/
// STATS/KILL/HELP and FCALL/FCALL_RO.
//
// A library is Lua code whose shebang names it (`#!lua name=mylib`) and
// which registers functions with redis.register_function; FCALL runs one as
// EVAL runs a script (scripting/engine.h). Libraries are data: each change
// is logged as its effect — FUNCTION LOAD REPLACE <code>, FUNCTION DELETE
// <name>, FUNCTION FLUSH (FUNCTION RESTORE as the loads it amounts to) — and
// a rewrite writes every library, so they survive a restart as keys do.
#include "common/glob.h"
#include "server/commands/common.h"
#include "server/scripting/engine.h"

namespace latch::commands {

using scripting::Engine;

namespace {

// FUNCTION LOAD [REPLACE] code
void FunctionLoad(CommandContext& ctx) {
  bool replace = false;
  size_t pos = 2;
  while (pos < ctx.argv.size() - 1) {
    std::string_view arg = ctx.argv[pos++];
    if (IsWord(arg, "REPLACE")) {
      replace = true;
      continue;
    }
    ctx.reply.Error("ERR Unknown option given: " + std::string(UpToNul(arg)));
    return;
  }
  if (pos >= ctx.argv.size()) {
    ctx.reply.Error("ERR Function code is missing");
    return;
  }
  std::string_view code = ctx.argv[pos];
  std::string error;
  auto name = ctx.scripting().scripts().LoadLibrary(code, replace, &error);
  if (!name) {
    ctx.reply.Error(error);
    return;
  }
  ctx.store.LogFunctionLoad(code);
  ctx.reply.Bulk(*name);
}

void FunctionDelete(CommandContext& ctx) {
  if (!ctx.scripting().scripts().DeleteLibrary(ctx.argv[2])) {
    ctx.reply.Error("ERR Library not found");
    return;
  }
  ctx.store.LogFunctionDelete(ctx.argv[2]);
  ctx.reply.Ok();
}

// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE]
void FunctionList(CommandContext& ctx) {
  bool with_code = false;
  std::optional<std::string_view> pattern;
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    std::string_view arg = ctx.argv[i];
    if (!with_code && IsWord(arg, "WITHCODE")) {
      with_code = true;
      continue;
    }
    if (!pattern && IsWord(arg, "LIBRARYNAME")) {
      if (i >= ctx.argv.size() - 1) {
        ctx.reply.Error("ERR library name argument was not given");
        return;
      }
      pattern = ctx.argv[++i];
      continue;
    }
    ctx.reply.Error("ERR Unknown argument " + std::string(UpToNul(arg)));
    return;
  }
  const Engine& engine = ctx.scripting().scripts();
  std::vector<const scripting::Library*> libs;
  for (const auto& [name, lib] : engine.libraries()) {
    if (pattern && !GlobMatch(*pattern, name, /*nocase=*/true)) continue;
    libs.push_back(&lib);
  }
  ctx.reply.Array(libs.size());
  for (const scripting::Library* lib : libs) {
    ctx.reply.Map(with_code ? 4 : 3);
    ctx.reply.Bulk("library_name");
    ctx.reply.Bulk(lib->name);
    ctx.reply.Bulk("engine");
    ctx.reply.Bulk("LUA");
    ctx.reply.Bulk("functions");
    ctx.reply.Array(lib->functions.size());
    for (const std::string& fname : lib->functions) {
      const scripting::Function* f = engine.FindFunction(fname);
      ctx.reply.Map(3);
      ctx.reply.Bulk("name");
      ctx.reply.Bulk(fname);
      ctx.reply.Bulk("description");
      if (f != nullptr && f->has_description) {
        ctx.reply.Bulk(f->description);
      } else {
        ctx.reply.Null();
      }
      ctx.reply.Bulk("flags");
      size_t n = 0;
      for (const auto& fl : scripting::kFlagNames) {
        if (f != nullptr && (f->flags & fl.flag)) ++n;
      }
      ctx.reply.Set(n);
      for (const auto& fl : scripting::kFlagNames) {
        if (f != nullptr && (f->flags & fl.flag)) ctx.reply.Simple(fl.name);
      }
    }
    if (with_code) {
      ctx.reply.Bulk("library_code");
      ctx.reply.Bulk(lib->code);
    }
  }
}

// FUNCTION FLUSH [ASYNC|SYNC]
void FunctionFlush(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  if (ctx.argv.size() == 3 && !IsWord(ctx.argv[2], "SYNC") && !IsWord(ctx.argv[2], "ASYNC")) {
    ctx.reply.Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    return;
  }
  ctx.scripting().scripts().FlushLibraries();
  ctx.store.LogFunctionFlush();
  ctx.reply.Ok();
}

void FunctionDump(CommandContext& ctx) {
  ctx.reply.Bulk(ctx.scripting().scripts().Dump());
}

// FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]
void FunctionRestore(CommandContext& ctx) {
  if (ctx.argv.size() > 4) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  std::string_view policy = "APPEND";
  if (ctx.argv.size() == 4) {
    policy = ctx.argv[3];
    if (!IsWord(policy, "APPEND") && !IsWord(policy, "REPLACE") && !IsWord(policy, "FLUSH")) {
      ctx.reply.Error(
          "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
      return;
    }
  }
  std::string error;
  auto codes = Engine::ParseDump(ctx.argv[2], &error);
  Engine& engine = ctx.scripting().scripts();
  if (!codes || !engine.Restore(*codes, UpToNul(policy), &error)) {
    ctx.reply.Error(error);
    return;
  }
  // Logged as what it did: a flush, then one load per library, together.
  Store::Atomic atomic(ctx.store);
  if (IsWord(policy, "FLUSH")) ctx.store.LogFunctionFlush();
  for (const std::string& code : *codes) ctx.store.LogFunctionLoad(code);
  ctx.reply.Ok();
}

void FunctionStats(CommandContext& ctx) {
  const Engine& engine = ctx.scripting().scripts();
  const scripting::LuaRun* run = engine.running();
  if (run != nullptr && run->eval) {
    ctx.reply.Error(
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
    return;
  }
  ctx.reply.Map(2);
  ctx.reply.Bulk("running_script");
  if (run == nullptr) {
    ctx.reply.Null();
  } else {
    const CommandContext& caller = run->client.ctx();
    ctx.reply.Map(3);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(run->name);
    ctx.reply.Bulk("command");
    ctx.reply.Array(caller.argv.size());
    for (std::string_view a : caller.argv) ctx.reply.Bulk(a);
    ctx.reply.Bulk("duration_ms");
    ctx.reply.Int((ctx.admin().clock().MonoUs() - run->start_us) / 1000);
  }
  ctx.reply.Bulk("engines");
  ctx.reply.Map(1);
  ctx.reply.Bulk("LUA");
  ctx.reply.Map(2);
  ctx.reply.Bulk("libraries_count");
  ctx.reply.Int(static_cast<int64_t>(engine.libraries().size()));
  ctx.reply.Bulk("functions_count");
  ctx.reply.Int(static_cast<int64_t>(engine.num_functions()));
}

void FunctionKill(CommandContext& ctx) {
  ctx.scripting().scripts().Kill(ctx, /*eval=*/false);
}

void FunctionHelp(CommandContext& ctx) {
  static const char* const kLines[] = {
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME "
      "argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored "
      "using FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a "
      "restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
      "abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
      "replace the old",
      "      libraries with the new libraries (notice that even on this option there is a "
      "chance of failure",
      "      in case of functions name collision with another library).",
  };
  ReplyRedisHelp(ctx, "FUNCTION", kLines);
}

// FCALL function numkeys key… arg… (and FCALL_RO), in Redis's order: the
// function, then numkeys.
void FcallGeneric(CommandContext& ctx, bool read_only) {
  Engine& engine = ctx.scripting().scripts();
  const scripting::Function* f = engine.FindFunction(ctx.argv[1]);
  if (f == nullptr) {
    ctx.reply.Error("ERR Function not found");
    return;
  }
  auto numkeys = ParseInt64(ctx.argv[2]);
  if (!numkeys) {
    ctx.reply.Error("ERR Bad number of keys provided");
    return;
  }
  int64_t available = static_cast<int64_t>(ctx.argv.size()) - 3;
  if (*numkeys > available) {
    ctx.reply.Error("ERR Number of keys can't be greater than number of args");
    return;
  }
  if (*numkeys < 0) {
    ctx.reply.Error("ERR Number of keys can't be negative");
    return;
  }
  auto rest = ctx.argv.subspan(3);
  auto n = static_cast<size_t>(*numkeys);
  engine.RunFunction(ctx, *f, rest.first(n), rest.subspan(n), read_only);
}

void Fcall(CommandContext& ctx) {
  FcallGeneric(ctx, false);
}

void FcallRo(CommandContext& ctx) {
  FcallGeneric(ctx, true);
}

}  // namespace

void RegisterFunctions(CommandRegistry& r) {
  using namespace spec;
  auto doc = [](std::string summary, std::string complexity) {
    return Doc{std::move(summary), "7.0.0", "scripting", std::move(complexity)};
  };
  const std::vector<ArgDoc> fcall_args = {
      Str("function"), Int("numkeys"), Optional(Multiple(Key())), Optional(Multiple(Str("arg")))};
  const uint32_t kFcallFlags = kCmdNoScript | kCmdStale | kCmdSkipMonitor;
  // The declared keys (numkeys at 2): what ACL key patterns check.
  r.Add(KeySpecs(
      Cmd("fcall", -3, kFcallFlags, Fcall, {"slow", "scripting"},
          doc("Invoke a function", "Depends on the function that is executed."), fcall_args),
      0, 0, 0, {KeyNumSpec({"RW", "access", "update"}, 2)}));
  r.Add(
      KeySpecs(Cmd("fcall_ro", -3, kFcallFlags | kRead, FcallRo, {"slow", "scripting"},
                   doc("Invoke a read-only function", "Depends on the function that is executed."),
                   fcall_args),
               0, 0, 0, {KeyNumSpec({"RO", "access"}, 2)}));
  r.Add(Container(
      "function", {"slow"}, doc("A container for function commands", "Depends on subcommand."),
      {Cmd("delete", 3, kCmdNoScript | kWrite, FunctionDelete, {"write", "slow", "scripting"},
           doc("Delete a function by name", "O(1)"), {Str("library-name")}),
       Cmd("dump", 2, kCmdNoScript, FunctionDump, {"slow", "scripting"},
           doc("Dump all functions into a serialized binary payload",
               "O(N) where N is the number of functions")),
       Cmd("flush", -2, kCmdNoScript | kWrite, FunctionFlush, {"write", "slow", "scripting"},
           doc("Deleting all functions", "O(N) where N is the number of functions deleted"),
           {Optional(OneOf("async", {Token("async", "ASYNC"), Token("sync", "SYNC")}))}),
       Cmd("help", 2, kCmdLoading | kCmdStale, FunctionHelp, {"slow", "scripting"},
           doc("Show helpful text about the different subcommands", "O(1)")),
       Cmd("kill", 2, kCmdNoScript | kCmdAllowBusy, FunctionKill, {"slow", "scripting"},
           doc("Kill the function currently in execution.", "O(1)")),
       Cmd("list", -2, kCmdNoScript, FunctionList, {"slow", "scripting"},
           doc("List information about all the functions",
               "O(N) where N is the number of functions"),
           {Optional(Pattern("library-name-pattern", "LIBRARYNAME")),
            Optional(Token("withcode", "WITHCODE"))}),
       Cmd("load", -3, kCmdNoScript | kWrite | kCmdDenyOom, FunctionLoad,
           {"write", "slow", "scripting"},
           doc("Create a function with the given arguments (name, code, description)",
               "O(1) (considering compilation time is redundant)"),
           {Optional(Token("replace", "REPLACE")), Str("function-code")}),
       Cmd("restore", -3, kCmdNoScript | kWrite | kCmdDenyOom, FunctionRestore,
           {"write", "slow", "scripting"},
           doc("Restore all the functions on the given payload",
               "O(N) where N is the number of functions on the payload"),
           {Str("serialized-value"),
            Optional(OneOf("policy", {Token("flush", "FLUSH"), Token("append", "APPEND"),
                                      Token("replace", "REPLACE")}))}),
       Cmd("stats", 2, kCmdNoScript | kCmdAllowBusy, FunctionStats, {"slow", "scripting"},
           doc("Return information about the function currently running (name, description, "
               "duration)",
               "O(1)"))}));
}

}  // namespace latch::commands
