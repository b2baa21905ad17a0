// Byte-exact tests for the reply writer (protocol/reply_writer.h), in RESP2
// and RESP3. The expected bytes are what redis-server 7.0.15 sends for the
// same kind of reply (checked on a raw socket: GET of a missing key, ZSCORE
// for doubles, HELLO 3 for maps, INFO for verbatim strings, ...).

#include "protocol/reply_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>

namespace latch::resp {
namespace {

using namespace std::string_literals;

std::string Write(int protocol, const std::function<void(ReplyWriter&)>& f) {
  std::string out;
  ReplyWriter w(&out, protocol);
  f(w);
  return out;
}

// Checks the bytes written in both protocols.
void ExpectBytes(const std::function<void(ReplyWriter&)>& f, const std::string& resp2,
                 const std::string& resp3) {
  EXPECT_EQ(Write(2, f), resp2) << "RESP2";
  EXPECT_EQ(Write(3, f), resp3) << "RESP3";
}

TEST(ReplyWriterTest, ProtocolVersion) {
  std::string out;
  EXPECT_FALSE(ReplyWriter(&out, 2).resp3());
  EXPECT_TRUE(ReplyWriter(&out, 3).resp3());
  EXPECT_EQ(ReplyWriter(&out, 3).buffer(), &out);
}

TEST(ReplyWriterTest, Ok) {
  ExpectBytes([](ReplyWriter& w) { w.Ok(); }, "+OK\r\n", "+OK\r\n");
}

TEST(ReplyWriterTest, Simple) {
  ExpectBytes([](ReplyWriter& w) { w.Simple("PONG"); }, "+PONG\r\n", "+PONG\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Simple(""); }, "+\r\n", "+\r\n");
}

TEST(ReplyWriterTest, Error) {
  ExpectBytes([](ReplyWriter& w) { w.Error("ERR syntax error"); }, "-ERR syntax error\r\n",
              "-ERR syntax error\r\n");
  // CR and LF inside the text would end the line early: they become spaces.
  ExpectBytes([](ReplyWriter& w) { w.Error("ERR unknown command 'a\r\nb', with\n\r"); },
              "-ERR unknown command 'a  b', with  \r\n", "-ERR unknown command 'a  b', with  \r\n");
}

TEST(ReplyWriterTest, ErrorSanitizingLeavesEarlierRepliesAlone) {
  // A bulk containing CRLF already in the buffer must not be touched.
  std::string out;
  ReplyWriter w(&out, 2);
  w.Bulk("a\r\nb");
  w.Error("ERR x\ny");
  w.Bulk("\n");
  EXPECT_EQ(out, "$4\r\na\r\nb\r\n-ERR x y\r\n$1\r\n\n\r\n");
}

TEST(ReplyWriterTest, Int) {
  ExpectBytes([](ReplyWriter& w) { w.Int(0); }, ":0\r\n", ":0\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Int(1); }, ":1\r\n", ":1\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Int(-2); }, ":-2\r\n", ":-2\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Int(1700000000123); }, ":1700000000123\r\n",
              ":1700000000123\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Int(std::numeric_limits<int64_t>::max()); },
              ":9223372036854775807\r\n", ":9223372036854775807\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Int(std::numeric_limits<int64_t>::min()); },
              ":-9223372036854775808\r\n", ":-9223372036854775808\r\n");
}

TEST(ReplyWriterTest, Bulk) {
  ExpectBytes([](ReplyWriter& w) { w.Bulk("hello"); }, "$5\r\nhello\r\n", "$5\r\nhello\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Bulk(""); }, "$0\r\n\r\n", "$0\r\n\r\n");
  // Binary safe: the length counts every byte, NUL and CRLF included.
  ExpectBytes([](ReplyWriter& w) { w.Bulk("a\0\r\nb"s); }, "$5\r\na\0\r\nb\r\n"s,
              "$5\r\na\0\r\nb\r\n"s);
  const std::string big(1000, 'x');
  ExpectBytes([&](ReplyWriter& w) { w.Bulk(big); }, "$1000\r\n" + big + "\r\n",
              "$1000\r\n" + big + "\r\n");
}

TEST(ReplyWriterTest, Null) {
  ExpectBytes([](ReplyWriter& w) { w.Null(); }, "$-1\r\n", "_\r\n");
  ExpectBytes([](ReplyWriter& w) { w.NullArray(); }, "*-1\r\n", "_\r\n");
}

TEST(ReplyWriterTest, Array) {
  ExpectBytes([](ReplyWriter& w) { w.Array(0); }, "*0\r\n", "*0\r\n");
  ExpectBytes(
      [](ReplyWriter& w) {
        w.Array(3);
        w.Bulk("a");
        w.Int(1);
        w.Null();
      },
      "*3\r\n$1\r\na\r\n:1\r\n$-1\r\n", "*3\r\n$1\r\na\r\n:1\r\n_\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Array(12345); }, "*12345\r\n", "*12345\r\n");
}

TEST(ReplyWriterTest, MapFlattensInResp2) {
  ExpectBytes([](ReplyWriter& w) { w.Map(0); }, "*0\r\n", "%0\r\n");
  // The start of HELLO's reply, as redis-server sends it.
  ExpectBytes(
      [](ReplyWriter& w) {
        w.Map(2);
        w.Bulk("server");
        w.Bulk("redis");
        w.Bulk("proto");
        w.Int(3);
      },
      "*4\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:3\r\n",
      "%2\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:3\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Map(7); }, "*14\r\n", "%7\r\n");
}

TEST(ReplyWriterTest, Set) {
  ExpectBytes([](ReplyWriter& w) { w.Set(0); }, "*0\r\n", "~0\r\n");
  ExpectBytes(
      [](ReplyWriter& w) {
        w.Set(2);
        w.Bulk("x");
        w.Bulk("y");
      },
      "*2\r\n$1\r\nx\r\n$1\r\ny\r\n", "~2\r\n$1\r\nx\r\n$1\r\ny\r\n");
}

TEST(ReplyWriterTest, Push) {
  ExpectBytes(
      [](ReplyWriter& w) {
        w.Push(3);
        w.Bulk("message");
        w.Bulk("ch");
        w.Bulk("hi");
      },
      "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
      ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n");
}

TEST(ReplyWriterTest, Double) {
  // Redis 7.0 formats doubles with %.17g (ZSCORE of 0.1 is
  // "0.10000000000000001") and spells infinities "inf" / "-inf".
  ExpectBytes([](ReplyWriter& w) { w.Double(1.5); }, "$3\r\n1.5\r\n", ",1.5\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(3); }, "$1\r\n3\r\n", ",3\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(0); }, "$1\r\n0\r\n", ",0\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(-2.25); }, "$5\r\n-2.25\r\n", ",-2.25\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(0.1); }, "$19\r\n0.10000000000000001\r\n",
              ",0.10000000000000001\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(1e300); }, "$23\r\n1.0000000000000001e+300\r\n",
              ",1.0000000000000001e+300\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(std::numeric_limits<double>::infinity()); },
              "$3\r\ninf\r\n", ",inf\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Double(-std::numeric_limits<double>::infinity()); },
              "$4\r\n-inf\r\n", ",-inf\r\n");
}

TEST(ReplyWriterTest, Bool) {
  ExpectBytes([](ReplyWriter& w) { w.Bool(true); }, ":1\r\n", "#t\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Bool(false); }, ":0\r\n", "#f\r\n");
}

TEST(ReplyWriterTest, Verbatim) {
  // RESP3: the length covers "txt:" and the text. RESP2: a plain bulk.
  ExpectBytes([](ReplyWriter& w) { w.Verbatim("txt", "hello"); }, "$5\r\nhello\r\n",
              "=9\r\ntxt:hello\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Verbatim("txt", "# Server\r\nx:1\r\n"); },
              "$15\r\n# Server\r\nx:1\r\n\r\n", "=19\r\ntxt:# Server\r\nx:1\r\n\r\n");
  ExpectBytes([](ReplyWriter& w) { w.Verbatim("mkd", ""); }, "$0\r\n\r\n", "=4\r\nmkd:\r\n");
}

TEST(ReplyWriterTest, AppendsToTheCallersBuffer) {
  // Every reply produced by one read goes into one buffer, in order.
  std::string out = "+earlier\r\n";
  ReplyWriter w(&out, 3);
  w.Ok();
  w.Int(7);
  w.Null();
  w.Map(1);
  w.Simple("k");
  w.Set(1);
  w.Double(2.5);
  w.Bool(false);
  w.Verbatim("txt", "v");
  w.Error("ERR e");
  EXPECT_EQ(out,
            "+earlier\r\n+OK\r\n:7\r\n_\r\n%1\r\n+k\r\n~1\r\n,2.5\r\n#f\r\n=5\r\ntxt:v\r\n"
            "-ERR e\r\n");
}

TEST(ReplyWriterTest, NestedAggregates) {
  ExpectBytes(
      [](ReplyWriter& w) {
        w.Array(2);
        w.Map(1);
        w.Bulk("k");
        w.Set(2);
        w.Int(1);
        w.Bool(true);
        w.NullArray();
      },
      "*2\r\n*2\r\n$1\r\nk\r\n*2\r\n:1\r\n:1\r\n*-1\r\n",
      "*2\r\n%1\r\n$1\r\nk\r\n~2\r\n:1\r\n#t\r\n_\r\n");
}

}  // namespace
}  // namespace latch::resp
