// WAIT and WAITAOF: a client asking how far its writes have got.
//
// latch has no replicas, so WAIT always counts 0 and answers at once (Redis
// waits for its timeout when asked for replicas that will never come; latch
// does not make the client wait for nothing). WAITAOF numlocal numreplicas
// timeout asks whether this client's writes are on disk: the log knows up
// to where it has fsynced (log/writer.h), and the session where its last
// write ended, so the answer is a real durability check for one node. When
// the answer is not there yet the client is parked (log_waits.cc) until the
// fsync covers its writes or the timeout passes.
#include "server/commands/common.h"
#include "server/control.h"
#include "server/parking.h"

namespace latch::commands {

namespace {

// A timeout in ms, as Redis's getTimeoutFromObjectOrReply parses it for
// these commands. Redis 7.2's WAITAOF also refuses one that would overflow
// when added to the current time (Redis 7.0's WAIT does not check).
std::optional<int64_t> TimeoutOrReply(CommandContext& ctx, std::string_view arg,
                                      bool check_overflow) {
  auto ms = ParseInt64(arg);
  if (!ms) {
    ctx.reply.Error("ERR timeout is not an integer or out of range");
    return std::nullopt;
  }
  if (*ms < 0) {
    ctx.reply.Error("ERR timeout is negative");
    return std::nullopt;
  }
  if (check_overflow && *ms > 0 && *ms > INT64_MAX - ctx.now.wall_ms) {
    ctx.reply.Error("ERR timeout is out of range");
    return std::nullopt;
  }
  return ms;
}

}  // namespace

void Wait(CommandContext& ctx) {
  if (!IntArgOrReply(ctx, ctx.argv[1])) return;
  if (!TimeoutOrReply(ctx, ctx.argv[2], false)) return;
  ctx.reply.Int(0);  // no replica acknowledged: there are none
}

void WaitAof(CommandContext& ctx) {
  // WAITAOF numlocal numreplicas timeout, with Redis 7.2's checks and texts.
  auto numlocal = ParseInt64(ctx.argv[1]);
  if (!numlocal) {
    ctx.reply.Error(kNotInteger);
    return;
  }
  if (*numlocal < 0 || *numlocal > 1) {
    ctx.reply.Error("ERR value is out of range, value must between 0 and 1");
    return;
  }
  auto numreplicas = ParseInt64(ctx.argv[2]);
  if (!numreplicas || *numreplicas < 0) {
    ctx.reply.Error("ERR value is out of range, must be positive");
    return;
  }
  auto timeout = TimeoutOrReply(ctx, ctx.argv[3], true);
  if (!timeout) return;
  const ServerControl::LogDurability log = ctx.persistence().log_durability();
  if (*numlocal > 0 && !log.enabled) {
    ctx.reply.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
    return;
  }
  // Everything this client wrote is on disk once the log's fsync reaches
  // where its last write ended (0 for a client that never wrote).
  const bool local = log.enabled && log.fsynced_end >= ctx.session.last_write_offset;
  // Satisfied already, or asked where a command may not block (inside MULTI
  // or a script): the answer is now.
  const bool satisfied = (local || *numlocal == 0) && *numreplicas == 0;
  if (satisfied || !ctx.may_block) {
    ctx.reply.Array(2);
    ctx.reply.Int(local ? 1 : 0);
    ctx.reply.Int(0);
    return;
  }
  ctx.parking().ParkForFsync(ctx.session, *numlocal > 0, *numreplicas,
                             *timeout > 0 ? SatAdd(ctx.now.mono, *timeout) : 0);
}

// ---------------------------------------------------------------- registration

void RegisterDurability(CommandRegistry& r) {
  using namespace spec;
  r.Add(Cmd("wait", 3, kCmdNoScript, Wait, {"slow", "connection"},
            Doc{"Wait for the synchronous replication of all the write commands sent in the "
                "context of the current connection",
                "3.0.0", "generic", "O(1)"},
            {Int("numreplicas"), Int("timeout")}));
  r.Add(Cmd("waitaof", 4, kCmdNoScript, WaitAof, {"slow", "connection"},
            Doc{"Blocks until all of the preceding write commands sent by the connection are "
                "written to the append-only file of the master and/or replicas",
                "7.2.0", "generic", "O(1)"},
            {Int("numlocal"), Int("numreplicas"), Int("timeout")}));
}

}  // namespace latch::commands
