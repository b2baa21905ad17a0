// Tests for the client-side reply parser (protocol/reply_parser.h): it must
// read back everything the reply writer produces in both protocols, wait for
// more bytes on a partial reply, and reject garbage without trusting the
// lengths it declares.

#include "protocol/reply_parser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "protocol/reply_writer.h"

namespace latch::resp {
namespace {

using namespace std::string_literals;
using Type = Reply::Type;

// Builders for expected replies.
Reply Make(Type t, std::string str = "", int64_t integer = 0, std::vector<Reply> elements = {}) {
  Reply r;
  r.type = t;
  r.str = std::move(str);
  r.integer = integer;
  r.elements = std::move(elements);
  return r;
}
Reply Simple(std::string s) {
  return Make(Type::kSimple, std::move(s));
}
Reply Err(std::string s) {
  return Make(Type::kError, std::move(s));
}
Reply Int(int64_t v) {
  return Make(Type::kInteger, "", v);
}
Reply Bulk(std::string s) {
  return Make(Type::kBulk, std::move(s));
}
Reply Nil() {
  return Make(Type::kNull);
}
Reply Arr(std::vector<Reply> e) {
  return Make(Type::kArray, "", 0, std::move(e));
}
Reply MapOf(std::vector<Reply> e) {
  return Make(Type::kMap, "", 0, std::move(e));
}
Reply SetOf(std::vector<Reply> e) {
  return Make(Type::kSet, "", 0, std::move(e));
}
Reply PushOf(std::vector<Reply> e) {
  return Make(Type::kPush, "", 0, std::move(e));
}
Reply Dbl(std::string s) {
  return Make(Type::kDouble, std::move(s));
}
Reply Boolean(bool b) {
  return Make(Type::kBoolean, "", b ? 1 : 0);
}
Reply Verb(std::string s) {
  return Make(Type::kVerbatim, std::move(s));
}
Reply BigNum(std::string s) {
  return Make(Type::kBigNumber, std::move(s));
}

// Structural equality: only the fields that matter for the type.
bool Same(const Reply& a, const Reply& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case Type::kNull:
      return true;
    case Type::kInteger:
    case Type::kBoolean:
      return a.integer == b.integer;
    case Type::kArray:
    case Type::kMap:
    case Type::kSet:
    case Type::kPush:
      if (a.elements.size() != b.elements.size()) return false;
      for (size_t i = 0; i < a.elements.size(); ++i) {
        if (!Same(a.elements[i], b.elements[i])) return false;
      }
      return true;
    default:
      return a.str == b.str;
  }
}

#define EXPECT_SAME(got, want) \
  EXPECT_TRUE(Same(got, want)) << "got " << (got).ToString() << "\nwant " << (want).ToString()

struct Parsed {
  ReplyStatus status;
  Reply reply;
  size_t consumed = 0;
};

Parsed Parse(std::string_view in) {
  Parsed p;
  p.status = ParseReply(in, &p.reply, &p.consumed);
  return p;
}

// A reply as the writer produces it, with what the parser must read back in
// each protocol.
struct Case {
  std::string name;
  std::function<void(ReplyWriter&)> write;
  Reply resp2;
  Reply resp3;
};

std::vector<Case> Cases() {
  const double inf = std::numeric_limits<double>::infinity();
  return {
      {"ok", [](ReplyWriter& w) { w.Ok(); }, Simple("OK"), Simple("OK")},
      {"simple", [](ReplyWriter& w) { w.Simple("PONG"); }, Simple("PONG"), Simple("PONG")},
      {"empty simple", [](ReplyWriter& w) { w.Simple(""); }, Simple(""), Simple("")},
      {"error", [](ReplyWriter& w) { w.Error("ERR bad\r\nthing"); }, Err("ERR bad  thing"),
       Err("ERR bad  thing")},
      {"zero", [](ReplyWriter& w) { w.Int(0); }, Int(0), Int(0)},
      {"negative", [](ReplyWriter& w) { w.Int(-2); }, Int(-2), Int(-2)},
      {"int64 min", [](ReplyWriter& w) { w.Int(std::numeric_limits<int64_t>::min()); },
       Int(std::numeric_limits<int64_t>::min()), Int(std::numeric_limits<int64_t>::min())},
      {"int64 max", [](ReplyWriter& w) { w.Int(std::numeric_limits<int64_t>::max()); },
       Int(std::numeric_limits<int64_t>::max()), Int(std::numeric_limits<int64_t>::max())},
      {"bulk", [](ReplyWriter& w) { w.Bulk("token-1"); }, Bulk("token-1"), Bulk("token-1")},
      {"empty bulk", [](ReplyWriter& w) { w.Bulk(""); }, Bulk(""), Bulk("")},
      {"binary bulk", [](ReplyWriter& w) { w.Bulk("\r\n\0$3\r\n"s); }, Bulk("\r\n\0$3\r\n"s),
       Bulk("\r\n\0$3\r\n"s)},
      {"null", [](ReplyWriter& w) { w.Null(); }, Nil(), Nil()},
      {"null array", [](ReplyWriter& w) { w.NullArray(); }, Nil(), Nil()},
      {"empty array", [](ReplyWriter& w) { w.Array(0); }, Arr({}), Arr({})},
      {"array",
       [](ReplyWriter& w) {
         w.Array(3);
         w.Bulk("a");
         w.Int(1);
         w.Null();
       },
       Arr({Bulk("a"), Int(1), Nil()}), Arr({Bulk("a"), Int(1), Nil()})},
      {"map",
       [](ReplyWriter& w) {
         w.Map(2);
         w.Bulk("proto");
         w.Int(3);
         w.Bulk("flags");
         w.Array(2);
         w.Bool(true);
         w.Double(1.5);
       },
       Arr({Bulk("proto"), Int(3), Bulk("flags"), Arr({Int(1), Bulk("1.5")})}),
       MapOf({Bulk("proto"), Int(3), Bulk("flags"), Arr({Boolean(true), Dbl("1.5")})})},
      {"empty map", [](ReplyWriter& w) { w.Map(0); }, Arr({}), MapOf({})},
      {"set",
       [](ReplyWriter& w) {
         w.Set(2);
         w.Bulk("x");
         w.Bulk("y");
       },
       Arr({Bulk("x"), Bulk("y")}), SetOf({Bulk("x"), Bulk("y")})},
      {"push",
       [](ReplyWriter& w) {
         w.Push(3);
         w.Bulk("message");
         w.Bulk("ch");
         w.Bulk("hi");
       },
       Arr({Bulk("message"), Bulk("ch"), Bulk("hi")}),
       PushOf({Bulk("message"), Bulk("ch"), Bulk("hi")})},
      {"double", [](ReplyWriter& w) { w.Double(0.1); }, Bulk("0.10000000000000001"),
       Dbl("0.10000000000000001")},
      {"inf", [=](ReplyWriter& w) { w.Double(inf); }, Bulk("inf"), Dbl("inf")},
      {"-inf", [=](ReplyWriter& w) { w.Double(-inf); }, Bulk("-inf"), Dbl("-inf")},
      {"true", [](ReplyWriter& w) { w.Bool(true); }, Int(1), Boolean(true)},
      {"false", [](ReplyWriter& w) { w.Bool(false); }, Int(0), Boolean(false)},
      {"verbatim", [](ReplyWriter& w) { w.Verbatim("txt", "# Server\r\nx:1\r\n"); },
       Bulk("# Server\r\nx:1\r\n"), Verb("txt:# Server\r\nx:1\r\n")},
      {"nested",
       [](ReplyWriter& w) {
         w.Array(2);
         w.Map(1);
         w.Bulk("k");
         w.Set(1);
         w.Push(2);
         w.Verbatim("txt", "v");
         w.Array(1);
         w.NullArray();
         w.Array(0);
       },
       Arr({Arr({Bulk("k"), Arr({Arr({Bulk("v"), Arr({Nil()})})})}), Arr({})}),
       Arr({MapOf({Bulk("k"), SetOf({PushOf({Verb("txt:v"), Arr({Nil()})})})}), Arr({})})},
  };
}

std::string Written(const Case& c, int protocol) {
  std::string out;
  ReplyWriter w(&out, protocol);
  c.write(w);
  return out;
}

TEST(ReplyParserTest, RoundTripsEverythingTheWriterProduces) {
  for (int protocol : {2, 3}) {
    for (const Case& c : Cases()) {
      SCOPED_TRACE(c.name + " RESP" + std::to_string(protocol));
      const std::string bytes = Written(c, protocol);
      Parsed p = Parse(bytes);
      ASSERT_EQ(p.status, ReplyStatus::kOk);
      EXPECT_EQ(p.consumed, bytes.size());
      EXPECT_SAME(p.reply, protocol == 2 ? c.resp2 : c.resp3);
    }
  }
}

TEST(ReplyParserTest, ParsesPipelinedRepliesOneAfterAnother) {
  for (int protocol : {2, 3}) {
    SCOPED_TRACE(protocol);
    std::string stream;
    std::vector<Reply> want;
    for (const Case& c : Cases()) {
      stream += Written(c, protocol);
      want.push_back(protocol == 2 ? c.resp2 : c.resp3);
    }
    std::string_view rest = stream;
    for (const Reply& w : want) {
      Parsed p = Parse(rest);
      ASSERT_EQ(p.status, ReplyStatus::kOk);
      EXPECT_SAME(p.reply, w);
      rest.remove_prefix(p.consumed);
    }
    EXPECT_TRUE(rest.empty());
    EXPECT_EQ(Parse(rest).status, ReplyStatus::kIncomplete);
  }
}

TEST(ReplyParserTest, EveryStrictPrefixIsIncomplete) {
  for (int protocol : {2, 3}) {
    for (const Case& c : Cases()) {
      SCOPED_TRACE(c.name + " RESP" + std::to_string(protocol));
      const std::string bytes = Written(c, protocol);
      for (size_t n = 0; n < bytes.size(); ++n) {
        // Copy the prefix so a read past its end would be caught by ASan.
        const std::string prefix = bytes.substr(0, n);
        Reply r;
        size_t consumed = 12345;
        EXPECT_EQ(ParseReply(prefix, &r, &consumed), ReplyStatus::kIncomplete) << "prefix " << n;
        EXPECT_EQ(consumed, 12345u) << "consumed must be left alone";
      }
    }
  }
}

TEST(ReplyParserTest, WireFormsTheWriterDoesNotProduce) {
  struct Wire {
    std::string bytes;
    Reply want;
  };
  const std::vector<Wire> wires{
      {"(3492890328409238509324850943850943825024385\r\n",
       BigNum("3492890328409238509324850943850943825024385")},
      {"!21\r\nSYNTAX invalid syntax\r\n", Err("SYNTAX invalid syntax")},
      {"$-1\r\n", Nil()},
      {"*-1\r\n", Nil()},
      {"_\r\n", Nil()},
      {",-1.5e-10\r\n", Dbl("-1.5e-10")},
      {"%1\r\n+a\r\n:1\r\n", MapOf({Simple("a"), Int(1)})},
      {"*2\r\n*1\r\n:1\r\n*0\r\n", Arr({Arr({Int(1)}), Arr({})})},
  };
  for (const Wire& w : wires) {
    SCOPED_TRACE(w.bytes);
    Parsed p = Parse(w.bytes + "+next\r\n");
    ASSERT_EQ(p.status, ReplyStatus::kOk);
    EXPECT_EQ(p.consumed, w.bytes.size());
    EXPECT_SAME(p.reply, w.want);
  }
}

TEST(ReplyParserTest, MalformedInput) {
  const std::vector<std::string> bad{
      "?\r\n",                      // unknown type byte
      "hello\r\n",                  // not RESP at all
      ":abc\r\n",                   // integer that is not a number
      ":1.5\r\n",                   //
      ":01\r\n",                    //
      ":\r\n",                      //
      ":99999999999999999999\r\n",  // overflows int64
      "$abc\r\n",                   // bad lengths
      "$-2\r\n",                    //
      "$\r\n",                      //
      "*-2\r\n",                    //
      "*x\r\n",                     //
      "%-5\r\n",                    //
      "$18446744073709551615\r\n",  //
      "#x\r\n",                     // boolean other than t/f
      "#\r\n",                      //
      "#tt\r\n",                    //
      "+OK\rX",                     // CR not followed by LF
      "*2\r\n:1\r\n?\r\n",          // bad element inside an aggregate
      "*1\r\n*1\r\n#maybe\r\n",     //
      "%1\r\n+k\r\n:1\rnope\r\n",   //
  };
  for (const std::string& b : bad) {
    SCOPED_TRACE(b);
    EXPECT_EQ(Parse(b).status, ReplyStatus::kMalformed);
  }
}

TEST(ReplyParserTest, DeepNestingIsBoundedNotAStackOverflow) {
  std::string shallow;
  for (int i = 0; i < 32; ++i) shallow += "*1\r\n";
  shallow += ":7\r\n";
  Parsed ok = Parse(shallow);
  ASSERT_EQ(ok.status, ReplyStatus::kOk);
  EXPECT_EQ(ok.consumed, shallow.size());
  const Reply* r = &ok.reply;
  for (int i = 0; i < 32; ++i) {
    ASSERT_EQ(r->type, Type::kArray);
    ASSERT_EQ(r->elements.size(), 1u);
    r = &r->elements[0];
  }
  EXPECT_SAME(*r, Int(7));

  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "*1\r\n";
  deep += ":7\r\n";
  EXPECT_EQ(Parse(deep).status, ReplyStatus::kMalformed);
}

TEST(ReplyParserTest, DoesNotTrustHugeDeclaredLengths) {
  // A hostile or broken server may declare any length: the parser must wait
  // for the bytes rather than allocate for them up front.
  const std::vector<std::string> huge{
      "$9223372036854775807\r\nabc",    "=9223372036854775807\r\ntxt:",
      "!9223372036854775807\r\nERR",    "*9223372036854775807\r\n:1\r\n:2\r\n",
      "%9223372036854775807\r\n+k\r\n", "%4611686018427387904\r\n+k\r\n:1\r\n",
      "~2147483648\r\n:1\r\n",          ">2147483647\r\n",
      "*2\r\n$9223372036854775806\r\n",
  };
  for (const std::string& h : huge) {
    SCOPED_TRACE(h);
    EXPECT_EQ(Parse(h).status, ReplyStatus::kIncomplete);
  }
}

TEST(ReplyParserTest, BulkLengthIsByteCountNotLineBased) {
  // The payload may contain CRLF and even look like more replies.
  Parsed p = Parse("$7\r\n+OK\r\n:1\r\n:5\r\n");
  ASSERT_EQ(p.status, ReplyStatus::kOk);
  EXPECT_SAME(p.reply, Bulk("+OK\r\n:1"));
  EXPECT_EQ(p.consumed, 13u);
}

TEST(ReplyParserTest, Predicates) {
  EXPECT_TRUE(Parse("-ERR x\r\n").reply.is_error());
  EXPECT_TRUE(Parse("!1\r\nE\r\n").reply.is_error());
  EXPECT_FALSE(Parse("+ERR\r\n").reply.is_error());
  EXPECT_TRUE(Parse("$-1\r\n").reply.is_null());
  EXPECT_TRUE(Parse("_\r\n").reply.is_null());
  EXPECT_FALSE(Parse("$0\r\n\r\n").reply.is_null());
  EXPECT_FALSE(Parse("*0\r\n").reply.is_null());
}

TEST(ReplyParserTest, ToStringIsCompactAndReadable) {
  EXPECT_EQ(Parse("+OK\r\n").reply.ToString(), "OK");
  EXPECT_EQ(Parse("-ERR no\r\n").reply.ToString(), "(error) ERR no");
  EXPECT_EQ(Parse(":-3\r\n").reply.ToString(), "(integer) -3");
  EXPECT_EQ(Parse("$3\r\nabc\r\n").reply.ToString(), "\"abc\"");
  EXPECT_EQ(Parse("_\r\n").reply.ToString(), "(nil)");
  EXPECT_EQ(Parse("#t\r\n").reply.ToString(), "(true)");
  EXPECT_EQ(Parse("#f\r\n").reply.ToString(), "(false)");
  EXPECT_EQ(Parse(",1.5\r\n").reply.ToString(), "\"1.5\"");
  EXPECT_EQ(Parse("*3\r\n$1\r\na\r\n:1\r\n*2\r\n$-1\r\n*0\r\n").reply.ToString(),
            "[\"a\", (integer) 1, [(nil), []]]");
  EXPECT_EQ(Parse("%1\r\n+k\r\n~1\r\n:2\r\n").reply.ToString(), "[k, [(integer) 2]]");
}

}  // namespace
}  // namespace latch::resp
