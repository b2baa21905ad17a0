// The pipeline prefetch (server/prefetch.h): which requests it looks at, and
// that looking changes nothing (no rehash step, no expiry, no access clock).
// Whether it saves time is the benchmark's business (docs/bench), not a
// test's; that it never reads past the bytes it is given, ASan's under
// fuzz_commands, which runs it ahead of every request.
#include "server/prefetch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/command.h"
#include "server/keyspace.h"
#include "test_server.h"

namespace latch {
namespace {

std::string Resp(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

std::string Repeat(const std::vector<std::string>& args, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += Resp(args);
  return out;
}

size_t Warm(const std::string& input, const Keyspace& ks) {
  const PipelinePrefetch::Result r = PipelinePrefetch::Run(input, ks, CommandRegistry::Get());
  EXPECT_LE(r.lookups, r.requests);
  return r.lookups;
}

TEST(PrefetchTest, LooksAtUpToSixteenCompleteRequestsWithAKey) {
  Keyspace ks;
  EXPECT_EQ(Warm(Repeat({"GET", "k"}, 3), ks), 3u);
  EXPECT_EQ(Warm(Repeat({"HSET", "h", "f", "v"}, 40), ks), PipelinePrefetch::kMaxRequests);
  // A lone request has nothing to overlap with.
  EXPECT_EQ(Warm(Resp({"GET", "k"}), ks), 0u);
  // An incomplete request ends the look-ahead; so does anything not a
  // multibulk request (inline, a protocol error: the parser's business).
  std::string cut = Repeat({"GET", "k"}, 2) + Resp({"GET", "k"});
  cut.pop_back();
  EXPECT_EQ(Warm(cut, ks), 2u);
  EXPECT_EQ(Warm(Repeat({"GET", "k"}, 2) + "GET k\r\n" + Repeat({"GET", "k"}, 2), ks), 2u);
  EXPECT_EQ(Warm("PING\r\n" + Repeat({"GET", "k"}, 4), ks), 0u);
  EXPECT_EQ(Warm(Resp({"GET", "k"}) + "*2\r\n$3\r\nGET\r\n$99\r\nk\r\n", ks), 0u);
  // Only requests with a key count: PING and an unknown command have none,
  // EVALSHA's first key comes after its count.
  EXPECT_EQ(Warm(Repeat({"PING"}, 4) + Repeat({"NOSUCH", "k"}, 2) + Resp({"GET", "k"}), ks), 1u);
  // The connection warms the next requests once those looked at have run.
  EXPECT_EQ(PipelinePrefetch::Run(Repeat({"PING"}, 4) + Repeat({"GET", "k"}, 20), ks,
                                  CommandRegistry::Get())
                .requests,
            PipelinePrefetch::kMaxRequests);
  EXPECT_EQ(Warm(Repeat({"EVALSHA", std::string(40, 'a'), "1", "k", "v"}, 5), ks), 5u);
  EXPECT_EQ(Warm(Repeat({"set", "k", "v"}, 2) + Repeat({"GET"}, 2), ks), 2u);
  // Counts and lengths of one, two, three and more digits; more than ten
  // is not a length (the parser will say what it is).
  EXPECT_EQ(
      Warm(Repeat({"GET", std::string(7, 'k')}, 2) + Repeat({"GET", std::string(42, 'k')}, 2) +
               Repeat({"GET", std::string(420, 'k')}, 2) +
               Repeat({"GET", std::string(70000, 'k')}, 2),
           ks),
      8u);
  EXPECT_EQ(Warm(Repeat({"GET", "k"}, 2) + "*2\r\n$3\r\nGET\r\n$00000000001\r\nk\r\n", ks), 2u);
  EXPECT_EQ(Warm(Repeat({"GET", "k"}, 2) + "*2\r\n$3\r\nGET\r\n$-1\r\n", ks), 2u);
  EXPECT_EQ(Warm(Repeat({"GET", "k"}, 2) + "*2\r\n$3\r\nGET\r\n$1\r", ks), 2u);
  EXPECT_EQ(Warm("*1\r\n$4\r\nPING\r\n*0\r\n" + Repeat({"GET", "k"}, 2), ks), 0u);
  // A request too long to be worth walking twice ends it.
  std::vector<std::string> long_request = {"MSET"};
  for (int i = 0; i < 40; ++i) long_request.insert(long_request.end(), {"k", "v"});
  EXPECT_EQ(Warm(Repeat({"GET", "k"}, 2) + Resp(long_request) + Repeat({"GET", "k"}, 2), ks), 2u);
}

TEST(PrefetchTest, LookingChangesNothing) {
  Keyspace ks;
  int expired = 0;
  ks.set_expiry_listener([&](std::string_view) { ++expired; });
  // Stop while the table is growing, with a key whose deadline has passed.
  size_t i = 0;
  for (; !ks.RehashStep(0) || i < 1000; ++i) ks.Set("key:" + std::to_string(i), "v", kNoDeadline);
  ks.Set("gone", "v", 5);
  ASSERT_TRUE(ks.RehashStep(0));
  const uint64_t moves = ks.rehash_moves();
  const size_t size = ks.size();

  std::string input;
  for (int k = 0; k < 16; ++k) input += Resp({"GET", "key:" + std::to_string(k * 7)});
  input += Resp({"GET", "gone"});
  EXPECT_EQ(Warm(input, ks), 16u);
  EXPECT_EQ(Warm(Repeat({"GET", "gone"}, 2), ks), 2u);
  EXPECT_EQ(ks.rehash_moves(), moves);
  EXPECT_EQ(ks.size(), size);
  EXPECT_EQ(expired, 0);
  // PeekQuiet finds keys in either table, expired or not, and nothing else.
  for (size_t k = 0; k < i; k += 97) {
    const std::string key = "key:" + std::to_string(k);
    const Keyspace::Entry* e = ks.PeekQuiet(key, Keyspace::HashOf(key));
    ASSERT_NE(e, nullptr) << key;
    EXPECT_EQ(e->key(), key);
  }
  EXPECT_NE(ks.PeekQuiet("gone", Keyspace::HashOf("gone")), nullptr);
  EXPECT_EQ(ks.PeekQuiet("absent", Keyspace::HashOf("absent")), nullptr);
  EXPECT_EQ(ks.rehash_moves(), moves);
  EXPECT_EQ(ks.size(), size);
}

TEST(PrefetchTest, WarmsMembersOfLargeCollectionsWithoutChangingThem) {
  test::TestServer ts;
  // 1,030 elements: their tables have just begun to double, so a rehash
  // step (which Dict::Find takes, and the prefetch must not) would change
  // the order HGETALL and SMEMBERS walk them in.
  for (int k = 0; k < 1030; ++k) {
    ts.Run({"HSET", "h", "f" + std::to_string(k), "v"});
    ts.Run({"SADD", "s", "m" + std::to_string(k)});
    ts.Run({"ZADD", "z", std::to_string(k), "m" + std::to_string(k)});
  }
  ts.Run({"HSET", "small", "f", "v"});
  std::string input;
  for (int k = 0; k < 4; ++k) {
    input += Resp({"HINCRBY", "h", "f" + std::to_string(k), "1"});
    input += Resp({"SISMEMBER", "s", "m" + std::to_string(k)});
    input += Resp({"ZADD", "z", "1", "m" + std::to_string(k)});
    input += Resp({"HGET", "small", "f"});
  }
  const std::vector<std::vector<std::string>> dumps = {
      {"HGETALL", "h"}, {"SMEMBERS", "s"}, {"ZRANGE", "z", "0", "-1", "WITHSCORES"}};
  std::vector<std::string> before;
  for (const auto& d : dumps) before.push_back(ts.Run(d));
  EXPECT_EQ(Warm(input, ts.server().store().keyspace()), 16u);
  for (size_t d = 0; d < dumps.size(); ++d)
    EXPECT_TRUE(ts.Run(dumps[d]) == before[d]) << dumps[d][0];
  EXPECT_EQ(ts.Run({"OBJECT", "ENCODING", "h"}), "$9\r\nhashtable\r\n");
  EXPECT_EQ(ts.Run({"OBJECT", "ENCODING", "z"}), "$8\r\nskiplist\r\n");
}

}  // namespace
}  // namespace latch
