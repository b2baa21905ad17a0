// latch::launch::ServerProcess: one latch-server child process on a loopback
// port, owned like a file descriptor (RAII: the process is killed and reaped
// when its owner goes).
//
// Every tool and test that needs real servers (latch-demo, latch-chaos, the
// RedLock library's tests) starts them the same way, so the way lives here
// once:
//
//   * the port: bind port 0 on loopback, read the number back, close, and
//     start the server on it. Someone may take the port between the close
//     and the server's bind; the server then exits, and Start() tries again
//     on a fresh port (a few times) instead of failing the run.
//   * readiness: the server is up when it answers PING on that port. Until
//     then a client would get "connection refused", which tools and tests
//     would misread as a fault they injected.
//   * the log: stdout and stderr are appended to a file (by default
//     <dir>/server.log) so that a failure can quote the server's last words
//     (LogTail()).
//   * faults: Stop() is a clean shutdown (SIGTERM), Kill() a crash (SIGKILL),
//     Pause()/Resume() a frozen process (SIGSTOP/SIGCONT: it holds its port
//     and its connections but answers nothing), and Restart() brings it back
//     on the same port and data directory, as a rebooted machine would come
//     back at the same address with the same disk.
//
// A ServerSpec is a plain value: everything needed to start the node again.
// A launcher that keeps N nodes in a directory (a future latch-fixture, or a
// harness that restarts nodes) keeps one spec per node, ports included, and
// can start, kill, pause and restart each by index; nothing else is hidden
// in the process object.
//
// Not thread-safe: one owner drives each ServerProcess.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace latch::launch {

using Millis = std::chrono::milliseconds;

// A server that could not be started (binary missing, never answered, exited
// at once); the message quotes the end of its log.
class LaunchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ServerSpec {
  std::string binary;  // path of latch-server
  std::string dir;     // --dir: the data directory (created when missing)
  // Extra options after --port, --bind and --dir, as the command line takes
  // them: {"--appendonly", "yes", "--quarantine", "never"}.
  std::vector<std::string> args;
  std::string host = "127.0.0.1";  // --bind, and where PING is sent
  uint16_t port = 0;               // 0: a free port, picked by Start()
  // With a password, the readiness PING is preceded by AUTH [user] password
  // (a node whose default user is off or has requirepass).
  std::string user, password;
  std::string log_path;  // stdout and stderr; empty: <dir>/server.log
  // When the server counts as started. kPong: it answered +PONG, so it has
  // loaded its log and serves commands. kAnswers: any reply will do (also
  // -LOADING while the log replays, -NOAUTH when a password is set).
  enum class Ready { kPong, kAnswers } ready = Ready::kPong;
  Millis start_timeout{10'000};  // per attempt
  // The server gets SIGKILL when the process that started it dies, so that
  // a crashed harness leaves nothing behind. A launcher meant to leave nodes
  // running after it exits would turn this off.
  bool die_with_parent = true;
};

class ServerProcess {
 public:
  explicit ServerProcess(ServerSpec spec);
  ~ServerProcess();  // Kill() if still running
  ServerProcess(ServerProcess&& other) noexcept;
  ServerProcess& operator=(ServerProcess&& other) noexcept;
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts the server and waits until it is ready. With spec.port 0, picks a
  // free port, and a fresh one for each retry when the server exits at once
  // (the port was taken meanwhile); with a fixed port, as Restart(). Throws
  // LaunchError.
  void Start();
  // Starts it again after Stop(), Kill() or an exit of its own: same port,
  // same data directory, same options. Retries a few times when it exits at
  // once (the port may still be held for a moment). Throws LaunchError.
  void Restart();

  // The two halves of Restart(), without its retries, so that several nodes
  // can be brought back together: Spawn() each, then WaitReady() each.
  // Spawn() forks and execs on port() (throws LaunchError if exec fails);
  // WaitReady() is false when the server exited or did not answer in time
  // (it is left running then: Kill() it, or Restart()).
  void Spawn();
  bool WaitReady(Millis timeout);

  // SIGTERM, a clean shutdown (after SIGCONT, if paused); SIGKILL if it has
  // not exited within `timeout`. Returns the wait status (see waitpid(2)),
  // or nullopt if it was not running.
  std::optional<int> Stop(Millis timeout = Millis{5000});
  // SIGKILL (works on a paused process too) and reap: a crash.
  void Kill();
  // Waits for an exit of its own (SHUTDOWN, DEBUG POWERLOSS, a crash) and
  // reaps it. Returns the wait status, or nullopt if it is still running
  // after `timeout` (or was not running).
  std::optional<int> WaitExit(Millis timeout);

  // SIGSTOP / SIGCONT.
  void Pause();
  void Resume();

  // A launcher whose nodes outlive it (latch-fixture: `up` starts them, a
  // later `kill` or `down` finds them by the pid it recorded):
  // Detach() forgets the process without stopping it and returns its pid
  // (start it with die_with_parent false); Adopt() takes charge of such a
  // process again. An adopted process is not this process's child: its exit
  // is seen by polling /proc (and its wait status is unknown: 0).
  pid_t Detach();
  void Adopt(pid_t pid, bool paused);

  bool running() const { return pid_ > 0; }  // started and not reaped
  bool paused() const { return paused_; }
  pid_t pid() const { return pid_; }  // -1 when not running
  uint16_t port() const { return spec_.port; }
  const std::string& host() const { return spec_.host; }
  const std::string& dir() const { return spec_.dir; }
  const std::string& log_path() const { return spec_.log_path; }
  const ServerSpec& spec() const { return spec_; }
  // The wait status of the last exit that was reaped, if any.
  std::optional<int> last_status() const { return last_status_; }

  // The last `bytes` of the log file, for error messages.
  std::string LogTail(size_t bytes = 2000) const;

 private:
  void Reaped(int status);  // the process is gone: forget its pid
  void StartOnFixedPort(int attempts);

  // Whether the process has exited (reaping it when it is our child).
  bool Exited(int* status);

  ServerSpec spec_;
  pid_t pid_ = -1;
  bool paused_ = false;
  bool adopted_ = false;
  std::optional<int> last_status_;
};

// Sends one command on a fresh connection and returns the reply, or nullopt
// when none came before `timeout` (refused, closed, silent).
std::optional<std::string> CallText(const std::string& host, uint16_t port,
                                    const std::vector<std::string>& argv, Millis timeout,
                                    bool* is_error = nullptr);
// The same after AUTH [user] password on that connection (none when the
// password is empty); nullopt too when AUTH is refused.
struct Auth {
  std::string user, password;
};
std::optional<std::string> CallText(const std::string& host, uint16_t port, const Auth& auth,
                                    const std::vector<std::string>& argv, Millis timeout,
                                    bool* is_error = nullptr);

// Whether `pid` is a live process (a zombie is not).
bool ProcessAlive(pid_t pid);

// A TCP port on `host` that was free a moment ago (bind port 0, read it,
// close). Throws LaunchError when no port can be bound.
uint16_t FreePort(const std::string& host = "127.0.0.1");

}  // namespace latch::launch
