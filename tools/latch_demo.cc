// latch-demo: the evolution of Redis locks, replayed against a real server.
//
// Each scenario is one step of the story told in the seed articles (V1 to V5,
// then RedLock): it runs against a real latch-server, prints a narrated
// timeline (who sent what, what the server answered, the moment safety broke
// or held) and ends with a one-line verdict. Races are not left to luck: the
// demo forces them with pauses it controls (waiting for a lease to run out,
// pausing a "client" as a GC pause would, cutting a node's power).
//
// The advanced locks (tools/demo/advanced.cc): reentrant, fair, read-write,
// a semaphore, and waiting by pub/sub, each on hashes, lists and sorted sets
// as Redisson builds them.
//
// Two more show what a lock server can give that Redis cannot (issue 17):
// `fencing` (a holder paused past its lease, and a storage that refuses its
// stale write once writes carry the lock's fencing token) and `waiting` (a
// herd of pollers, then the same clients queued with SET … NX WAIT).
//
//   latch-demo --list
//   latch-demo v3                 one scenario
//   latch-demo all                every scenario, in order
//   latch-demo --host H --port P v2   use a running server (single-node scenarios)
//   latch-demo --server PATH ...  the latch-server binary to start
//   latch-demo --help             the manual (tools/cli/options.h: every tool's convention)
//
// Each scenario that needs servers starts its own (tools/launch/: a free
// loopback port, a data directory under /tmp/latch-demo-*), and the RedLock
// scenarios restart a node on its port after a power loss, as a machine
// would come back.
//
// Exit status: 0 when every verdict came out as the story says it must
// (the broken steps broken, the fixes holding), 1 otherwise, 2 on error, 64
// for a bad command line.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tools/cli/options.h"
#include "tools/demo/story.h"

namespace {

using namespace latch::demo;  // NOLINT: the demo's own vocabulary (story.h)

// ---------------------------------------------------------------- V1

Verdict V1(const Env& env) {
  return WithServer(env, "v1", [](const std::string& host, int port) {
    Story s;
    Client a(host, port), b(host, port);
    a.Call({"DEL", "lock:v1"});
    s.Send("A", a, {"SETNX", "lock:v1", "A"}, "A has the lock");
    s.Say("A", "crashes before it can send EXPIRE lock:v1 30 (two commands, not one)");
    Reply ttl = s.Send("server", a, {"TTL", "lock:v1"}, "-1: no expiry, ever");
    bool got = false;
    for (int i = 0; i < 3 && !got; ++i) {
      s.Wait(200, "B retries");
      got = IsInt(s.Send("B", b, {"SETNX", "lock:v1", "B"}), 1);
    }
    a.Call({"DEL", "lock:v1"});
    if (IsInt(ttl, -1) && !got) {
      return Verdict{false,
                     "a crash between SETNX and EXPIRE leaves a lock that never expires: "
                     "nobody can take it again (deadlock)"};
    }
    return Verdict{true, "the lock was released"};
  });
}

// ---------------------------------------------------------------- V2

Verdict V2(const Env& env) {
  return WithServer(env, "v2", [](const std::string& host, int port) {
    Story s;
    Client a(host, port), b(host, port), c(host, port);
    a.Call({"DEL", "lock:v2"});
    s.Send("A", a, {"SET", "lock:v2", "A", "NX", "PX", "300"}, "atomic: value and lease together");
    s.Say("A", "works longer than the lease (a slow query, a GC pause)");
    WaitExpired(s, a, "lock:v2");
    s.Send("B", b, {"SET", "lock:v2", "B", "NX", "PX", "3000"}, "B has the lock now");
    s.Send("A", a, {"DEL", "lock:v2"}, "A finishes and deletes B's lock!");
    Reply r = s.Send("C", c, {"SET", "lock:v2", "C", "NX", "PX", "3000"});
    a.Call({"DEL", "lock:v2"});
    if (IsOk(r)) {
      return Verdict{false,
                     "a holder that overran its lease deleted the next holder's lock "
                     "with DEL: B and C both hold it"};
    }
    return Verdict{true, "C was refused"};
  });
}

// ---------------------------------------------------------------- V3 and V4

// A owns a lock, checks it still owns it, is paused, then releases. Between
// the check and the release the lease runs out and B takes the lock.
Verdict ReleaseRace(const Env& env, const std::string& name, bool atomic) {
  return WithServer(env, name, [&](const std::string& host, int port) {
    Story s;
    std::string key = "lock:" + name;
    Client a(host, port), b(host, port), c(host, port);
    a.Call({"DEL", key});
    s.Send("A", a, {"SET", key, "token-A", "NX", "PX", "300"}, "unique token: A's own");
    if (!atomic) {
      s.Send("A", a, {"GET", key}, "A checks: still mine, so it may delete");
      s.Say("A", "is paused right after the check (GC, page fault, preemption)");
    } else {
      s.Say("A", "will release with one command: DELIFEQ compares and deletes atomically");
    }
    WaitExpired(s, a, key);
    s.Send("B", b, {"SET", key, "token-B", "NX", "PX", "3000"}, "B has the lock now");
    if (!atomic) {
      s.Send("A", a, {"DEL", key}, "A resumes and deletes: it is B's lock!");
    } else {
      s.Send("A", a, {"DELIFEQ", key, "token-A"}, "0: not A's token, nothing deleted");
    }
    Reply r = s.Send("C", c, {"SET", key, "token-C", "NX", "PX", "3000"});
    a.Call({"DEL", key});
    if (IsOk(r)) {
      return Verdict{false,
                     "GET then DEL is two commands: the lease expired between them and "
                     "A deleted B's lock; B and C both hold it"};
    }
    return Verdict{true,
                   "DELIFEQ checks the owner and deletes in one atomic command: B keeps "
                   "its lock and C is refused"};
  });
}

Verdict V3(const Env& env) {
  return ReleaseRace(env, "v3", false);
}
Verdict V4(const Env& env) {
  return ReleaseRace(env, "v4", true);
}

// ---------------------------------------------------------------- V5

Verdict V5(const Env& env) {
  return WithServer(env, "v5", [](const std::string& host, int port) {
    Story s;
    const int ttl = 600, job = 2000;
    Client a(host, port), b(host, port);
    a.Call({"DEL", "lock:v5"});
    s.Send("A", a, {"SET", "lock:v5", "token-A", "NX", "PX", std::to_string(ttl)},
           "lease of " + std::to_string(ttl) + " ms for a job of " + std::to_string(job) + " ms");
    // The watchdog (Redisson's idea): while the job runs, renew the lease
    // every ttl/3, only if the lock is still ours.
    std::atomic<bool> done{false};
    std::atomic<bool> lost{false};
    std::thread watchdog([&] {
      Client w(host, port);
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(ttl / 3));
        if (done.load()) break;
        Reply r = s.Send(
            "watchdog", w,
            {"SET", "lock:v5", "token-A", "IFEQ", "token-A", "PX", std::to_string(ttl)}, "renewed");
        if (!IsOk(r)) lost = true;
      }
    });
    bool b_got = false;
    auto until = Clock::now() + std::chrono::milliseconds(job);
    while (Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(450));
      if (IsOk(s.Send("B", b, {"SET", "lock:v5", "token-B", "NX", "PX", "3000"}))) b_got = true;
    }
    done = true;
    watchdog.join();
    s.Send("A", a, {"DELIFEQ", "lock:v5", "token-A"}, "1: job done, A releases");
    Reply r =
        s.Send("B", b, {"SET", "lock:v5", "token-B", "NX", "PX", "3000"}, "free now, B gets it");
    b.Call({"DEL", "lock:v5"});
    if (!b_got && !lost && IsOk(r)) {
      return Verdict{true,
                     "the watchdog renewed the lease while the job ran: A held the lock "
                     "for " +
                         std::to_string(job) + " ms with a " + std::to_string(ttl) +
                         " ms lease, B got it only after A released"};
    }
    return Verdict{false, "the lock was lost while A's job ran"};
  });
}

// ---------------------------------------------------------------- fencing

// The resource the lock protects: a store of one document that, when writes
// carry fencing tokens, refuses any token smaller than the largest it has
// seen (Kleppmann's fencing; a database does it with a version column and a
// conditional update). Without tokens it takes every write.
class Storage {
 public:
  explicit Storage(bool checks_tokens) : checks_(checks_tokens) {}
  // True when the write was accepted.
  bool Write(Story& s, const std::string& who, const std::string& data, int64_t token = 0) {
    std::string what =
        "writes \"" + data + "\"" + (checks_ ? " with token " + std::to_string(token) : "");
    if (checks_ && token < max_token_) {
      s.Say("storage", who + " " + what + "  ->  refused: token " + std::to_string(token) + " < " +
                           std::to_string(max_token_) + ", already seen");
      return false;
    }
    max_token_ = std::max(max_token_, token);
    data_ = data;
    s.Say("storage", who + " " + what + "  ->  accepted");
    return true;
  }
  const std::string& data() const { return data_; }

 private:
  bool checks_;
  int64_t max_token_ = 0;
  std::string data_;
};

// A holds the lock, is paused past its lease (a GC pause, a stopped VM),
// B takes the lock and writes, then A wakes and writes what it prepared
// under its old lease. Once without tokens, once with FENCE.
Verdict Fencing(const Env& env) {
  return WithServer(env, "fencing", [](const std::string& host, int port) {
    Story s;
    Client a(host, port), b(host, port);
    auto round = [&](bool fenced) {
      const std::string key = fenced ? "lock:fenced" : "lock:unfenced";
      a.Call({"DEL", key});
      Storage storage(fenced);
      std::vector<std::string> set_a = {"SET", key, "token-A", "NX", "PX", "300"};
      std::vector<std::string> set_b = {"SET", key, "token-B", "NX", "PX", "3000"};
      if (fenced) {
        set_a.push_back("FENCE");
        set_b.push_back("FENCE");
      }
      Reply ra = s.Send("A", a, set_a,
                        fenced ? "A holds the lock, with its fencing token" : "A holds the lock");
      s.Say("A", "prepares its write, then is paused (a GC pause) past its lease");
      WaitExpired(s, a, key);
      Reply rb =
          s.Send("B", b, set_b, fenced ? "B holds the lock: a larger token" : "B holds the lock");
      storage.Write(s, "B", "B's order", fenced ? rb.integer : 0);
      s.Say("A", "wakes up, unaware that its lease ended, and writes what it prepared");
      bool stale = storage.Write(s, "A", "A's stale order", fenced ? ra.integer : 0);
      a.Call({"DEL", key});
      return stale;
    };
    s.Say("", "without fencing tokens:");
    bool accepted_without = round(false);
    s.Say("", "with SET ... FENCE, every write carrying the lock's token:");
    bool accepted_with = round(true);
    if (accepted_without && !accepted_with) {
      return Verdict{true,
                     "no lock can stop a holder that was paused past its lease; without tokens "
                     "the storage took A's stale write over B's, with fencing tokens it "
                     "refused it (A's token was smaller than B's)"};
    }
    return Verdict{false, accepted_with ? "the storage accepted the stale write despite the tokens"
                                        : "the paused holder's write never reached the storage"};
  });
}

// ---------------------------------------------------------------- waiting

// One contender's turn: when it asked, when it got the lock, what it cost.
struct Turn {
  int id;
  Clock::time_point asked, granted, released;
  int requests = 0;
};

// Eight clients want the lock once each, 100 ms of work per turn, asking
// 10 ms apart: first as lock libraries do (SET NX, sleep 50 ms, again),
// then queued with SET … NX WAIT.
Verdict Waiting(const Env& env) {
  return WithServer(env, "waiting", [](const std::string& host, int port) {
    Story s;
    const int kClients = 8, kWorkMs = 100, kSleepMs = 50;
    auto run = [&](bool queue) {
      const std::string key = queue ? "lock:queue" : "lock:herd";
      Client admin(host, port);
      admin.Call({"DEL", key});
      std::vector<Turn> turns(kClients);
      std::mutex mu;
      std::vector<int> order;
      std::vector<std::thread> threads;
      for (int i = 0; i < kClients; ++i) {
        threads.emplace_back([&, i] {
          Client c(host, port);
          std::this_thread::sleep_for(std::chrono::milliseconds(10 * i));
          if (queue) {
            // "Asking 10 ms apart" must mean that order on the server too: on
            // a loaded machine threads wake late and out of turn, so each
            // client also waits until the clients before it have been served
            // or are in the queue (as LOCKINFO counts them), at most 2 s.
            const auto give_up = Clock::now() + std::chrono::seconds(2);
            while (Clock::now() < give_up) {
              Reply info = c.Call({"LOCKINFO", key});
              int64_t waiters = 0;
              for (size_t k = 0; k + 1 < info.elements.size(); k += 2) {
                if (info.elements[k].str == "waiters") waiters = info.elements[k + 1].integer;
              }
              size_t served;
              {
                std::lock_guard<std::mutex> g(mu);
                served = order.size();
              }
              if (static_cast<int64_t>(served) + waiters >= i) break;
              std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
          }
          Turn& t = turns[i];
          t.id = i;
          t.asked = Clock::now();
          const std::string me = "client-" + std::to_string(i);
          while (true) {
            std::vector<std::string> req = {"SET", key, me, "NX", "PX", "5000"};
            if (queue) req.insert(req.end(), {"WAIT", "4000"});
            ++t.requests;
            if (IsOk(c.Call(req))) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(kSleepMs));
          }
          t.granted = Clock::now();
          {
            std::lock_guard<std::mutex> g(mu);
            order.push_back(i);
          }
          s.Say(me, "got the lock after " + std::to_string(t.requests) + " request" +
                        (t.requests == 1 ? "" : "s"));
          std::this_thread::sleep_for(std::chrono::milliseconds(kWorkMs));
          t.released = Clock::now();
          ++t.requests;
          c.Call({"DELIFEQ", key, me});
        });
      }
      for (auto& t : threads) t.join();
      // The time the lock lay free between one release and the next grant.
      std::vector<Turn> by_grant = turns;
      std::sort(by_grant.begin(), by_grant.end(),
                [](const Turn& x, const Turn& y) { return x.granted < y.granted; });
      double gaps = 0;
      int requests = 0;
      for (size_t i = 0; i < by_grant.size(); ++i) {
        requests += by_grant[i].requests;
        if (i > 0) {
          gaps += std::chrono::duration<double, std::milli>(by_grant[i].granted -
                                                            by_grant[i - 1].released)
                      .count();
        }
      }
      std::string shown;
      for (int i : order) shown += (shown.empty() ? "" : ",") + std::to_string(i);
      double mean_gap = gaps / (kClients - 1);
      bool fifo = std::is_sorted(order.begin(), order.end());
      char line[256];
      std::snprintf(line, sizeof(line),
                    "%s: %d requests for %d turns; the lock lay free %.1f ms on average "
                    "between turns; order of turns %s (asked 0..7)",
                    queue ? "queue" : "pollers", requests, kClients, mean_gap, shown.c_str());
      s.Say("", line);
      struct Result {
        int requests;
        double mean_gap;
        bool fifo;
      };
      return Result{requests, mean_gap, fifo};
    };
    s.Say("", "8 clients, each polling like a lock library: SET NX, on nil sleep 50 ms, again");
    auto herd = run(false);
    s.Say("", "the same 8 clients queued: SET ... NX WAIT 4000, one request each");
    auto queue = run(true);
    if (queue.fifo && queue.requests == 2 * kClients && queue.mean_gap < herd.mean_gap &&
        queue.requests < herd.requests) {
      char text[256];
      std::snprintf(text, sizeof(text),
                    "the queue served the clients in the order they asked, with one request "
                    "per turn (%d against %d) and the lock free %.1f ms between turns instead "
                    "of %.1f ms",
                    queue.requests, herd.requests, queue.mean_gap, herd.mean_gap);
      return Verdict{true, text};
    }
    return Verdict{false, "the queue did no better than the pollers"};
  });
}

// ---------------------------------------------------------------- RedLock

// Seeds 002's "delayed restart": A wins nodes 1-3 of five; node 3 loses power
// before its fsync and comes back without A's lock; B asks nodes 3-5.
Verdict RedLockScenario(const Env& env, const std::string& quarantine) {
  Story s;
  const int ttl = 8000;
  std::vector<latch::launch::ServerProcess> nodes;
  for (int i = 1; i <= 5; ++i) {
    nodes.push_back(DemoNode(env.server,
                             env.workdir + "/redlock-" + quarantine + "-" + std::to_string(i),
                             {"--appendfsync", "everysec", "--quarantine", quarantine,
                              "--max-lock-ttl", std::to_string(ttl)}));
    nodes.back().Start();
  }
  s.Say("", "five latch nodes, appendfsync everysec, quarantine " + quarantine);
  auto ask = [&](const std::string& who, const std::string& token, std::vector<int> which) {
    int granted = 0;
    for (int i : which) {
      Client c("127.0.0.1", nodes[static_cast<size_t>(i - 1)].port());
      Reply r = s.Send(who + "@n" + std::to_string(i), c,
                       {"SET", "resource", token, "NX", "PX", std::to_string(ttl)});
      if (IsOk(r)) ++granted;
    }
    return granted;
  };
  {
    Client c("127.0.0.1", nodes[2].port());
    c.Call({"SET", "warmup", "x"});  // node 3 fsyncs this write at once...
  }
  auto t0 = Clock::now();
  int a = ask("A", "token-A", {1, 2, 3});  // ...and A's lock only later
  s.Say("A", "holds the lock: " + std::to_string(a) + " of 5 granted (majority is 3)");
  s.Say("n3", "loses power before its next fsync (DEBUG POWERLOSS)");
  PowerLoss(nodes[2]);
  nodes[2].Restart();  // at once, on the same port, with what its disk kept
  {
    Client c("127.0.0.1", nodes[2].port());
    s.Send("n3", c, {"GET", "resource"}, "restarted: A's lock is forgotten");
  }
  int b = ask("B", "token-B", {3, 4, 5});
  double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  bool a_valid = elapsed < ttl - ttl * 0.01 - 2;
  s.Say("B", std::to_string(b) + " of 5 granted; A's lock is " +
                 (a_valid ? "still valid" : "expired") + " (" +
                 std::to_string(static_cast<int>(elapsed)) + " ms of " + std::to_string(ttl) + ")");
  for (auto& n : nodes) n.Stop();
  if (a >= 3 && b >= 3 && a_valid) {
    return Verdict{false,
                   "node 3 forgot A's lock and granted it to B: A and B both hold a "
                   "majority (2 holders)"};
  }
  return Verdict{true,
                 "node 3 restarted in quarantine and refused to grant the lock until "
                 "every lock it may have forgotten had expired: B got no majority"};
}

Verdict RedLockNoQuarantine(const Env& env) {
  return RedLockScenario(env, "never");
}
Verdict RedLockQuarantine(const Env& env) {
  return RedLockScenario(env, "auto");
}

// ---------------------------------------------------------------- catalogue

struct Scenario {
  const char* id;
  const char* title;
  bool expect_safe;  // what the story says the verdict must be
  bool needs_own_nodes;
  Verdict (*run)(const Env&);
};

const Scenario kScenarios[] = {
    {"v1", "SETNX then EXPIRE, with a crash between them", false, false, V1},
    {"v2", "SET NX PX, then a holder that overruns its lease and releases with DEL", false, false,
     V2},
    {"v3", "owner check with GET, then DEL: racing the lease's expiry", false, false, V3},
    {"v4", "DELIFEQ: compare and delete in one command closes that race", true, false, V4},
    {"v5", "a watchdog renews the lease (SET IFEQ PX) while a long job runs", true, false, V5},
    {"redlock", "RedLock, a node loses power and restarts at once (quarantine never)", false, true,
     RedLockNoQuarantine},
    {"redlock-quarantine", "RedLock, the same crash with restart quarantine (auto)", true, true,
     RedLockQuarantine},
    {"fencing", "a holder paused past its lease, a storage that checks fencing tokens", true, false,
     Fencing},
    {"waiting", "a herd of pollers, then the same clients queued with SET NX WAIT", true, false,
     Waiting},
    {"reentrant", "a lock its holder can take again: a hash of holds (Redisson's RLock)", true,
     false, Reentrant},
    {"fair", "first come, first served: a list as the queue, a sorted set of deadlines", true,
     false, Fair},
    {"rwlock", "readers together, a writer alone: one hash with a mode", true, false, ReadWrite},
    {"semaphore", "N permits in a sorted set (redis-semaphore), a crashed holder's returned", true,
     false, Semaphore},
    {"pubsub", "waiting by pub/sub: subscribe before you try, or miss the release", true, false,
     PubSubWaiting},
};

std::string DefaultServer() {
  // Next to this program: bin/latch-server installed, build/latch-server for
  // build/tools/latch-demo.
  std::string p = latch::cli::Companion("latch-server", X_OK);
  return p.empty() ? "latch-server" : p;
}

const latch::cli::Manual kManual = {
    "latch-demo", "the evolution of Redis locks, each race replayed against a real server",
    "latch-demo [--host H --port P] [--server PATH] (--list | all | SCENARIO...)",
    R"MAN(DESCRIPTION
    Each scenario is one step of the story docs/guide.md tells (V1 to V5, then
    RedLock, then fencing tokens and waiting): it runs against a real
    latch-server, prints a narrated timeline (who sent what, what the server
    answered, the moment safety broke or held) and ends with a line
    "VERDICT <scenario>: SAFE|UNSAFE: <why>". Races are not left to luck: the
    demo forces them with pauses it controls (waiting for a lease to run out,
    pausing a client as a GC pause would, cutting a node's power).

    Scenarios that need servers start their own (a free loopback port, data
    under /tmp/latch-demo-*); the single-node ones run against --host/--port
    when given.

OPTIONS
    --list          the scenarios, one per line, and exit
    --host H        a running server for the single-node scenarios (default
                    127.0.0.1 with --port)
    --port P        its port
    --server PATH   the latch-server binary to start (default: next to this
                    program, installed or in the build tree, else on the PATH)
    -h, --help      this manual
    --version       the version

EXIT STATUS
    0    every verdict came out as the story says it must (the broken steps
         broken, the fixes holding)
    1    a verdict did not
    2    an error (a server that would not start...)
    64   usage error (an unknown scenario among them)

EXAMPLES
    latch-demo --list
    latch-demo all
    latch-demo v3 v4
    latch-demo --port 6379 v2

SEE ALSO
    docs/guide.md, latch-server(1)
)MAN"};

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  Env env;
  env.server = DefaultServer();
  bool list = false;
  latch::cli::Parser p(kManual);
  p.Flag("list", &list)
      .Text("host", &env.host)
      .Int("port", &env.port, 1, 65535)
      .Text("server", &env.server);
  std::vector<std::string> ids = p.Parse(argc, argv).operands;
  if (list) {
    for (const auto& s : kScenarios) std::printf("%-20s %s\n", s.id, s.title);
    return 0;
  }
  if (ids.empty()) p.Fail("which scenario? (all, or see --list)");
  if (ids.size() == 1 && ids[0] == "all") {
    ids.clear();
    for (const auto& s : kScenarios) ids.push_back(s.id);
  }
  for (const std::string& id : ids) {
    bool known = false;
    for (const auto& s : kScenarios) known |= id == s.id;
    if (!known) p.Fail("unknown scenario '" + id + "' (see --list)");
  }
  char tmpl[] = "/tmp/latch-demo-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return 2;
  env.workdir = tmpl;

  int failures = 0;
  for (const std::string& id : ids) {
    const Scenario* sc = nullptr;
    for (const auto& s : kScenarios) {
      if (id == s.id) sc = &s;
    }
    std::printf("== %s: %s\n", sc->id, sc->title);
    Env scenario_env = env;
    if (sc->needs_own_nodes) scenario_env.port = 0;
    try {
      Verdict v = sc->run(scenario_env);
      bool as_told = v.safe == sc->expect_safe;
      std::printf("VERDICT %s: %s: %s\n\n", sc->id, v.safe ? "SAFE" : "UNSAFE", v.text.c_str());
      if (!as_told) {
        std::printf("(unexpected: this step should be %s)\n\n",
                    sc->expect_safe ? "SAFE" : "UNSAFE");
        ++failures;
      }
    } catch (const std::exception& e) {
      std::printf("ERROR %s: %s\n\n", sc->id, e.what());
      std::filesystem::remove_all(env.workdir);
      return 2;
    }
  }
  std::filesystem::remove_all(env.workdir);
  return failures == 0 ? 0 : 1;
}
