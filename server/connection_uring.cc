// A plain connection's bytes through the server's io_uring (`io-uring yes`,
// server/uring.h): the counterpart of connection.cc's OnAlloc/OnRead,
// TryWrite/StartWrite/OnWrite and uv_read_start/stop. Everything above the
// bytes — ProcessInput, Flush's reply hold and FAULT DELAY, back-pressure,
// the output and query buffer limits — is shared with the epoll path.
//
// Receiving: one multishot receive is armed while the connection reads
// (reading_); each completion's bytes are copied into the query buffer and
// its provided buffer goes straight back to the ring. Back-pressure cancels
// the receive; bytes whose completions were already posted are kept in the
// query buffer (never dropped) and run once output drains, as buffered
// requests do on the epoll path. A completion without IORING_CQE_F_MORE
// ends the receive: it is armed again if the connection still reads
// (ENOBUFS: the buffer ring ran dry for a moment).
//
// Sending: Flush moves the sendable output into inflight_ (a swap when it
// all goes, so the two buffers trade places without copying) and queues one
// send; the registry submits every connection's at once. A partial send
// queues the rest; nothing newer is sent before inflight_ is gone, so
// replies keep their order.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>

#include "server/clients.h"
#include "server/connection.h"
#include "server/log.h"
#include "server/stats.h"
#include "server/tls/session.h"
#include "server/uring.h"

namespace latch {

IoRing* Connection::ring() const {
  return tls_ ? nullptr : clients_.ring();
}

bool Connection::OnRingCompletion(IoRing& ring, void* owner, unsigned kind, int res,
                                  unsigned flags) {
  auto* c = static_cast<Connection*>(owner);
  // Reaped while this client's own request runs (a busy script serving the
  // others): its query buffer holds that request's arguments, its output
  // the reply being written. Later (IoRing delivers it again).
  if (c->in_input_) return false;
  if (kind == kRingRecv) {
    c->OnRingRecv(ring, res, flags);
  } else {
    c->OnRingSend(res);
  }
  return true;
}

void Connection::RingUpdateReadState(bool want) {
  if (want && !reading_) {
    if (ring_eof_) {
      // The client closed its side while reading was paused: now that it
      // would be read, the end of its input is (as OnRead's UV_EOF).
      Close();
      return;
    }
    reading_ = true;
    if (!recv_armed_) RingArmRecv();
  } else if (!want && reading_) {
    reading_ = false;
    if (recv_armed_) RingCancel(kRingRecv);
  }
}

void Connection::RingArmRecv() {
  IoRing& r = *ring();
  io_uring_sqe* sqe = r.Sqe(IoRing::Tag(this, kRingRecv));
  io_uring_prep_recv_multishot(sqe, fd(), nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = IoRing::kGroup;
  recv_armed_ = true;
  ++ring_ops_;
  r.OpStarted();
}

void Connection::RingCancel(unsigned kind) {
  // (Its own completion names nobody: user_data 0.)
  io_uring_prep_cancel64(ring()->Sqe(0), IoRing::Tag(this, kind), 0);
}

void Connection::RingStartSend(size_t len) {
  inflight_sent_ = 0;
  if (len == out_.size()) {
    inflight_.swap(out_);
    out_.clear();
  } else {
    inflight_.assign(out_, 0, len);
    out_.erase(0, len);
  }
  if (held_from != kNotHeld) held_from -= len;
  for (auto& d : delayed_) d.first -= len;
  write_in_flight_ = true;
  RingQueueSend();
}

void Connection::RingQueueSend() {
  IoRing& r = *ring();
  // (A send's length is 32 bits: a larger reply goes in several.)
  const size_t len = std::min<size_t>(inflight_.size() - inflight_sent_, INT_MAX);
  io_uring_sqe* sqe = r.Sqe(IoRing::Tag(this, kRingSend));
  io_uring_prep_send(sqe, fd(), inflight_.data() + inflight_sent_, len, MSG_NOSIGNAL);
  ++ring_ops_;
  r.OpStarted();
  ++host_.stats().total_writes_processed;
}

void Connection::RingOpEnded(IoRing& ring) {
  --ring_ops_;
  ring.OpEnded();
}

bool Connection::AppendInput(const char* data, size_t len) {
  if (rbuf_.size() - rbuf_end_ < len) {
    CompactInput();
    if (rbuf_.size() - rbuf_end_ < len) {
      // Grown as OnAlloc grows it: towards what the parser waits for, at
      // most doubling per read, so a header announcing 512 MB commits
      // memory only as the bytes come.
      const size_t have = query_buffer_size();
      const size_t missing = parser_.bytes_wanted() > have ? parser_.bytes_wanted() - have : 0;
      const size_t want = std::max({len, kReadChunk, std::min(missing, have)});
      try {
        rbuf_.reserve(rbuf_end_ + want);
        rbuf_.resize(rbuf_end_ + want);
      } catch (const std::bad_alloc&) {
        log::Warning(
            "Closing client id={} addr={}: out of memory for its query buffer ({} bytes "
            "wanted)",
            id(), addr, parser_.bytes_wanted());
        Close();
        return false;
      }
    }
  }
  std::memcpy(rbuf_.data() + rbuf_end_, data, len);
  rbuf_end_ += len;
  host_.stats().total_net_input_bytes += len;
  ++host_.stats().total_reads_processed;
  return true;
}

void Connection::OnRingRecv(IoRing& ring, int res, unsigned flags) {
  const bool more = (flags & IORING_CQE_F_MORE) != 0;
  bool got = false;
  if (IoRing::HasBuffer(flags)) {
    if (res > 0 && !closing_) got = AppendInput(ring.Buffer(flags), static_cast<size_t>(res));
    ring.ReturnBuffer(flags);
  }
  if (!more) {
    recv_armed_ = false;
    RingOpEnded(ring);
  }
  if (closing_) {
    // The last completion that could name it frees it (OnClose ran).
    if (ring_ops_ == 0 && handle_closed_) delete this;
    return;
  }
  if (res == 0) {
    // The end of the client's input: closed now if it is being read, as
    // OnRead does; otherwise once reading resumes (RingUpdateReadState).
    ring_eof_ = true;
    if (reading_) Close();
    return;
  }
  if (res < 0 && res != -ENOBUFS && res != -ECANCELED && res != -EINTR && res != -EAGAIN) {
    if (res != -ECONNRESET) log::Verbose("Reading from client {}: {}", addr, std::strerror(-res));
    Close();
    return;
  }
  if (got && reading_) ProcessInput();
  if (!closing_ && reading_ && !recv_armed_) RingArmRecv();
}

void Connection::OnRingSend(int res) {
  IoRing& r = *clients_.ring();
  RingOpEnded(r);
  if (closing_) {
    if (ring_ops_ == 0 && handle_closed_) delete this;
    return;
  }
  if (res < 0) {
    write_in_flight_ = false;
    log::Verbose("Error writing to client {}: {}", addr, std::strerror(-res));
    Close();
    return;
  }
  host_.stats().total_net_output_bytes += static_cast<uint64_t>(res);
  inflight_sent_ += static_cast<size_t>(res);
  if (inflight_sent_ < inflight_.size()) {
    RingQueueSend();  // the rest, submitted with this iteration's sends
    return;
  }
  write_in_flight_ = false;
  inflight_.clear();
  inflight_sent_ = 0;
  // Don't keep a huge buffer around after a big reply.
  if (inflight_.capacity() > (1u << 20)) inflight_ = {};
  // As OnWrite: what was produced meanwhile goes, and requests buffered
  // while reading paused run now that the backlog drained.
  Flush();
  if (!closing_ && query_buffer_size() > 0 && pending_output() < kPauseReadingAt) ProcessInput();
}

}  // namespace latch
