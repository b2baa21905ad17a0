// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//
// MULTI opens the session's Transaction (transaction.h); the gate queues the
// client's commands into it and answers +QUEUED, and
// EXEC runs them back to back in one turn of the event loop: no other
// client's command can come in between, so the batch is atomic the way every
// single command is. The log brackets their effects with MULTI/EXEC records
// so a replay applies all or none. WATCH adds optimistic locking: EXEC does
// nothing (null reply) if a watched key was changed, expired or deleted since.
#include "server/commands/common.h"
#include "server/control.h"
#include "server/db_key.h"
#include "server/gate.h"
#include "server/watch.h"

namespace latch::commands {

void Multi(CommandContext& ctx) {
  if (ctx.session.multi.open()) {
    ctx.reply.Error("ERR MULTI calls can not be nested");
    return;
  }
  ctx.session.multi.Begin();
  ctx.reply.Ok();
}

void Discard(CommandContext& ctx) {
  if (!ctx.session.multi.open()) {
    ctx.reply.Error("ERR DISCARD without MULTI");
    return;
  }
  ctx.session.multi.Discard();
  ctx.clients().watches().UnwatchAll(ctx.session);
  ctx.reply.Ok();
}

void Exec(CommandContext& ctx) {
  Session& c = ctx.session;
  if (!c.multi.open()) {
    ctx.reply.Error("ERR EXEC without MULTI");
    return;
  }
  // A watched key whose TTL ran out counts as changed even if nobody has
  // touched it since: looking it up removes it, which notifies the watchers.
  for (const std::string& slot : c.multi.watched_keys) {
    ctx.store.Select(DbOf(slot));
    ctx.store.Find(KeyOf(slot), ctx.now);
  }
  ctx.store.Select(c.db);
  const bool failed = c.multi.failed();
  const bool touched = c.multi.watched_key_touched;
  const Transaction::Requests queued = c.multi.Take();
  ctx.clients().watches().UnwatchAll(c);
  if (failed) {
    ctx.reply.Error("EXECABORT Transaction discarded because of previous errors.");
    return;
  }
  if (touched) {
    ctx.reply.NullArray();  // a watched key changed: nothing runs
    return;
  }
  ctx.reply.Array(queued.size());
  // Each queued command goes through the gate again (its checks, the lease
  // policy), in this one turn of the loop, with one time snapshot.
  ctx.store.BeginTransaction();
  std::vector<std::string_view> argv;
  for (const auto& request : queued) {
    argv.assign(request.begin(), request.end());
    ctx.Call(argv, ctx.reply, CommandRunner::Origin::kExec);
  }
  ctx.store.EndTransaction();
}

void Watch(CommandContext& ctx) {
  if (ctx.session.multi.open()) {
    ctx.reply.Error("ERR WATCH inside MULTI is not allowed");
    return;
  }
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    // A key that is already expired counts as changed from the start only if
    // it is touched again; Find() removes it now, so the removal happens
    // before the watch begins.
    ctx.store.Find(ctx.argv[i], ctx.now);
    ctx.clients().watches().Watch(ctx.session, ctx.session.db, ctx.argv[i]);
  }
  ctx.reply.Ok();
}

void Unwatch(CommandContext& ctx) {
  ctx.clients().watches().UnwatchAll(ctx.session);
  ctx.reply.Ok();
}

// ---------------------------------------------------------------- registration

void RegisterTransactions(CommandRegistry& r) {
  using namespace spec;
  // ---- transactions
  auto tx = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "transactions", std::move(complexity)};
  };
  const uint32_t kTxFlags = kCmdNoScript | kCmdLoading | kCmdStale | kFast | kCmdAllowBusy;
  r.Add(Cmd("multi", 1, kTxFlags | kCmdTransactionControl, Multi, {"fast", "transaction"},
            tx("Start a transaction block", "1.2.0")));
  r.Add(Cmd("exec", 1,
            kCmdNoScript | kCmdLoading | kCmdStale | kCmdSkipSlowlog | kCmdTransactionControl, Exec,
            {"slow", "transaction"},
            tx("Execute all commands issued after MULTI", "1.2.0",
               "Depends on commands in the transaction")));
  r.Add(Cmd("discard", 1, kTxFlags | kCmdTransactionControl, Discard, {"fast", "transaction"},
            tx("Discard all commands issued after MULTI", "2.0.0",
               "O(N), when N is the number of queued commands")));
  r.Add(Keys(Cmd("watch", -2, kTxFlags | kCmdTransactionControl, Watch, {"fast", "transaction"},
                 tx("Monitor changes to keys to determine execution of a MULTI/EXEC block", "2.2.0",
                    "O(1) for every key."),
                 {Key("key", true)}),
             1, -1, 1, {"RO"}));
  r.Add(Cmd("unwatch", 1, kTxFlags, Unwatch, {"fast", "transaction"},
            tx("Forget about all watched keys", "2.2.0")));
}

}  // namespace latch::commands
