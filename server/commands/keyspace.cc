// Keyspace commands: DBSIZE, FLUSHALL, FLUSHDB.
#include "server/commands/common.h"

namespace latch::commands {

void DbSize(CommandContext& ctx) {
  ctx.reply.Int(static_cast<int64_t>(ctx.store.size()));
}

// FLUSHALL / FLUSHDB [ASYNC|SYNC]: every key goes (a release of every lock).
void FlushAll(CommandContext& ctx) {
  if (ctx.argv.size() > 2 ||
      (ctx.argv.size() == 2 && !IsWord(ctx.argv[1], "ASYNC") && !IsWord(ctx.argv[1], "SYNC"))) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  ctx.store.Clear();
  ctx.reply.Ok();
}

// ---------------------------------------------------------------- registration

void RegisterKeyspace(CommandRegistry& r) {
  using namespace spec;
  auto srv = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "server", std::move(complexity)};
  };
  r.Add(Cmd("dbsize", 1, kRead | kFast, DbSize, {"keyspace", "read", "fast"},
            srv("Return the number of keys in the selected database", "1.0.0")));
  const ArgDoc flush_type =
      Optional(OneOf("flush-type", {Token("async", "ASYNC"), Token("sync", "SYNC")}));
  r.Add(Cmd("flushall", -1, kWrite, FlushAll, {"keyspace", "write", "slow", "dangerous"},
            srv("Remove all keys from all databases", "1.0.0",
                "O(N) where N is the total number of keys in all databases"),
            {flush_type}));
  r.Add(Cmd("flushdb", -1, kWrite, FlushAll, {"keyspace", "write", "slow", "dangerous"},
            srv("Remove all keys from the current database", "1.0.0",
                "O(N) where N is the number of keys in the selected database"),
            {flush_type}));
}

}  // namespace latch::commands
