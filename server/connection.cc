#include "server/connection.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <optional>

#include "protocol/reply_writer.h"
#include "server/acl/users.h"
#include "server/clients.h"
#include "server/config.h"
#include "server/faults.h"
#include "server/log.h"
#include "server/stats.h"
#include "server/tls/session.h"
#include "server/uring.h"

namespace latch {

namespace {
// TLS connections read ciphertext here (single-threaded loop: OnRead
// consumes it before the next read), then decrypt into their query buffer.
char tls_read_buffer[64 * 1024];
}  // namespace

Connection::Connection(ClientHost& host, uint64_t id)
    : Session(id), host_(host), clients_(host.clients()), config_(host.config()) {
  tcp_.data = this;
  write_req_.data = this;
}

Connection::~Connection() = default;

bool Connection::StartTls(SSL_CTX* ctx, TlsAuthClients auth) {
  std::string error;
  tls_ = tls::Session::Accept(ctx, auth, &error);
  if (!tls_) log::Warning("Cannot start TLS for client {}: {}", addr, error);
  return tls_ != nullptr;
}

size_t Connection::pending_output() const {
  return out_.size() + (inflight_.size() - inflight_sent_) + (tls_ ? tls_->pending_output() : 0);
}

Session::Buffers Connection::buffers() const {
  Buffers b;
  b.fd = fd();
  b.query = query_buffer_size();
  b.query_capacity = query_buffer_capacity();
  b.output = out_.size();
  b.output_pending = pending_output();
  b.output_capacity = out_.capacity();
  b.output_peak = std::max(output_peak_, out_.size());
  b.reading = reading_;
  return b;
}

int Connection::fd() const {
  uv_os_fd_t fd = -1;
  uv_fileno(reinterpret_cast<const uv_handle_t*>(&tcp_), &fd);
  return fd;
}

void Connection::Start() {
  created_ms = host_.clock().MonoMs();
  last_interaction_ms = created_ms;
  // As Redis: a new connection is the default user, logged in if that
  // user needs no password.
  authenticated = host_.acl_users().Default().nopass && host_.acl_users().Default().enabled;
  UpdateReadState();
}

void Connection::UpdateReadState() {
  if (closing_) return;
  // Stop reading while the client has a lot of unsent output (it is not
  // reading its replies) or once it is going away.
  bool want = !close_after_reply_ && !stalled_ && pending_output() < kPauseReadingAt;
  if (ring() != nullptr) {
    RingUpdateReadState(want);
    return;
  }
  if (want && !reading_) {
    if (uv_read_start(reinterpret_cast<uv_stream_t*>(&tcp_), OnAlloc, OnRead) == 0) reading_ = true;
  } else if (!want && reading_) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
    reading_ = false;
  }
}

void Connection::OnAlloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  auto* c = static_cast<Connection*>(h->data);
  if (c->tls_) {
    *buf = uv_buf_init(tls_read_buffer, sizeof(tls_read_buffer));
    return;
  }
  // Offer the free space at the end of the query buffer, growing it so a
  // large bulk the parser is waiting for arrives in few reads, but never by
  // more than what has arrived: a 30-byte header announcing 512 MB must not
  // make the server commit 512 MB before the bytes come (a few such
  // connections would exhaust memory). The buffer at most doubles per read.
  size_t have = c->query_buffer_size();
  size_t missing = c->parser_.bytes_wanted() > have ? c->parser_.bytes_wanted() - have : 0;
  size_t want = std::max(kReadChunk, std::min(missing, have));
  if (c->rbuf_.size() - c->rbuf_end_ < want) {
    c->CompactInput();
    if (c->rbuf_.size() - c->rbuf_end_ < want) {
      try {
        // Exactly this much: resize alone would double the capacity.
        c->rbuf_.reserve(c->rbuf_end_ + want);
        c->rbuf_.resize(c->rbuf_end_ + want);
      } catch (const std::bad_alloc&) {
        // Out of memory: an empty buffer makes libuv report UV_ENOBUFS to
        // OnRead, which closes this client; the server goes on.
        buf->base = nullptr;
        buf->len = 0;
        return;
      }
    }
  }
  buf->base = c->rbuf_.data() + c->rbuf_end_;
  buf->len = c->rbuf_.size() - c->rbuf_end_;
}

void Connection::CompactInput() {
  if (rbuf_start_ == 0) return;
  size_t n = rbuf_end_ - rbuf_start_;
  if (n > 0) std::memmove(rbuf_.data(), rbuf_.data() + rbuf_start_, n);
  rbuf_start_ = 0;
  rbuf_end_ = n;
}

void Connection::OnRead(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* c = static_cast<Connection*>(s->data);
  if (n < 0) {
    if (n == UV_ENOBUFS) {
      // No memory for its query buffer (OnAlloc): logged at most once a
      // second, with a count, so a burst does not flood the log.
      static int64_t last_log_ms = 0;
      static uint64_t since_log = 0;
      ++since_log;
      int64_t now = c->host_.clock().MonoMs();
      if (now - last_log_ms >= 1000) {
        log::Warning(
            "Closing client id={} addr={}: out of memory for its query buffer ({} bytes "
            "wanted; {} clients closed since the last report)",
            c->id(), c->addr, c->parser_.bytes_wanted(), since_log);
        last_log_ms = now;
        since_log = 0;
      }
    } else if (n != UV_EOF && n != UV_ECONNRESET) {
      log::Verbose("Reading from client {}: {}", c->addr, uv_strerror(static_cast<int>(n)));
    }
    c->Close();
    return;
  }
  if (n == 0) return;  // EAGAIN
  if (c->tls_) {
    c->OnTlsRead(buf->base, static_cast<size_t>(n));
    return;
  }
  c->rbuf_end_ += static_cast<size_t>(n);
  c->host_.stats().total_net_input_bytes += static_cast<uint64_t>(n);
  ++c->host_.stats().total_reads_processed;
  c->ProcessInput();
}

void Connection::ReadNow() {
  if (closing_ || !reading_) return;
  if (IoRing* r = ring()) {
    // Its bytes come only from the ring (a read(2) here could overtake
    // bytes the multishot receive already took): reap what arrived.
    r->SubmitAndReap();
    return;
  }
  uv_buf_t buf;
  OnAlloc(reinterpret_cast<uv_handle_t*>(&tcp_), kReadChunk, &buf);
  ssize_t n;
  if (buf.base == nullptr) {
    n = UV_ENOBUFS;
  } else {
    do {
      n = ::read(fd(), buf.base, buf.len);
    } while (n < 0 && errno == EINTR);
    if (n == 0) {
      n = UV_EOF;
    } else if (n < 0) {
      n = (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : uv_translate_sys_error(errno);
    }
  }
  OnRead(reinterpret_cast<uv_stream_t*>(&tcp_), n, &buf);
}

void Connection::OnTlsRead(const char* data, size_t len) {
  tls_->Feed(data, len);
  ++host_.stats().total_reads_processed;
  // Everything the bytes decrypt to goes to the query buffer now: no
  // plaintext stays hidden inside OpenSSL, so pausing reads (back-pressure)
  // and the query buffer limit work as on a plain connection.
  for (;;) {
    if (rbuf_.size() - rbuf_end_ < kReadChunk) {
      CompactInput();
      if (rbuf_.size() - rbuf_end_ < kReadChunk) {
        try {
          rbuf_.resize(rbuf_end_ + kReadChunk);
        } catch (const std::bad_alloc&) {
          log::Warning("Closing client id={} addr={}: out of memory for its query buffer", id(),
                       addr);
          Close();
          return;
        }
      }
    }
    size_t got = 0;
    auto status = tls_->Read(rbuf_.data() + rbuf_end_, rbuf_.size() - rbuf_end_, &got);
    if (status == tls::Session::Status::kError) {
      // A failed handshake (no certificate, a wrong CA, plaintext, garbage):
      // the alert OpenSSL wrote tells the client why, then the connection
      // closes. Logged as Redis logs it, at verbose level.
      log::Verbose("{}: {} (addr={} laddr={})",
                   tls_->handshake_done() ? "Error reading from client"
                                          : "Error accepting a client connection",
                   tls_->error(), addr, laddr);
      SendTlsRecords();
      Close();
      return;
    }
    if (status == tls::Session::Status::kClosed) {
      Close();  // close_notify: the client is done
      return;
    }
    if (got == 0) break;
    rbuf_end_ += got;
    host_.stats().total_net_input_bytes += got;
  }
  // Handshake messages (and session tickets) go out now; replies wait for
  // the end of the loop iteration as on a plain connection (Flush).
  if (!SendTlsRecords()) return;
  if (query_buffer_size() > 0) ProcessInput();
}

std::optional<size_t> Connection::TryWrite(char* data, size_t len) {
  uv_buf_t buf = uv_buf_init(data, static_cast<unsigned>(len));
  int n = uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1);
  ++host_.stats().total_writes_processed;
  if (n == UV_EAGAIN || n == UV_ENOSYS) n = 0;
  if (n < 0) {
    log::Verbose("Error writing to client {}: {}", addr, uv_strerror(n));
    Close();
    return std::nullopt;
  }
  return static_cast<size_t>(n);
}

bool Connection::SendTlsRecords() {
  if (closing_) return false;
  if (write_in_flight_) return true;  // OnWrite calls Flush, which sends them
  std::string records;
  tls_->TakeOutput(&records);
  if (records.empty()) return true;
  const std::optional<size_t> sent = TryWrite(records.data(), records.size());
  if (!sent) return false;
  const size_t written = *sent;
  if (written < records.size()) StartWrite(records, written, records.size() - written);
  return !closing_;
}

void Connection::ProcessInput() {
  const Config& config = config_;
  const TimeSnapshot now = host_.Now();
  // (A busy script reaping the ring defers this client's completions until
  // this returns: the parsed arguments point into the query buffer.)
  const bool was_in_input = in_input_;
  in_input_ = true;
  struct Restore {
    bool& flag;
    bool value;
    ~Restore() { flag = value; }
  } restore{in_input_, was_in_input};
  last_interaction_ms = now.mono;
  size_t warm = 0;       // requests ahead already warmed
  bool prefetch = true;  // false once the rest is not a pipeline
  // (A session parked by WAITAOF reads nothing more until it is answered.)
  while (rbuf_start_ < rbuf_end_ && !close_after_reply_ && !closing_ && !blocked) {
    // The test bench: a partitioned client's requests wait, unread.
    if (host_.faults().active() && host_.faults().Stalls(*this)) {
      stalled_ = true;
      break;
    }
    // A pipeline: the lookups of its next requests (up to 16) are warmed
    // together, so their cache misses overlap (prefetch.h); again once
    // those have run, while the read holds more.
    if (warm == 0 && prefetch && rbuf_end_ - rbuf_start_ > kPrefetchMinBytes) {
      warm = host_.Prefetch(*this,
                            std::string_view(rbuf_.data() + rbuf_start_, rbuf_end_ - rbuf_start_));
      prefetch = warm != 0;
    }
    resp::ParseLimits limits;
    // Values are stored with 32-bit lengths: nothing longer can be a value.
    limits.max_bulk_len = std::min<int64_t>(config.proto_max_bulk_len, UINT32_MAX);
    limits.unauthenticated = !authenticated;
    std::string_view input(rbuf_.data() + rbuf_start_, rbuf_end_ - rbuf_start_);
    auto result = parser_.Parse(input, limits);
    if (result == resp::RequestParser::Result::kNeedMore) break;
    if (result == resp::RequestParser::Result::kError) {
      // One error reply, then close once it is sent (Redis's behaviour;
      // under CLIENT REPLY OFF only the close).
      size_t before = out_.size();
      resp::ReplyWriter writer(&out_, resp);
      writer.set_error_observer(host_.error_observer());
      writer.Error(parser_.error());
      if (ReplySuppressed()) out_.resize(before);
      log::Verbose("Protocol error ({}) from client: id={} addr={}", parser_.error(), id(), addr);
      rbuf_start_ = rbuf_end_ = 0;
      CloseAfterReply();
      clients_.NeedsFlush(*this);
      break;
    }
    // The arguments point into the query buffer, which stays untouched
    // until the request has been executed.
    if (!parser_.args().empty()) {
      host_.Dispatch(*this, parser_.args(), now);
      // (Once on the registry's flush list, a pipeline's next requests need
      // not ask again: the check saves a call per request.)
      if (!pending_flush_) clients_.NeedsFlush(*this);
    }
    rbuf_start_ += parser_.consumed();
    if (warm > 0) --warm;
    if (!CheckOutputLimits()) return;
  }
  if (rbuf_start_ == rbuf_end_) rbuf_start_ = rbuf_end_ = 0;
  if (query_buffer_size() > static_cast<size_t>(config.client_query_buffer_limit)) {
    log::Warning("Closing client that reached max query buffer length: id={} addr={} qbuf={}", id(),
                 addr, query_buffer_size());
    Close();
    return;
  }
  // Give back memory after a large request.
  if (rbuf_end_ == 0 && rbuf_.size() > 4 * kReadChunk) {
    rbuf_.clear();
    rbuf_.shrink_to_fit();
  }
  UpdateReadState();
}

void Connection::Push(std::string_view frame) {
  if (closing_) return;
  const size_t start = out_.size();
  if (resp == 3 && !frame.empty() && frame[0] == '*') {
    out_ += '>';
    out_.append(frame.substr(1));
  } else {
    out_.append(frame);
  }
  if (clients_.executing() == this) own_pushes_.emplace_back(start, out_.size());
  NoteOutput();
  clients_.NeedsFlush(*this);
  CheckOutputLimits();
}

bool Connection::CheckOutputLimits() {
  // The limits of the client's class (Redis's getClientType): a session
  // that listens to anything is a pubsub client.
  const OutputBufferLimit& limit =
      subscribed() ? config_.client_output_buffer_limit_pubsub : config_.client_output_buffer_limit;
  if (limit.hard_bytes <= 0 && limit.soft_bytes <= 0) return true;  // the default: no limit
  size_t pending = pending_output();
  int64_t now = host_.clock().MonoMs();
  bool over = false;
  if (limit.hard_bytes > 0 && pending >= static_cast<size_t>(limit.hard_bytes)) over = true;
  if (limit.soft_bytes > 0 && pending >= static_cast<size_t>(limit.soft_bytes)) {
    if (output_soft_limit_since_ms == 0) output_soft_limit_since_ms = now;
    if (now - output_soft_limit_since_ms >= limit.soft_seconds * 1000) over = true;
  } else {
    output_soft_limit_since_ms = 0;
  }
  if (over) {
    log::Warning(
        "Client id={} addr={} scheduled to be closed ASAP for overcoming of output "
        "buffer limits.",
        id(), addr);
    Close();
    return false;
  }
  return true;
}

void Connection::Flush() {
  pending_flush_ = false;
  if (closing_) return;
  // Under appendfsync always, replies that report an effect leave only once
  // the log has it on disk; everything before them may go now.
  size_t sendable = out_.size();
  if (held_from != kNotHeld) {
    if (host_.ReplyIsDurable(held_until)) {
      held_from = kNotHeld;
      host_.OnHoldReleased(*this);
    } else {
      sendable = held_from;
      host_.OnHoldWaiting(*this);  // flushed again once the log has it
    }
  }
  if (!delayed_.empty()) {
    // FAULT DELAY: the first reply still waiting caps what may leave.
    uint64_t now = RealUs();
    while (!delayed_.empty() && delayed_.front().second <= now) delayed_.erase(delayed_.begin());
    if (!delayed_.empty()) sendable = std::min(sendable, delayed_.front().first);
  }
  if (tls_ && !write_in_flight_ && sendable > 0 && tls_->handshake_done()) {
    // TLS: the replies become records in the session's output (a memory
    // BIO takes them whole), sent by SendTlsRecords below.
    if (tls_->Write(out_.data(), sendable) != tls::Session::Status::kOk) {
      log::Verbose("Error writing to client {}: {}", addr, tls_->error());
      Close();
      return;
    }
    // INFO's total_net_output_bytes counts the replies, as Redis counts
    // what connWrite took (for TLS, plaintext), not the records.
    host_.stats().total_net_output_bytes += sendable;
    out_.erase(0, sendable);
    if (held_from != kNotHeld) held_from -= sendable;
    for (auto& d : delayed_) d.first -= sendable;
    if (out_.empty() && out_.capacity() > (1u << 20)) out_.shrink_to_fit();
  }
  if (tls_ && !write_in_flight_) {
    // Closing after this reply (QUIT…): close_notify follows it.
    if (close_after_reply_ && out_.empty() && !tls_shutdown_sent_) {
      tls_shutdown_sent_ = true;
      tls_->Shutdown();
    }
    if (!SendTlsRecords()) return;
  }
  if (!tls_ && !write_in_flight_ && sendable > 0 && ring() != nullptr) {
    // io_uring: one send queued, submitted with every other connection's.
    RingStartSend(sendable);
  } else if (!tls_ && !write_in_flight_ && sendable > 0) {
    // Try to hand everything to the kernel right now; only what does not
    // fit goes through an asynchronous uv_write.
    const std::optional<size_t> sent = TryWrite(out_.data(), sendable);
    if (!sent) return;
    const size_t written = *sent;
    host_.stats().total_net_output_bytes += written;
    if (written < sendable) StartWrite(out_, written, sendable - written);
    out_.erase(0, sendable);
    if (held_from != kNotHeld) held_from -= sendable;
    for (auto& d : delayed_) d.first -= sendable;
    // Don't keep a huge buffer around after a big reply.
    if (out_.empty() && out_.capacity() > (1u << 20)) out_.shrink_to_fit();
  }
  if (!write_in_flight_ && out_.empty() && close_after_reply_) {
    Close();
    return;
  }
  if (!CheckOutputLimits()) return;
  UpdateReadState();
}

void Connection::StartWrite(const std::string& from, size_t offset, size_t len) {
  inflight_.assign(from, offset, len);
  uv_buf_t buf = uv_buf_init(inflight_.data(), static_cast<unsigned>(inflight_.size()));
  int rc = uv_write(&write_req_, reinterpret_cast<uv_stream_t*>(&tcp_), &buf, 1, OnWrite);
  if (rc != 0) {
    log::Verbose("Error writing to client {}: {}", addr, uv_strerror(rc));
    inflight_.clear();
    Close();
    return;
  }
  write_in_flight_ = true;
}

void Connection::OnWrite(uv_write_t* req, int status) {
  auto* c = static_cast<Connection*>(req->data);
  c->write_in_flight_ = false;
  if (status == 0 && !c->tls_) c->host_.stats().total_net_output_bytes += c->inflight_.size();
  c->inflight_.clear();
  if (c->closing_) return;
  if (status < 0) {
    log::Verbose("Error writing to client {}: {}", c->addr, uv_strerror(status));
    c->Close();
    return;
  }
  c->Flush();
  // Reading may resume now that the backlog drained: process any requests
  // that were already buffered when reading paused.
  if (!c->closing_ && c->query_buffer_size() > 0 && c->pending_output() < kPauseReadingAt) {
    c->ProcessInput();
  }
}

uint64_t Connection::next_delay_due(uint64_t now) const {
  for (const auto& [from, due] : delayed_) {
    if (due > now) return due;
  }
  return 0;
}

void Connection::Unstall() {
  stalled_ = false;
  UpdateReadState();
}

void Connection::ProcessPending() {
  if (!closing_ && !stalled_ && !close_after_reply_ && query_buffer_size() > 0) ProcessInput();
}

void Connection::ReleaseIdleBuffers() {
  if (rbuf_start_ == rbuf_end_ && rbuf_.capacity() > 0) {
    rbuf_ = {};
    rbuf_start_ = rbuf_end_ = 0;
  }
  if (out_.empty() && !write_in_flight_ && out_.capacity() > 64) out_ = {};
  if (!write_in_flight_ && inflight_.capacity() > 64) inflight_ = {};
}

void Connection::Close() {
  if (closing_) return;
  closing_ = true;
  if (IoRing* r = ring()) {
    // Its ring operations end now (cancelled), before uv_close closes the
    // fd: they hold the socket open until then.
    if (recv_armed_) RingCancel(kRingRecv);
    if (write_in_flight_) RingCancel(kRingSend);
    r->Submit();
  } else if (reading_) {
    uv_read_stop(reinterpret_cast<uv_stream_t*>(&tcp_));
  }
  reading_ = false;
  host_.OnClientClosed(*this);
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), OnClose);
}

void Connection::OnClose(uv_handle_t* h) {
  auto* c = static_cast<Connection*>(h->data);
  c->handle_closed_ = true;
  // A ring operation's completion may still name it: the last one frees it.
  if (c->ring_ops_ > 0) return;
  delete c;
}

}  // namespace latch
