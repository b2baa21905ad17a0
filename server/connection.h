// One client connection: its socket, buffers and session state.
//
// The path of a request through a connection:
//   libuv read → bytes appended to the query buffer → the RESP parser cuts
//   complete requests out of it → Server::Dispatch runs each one, appending
//   its reply to the output buffer → at the end of the loop iteration the
//   server flushes the log batch, then calls Flush() on every connection
//   that has output, which sends all its replies with one write.
//
// Back-pressure: while a client has more unsent output than
// kPauseReadingAt, the server stops reading from it (its requests wait in the
// kernel), and resumes once the output drains. A client over its
// client-output-buffer-limit, or whose query buffer exceeds
// client-query-buffer-limit, is disconnected.
//
// Lifetime: a Connection owns its uv_tcp_t. Close() starts libuv's
// asynchronous close; the object deletes itself in the close callback, after
// any write in flight has been cancelled, so nothing is freed twice or early.
//
// Under `io-uring yes` (server/uring.h) a plain connection's reads and
// writes go through the server's io_uring instead of libuv's (the uv_tcp_t
// still owns the socket): a multishot receive stays armed while the
// connection reads, and Flush queues one send that the registry submits
// with every other connection's (connection_uring.cc). Such a connection is
// freed once both its handle is closed and no ring operation can still
// name it.
#pragma once

#include <uv.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_sink.h"
#include "protocol/request_parser.h"
#include "server/clock.h"
#include "server/session.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace latch {

enum class TlsAuthClients;
namespace tls {
class Session;
}

class ClientRegistry;
class Connection;
class IoRing;
class Faults;
struct Config;
struct Stats;
namespace acl {
class Users;
}

// What a connection asks of the server around it: the settings, the clocks,
// the counters, running a request (Server::Dispatch), the reply hold
// (persistence.h) and forgetting a closed client. The server implements it
// (the unit tests' in-process server is that server); the list of
// connections is the registry's (clients.h). Nothing else of the server is
// reachable from a connection.
class ClientHost {
 public:
  virtual const Config& config() const = 0;
  virtual const Clock& clock() const = 0;
  virtual Stats& stats() = 0;
  virtual Faults& faults() = 0;
  virtual acl::Users& acl_users() = 0;
  // The registry this connection belongs to.
  virtual ClientRegistry& clients() = 0;
  virtual TimeSnapshot Now() = 0;
  // Counts the error replies a connection writes itself (protocol errors).
  virtual resp::ReplySink::ErrorObserver* error_observer() = 0;
  virtual bool Dispatch(Connection& client, std::span<const std::string_view> argv,
                        TimeSnapshot now) = 0;
  // Warms what the requests at the front of `input` will look up
  // (prefetch.h), before they run one by one; returns how many requests it
  // looked at (0: not a pipeline).
  virtual size_t Prefetch(const Connection& client, std::string_view input) = 0;
  // The reply hold: whether output held up to log byte `until` may leave;
  // c's held reply left; it could not (flushed again once the log has it).
  virtual bool ReplyIsDurable(uint64_t until) const = 0;
  virtual void OnHoldReleased(Connection& c) = 0;
  virtual void OnHoldWaiting(Connection& c) = 0;
  // c is closing: the server forgets it (watches, subscriptions, waits, the
  // registry).
  virtual void OnClientClosed(Connection& c) = 0;

 protected:
  ~ClientHost() = default;
};

class Connection final : public Session {
 public:
  // Output above which reading from the client pauses.
  static constexpr size_t kPauseReadingAt = 1 << 20;
  // Smallest free space offered to each read.
  static constexpr size_t kReadChunk = 16 * 1024;
  // Fewer bytes than this cannot hold two requests with a key (two GETs of
  // a one-byte key take 40): nothing to prefetch.
  static constexpr size_t kPrefetchMinBytes = 32;

  Connection(ClientHost& host, uint64_t id);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Called once the uv_tcp_t is accepted: starts reading.
  void Start();
  // A connection accepted on the tls-port (before Start): its bytes go
  // through a TLS session (server/tls/session.h). False: OpenSSL failed.
  bool StartTls(SSL_CTX* ctx, TlsAuthClients auth);
  bool tls() const { return tls_ != nullptr; }
  // Parses and runs the requests waiting in the query buffer (after a read,
  // or when a parked session goes on).
  void ProcessInput();
  // Sends pending output (one write). Called by the server before it sleeps.
  void Flush();
  // Closes now, dropping unsent output.
  void Close() override;
  // Frees the query and output buffers if they hold nothing (idle clients).
  void ReleaseIdleBuffers();
  // Closes once the output written so far has been sent (QUIT, protocol
  // errors, CLIENT KILL of oneself).
  void CloseAfterReply() override { close_after_reply_ = true; }
  bool closing() const override { return closing_; }
  Buffers buffers() const override;
  void Push(std::string_view frame) override;

  uv_tcp_t* handle() { return &tcp_; }
  // The io_uring its bytes go through (nullptr: libuv's reads and writes;
  // TLS connections always use those).
  IoRing* ring() const;
  // The ring's completions for connections (IoRing::Handler).
  static bool OnRingCompletion(IoRing& ring, void* owner, unsigned kind, int res, unsigned flags);
  bool reading() const { return reading_; }
  // While a script runs too long (busy.cc): one read(2) from the socket,
  // without the loop, handled as the loop's read callback would.
  void ReadNow();
  // Closes the client if it is over its client-output-buffer-limit (the
  // cron asks, for clients stuck there). False: it was closed.
  bool CheckOutputLimits();
  bool close_after_reply() const { return close_after_reply_; }

  // Output produced for this client and not yet handed to the kernel.
  std::string& output() { return out_; }
  // Push frames appended to the output while this client's own command ran
  // ([start, end) offsets in output()): CLIENT REPLY OFF and SKIP cut the
  // command's reply, never these (Redis's CLIENT_PUSHING). The server clears
  // them once the command's reply is settled (Server::FinishReply).
  std::vector<std::pair<size_t, size_t>>& own_pushes() { return own_pushes_; }
  // CLIENT LIST's rbp: the most output held at once in the current window
  // of 5 seconds. NoteOutput after producing output; the cron starts a new
  // window every 5 seconds.
  void NoteOutput() { output_peak_ = std::max(output_peak_, out_.size()); }
  void CronOutputPeak(int64_t now_ms) {
    if (now_ms - output_peak_since_ms_ < 5000) return;
    output_peak_ = out_.size();
    output_peak_since_ms_ = now_ms;
  }
  size_t pending_output() const;
  size_t query_buffer_size() const { return rbuf_end_ - rbuf_start_; }
  size_t query_buffer_capacity() const { return rbuf_.size(); }

  // Output from byte held_from onward reports an effect that may not leave
  // until the log's durable_end() reaches held_until (written to the file;
  // under appendfsync always, also fsynced).
  static constexpr size_t kNotHeld = static_cast<size_t>(-1);
  size_t held_from = kNotHeld;
  uint64_t held_until = 0;
  // Its held reply could not leave at the end of an iteration: persistence
  // tells the server when it may (Persistence::Waiting).
  bool log_waiting = false;
  int fd() const;
  int64_t output_soft_limit_since_ms = 0;

  // ---- the test bench (server/faults.h)
  // FAULT DELAY: output from byte `from` onward may not leave before
  // `due_us` (RealUs(): real time, whatever the lease clock does). Replies
  // keep their order: one after a delayed reply waits behind it.
  void DelayOutput(size_t from, uint64_t due_us) { delayed_.emplace_back(from, due_us); }
  // The due time of the first delayed reply still waiting after `now`; 0:
  // none.
  uint64_t next_delay_due(uint64_t now = 0) const;
  // FAULT PARTITION … STALL: nothing is read from a stalled client.
  bool stalled() const { return stalled_; }
  void Unstall();
  // Runs requests that arrived while the client was stalled.
  void ProcessPending();  // when output first exceeded the soft limit

 private:
  // The registry links connections into its list (prev_, next_) and keeps
  // the list of those to flush (pending_flush_): nothing else of this class.
  friend class ClientRegistry;

  static void OnAlloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* s, ssize_t n, const uv_buf_t* buf);
  static void OnWrite(uv_write_t* req, int status);
  static void OnClose(uv_handle_t* h);

  void CompactInput();
  // Sends from[offset, offset+len) asynchronously (the part uv_try_write
  // could not take).
  void StartWrite(const std::string& from, size_t offset, size_t len);
  // TLS: decrypts what a read brought (OnRead's bytes are ciphertext), and
  // sends the records OpenSSL produced. False: the connection was closed.
  void OnTlsRead(const char* data, size_t len);
  bool SendTlsRecords();
  // Hands `len` bytes to the kernel now, without waiting: how many it took
  // (0 when the socket is full), or nullopt after an error closed the
  // connection.
  std::optional<size_t> TryWrite(char* data, size_t len);
  void UpdateReadState();

  // ---- the io_uring path (connection_uring.cc)
  static constexpr unsigned kRingRecv = 1;
  static constexpr unsigned kRingSend = 2;
  void RingUpdateReadState(bool want);
  void RingArmRecv();
  void RingCancel(unsigned kind);
  // Moves output [0, len) into inflight_ and queues its send.
  void RingStartSend(size_t len);
  void RingQueueSend();
  void OnRingRecv(IoRing& ring, int res, unsigned flags);
  void OnRingSend(int res);
  void RingOpEnded(IoRing& ring);
  // Appends received bytes to the query buffer. False: out of memory (the
  // connection was closed).
  bool AppendInput(const char* data, size_t len);

  ClientHost& host_;
  ClientRegistry& clients_;
  // The server's settings (host_.config(), read once: the object stays the
  // same while CONFIG SET changes its values), consulted on every request.
  const Config& config_;
  uv_tcp_t tcp_;
  uv_write_t write_req_;
  bool reading_ = false;
  bool closing_ = false;
  bool close_after_reply_ = false;
  bool write_in_flight_ = false;
  bool pending_flush_ = false;  // on the registry's list of clients to flush

  // Query buffer: bytes [rbuf_start_, rbuf_end_) are received and unparsed.
  std::vector<char> rbuf_;
  size_t rbuf_start_ = 0;
  size_t rbuf_end_ = 0;
  resp::RequestParser parser_;

  std::string out_;  // replies not yet sent
  std::vector<std::pair<size_t, size_t>> own_pushes_;
  std::string inflight_;  // replies handed to uv_write, kept alive until it completes
  // The io_uring path: how much of inflight_ the kernel took so far (a
  // partial send sends the rest); a multishot receive is armed; ring
  // operations whose last completion has not come; the uv handle is closed
  // (the object waits for ring_ops_ to reach 0); ProcessInput is running
  // (a busy script reaping the ring must not touch this query buffer).
  size_t inflight_sent_ = 0;
  bool recv_armed_ = false;
  unsigned ring_ops_ = 0;
  bool handle_closed_ = false;
  bool in_input_ = false;
  // The client ended its input while reading was paused (closed when
  // reading would resume, as the epoll path would read the EOF then).
  bool ring_eof_ = false;
  size_t output_peak_ = 0;
  int64_t output_peak_since_ms_ = 0;

  // The test bench: delayed replies (start offset in out_, due time), oldest
  // first; a stalled client (faults.h).
  std::vector<std::pair<size_t, uint64_t>> delayed_;
  bool stalled_ = false;

  // TLS (tls-port): the session between the socket and the buffers above;
  // whether close_notify was queued.
  std::unique_ptr<tls::Session> tls_;
  bool tls_shutdown_sent_ = false;

  // Intrusive list of the registry's connections (clients.h).
  Connection* prev_ = nullptr;
  Connection* next_ = nullptr;
};

}  // namespace latch
