// Parked clients: WAITAOF's (kept by persistence.h: a request that asks for
// its writes to be on disk waits, without blocking the loop, until an fsync
// covers them — persistence hears of each completed fsync from the log
// writer — or its timeout passes, checked by the cron at hz granularity) and
// how any parked client goes on once answered: it reads no further request
// meanwhile, and the requests already in its buffer run on the next loop
// iteration, in order.
#include "protocol/reply_writer.h"
#include "server/connection.h"
#include "server/server.h"

namespace latch {

ServerControl::LogDurability Server::log_durability() const {
  return persistence_->durability();
}

void Server::ParkForFsync(Session& s, bool local, int64_t numreplicas, int64_t deadline) {
  // Every session the server hands to a command is one of its connections.
  persistence_->ParkForFsync(static_cast<Connection&>(s), local, numreplicas, deadline);
}

void Server::Unpark(Connection& c, size_t reply_start) {
  c.blocked = false;
  FinishReply(c, reply_start);
  c.NoteOutput();
  clients_.NeedsFlush(c);
  // Its next requests run on the next loop iteration (clients.h).
  if (c.query_buffer_size() > 0) clients_.ResumeSoon(c);
}

void Server::ForgetWaits(Connection& c) {
  // WAITAOF, and a reply held for the log.
  persistence_->Forget(c);
  // A waiter that disconnects leaves its queues: the next one moves up.
  waiters_.Forget(c);
}

}  // namespace latch
