#include "tools/chaos/fencing.h"

#include <algorithm>
#include <cstdio>

namespace latch::chaos {

std::vector<TokenInversion> FindTokenInversions(const std::vector<Hold>& holds) {
  // Holds in the order they got their tokens, and in the order their
  // winning attempts started; one sweep keeps the largest token known
  // before each start. O(n log n), so long runs stay cheap.
  std::vector<const Hold*> by_token_at, by_request;
  for (const Hold& h : holds) {
    if (h.token == 0) continue;
    by_token_at.push_back(&h);
    by_request.push_back(&h);
  }
  std::sort(by_token_at.begin(), by_token_at.end(),
            [](const Hold* a, const Hold* b) { return a->token_at < b->token_at; });
  std::sort(by_request.begin(), by_request.end(),
            [](const Hold* a, const Hold* b) { return a->requested < b->requested; });
  std::vector<TokenInversion> out;
  const Hold* best = nullptr;  // the largest token known so far
  size_t next = 0;
  for (const Hold* b : by_request) {
    while (next < by_token_at.size() && by_token_at[next]->token_at < b->requested) {
      if (best == nullptr || by_token_at[next]->token > best->token) best = by_token_at[next];
      ++next;
    }
    if (best != nullptr && b->token <= best->token) out.push_back({best, b});
  }
  return out;
}

void PrintTokenOrder(const std::vector<Hold>& holds, const std::vector<TokenInversion>& inversions,
                     Clock::time_point t0) {
  int k = 0;
  for (const TokenInversion& v : inversions) {
    std::printf(
        "token violation %d: worker %d's hold from %.3f s (requested at %.3f s) carries token "
        "%llu, not above worker %d's token %llu, known since %.3f s\n",
        ++k, v.later->worker, Secs(v.later->granted - t0), Secs(v.later->requested - t0),
        static_cast<unsigned long long>(v.later->token), v.earlier->worker,
        static_cast<unsigned long long>(v.earlier->token), Secs(v.earlier->token_at - t0));
  }
  const size_t fenced = static_cast<size_t>(
      std::count_if(holds.begin(), holds.end(), [](const Hold& h) { return h.token != 0; }));
  std::printf("fenced holds: %zu of %zu\n", fenced, holds.size());
  std::printf("token order violations: %zu\n", inversions.size());
}

}  // namespace latch::chaos
