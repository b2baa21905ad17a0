#include "server/server.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "protocol/text.h"
#include "server/command_table.h"
#include "server/connection.h"
#include "server/log.h"

namespace latch {

uint64_t Stats::InstantaneousOps() const {
  uint64_t sum = 0;
  for (uint64_t s : ops_samples) sum += s;
  return sum / kOpsSamples;
}

namespace {

std::string RandomHex(size_t n) {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out.push_back(kHex[rd() % 16]);
  return out;
}

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
    return "[" + std::string(ip) + "]:" + std::to_string(port);
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

Server::Server(Config config, std::unique_ptr<Clock> clock)
    : config_(std::move(config)), commands_(CommandTable::Get()), clock_(std::move(clock)) {
  uv_loop_init(&loop_);
  bio_ = std::make_unique<BackgroundIo>();
  quarantine_ = std::make_unique<Quarantine>(config_, *bio_);
  run_id_ = RandomHex(40);
  start_mono_ms_ = clock_->MonoMs();
  // Keys removed because their TTL passed are effects like any other: the log
  // records a DEL so a replica of the log agrees with memory.
  effects_.set_key_observer([this](std::string_view key) { OnKeyChanged(key); });
  db_.set_expiry_listener([this](std::string_view key) {
    ++stats_.expired_keys;
    effects_.Del(key);
  });
}

Server::~Server() {
  // Finish background jobs first: they refer to the log and the quarantine.
  bio_.reset();
  CloseAll();
  // Let libuv deliver the close callbacks, which free the handles.
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
}

Connection* Server::ClientNext(Connection* c) {
  return c->next_;
}

TimeSnapshot Server::Now() {
  int64_t mono = clock_->MonoMs();
  int64_t offset = clock_->WallMs() - mono;
  if (wall_offset_ms_ == INT64_MIN || offset > wall_offset_ms_ + 2 ||
      offset < wall_offset_ms_ - 2) {
    wall_offset_ms_ = offset;
  }
  return {mono, mono + wall_offset_ms_};
}

Connection* Server::FindClient(uint64_t id) {
  for (Connection* c = clients_head_; c != nullptr; c = c->next_) {
    if (c->id() == id && !c->closing()) return c;
  }
  return nullptr;
}

bool Server::Listen() {
  for (const std::string& spec : config_.bind) {
    // A leading '-' marks an address that may be unavailable (Redis's
    // syntax; for instance ::1 on a host without IPv6).
    bool optional = !spec.empty() && spec[0] == '-';
    std::string ip = optional ? spec.substr(1) : spec;
    sockaddr_storage addr{};
    int rc = ip.find(':') != std::string::npos
                 ? uv_ip6_addr(ip.c_str(), static_cast<int>(config_.port),
                               reinterpret_cast<sockaddr_in6*>(&addr))
                 : uv_ip4_addr(ip.c_str(), static_cast<int>(config_.port),
                               reinterpret_cast<sockaddr_in*>(&addr));
    UvHandle<uv_tcp_t> tcp;
    if (rc == 0) rc = BindAndListen(tcp, addr);
    if (rc != 0) {
      if (optional && (rc == UV_EADDRNOTAVAIL || rc == UV_EAFNOSUPPORT || rc == UV_EINVAL)) {
        log::Verbose("Skipping optional bind address {}: {}", ip, uv_strerror(rc));
        continue;
      }
      log::Warning("Warning: Could not create server TCP listening socket {}:{}: {}", ip,
                   config_.port, uv_strerror(rc));
      log::Warning("Failed listening on port {} (tcp), aborting.", config_.port);
      return false;
    }
    listeners_.push_back(std::move(tcp));
  }
  if (listeners_.empty()) {
    log::Warning("No address to listen on: check the bind setting.");
    return false;
  }
  spare_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  return true;
}

int Server::BindAndListen(UvHandle<uv_tcp_t>& tcp, const sockaddr_storage& addr) {
  // libuv creates the socket (and closes it with the handle); binding,
  // listening and accepting are done here rather than by uv_listen, whose
  // accept loop handles running out of descriptors silently (see
  // AcceptPending).
  int rc = uv_tcp_init_ex(&loop_, tcp.get(), addr.ss_family);
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
  if ((rc = uv_poll_init_socket(&loop_, poll.get(), fd)) != 0) return rc;
  poll.MarkInitialized();
  poll->data = this;
  uv_poll_start(poll.get(), UV_READABLE, OnAcceptable);
  acceptors_.push_back(std::move(poll));
  return 0;
}

bool Server::AdjustOpenFilesLimit() {
  // Each client needs a file descriptor, plus a few for listeners, the log
  // and libuv (Redis's CONFIG_MIN_RESERVED_FDS). Redis's algorithm and log
  // lines, so operators see what they know: ask for maxclients + 32 (soft and
  // hard limit: root may raise the hard one), else for as much as allowed in
  // steps of 16; if that is not enough, lower maxclients to what fits, and
  // refuse to start if not even the reserved descriptors fit.
  constexpr rlim_t kReserved = 32;
  rlim_t wanted = static_cast<rlim_t>(config_.maxclients) + kReserved;
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) {
    log::Warning(
        "Unable to obtain the current NOFILE limit ({}), assuming 1024 and setting the "
        "max clients configuration accordingly.",
        std::strerror(errno));
    config_.maxclients = 1024 - static_cast<int64_t>(kReserved);
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
  int64_t requested = config_.maxclients;
  config_.maxclients = static_cast<int64_t>(best - kReserved);
  log::Warning("You requested maxclients of {} requiring at least {} max file descriptors.",
               requested, static_cast<uint64_t>(wanted));
  log::Warning("Server can't set maximum open files to {} because of OS error: {}.",
               static_cast<uint64_t>(wanted), std::strerror(error));
  log::Warning(
      "Current maximum open files is {}. maxclients has been reduced to {} to "
      "compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
      static_cast<uint64_t>(best), config_.maxclients);
  return true;
}

int Server::Run() {
  if (!AdjustOpenFilesLimit()) {
    CloseAll();
    return 1;
  }
  log::Notice("latch {} (Redis protocol, lock server) starting: pid={}, port={}, config file {}",
              kLatchVersion, static_cast<int>(getpid()), config_.port,
              config_.config_file.empty() ? "(none: defaults)" : config_.config_file);
  if (!Listen()) {
    CloseAll();
    return 1;
  }

  uv_timer_init(&loop_, cron_timer_.get());
  cron_timer_.MarkInitialized();
  cron_timer_->data = this;
  RestartCronTimer();

  uv_prepare_init(&loop_, before_sleep_.get());
  before_sleep_.MarkInitialized();
  before_sleep_->data = this;
  uv_prepare_start(before_sleep_.get(), OnBeforeSleep);

  for (auto* sig : {&sigterm_, &sigint_}) {
    uv_signal_init(&loop_, sig->get());
    sig->MarkInitialized();
    (*sig)->data = this;
  }
  uv_signal_start(sigterm_.get(), OnSignal, SIGTERM);
  uv_signal_start(sigint_.get(), OnSignal, SIGINT);

  StartLoading();
  uv_run(&loop_, UV_RUN_DEFAULT);

  // Shutting down: replies already produced still go out, the log is
  // written and fsynced, then every connection closes.
  BeforeSleep();
  if (aof_ != nullptr) aof_->Shutdown();
  // Only a run that started serving and stopped on request is "clean".
  if (quarantine_started_ && exit_code_ == 0) quarantine_->CleanShutdown();
  if (exit_code_ == 0) log::Notice("latch is now ready to exit, bye bye...");
  CloseAll();
  return exit_code_;
}

void Server::StartServing() {
  // The quarantine clock starts once the log is loaded.
  quarantine_->Start(clock_->MonoMs());
  quarantine_started_ = true;
}

void Server::Fatal(const std::string& message) {
  log::Warning("{}", message);
  exit_code_ = 1;
  StopLoop();
}

void Server::StartLoading() {
  if (!config_.appendonly) {
    quarantine_->ReadPrevious(access(config_.appendfilename.c_str(), F_OK) == 0);
    StartServing();
    log::Notice("Ready to accept connections tcp (appendonly no: nothing is logged)");
    return;
  }
  loader_ = std::make_unique<AofLoader>(config_, db_);
  if (auto err = loader_->Open()) return Fatal(*err);
  quarantine_->ReadPrevious(loader_->exists());
  if (!loader_->exists()) {
    FinishLoading();
    return;
  }
  // Replay in slices so that clients connecting meanwhile are told LOADING.
  loading_ = true;
  loading_start_ms_ = clock_->MonoMs();
  last_progress_log_ms_ = loading_start_ms_;
  log::Notice("Loading the append only file '{}' ({} bytes)...", config_.appendfilename,
              loader_->total_bytes());
  uv_idle_init(&loop_, load_idle_.get());
  load_idle_.MarkInitialized();
  load_idle_->data = this;
  uv_idle_start(load_idle_.get(), OnLoadStep);
}

void Server::OnLoadStep(uv_idle_t* idle) {
  static_cast<Server*>(idle->data)->LoadStep();
}

void Server::LoadStep() {
  AofLoader::State state = loader_->Step(Now(), 50'000);
  int64_t now = clock_->MonoMs();
  if (state == AofLoader::State::kMore && now - last_progress_log_ms_ >= 1000) {
    last_progress_log_ms_ = now;
    uint64_t total = std::max<uint64_t>(loader_->total_bytes(), 1);
    log::Notice("Loading the log: {} of {} bytes ({:.1f}%), {} commands", loader_->loaded_bytes(),
                loader_->total_bytes(),
                100.0 * static_cast<double>(loader_->loaded_bytes()) / static_cast<double>(total),
                loader_->records());
  }
  if (state == AofLoader::State::kMore) return;
  load_idle_.Close();
  if (state == AofLoader::State::kFailed) return Fatal(loader_->error());
  log::Notice(
      "DB loaded from append only file: {} keys loaded, {} keys already expired, {} "
      "commands, {} bytes, {:.3f} seconds",
      db_.size(), loader_->expired_on_load(), loader_->records(), loader_->loaded_bytes(),
      static_cast<double>(now - loading_start_ms_) / 1000.0);
  FinishLoading();
}

void Server::FinishLoading() {
  aof_ = std::make_unique<Aof>(config_, db_, *bio_);
  if (auto err = aof_->Open()) {
    aof_.reset();
    return Fatal(*err);
  }
  effects_.set_sink(aof_->batch());
  loading_ = false;
  StartServing();
  log::Notice("Ready to accept connections tcp (appendonly yes, appendfsync {})",
              FsyncPolicyName(config_.appendfsync));
}

void Server::RestartCronTimer() {
  // CONFIG SET hz on a server whose loop has not started (in-process tests):
  // the timer starts with the new period in Run().
  if (!cron_timer_.initialized()) return;
  uint64_t period = static_cast<uint64_t>(std::max<int64_t>(1, 1000 / config_.hz));
  uv_timer_start(cron_timer_.get(), OnCron, period, period);
}

void Server::RequestShutdown() {
  if (shutting_down_) return;
  log::Notice("User requested shutdown...");
  StopLoop();
}

void Server::StopLoop() {
  shutting_down_ = true;
  // Stop accepting at once; the loop ends after this iteration. (Poll
  // handles go before the sockets they watch.)
  acceptors_.clear();
  for (auto& l : listeners_) l.Close();
  listeners_.clear();
  uv_stop(&loop_);
}

void Server::CloseAll() {
  load_idle_.Close();
  acceptors_.clear();
  for (auto& l : listeners_) l.Close();
  listeners_.clear();
  cron_timer_.Close();
  before_sleep_.Close();
  sigterm_.Close();
  sigint_.Close();
  while (clients_head_ != nullptr) clients_head_->Close();
}

void Server::OnSignal(uv_signal_t* s, int signum) {
  auto* server = static_cast<Server*>(s->data);
  log::Warning("Received {} scheduling shutdown...", signum == SIGINT ? "SIGINT" : "SIGTERM");
  server->RequestShutdown();
}

void Server::OnAcceptable(uv_poll_t* poll, int, int) {
  static_cast<Server*>(poll->data)->AcceptPending(poll);
}

void Server::AcceptPending(uv_poll_t* poll) {
  uv_os_fd_t listen_fd = -1;
  uv_fileno(reinterpret_cast<uv_handle_t*>(poll), &listen_fd);
  // At most 1000 connections per wake-up (as Redis), so a flood of new
  // connections cannot starve the clients already connected.
  for (int i = 0; i < 1000; ++i) {
    int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      Accept(fd);
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

bool Server::DropPendingConnections(int listen_fd, int error) {
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
  int64_t now = clock_->MonoMs();
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

void Server::Accept(int fd) {
  auto* c = new Connection(*this, next_client_id_++);
  uv_tcp_init(&loop_, c->handle());
  if (uv_tcp_open(c->handle(), fd) != 0) {
    ::close(fd);
    uv_close(reinterpret_cast<uv_handle_t*>(c->handle()),
             [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
    return;
  }
  ++stats_.total_connections_received;

  // Link it first so every path below closes it the same way.
  c->next_ = clients_head_;
  if (clients_head_ != nullptr) clients_head_->prev_ = c;
  clients_head_ = c;
  ++num_clients_;

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

  if (num_clients_ > static_cast<size_t>(config_.maxclients)) {
    ++stats_.rejected_connections;
    resp::ReplyWriter(&c->output(), 2).Error("ERR max number of clients reached");
    c->CloseAfterReply();
    c->Flush();
    return;
  }
  if (config_.protected_mode && config_.requirepass.empty() && !c->local) {
    ++stats_.rejected_connections;
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

void Server::OnClientOutput(Connection& c) {
  if (!c.pending_flush_) {
    c.pending_flush_ = true;
    pending_flush_.push_back(&c);
  }
}

void Server::WatchKey(Connection& c, std::string_view key) {
  for (const std::string& k : c.watched_keys) {
    if (k == key) return;
  }
  c.watched_keys.emplace_back(key);
  auto it = watchers_.find(key);
  if (it == watchers_.end())
    it = watchers_.emplace(std::string(key), std::vector<Connection*>{}).first;
  it->second.push_back(&c);
}

void Server::UnwatchAll(Connection& c) {
  for (const std::string& k : c.watched_keys) {
    auto it = watchers_.find(k);
    if (it == watchers_.end()) continue;
    std::erase(it->second, &c);
    if (it->second.empty()) watchers_.erase(it);
  }
  c.watched_keys.clear();
  c.watched_key_touched = false;
}

void Server::OnKeyChanged(std::string_view key) {
  if (watchers_.empty()) return;
  if (key.empty()) {  // FLUSHALL, announced before it empties: touches the keys it removes
    for (auto& [k, conns] : watchers_) {
      if (!db_.Contains(k)) continue;
      for (Connection* c : conns) c->watched_key_touched = true;
    }
    return;
  }
  auto it = watchers_.find(key);
  if (it == watchers_.end()) return;
  for (Connection* c : it->second) c->watched_key_touched = true;
}

void Server::AddMonitor(Connection& c) {
  c.monitor = true;
  monitors_.push_back(&c);
}

namespace {

// Appends `arg` quoted the way Redis's sdscatrepr does for MONITOR.
void AppendQuoted(std::string& out, std::string_view arg) {
  out.push_back('"');
  for (unsigned char ch : arg) {
    switch (ch) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        if (std::isprint(ch)) {
          out.push_back(static_cast<char>(ch));
        } else {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", ch);
          out += buf;
        }
    }
  }
  out.push_back('"');
}

}  // namespace

void Server::FeedMonitors(const Connection& from, std::span<const std::string_view> argv,
                          const CommandSpec& cmd) {
  // MONITOR shows the order in which the one loop executed the commands:
  // that order is the whole atomicity story.
  int64_t us = clock_->WallUs();
  char head[64];
  std::snprintf(head, sizeof(head), "%lld.%06lld [0 ", static_cast<long long>(us / 1'000'000),
                static_cast<long long>(us % 1'000'000));
  std::string line = "+";
  line += head;
  line += from.addr;
  line += "]";
  // Passwords never reach a monitor. As Redis 7: every AUTH argument is
  // redacted, but of HELLO only the user and password after its AUTH word,
  // so `"hello" "3"` still shows which protocol a client asked for.
  std::vector<bool> redact(argv.size(), cmd.name == "auth");
  if (cmd.name == "hello") {
    // HELLO protover [AUTH user pass] [SETNAME name], options in any order.
    for (size_t i = 2; i < argv.size(); ++i) {
      size_t more = argv.size() - 1 - i;
      if (EqualsIgnoreCase(argv[i], "AUTH") && more >= 2) {
        redact[i + 1] = redact[i + 2] = true;
        i += 2;
      } else if (EqualsIgnoreCase(argv[i], "SETNAME") && more >= 1) {
        ++i;
      } else {
        break;
      }
    }
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    line.push_back(' ');
    AppendQuoted(line, i > 0 && redact[i] ? std::string_view("(redacted)") : argv[i]);
  }
  line += "\r\n";
  for (Connection* m : monitors_) {
    if (m->closing()) continue;
    m->output() += line;
    OnClientOutput(*m);
  }
}

void Server::OnClientClosed(Connection& c) {
  if (!c.watched_keys.empty()) UnwatchAll(c);
  if (c.monitor) std::erase(monitors_, &c);
  if (c.held_from != Connection::kNotHeld) {
    c.held_from = Connection::kNotHeld;
    --held_clients_;
  }
  if (c.pending_flush_) {
    std::erase(pending_flush_, &c);
    c.pending_flush_ = false;
  }
  if (c.prev_ != nullptr) c.prev_->next_ = c.next_;
  if (c.next_ != nullptr) c.next_->prev_ = c.prev_;
  if (clients_head_ == &c) clients_head_ = c.next_;
  c.prev_ = c.next_ = nullptr;
  --num_clients_;
}

void Server::OnBeforeSleep(uv_prepare_t* p) {
  static_cast<Server*>(p->data)->BeforeSleep();
}

void Server::BeforeSleep() {
  // The log first: one write (and, for appendfsync always, one fdatasync)
  // for every effect of this iteration, so no reply below can report an
  // effect the log does not have.
  if (aof_ != nullptr) aof_->Flush(clock_->MonoMs());
  // Then every connection with output gets one write. Flush() may close a
  // connection, which removes it from pending_flush_, so walk a copy.
  std::vector<Connection*> flush;
  flush.swap(pending_flush_);
  for (Connection* c : flush) {
    if (!c->pending_flush_) continue;  // closed meanwhile
    c->Flush();
  }
}

void Server::OnCron(uv_timer_t* t) {
  static_cast<Server*>(t->data)->Cron();
}

void Server::Cron() {
  ++cron_runs_;
  // Accepting stopped for want of file descriptors: try again.
  if (accept_paused_) {
    accept_paused_ = false;
    if (!spare_fd_) spare_fd_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    for (auto& a : acceptors_) uv_poll_start(a.get(), UV_READABLE, OnAcceptable);
  }
  TimeSnapshot now = Now();

  // Active expiry: up to 25% of the cron period, as Redis's slow cycle.
  int64_t budget_us = 25 * 1000 * 1000 / 100 / config_.hz;
  db_.ActiveExpireCycle(now.mono, budget_us);
  // Finish any resize of the hash table a little at a time.
  db_.RehashStep(100);

  if (quarantine_started_) quarantine_->Cron(now.mono);
  if (aof_ != nullptr) {
    aof_->Cron(now.mono, now);
    // Replies parked behind a log that could not be written: after a
    // successful retry they may leave.
    if (held_clients_ > 0) {
      ForEachClient([&](Connection& c) {
        if (c.held_from != Connection::kNotHeld && ReplyIsDurable(c.held_until)) {
          OnClientOutput(c);
        }
      });
    }
  }

  // Idle clients and clients stuck over their output limit.
  ForEachClient([&](Connection& c) {
    if (c.closing()) return;
    if (config_.timeout > 0 && !c.monitor &&
        now.mono - c.last_interaction_ms > config_.timeout * 1000) {
      log::Verbose("Closing idle client id={} addr={}", c.id(), c.addr);
      c.Close();
      return;
    }
    if (c.pending_output() > 0) c.CheckOutputLimits();
    // A client idle for a while gives its buffers back (10,000 idle clients
    // would otherwise hold 16 KiB of query buffer each).
    if (now.mono - c.last_interaction_ms > 2000) c.ReleaseIdleBuffers();
  });

  // instantaneous_ops_per_sec: one sample every 100 ms.
  if (now.mono - stats_.ops_sample_time_ms >= 100) {
    int64_t dt = now.mono - stats_.ops_sample_time_ms;
    uint64_t ops = stats_.total_commands_processed - stats_.ops_sample_count;
    stats_.ops_samples[stats_.ops_sample_index] =
        stats_.ops_sample_time_ms == 0 ? 0 : ops * 1000 / static_cast<uint64_t>(dt);
    stats_.ops_sample_index = (stats_.ops_sample_index + 1) % Stats::kOpsSamples;
    stats_.ops_sample_time_ms = now.mono;
    stats_.ops_sample_count = stats_.total_commands_processed;
  }
}

std::optional<std::string> Server::ApplyConfigChange(const std::string& name) {
  if (name == "maxclients") {
    // More clients need more file descriptors: raise the limit now, as at
    // start-up. If the system allows fewer, say how many it allows (Redis's
    // words) rather than accept clients the server cannot take.
    int64_t requested = config_.maxclients;
    if (!AdjustOpenFilesLimit() || config_.maxclients != requested) {
      return "The operating system is not able to handle the specified number of clients, "
             "try with " +
             std::to_string(config_.maxclients);
    }
  } else if (name == "hz") {
    RestartCronTimer();
  } else if (name == "loglevel") {
    log::SetLevel(config_.loglevel);
  } else if (name == "appendfsync" || name == "max-lock-ttl" || name == "quarantine" ||
             name == "quarantine-ms") {
    if (quarantine_started_) quarantine_->OnConfigChange(clock_->MonoMs());
  }
  return std::nullopt;
}

void Server::Dispatch(Connection& client, std::span<const std::string_view> argv,
                      TimeSnapshot now) {
  resp::ReplyWriter reply(&client.output(), client.resp);
  size_t reply_start = client.output().size();
  auto count_error = [&] {
    if (client.output().size() > reply_start && client.output()[reply_start] == '-') {
      ++stats_.total_error_replies;
    }
  };

  // A refused command. Inside MULTI it also dooms the transaction: EXEC will
  // answer EXECABORT (Redis's rule).
  auto reject = [&](std::string_view text) {
    reply.Error(text);
    count_error();
    if (client.in_multi) client.multi_failed = true;
  };

  const CommandSpec* cmd = commands_.Find(argv[0]);
  if (cmd == nullptr) {
    // Like Redis: the name and the first arguments, each cut to 128 bytes.
    std::string args;
    for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
      args += "'" + std::string(UpToNul(argv[i]).substr(0, 128 - args.size())) + "' ";
    }
    return reject("ERR unknown command '" + std::string(UpToNul(argv[0]).substr(0, 128)) +
                  "', with args beginning with: " + args);
  }
  if (!cmd->subcommands.empty() && argv.size() >= 2) {
    const CommandSpec* sub = nullptr;
    for (const CommandSpec& s : cmd->subcommands) {
      if (EqualsIgnoreCase(s.name, argv[1])) sub = &s;
    }
    if (sub == nullptr) {
      std::string upper = cmd->name;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      return reject("ERR unknown subcommand '" + std::string(UpToNul(argv[1]).substr(0, 128)) +
                    "'. Try " + upper + " HELP.");
    }
    cmd = sub;
  }
  int argc = static_cast<int>(argv.size());
  if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) {
    return reject("ERR wrong number of arguments for '" + cmd->fullname + "' command");
  }
  if (!client.authenticated && !cmd->has(kCmdNoAuth)) {
    return reject("NOAUTH Authentication required.");
  }
  // A log that cannot be written must not acknowledge writes (Redis also
  // answers PING this way, so health checks notice).
  if (aof_ != nullptr && !aof_->write_ok() &&
      (cmd->has(kCmdWrite) || cmd->handler == commands::Ping)) {
    return reject("MISCONF " + aof_->write_error());
  }
  if (loading_ && !cmd->has(kCmdLoading)) {
    return reject("LOADING latch is loading the dataset in memory");
  }
  // MULTI: commands are queued, to run together at EXEC (transactions.cc).
  if (client.in_multi && !cmd->has(kCmdTransactionControl)) {
    client.queued.emplace_back(argv.begin(), argv.end());
    reply.Simple("QUEUED");
    return;
  }

  // Restart quarantine: no lease is granted, renewed or extended while
  // locks granted before the restart may still be held by someone.
  if (cmd->has(kCmdGrantsLease)) {
    if (quarantine_->active(now.mono)) {
      reply.Error(quarantine_->RefusalText(now.mono));
      count_error();
      return;
    }
    BeforeLeaseGrant(now.mono);
  }

  uint64_t effects_before = effects_.count();
  CommandContext ctx{*this, client, argv, reply, db_, effects_, now, cmd->fullname};
  client.last_command = &cmd->fullname;
  try {
    cmd->handler(ctx);
  } catch (const std::bad_alloc&) {
    // Out of memory: refuse this command, keep serving the others. (The
    // handlers change the keyspace only after allocating what they store.)
    // Logged at most once a second, with a count, so a burst does not flood
    // the log.
    static int64_t last_oom_log_ms = 0;
    static uint64_t ooms = 0;
    ++ooms;
    if (now.mono - last_oom_log_ms >= 1000) {
      log::Warning(
          "Out of memory executing '{}' for client {} ({} commands refused since the "
          "last report)",
          cmd->fullname, client.addr, ooms);
      last_oom_log_ms = now.mono;
      ooms = 0;
    }
    client.output().resize(reply_start);
    reply.Error("OOM command not allowed: out of memory");
  }
  ++stats_.total_commands_processed;
  count_error();
  if (!monitors_.empty() && !cmd->has(kCmdAdmin)) FeedMonitors(client, argv, *cmd);
  // appendfsync always: this reply reports an effect; it leaves once the
  // log has it on disk (Connection::Flush).
  if (aof_ != nullptr && aof_->holds_replies() && effects_.count() != effects_before) {
    if (client.held_from == Connection::kNotHeld) {
      client.held_from = reply_start;
      ++held_clients_;
    }
    client.held_until = aof_->appended_end();
  }
}

}  // namespace latch
