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
  size_t listeners = 0;
  for (auto& a : acceptors_) {
    uv_os_fd_t fd = -1;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(a.get()), &fd) == 0) {
      fds.push_back({fd, POLLIN, 0});
      ++listeners;
    }
  }
  std::vector<Connection*> conns;
  for (Connection* c = clients_head_; c != nullptr; c = c->next_) {
    if (c == &caller || c->closing() || !c->reading_ || c->blocked || c->stalled()) continue;
    fds.push_back({c->fd(), POLLIN, 0});
    conns.push_back(c);
  }
  const int ready_fds = fds.empty() ? 0 : ::poll(fds.data(), fds.size(), 0);
  if (ready_fds > 0) ReadWhileBusy(fds, listeners, conns);
  // The replies: every client but the script's own — those just written,
  // and those written before the script started in this same iteration of
  // the loop (a client waiting for one would otherwise wait for the script).
  std::vector<Connection*> flush;
  flush.swap(pending_flush_);
  for (Connection* c : flush) {
    if (c == &caller) {
      pending_flush_.push_back(c);
      continue;
    }
    if (!c->pending_flush_) continue;
    c->Flush();
  }
}

void Server::ReadWhileBusy(std::vector<pollfd>& fds, size_t listeners,
                           const std::vector<Connection*>& conns) {
  // Listeners first: a SHUTDOWN read below closes them.
  std::vector<uv_poll_t*> ready;
  for (size_t i = 0; i < listeners; ++i) {
    if (fds[i].revents != 0) ready.push_back(acceptors_[i].get());
  }
  for (uv_poll_t* p : ready) AcceptPending(p);
  for (size_t i = 0; i < conns.size(); ++i) {
    Connection* c = conns[i];
    if (fds[listeners + i].revents == 0 || c->closing() || !c->reading_) continue;
    uv_buf_t buf;
    Connection::OnAlloc(reinterpret_cast<uv_handle_t*>(c->handle()), Connection::kReadChunk, &buf);
    ssize_t n;
    if (buf.base == nullptr) {
      n = UV_ENOBUFS;
    } else {
      do {
        n = ::read(c->fd(), buf.base, buf.len);
      } while (n < 0 && errno == EINTR);
      if (n == 0) {
        n = UV_EOF;
      } else if (n < 0) {
        n = (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : uv_translate_sys_error(errno);
      }
    }
    Connection::OnRead(reinterpret_cast<uv_stream_t*>(c->handle()), n, &buf);
  }
}

}  // namespace latch
