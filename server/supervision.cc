#include "server/supervision.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/unique_fd.h"
#include "server/log.h"

namespace latch::supervision {

SupervisedMode Detect(SupervisedMode mode) {
  if (mode == SupervisedMode::kAuto) {
    if (std::getenv("UPSTART_JOB") != nullptr) return SupervisedMode::kUpstart;
    if (std::getenv("NOTIFY_SOCKET") != nullptr) return SupervisedMode::kSystemd;
    return SupervisedMode::kNo;
  }
  return mode;
}

SupervisedMode Begin(SupervisedMode mode, bool daemonize) {
  SupervisedMode in_charge = Detect(mode);
  if (in_charge == SupervisedMode::kUpstart) {
    if (std::getenv("UPSTART_JOB") == nullptr) {
      log::Warning("upstart supervision requested, but UPSTART_JOB not found!");
      in_charge = SupervisedMode::kNo;
    } else {
      // Upstart's "expect stop": the job is up once the process stops itself.
      log::Notice("supervised by upstart, will stop to signal readiness.");
      ::raise(SIGSTOP);
      ::unsetenv("UPSTART_JOB");
    }
  } else if (in_charge == SupervisedMode::kSystemd) {
    if (std::getenv("NOTIFY_SOCKET") == nullptr) {
      log::Warning("systemd supervision requested or auto-detected, but NOTIFY_SOCKET not found!");
      in_charge = SupervisedMode::kNo;
    } else {
      log::Notice(
          "Supervised by systemd. Please make sure you set appropriate values for "
          "TimeoutStartSec and TimeoutStopSec in your service unit.");
    }
  }
  if (daemonize && in_charge == SupervisedMode::kNo) {
    // The parent exits at once; the child carries on in a session of its
    // own, with its standard streams on /dev/null (Redis's daemonize()).
    pid_t pid = ::fork();
    if (pid < 0) {
      log::Warning("Can't fork into the background: {}", std::strerror(errno));
    } else if (pid > 0) {
      ::_exit(0);
    } else {
      ::setsid();
      int fd = ::open("/dev/null", O_RDWR);
      if (fd >= 0) {
        ::dup2(fd, STDIN_FILENO);
        ::dup2(fd, STDOUT_FILENO);
        ::dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO) ::close(fd);
      }
    }
  }
  return in_charge;
}

bool NotifySystemd(std::string_view state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0') return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const size_t len = std::strlen(path);
  if (len >= sizeof(addr.sun_path)) return false;
  std::memcpy(addr.sun_path, path, len);
  // "@name": an abstract socket, whose name starts with a NUL byte.
  if (path[0] == '@') addr.sun_path[0] = '\0';
  UniqueFd fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return false;
  const auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  ssize_t n = ::sendto(fd.get(), state.data(), state.size(), MSG_NOSIGNAL,
                       reinterpret_cast<const sockaddr*>(&addr), addr_len);
  if (n < 0) {
    log::Warning("Can't notify systemd ({}): {}", path, std::strerror(errno));
    return false;
  }
  return true;
}

void WritePidFile(const std::string& path) {
  if (path.empty()) return;
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    log::Warning("Failed to write PID file: {}", std::strerror(errno));
    return;
  }
  std::fprintf(f, "%d\n", static_cast<int>(::getpid()));
  std::fclose(f);
}

void RemovePidFile(const std::string& path) {
  if (!path.empty()) ::unlink(path.c_str());
}

}  // namespace latch::supervision
