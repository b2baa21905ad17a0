// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//
// MULTI queues a client's commands (Server::Dispatch answers +QUEUED) and
// EXEC runs them back to back in one turn of the event loop: no other
// client's command can come in between, so the batch is atomic the way every
// single command is. The log brackets their effects with MULTI/EXEC records
// so a replay applies all or none. WATCH adds optimistic locking: EXEC does
// nothing (null reply) if a watched key was changed, expired or deleted since.
#include "server/commands/common.h"
#include "server/connection.h"
#include "server/effects.h"

namespace latch::commands {

namespace {

void ResetTransaction(Connection& c) {
  c.in_multi = false;
  c.multi_failed = false;
  c.queued.clear();
}

}  // namespace

void Multi(CommandContext& ctx) {
  if (ctx.client.in_multi) {
    ctx.reply.Error("ERR MULTI calls can not be nested");
    return;
  }
  ResetTransaction(ctx.client);
  ctx.client.in_multi = true;
  ctx.reply.Ok();
}

void Discard(CommandContext& ctx) {
  if (!ctx.client.in_multi) {
    ctx.reply.Error("ERR DISCARD without MULTI");
    return;
  }
  ResetTransaction(ctx.client);
  ctx.server.UnwatchAll(ctx.client);
  ctx.reply.Ok();
}

void Exec(CommandContext& ctx) {
  Connection& c = ctx.client;
  if (!c.in_multi) {
    ctx.reply.Error("ERR EXEC without MULTI");
    return;
  }
  // A watched key whose TTL ran out counts as changed even if nobody has
  // touched it since: looking it up removes it, which notifies the watchers.
  for (const std::string& key : c.watched_keys) ctx.db.Find(key, ctx.now.mono);
  std::vector<std::vector<std::string>> queued = std::move(c.queued);
  bool failed = c.multi_failed;
  bool touched = c.watched_key_touched;
  ResetTransaction(c);
  ctx.server.UnwatchAll(c);
  if (failed) {
    ctx.reply.Error("EXECABORT Transaction discarded because of previous errors.");
    return;
  }
  if (touched) {
    ctx.reply.NullArray();  // a watched key changed: nothing runs
    return;
  }
  ctx.reply.Array(queued.size());
  ctx.effects.BeginTransaction();
  std::vector<std::string_view> argv;
  for (const auto& request : queued) {
    argv.assign(request.begin(), request.end());
    ctx.server.Dispatch(c, argv, ctx.now);
  }
  ctx.effects.EndTransaction();
}

void Watch(CommandContext& ctx) {
  if (ctx.client.in_multi) {
    ctx.reply.Error("ERR WATCH inside MULTI is not allowed");
    return;
  }
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    // A key that is already expired counts as changed from the start only if
    // it is touched again; Find() removes it now, so the removal happens
    // before the watch begins.
    ctx.db.Find(ctx.argv[i], ctx.now.mono);
    ctx.server.WatchKey(ctx.client, ctx.argv[i]);
  }
  ctx.reply.Ok();
}

void Unwatch(CommandContext& ctx) {
  ctx.server.UnwatchAll(ctx.client);
  ctx.reply.Ok();
}

}  // namespace latch::commands
