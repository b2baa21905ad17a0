// Tests of latch::RedLock against real latch-server processes (3 and 5 nodes,
// some down, paused with SIGSTOP, or in restart quarantine) and against fake
// nodes that answer garbage, answer late, or never answer.
#include "tools/redlock/redlock.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/unique_fd.h"
#include "protocol/request_writer.h"
#include "tools/launch/server_process.h"

namespace latch {
namespace {

using namespace std::chrono_literals;
using Clock = latch::LockClock;

std::string ServerPath() {
  if (const char* b = std::getenv("LATCH_BUILD_DIR")) return std::string(b) + "/latch-server";
  return LATCH_SERVER_PATH;
}

// One request to one node, for setting up and checking state.
resp::Reply Command(uint16_t port, std::initializer_list<std::string_view> args) {
  NodeSet ns({Endpoint{"127.0.0.1", port}});
  std::string req;
  resp::AppendRequest(req, args);
  auto r = ns.Round(req, 1, 2s);
  if (!r[0].ok()) {
    resp::Reply e;
    e.type = resp::Reply::Type::kError;
    e.str = "test: no reply: " + r[0].detail;
    return e;
  }
  return r[0].replies[0];
}

// A latch-server on a free port with a fresh data directory (appendonly yes
// in a fresh directory: no restart quarantine unless asked for), removed
// with the server.
class Server {
 public:
  explicit Server(std::vector<std::string> extra = {}) : server_(Spec(std::move(extra))) {
    try {
      server_.Start();
    } catch (const launch::LaunchError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  ~Server() {
    server_.Kill();
    std::error_code ec;
    std::filesystem::remove_all(server_.dir(), ec);
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const { return server_.port(); }
  Endpoint endpoint() const { return Endpoint{"127.0.0.1", server_.port()}; }
  void Pause() { server_.Pause(); }
  void Resume() { server_.Resume(); }
  resp::Reply Cmd(std::initializer_list<std::string_view> args) { return Command(port(), args); }

 private:
  static launch::ServerSpec Spec(std::vector<std::string> extra) {
    char tmpl[] = "/tmp/latch-redlock-test.XXXXXX";
    launch::ServerSpec spec;
    spec.binary = ServerPath();
    const char* dir = ::mkdtemp(tmpl);
    if (dir == nullptr) throw std::runtime_error("mkdtemp failed");
    spec.dir = dir;
    spec.args = {"--appendonly", "yes", "--loglevel", "warning"};
    spec.args.insert(spec.args.end(), extra.begin(), extra.end());
    // Any answer to PING: with --requirepass it is -NOAUTH.
    spec.ready = launch::ServerSpec::Ready::kAnswers;
    return spec;
  }

  launch::ServerProcess server_;
};

// A node that is not a latch server: it answers every request with
// garbage, answers +OK late, or accepts connections and never answers.
class FakeNode {
 public:
  enum class Mode { kGarbage, kSilent, kLateOk };
  explicit FakeNode(Mode mode, std::chrono::milliseconds delay = 0ms) : mode_(mode), delay_(delay) {
    listener_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(listener_.get(), 64);
    ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    // Silent: the kernel completes connections in the backlog and buffers
    // the requests; nobody ever reads them.
    if (mode_ != Mode::kSilent) thread_ = std::thread([this] { Serve(); });
  }
  ~FakeNode() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  Endpoint endpoint() const { return Endpoint{"127.0.0.1", port_}; }

 private:
  void Serve() {
    std::vector<UniqueFd> conns;
    while (!stop_) {
      std::vector<pollfd> fds = {{listener_.get(), POLLIN, 0}};
      for (auto& c : conns) fds.push_back({c.get(), POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN)
        conns.emplace_back(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      for (size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & POLLIN)) continue;
        char buf[4096];
        if (::recv(fds[i].fd, buf, sizeof(buf), 0) <= 0) continue;
        std::string out = "+OK\r\n";
        if (mode_ == Mode::kGarbage) out = "HTTP/1.1 400 Bad Request\r\n\r\n";
        if (mode_ == Mode::kLateOk) std::this_thread::sleep_for(delay_);
        ::send(fds[i].fd, out.data(), out.size(), MSG_NOSIGNAL);
      }
    }
  }

  Mode mode_;
  std::chrono::milliseconds delay_;
  UniqueFd listener_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// N real servers, started in parallel is not needed: each takes ~30 ms.
struct Cluster {
  explicit Cluster(int n, std::vector<std::string> extra = {}) {
    for (int i = 0; i < n; ++i) servers.push_back(std::make_unique<Server>(extra));
  }
  std::vector<Endpoint> endpoints() const {
    std::vector<Endpoint> out;
    for (const auto& s : servers) out.push_back(s->endpoint());
    return out;
  }
  Server& operator[](size_t i) { return *servers[i]; }
  std::vector<std::unique_ptr<Server>> servers;
};

// An endpoint where nothing listens: connection refused at once.
Endpoint DeadEndpoint() {
  return Endpoint{"127.0.0.1", launch::FreePort()};
}

// Options for tests: a node timeout generous enough that a healthy node on
// a loaded two-core CI machine always answers in time (tests about timeouts
// set their own), short retry pauses.
RedLockOptions Opts() {
  RedLockOptions o;
  o.node_timeout = 400ms;
  o.retry_delay_min = 20ms;
  o.retry_delay_max = 60ms;
  return o;
}

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// ---------------------------------------------------------------- arithmetic

TEST(RedLockMath, QuorumIsAStrictMajority) {
  const size_t expected[] = {0, 1, 2, 2, 3, 3, 4, 4, 5, 5};
  for (size_t n = 1; n < std::size(expected); ++n) {
    EXPECT_EQ(RedLock::Quorum(n), expected[n]) << "n=" << n;
    // Two quorums always share a node; N - quorum failures are tolerated.
    EXPECT_GT(2 * RedLock::Quorum(n), n);
    EXPECT_LE(2 * (RedLock::Quorum(n) - 1), n);
  }
}

TEST(RedLockMath, DriftIsOnePercentPlusTwoMilliseconds) {
  EXPECT_EQ(RedLock::Drift(1000ms), 12ms);
  EXPECT_EQ(RedLock::Drift(30s), 302ms);
  EXPECT_EQ(RedLock::Drift(10ms), 2ms);
}

TEST(RedLockMath, NodeTimeoutIsFarBelowTheTtl) {
  EXPECT_EQ(RedLock::DefaultNodeTimeout(1000ms), 50ms);
  EXPECT_EQ(RedLock::DefaultNodeTimeout(100ms), 10ms);
  EXPECT_EQ(RedLock::DefaultNodeTimeout(30s), 200ms);
}

TEST(RedLockMath, TokensAre128RandomBitsInHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    std::string t = RedLock::NewToken();
    ASSERT_EQ(t.size(), 32u);
    EXPECT_EQ(t.find_first_not_of("0123456789abcdef"), std::string::npos) << t;
    seen.insert(t);
  }
  EXPECT_EQ(seen.size(), 200u);
}

TEST(RedLockMath, ParsesNodeLists) {
  std::string err;
  auto eps = ParseEndpoints("127.0.0.1:7000,localhost:7001,[::1]:7002", &err);
  ASSERT_TRUE(eps) << err;
  ASSERT_EQ(eps->size(), 3u);
  EXPECT_EQ((*eps)[1].host, "localhost");
  EXPECT_EQ((*eps)[2].host, "::1");
  EXPECT_EQ((*eps)[2].port, 7002);
  EXPECT_FALSE(ParseEndpoints("127.0.0.1", &err));
  EXPECT_FALSE(ParseEndpoints("127.0.0.1:0", &err));
  EXPECT_FALSE(ParseEndpoints("a:1,", &err));
  EXPECT_FALSE(ParseEndpoints("a:99999", &err));
}

// ---------------------------------------------------------------- acquire

TEST(RedLock, AcquiresOnEveryNodeWithTheValidityFormula) {
  Cluster c(3);
  RedLock rl(c.endpoints(), Opts());
  const auto before = Clock::now();
  AcquireResult r = rl.acquire("k", 1000ms);
  const auto after = Clock::now();
  ASSERT_TRUE(r) << r.last.nodes[0].text;
  Lock& lock = *r.lock;
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(lock.grants(), 3u);
  EXPECT_EQ(lock.token().size(), 32u);
  // validity_end = t0 + ttl - drift with before <= t0 <= after.
  EXPECT_LE(lock.validity_end(), after + 1000ms - 12ms);
  EXPECT_GE(lock.validity_end(), before + 1000ms - 12ms);
  EXPECT_TRUE(lock.held());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c[i].Cmd({"GET", "k"}).str, lock.token());
    int64_t pttl = c[i].Cmd({"PTTL", "k"}).integer;
    EXPECT_GT(pttl, 800);
    EXPECT_LE(pttl, 1000);
  }
}

TEST(RedLock, ValidityIsTtlMinusElapsedMinusDrift) {
  // One node that answers +OK after 80 ms: the round takes at least that,
  // and the validity must shrink by it.
  FakeNode slow(FakeNode::Mode::kLateOk, 80ms);
  RedLockOptions o = Opts();
  o.node_timeout = 500ms;
  RedLock rl({slow.endpoint()}, o);
  AcquireResult r = rl.acquire("k", 1000ms);
  ASSERT_TRUE(r);
  auto validity = r.lock->validity_end() - r.lock->acquired_at();
  EXPECT_LE(validity, 1000ms - 80ms - 12ms);
  EXPECT_GE(validity, 1000ms - 400ms - 12ms);  // allows a slow machine
  r.lock->Detach();                            // the fake node cannot DELIFEQ
}

TEST(RedLock, NoLockWhenTheRoundOutlastsTheTtl) {
  // Every grant arrives after the whole TTL: too late to be worth anything.
  FakeNode slow(FakeNode::Mode::kLateOk, 150ms);
  RedLockOptions o = Opts();
  o.node_timeout = 500ms;
  RedLock rl({slow.endpoint()}, o);
  AcquireResult r = rl.acquire("k", 120ms);
  EXPECT_FALSE(r);
  EXPECT_EQ(r.last.yes, 1u);
}

TEST(RedLock, SingleNodeIsAPlainLock) {
  Cluster c(1);
  RedLock a(c.endpoints(), Opts()), b(c.endpoints(), Opts());
  AcquireResult first = a.acquire("k", 2000ms);
  ASSERT_TRUE(first);
  AcquireResult second = b.acquire("k", 2000ms);
  EXPECT_FALSE(second);
  EXPECT_EQ(second.contended, 1);
  EXPECT_TRUE(second.reachable);
  EXPECT_TRUE(first.lock->release());
  EXPECT_TRUE(b.acquire("k", 2000ms));
}

TEST(RedLock, OneNodeDownOfThreeIsStillAQuorum) {
  Cluster c(2);
  RedLock rl({c[0].endpoint(), DeadEndpoint(), c[1].endpoint()}, Opts());
  AcquireResult r = rl.acquire("k", 1000ms);
  ASSERT_TRUE(r);
  EXPECT_EQ(r.lock->grants(), 2u);
  EXPECT_EQ(r.lock->granted(), (std::vector<bool>{true, false, true}));
}

TEST(RedLock, TwoNodesDownOfThreeIsUnreachableAndLeavesNothing) {
  Cluster c(1);
  RedLock rl({DeadEndpoint(), c[0].endpoint(), DeadEndpoint()}, Opts());
  const auto start = Clock::now();
  AcquireResult r = rl.acquire("k", 1000ms);
  EXPECT_FALSE(r);
  EXPECT_FALSE(r.reachable);
  EXPECT_LT(Ms(Clock::now() - start), 500);
  // The one node that granted was released right away.
  EXPECT_TRUE(c[0].Cmd({"GET", "k"}).is_null());
}

TEST(RedLock, TwoPausedNodesOfFiveCostOneNodeTimeout) {
  Cluster c(5);
  RedLockOptions o = Opts();
  o.node_timeout = 250ms;
  RedLock rl(c.endpoints(), o);
  c[1].Pause();
  c[3].Pause();
  const auto start = Clock::now();
  AcquireResult r = rl.acquire("k", 2000ms);
  const double took = Ms(Clock::now() - start);
  ASSERT_TRUE(r);
  EXPECT_EQ(r.lock->granted(), (std::vector<bool>{true, false, true, false, true}));
  EXPECT_GE(took, 245);  // waited for the paused nodes, in parallel…
  EXPECT_LT(took, 850);  // …and only once
  r.lock->release();
  c[1].Resume();
  c[3].Resume();
}

TEST(RedLock, ThreePausedNodesOfFiveNeverHangTheCaller) {
  Cluster c(5);
  RedLockOptions o = Opts();
  o.node_timeout = 250ms;
  o.retry_delay_min = 20ms;
  o.retry_delay_max = 40ms;
  RedLock rl(c.endpoints(), o);
  for (int i : {0, 2, 4}) c[i].Pause();
  const auto start = Clock::now();
  AcquireResult r = rl.acquire("k", 2000ms, 1200ms);
  const double took = Ms(Clock::now() - start);
  EXPECT_FALSE(r);
  EXPECT_FALSE(r.reachable);
  EXPECT_GE(r.attempts, 2);
  // Each attempt: a round, and a release round to the silent nodes. The
  // caller gets control back by the wait plus one attempt.
  EXPECT_GE(took, 1200);
  EXPECT_LT(took, 1200 + 2 * 250 + 600);
  for (int i : {0, 2, 4}) c[i].Resume();
  // Released on the nodes that answered; the paused ones applied our SET
  // when they woke up, but only with our token.
  EXPECT_TRUE(c[1].Cmd({"GET", "k"}).is_null());
}

TEST(RedLock, QuarantinedNodesRefuseButAQuorumOfOthersGrants) {
  Cluster good(3);
  Cluster quarantined(2, {"--quarantine", "always", "--quarantine-ms", "60000"});
  std::vector<Endpoint> eps = {quarantined[0].endpoint(), good[0].endpoint(), good[1].endpoint(),
                               quarantined[1].endpoint(), good[2].endpoint()};
  std::vector<NodeAnswer> answers;
  RedLockOptions o = Opts();
  o.observer = [&](const RoundReport& r) {
    if (std::string_view(r.op) == "acquire") {
      for (const NodeOutcome& n : r.nodes) answers.push_back(n.answer);
    }
  };
  RedLock rl(eps, o);
  AcquireResult r = rl.acquire("k", 1000ms);
  ASSERT_TRUE(r);
  EXPECT_EQ(r.lock->granted(), (std::vector<bool>{false, true, true, false, true}));
  EXPECT_EQ(r.quarantined, 1);
  ASSERT_EQ(answers.size(), 5u);
  EXPECT_EQ(answers[0], NodeAnswer::kQuarantined);
  EXPECT_EQ(answers[3], NodeAnswer::kQuarantined);
}

TEST(RedLock, AMajorityInQuarantineGrantsNothing) {
  Cluster c(3, {"--quarantine", "always", "--quarantine-ms", "60000"});
  Cluster ok(2);
  RedLock rl(
      {c[0].endpoint(), ok[0].endpoint(), c[1].endpoint(), ok[1].endpoint(), c[2].endpoint()},
      Opts());
  AcquireResult r = rl.acquire("k", 1000ms);
  EXPECT_FALSE(r);
  EXPECT_TRUE(r.reachable);  // the nodes answered: they are busy, not gone
  EXPECT_EQ(r.quarantined, 1);
  EXPECT_EQ(r.last.yes, 2u);
  // Release-on-failure removed what the two healthy nodes granted.
  EXPECT_TRUE(ok[0].Cmd({"GET", "k"}).is_null());
  EXPECT_TRUE(ok[1].Cmd({"GET", "k"}).is_null());
}

TEST(RedLock, GarbageAndSilentNodesAreFailuresNotHangs) {
  Cluster c(3);
  FakeNode garbage(FakeNode::Mode::kGarbage), silent(FakeNode::Mode::kSilent);
  RedLockOptions o = Opts();
  o.node_timeout = 250ms;
  RedLock rl(
      {c[0].endpoint(), garbage.endpoint(), c[1].endpoint(), silent.endpoint(), c[2].endpoint()},
      o);
  const auto start = Clock::now();
  AcquireResult r = rl.acquire("k", 2000ms);
  ASSERT_TRUE(r);
  EXPECT_LT(Ms(Clock::now() - start), 850);
  EXPECT_EQ(r.lock->granted(), (std::vector<bool>{true, false, true, false, true}));
  EXPECT_EQ(r.last.nodes[1].answer, NodeAnswer::kNoAnswer);
  EXPECT_NE(r.last.nodes[1].text.find("garbage"), std::string::npos) << r.last.nodes[1].text;
  EXPECT_NE(r.last.nodes[3].text.find("timeout"), std::string::npos) << r.last.nodes[3].text;
}

TEST(RedLock, ReleasesEverywhereAfterAFailedAttempt) {
  // Node 0 is held by someone else, node 1 is down: only node 2 grants,
  // which is no quorum; node 2 must not keep our key.
  Cluster c(2);
  ASSERT_EQ(c[0].Cmd({"SET", "k", "someone", "PX", "5000"}).str, "OK");
  RedLock rl({c[0].endpoint(), DeadEndpoint(), c[1].endpoint()}, Opts());
  AcquireResult r = rl.acquire("k", 1000ms);
  EXPECT_FALSE(r);
  EXPECT_EQ(r.last.yes, 1u);
  EXPECT_EQ(r.contended, 1);
  EXPECT_TRUE(c[1].Cmd({"GET", "k"}).is_null());
  EXPECT_EQ(c[0].Cmd({"GET", "k"}).str, "someone");  // not ours: untouched
}

TEST(RedLock, RetriesWithJitterUntilTheHolderGoes) {
  Cluster c(3);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(c[i].Cmd({"SET", "k", "other", "PX", "300"}).str, "OK");
  RedLockOptions o = Opts();
  o.retry_delay_min = 20ms;
  o.retry_delay_max = 60ms;
  RedLock rl(c.endpoints(), o);
  const auto start = Clock::now();
  AcquireResult r = rl.acquire("k", 1000ms, 3000ms);
  ASSERT_TRUE(r);
  EXPECT_GE(Ms(Clock::now() - start), 250);
  EXPECT_GE(r.attempts, 3);
  EXPECT_GE(r.contended, r.attempts - 1);  // the winning one may have seen a leftover
}

TEST(RedLock, GivesUpWhenTheWaitRunsOut) {
  Cluster c(3);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(c[i].Cmd({"SET", "k", "other", "PX", "10000"}).str, "OK");
  RedLock rl(c.endpoints(), Opts());
  const auto start = Clock::now();
  AcquireResult r = rl.acquire("k", 1000ms, 400ms);
  const double took = Ms(Clock::now() - start);
  EXPECT_FALSE(r);
  EXPECT_TRUE(r.reachable);
  EXPECT_EQ(r.contended, r.attempts);
  EXPECT_GE(took, 400);
  EXPECT_LT(took, 400 + 500);
}

TEST(RedLock, ReleaseDeletesOnlyOurOwnKey) {
  Cluster c(3);
  RedLock rl(c.endpoints(), Opts());
  AcquireResult r = rl.acquire("k", 5000ms);
  ASSERT_TRUE(r);
  // Someone overwrote node 2 (an operator, or an expiry and a new holder).
  ASSERT_EQ(c[2].Cmd({"SET", "k", "someone"}).str, "OK");
  EXPECT_TRUE(r.lock->release());  // 2 of 3 is a quorum
  EXPECT_TRUE(r.lock->released());
  EXPECT_FALSE(r.lock->held());
  EXPECT_TRUE(c[0].Cmd({"GET", "k"}).is_null());
  EXPECT_EQ(c[2].Cmd({"GET", "k"}).str, "someone");
}

TEST(RedLock, ALockGoingOutOfScopeIsReleased) {
  Cluster c(3);
  RedLock rl(c.endpoints(), Opts());
  { ASSERT_TRUE(rl.acquire("k", 5000ms)); }
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(c[i].Cmd({"GET", "k"}).is_null());
}

TEST(RedLock, AuthenticatesWhenGivenAPassword) {
  Cluster c(3, {"--requirepass", "s3cret"});
  RedLockOptions o = Opts();
  o.password = "s3cret";
  RedLock good(c.endpoints(), o);
  AcquireResult r = good.acquire("k", 1000ms);
  ASSERT_TRUE(r) << r.last.nodes[0].text;
  EXPECT_TRUE(r.lock->release());

  RedLock none(c.endpoints(), Opts());
  AcquireResult n = none.acquire("k", 1000ms);
  EXPECT_FALSE(n);
  EXPECT_FALSE(n.reachable);
  EXPECT_NE(n.last.nodes[0].text.find("NOAUTH"), std::string::npos) << n.last.nodes[0].text;
}

// ---------------------------------------------------------------- extend

TEST(RedLock, ExtendMovesTheValidityForward) {
  Cluster c(3);
  RedLock rl(c.endpoints(), Opts());
  AcquireResult r = rl.acquire("k", 1000ms);
  ASSERT_TRUE(r);
  auto first_end = r.lock->validity_end();
  std::this_thread::sleep_for(300ms);
  const auto before = Clock::now();
  ASSERT_EQ(r.lock->extend(2000ms), Lock::ExtendResult::kExtended);
  EXPECT_GE(r.lock->validity_end(), before + 2000ms - RedLock::Drift(2000ms));
  EXPECT_GT(r.lock->validity_end(), first_end + 1000ms);
  for (int i = 0; i < 3; ++i) EXPECT_GT(c[i].Cmd({"PTTL", "k"}).integer, 1800);
}

TEST(RedLock, ExtendFailsWithoutAQuorumAndKeepsTheOldValidity) {
  Cluster c(3);
  RedLockOptions o = Opts();
  o.node_timeout = 250ms;
  RedLock rl(c.endpoints(), o);
  AcquireResult r = rl.acquire("k", 2000ms);
  ASSERT_TRUE(r);
  auto end = r.lock->validity_end();
  c[0].Pause();
  c[2].Pause();
  EXPECT_EQ(r.lock->extend(2000ms), Lock::ExtendResult::kFailed);
  EXPECT_EQ(r.lock->validity_end(), end);
  EXPECT_TRUE(r.lock->held());
  c[0].Resume();
  c[2].Resume();
  EXPECT_EQ(r.lock->extend(2000ms), Lock::ExtendResult::kExtended);
}

TEST(RedLock, ExtendSeesThatTheKeyIsNoLongerOurs) {
  Cluster c(3);
  RedLock rl(c.endpoints(), Opts());
  AcquireResult r = rl.acquire("k", 2000ms);
  ASSERT_TRUE(r);
  c[0].Cmd({"DEL", "k"});
  c[1].Cmd({"SET", "k", "intruder"});
  EXPECT_EQ(r.lock->extend(2000ms), Lock::ExtendResult::kLost);
  EXPECT_NE(r.lock->last_error().find("not (or no longer) ours"), std::string::npos);
  EXPECT_EQ(c[1].Cmd({"GET", "k"}).str, "intruder");  // IFEQ left it alone
}

TEST(RedLock, ExtendAfterTheValidityEndedIsTooLate) {
  Cluster c(3);
  RedLock rl(c.endpoints(), Opts());
  AcquireResult r = rl.acquire("k", 200ms);
  ASSERT_TRUE(r);
  std::this_thread::sleep_for(250ms);
  EXPECT_FALSE(r.lock->held());
  EXPECT_EQ(r.lock->extend(1000ms), Lock::ExtendResult::kLost);
}

TEST(RedLock, ExtendRefusedByQuarantinedNodes) {
  // A node restarted in quarantine may not renew either: its refusal
  // counts as a failure, so only a quorum of healthy nodes extends.
  Cluster c(2);
  Cluster q(1, {"--quarantine", "always", "--quarantine-ms", "60000"});
  RedLock rl({c[0].endpoint(), q[0].endpoint(), c[1].endpoint()}, Opts());
  AcquireResult r = rl.acquire("k", 2000ms);
  ASSERT_TRUE(r);
  c[1].Pause();
  EXPECT_EQ(r.lock->extend(2000ms), Lock::ExtendResult::kFailed);
  c[1].Resume();
  EXPECT_EQ(r.lock->extend(2000ms), Lock::ExtendResult::kExtended);
}

// ---------------------------------------------------------------- watchdog

// ---------------------------------------------------------------- fencing

TEST(RedLockFence, TheTokenIsTheMajoritysLargestAndTheFloorIsRaisedToIt) {
  Cluster c(3);
  // Node 2 has granted many other locks: its counter is far ahead.
  ASSERT_EQ(c[2].Cmd({"SET", "other", "x", "FENCE", "MIN", "500"}).integer, 500);
  RedLockOptions o = Opts();
  o.fence = true;
  std::vector<std::string> rounds;
  o.observer = [&](const RoundReport& r) { rounds.push_back(r.op); };
  RedLock a(c.endpoints(), o);
  AcquireResult first = a.acquire("k", 2000ms);
  ASSERT_TRUE(first);
  EXPECT_EQ(first.lock->fence_token(), 501u);
  EXPECT_EQ(rounds, (std::vector<std::string>{"acquire", "fence"}));
  // Raised where the key is ours: every node holds it at the token or above.
  for (size_t i = 0; i < 3; ++i) EXPECT_GE(c[i].Cmd({"FENCE", "k"}).integer, 501) << i;
  ASSERT_TRUE(first.lock->release());
  // The next holder's majority leaves out the node that gave 501, and still
  // gets more; its two nodes agree, so there is nothing to raise.
  RedLock b({c[0].endpoint(), c[1].endpoint(), DeadEndpoint()}, o);
  rounds.clear();
  AcquireResult second = b.acquire("k", 2000ms);
  ASSERT_TRUE(second);
  EXPECT_GT(second.lock->fence_token(), 501u);
  EXPECT_EQ(rounds, (std::vector<std::string>{"acquire"}));
  EXPECT_GE(second.lock->requested_at(), first.lock->acquired_at());
}

TEST(RedLockFence, AFloorRaisedOnTooFewNodesFailsTheAttemptAndReleasesIt) {
  Cluster c(2);
  ASSERT_EQ(c[1].Cmd({"SET", "other", "x", "FENCE", "MIN", "500"}).integer, 500);
  RedLockOptions o = Opts();
  o.fence = true;
  o.fence_raises = 3;  // every node: one is down
  RedLock rl({c[0].endpoint(), c[1].endpoint(), DeadEndpoint()}, o);
  AcquireResult r = rl.acquire("k", 1000ms);
  EXPECT_FALSE(r);
  EXPECT_EQ(r.unfenced, 1);
  EXPECT_TRUE(r.reachable);
  EXPECT_TRUE(c[0].Cmd({"GET", "k"}).is_null());
  EXPECT_TRUE(c[1].Cmd({"GET", "k"}).is_null());
}

TEST(Watchdog, KeepsTheLockAliveWhileHeld) {
  Cluster c(3);
  RedLock rl(c.endpoints(), Opts());
  AcquireResult r = rl.acquire("k", 600ms);
  ASSERT_TRUE(r);
  std::atomic<bool> lost{false};
  {
    Watchdog dog(*r.lock, [&](const LossReport&) { lost = true; });
    std::this_thread::sleep_for(1500ms);  // 2.5 TTLs
    EXPECT_TRUE(r.lock->held());
    EXPECT_GE(dog.renewals(), 3);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(c[i].Cmd({"GET", "k"}).str, r.lock->token());
  }
  EXPECT_FALSE(lost);
  EXPECT_TRUE(r.lock->release());
}

TEST(Watchdog, StoppedAtOnceReportsNoLoss) {
  // A command that exits at once stops the watchdog before its thread has
  // run: that is not a loss (latch-redlock would exit 76 for `true`).
  Cluster c(1);
  RedLock rl(c.endpoints(), Opts());
  AcquireResult r = rl.acquire("k", 10000ms);
  ASSERT_TRUE(r);
  int reports = 0;
  for (int i = 0; i < 200; ++i) {
    Watchdog dog(*r.lock, [&](const LossReport&) { ++reports; });
    dog.Stop();
  }
  EXPECT_EQ(reports, 0);
  EXPECT_FALSE(r.lock->lost());
  EXPECT_TRUE(r.lock->held());
}

TEST(Watchdog, ReportsTheLossWhenTheValidityEnds) {
  Cluster c(3);
  RedLock rl(c.endpoints(), Opts());
  AcquireResult r = rl.acquire("k", 600ms);
  ASSERT_TRUE(r);
  std::atomic<bool> lost{false};
  Clock::time_point when;
  std::string reason;
  Watchdog dog(*r.lock, [&](const LossReport& l) {
    when = l.when;
    reason = l.reason;
    lost = true;
  });
  std::this_thread::sleep_for(50ms);
  c[0].Pause();  // a majority stops answering: renewals time out
  c[1].Pause();
  const auto end = r.lock->validity_end();
  while (!lost && Clock::now() < end + 2s) std::this_thread::sleep_for(1ms);
  c[0].Resume();
  c[1].Resume();
  ASSERT_TRUE(lost);
  EXPECT_TRUE(r.lock->lost());
  EXPECT_FALSE(r.lock->held());
  // At once: not before the validity ended, and within a few ms after.
  EXPECT_GE(when, end);
  EXPECT_LT(Ms(when - end), 150) << reason;
  EXPECT_NE(reason.find("validity ended"), std::string::npos) << reason;
}

TEST(Watchdog, ReportsTheLossAtOnceWhenAMajorityForgot) {
  Cluster c(3);
  RedLock rl(c.endpoints(), Opts());
  AcquireResult r = rl.acquire("k", 1500ms);
  ASSERT_TRUE(r);
  std::atomic<bool> lost{false};
  Clock::time_point when;
  Watchdog dog(*r.lock, [&](const LossReport& l) {
    when = l.when;
    lost = true;
  });
  c[0].Cmd({"FLUSHALL"});  // as a node that restarted without its log would
  c[2].Cmd({"FLUSHALL"});
  const auto end = r.lock->validity_end();
  while (!lost && Clock::now() < end + 2s) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(lost);
  // The first renewal (at ttl/3) finds out; the validity had 1 s left.
  EXPECT_LT(when, end - 500ms);
}

}  // namespace
}  // namespace latch
