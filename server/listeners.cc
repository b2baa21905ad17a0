// Listening and accepting: the sockets clients connect to (listeners.h).
#include "server/listeners.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "protocol/reply_writer.h"
#include "server/acl/users.h"
#include "server/clients.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/connection.h"
#include "server/lease_policy.h"
#include "server/log.h"
#include "server/stats.h"
#include "server/supervision.h"
#include "server/tls/context.h"

namespace latch {

namespace {

// "ip:port", with brackets for IPv6 as Redis prints it.
std::string FormatAddr(const sockaddr_storage& sa) {
  char ip[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (sa.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&sa);
    uv_ip4_name(in, ip, sizeof(ip));
    port = ntohs(in->sin_port);
    return std::string(ip) + ":" + std::to_string(port);
  }
  if (sa.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&sa);
    uv_ip6_name(in6, ip, sizeof(ip));
    port = ntohs(in6->sin6_port);
    std::string text = "[";  // (not "[" + std::string: GCC 12's bug 105329)
    text += ip;
    text += "]:";
    text += std::to_string(port);
    return text;
  }
  return "?:0";
}

bool IsLoopback(const sockaddr_storage& sa) {
  if (sa.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&sa);
    return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  }
  if (sa.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&sa);
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) return true;
    // An IPv4 loopback address mapped into IPv6 (::ffff:127.x.y.z).
    return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
  }
  return false;
}

}  // namespace

Listeners::Listeners(const Config& config, uv_loop_t* loop, const Clock& clock, Stats& stats,
                     ClientRegistry& clients, ClientHost& host)
    : config_(config), loop_(loop), clock_(clock), stats_(stats), clients_(clients), host_(host) {}

Listeners::~Listeners() = default;

void Listeners::Close() {
  // Poll handles go before the sockets they watch.
  acceptors_.clear();
  for (auto& l : listeners_) l.Close();
  listeners_.clear();
}

size_t Listeners::AppendPollFds(std::vector<pollfd>& fds) const {
  size_t count = 0;
  for (auto& a : acceptors_) {
    uv_os_fd_t fd = -1;
    if (uv_fileno(reinterpret_cast<uv_handle_t*>(a.get()), &fd) == 0) {
      fds.push_back({fd, POLLIN, 0});
      ++count;
    }
  }
  return count;
}

void Listeners::AcceptReady(const std::vector<pollfd>& fds, size_t count) {
  std::vector<uv_poll_t*> ready;
  for (size_t i = 0; i < count; ++i) {
    if (fds[i].revents != 0) ready.push_back(acceptors_[i].get());
  }
  for (uv_poll_t* p : ready) AcceptPending(p);
}

bool Listeners::Listen() {
  // `port 0`: no plain TCP listener (TLS only, or the unix socket only).
  if (config_.port != 0 && !ListenOnBindAddresses(static_cast<int>(config_.port), false)) {
    return false;
  }
  if (!ListenTls()) return false;
  if (!ListenUnix()) return false;
  if (listeners_.empty() && !unix_listener_) {
    log::Warning("No address to listen on: check the bind setting.");
    return false;
  }
  spare_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  return true;
}

std::optional<std::string> Listeners::ConfigureTls() {
  // Redis's applyTlsCfg: only while TLS is in use (a certificate set before
  // tls-port is only stored); a context that fails to build leaves the
  // current one, and its connections, untouched.
  if (!tls::TlsEnabled(config_)) return std::nullopt;
  std::string error;
  auto ctx = tls::Context::Build(config_, &error);
  if (!ctx) {
    log::Warning("{}", error);
    return "Unable to update TLS configuration. Check server logs.";
  }
  tls_ctx_ = std::move(ctx);
  return std::nullopt;
}

bool Listeners::ListenTls() {
  // tls-port: the same bind addresses as port, each a second listener whose
  // connections start with a TLS handshake (connection.cc).
  if (!tls::TlsEnabled(config_)) return true;
  if (ConfigureTls()) {
    log::Warning("Failed to configure TLS. Check logs for more info.");
    return false;
  }
  return ListenOnBindAddresses(static_cast<int>(config_.tls_port), true);
}

bool Listeners::ListenOnBindAddresses(int port, bool tls) {
  for (const std::string& spec : config_.bind) {
    // A leading '-' marks an address that may be unavailable (Redis's
    // syntax; for instance ::1 on a host without IPv6).
    bool optional = !spec.empty() && spec[0] == '-';
    std::string ip = optional ? spec.substr(1) : spec;
    sockaddr_storage addr{};
    int rc = ip.find(':') != std::string::npos
                 ? uv_ip6_addr(ip.c_str(), port, reinterpret_cast<sockaddr_in6*>(&addr))
                 : uv_ip4_addr(ip.c_str(), port, reinterpret_cast<sockaddr_in*>(&addr));
    UvHandle<uv_tcp_t> tcp;
    if (rc == 0) rc = BindAndListen(tcp, addr);
    if (rc != 0) {
      if (optional && (rc == UV_EADDRNOTAVAIL || rc == UV_EAFNOSUPPORT || rc == UV_EINVAL)) {
        log::Verbose("Skipping optional bind address {}: {}", ip, uv_strerror(rc));
        continue;
      }
      log::Warning("Warning: Could not create server TCP listening socket {}:{}: {}", ip, port,
                   uv_strerror(rc));
      log::Warning("Failed listening on port {} ({}), aborting.", port, tls ? "tls" : "tcp");
      return false;
    }
    if (tls) {
      // A connection accepted on this listener starts with a handshake.
      uv_os_fd_t fd = -1;
      uv_fileno(tcp.handle(), &fd);
      tls_listen_fds_.push_back(fd);
    }
    listeners_.push_back(std::move(tcp));
  }
  return true;
}

bool Listeners::ListenUnix() {
  // `unixsocket PATH`: clients on this host connect without TCP. As Redis,
  // a socket file left by an earlier run is replaced, the mode is set with
  // chmod (unixsocketperm, octal), and the file is removed at shutdown.
  // Its clients are local (protected mode lets them in) and show flag U.
  if (config_.unixsocket.empty()) return true;
  const std::string& path = config_.unixsocket;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    log::Warning("Failed opening Unix socket: path too long: {}", path);
    return false;
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  ::unlink(path.c_str());
  if (!fd || ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd.get(), static_cast<int>(config_.tcp_backlog)) != 0 ||
      (config_.unixsocketperm != 0 &&
       ::chmod(path.c_str(), static_cast<mode_t>(config_.unixsocketperm)) != 0)) {
    log::Warning("Failed opening Unix socket: {}", std::strerror(errno));
    return false;
  }
  UvHandle<uv_poll_t> poll;
  if (uv_poll_init(loop_, poll.get(), fd.get()) != 0) return false;
  poll.MarkInitialized();
  poll->data = this;
  uv_poll_start(poll.get(), UV_READABLE, OnAcceptable);
  acceptors_.push_back(std::move(poll));
  unix_listener_ = std::move(fd);
  return true;
}

void Listeners::AnnounceReady(const LeasePolicy& policy, int64_t now) {
  if (ready_announced_) return;
  ready_announced_ = true;
  if (unix_listener_) {
    log::Notice("The server is now ready to accept connections at {}", config_.unixsocket);
  }
  if (supervision::Detect(config_.supervised) != SupervisedMode::kSystemd) return;
  // systemd's Type=notify: the unit is "started" now. A node in its restart
  // quarantine is started too (it serves reads and releases); the status
  // line says when it grants again.
  std::string status = "Ready to accept connections";
  if (policy.quarantined(now)) {
    status += "; restart quarantine: no lock granted for another " +
              std::to_string(policy.remaining_ms(now)) + " ms";
  }
  supervision::NotifySystemd("STATUS=" + status + "\nREADY=1\n");
}

void Listeners::AnnounceStopping() {
  if (supervision::Detect(config_.supervised) == SupervisedMode::kSystemd) {
    supervision::NotifySystemd("STOPPING=1\n");
  }
  if (unix_listener_) {
    unix_listener_.reset();
    ::unlink(config_.unixsocket.c_str());
  }
}

int Listeners::BindAndListen(UvHandle<uv_tcp_t>& tcp, const sockaddr_storage& addr) {
  // libuv creates the socket (and closes it with the handle); binding,
  // listening and accepting are done here rather than by uv_listen, whose
  // accept loop handles running out of descriptors silently (see
  // AcceptPending).
  int rc = uv_tcp_init_ex(loop_, tcp.get(), addr.ss_family);
  if (rc != 0) return rc;
  tcp.MarkInitialized();
  tcp->data = this;
  uv_os_fd_t fd = -1;
  if ((rc = uv_fileno(tcp.handle(), &fd)) != 0) return rc;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (addr.ss_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  socklen_t len = addr.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0 ||
      ::listen(fd, static_cast<int>(config_.tcp_backlog)) != 0) {
    return uv_translate_sys_error(errno);
  }
  UvHandle<uv_poll_t> poll;
  if ((rc = uv_poll_init_socket(loop_, poll.get(), fd)) != 0) return rc;
  poll.MarkInitialized();
  poll->data = this;
  uv_poll_start(poll.get(), UV_READABLE, OnAcceptable);
  acceptors_.push_back(std::move(poll));
  return 0;
}

bool Listeners::AdjustOpenFilesLimit(Config& config) {
  // Each client needs a file descriptor, plus a few for listeners, the log
  // and libuv (Redis's CONFIG_MIN_RESERVED_FDS). Redis's algorithm and log
  // lines, so operators see what they know: ask for maxclients + 32 (soft and
  // hard limit: root may raise the hard one), else for as much as allowed in
  // steps of 16; if that is not enough, lower maxclients to what fits, and
  // refuse to start if not even the reserved descriptors fit.
  constexpr rlim_t kReserved = 32;
  rlim_t wanted = static_cast<rlim_t>(config.maxclients) + kReserved;
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    log::Warning(
        "Unable to obtain the current NOFILE limit ({}), assuming 1024 and setting the "
        "max clients configuration accordingly.",
        std::strerror(errno));
    config.maxclients = 1024 - static_cast<int64_t>(kReserved);
    return true;
  }
  rlim_t old = lim.rlim_cur;
  if (old >= wanted) return true;
  rlim_t best = wanted;
  int error = 0;
  while (best > old) {
    rlimit attempt{best, best};
    if (setrlimit(RLIMIT_NOFILE, &attempt) == 0) break;
    error = errno;
    if (best < 16) {
      best = old;
      break;
    }
    best -= 16;
  }
  if (best < old) best = old;
  if (best >= wanted) {
    log::Notice("Increased maximum number of open files to {} (it was originally set to {}).",
                static_cast<uint64_t>(wanted), static_cast<uint64_t>(old));
    return true;
  }
  if (best <= kReserved) {
    log::Warning(
        "Your current 'ulimit -n' of {} is not enough for the server to start. Please "
        "increase your open file limit to at least {}. Exiting.",
        static_cast<uint64_t>(old), static_cast<uint64_t>(wanted));
    return false;
  }
  int64_t requested = config.maxclients;
  config.maxclients = static_cast<int64_t>(best - kReserved);
  log::Warning("You requested maxclients of {} requiring at least {} max file descriptors.",
               requested, static_cast<uint64_t>(wanted));
  log::Warning("Server can't set maximum open files to {} because of OS error: {}.",
               static_cast<uint64_t>(wanted), std::strerror(error));
  log::Warning(
      "Current maximum open files is {}. maxclients has been reduced to {} to "
      "compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
      static_cast<uint64_t>(best), config.maxclients);
  return true;
}

void Listeners::OnAcceptable(uv_poll_t* poll, int, int) {
  static_cast<Listeners*>(poll->data)->AcceptPending(poll);
}

void Listeners::AcceptPending(uv_poll_t* poll) {
  uv_os_fd_t listen_fd = -1;
  uv_fileno(reinterpret_cast<uv_handle_t*>(poll), &listen_fd);
  // At most 1000 connections per wake-up (as Redis), so a flood of new
  // connections cannot starve the clients already connected.
  for (int i = 0; i < 1000; ++i) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      Accept(fd, unix_listener_ && listen_fd == unix_listener_.get(),
             std::find(tls_listen_fds_.begin(), tls_listen_fds_.end(), listen_fd) !=
                 tls_listen_fds_.end());
      continue;
    }
    int err = errno;
    if (err == EINTR || err == ECONNABORTED) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) return;
    // EMFILE, ENFILE, ENOBUFS, ENOMEM…: if the pending connections could not
    // be dropped, the listener stays readable, so stop watching it until the
    // next cron tick rather than spin.
    if (!DropPendingConnections(listen_fd, err)) {
      for (auto& a : acceptors_) uv_poll_stop(a.get());
      accept_paused_ = true;
    }
    return;
  }
}

bool Listeners::DropPendingConnections(int listen_fd, int error) {
  // Out of file descriptors (EMFILE/ENFILE): give up the spare descriptor,
  // accept and close every pending connection (their clients see the
  // connection closed at once instead of waiting in the backlog), then take
  // the spare back. Logged once per burst, with a count, not once per
  // connection: a flood must not turn into a flood of log lines.
  bool dropped_all = false;
  uint64_t failures = 0;
  if ((error == EMFILE || error == ENFILE) && spare_fd_) {
    spare_fd_.reset();
    for (int i = 0; i < 10000; ++i) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        ::close(fd);
        ++failures;
      } else if (errno != EINTR && errno != ECONNABORTED) {
        dropped_all = errno == EAGAIN || errno == EWOULDBLOCK;
        break;
      }
    }
    spare_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  }
  failures = std::max<uint64_t>(failures, 1);
  stats_.rejected_connections += failures;
  accept_errors_ += failures;
  int64_t now = clock_.MonoMs();
  if (now - last_accept_error_log_ms_ >= 1000) {
    log::Warning(
        "Accepting client connection: accept: {} ({} connections refused since the "
        "last report)",
        std::strerror(error), accept_errors_);
    last_accept_error_log_ms_ = now;
    accept_errors_ = 0;
  }
  return dropped_all;
}

void Listeners::Accept(int fd, bool unix_socket, bool tls) {
  auto* c = new Connection(host_, clients_.NextId());
  uv_tcp_init(loop_, c->handle());
  if (uv_tcp_open(c->handle(), fd) != 0) {
    ::close(fd);
    uv_close(reinterpret_cast<uv_handle_t*>(c->handle()),
             [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
    return;
  }
  ++stats_.total_connections_received;

  // Link it first so every path below closes it the same way.
  clients_.Link(*c);

  if (unix_socket) {
    // libuv's stream I/O works on any stream socket: a unix one too. The
    // addresses are Redis's for such clients ("path:0").
    c->addr = c->laddr = config_.unixsocket + ":0";
    c->local = true;
    c->unix_socket = true;
  } else {
    sockaddr_storage peer{}, local{};
    int len = sizeof(peer);
    uv_tcp_getpeername(c->handle(), reinterpret_cast<sockaddr*>(&peer), &len);
    len = sizeof(local);
    uv_tcp_getsockname(c->handle(), reinterpret_cast<sockaddr*>(&local), &len);
    c->addr = FormatAddr(peer);
    c->laddr = FormatAddr(local);
    c->local = IsLoopback(peer);
    uv_tcp_nodelay(c->handle(), 1);
    if (config_.tcp_keepalive > 0) {
      uv_tcp_keepalive(c->handle(), 1, static_cast<unsigned>(config_.tcp_keepalive));
    }
  }

  // A TLS client gets its session now: it counts as a client (maxclients,
  // timeout) from the first byte of its handshake. It is refused without a
  // reply below (none can be sent before the handshake), as Redis's would.
  if (tls && !c->StartTls(tls_ctx_->get(), config_.tls_auth_clients)) {
    c->Close();
    return;
  }
  if (clients_.size() > static_cast<size_t>(config_.maxclients)) {
    ++stats_.rejected_connections;
    if (tls) {
      c->Close();
      return;
    }
    resp::ReplyWriter(&c->output(), 2).Error("ERR max number of clients reached");
    c->CloseAfterReply();
    c->Flush();
    return;
  }
  // Protected mode: while the default user needs no password (nopass,
  // whether requirepass or ACL rules made it so), strangers are refused.
  if (config_.protected_mode && host_.acl_users().Default().nopass && !c->local) {
    ++stats_.rejected_connections;
    if (tls) {
      c->Close();
      return;
    }
    resp::ReplyWriter(&c->output(), 2)
        .Error(
            "DENIED Redis is running in protected mode because protected mode is enabled and no "
            "password is set for the default user. In this mode connections are only accepted "
            "from the loopback interface. If you want to connect from external computers to "
            "Redis you may adopt one of the following solutions: 1) Just disable protected mode "
            "sending the command 'CONFIG SET protected-mode no' from the loopback interface by "
            "connecting to Redis from the same host the server is running, however MAKE SURE "
            "Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to "
            "make this change permanent. 2) Alternatively you can just disable the protected "
            "mode by editing the Redis configuration file, and setting the protected mode option "
            "to 'no', and then restarting the server. 3) If you started the server manually just "
            "for testing, restart it with the '--protected-mode no' option. 4) Setup a an "
            // (sic: Redis 7.0's words, byte for byte)
            "authentication password for the default user. NOTE: You only need to do one of the "
            "above things in order for the server to start accepting connections from the "
            "outside.");
    c->CloseAfterReply();
    c->Flush();
    return;
  }
  c->Start();
}

void Listeners::ResumeAccepting() {
  // Out of descriptors earlier, with no spare left to free (the cron tries
  // again): get a spare back and accept again.
  accept_paused_ = false;
  if (!spare_fd_) spare_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  for (auto& a : acceptors_) uv_poll_start(a.get(), UV_READABLE, OnAcceptable);
}

}  // namespace latch
