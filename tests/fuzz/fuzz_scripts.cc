// Fuzz target: random Lua scripts through EVAL, FUNCTION LOAD and FCALL,
// in-process (the unit tests' TestServer: no socket, a ManualClock), with a
// small Lua memory cap, under ASan/UBSan.
//
// Input: a flags byte, then the script text.
//   flags bit 0: the client speaks RESP3 (HELLO 3)
//         bit 1: the script is also loaded as a library's function body
//                (FUNCTION LOAD REPLACE, then FCALL)
//         bit 2: two keys and two arguments are passed (else none)
//
// Beyond "no crash, no sanitizer report, no uncaught exception", each run
// checks:
//  - EVAL and FCALL produce exactly one well-formed reply, with no trailing
//    bytes (a script may return anything, raise anything, or run out of
//    memory or stack: the reply is still one RESP value);
//  - the Lua interpreters stay within lua-maxmemory after the run;
//  - the server still answers PING, and a plain script still runs: no
//    script leaves the sandbox broken for the next one (a global set, a
//    library table changed, a hook left behind).
// A script that loops forever is stopped after about 2,000,000 instructions
// (Engine::set_hook_budget_for_tests), as SCRIPT KILL would stop it.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_parser.h"
#include "server/scripting/engine.h"
#include "tests/unit/test_server.h"

namespace {

void Check(bool ok, const char* what, std::string_view detail = {}) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_scripts: property violated: %s\n%.*s\n", what,
                 static_cast<int>(std::min<size_t>(detail.size(), 2000)), detail.data());
    std::abort();
  }
}

void OneReply(const std::string& out, const char* what) {
  latch::resp::Reply r;
  size_t consumed = 0;
  Check(latch::resp::ParseReply(out, &r, &consumed) == latch::resp::ReplyStatus::kOk, what, out);
  Check(consumed == out.size(), "trailing reply bytes", out);
}

latch::Config FuzzConfig() {
  latch::Config c = latch::test::TestConfig();
  c.lua_maxmemory = 4 * 1024 * 1024;
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  const uint8_t flags = data[0];
  std::string script(reinterpret_cast<const char*>(data + 1), size - 1);
  latch::test::TestServer ts(FuzzConfig());
  ts.server().scripts().set_hook_budget_for_tests(20);
  if (flags & 1) ts.Run({"HELLO", "3"});
  std::vector<std::string> eval = {"EVAL", script};
  if (flags & 4) {
    eval.insert(eval.end(), {"2", "k1", "k2", "a1", "a2"});
  } else {
    eval.push_back("0");
  }
  OneReply(ts.Run(eval), "EVAL");
  if (flags & 2) {
    std::string lib =
        "#!lua name=fz\nredis.register_function('f', function(KEYS, ARGV)\n" + script + "\nend)";
    std::string loaded = ts.Run({"FUNCTION", "LOAD", "REPLACE", lib});
    OneReply(loaded, "FUNCTION LOAD");
    if (loaded.rfind("$", 0) == 0) {
      std::vector<std::string> fcall = eval;
      fcall[0] = "FCALL";
      fcall[1] = "f";
      OneReply(ts.Run(fcall), "FCALL");
    }
  }
  const latch::scripting::Engine& engine = ts.server().scripts_engine();
  Check(engine.eval_memory() <= 4 * 1024 * 1024, "eval interpreter over its cap");
  Check(engine.functions_memory() <= 4 * 1024 * 1024, "functions interpreter over its cap");
  Check(ts.Run({"PING"}) == "+PONG\r\n", "PING after the script");
  std::string after =
      ts.Run({"EVAL", "return {KEYS[1], ARGV[1], type(redis), type(string.rep)}", "1", "k", "a"});
  Check(after == "*4\r\n$1\r\nk\r\n$1\r\na\r\n$5\r\ntable\r\n$8\r\nfunction\r\n",
        "a plain script after the fuzzed one", after);
  return 0;
}
