// Listeners: the sockets clients connect to, and accepting from them.
//
// Owns the TCP listeners (one per `bind` address, for `port` and for
// `tls-port`), the unix socket (unixsocket), the TLS context new TLS
// connections start from (rebuilt by CONFIG SET tls-*), the poll handles
// latch accepts from (one per listener), the spare descriptor kept for
// running out of descriptors, the paused state and the accept-error log
// throttle, and the supervisor's "ready" announcement. An accepted socket
// becomes a Connection linked into the client registry (clients.h), which
// owns it from then on.
//
// latch binds each address itself and accepts with accept4() from a poll
// handle, rather than through uv_listen, whose accept loop handles running
// out of file descriptors silently: here EMFILE is logged once a second
// with a count, pending connections are dropped with a spare descriptor
// instead of busy-looping, and maxclients follows Redis's rules for the
// file-descriptor limit (AdjustOpenFilesLimit).
#pragma once

#include <poll.h>
#include <uv.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "server/uv_handle.h"

namespace latch {

class ClientHost;
class ClientRegistry;
class Clock;
class LeasePolicy;
struct Config;
struct Stats;
namespace tls {
class Context;
}

class Listeners {
 public:
  // `config` is the server's (it may change under CONFIG SET: read at each
  // use); accepted clients go into `clients`, served by `host`.
  Listeners(const Config& config, uv_loop_t* loop, const Clock& clock, Stats& stats,
            ClientRegistry& clients, ClientHost& host);
  ~Listeners();
  Listeners(const Listeners&) = delete;
  Listeners& operator=(const Listeners&) = delete;

  // Binds every configured listener (port, tls-port, unixsocket); false,
  // logged as Redis does, when one fails.
  bool Listen();
  // CONFIG SET tls-*: a new TLS context for the connections accepted from
  // now on; the reason when it cannot be built (the old one stays).
  std::optional<std::string> ConfigureTls();
  // Stops accepting and closes the listening sockets (shutdown).
  void Close();
  // The server accepts connections: logged, and told to the supervisor
  // (supervision.h: READY=1 for systemd, with the quarantine in STATUS).
  void AnnounceReady(const LeasePolicy& policy, int64_t now_ms);
  // Shutting down: told to the supervisor; the unix socket file removed.
  void AnnounceStopping();
  // Out of descriptors earlier with no spare left (the cron tries again).
  bool paused() const { return accept_paused_; }
  void ResumeAccepting();

  // While a script runs too long (busy.cc): the listening descriptors
  // appended to `fds`, then the connections pending on those poll() found
  // readable accepted, as the loop would.
  size_t AppendPollFds(std::vector<pollfd>& fds) const;
  void AcceptReady(const std::vector<pollfd>& fds, size_t count);

  // Each client needs a file descriptor: raises the limit for
  // config.maxclients, or lowers maxclients to what the system allows
  // (Redis's algorithm and log lines). False: too few descriptors to start.
  static bool AdjustOpenFilesLimit(Config& config);

 private:
  static void OnAcceptable(uv_poll_t* poll, int status, int events);
  bool ListenUnix();
  bool ListenTls();
  // A listener on every `bind` address at `port` (TLS: its connections
  // start with a handshake); false, logged as Redis does, when one fails.
  bool ListenOnBindAddresses(int port, bool tls);
  int BindAndListen(UvHandle<uv_tcp_t>& tcp, const struct sockaddr_storage& addr);
  void AcceptPending(uv_poll_t* poll);
  bool DropPendingConnections(int listen_fd, int error);
  void Accept(int fd, bool unix_socket, bool tls);

  const Config& config_;
  uv_loop_t* loop_;
  const Clock& clock_;
  Stats& stats_;
  ClientRegistry& clients_;
  ClientHost& host_;

  std::vector<UvHandle<uv_tcp_t>> listeners_;
  UniqueFd unix_listener_;           // unixsocket's, accepted from acceptors_ as the others'
  std::vector<int> tls_listen_fds_;  // the listeners whose clients speak TLS
  std::unique_ptr<tls::Context> tls_ctx_;
  bool ready_announced_ = false;
  // One poll handle per listener: latch accepts itself (see AcceptPending).
  std::vector<UvHandle<uv_poll_t>> acceptors_;
  // A spare descriptor, given up to drop pending connections when the
  // process is out of descriptors (EMFILE).
  UniqueFd spare_fd_;
  bool accept_paused_ = false;  // out of descriptors with no spare: resumed by the cron
  uint64_t accept_errors_ = 0;  // since the last log line about them
  int64_t last_accept_error_log_ms_ = 0;
};

}  // namespace latch
