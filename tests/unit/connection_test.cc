// The gate's errors (unknown commands, arity) and the session commands
// (server/commands/connection.cc): AUTH, HELLO, SELECT, PING; DBSIZE, FLUSHALL.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "command_fixture.h"

namespace latch::test {
namespace {

// ------------------------------------------------ dispatch errors, sessions

TEST_F(CommandsTest, ArityErrorsUseTheLowerCaseName) {
  EXPECT_EQ(Run({"GET"}), Arity("get"));
  EXPECT_EQ(Run({"gEt", "a", "b"}), Arity("get"));
  EXPECT_EQ(Run({"PING", "a", "b"}), Arity("ping"));
  EXPECT_EQ(Run({"ECHO"}), Arity("echo"));
  EXPECT_EQ(Run({"DBSIZE", "x"}), Arity("dbsize"));
  EXPECT_EQ(Run({"TIME", "x"}), Arity("time"));
  EXPECT_EQ(Run({"CONFIG"}), Arity("config"));
  EXPECT_EQ(Run({"CONFIG", "GET"}), Arity("config|get"));
  EXPECT_EQ(Run({"config", "set", "timeout"}), Arity("config|set"));
  EXPECT_EQ(Run({"COMMAND", "COUNT", "x"}), Arity("command|count"));
}

TEST_F(CommandsTest, UnknownCommand) {
  EXPECT_EQ(Run({"foo", "a", "b"}),
            "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
  EXPECT_EQ(Run({"FOO"}), "-ERR unknown command 'FOO', with args beginning with: \r\n");
  // CR and LF in arguments become spaces.
  EXPECT_EQ(Run({"foo", "a\r\nb", "c\n"}),
            "-ERR unknown command 'foo', with args beginning with: 'a  b' 'c ' \r\n");
  // Each part is cut at 128 bytes; arguments stop once 128 bytes are shown.
  EXPECT_EQ(
      Run({"foo", std::string(200, 'x'), "b"}),
      "-ERR unknown command 'foo', with args beginning with: '" + std::string(128, 'x') + "' \r\n");
  EXPECT_EQ(Run({std::string(200, 'f'), "x"}), "-ERR unknown command '" + std::string(128, 'f') +
                                                   "', with args beginning with: 'x' \r\n");
  std::vector<std::string> many = {"foo"};
  for (int i = 0; i < 10; ++i) many.push_back(std::string(20, 'a'));
  std::string expected = "-ERR unknown command 'foo', with args beginning with: ";
  for (int i = 0; i < 5; ++i) expected += "'" + std::string(20, 'a') + "' ";
  expected += "'" + std::string(13, 'a') + "' \r\n";
  EXPECT_EQ(Run(many), expected);
}

TEST_F(CommandsTest, UnknownSubcommand) {
  EXPECT_EQ(Run({"CONFIG", "foo"}), "-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n");
  EXPECT_EQ(Run({"config", "foo", "bar"}), "-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n");
  EXPECT_EQ(Run({"CLIENT", "bogus"}), "-ERR unknown subcommand 'bogus'. Try CLIENT HELP.\r\n");
  EXPECT_EQ(Run({"command", "bogus"}), "-ERR unknown subcommand 'bogus'. Try COMMAND HELP.\r\n");
  EXPECT_EQ(Run({"CONFIG", "a\r\nb"}), "-ERR unknown subcommand 'a  b'. Try CONFIG HELP.\r\n");
}

TEST(CommandsAuthTest, NoAuthUntilAuthenticated) {
  Config config = test::TestConfig();
  config.requirepass = "sekret";
  TestServer ts(config);
  ts.conn().authenticated = false;
  const std::string noauth = "-NOAUTH Authentication required.\r\n";
  const std::string wrongpass =
      "-WRONGPASS invalid username-password pair or user is disabled.\r\n";
  EXPECT_EQ(ts.Run({"GET", "k"}), noauth);
  EXPECT_EQ(ts.Run({"SET", "k", "v"}), noauth);
  EXPECT_EQ(ts.Run({"PING"}), noauth);
  EXPECT_EQ(ts.Run({"CONFIG", "SET", "requirepass", ""}), noauth);
  // Existence and arity are checked first (as in Redis).
  EXPECT_EQ(ts.Run({"foo"}), "-ERR unknown command 'foo', with args beginning with: \r\n");
  EXPECT_EQ(ts.Run({"GET"}), Arity("get"));
  // HELLO without AUTH is refused and does not switch protocols.
  EXPECT_EQ(ts.Run({"HELLO", "3"}),
            "-NOAUTH HELLO must be called with the client already authenticated, otherwise the "
            "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
            "the RESP protocol version at the same time\r\n");
  EXPECT_EQ(ts.conn().resp, 2);
  EXPECT_EQ(ts.Run({"AUTH", "bad"}), wrongpass);
  EXPECT_EQ(ts.Run({"AUTH", "default", "bad"}), wrongpass);
  EXPECT_EQ(ts.Run({"AUTH", "bob", "sekret"}), wrongpass);
  EXPECT_EQ(ts.Run({"AUTH", "a", "b", "c"}), kSyntax);
  EXPECT_EQ(ts.Run({"HELLO", "3", "AUTH", "default", "bad"}), wrongpass);
  EXPECT_EQ(ts.conn().resp, 2);
  EXPECT_EQ(ts.Run({"GET", "k"}), noauth);
  EXPECT_FALSE(ts.conn().authenticated);

  EXPECT_EQ(ts.Run({"AUTH", "sekret"}), kOk);
  EXPECT_TRUE(ts.conn().authenticated);
  EXPECT_EQ(ts.Run({"GET", "k"}), kNull);  // the refused SET wrote nothing
  EXPECT_EQ(ts.Run({"PING"}), "+PONG\r\n");
}

TEST(CommandsAuthTest, HelloAuthAuthenticatesAndSwitchesProtocol) {
  Config config = test::TestConfig();
  config.requirepass = "sekret";
  TestServer ts(config);
  ts.conn().authenticated = false;
  Reply r = ts.RunParsed({"HELLO", "3", "AUTH", "default", "sekret"});
  ASSERT_EQ(r.type, Reply::Type::kMap) << r.ToString();
  EXPECT_TRUE(ts.conn().authenticated);
  EXPECT_EQ(ts.conn().resp, 3);
  EXPECT_EQ(ts.Run({"GET", "k"}), "_\r\n");
  // AUTH user pass also works with the default user name.
  TestServer ts2(config);
  ts2.conn().authenticated = false;
  EXPECT_EQ(ts2.Run({"AUTH", "default", "sekret"}), kOk);
  EXPECT_EQ(ts2.Run({"GET", "k"}), kNull);
}

TEST_F(CommandsTest, AuthWithoutAPassword) {
  EXPECT_EQ(Run({"AUTH", "x"}),
            "-ERR AUTH <password> called without any password configured for the default user. "
            "Are you sure your configuration is correct?\r\n");
  EXPECT_EQ(Run({"AUTH", "default", "anything"}), kOk);
  EXPECT_EQ(Run({"AUTH", "bob", "x"}),
            "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
}

TEST_F(CommandsTest, HelloSwitchesToResp3) {
  Reply r = RunParsed({"HELLO", "3"});
  ASSERT_EQ(r.type, Reply::Type::kMap) << r.ToString();
  ASSERT_EQ(r.elements.size(), 14u);
  std::vector<std::string> keys;
  for (size_t i = 0; i < r.elements.size(); i += 2) keys.push_back(r.elements[i].str);
  EXPECT_EQ(keys, (std::vector<std::string>{"server", "version", "proto", "id", "mode", "role",
                                            "modules"}));
  EXPECT_EQ(r.elements[1].str, "redis");
  EXPECT_EQ(r.elements[5].type, Reply::Type::kInteger);
  EXPECT_EQ(r.elements[5].integer, 3);
  EXPECT_EQ(r.elements[7].integer, 1);  // the connection id
  EXPECT_EQ(ts_.conn().resp, 3);

  // Nulls and maps change shape; the rest does not.
  EXPECT_EQ(Run({"GET", "k"}), "_\r\n");
  EXPECT_EQ(Run({"SET", "k", "v", "XX"}), "_\r\n");
  EXPECT_EQ(Run({"SET", "k", "v", "GET"}), "_\r\n");
  EXPECT_EQ(Run({"SET", "k", "v2", "GET"}), Bulk("v"));
  EXPECT_EQ(Run({"SET", "k", "v3"}), kOk);
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"CONFIG", "GET", "maxclients"}), "%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
  EXPECT_EQ(Run({"COMMAND", "INFO", "nosuchcmd"}), "*1\r\n_\r\n");
  EXPECT_EQ(Run({"GET"}), Arity("get"));

  // HELLO alone reports the current protocol; HELLO 2 goes back.
  r = RunParsed({"HELLO"});
  ASSERT_EQ(r.type, Reply::Type::kMap);
  EXPECT_EQ(r.elements[5].integer, 3);
  r = RunParsed({"HELLO", "2"});
  ASSERT_EQ(r.type, Reply::Type::kArray);
  EXPECT_EQ(r.elements.size(), 14u);
  EXPECT_EQ(r.elements[5].integer, 2);
  EXPECT_EQ(Run({"GET", "missing"}), kNull);
  EXPECT_EQ(Run({"CONFIG", "GET", "maxclients"}), "*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n");
}

TEST_F(CommandsTest, HelloErrorsKeepTheProtocol) {
  EXPECT_EQ(Run({"HELLO", "4"}), "-NOPROTO unsupported protocol version\r\n");
  EXPECT_EQ(Run({"HELLO", "1"}), "-NOPROTO unsupported protocol version\r\n");
  EXPECT_EQ(Run({"HELLO", "x"}), "-ERR Protocol version is not an integer or out of range\r\n");
  EXPECT_EQ(Run({"HELLO", "3", "FOO"}), "-ERR Syntax error in HELLO option 'FOO'\r\n");
  EXPECT_EQ(Run({"HELLO", "3", "SETNAME"}), "-ERR Syntax error in HELLO option 'SETNAME'\r\n");
  EXPECT_EQ(Run({"HELLO", "3", "AUTH", "default"}), "-ERR Syntax error in HELLO option 'AUTH'\r\n");
  EXPECT_EQ(ts_.conn().resp, 2);
  EXPECT_EQ(Run({"GET", "k"}), kNull);
  // SETNAME sets the name.
  Reply r = RunParsed({"HELLO", "3", "SETNAME", "worker-1"});
  ASSERT_EQ(r.type, Reply::Type::kMap);
  EXPECT_EQ(Run({"CLIENT", "GETNAME"}), Bulk("worker-1"));
}

TEST_F(CommandsTest, Select) {
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
  // Each database is its own keyspace; the connection stays in the one it
  // selected last.
  EXPECT_EQ(Run({"SET", "k", "zero"}), kOk);
  EXPECT_EQ(Run({"SELECT", "15"}), kOk);
  EXPECT_EQ(Run({"GET", "k"}), kNull);
  EXPECT_EQ(Run({"SET", "k", "fifteen"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(1));
  EXPECT_EQ(Run({"SELECT", "0"}), kOk);
  EXPECT_EQ(Run({"GET", "k"}), Bulk("zero"));
  // `databases` is 16 by default, as in Redis.
  EXPECT_EQ(Run({"SELECT", "16"}), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(Run({"SELECT", "-1"}), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(Run({"SELECT", "2147483647"}), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(Run({"SELECT", "x"}), kNotInt);
  // Redis parses the index as a C int.
  EXPECT_EQ(Run({"SELECT", "9999999999"}),
            "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n");
  EXPECT_EQ(Run({"SELECT", "-2147483649"}),
            "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n");
  EXPECT_EQ(Run({"SELECT"}), Arity("select"));
}

TEST_F(CommandsTest, DbSizeAndFlushAll) {
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  ASSERT_EQ(Run({"SET", "a", "1"}), kOk);
  ASSERT_EQ(Run({"SET", "b", "2", "PX", "1000"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(2));
  EXPECT_EQ(Run({"FLUSHALL", "x"}), kSyntax);
  EXPECT_EQ(Run({"FLUSHALL", "SYNC", "ASYNC"}), kSyntax);
  EXPECT_EQ(Run({"DBSIZE"}), Int(2));
  EXPECT_EQ(Run({"FLUSHALL"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  EXPECT_EQ(Run({"EXISTS", "a", "b"}), Int(0));
  EXPECT_EQ(ts_.server().store().keys_with_deadline(), 0u);
  ASSERT_EQ(Run({"SET", "a", "1"}), kOk);
  EXPECT_EQ(Run({"FLUSHALL", "async"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
  ASSERT_EQ(Run({"SET", "a", "1"}), kOk);
  EXPECT_EQ(Run({"FLUSHDB", "SYNC"}), kOk);
  EXPECT_EQ(Run({"DBSIZE"}), Int(0));
}

TEST_F(CommandsTest, PingEchoTime) {
  EXPECT_EQ(Run({"PING"}), "+PONG\r\n");
  EXPECT_EQ(Run({"PING", "hi"}), Bulk("hi"));
  EXPECT_EQ(Run({"ECHO", std::string("a\0b", 3)}), Bulk(std::string("a\0b", 3)));
  EXPECT_EQ(Run({"TIME"}), "*2\r\n$10\r\n1700000000\r\n$1\r\n0\r\n");
  clock().Advance(1500);
  EXPECT_EQ(Run({"TIME"}), "*2\r\n$10\r\n1700000001\r\n$6\r\n500000\r\n");
}

}  // namespace
}  // namespace latch::test
