// The rest of the string family (issue 15) through Server::Dispatch, on a
// ManualClock: replies byte for byte (checked against Debian's redis-server
// 7.0), and the effects the log records for them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "command_fixture.h"
#include "log/record.h"
#include "logged_records.h"
#include "test_server.h"

namespace latch {
namespace {

using test::Bulk;
using test::Int;
using test::kNotInt;
using test::kNull;
using test::kOk;
using test::kSyntax;
using test::Req;
using test::TestServer;

const std::string kNotFloat = "-ERR value is not a valid float\r\n";

class StringOpsTest : public ::testing::Test {
 protected:
  void SetUp() override { ts_.server().store().set_log(&log_); }
  void TearDown() override { ts_.server().store().set_log(nullptr); }

  std::string Run(const std::vector<std::string>& args) { return ts_.Run(args); }
  ManualClock& clock() { return ts_.clock(); }
  std::string WallMsPlus(int64_t ms) { return std::to_string(clock().WallMs() + ms); }

  // The records logged since the last call, without clock annotations.
  std::string Logged() { return test::TakeLogged(log_); }

  TestServer ts_;
  aof::Batch log_;
};

TEST_F(StringOpsTest, CountersAndTheirRecords) {
  EXPECT_EQ(Run({"INCR", "n"}), Int(1));
  EXPECT_EQ(Logged(), Req({"SET", "n", "1"}));
  EXPECT_EQ(Run({"INCRBY", "n", "41"}), Int(42));
  EXPECT_EQ(Run({"DECRBY", "n", "2"}), Int(40));
  EXPECT_EQ(Run({"DECR", "n"}), Int(39));
  EXPECT_EQ(Logged(), Req({"SET", "n", "42"}) + Req({"SET", "n", "40"}) + Req({"SET", "n", "39"}));
  // A counter with a lease keeps it, and the record says until when.
  EXPECT_EQ(Run({"SET", "rl", "5", "PX", "10000"}), kOk);
  const std::string until = WallMsPlus(10000);
  Logged();
  clock().Advance(3000);
  EXPECT_EQ(Run({"INCR", "rl"}), Int(6));
  EXPECT_EQ(Logged(), Req({"SET", "rl", "6", "PXAT", until}));
  EXPECT_EQ(Run({"PTTL", "rl"}), Int(7000));
  // Refused increments change and log nothing.
  EXPECT_EQ(Run({"SET", "s", "abc"}), kOk);
  EXPECT_EQ(Run({"SET", "max", "9223372036854775807"}), kOk);
  Logged();
  const uint64_t changes = ts_.server().store().changes();
  EXPECT_EQ(Run({"INCR", "s"}), kNotInt);
  EXPECT_EQ(Run({"INCR", "max"}), "-ERR increment or decrement would overflow\r\n");
  EXPECT_EQ(Run({"DECRBY", "n", "-9223372036854775808"}), "-ERR decrement would overflow\r\n");
  EXPECT_EQ(Run({"INCRBY", "n", "x"}), kNotInt);
  EXPECT_EQ(Logged(), "");
  EXPECT_EQ(ts_.server().store().changes(), changes);
}

TEST_F(StringOpsTest, IncrByFloatFormatsAndLogsTheResult) {
  EXPECT_EQ(Run({"INCRBYFLOAT", "f", "0.1"}), Bulk("0.1"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "f", "0.2"}), Bulk("0.3"));
  // The record is the text of the result: a replay gives the same digits.
  EXPECT_EQ(Logged(), Req({"SET", "f", "0.1"}) + Req({"SET", "f", "0.3"}));
  EXPECT_EQ(Run({"INCRBYFLOAT", "f", "-0.3"}), Bulk("0"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "g", "1e3"}), Bulk("1000"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "g", "0x10"}), Bulk("1016"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "h", "3.0e-5"}), Bulk("0.00003"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "i", "-0.0"}), Bulk("0"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "j", "1e300"}),
            Bulk("100000000000000000000899732407955919387052394427329074793826008232126564659618"
                 "09357558491520837504971903503725086142748359035925561846729839130962605207486"
                 "46287327135641843653294084255107606016789726652932370030551382947620994540294"
                 "772781889620606179267611627097410650567187386105690089424915104006144"));
  EXPECT_EQ(Run({"INCRBYFLOAT", "e", "inf"}), "-ERR increment would produce NaN or Infinity\r\n");
  EXPECT_EQ(Run({"INCRBYFLOAT", "e", "nan"}), kNotFloat);
  EXPECT_EQ(Run({"INCRBYFLOAT", "e", " 1"}), kNotFloat);
  EXPECT_EQ(Run({"INCRBYFLOAT", "e", "1e-5000"}), kNotFloat);
  EXPECT_EQ(Run({"INCRBYFLOAT", "e", std::string("1\0", 2)}), kNotFloat);
  EXPECT_EQ(Run({"EXISTS", "e"}), Int(0));
}

TEST_F(StringOpsTest, MultiKeyWritesAreOneTransactionInTheLog) {
  EXPECT_EQ(Run({"MSET", "a", "1", "b", "2"}), kOk);
  EXPECT_EQ(Logged(),
            Req({"MULTI"}) + Req({"SET", "a", "1"}) + Req({"SET", "b", "2"}) + Req({"EXEC"}));
  EXPECT_EQ(Run({"MSETNX", "c", "3", "a", "9"}), Int(0));
  EXPECT_EQ(Logged(), "");
  EXPECT_EQ(Run({"MSETNX", "c", "3", "d", "4"}), Int(1));
  EXPECT_EQ(Logged(),
            Req({"MULTI"}) + Req({"SET", "c", "3"}) + Req({"SET", "d", "4"}) + Req({"EXEC"}));
  EXPECT_EQ(Run({"MGET", "a", "zz", "d"}), "*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n4\r\n");
  // Inside MULTI … EXEC, MSET's records join the transaction's.
  EXPECT_EQ(Run({"MULTI"}), kOk);
  EXPECT_EQ(Run({"MSET", "x", "1", "y", "2"}), "+QUEUED\r\n");
  EXPECT_EQ(Run({"INCR", "x"}), "+QUEUED\r\n");
  EXPECT_EQ(Run({"EXEC"}), "*2\r\n+OK\r\n:2\r\n");
  EXPECT_EQ(Logged(), Req({"MULTI"}) + Req({"SET", "x", "1"}) + Req({"SET", "y", "2"}) +
                          Req({"SET", "x", "2"}) + Req({"EXEC"}));
  EXPECT_EQ(Run({"MSET", "a"}), "-ERR wrong number of arguments for 'mset' command\r\n");
  EXPECT_EQ(Run({"MSETNX", "a", "1", "b"}),
            "-ERR wrong number of arguments for 'msetnx' command\r\n");
}

TEST_F(StringOpsTest, GetExGetDelGetSetRecords) {
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  Logged();
  // GETEX PX is logged as the absolute PEXPIREAT it sets.
  EXPECT_EQ(Run({"GETEX", "k", "PX", "5000"}), Bulk("v"));
  EXPECT_EQ(Logged(), Req({"PEXPIREAT", "k", WallMsPlus(5000)}));
  EXPECT_EQ(Run({"GETEX", "k", "EXAT", "1800000000"}), Bulk("v"));
  EXPECT_EQ(Logged(), Req({"PEXPIREAT", "k", "1800000000000"}));
  EXPECT_EQ(Run({"GETEX", "k", "PERSIST"}), Bulk("v"));
  EXPECT_EQ(Logged(), Req({"PERSIST", "k"}));
  EXPECT_EQ(Run({"GETEX", "k", "PERSIST"}), Bulk("v"));  // nothing to remove
  EXPECT_EQ(Run({"GETEX", "k"}), Bulk("v"));
  EXPECT_EQ(Logged(), "");
  EXPECT_EQ(Run({"GETEX", "k", "PXAT", "1"}), Bulk("v"));  // past: deleted
  EXPECT_EQ(Logged(), Req({"DEL", "k"}));
  EXPECT_EQ(Run({"GETEX", "k", "EX", "0"}), kNull);  // missing: null before the time
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  EXPECT_EQ(Run({"GETEX", "k", "EX", "0"}), "-ERR invalid expire time in 'getex' command\r\n");
  EXPECT_EQ(Run({"GETEX", "k", "EX", "1", "PX", "1"}), kSyntax);
  Logged();
  EXPECT_EQ(Run({"GETDEL", "k"}), Bulk("v"));
  EXPECT_EQ(Logged(), Req({"DEL", "k"}));
  EXPECT_EQ(Run({"GETDEL", "k"}), kNull);
  EXPECT_EQ(Run({"SET", "g", "old", "PX", "1000"}), kOk);
  Logged();
  EXPECT_EQ(Run({"GETSET", "g", "new"}), Bulk("old"));
  EXPECT_EQ(Logged(), Req({"SET", "g", "new"}));  // the lease is gone too
  EXPECT_EQ(Run({"TTL", "g"}), Int(-1));
}

TEST_F(StringOpsTest, RangesAndTheirRecords) {
  EXPECT_EQ(Run({"APPEND", "a", "ab"}), Int(2));
  EXPECT_EQ(Run({"APPEND", "a", "cd"}), Int(4));
  EXPECT_EQ(Logged(), Req({"SET", "a", "ab"}) + Req({"SET", "a", "abcd"}));
  EXPECT_EQ(Run({"STRLEN", "a"}), Int(4));
  EXPECT_EQ(Run({"GETRANGE", "a", "1", "-2"}), Bulk("bc"));
  EXPECT_EQ(Run({"SUBSTR", "a", "-100", "100"}), Bulk("abcd"));
  EXPECT_EQ(Run({"GETRANGE", "a", "3", "1"}), Bulk(""));
  EXPECT_EQ(Run({"SETRANGE", "a", "6", "xy"}), Int(8));
  EXPECT_EQ(Run({"GET", "a"}), Bulk(std::string("abcd\0\0xy", 8)));
  EXPECT_EQ(Logged(), Req({"SET", "a", std::string("abcd\0\0xy", 8)}));
  EXPECT_EQ(Run({"SETRANGE", "a", "0", ""}), Int(8));
  EXPECT_EQ(Run({"SETRANGE", "none", "3", ""}), Int(0));
  EXPECT_EQ(Run({"SETRANGE", "a", "-1", "x"}), "-ERR offset is out of range\r\n");
  EXPECT_EQ(Logged(), "");
  const std::string too_long = "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n";
  EXPECT_EQ(Run({"SETRANGE", "a", "536870912", "x"}), too_long);
  EXPECT_EQ(Run({"CONFIG", "SET", "proto-max-bulk-len", "1mb"}), kOk);
  EXPECT_EQ(Run({"SET", "b", std::string(1024 * 1024, 'x')}), kOk);
  EXPECT_EQ(Run({"APPEND", "b", "y"}), too_long);
  EXPECT_EQ(Run({"STRLEN", "b"}), Int(1024 * 1024));
}

TEST_F(StringOpsTest, ObjectEncodingFollowsHowTheValueWasMade) {
  auto encoding = [&](const std::string& key) { return Run({"OBJECT", "ENCODING", key}); };
  EXPECT_EQ(Run({"SET", "k", "123"}), kOk);
  EXPECT_EQ(encoding("k"), Bulk("int"));
  EXPECT_EQ(Run({"OBJECT", "REFCOUNT", "k"}), Int(2147483647));
  EXPECT_EQ(Run({"APPEND", "k", "4"}), Int(4));
  EXPECT_EQ(encoding("k"), Bulk("raw"));
  EXPECT_EQ(Run({"OBJECT", "REFCOUNT", "k"}), Int(1));
  EXPECT_EQ(Run({"INCR", "k"}), Int(1235));
  EXPECT_EQ(encoding("k"), Bulk("int"));
  EXPECT_EQ(Run({"OBJECT", "REFCOUNT", "k"}), Int(2147483647));  // Redis shares 0-9999
  EXPECT_EQ(Run({"INCRBY", "k", "100000"}), Int(101235));
  EXPECT_EQ(Run({"OBJECT", "REFCOUNT", "k"}), Int(1));
  EXPECT_EQ(Run({"INCRBYFLOAT", "k", "1"}), Bulk("101236"));
  EXPECT_EQ(encoding("k"), Bulk("embstr"));
  EXPECT_EQ(Run({"SET", "k", std::string(44, 'x')}), kOk);
  EXPECT_EQ(encoding("k"), Bulk("embstr"));
  EXPECT_EQ(Run({"SET", "k", std::string(45, 'x')}), kOk);
  EXPECT_EQ(encoding("k"), Bulk("raw"));
  EXPECT_EQ(encoding("missing"), kNull);
  // A restart replays SETs: the encoding is then what SET would give, as
  // after Redis reloads its log.
}

TEST_F(StringOpsTest, IdleTimeIsPerKeyAndOnlyReadsAndWritesReset) {
  EXPECT_EQ(Run({"SET", "k", "v"}), kOk);
  clock().Advance(5000);
  EXPECT_EQ(Run({"OBJECT", "IDLETIME", "k"}), Int(5));
  EXPECT_EQ(Run({"TTL", "k"}), Int(-1));
  EXPECT_EQ(Run({"TYPE", "k"}), "+string\r\n");
  EXPECT_EQ(Run({"EXISTS", "k"}), Int(1));
  EXPECT_EQ(Run({"OBJECT", "IDLETIME", "k"}), Int(5));
  EXPECT_EQ(Run({"GET", "k"}), Bulk("v"));
  EXPECT_EQ(Run({"OBJECT", "IDLETIME", "k"}), Int(0));
  clock().Advance(2000);
  EXPECT_EQ(Run({"TOUCH", "k", "missing"}), Int(1));
  EXPECT_EQ(Run({"OBJECT", "IDLETIME", "k"}), Int(0));
}

TEST_F(StringOpsTest, ScanWalksEveryKeyAcrossManyCalls) {
  for (int i = 0; i < 1000; ++i) Run({"SET", "key:" + std::to_string(i), "v"});
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    resp::Reply r = ts_.RunParsed({"SCAN", cursor, "COUNT", "7", "MATCH", "key:*"});
    ASSERT_EQ(r.type, resp::Reply::Type::kArray) << r.str;
    ASSERT_EQ(r.elements.size(), 2u);
    cursor = r.elements[0].str;
    for (const resp::Reply& k : r.elements[1].elements) seen.insert(k.str);
    // Inserting while walking: new keys may or may not come back.
    Run({"SET", "later:" + std::to_string(calls), "v"});
    ++calls;
  } while (cursor != "0" && calls < 100000);
  EXPECT_EQ(cursor, "0");
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_GT(calls, 10);
}

TEST_F(StringOpsTest, ClientReplyDropsRepliesAndDispatchSaysSo) {
  Connection& c = ts_.conn();
  auto dispatch = [&](std::vector<std::string_view> argv) {
    bool replied = ts_.server().Dispatch(c, argv);
    std::string out = std::move(c.output());
    c.output().clear();
    return std::make_pair(replied, out);
  };
  EXPECT_EQ(dispatch({"CLIENT", "REPLY", "OFF"}), std::make_pair(false, std::string()));
  EXPECT_EQ(dispatch({"SET", "k", "v"}), std::make_pair(false, std::string()));
  EXPECT_EQ(dispatch({"NOSUCH"}), std::make_pair(false, std::string()));
  EXPECT_EQ(dispatch({"CLIENT", "REPLY", "ON"}), std::make_pair(true, kOk));
  EXPECT_EQ(dispatch({"CLIENT", "REPLY", "SKIP"}), std::make_pair(true, std::string()));
  EXPECT_EQ(dispatch({"GET", "k"}), std::make_pair(false, std::string()));
  EXPECT_EQ(dispatch({"GET", "k"}), std::make_pair(true, Bulk("v")));
  // The error replies dropped still count (INFO errorstats), as in Redis.
  EXPECT_EQ(ts_.server().stats().errors["ERR"], 1u);
}

TEST_F(StringOpsTest, WaitAofParksUntilItsDeadline) {
  // No log (appendonly no): asking for a replica parks the client until
  // the timeout, then the answer says nothing is on disk.
  Connection& c = ts_.conn();
  std::vector<std::string_view> wait = {"WAITAOF", "0", "1", "500"};
  EXPECT_FALSE(ts_.server().Dispatch(c, wait));
  EXPECT_TRUE(c.blocked);
  EXPECT_EQ(c.output(), "");
  EXPECT_EQ(ts_.server().parked_clients(), 1u);
  ts_.server().ServeFsyncWaits(clock().MonoMs() + 499);
  EXPECT_TRUE(c.blocked);
  ts_.server().ServeFsyncWaits(clock().MonoMs() + 500);
  EXPECT_FALSE(c.blocked);
  EXPECT_EQ(c.output(), "*2\r\n:0\r\n:0\r\n");
  EXPECT_EQ(ts_.server().parked_clients(), 0u);
}

}  // namespace
}  // namespace latch
