// Scripting (issue 23) in-process: the conversions both ways, the sandbox,
// bounded memory, what a script's writes log, functions in the log and
// through a replay and a rewrite, and the lock rules inside scripts. (The
// replies shared with Redis are compared live with redis-server by
// tests/integration/test_differential_scripting.py; the cases here are
// latch's own or need the log.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "command_fixture.h"
#include "log/reader.h"
#include "log/record.h"
#include "logged_records.h"
#include "server/scripting/engine.h"
#include "server/scripting/lua_convert.h"
#include "server/scripting/shebang.h"
#include "test_server.h"

namespace latch {
namespace {

using resp::Reply;
using test::Bulk;
using test::Req;
using test::TestServer;

class ScriptingTest : public ::testing::Test {
 protected:
  ScriptingTest() { ts_.server().store().set_log(&batch_); }
  ~ScriptingTest() override { ts_.server().store().set_log(nullptr); }
  std::string Run(const std::vector<std::string>& args) { return ts_.Run(args); }
  std::string Eval(const std::string& script, const std::vector<std::string>& rest = {"0"}) {
    std::vector<std::string> argv = {"EVAL", script};
    argv.insert(argv.end(), rest.begin(), rest.end());
    return Run(argv);
  }
  std::string Logged() { return test::TakeLogged(batch_); }

  TestServer ts_;
  aof::Batch batch_;
};

// ------------------------------------------------------------------ conversions

TEST_F(ScriptingTest, LuaValuesBecomeReplies) {
  EXPECT_EQ(Eval("return 3.99"), ":3\r\n");
  EXPECT_EQ(Eval("return -3.99"), ":-3\r\n");
  EXPECT_EQ(Eval("return 'x'"), "$1\r\nx\r\n");
  EXPECT_EQ(Eval("return true"), ":1\r\n");
  EXPECT_EQ(Eval("return false"), "$-1\r\n");
  EXPECT_EQ(Eval("return {1, 'a', {2}, nil, 5}"), "*3\r\n:1\r\n$1\r\na\r\n*1\r\n:2\r\n");
  EXPECT_EQ(Eval("return {ok='fine'}"), "+fine\r\n");
  EXPECT_EQ(Eval("return {err='CODE text'}"), "-CODE text\r\n");
  EXPECT_EQ(Eval("return redis.error_reply('no code')"), "-no code\r\n");
  // RESP3 client, RESP3 script: booleans, doubles, maps, sets, big numbers.
  ts_.conn().resp = 3;
  EXPECT_EQ(Eval("redis.setresp(3) return true"), "#t\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return false"), "#f\r\n");
  EXPECT_EQ(Eval("return false"), "_\r\n");  // the script still speaks RESP2
  EXPECT_EQ(Eval("return {double=1.5}"), ",1.5\r\n");
  EXPECT_EQ(Eval("return {map={k='v'}}"), "%1\r\n$1\r\nk\r\n$1\r\nv\r\n");
  EXPECT_EQ(Eval("return {set={m=true}}"), "~1\r\n$1\r\nm\r\n");
  EXPECT_EQ(Eval("return {big_number='123'}"), "(123\r\n");
  EXPECT_EQ(Eval("return {verbatim_string={format='txt', string='hi'}}"), "=6\r\ntxt:hi\r\n");
}

TEST_F(ScriptingTest, RepliesBecomeLuaValues) {
  ASSERT_EQ(Run({"SET", "k", "v"}), "+OK\r\n");
  EXPECT_EQ(Eval("return type(redis.call('get', 'missing'))"), "$7\r\nboolean\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return type(redis.call('get', 'missing'))"), "$3\r\nnil\r\n");
  EXPECT_EQ(Eval("return redis.call('set', 'k', 'w').ok"), "$2\r\nOK\r\n");
  EXPECT_EQ(Eval("return redis.pcall('incr', 'k').err"),
            "$43\r\nERR value is not an integer or out of range\r\n");
  EXPECT_EQ(Eval("redis.setresp(3) return redis.call('lockinfo', 'k').map.holder"), Bulk("w"));
  EXPECT_EQ(Eval("return redis.call('lockinfo', 'k')[1]"), Bulk("holder"));
}

TEST(LuaConvert, NumbersTruncateAsRedisDoes) {
  EXPECT_EQ(scripting::LuaNumberToInt(3.9), 3);
  EXPECT_EQ(scripting::LuaNumberToInt(-3.9), -3);
  EXPECT_EQ(scripting::LuaNumberToInt(1e300), INT64_MIN);
  EXPECT_EQ(scripting::LuaNumberToInt(0.0 / 0.0), INT64_MIN);
}

TEST(Shebang, FlagsAndErrors) {
  uint32_t flags = 0;
  size_t len = 0;
  EXPECT_EQ(scripting::ParseScriptShebang("return 1", &flags, &len), std::nullopt);
  EXPECT_EQ(flags, scripting::kFlagEvalCompat);
  EXPECT_EQ(
      scripting::ParseScriptShebang("#!lua flags=no-writes,allow-oom\nreturn 1", &flags, &len),
      std::nullopt);
  EXPECT_EQ(flags, scripting::kFlagNoWrites | scripting::kFlagAllowOom);
  EXPECT_EQ(len, 31u);
  EXPECT_EQ(scripting::ParseScriptShebang("#!lua flags=x\n", &flags, &len),
            "Unexpected flag in script shebang: x");
  EXPECT_EQ(scripting::ParseScriptShebang("#!lua", &flags, &len), "Invalid script shebang");
  scripting::LibraryMetadata md;
  EXPECT_EQ(scripting::ParseLibraryMetadata("#!lua name=lib\ncode", &md), std::nullopt);
  EXPECT_EQ(md.name, "lib");
  EXPECT_EQ(md.code, "\ncode");
  EXPECT_EQ(scripting::ParseLibraryMetadata("code", &md), "Missing library metadata");
}

// ------------------------------------------------------------------ the sandbox

TEST_F(ScriptingTest, SandboxRefusesWhatRedisRefuses) {
  auto starts = [](const std::string& r, std::string_view p) { return r.rfind(p, 0) == 0; };
  EXPECT_TRUE(starts(Eval("return os"),
                     "-ERR user_script:1: Script attempted to access "
                     "nonexistent global variable 'os'"));
  EXPECT_TRUE(starts(Eval("x = 1"), "-ERR user_script:1: Attempt to modify a readonly table"));
  EXPECT_TRUE(starts(Eval("string.rep = nil"), "-ERR user_script:1: Attempt to modify"));
  EXPECT_TRUE(starts(Eval("rawset(_G, 'x', 1)"), "-ERR Attempt to modify a readonly table"));
  EXPECT_TRUE(starts(Eval("table.insert(redis, 1)"), "-ERR Attempt to modify a readonly table"));
  EXPECT_TRUE(starts(Eval("getmetatable('').__index.rep = nil"), "-ERR user_script:1: Attempt"));
  // Reading through the proxies works as on Redis.
  EXPECT_EQ(Eval("return rawget(string, 'rep') ~= nil"), ":1\r\n");
  EXPECT_EQ(Eval("local n = 0 for _ in pairs(math) do n = n + 1 end return n > 10"), ":1\r\n");
  // Bytecode is never loaded (Redis's Lua parses every chunk as text).
  EXPECT_EQ(Eval("return loadstring(string.dump(function() return 1 end)) == nil"), ":1\r\n");
  EXPECT_TRUE(starts(Run({"EVAL", std::string("\x1bLua") + "\x51", "0"}),
                     "-ERR Error compiling script (new function): user_script:1:"));
  // struct and cmsgpack say they are not provided.
  EXPECT_NE(Eval("return cmsgpack.pack(1)").find("cmsgpack.pack is not provided by latch"),
            std::string::npos);
  // A table error without `err` (redis-server 7.0.15 crashes on it).
  EXPECT_TRUE(starts(Eval("error({ok='x'})"), "-ERR Error running script"));
  // The version scripts see is the one INFO reports.
  EXPECT_EQ(Eval("return redis.REDIS_VERSION"), Bulk(kRedisCompatVersion));
}

TEST_F(ScriptingTest, MemoryAndRecursionEndInErrorsNotCrashes) {
  ASSERT_EQ(Run({"CONFIG", "SET", "lua-maxmemory", "8mb"}), "+OK\r\n");
  auto starts = [](const std::string& r, std::string_view p) { return r.rfind(p, 0) == 0; };
  EXPECT_TRUE(starts(Eval("return #string.rep('x', 100000000)"), "-ERR Error running script"))
      << Eval("return #string.rep('x', 100000000)");
  EXPECT_TRUE(starts(Eval("local t = {} for i = 1, 10000000 do t[i] = i end return #t"),
                     "-ERR Error running script"));
  EXPECT_TRUE(starts(Eval("local function f(n) return f(n + 1) + 1 end return f(1)"),
                     "-ERR user_script:1: stack overflow"));
  EXPECT_TRUE(
      starts(Eval("local s = 'x' while true do s = s .. s end"), "-ERR Error running script"));
  // The server and the interpreter go on.
  EXPECT_EQ(Eval("return 'alive'"), "$5\r\nalive\r\n");
  const auto& engine = ts_.server().scripts_engine();
  EXPECT_LT(engine.eval_memory(), 8u * 1024 * 1024);
  Reply info = ts_.RunParsed({"INFO", "memory"});
  EXPECT_NE(info.str.find("used_memory_lua:"), std::string::npos);
  EXPECT_NE(info.str.find("number_of_cached_scripts:"), std::string::npos);
}

// ------------------------------------------------------------------ the log

TEST_F(ScriptingTest, ScriptWritesAreOneUnitAndFailuresKeepThem) {
  Logged();
  // One write: its record alone.
  EXPECT_EQ(Eval("return redis.call('set', 'a', '1')"), "+OK\r\n");
  EXPECT_EQ(Logged(), Req({"SET", "a", "1"}));
  // Two: bracketed.
  EXPECT_EQ(Eval("redis.call('set', 'b', '2') redis.call('del', 'a') return 1"), ":1\r\n");
  EXPECT_EQ(Logged(), Req({"MULTI"}) + Req({"SET", "b", "2"}) + Req({"DEL", "a"}) + Req({"EXEC"}));
  // A failure after writing keeps the writes (Redis's rule), in the log too.
  std::string r = Eval("redis.call('set', 'c', '3') redis.call('set', 'd', '4') error('late')");
  EXPECT_EQ(r.rfind("-ERR user_script:1: late", 0), 0u) << r;
  EXPECT_EQ(Run({"GET", "d"}), Bulk("4"));
  EXPECT_EQ(Logged(),
            Req({"MULTI"}) + Req({"SET", "c", "3"}) + Req({"SET", "d", "4"}) + Req({"EXEC"}));
  // Reads log nothing; a script never appears in the log.
  EXPECT_EQ(Eval("return redis.call('get', 'c')"), Bulk("3"));
  EXPECT_EQ(Logged(), "");
}

TEST_F(ScriptingTest, FunctionsAreLoggedReplayedAndRewritten) {
  const std::string lib =
      "#!lua name=locks\nredis.register_function('unlock', function(keys, args) "
      "if redis.call('get', keys[1]) == args[1] then return redis.call('del', keys[1]) end "
      "return 0 end)";
  Logged();
  EXPECT_EQ(Run({"FUNCTION", "LOAD", lib}), Bulk("locks"));
  EXPECT_EQ(Logged(), Req({"FUNCTION", "LOAD", "REPLACE", lib}));
  EXPECT_EQ(Run({"FUNCTION", "DELETE", "locks"}), "+OK\r\n");
  EXPECT_EQ(Logged(), Req({"FUNCTION", "DELETE", "locks"}));
  EXPECT_EQ(Run({"FUNCTION", "FLUSH"}), "+OK\r\n");
  EXPECT_EQ(Logged(), Req({"FUNCTION", "FLUSH"}));
  // A failed load logs nothing.
  EXPECT_NE(Run({"FUNCTION", "LOAD", "#!lua name=x\nreturn 1"}).find("No functions"),
            std::string::npos);
  EXPECT_EQ(Logged(), "");

  // Replay: a fresh server loads the library from its record.
  aof::Batch log;
  log.FunctionLoad(lib);
  log.Set("k", "t", 0);
  TestServer other;
  ReplayClock clock;
  clock.clock_id = "c";
  clock.now = other.server().Now();
  aof::Reader reader(log.bytes());
  while (reader.Next() == aof::Reader::Status::kUnit) {
    for (const aof::Record& rec : reader.records()) {
      EXPECT_EQ(other.server().store().Replay(rec, clock), "");
    }
  }
  EXPECT_EQ(other.Run({"FCALL", "unlock", "1", "k", "t"}), ":1\r\n");
  // A record of a library that cannot load is an error of the log.
  aof::Record bad;
  bad.op = aof::Op::kFunctionLoad;
  bad.value = "#!lua name=y\nreturn 1";
  EXPECT_NE(other.server().store().Replay(bad, clock).find("does not load"), std::string::npos);

  // A rewrite writes every library before the keys.
  aof::Batch snap;
  ASSERT_TRUE(other.server().store().WriteSnapshot(
      snap, [] { return true; }, other.server().Now()));
  EXPECT_NE(snap.bytes().find(Req({"FUNCTION", "LOAD", "REPLACE", lib})), std::string::npos);
}

// ------------------------------------------------------------------ lock rules

TEST_F(ScriptingTest, ScriptCallsObeyTheLeasePolicyCap) {
  ASSERT_EQ(Run({"CONFIG", "SET", "max-lock-ttl", "1000"}), "+OK\r\n");
  std::string r = Eval("return redis.call('set', 'k', 'v', 'PX', 5000)");
  EXPECT_EQ(r.rfind("-ERR TTL 5000 ms exceeds max-lock-ttl (1000 ms) script:", 0), 0u) << r;
  EXPECT_EQ(Run({"EXISTS", "k"}), ":0\r\n");
  EXPECT_EQ(Eval("return redis.pcall('set', 'k', 'v', 'PX', 5000).err"),
            Bulk("ERR TTL 5000 ms exceeds max-lock-ttl (1000 ms)"));
}

TEST_F(ScriptingTest, CommandsRedisRefusesInScripts) {
  for (const char* cmd : {"multi", "wait 0 0", "waitaof 0 0 0", "monitor", "config get hz"}) {
    std::string call = "'" + std::string(cmd) + "'";
    for (size_t sp = 0; (sp = call.find(' ', sp)) != std::string::npos; sp += 4) {
      call.replace(sp, 1, "','");
    }
    std::string r = Eval("return redis.pcall(" + call + ").err");
    EXPECT_EQ(r, Bulk("ERR This Redis command is not allowed from script")) << cmd;
  }
  // SET … NX WAIT never parks a script: the nil comes at once.
  ASSERT_EQ(Run({"SET", "held", "x"}), "+OK\r\n");
  EXPECT_EQ(Eval("return redis.call('set', 'held', 'y', 'NX', 'WAIT', 1000)"), "$-1\r\n");
}

}  // namespace
}  // namespace latch
