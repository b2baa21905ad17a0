#include "tools/launch/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "common/unique_fd.h"
#include "protocol/reply_parser.h"
#include "protocol/request_writer.h"

namespace latch::launch {

namespace {

using Clock = std::chrono::steady_clock;

// How many times Start() tries fresh ports, and Restart() the same port.
constexpr int kFreshPortAttempts = 5;
constexpr int kSamePortAttempts = 4;
// Between two attempts on the same port: long enough for a port held by the
// previous process's last moments to be free again.
constexpr Millis kSamePortPause{200};

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// host (numeric IPv4 or IPv6) and port as a socket address.
bool ToAddress(const std::string& host, uint16_t port, sockaddr_storage* out, socklen_t* len) {
  *out = {};
  auto* v4 = reinterpret_cast<sockaddr_in*>(out);
  if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    *len = sizeof(sockaddr_in);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
  if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    *len = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

// One command on a fresh connection. The reply, or nullopt when no
// well-formed reply came before `timeout` (refused: not listening yet;
// silence: paused).
std::optional<resp::Reply> Call(const std::string& host, uint16_t port, const Auth& auth,
                                const std::vector<std::string>& argv, Millis timeout) {
  sockaddr_storage addr;
  socklen_t len;
  if (!ToAddress(host, port, &addr, &len)) return std::nullopt;
  UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd) return std::nullopt;
  const auto deadline = Clock::now() + timeout;
  auto wait_for = [&](short events) {
    auto left = std::chrono::ceil<Millis>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd.get(), events, 0};
    return ::poll(&p, 1, static_cast<int>(left)) == 1;
  };
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    if (errno != EINPROGRESS || !wait_for(POLLOUT)) return std::nullopt;
    int err = 0;
    socklen_t err_len = sizeof(err);
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &err_len) != 0 || err != 0) {
      return std::nullopt;
    }
  }
  // AUTH goes first on the same write; its reply is read and checked first.
  std::string request;
  size_t skip = 0;
  if (!auth.password.empty()) {
    std::vector<std::string> a = {"AUTH"};
    if (!auth.user.empty()) a.push_back(auth.user);
    a.push_back(auth.password);
    resp::AppendRequest(request, std::span<const std::string>(a));
    skip = 1;
  }
  resp::AppendRequest(request, std::span<const std::string>(argv));
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return std::nullopt;
  }
  std::string in;
  while (wait_for(POLLIN)) {
    char buf[512];
    ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n <= 0) return std::nullopt;
    in.append(buf, static_cast<size_t>(n));
    while (true) {
      resp::Reply reply;
      size_t used = 0;
      auto st = resp::ParseReply(in, &reply, &used);
      if (st == resp::ReplyStatus::kMalformed) return std::nullopt;
      if (st != resp::ReplyStatus::kOk) break;
      in.erase(0, used);
      if (skip == 0) return reply;
      if (reply.type == resp::Reply::Type::kError) return std::nullopt;  // AUTH refused
      --skip;
    }
  }
  return std::nullopt;
}

std::optional<resp::Reply> Ping(const ServerSpec& spec, Millis timeout) {
  return Call(spec.host, spec.port, Auth{spec.user, spec.password}, {"PING"}, timeout);
}

}  // namespace

std::optional<std::string> CallText(const std::string& host, uint16_t port,
                                    const std::vector<std::string>& argv, Millis timeout,
                                    bool* is_error) {
  return CallText(host, port, Auth{}, argv, timeout, is_error);
}

std::optional<std::string> CallText(const std::string& host, uint16_t port, const Auth& auth,
                                    const std::vector<std::string>& argv, Millis timeout,
                                    bool* is_error) {
  auto r = Call(host, port, auth, argv, timeout);
  if (!r) return std::nullopt;
  if (is_error != nullptr) *is_error = r->type == resp::Reply::Type::kError;
  if (r->type == resp::Reply::Type::kInteger) return std::to_string(r->integer);
  if (r->type == resp::Reply::Type::kArray) {
    std::string out;
    for (const resp::Reply& e : r->elements) out += e.str + "\n";
    return out;
  }
  return r->str;
}

bool ProcessAlive(pid_t pid) {
  if (pid <= 0 || ::kill(pid, 0) != 0) return false;
  // A zombie answers kill(0) but is gone: the third field of stat is its state.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'Z';
}

uint16_t FreePort(const std::string& host) {
  sockaddr_storage addr;
  socklen_t len;
  if (!ToAddress(host, 0, &addr, &len)) throw LaunchError("not a numeric address: " + host);
  UniqueFd fd(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd || ::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    throw LaunchError(Errno("cannot find a free port on " + host));
  }
  return ntohs(addr.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&addr)->sin_port
                                         : reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
}

ServerProcess::ServerProcess(ServerSpec spec) : spec_(std::move(spec)) {
  if (spec_.log_path.empty()) spec_.log_path = spec_.dir + "/server.log";
}

ServerProcess::~ServerProcess() {
  Kill();
}

ServerProcess::ServerProcess(ServerProcess&& other) noexcept
    : spec_(std::move(other.spec_)),
      pid_(std::exchange(other.pid_, -1)),
      paused_(std::exchange(other.paused_, false)),
      last_status_(other.last_status_) {}

ServerProcess& ServerProcess::operator=(ServerProcess&& other) noexcept {
  if (this != &other) {
    Kill();
    spec_ = std::move(other.spec_);
    pid_ = std::exchange(other.pid_, -1);
    paused_ = std::exchange(other.paused_, false);
    last_status_ = other.last_status_;
  }
  return *this;
}

void ServerProcess::Start() {
  if (running()) throw LaunchError("latch-server on port " + std::to_string(port()) + " runs");
  std::error_code ec;
  std::filesystem::create_directories(spec_.dir, ec);
  if (ec) throw LaunchError("cannot create " + spec_.dir + ": " + ec.message());
  if (spec_.port != 0) return StartOnFixedPort(kSamePortAttempts);
  for (int attempt = 0; attempt < kFreshPortAttempts; ++attempt) {
    spec_.port = FreePort(spec_.host);
    Spawn();
    if (WaitReady(spec_.start_timeout)) return;
    Kill();
  }
  const uint16_t last = spec_.port;
  spec_.port = 0;  // none of them is ours
  throw LaunchError("latch-server did not start (" + std::to_string(kFreshPortAttempts) +
                    " ports tried, the last " + std::to_string(last) + "); " + spec_.log_path +
                    " ends with:\n" + LogTail());
}

void ServerProcess::Restart() {
  if (running()) throw LaunchError("latch-server on port " + std::to_string(port()) + " runs");
  if (spec_.port == 0) throw LaunchError("Restart() before Start(): no port yet");
  StartOnFixedPort(kSamePortAttempts);
}

void ServerProcess::StartOnFixedPort(int attempts) {
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(kSamePortPause);
    Spawn();
    if (WaitReady(spec_.start_timeout)) return;
    Kill();
  }
  throw LaunchError("latch-server did not start on port " + std::to_string(spec_.port) + " (" +
                    std::to_string(attempts) + " attempts); " + spec_.log_path + " ends with:\n" +
                    LogTail());
}

void ServerProcess::Spawn() {
  if (running()) throw LaunchError("latch-server on port " + std::to_string(port()) + " runs");
  // Everything the child needs is prepared here: between fork and exec a
  // multi-threaded parent's child may only make async-signal-safe calls.
  std::vector<std::string> args = {
      spec_.binary, "--port", std::to_string(spec_.port), "--bind", spec_.host, "--dir", spec_.dir};
  args.insert(args.end(), spec_.args.begin(), spec_.args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  UniqueFd log(::open(spec_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!log) throw LaunchError(Errno("cannot open " + spec_.log_path));
  UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  // exec's failure comes back through a close-on-exec pipe: EOF means the
  // exec succeeded, an errno that it did not.
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw LaunchError(Errno("pipe"));
  UniqueFd exec_read(pipe_fds[0]), exec_write(pipe_fds[1]);
  const pid_t parent = ::getpid();
  const bool die_with_parent = spec_.die_with_parent;

  pid_t pid = ::fork();
  if (pid < 0) throw LaunchError(Errno("fork"));
  if (pid == 0) {
    if (die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    }
    ::dup2(devnull.get(), 0);
    ::dup2(log.get(), 1);
    ::dup2(log.get(), 2);
    // Tools ignore SIGPIPE, and a shell may have started them with SIGINT
    // and SIGQUIT ignored; ignored signals stay ignored across exec, and the
    // server expects the defaults. Blocked signals (a tool's signalfd) too.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP}) ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(argv[0], argv.data());
    int err = errno;
    ssize_t ignored = ::write(exec_write.get(), &err, sizeof(err));
    (void)ignored;
    ::_exit(127);
  }
  exec_write.reset();
  int exec_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_read.get(), &exec_errno, sizeof(exec_errno));
  } while (n < 0 && errno == EINTR);
  pid_ = pid;
  paused_ = false;
  if (n == sizeof(exec_errno)) {
    Kill();  // reaps the child, which is exiting
    throw LaunchError("cannot run " + spec_.binary + ": " + std::strerror(exec_errno));
  }
}

bool ServerProcess::WaitReady(Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  while (running()) {
    int status;
    if (Exited(&status)) {
      Reaped(status);  // exited: port taken, bad options, a corrupt log…
      return false;
    }
    auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    if (auto r = Ping(spec_, std::min(left, Millis{500}))) {
      if (spec_.ready == ServerSpec::Ready::kAnswers) return true;
      if (r->type == resp::Reply::Type::kSimple && r->str == "PONG") return true;
    }
    std::this_thread::sleep_for(Millis{5});
  }
  return false;
}

std::optional<int> ServerProcess::Stop(Millis timeout) {
  if (!running()) return std::nullopt;
  // A stopped process keeps SIGTERM pending until it runs again.
  if (paused_) Resume();
  ::kill(pid_, SIGTERM);
  if (auto status = WaitExit(timeout)) return status;
  Kill();
  return last_status_;
}

bool ServerProcess::Exited(int* status) {
  *status = 0;
  if (!adopted_) return ::waitpid(pid_, status, WNOHANG) == pid_;
  // Not our child: gone when no live process has the pid (reaped by its
  // new parent, or a zombie waiting for it). Reap it if it happens to be
  // ours after all.
  ::waitpid(pid_, status, WNOHANG);
  return !ProcessAlive(pid_);
}

void ServerProcess::Kill() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  if (adopted_) {
    while (!Exited(&status)) std::this_thread::sleep_for(Millis{1});
  } else {
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  Reaped(status);
}

pid_t ServerProcess::Detach() {
  pid_t pid = pid_;
  pid_ = -1;
  paused_ = false;
  adopted_ = false;
  return pid;
}

void ServerProcess::Adopt(pid_t pid, bool paused) {
  pid_ = pid;
  paused_ = paused;
  adopted_ = true;
}

std::optional<int> ServerProcess::WaitExit(Millis timeout) {
  const auto deadline = Clock::now() + timeout;
  while (running()) {
    int status;
    if (Exited(&status)) {
      Reaped(status);
      return status;
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(Millis{1});
  }
  return std::nullopt;
}

void ServerProcess::Pause() {
  if (!running()) return;
  ::kill(pid_, SIGSTOP);
  paused_ = true;
}

void ServerProcess::Resume() {
  if (!running()) return;
  ::kill(pid_, SIGCONT);
  paused_ = false;
}

void ServerProcess::Reaped(int status) {
  pid_ = -1;
  paused_ = false;
  adopted_ = false;
  last_status_ = status;
}

std::string ServerProcess::LogTail(size_t bytes) const {
  std::ifstream f(spec_.log_path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

}  // namespace latch::launch
