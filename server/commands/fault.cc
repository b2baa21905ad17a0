// FAULT: the test bench's fault injection, driven by any client in any
// language (server/faults.h says what each fault does and why).
//
//   FAULT CLOCK RATE <factor>          FAULT CLOCK JUMP <ms>
//   FAULT WALLCLOCK OFFSET <ms>
//   FAULT DELAY <ms> [COMMAND name] [CLIENT name] [COUNT n]        → id
//   FAULT DROP [COMMAND name] [CLIENT name] [PROBABILITY p] [COUNT n] → id
//   FAULT PARTITION <client-name> [REFUSE | STALL]                 → id
//   FAULT LIST                         FAULT CLEAR [id]
//
// Refused unless the node was started with enable-fault-injection yes: a
// production node cannot be turned into a faulty one by a client.
#include "server/commands/common.h"
#include "server/control.h"
#include "server/faults.h"

namespace latch::commands {

namespace {

constexpr std::string_view kDisabled =
    "ERR FAULT is disabled: start the server with 'enable-fault-injection yes' (test benches "
    "only; it cannot be set at run time)";

bool EnabledOrReply(CommandContext& ctx) {
  if (ctx.admin().config().enable_fault_injection) return true;
  ctx.reply.Error(kDisabled);
  return false;
}

void ReplyResult(CommandContext& ctx, const std::optional<std::string>& err) {
  if (err) {
    ctx.reply.Error(*err);
  } else {
    ctx.reply.Ok();
  }
}

// The options DELAY and DROP share, from argv[first] on: COMMAND, CLIENT,
// COUNT and (DROP only) PROBABILITY. False after replying with the error.
bool ParseRuleOptions(CommandContext& ctx, size_t first, Faults::Rule& rule) {
  for (size_t i = first; i < ctx.argv.size(); i += 2) {
    if (i + 1 >= ctx.argv.size()) {
      ctx.reply.Error(kSyntaxError);
      return false;
    }
    std::string_view opt = ctx.argv[i], value = ctx.argv[i + 1];
    if (IsWord(opt, "COMMAND")) {
      rule.command = ToLower(value);
    } else if (IsWord(opt, "CLIENT")) {
      rule.client = std::string(value);
    } else if (IsWord(opt, "COUNT")) {
      auto n = ParseInt64(value);
      if (!n || *n < 0) {
        ctx.reply.Error(kNotInteger);
        return false;
      }
      rule.count = static_cast<uint64_t>(*n);
    } else if (IsWord(opt, "PROBABILITY") && rule.kind == Faults::Rule::kDrop) {
      auto p = ParseDouble(value);
      if (!p || *p < 0 || *p > 1) {
        ctx.reply.Error("ERR PROBABILITY must be between 0 and 1");
        return false;
      }
      rule.probability = *p;
    } else {
      ctx.reply.Error(kSyntaxError);
      return false;
    }
  }
  return true;
}

}  // namespace

void FaultClock(CommandContext& ctx) {
  if (!EnabledOrReply(ctx)) return;
  std::string_view what = ctx.argv[2];
  if (IsWord(what, "RATE")) {
    // A lease clock running at `factor` times real speed: drift.
    auto rate = ParseDouble(ctx.argv[3]);
    if (!rate) {
      ctx.reply.Error("ERR value is not a valid float");
      return;
    }
    ReplyResult(ctx, ctx.bench().faults().ClockRate(*rate));
  } else if (IsWord(what, "JUMP")) {
    // Time skipped: every lease is that much closer to its end at once.
    auto ms = IntArgOrReply(ctx, ctx.argv[3]);
    if (!ms) return;
    ReplyResult(ctx, ctx.bench().faults().ClockJump(*ms));
  } else {
    ctx.reply.Error(kSyntaxError);
  }
}

void FaultWallclock(CommandContext& ctx) {
  if (!EnabledOrReply(ctx)) return;
  if (!IsWord(ctx.argv[2], "OFFSET")) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  auto ms = IntArgOrReply(ctx, ctx.argv[3]);
  if (!ms) return;
  ReplyResult(ctx, ctx.bench().faults().WallOffset(*ms));
}

void FaultDelay(CommandContext& ctx) {
  if (!EnabledOrReply(ctx)) return;
  Faults::Rule rule;
  rule.kind = Faults::Rule::kDelay;
  auto ms = IntArgOrReply(ctx, ctx.argv[2]);
  if (!ms) return;
  if (*ms < 0 || *ms > 3'600'000) {
    ctx.reply.Error("ERR the delay must be between 0 and 3600000 ms");
    return;
  }
  rule.delay_ms = *ms;
  if (!ParseRuleOptions(ctx, 3, rule)) return;
  ctx.reply.Int(static_cast<int64_t>(ctx.bench().faults().Add(rule)));
}

void FaultDrop(CommandContext& ctx) {
  if (!EnabledOrReply(ctx)) return;
  Faults::Rule rule;
  rule.kind = Faults::Rule::kDrop;
  if (!ParseRuleOptions(ctx, 2, rule)) return;
  ctx.reply.Int(static_cast<int64_t>(ctx.bench().faults().Add(rule)));
}

void FaultPartition(CommandContext& ctx) {
  if (!EnabledOrReply(ctx)) return;
  Faults::Rule rule;
  rule.kind = Faults::Rule::kPartition;
  rule.client = std::string(ctx.argv[2]);
  if (rule.client.empty()) {
    ctx.reply.Error("ERR the client name must not be empty");
    return;
  }
  if (ctx.argv.size() == 4) {
    if (IsWord(ctx.argv[3], "STALL")) {
      rule.stall = true;
    } else if (!IsWord(ctx.argv[3], "REFUSE")) {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  } else if (ctx.argv.size() > 4) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  ctx.reply.Int(static_cast<int64_t>(ctx.bench().faults().Add(rule)));
}

void FaultList(CommandContext& ctx) {
  if (!EnabledOrReply(ctx)) return;
  std::vector<std::string> lines = ctx.bench().faults().List();
  ctx.reply.Array(lines.size());
  for (const std::string& line : lines) ctx.reply.Bulk(line);
}

void FaultClear(CommandContext& ctx) {
  if (!EnabledOrReply(ctx)) return;
  std::optional<uint64_t> id;
  if (ctx.argv.size() == 3) {
    auto n = ParseInt64(ctx.argv[2]);
    if (!n || *n <= 0) {
      ctx.reply.Error(kNotInteger);
      return;
    }
    id = static_cast<uint64_t>(*n);
  } else if (ctx.argv.size() > 3) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  if (!ctx.bench().faults().Clear(id)) {
    ctx.reply.Error("ERR no such fault");
    return;
  }
  ctx.reply.Ok();
}

void FaultHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      ("FAULT <subcommand> [<arg> [value] [opt] ...]. Subcommands are (enable-fault-injection "
       "yes):"),
      "CLOCK RATE <factor>",
      "    The lease clock runs at <factor> times real speed (2: a 2 s lease ends after 1 s).",
      "CLOCK JUMP <ms>",
      "    The lease clock skips <ms> forward: leases end without waiting.",
      "WALLCLOCK OFFSET <ms>",
      "    TIME and EXAT/PXAT see a wall clock <ms> away from the real one (PX leases do not).",
      "DELAY <ms> [COMMAND <name>] [CLIENT <name>] [COUNT <n>]",
      "    Matching replies leave <ms> later. Returns the fault's id.",
      "DROP [COMMAND <name>] [CLIENT <name>] [PROBABILITY <p>] [COUNT <n>]",
      "    Matching commands run, their reply is dropped and the connection closed.",
      "PARTITION <client-name> [REFUSE|STALL]",
      "    That client's connections are closed (REFUSE) or left unread (STALL).",
      "LIST",
      "    The faults in force.",
      "CLEAR [<id>]",
      "    End every fault (a clock jump is never undone), or the one with that id.",
      "HELP",
      "    Print this help.",
  };
  ReplyHelp(ctx, kLines);
}

void RegisterFaults(CommandRegistry& r) {
  using namespace spec;
  auto doc = [](std::string summary, std::string complexity = "O(1)") {
    return Doc{std::move(summary), "0.1.0", "server", std::move(complexity)};
  };
  constexpr uint32_t kFlags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;
  const std::vector<std::string> acl = {"admin", "slow", "dangerous"};
  ArgDoc matching_command = Optional(Str("command", "COMMAND"));
  ArgDoc matching_client = Optional(Str("client", "CLIENT"));
  ArgDoc count = Optional(Int("count", "COUNT"));
  r.Add(Container(
      "fault", {"slow"}, doc("A container for fault injection (latch test benches)"),
      {Cmd("clock", 4, kFlags, FaultClock, acl,
           doc("Make the lease clock run fast or slow, or jump forward"),
           {OneOf("change", {Double("factor", "RATE"), Int("milliseconds", "JUMP")})}),
       Cmd("wallclock", 4, kFlags, FaultWallclock, acl,
           doc("Shift the wall clock seen by TIME and EXAT/PXAT"), {Int("milliseconds", "OFFSET")}),
       Cmd("delay", -3, kFlags, FaultDelay, acl, doc("Hold matching replies for a while"),
           {Int("milliseconds"), matching_command, matching_client, count}),
       Cmd("drop", -2, kFlags, FaultDrop, acl,
           doc("Run matching commands but drop their replies and close the connection"),
           {matching_command, matching_client, Optional(Double("probability", "PROBABILITY")),
            count}),
       Cmd("partition", -3, kFlags, FaultPartition, acl,
           doc("Cut a named client off: close its connections, or stop reading them"),
           {Str("client-name"),
            Optional(OneOf("mode", {Token("refuse", "REFUSE"), Token("stall", "STALL")}))}),
       Cmd("list", 2, kFlags, FaultList, acl, doc("List the faults in force", "O(N)")),
       Cmd("clear", -2, kFlags, FaultClear, acl, doc("End every fault, or one", "O(N)"),
           {Optional(Int("id"))}),
       Cmd("help", 2, kCmdLoading | kCmdStale, FaultHelp, {"slow"},
           doc("Show helpful text about the different subcommands"))}));
}

}  // namespace latch::commands
