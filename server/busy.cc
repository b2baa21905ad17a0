// Serving other clients while a script runs too long (Redis's
// processEventsWhileBlocked).
//
// A script runs inside a libuv callback: the read callback of its client,
// deep in Connection::ProcessInput → Server::Dispatch → the gate → EVAL.
// libuv's uv_run is not reentrant, so the loop cannot be run again from
// there. Instead, while a script is busy (past busy-reply-threshold; the Lua
// hook asks every 100,000 instructions), ServeWhileBusy does one pass of its
// own, without blocking:
//   1. poll(2) with a zero timeout on the listening sockets and on every
//      other client's socket (never the script's own client, whose request
//      is the script: Redis protects that client the same way);
//   2. new connections are accepted as the loop would (AcceptPending);
//   3. each readable client is read with read(2) into its query buffer and
//      its requests run as usual (Connection::OnRead): the gate answers
//      -BUSY to everything but the commands Redis allows then (SCRIPT KILL,
//      FUNCTION KILL, SHUTDOWN NOSAVE, AUTH, HELLO, MULTI…);
//   4. the replies are flushed (Connection::Flush: uv_try_write, and
//      uv_write for what does not fit, which the loop completes later) —
//      also those written before the script started, in the same iteration
//      of the loop: their clients may be waiting for them to send more.
// Under `io-uring yes`, step 3 is reaping the ring instead (its multishot
// receives took the bytes already; a read(2) could overtake them).
// libuv keeps its own watchers on these sockets (level-triggered): when the
// script ends and the loop runs again, a socket emptied here simply reads
// EAGAIN. The log is not flushed meanwhile (the script's records are an open
// transaction in its batch), so a reply that reports a write stays held as
// ever; nothing written while busy is acknowledged early.
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "server/connection.h"
#include "server/server.h"
#include "server/uring.h"

namespace latch {

void Server::EnterBusy(bool eval) {
  gate_.set_busy(eval ? 1 : 2);
}

void Server::LeaveBusy() {
  gate_.set_busy(0);
}

std::string Server::WriteRefusal() const {
  const aof::Writer* log = persistence_->log();
  if (log != nullptr && !log->write_ok()) return log->write_error();
  return {};
}

void Server::ServeWhileBusy(Session& caller) {
  std::vector<pollfd> fds;
  const size_t listeners = listeners_.AppendPollFds(fds);
  std::vector<Connection*> conns;
  clients_.ForEach([&](Connection& c) {
    if (&c == &caller || c.closing() || !c.reading() || c.blocked || c.stalled()) return;
    if (c.ring() != nullptr) return;  // served by the ring, below
    fds.push_back({c.fd(), POLLIN, 0});
    conns.push_back(&c);
  });
  const int ready_fds = fds.empty() ? 0 : ::poll(fds.data(), fds.size(), 0);
  if (ready_fds > 0) ReadWhileBusy(fds, listeners, conns);
  // io_uring clients: their bytes arrive as the ring's completions, in
  // order; the script's own client's wait until its request is done
  // (Connection::OnRingCompletion).
  if (IoRing* ring = clients_.ring()) ring->SubmitAndReap();
  // The replies: every client but the script's own — those just written,
  // and those written before the script started in this same iteration of
  // the loop (a client waiting for one would otherwise wait for the script).
  clients_.FlushPending(&caller);
}

void Server::ReadWhileBusy(std::vector<pollfd>& fds, size_t listeners,
                           const std::vector<Connection*>& conns) {
  // Listeners first: a SHUTDOWN read below closes them.
  listeners_.AcceptReady(fds, listeners);
  for (size_t i = 0; i < conns.size(); ++i) {
    if (fds[listeners + i].revents != 0) conns[i]->ReadNow();
  }
}

}  // namespace latch
