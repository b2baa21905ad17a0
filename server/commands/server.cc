// Server commands: TIME, INFO, SHUTDOWN, ROLE, BGREWRITEAOF, DEBUG.
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/io_faults.h"
#include "server/commands/common.h"
#include "server/control.h"
#include "server/gate.h"
#include "server/log.h"
#include "server/scripting/engine.h"
#include "server/types/list.h"

namespace latch::commands {

void Time(CommandContext& ctx) {
  int64_t us = ctx.admin().clock().WallUs();
  ctx.reply.Array(2);
  ctx.reply.Bulk(std::to_string(us / 1'000'000));
  ctx.reply.Bulk(std::to_string(us % 1'000'000));
}

void Info(CommandContext& ctx) {
  std::vector<std::string> sections;
  for (size_t i = 1; i < ctx.argv.size(); ++i) sections.push_back(ToLower(ctx.argv[i]));
  ctx.reply.Verbatim("txt", ctx.diagnostics().Info(sections, ctx.now));
}

// ---------------------------------------------------------------- BGREWRITEAOF

// Compacts the log in the background. Inside MULTI … EXEC the rewrite starts
// right after the transaction, so it never splits one (log/writer.h).
void BgRewriteAof(CommandContext& ctx) {
  if (auto err = ctx.persistence().StartRewrite(ctx.now)) {
    ctx.reply.Error("ERR " + *err);
    return;
  }
  ctx.reply.Simple("Background append only file rewriting started");
}

// ---------------------------------------------------------------- DEBUG

namespace {

// The errno values DEBUG FAULT-IO can inject: what a full disk, a quota and
// a failing device report.
int ErrnoByName(std::string_view name) {
  if (IsWord(name, "ENOSPC")) return ENOSPC;
  if (IsWord(name, "EIO")) return EIO;
  if (IsWord(name, "EDQUOT")) return EDQUOT;
  if (IsWord(name, "EROFS")) return EROFS;
  return 0;
}

}  // namespace

// Fault injection for tests and the chaos harness. Off unless
// enable-debug-command is yes (or local, for loopback clients).
void Debug(CommandContext& ctx) {
  DebugCommand mode = ctx.admin().config().enable_debug_command;
  if (mode == DebugCommand::kNo || (mode == DebugCommand::kLocal && !ctx.session.local)) {
    ctx.reply.Error(
        "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
        "you can run it from a local connection, otherwise you need to set this option in the "
        "configuration file, and then restart the server.");
    return;
  }
  std::string_view sub = ctx.argv[1];
  if (IsWord(sub, "POWERLOSS") && ctx.argv.size() == 2) {
    // A machine crash: whatever the log had not fsynced is gone.
    ctx.persistence().SimulatePowerLoss();
  }
  if (IsWord(sub, "PROTOCOL") && ctx.argv.size() == 3) {
    // One reply of each RESP type, as Redis's (the scripting tests read
    // them from Lua).
    std::string_view name = ctx.argv[2];
    resp::ReplySink& r = ctx.reply;
    if (IsWord(name, "string")) {
      r.Bulk("Hello World");
    } else if (IsWord(name, "integer")) {
      r.Int(12345);
    } else if (IsWord(name, "double")) {
      r.Double(3.141);
    } else if (IsWord(name, "bignum")) {
      r.BigNumber("1234567999999999999999999999999999999");
    } else if (IsWord(name, "null")) {
      r.Null();
    } else if (IsWord(name, "array") || IsWord(name, "set")) {
      if (IsWord(name, "array")) {
        r.Array(3);
      } else {
        r.Set(3);
      }
      for (int j = 0; j < 3; ++j) r.Int(j);
    } else if (IsWord(name, "map")) {
      r.Map(3);
      for (int j = 0; j < 3; ++j) {
        r.Int(j);
        r.Bool(j == 1);
      }
    } else if (IsWord(name, "attrib")) {
      // (latch writes no attributes: the reply that follows one.)
      r.Bulk("Some real reply following the attribute");
    } else if (IsWord(name, "push")) {
      if (!r.resp3()) {
        r.Error("ERR RESP2 is not supported by this command");
        return;
      }
      r.Push(2);
      r.Bulk("server-cpu-usage");
      r.Int(42);
      r.Bulk("Some real reply following the push reply");
    } else if (IsWord(name, "true") || IsWord(name, "false")) {
      r.Bool(IsWord(name, "true"));
    } else if (IsWord(name, "verbatim")) {
      r.Verbatim("txt", "This is a verbatim\nstring");
    } else {
      r.Error(
          "ERR Wrong protocol type name. Please use one of the following: "
          "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    }
    return;
  }
  if (IsWord(sub, "SET-DISABLE-DENY-SCRIPTS") && ctx.argv.size() == 3) {
    // Scripts may then call the commands Redis refuses in them (DEBUG…):
    // Redis's test suite uses it.
    ctx.scripting().SetScriptDenyDisabled(ParseInt64(ctx.argv[2]).value_or(0) != 0);
    ctx.reply.Ok();
    return;
  }
  if (IsWord(sub, "SLEEP") && ctx.argv.size() == 3) {
    // Blocks the whole server, like a long GC pause or a stalled host.
    auto secs = ParseDouble(ctx.argv[2]);
    if (!secs || *secs < 0) {
      ctx.reply.Error(kNotInteger);
      return;
    }
    ::usleep(static_cast<useconds_t>(*secs * 1e6));
    ctx.reply.Ok();
    return;
  }
  if (IsWord(sub, "QUICKLIST-PACKED-THRESHOLD") && ctx.argv.size() == 3) {
    // Elements of at least this size get a list node of their own (Redis's
    // plain nodes, types/list.h): Redis's own list tests lower it to 1 byte.
    auto bytes = ParseMemory(ctx.argv[2]);
    if (!bytes || *bytes < 0 || !ListValue::SetPackedThreshold(static_cast<uint64_t>(*bytes))) {
      ctx.reply.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb");
      return;
    }
    ctx.reply.Ok();
    return;
  }
  if (IsWord(sub, "WALLCLOCK") && ctx.argv.size() == 3) {
    // DEBUG WALLCLOCK <ms>: the wall clock now runs that far from the real
    // one, as after an operator's or NTP's step. Leases must not notice.
    auto ms = ParseInt64(ctx.argv[2]);
    if (!ms || *ms < -(int64_t{1} << 50) || *ms > (int64_t{1} << 50)) {
      ctx.reply.Error(kNotInteger);
      return;
    }
    if (!ctx.bench().SetWallOffsetMs(*ms)) {
      ctx.reply.Error("ERR this server's clock cannot be shifted");
      return;
    }
    log::Warning("DEBUG WALLCLOCK: the wall clock is now {} ms from the real one", *ms);
    ctx.reply.Ok();
    return;
  }
  if (IsWord(sub, "FAULT-IO") && (ctx.argv.size() == 3 || ctx.argv.size() == 4)) {
    // DEBUG FAULT-IO <log-write|log-fsync|state-write> <ENOSPC|EIO|EDQUOT|EROFS>
    // DEBUG FAULT-IO <target> OFF  |  DEBUG FAULT-IO OFF
    std::string_view target = ctx.argv[2];
    if (ctx.argv.size() == 3 && IsWord(target, "OFF")) {
      IoFaults::ClearAll();
      log::Warning("DEBUG FAULT-IO: every injected I/O error cleared");
      ctx.reply.Ok();
      return;
    }
    IoOp op;
    if (IsWord(target, "log-write")) {
      op = IoOp::kLogWrite;
    } else if (IsWord(target, "log-fsync")) {
      op = IoOp::kLogFsync;
    } else if (IsWord(target, "state-write")) {
      op = IoOp::kStateWrite;
    } else {
      ctx.reply.Error(
          "ERR DEBUG FAULT-IO: unknown target (log-write, log-fsync, state-write, OFF)");
      return;
    }
    if (ctx.argv.size() != 4) {
      ctx.reply.Error(kSyntaxError);
      return;
    }
    if (auto ms = ParseInt64(ctx.argv[3]); ms && *ms >= 0 && *ms <= 60000) {
      // A number: a slow disk, each operation delayed by that many ms.
      IoFaults::ArmDelay(op, static_cast<int>(*ms));
      log::Warning("DEBUG FAULT-IO: {} now takes {} ms longer", std::string(target), *ms);
      ctx.reply.Ok();
      return;
    }
    int err = IsWord(ctx.argv[3], "OFF") ? 0 : ErrnoByName(ctx.argv[3]);
    if (err == 0 && !IsWord(ctx.argv[3], "OFF")) {
      ctx.reply.Error("ERR DEBUG FAULT-IO: unknown error (ENOSPC, EIO, EDQUOT, EROFS or OFF)");
      return;
    }
    IoFaults::Arm(op, err);
    log::Warning("DEBUG FAULT-IO: {} now fails with {}", std::string(target),
                 err == 0 ? std::string("nothing (cleared)") : std::string(std::strerror(err)));
    ctx.reply.Ok();
    return;
  }
  if (IsWord(sub, "OBJECT") && ctx.argv.size() == 3) {
    DebugObject(ctx);
    return;
  }
  if (IsWord(sub, "RELOAD") && ctx.argv.size() == 2) {
    // Redis saves its RDB and loads it back; latch writes its dataset as a
    // rewrite does and replays that (Store::Reload).
    std::string error = ctx.store.Reload(ctx.now);
    if (!error.empty()) {
      ctx.reply.Error("ERR Error trying to load the RDB dump: " + error);
      return;
    }
    ctx.reply.Ok();
    return;
  }
  if (IsWord(sub, "HELP")) {
    static const char* kLines[] = {
        "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "OBJECT <key>",
        "    Show low level info about the `key` and associated value.",
        "RELOAD",
        "    Write the dataset as a log rewrite does and load it back.",
        "POWERLOSS",
        "    Simulate a machine crash: cut the log to what was fsynced and exit at once.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds> (decimals allowed).",
        "FAULT-IO <log-write|log-fsync|state-write> <ENOSPC|EIO|EDQUOT|EROFS|OFF>",
        "    Make that disk operation fail with that error until cleared (FAULT-IO OFF).",
        "FAULT-IO <log-write|log-fsync|state-write> <milliseconds>",
        "    Make that disk operation that much slower (0: normal speed).",
        "WALLCLOCK <milliseconds>",
        "    Run the wall clock that far from the real one (a clock step; 0: back).",
        "HELP",
        "    Print this help.",
    };
    ReplyHelp(ctx, kLines);
    return;
  }
  ctx.reply.Error("ERR unknown subcommand '" + std::string(sub.substr(0, 128)) +
                  "'. Try DEBUG HELP.");
}

// ---------------------------------------------------------------- SHUTDOWN

void Shutdown(CommandContext& ctx) {
  // SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT], with Redis 7.0's rules.
  // latch has no snapshots: SAVE and NOSAVE both mean "stop now"; the log is
  // written and fsynced either way, since every write it holds was
  // acknowledged to a client. Redis waits for lagging replicas before it
  // stops (NOW skips that, ABORT cancels it); latch has none, so a shutdown
  // is never in progress for ABORT to cancel.
  bool nosave = false, save = false, now = false, force = false, abort = false;
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    std::string_view a = ctx.argv[i];
    if (IsWord(a, "NOSAVE")) {
      nosave = true;
    } else if (IsWord(a, "SAVE")) {
      save = true;
    } else if (IsWord(a, "NOW")) {
      now = true;
    } else if (IsWord(a, "FORCE")) {
      force = true;
    } else if (IsWord(a, "ABORT")) {
      abort = true;
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  // While a script is busy only SHUTDOWN NOSAVE goes through (Redis's rule:
  // it stops the script, and the server).
  const scripting::LuaRun* run = ctx.scripting().scripts().running();
  if (run != nullptr && run->timed_out && !nosave) {
    ctx.reply.Error(
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
    return;
  }
  if ((abort && (nosave || save || now || force)) || (nosave && save)) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  if (abort) {
    ctx.reply.Error("ERR No shutdown in progress.");
    return;
  }
  // Like Redis, no reply on success: the connection closes as the server exits.
  ctx.admin().RequestShutdown();
}

// ---------------------------------------------------------------- ROLE

void Role(CommandContext& ctx) {
  // Every latch node is a master without replicas (RedLock's nodes are
  // independent): Redis's reply for that, the replication offset 0.
  ctx.reply.Array(3);
  ctx.reply.Bulk("master");
  ctx.reply.Int(0);
  ctx.reply.Array(0);
}

// ---------------------------------------------------------------- registration

void RegisterServer(CommandRegistry& r) {
  using namespace spec;
  auto srv = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "server", std::move(complexity)};
  };
  r.Add(Cmd("time", 1, kCmdLoading | kCmdStale | kFast, Time, {"fast"},
            srv("Return the current server time", "2.6.0")));
  r.Add(Cmd("info", -1, kCmdLoading | kCmdStale | kCmdSentinel, Info, {"slow", "dangerous"},
            srv("Get information and statistics about the server", "1.0.0"),
            {Optional(Multiple(Str("section")))}));
  r.Add(Cmd("bgrewriteaof", 1, kCmdAdmin | kCmdNoScript, BgRewriteAof,
            {"admin", "slow", "dangerous"},
            srv("Asynchronously rewrite the append-only file", "1.0.0")));
  r.Add(Cmd("debug", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdProtected, Debug,
            {"admin", "slow", "dangerous"},
            srv("Fault injection for tests (enable-debug-command)", "1.0.0"),
            {Str("subcommand"), Optional(Multiple(Str("arg")))}));
  r.Add(Cmd("shutdown", -1,
            kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdNoMulti | kCmdAllowBusy,
            Shutdown, {"admin", "slow", "dangerous"},
            srv("Synchronously flush the log to disk and then shut down the server", "1.0.0",
                "O(N) when saving, where N is the total number of keys"),
            {Optional(OneOf("nosave_save", {Token("nosave", "NOSAVE"), Token("save", "SAVE")})),
             Optional(Token("now", "NOW"), "7.0.0"), Optional(Token("force", "FORCE"), "7.0.0"),
             Optional(Token("abort", "ABORT"), "7.0.0")}));
  r.Add(Cmd("role", 1, kCmdNoScript | kCmdLoading | kCmdStale | kFast, Role,
            {"admin", "fast", "dangerous"},
            srv("Return the role of the instance in the context of replication", "2.8.12")));
}

}  // namespace latch::commands
