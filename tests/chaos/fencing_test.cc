// latch-chaos's token-order check (tools/chaos/fencing.h) on fabricated
// histories: it must find an inversion when there is one, and only then.
#include "tools/chaos/fencing.h"

#include <gtest/gtest.h>

#include <vector>

namespace latch::chaos {
namespace {

// A hold whose winning attempt started at `requested` ms and which had its
// token at `token_at` ms (the same clock as every other).
Hold At(int worker, int64_t requested, int64_t token_at, uint64_t token) {
  const Clock::time_point zero{};
  Hold h;
  h.worker = worker;
  h.requested = zero + Millis{requested};
  h.token_at = zero + Millis{token_at};
  h.granted = h.token_at;
  h.end = h.token_at + Millis{100};
  h.token = token;
  return h;
}

TEST(ChaosTokenOrder, IncreasingTokensPass) {
  std::vector<Hold> holds = {At(0, 0, 5, 10), At(1, 6, 9, 11), At(2, 20, 22, 40),
                             At(0, 30, 31, 41)};
  EXPECT_TRUE(FindTokenInversions(holds).empty());
}

TEST(ChaosTokenOrder, ALaterHoldWithASmallerOrEqualTokenIsFound) {
  // Worker 1 started after worker 0 had token 10, and got 7: the stale
  // holder's writes would win at the resource. Worker 2 repeats 10.
  std::vector<Hold> holds = {At(0, 0, 5, 10), At(1, 6, 8, 7), At(2, 9, 12, 10), At(3, 13, 14, 11)};
  auto found = FindTokenInversions(holds);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].later->worker, 1);
  EXPECT_EQ(found[0].earlier->worker, 0);
  EXPECT_EQ(found[1].later->worker, 2);
  EXPECT_EQ(found[1].earlier->token, 10u);
}

TEST(ChaosTokenOrder, ConcurrentAttemptsAreNotOrdered) {
  // Worker 1's winning attempt started before worker 0 had its token (they
  // overlapped): the guarantee says nothing about them, so neither order
  // of tokens is a violation. Holds without a token are not checked.
  std::vector<Hold> holds = {At(0, 0, 5, 10), At(1, 4, 8, 3), At(2, 50, 51, 0)};
  EXPECT_TRUE(FindTokenInversions(holds).empty());
}

}  // namespace
}  // namespace latch::chaos
