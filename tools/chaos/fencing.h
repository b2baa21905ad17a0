// latch-chaos --fence: the fencing-token check over the history of a run.
//
// With --fence every worker acquires with fencing tokens (RedLock's two
// steps, tools/redlock/redlock.h) and each hold records its token. The
// guarantee (docs/guide.md, "Fencing tokens for RedLock"): an acquire whose
// first request left after another holder had its token gets a larger one,
// as long as the nodes keep their counters — whatever the clocks and pauses
// do, and even when mutual exclusion itself was broken (quarantine never).
// So for every pair of holds A, B with B.requested > A.token_at, the check
// wants B.token > A.token; a pair where the later hold carries a token not
// larger is a token-order violation, reported apart from the overlaps.
#pragma once

#include <vector>

#include "tools/chaos/checker.h"

namespace latch::chaos {

// A later hold whose token is not larger than an earlier one's.
struct TokenInversion {
  const Hold* earlier;  // had its token before `later` sent its first request
  const Hold* later;
};

// Every hold B with a token not larger than the largest token of the holds
// that had theirs before B's winning attempt started, paired with that
// hold. Holds without a token (no --fence) are ignored. Pointers into
// `holds`, which must outlive the result.
std::vector<TokenInversion> FindTokenInversions(const std::vector<Hold>& holds);

// The report's lines: "token order violations: N", then one per inversion
// (times from t0).
// Also counts the holds that carried a token: with --fence every hold must
// (a grant without one is not a success), so "fenced holds: N of M" with N
// below M means the check saw less than the run did.
void PrintTokenOrder(const std::vector<Hold>& holds, const std::vector<TokenInversion>& inversions,
                     Clock::time_point t0);

}  // namespace latch::chaos
