#include "tools/chaos/workers.h"

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include "protocol/request_writer.h"
#include "tools/chaos/schedule.h"
#include "tools/redlock/node_set.h"
#include "tools/redlock/redlock.h"

namespace latch::chaos {

WorkerStats& WorkerStats::operator+=(const WorkerStats& o) {
  acquisitions += o.acquisitions;
  attempts += o.attempts;
  contended += o.contended;
  quarantine_answers += o.quarantine_answers;
  misconf_answers += o.misconf_answers;
  extends_ok += o.extends_ok;
  extends_failed += o.extends_failed;
  expired_before_use += o.expired_before_use;
  past_validity += o.past_validity;
  return *this;
}

void GrantSignal::Notify() {
  {
    std::lock_guard<std::mutex> g(mu_);
    ++count_;
  }
  cv_.notify_all();
}

uint64_t GrantSignal::count() {
  std::lock_guard<std::mutex> g(mu_);
  return count_;
}

bool GrantSignal::WaitPast(uint64_t seen, Clock::time_point until) {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_until(lk, until, [&] { return count_ > seen || g_interrupted; }) && count_ > seen;
}

void Worker(Shared& sh, int id) {
  const Options& o = *sh.o;
  const Millis ttl = o.ttl;
  // Hold times come from the seed too (their interleaving does not).
  std::mt19937_64 rng(o.seed * 1'000'003 + static_cast<uint64_t>(id));
  WorkerStats st;
  latch::RedLockOptions ro;
  // Short retry pauses: several workers contend all the time.
  ro.retry_delay_min = Millis{10};
  ro.retry_delay_max = Millis{60};
  // Which nodes granted the lock: the last acquire round's yes answers.
  uint32_t granted_by = 0;
  ro.observer = [&st, &granted_by](const latch::RoundReport& r) {
    if (r.success && std::string_view(r.op) == "acquire") {
      granted_by = 0;
      for (size_t i = 0; i < r.nodes.size(); ++i) {
        if (r.nodes[i].answer == latch::NodeAnswer::kYes) granted_by |= 1u << i;
      }
    }
    for (const latch::NodeOutcome& n : r.nodes) {
      st.quarantine_answers += n.answer == latch::NodeAnswer::kQuarantined;
      st.misconf_answers +=
          n.answer == latch::NodeAnswer::kError && n.text.find("MISCONF") != std::string::npos;
    }
  };
  ro.fence = o.fence;
  ro.user = o.connect.user;
  ro.password = o.connect.password;
  ro.tls = o.tls;
  latch::RedLock rl(sh.endpoints, ro);
  // --fence: a node has one token counter for all its keys, so other locks
  // granted on some nodes move their counters apart — what makes RedLock's
  // second step, raising the floor, necessary. Before each turn a worker
  // takes a few fenced grants of another key on one node (a round of their
  // own, short: a paused or quarantined node just refuses them).
  std::unique_ptr<latch::NodeSet> others;
  if (o.fence) others = o.Connect(sh.endpoints);
  const std::string other_key = std::string(kKey) + ":other:" + std::to_string(id);
  auto sleep = [](int64_t ms) { std::this_thread::sleep_for(Millis{ms}); };
  const int64_t t = ttl.count();

  while (!g_interrupted) {
    auto now = Clock::now();
    if (now >= sh.end) break;
    auto wait = std::min(std::chrono::duration_cast<Millis>(sh.end - now), 2 * ttl);
    if (others) {
      const size_t n = sh.endpoints.size();
      std::vector<bool> which(n, false);
      which[static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(n) - 1))] = true;
      const int64_t k = Uniform(rng, 1, 20);
      std::string request;
      for (int64_t i = 0; i < k; ++i) {
        latch::resp::AppendRequest(request, {"SET", other_key, "x", "PX", "100", "FENCE"});
      }
      others->Round(request, static_cast<size_t>(k), std::chrono::milliseconds(50), which);
    }
    latch::AcquireResult res = rl.acquire(kKey, ttl, wait);
    st.attempts += res.attempts;
    st.contended += res.contended;
    if (!res) continue;
    latch::Lock& lock = *res.lock;
    Hold h;
    h.worker = id;
    h.granted = Clock::now();
    h.grants = lock.grants();
    h.granted_by = granted_by;
    h.token = lock.fence_token();
    h.requested = lock.requested_at();
    h.token_at = lock.acquired_at();
    sh.grants.Notify();

    int64_t roll = Uniform(rng, 0, 99);
    if (roll < 15) {
      sleep(Uniform(rng, 0, t / 4));  // a quick critical section
    } else if (roll < 65) {
      sleep(Uniform(rng, t / 4, t * 9 / 10));
    } else if (roll < 85) {
      // Work that needs more time: extend once, midway.
      sleep(Uniform(rng, t / 4, t / 2));
      if (lock.extend(ttl) == latch::Lock::ExtendResult::kExtended) {
        ++st.extends_ok;
        h.extended = true;
      } else {
        ++st.extends_failed;
      }
      sleep(Uniform(rng, t / 4, t * 9 / 10));
    } else {
      // A GC pause: the holder wakes up after its validity ended. Its
      // claim ends with the validity; the check must not count the rest.
      sleep(Uniform(rng, t * 11 / 10, t * 16 / 10));
    }
    h.validity_end = lock.validity_end();
    h.released = Clock::now();
    lock.release();
    h.end = std::min(h.validity_end, h.released);
    ++st.acquisitions;
    // Think time before the next turn, so that the releasing worker does not
    // win again and again while the others sleep between their retries.
    auto think = Millis{Uniform(rng, 0, t / 4)};
    if (h.released > h.validity_end) ++st.past_validity;
    {
      std::lock_guard<std::mutex> g(sh.mu);
      if (h.end > h.granted) {
        sh.holds.push_back(h);
      } else {
        ++st.expired_before_use;  // descheduled past its validity before it could act
      }
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(think, sh.end - Clock::now()));
  }
  std::lock_guard<std::mutex> g(sh.mu);
  sh.stats += st;
}

}  // namespace latch::chaos
