// The narration every latch-demo scenario shares: a story told on a
// timeline (who sent what, what the server answered), the verdict it ends
// with, and the servers a scenario runs against.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "protocol/reply_parser.h"
#include "tools/launch/client.h"
#include "tools/launch/server_process.h"

namespace latch::demo {

using Clock = std::chrono::steady_clock;
using launch::Client;
using resp::Reply;

// A latch-server the demo starts, crashes and restarts, in its own data
// directory under the demo's temporary directory. DEBUG is on: the RedLock
// scenario cuts a node's power with DEBUG POWERLOSS.
launch::ServerProcess DemoNode(const std::string& binary, const std::string& dir,
                               std::vector<std::string> args);

// A machine crash: whatever the log had not fsynced is lost.
void PowerLoss(launch::ServerProcess& node);

class Story {
 public:
  Story() : start_(Clock::now()) {}
  int64_t ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
  }
  void Say(const std::string& who, const std::string& what);
  // Sends a command for `who` and narrates it with the answer.
  Reply Send(const std::string& who, Client& c, std::vector<std::string> args,
             const std::string& meaning = "");
  void Wait(int64_t ms, const std::string& why);

 private:
  Clock::time_point start_;
};

bool IsOk(const Reply& r);
bool IsInt(const Reply& r, int64_t v);
bool IsNil(const Reply& r);

struct Verdict {
  bool safe;
  std::string text;
};

struct Env {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: start our own server
  std::string server;
  std::string workdir;
};

// Runs `body` against a single server: the one given with --port, or a fresh
// one started for this scenario.
Verdict WithServer(const Env& env, const std::string& name,
                   const std::function<Verdict(const std::string&, int)>& body);

// Waits until `key` is gone on the server (its lease ran out).
void WaitExpired(Story& s, Client& c, const std::string& key);

// The scenarios of tools/demo/advanced.cc: the locks the tutorial ends with,
// built on hashes, lists and sorted sets the way Redisson builds them, and
// waiting by pub/sub.
Verdict Reentrant(const Env& env);
Verdict Fair(const Env& env);
Verdict ReadWrite(const Env& env);
Verdict Semaphore(const Env& env);
Verdict PubSubWaiting(const Env& env);

}  // namespace latch::demo
