// Scripting commands. latch embeds no interpreter: a lock server should not
// run arbitrary code. What Redis users do with Lua, latch does natively:
// compare-and-delete (DELIFEQ, DELEX IFEQ) and compare-and-renew (SET IFEQ).
#include "server/commands/common.h"

namespace latch::commands {

void NoScripting(CommandContext& ctx) {
  ctx.reply.Error(
      "ERR latch runs no scripts. To release a lock use DELIFEQ key token (or DELEX key IFEQ "
      "token); to renew it use SET key token IFEQ token PX ms.");
}

}  // namespace latch::commands
