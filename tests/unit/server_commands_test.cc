// The administrative commands: CONFIG (server/commands/config.cc), COMMAND
// (introspection.cc), and how scripting names the native commands.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "command_fixture.h"

namespace latch::test {
namespace {

// -------------------------------------------------------------------- CONFIG

std::set<std::string> ConfigNames(const Reply& r) {
  std::set<std::string> names;
  for (size_t i = 0; i < r.elements.size(); i += 2) names.insert(r.elements[i].str);
  return names;
}

TEST_F(CommandsTest, ConfigGet) {
  EXPECT_EQ(Run({"CONFIG", "GET", "timeout"}), "*2\r\n$7\r\ntimeout\r\n$1\r\n0\r\n");
  EXPECT_EQ(Run({"CONFIG", "GET", "nosuch"}), "*0\r\n");
  EXPECT_EQ(Run({"CONFIG", "GET", "max-lock-ttl"}), "*2\r\n$12\r\nmax-lock-ttl\r\n$1\r\n0\r\n");
  Reply r = RunParsed({"CONFIG", "GET", "append*"});
  ASSERT_EQ(r.type, Reply::Type::kArray) << r.ToString();
  EXPECT_EQ(ConfigNames(r), (std::set<std::string>{"appendonly", "appendfilename", "appendfsync"}));
  // Several patterns; a parameter matched twice is listed once.
  r = RunParsed({"CONFIG", "GET", "?imeout", "timeout", "maxclient[sx]"});
  EXPECT_EQ(r.elements.size(), 4u);
  EXPECT_EQ(ConfigNames(r), (std::set<std::string>{"timeout", "maxclients"}));
  // Patterns are case-insensitive; an exact name is echoed as typed (Redis 7.0).
  EXPECT_EQ(Run({"CONFIG", "GET", "TIMEOUT"}), "*2\r\n$7\r\nTIMEOUT\r\n$1\r\n0\r\n");
  r = RunParsed({"CONFIG", "GET", "MAXCLIENT?"});
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_EQ(r.elements[0].str, "maxclients");
  EXPECT_EQ(r.elements[1].str, "10000");
  // redis-benchmark asks for these at start-up.
  r = RunParsed({"CONFIG", "GET", "save"});
  EXPECT_EQ(r.elements.size(), 2u);
  r = RunParsed({"CONFIG", "GET", "appendonly"});
  ASSERT_EQ(r.elements.size(), 2u);
  EXPECT_EQ(r.elements[1].str, "no");
  r = RunParsed({"CONFIG", "GET", "*"});
  EXPECT_GT(r.elements.size(), 40u);
  EXPECT_EQ(r.elements.size() % 2, 0u);
}

TEST_F(CommandsTest, ConfigSet) {
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "5"}), kOk);
  EXPECT_EQ(ts_.server().config().timeout, 5);
  EXPECT_EQ(Run({"CONFIG", "GET", "timeout"}), "*2\r\n$7\r\ntimeout\r\n$1\r\n5\r\n");
  EXPECT_EQ(Run({"CONFIG", "SET", "TIMEOUT", "6"}), kOk);
  EXPECT_EQ(ts_.server().config().timeout, 6);
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "7", "maxclients", "100"}), kOk);
  EXPECT_EQ(ts_.server().config().timeout, 7);
  EXPECT_EQ(ts_.server().config().maxclients, 100);

  auto failed = [](std::string_view arg, std::string_view why) {
    return "-ERR CONFIG SET failed (possibly related to argument '" + std::string(arg) + "') - " +
           std::string(why) + "\r\n";
  };
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "abc"}),
            failed("timeout", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "-1"}),
            failed("timeout", "argument must be between 0 and 2147483647 inclusive"));
  EXPECT_EQ(
      Run({"CONFIG", "SET", "appendfsync", "bad"}),
      failed("appendfsync", "argument(s) must be one of the following: everysec, always, no"));
  EXPECT_EQ(Run({"CONFIG", "SET", "protected-mode", "maybe"}),
            failed("protected-mode", "argument must be 'yes' or 'no'"));
  EXPECT_EQ(Run({"CONFIG", "SET", "port", "1"}), failed("port", "can't set immutable config"));
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "1", "timeout", "2"}),
            failed("timeout", "duplicate parameter"));
  EXPECT_EQ(Run({"CONFIG", "SET", "nosuch", "1"}),
            "-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n");
  // An odd number of arguments past the first pair: Redis says syntax error.
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "1", "maxclients"}), kSyntax);
  EXPECT_EQ(ts_.server().config().timeout, 7);
  EXPECT_EQ(ts_.server().config().port, 6379);

  // All or nothing: a bad second parameter leaves the first unchanged.
  EXPECT_EQ(Run({"CONFIG", "SET", "timeout", "5", "maxclients", "abc"}),
            failed("maxclients", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(Run({"CONFIG", "SET", "max-lock-ttl", "1000", "nosuch", "1"}),
            "-ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'\r\n");
  EXPECT_EQ(Run({"CONFIG", "SET", "max-lock-ttl", "1000", "port", "1"}),
            failed("port", "can't set immutable config"));
  EXPECT_EQ(ts_.server().config().timeout, 7);
  EXPECT_EQ(ts_.server().config().maxclients, 100);
  EXPECT_EQ(ts_.server().config().max_lock_ttl, 0);
  EXPECT_EQ(Run({"CONFIG", "GET", "timeout"}), "*2\r\n$7\r\ntimeout\r\n$1\r\n7\r\n");
}

// ------------------------------------------------------------------- COMMAND

TEST_F(CommandsTest, CommandCountInfoDocs) {
  Reply all = RunParsed({"COMMAND"});
  ASSERT_EQ(all.type, Reply::Type::kArray);
  EXPECT_GT(all.elements.size(), 30u);
  EXPECT_EQ(Run({"COMMAND", "COUNT"}), Int(static_cast<int64_t>(all.elements.size())));
  std::set<std::string> names;
  for (const Reply& c : all.elements) {
    ASSERT_EQ(c.type, Reply::Type::kArray);
    ASSERT_EQ(c.elements.size(), 10u) << c.ToString();
    names.insert(c.elements[0].str);
  }
  for (const char* n : {"get", "set", "del", "delifeq", "delex", "digest", "pexpire", "hello",
                        "config", "command", "eval"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }

  // Byte-identical to redis-server 7.0 for a command both have.
  EXPECT_EQ(
      Run({"COMMAND", "INFO", "get"}),
      "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n"
      "+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n"
      "$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex"
      "\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\n"
      "lastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n");
  EXPECT_EQ(Run({"COMMAND", "INFO", "nosuchcmd"}), "*1\r\n$-1\r\n");
  Reply info = RunParsed({"COMMAND", "INFO", "DELIFEQ", "nosuch", "set"});
  ASSERT_EQ(info.elements.size(), 3u);
  EXPECT_EQ(info.elements[0].elements[0].str, "delifeq");
  EXPECT_EQ(info.elements[0].elements[1].integer, 3);
  EXPECT_TRUE(info.elements[1].is_null());
  EXPECT_EQ(info.elements[2].elements[0].str, "set");
  EXPECT_EQ(info.elements[2].elements[1].integer, -3);

  EXPECT_EQ(Run({"COMMAND", "DOCS", "get"}),
            "*2\r\n$3\r\nget\r\n*10\r\n$7\r\nsummary\r\n$22\r\nGet the value of a key\r\n$5\r\n"
            "since\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\n"
            "O(1)\r\n$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\n"
            "key\r\n$14\r\nkey_spec_index\r\n:0\r\n");
  EXPECT_EQ(Run({"COMMAND", "DOCS", "nosuchcmd"}), "*0\r\n");
  Reply docs = RunParsed({"COMMAND", "DOCS"});
  ASSERT_EQ(docs.type, Reply::Type::kArray);
  EXPECT_EQ(docs.elements.size(), 2 * all.elements.size());
  ts_.conn().resp = 3;
  docs = RunParsed({"COMMAND", "DOCS", "delex"});
  ASSERT_EQ(docs.type, Reply::Type::kMap) << docs.ToString();
  ASSERT_EQ(docs.elements.size(), 2u);
  EXPECT_EQ(docs.elements[0].str, "delex");
  EXPECT_EQ(docs.elements[1].type, Reply::Type::kMap);
}

TEST_F(CommandsTest, ScriptsRun) {
  // Any script runs (Lua 5.1, Redis's sandbox); EVALSHA of one never loaded
  // is NOSCRIPT, on which clients fall back to EVAL.
  EXPECT_EQ(Run({"EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "lock", "t"}),
            "+OK\r\n");
  EXPECT_EQ(Run({"eval", "return 1", "0"}), ":1\r\n");
  EXPECT_EQ(Run({"SCRIPT", "LOAD", "return 1"}),
            "$40\r\ne0e1f9fabfc9d4800c877a703b823ac0578ff8db\r\n");
  EXPECT_EQ(Run({"FCALL", "f", "0"}), "-ERR Function not found\r\n");
  EXPECT_EQ(Run({"EVALSHA", "0123456789012345678901234567890123456789", "0"}),
            "-NOSCRIPT No matching script. Please use EVAL.\r\n");
  EXPECT_EQ(Run({"EVAL", "x"}), Arity("eval"));
  EXPECT_EQ(Run({"EVALSHA", "x"}), Arity("evalsha"));
}

TEST_F(CommandsTest, FunctionFlush) {
  // Redis's test suite starts every unit with FUNCTION FLUSH.
  EXPECT_EQ(Run({"FUNCTION", "FLUSH"}), "+OK\r\n");
  EXPECT_EQ(Run({"function", "flush", "async"}), "+OK\r\n");
  EXPECT_EQ(Run({"FUNCTION", "FLUSH", "SYNC"}), "+OK\r\n");
  EXPECT_EQ(Run({"FUNCTION", "FLUSH", "now"}),
            "-ERR FUNCTION FLUSH only supports SYNC|ASYNC option\r\n");
  EXPECT_EQ(Run({"FUNCTION", "FLUSH", "SYNC", "x"}),
            "-ERR unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION "
            "HELP.\r\n");
}

}  // namespace
}  // namespace latch::test
