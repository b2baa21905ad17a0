#include "tools/demo/story.h"

#include <algorithm>
#include <cstdio>
#include <thread>

namespace latch::demo {

launch::ServerProcess DemoNode(const std::string& binary, const std::string& dir,
                               std::vector<std::string> args) {
  launch::ServerSpec spec;
  spec.binary = binary;
  spec.dir = dir;
  spec.args = {"--enable-debug-command", "yes"};
  spec.args.insert(spec.args.end(), args.begin(), args.end());
  return launch::ServerProcess(std::move(spec));
}

void PowerLoss(launch::ServerProcess& node) {
  try {
    Client c(node.host(), node.port());
    c.Call({"DEBUG", "POWERLOSS"});
  } catch (const std::exception&) {
    // The server exits without answering: expected.
  }
  if (!node.WaitExit(std::chrono::seconds(10))) node.Kill();
}

void Story::Say(const std::string& who, const std::string& what) {
  std::printf("  t=%5lld ms  %-8s %s\n", static_cast<long long>(ms()), who.c_str(), what.c_str());
  std::fflush(stdout);
}

Reply Story::Send(const std::string& who, Client& c, std::vector<std::string> args,
                  const std::string& meaning) {
  std::string shown;
  for (const auto& a : args) shown += (shown.empty() ? "" : " ") + a;
  Reply r = c.Call(args);
  Say(who, shown + "  ->  " + r.ToString() + (meaning.empty() ? "" : "   (" + meaning + ")"));
  return r;
}

void Story::Wait(int64_t ms, const std::string& why) {
  Say("", "... " + why + " (" + std::to_string(ms) + " ms)");
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

bool IsOk(const Reply& r) {
  return r.type == Reply::Type::kSimple && r.str == "OK";
}
bool IsInt(const Reply& r, int64_t v) {
  return r.type == Reply::Type::kInteger && r.integer == v;
}
bool IsNil(const Reply& r) {
  return r.type == Reply::Type::kNull;
}

Verdict WithServer(const Env& env, const std::string& name,
                   const std::function<Verdict(const std::string&, int)>& body) {
  if (env.port != 0) return body(env.host, env.port);
  auto node = DemoNode(env.server, env.workdir + "/" + name, {"--quarantine", "never"});
  node.Start();
  return body(node.host(), node.port());
}

void WaitExpired(Story& s, Client& c, const std::string& key) {
  Reply pttl = c.Call({"PTTL", key});
  s.Wait(std::max<int64_t>(pttl.integer, 0) + 20,
         "the lease of " + key + " runs out while its holder is still busy");
  while (c.Call({"EXISTS", key}).integer != 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace latch::demo
