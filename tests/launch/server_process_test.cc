// Tests of latch::launch::ServerProcess, the helper every C++ tool and test
// starts latch-server with: against the real binary, each behaviour the
// tools rely on (free port, readiness, the log, stop/kill/pause/restart on
// the same port and data, and the errors when a server cannot start).
#include "tools/launch/server_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "common/unique_fd.h"
#include "protocol/request_writer.h"
#include "tools/redlock/node_set.h"

namespace latch::launch {
namespace {

using namespace std::chrono_literals;

std::string ServerPath() {
  if (const char* b = std::getenv("LATCH_BUILD_DIR")) return std::string(b) + "/latch-server";
  return LATCH_SERVER_PATH;
}

// A fresh directory, removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/latch-launch-test.XXXXXX";
    const char* d = ::mkdtemp(tmpl);
    if (d == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = d;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

ServerSpec Spec(const TempDir& dir, std::vector<std::string> args = {}) {
  ServerSpec spec;
  spec.binary = ServerPath();
  spec.dir = dir.path() + "/data";
  spec.args = std::move(args);
  return spec;
}

// One command on a fresh connection; the reply as redis-cli shows it, or
// "no answer: …" when none came within `timeout`.
std::string Call(uint16_t port, std::initializer_list<std::string_view> args,
                 std::chrono::milliseconds timeout = 2s) {
  NodeSet ns({Endpoint{"127.0.0.1", port}});
  std::string req;
  resp::AppendRequest(req, args);
  auto r = ns.Round(req, 1, timeout);
  return r[0].ok() ? r[0].replies[0].ToString() : "no answer: " + r[0].detail;
}

TEST(ServerProcess, StartsOnAFreePortAndAnswersOnceStarted) {
  TempDir dir;
  ServerProcess s(Spec(dir, {"--quarantine", "never"}));
  EXPECT_FALSE(s.running());
  s.Start();
  ASSERT_TRUE(s.running());
  EXPECT_GT(s.pid(), 0);
  EXPECT_NE(s.port(), 0);
  // Ready means ready: the very first request is served.
  EXPECT_EQ(Call(s.port(), {"PING"}), "PONG");
  EXPECT_TRUE(std::filesystem::is_directory(s.dir()));
  EXPECT_EQ(s.log_path(), s.dir() + "/server.log");
  EXPECT_TRUE(std::filesystem::exists(s.log_path()));
}

TEST(ServerProcess, TwoServersGetTwoPorts) {
  TempDir a, b;
  ServerProcess s1(Spec(a)), s2(Spec(b));
  s1.Start();
  s2.Start();
  EXPECT_NE(s1.port(), s2.port());
}

TEST(ServerProcess, StopIsACleanShutdownAndRestartKeepsPortAndData) {
  TempDir dir;
  ServerProcess s(Spec(dir, {"--appendonly", "yes", "--quarantine", "never"}));
  s.Start();
  const uint16_t port = s.port();
  ASSERT_EQ(Call(port, {"SET", "k", "v"}), "OK");
  auto status = s.Stop();
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << *status;
  EXPECT_FALSE(s.running());
  EXPECT_NE(Call(port, {"PING"}, 200ms).rfind("no answer", 0), std::string::npos);
  s.Restart();
  EXPECT_EQ(s.port(), port);
  EXPECT_EQ(Call(port, {"GET", "k"}), "\"v\"");
}

TEST(ServerProcess, KillIsACrash) {
  TempDir dir;
  ServerProcess s(Spec(dir));
  s.Start();
  const pid_t pid = s.pid();
  s.Kill();
  EXPECT_FALSE(s.running());
  ASSERT_TRUE(s.last_status());
  EXPECT_TRUE(WIFSIGNALED(*s.last_status()) && WTERMSIG(*s.last_status()) == SIGKILL);
  EXPECT_EQ(::kill(pid, 0), -1);  // reaped, not a zombie
  EXPECT_EQ(errno, ESRCH);
  s.Kill();  // idempotent
}

TEST(ServerProcess, APausedServerIsSilentUntilResumed) {
  TempDir dir;
  ServerProcess s(Spec(dir));
  s.Start();
  s.Pause();
  EXPECT_TRUE(s.paused());
  EXPECT_NE(Call(s.port(), {"PING"}, 300ms).find("no answer"), std::string::npos);
  s.Resume();
  EXPECT_FALSE(s.paused());
  EXPECT_EQ(Call(s.port(), {"PING"}), "PONG");
  // Stop works on a paused server too (SIGTERM stays pending while stopped).
  s.Pause();
  auto status = s.Stop(3s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status)) << *status;
}

TEST(ServerProcess, WaitExitSeesAnExitOfItsOwn) {
  TempDir dir;
  ServerProcess s(Spec(dir));
  s.Start();
  EXPECT_FALSE(s.WaitExit(50ms));  // still running
  Call(s.port(), {"SHUTDOWN"}, 500ms);
  auto status = s.WaitExit(5s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
  EXPECT_FALSE(s.running());
}

TEST(ServerProcess, TheDestructorKillsAndReaps) {
  TempDir dir;
  pid_t pid;
  {
    ServerProcess s(Spec(dir));
    s.Start();
    pid = s.pid();
    ServerProcess moved(std::move(s));  // ownership moves with the object
    EXPECT_FALSE(s.running());
    EXPECT_EQ(moved.pid(), pid);
  }
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST(ServerProcess, ATakenFixedPortFailsWithTheServersOwnWords) {
  // Someone else listens on the port: every attempt exits at once, and the
  // error quotes the server's log.
  UniqueFd holder(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ASSERT_EQ(::bind(holder.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ASSERT_EQ(::listen(holder.get(), 1), 0);
  ASSERT_EQ(::getsockname(holder.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
  TempDir dir;
  ServerSpec spec = Spec(dir);
  spec.port = ntohs(a.sin_port);
  ServerProcess s(spec);
  try {
    s.Start();
    FAIL() << "started on a taken port";
  } catch (const LaunchError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("did not start on port " + std::to_string(spec.port)), std::string::npos)
        << what;
    EXPECT_NE(what.find("listening socket"), std::string::npos) << what;
  }
  EXPECT_FALSE(s.running());
}

TEST(ServerProcess, AMissingBinaryIsReportedAsSuch) {
  TempDir dir;
  ServerSpec spec = Spec(dir);
  spec.binary = dir.path() + "/no-such-server";
  ServerProcess s(spec);
  try {
    s.Start();
    FAIL() << "started a missing binary";
  } catch (const LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(s.running());
}

TEST(ServerProcess, ReadyOnAnyAnswerWhenAsked) {
  // With a password, PING gets -NOAUTH: kPong would never be satisfied.
  TempDir dir;
  ServerSpec spec = Spec(dir, {"--requirepass", "s3cret"});
  spec.ready = ServerSpec::Ready::kAnswers;
  ServerProcess s(spec);
  s.Start();
  EXPECT_NE(Call(s.port(), {"PING"}).find("NOAUTH"), std::string::npos);
}

}  // namespace
}  // namespace latch::launch
