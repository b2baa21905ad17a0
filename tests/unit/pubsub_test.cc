// Pub/sub and keyspace notifications in-process (server/pubsub.h): who gets
// which frame, in which protocol, and the notification flags.
#include <gtest/gtest.h>

#include "command_fixture.h"
#include "server/pubsub.h"

namespace latch::test {
namespace {

TEST(PubSubTest, NotifyFlagsParseAndPrintAsRedis) {
  EXPECT_EQ(NotifyFlagsToString(static_cast<uint32_t>(NotifyFlagsFromString("KA"))), "AK");
  EXPECT_EQ(NotifyFlagsToString(static_cast<uint32_t>(NotifyFlagsFromString("xEgm"))), "gxEm");
  EXPECT_EQ(NotifyFlagsToString(static_cast<uint32_t>(NotifyFlagsFromString("n$"))), "$n");
  EXPECT_EQ(NotifyFlagsFromString("zq"), -1);
  EXPECT_EQ(NotifyFlagsFromString(""), 0);
}

TEST(PubSubTest, KeyspaceAndKeyeventNotificationsReachPatternSubscribers) {
  TestServer ts;
  Connection listener(ts.server(), 2);
  listener.authenticated = true;
  EXPECT_EQ(ts.Run({"CONFIG", "SET", "notify-keyspace-events", "KEA"}), "+OK\r\n");
  ts.server().Dispatch(listener, std::vector<std::string_view>{"PSUBSCRIBE", "*"});
  Take(listener);
  EXPECT_EQ(ts.Run({"SET", "foo", "bar", "PX", "100000"}), "+OK\r\n");
  EXPECT_EQ(Take(listener),
            "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$18\r\n__keyspace@0__:foo\r\n$3\r\nset\r\n"
            "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$18\r\n__keyevent@0__:set\r\n$3\r\nfoo\r\n"
            "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$18\r\n__keyspace@0__:foo\r\n$6\r\nexpire\r\n"
            "*4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$21\r\n__keyevent@0__:expire\r\n$3\r\nfoo\r\n");
  // Off again: nothing.
  ts.Run({"CONFIG", "SET", "notify-keyspace-events", ""});
  ts.Run({"DEL", "foo"});
  EXPECT_EQ(Take(listener), "");
}

TEST(PubSubTest, ExpiryIsNotifiedWhenTheKeyIsRemoved) {
  TestServer ts;
  Connection listener(ts.server(), 2);
  listener.authenticated = true;
  ts.Run({"CONFIG", "SET", "notify-keyspace-events", "Ex"});
  ts.server().Dispatch(listener,
                       std::vector<std::string_view>{"SUBSCRIBE", "__keyevent@0__:expired"});
  Take(listener);
  ts.Run({"SET", "lock", "t", "PX", "50"});
  EXPECT_EQ(Take(listener), "");  // the grant is not an "expired" event
  ts.clock().Advance(51);
  ts.Run({"GET", "lock"});  // lazy expiry removes it: the event
  EXPECT_EQ(Take(listener),
            "*3\r\n$7\r\nmessage\r\n$22\r\n__keyevent@0__:expired\r\n$4\r\nlock\r\n");
}

TEST(PubSubTest, Resp3SubscribersGetPushFrames) {
  TestServer ts;
  Connection listener(ts.server(), 2);
  listener.authenticated = true;
  listener.resp = 3;
  ts.server().Dispatch(listener, std::vector<std::string_view>{"SUBSCRIBE", "ch"});
  EXPECT_EQ(Take(listener), ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
  EXPECT_EQ(ts.Run({"PUBLISH", "ch", "hi"}), ":1\r\n");
  EXPECT_EQ(Take(listener), ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n");
  ts.server().Dispatch(listener, std::vector<std::string_view>{"UNSUBSCRIBE"});
  EXPECT_EQ(Take(listener), ">3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:0\r\n");
  EXPECT_EQ(ts.Run({"PUBLISH", "ch", "hi"}), ":0\r\n");
}

}  // namespace
}  // namespace latch::test
