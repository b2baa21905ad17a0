// Keyspace: storage, deadlines, lazy and active expiry, incremental rehash.
// Driven through the public API only, with explicit monotonic times.
#include "server/keyspace.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <chrono>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace latch {
namespace {

std::string Key(size_t i) {
  return "key:" + std::to_string(i);
}
std::string Val(size_t i) {
  return "value-" + std::to_string(i * 7919);
}

// The value stored under `key`, or "<missing>".
std::string ValueAt(Keyspace& ks, std::string_view key, int64_t now) {
  const Keyspace::Entry* e = ks.Find(key, now);
  return e == nullptr ? "<missing>" : std::string(e->value());
}

TEST(KeyspaceTest, SetFindErase) {
  Keyspace ks;
  EXPECT_EQ(ks.Find("a", 1), nullptr);
  EXPECT_EQ(ks.size(), 0u);

  ks.Set("a", "1", kNoDeadline);
  const Keyspace::Entry* e = ks.Find("a", 1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->key(), "a");
  EXPECT_EQ(e->value(), "1");
  EXPECT_FALSE(e->has_deadline());
  EXPECT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks.keys_with_deadline(), 0u);

  ks.Set("b", "2", kNoDeadline);
  EXPECT_EQ(ks.size(), 2u);
  EXPECT_EQ(ValueAt(ks, "a", 1), "1");
  EXPECT_EQ(ValueAt(ks, "b", 1), "2");

  EXPECT_TRUE(ks.Erase("a"));
  EXPECT_FALSE(ks.Erase("a"));
  EXPECT_FALSE(ks.Erase("never"));
  EXPECT_EQ(ks.Find("a", 1), nullptr);
  EXPECT_EQ(ValueAt(ks, "b", 1), "2");
  EXPECT_EQ(ks.size(), 1u);
}

TEST(KeyspaceTest, BinaryKeysAndValues) {
  Keyspace ks;
  const std::string k1("a\0b", 3), k2("a\0c", 3), k3("a", 1), crlf("\r\n\r\n", 4);
  const std::string high("\xff\xfe\x00\x80", 4);
  const std::string v1("x\0y\0z", 5), v2("\r\n$3\r\n", 7);
  ks.Set(k1, v1, kNoDeadline);
  ks.Set(k2, v2, kNoDeadline);
  ks.Set(k3, high, kNoDeadline);
  ks.Set(crlf, "", kNoDeadline);
  ks.Set("", "empty key", kNoDeadline);
  EXPECT_EQ(ks.size(), 5u);

  EXPECT_EQ(ValueAt(ks, k1, 1), v1);
  EXPECT_EQ(ValueAt(ks, k2, 1), v2);
  EXPECT_EQ(ValueAt(ks, k3, 1), high);
  EXPECT_EQ(ValueAt(ks, "", 1), "empty key");
  const Keyspace::Entry* e = ks.Find(crlf, 1);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->value().size(), 0u);
  EXPECT_EQ(e->key(), crlf);
  // A prefix up to the NUL is a different key.
  EXPECT_EQ(ks.Find(std::string("a\0", 2), 1), nullptr);

  EXPECT_TRUE(ks.Erase(k1));
  EXPECT_EQ(ks.Find(k1, 1), nullptr);
  EXPECT_EQ(ValueAt(ks, k2, 1), v2);
  EXPECT_EQ(ValueAt(ks, k3, 1), high);
}

TEST(KeyspaceTest, ReplaceValueWithSameAndDifferentLength) {
  Keyspace ks;
  ks.Set("k", "abcd", kNoDeadline);
  ks.Set("other", "o", 500);
  ks.Set("k", "wxyz", kNoDeadline);  // same length
  EXPECT_EQ(ValueAt(ks, "k", 1), "wxyz");
  ks.Set("k", "a much longer value than before", kNoDeadline);
  EXPECT_EQ(ValueAt(ks, "k", 1), "a much longer value than before");
  ks.Set("k", "s", kNoDeadline);
  EXPECT_EQ(ValueAt(ks, "k", 1), "s");
  ks.Set("k", "", kNoDeadline);
  EXPECT_EQ(ValueAt(ks, "k", 1), "");
  EXPECT_EQ(ks.size(), 2u);

  // Replacing a key that has a deadline, both in place and with a new
  // allocation, keeps the TTL index consistent.
  ks.Set("t", "1234", 100);
  EXPECT_EQ(ks.keys_with_deadline(), 2u);
  ks.Set("t", "5678", 200);  // same length, new deadline
  ASSERT_NE(ks.Find("t", 150), nullptr);
  EXPECT_EQ(ks.Find("t", 150)->deadline, 200);
  ks.Set("t", "longer value", 300);  // new allocation, new deadline
  EXPECT_EQ(ks.Find("t", 250)->deadline, 300);
  EXPECT_EQ(ks.keys_with_deadline(), 2u);
  ks.Set("t", "x", kNoDeadline);  // new allocation, deadline removed
  EXPECT_EQ(ks.keys_with_deadline(), 1u);
  EXPECT_EQ(ValueAt(ks, "t", 1'000'000), "x");
  ks.Set("t", "yy", 400);  // deadline added again
  EXPECT_EQ(ks.keys_with_deadline(), 2u);
  EXPECT_EQ(ks.size(), 3u);
  // "other" is still indexed correctly after all that swapping: it expires.
  EXPECT_EQ(ks.Find("other", 501), nullptr);
  EXPECT_EQ(ks.keys_with_deadline(), 1u);
  EXPECT_EQ(ks.Find("t", 401), nullptr);
  EXPECT_EQ(ks.keys_with_deadline(), 0u);
  EXPECT_EQ(ks.size(), 1u);
}

TEST(KeyspaceTest, KeyIsVisibleUntilNowPassesItsDeadline) {
  Keyspace ks;
  ks.Set("k", "v", 100);
  const Keyspace::Entry* e = ks.Find("k", 99);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->has_deadline());
  EXPECT_EQ(e->deadline, 100);
  // Redis's rule: expired only when now > deadline.
  EXPECT_NE(ks.Find("k", 100), nullptr);
  EXPECT_EQ(ks.Find("k", 101), nullptr);
  EXPECT_EQ(ks.size(), 0u);
  EXPECT_EQ(ks.keys_with_deadline(), 0u);
  // Gone for good, even if asked about an earlier instant afterwards.
  EXPECT_EQ(ks.Find("k", 50), nullptr);
}

TEST(KeyspaceTest, LazyExpiryCallsTheListenerOnceWithTheKey) {
  Keyspace ks;
  std::vector<std::string> expired;
  ks.set_expiry_listener([&](std::string_view key) { expired.emplace_back(key); });
  const std::string binary("lock\0\r\n", 7);
  ks.Set(binary, "token", 50);
  ks.Set("later", "v", 500);
  ks.Set("forever", "v", kNoDeadline);

  EXPECT_EQ(ks.Find(binary, 100), nullptr);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0], binary);
  EXPECT_EQ(ks.Find(binary, 100), nullptr);
  EXPECT_EQ(ks.Find(binary, 200), nullptr);
  EXPECT_EQ(expired.size(), 1u);

  EXPECT_NE(ks.Find("later", 100), nullptr);
  EXPECT_NE(ks.Find("forever", 1'000'000'000), nullptr);
  EXPECT_EQ(expired.size(), 1u);

  // An explicit Erase, SetDeadline or overwrite is not an expiry.
  ks.Set("d", "v", 10);
  EXPECT_TRUE(ks.Erase("d"));
  ks.Set("e", "v", 10);
  ks.Set("e", "v2", kNoDeadline);
  EXPECT_NE(ks.Find("e", 1000), nullptr);
  EXPECT_EQ(expired.size(), 1u);

  EXPECT_EQ(ks.Find("later", 501), nullptr);
  ASSERT_EQ(expired.size(), 2u);
  EXPECT_EQ(expired[1], "later");
  EXPECT_EQ(ks.size(), 2u);  // forever, e
}

TEST(KeyspaceTest, KeepDeadline) {
  Keyspace ks;
  ks.Set("k", "v1", 100);
  ks.Set("k", "v2", 999, /*keep_deadline=*/true);  // same length
  ASSERT_NE(ks.Find("k", 1), nullptr);
  EXPECT_EQ(ks.Find("k", 1)->deadline, 100);
  EXPECT_EQ(ValueAt(ks, "k", 1), "v2");
  ks.Set("k", "a longer value", kNoDeadline, true);  // new allocation
  EXPECT_EQ(ks.Find("k", 1)->deadline, 100);
  EXPECT_EQ(ValueAt(ks, "k", 1), "a longer value");
  EXPECT_EQ(ks.keys_with_deadline(), 1u);
  EXPECT_EQ(ks.Find("k", 101), nullptr);

  // A key without TTL keeps having none.
  ks.Set("p", "v", kNoDeadline);
  ks.Set("p", "w", 100, true);
  EXPECT_FALSE(ks.Find("p", 1)->has_deadline());
  EXPECT_EQ(ks.keys_with_deadline(), 0u);
  EXPECT_NE(ks.Find("p", 1'000'000), nullptr);

  // A new key takes the deadline given.
  ks.Set("n", "v", 300, true);
  EXPECT_EQ(ks.Find("n", 1)->deadline, 300);
  EXPECT_EQ(ks.keys_with_deadline(), 1u);

  // Without keep_deadline the new deadline (or none) replaces the old one.
  ks.Set("n", "v", kNoDeadline);
  EXPECT_FALSE(ks.Find("n", 1)->has_deadline());
  EXPECT_EQ(ks.keys_with_deadline(), 0u);
}

TEST(KeyspaceTest, SetDeadlineAddsChangesAndRemoves) {
  Keyspace ks;
  EXPECT_FALSE(ks.SetDeadline("missing", 100));
  EXPECT_EQ(ks.size(), 0u);
  EXPECT_EQ(ks.keys_with_deadline(), 0u);

  ks.Set("k", "v", kNoDeadline);
  EXPECT_TRUE(ks.SetDeadline("k", 100));
  EXPECT_EQ(ks.keys_with_deadline(), 1u);
  EXPECT_TRUE(ks.SetDeadline("k", 200));  // change: still one indexed key
  EXPECT_EQ(ks.keys_with_deadline(), 1u);
  EXPECT_NE(ks.Find("k", 150), nullptr);
  EXPECT_NE(ks.Find("k", 200), nullptr);
  EXPECT_EQ(ks.Find("k", 201), nullptr);
  EXPECT_EQ(ks.keys_with_deadline(), 0u);

  ks.Set("p", "v", kNoDeadline);
  EXPECT_TRUE(ks.SetDeadline("p", 100));
  EXPECT_TRUE(ks.SetDeadline("p", kNoDeadline));
  EXPECT_EQ(ks.keys_with_deadline(), 0u);
  EXPECT_TRUE(ks.SetDeadline("p", kNoDeadline));  // removing twice is harmless
  EXPECT_EQ(ks.keys_with_deadline(), 0u);
  EXPECT_NE(ks.Find("p", 1'000'000'000), nullptr);
  EXPECT_EQ(ks.size(), 1u);
}

TEST(KeyspaceTest, SizeAndTtlIndexBookkeeping) {
  Keyspace ks;
  constexpr size_t kN = 2000;
  for (size_t i = 0; i < kN; ++i) {
    ks.Set(Key(i), Val(i), i % 2 == 0 ? static_cast<int64_t>(1000 + i) : kNoDeadline);
  }
  EXPECT_EQ(ks.size(), kN);
  EXPECT_EQ(ks.keys_with_deadline(), kN / 2);
  // Erase every fourth key (half of them have a TTL).
  size_t erased_with_ttl = 0;
  for (size_t i = 0; i < kN; i += 4) {
    EXPECT_TRUE(ks.Erase(Key(i)));
    ++erased_with_ttl;
  }
  for (size_t i = 1; i < kN; i += 4) {
    EXPECT_TRUE(ks.Erase(Key(i)));
  }
  EXPECT_EQ(ks.size(), kN / 2);
  EXPECT_EQ(ks.keys_with_deadline(), kN / 2 - erased_with_ttl);
  size_t seen = 0, seen_with_ttl = 0;
  ks.ForEach([&](const Keyspace::Entry& e) {
    ++seen;
    seen_with_ttl += e.has_deadline();
  });
  EXPECT_EQ(seen, ks.size());
  EXPECT_EQ(seen_with_ttl, ks.keys_with_deadline());
  EXPECT_GT(ks.memory_bytes(), 0u);
}

TEST(KeyspaceTest, ClearRemovesEverythingWithoutExpiryNotifications) {
  Keyspace ks;
  int notified = 0;
  ks.set_expiry_listener([&](std::string_view) { ++notified; });
  for (size_t i = 0; i < 5000; ++i) ks.Set(Key(i), Val(i), i % 3 == 0 ? 10 : kNoDeadline);
  const size_t full = ks.memory_bytes();
  ks.Clear();
  EXPECT_EQ(ks.size(), 0u);
  EXPECT_EQ(ks.keys_with_deadline(), 0u);
  EXPECT_LT(ks.memory_bytes(), full / 10);
  EXPECT_EQ(notified, 0);
  EXPECT_EQ(ks.Find(Key(1), 1), nullptr);
  size_t seen = 0;
  ks.ForEach([&](const Keyspace::Entry&) { ++seen; });
  EXPECT_EQ(seen, 0u);
  // Usable again afterwards.
  ks.Set("again", "v", 100);
  EXPECT_EQ(ValueAt(ks, "again", 1), "v");
  EXPECT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks.keys_with_deadline(), 1u);
  EXPECT_EQ(ks.Find("again", 101), nullptr);
  EXPECT_EQ(notified, 1);
}

// Whether a resize is in progress. RehashStep(0) moves nothing; it may only
// start a resize the table is already due for.
bool Rehashing(Keyspace& ks) {
  return ks.RehashStep(0);
}

TEST(KeyspaceTest, GrowsAndShrinksThroughIncrementalRehash) {
  Keyspace ks;
  constexpr size_t kN = 100'000;
  size_t inserts_while_rehashing = 0;
  for (size_t i = 0; i < kN; ++i) {
    if (Rehashing(ks)) ++inserts_while_rehashing;
    ks.Set(Key(i), Val(i), kNoDeadline);
    // The key just written and an older one are findable at every step,
    // whichever table they are in.
    ASSERT_EQ(ValueAt(ks, Key(i), 1), Val(i)) << i;
    ASSERT_EQ(ValueAt(ks, Key(i / 2), 1), Val(i / 2)) << i;
  }
  EXPECT_GT(inserts_while_rehashing, 1000u);  // the test did exercise rehashing
  EXPECT_EQ(ks.size(), kN);
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(ValueAt(ks, Key(i), 1), Val(i)) << i;
  while (ks.RehashStep(100)) {
  }
  const size_t peak = ks.memory_bytes();

  // Shrink: erase 98%, checking survivors while the table rehashes down.
  size_t erases_while_rehashing = 0;
  for (size_t i = 0; i < kN; ++i) {
    if (i % 50 == 0) continue;
    if (Rehashing(ks)) ++erases_while_rehashing;
    ASSERT_TRUE(ks.Erase(Key(i))) << i;
    ASSERT_EQ(ks.Find(Key(i), 1), nullptr) << i;
    size_t survivor = (i / 50) * 50;
    ASSERT_EQ(ValueAt(ks, Key(survivor), 1), Val(survivor)) << i;
  }
  EXPECT_GT(erases_while_rehashing, 100u);
  EXPECT_EQ(ks.size(), kN / 50);
  while (ks.RehashStep(100)) {
  }
  for (size_t i = 0; i < kN; ++i) {
    if (i % 50 == 0) {
      ASSERT_EQ(ValueAt(ks, Key(i), 1), Val(i)) << i;
    } else {
      ASSERT_EQ(ks.Find(Key(i), 1), nullptr) << i;
    }
  }
  // The bucket array shrank with the data.
  EXPECT_LT(ks.memory_bytes(), peak / 10);
}

TEST(KeyspaceTest, InterleavedOperationsWhileRehashingMatchAModel) {
  Keyspace ks;
  std::unordered_map<std::string, std::string> model;
  std::mt19937_64 rng(12345);
  constexpr size_t kKeys = 100'000;
  size_t op = 0;
  auto check_all = [&] {
    ASSERT_EQ(ks.size(), model.size()) << "op " << op;
    for (const auto& [k, v] : model) ASSERT_EQ(ValueAt(ks, k, 1), v) << "op " << op << " " << k;
    size_t seen = 0;
    ks.ForEach([&](const Keyspace::Entry& e) {
      ++seen;
      auto it = model.find(std::string(e.key()));
      EXPECT_TRUE(it != model.end() && it->second == e.value()) << e.key();
    });
    ASSERT_EQ(seen, model.size());
  };
  auto insert = [&](const std::string& k) {
    // Values of varying lengths exercise both replacement paths.
    std::string v = Val(rng() % 1000) + std::string(rng() % 8, 'x');
    ks.Set(k, v, kNoDeadline);
    model[k] = v;
  };
  auto erase = [&](const std::string& k) {
    bool existed = model.erase(k) > 0;
    ASSERT_EQ(ks.Erase(k), existed) << "op " << op << " " << k;
  };
  auto find = [&](const std::string& k) {
    auto it = model.find(k);
    ASSERT_EQ(ValueAt(ks, k, 1), it == model.end() ? "<missing>" : it->second)
        << "op " << op << " " << k;
  };
  auto random_key = [&] { return Key(rng() % kKeys); };
  // One operation: `insert_pct`% inserts, `erase_pct`% erases, the rest finds.
  size_t while_rehashing = 0;
  auto step = [&](int insert_pct, int erase_pct, const std::string& erase_key) {
    ++op;
    if (Rehashing(ks)) ++while_rehashing;
    int dice = static_cast<int>(rng() % 100);
    if (dice < insert_pct) {
      insert(random_key());
    } else if (dice < insert_pct + erase_pct) {
      erase(erase_key.empty() ? random_key() : erase_key);
    } else {
      find(random_key());
    }
    if (op % 50'000 == 0) check_all();
  };

  // Grow to 70k keys.
  while (model.size() < 70'000) {
    step(70, 10, "");
    if (HasFatalFailure()) return;
  }
  const size_t grow_rehashing = std::exchange(while_rehashing, 0);
  check_all();
  if (HasFatalFailure()) return;
  // Shrink: erase every key in order, with random finds and a few inserts.
  for (size_t cursor = 0; cursor < kKeys;) {
    std::string victim = Key(cursor);
    int dice = static_cast<int>(rng() % 100);
    if (dice < 60) {
      step(0, 100, victim);
      ++cursor;
    } else {
      step(dice < 63 ? 100 : 0, 0, "");
    }
    if (HasFatalFailure()) return;
  }
  const size_t shrink_rehashing = std::exchange(while_rehashing, 0);
  EXPECT_LT(model.size(), 10'000u);
  check_all();
  if (HasFatalFailure()) return;
  // Grow again.
  for (int i = 0; i < 100'000; ++i) {
    step(60, 10, "");
    if (HasFatalFailure()) return;
  }
  check_all();
  EXPECT_GT(grow_rehashing, 10'000u);
  EXPECT_GT(shrink_rehashing, 1'000u);
  EXPECT_GT(while_rehashing, 1'000u);
}

TEST(KeyspaceTest, ForEachVisitsEveryEntryOnceEvenMidRehash) {
  Keyspace ks;
  size_t n = 0;
  // Insert until a resize is under way with plenty of keys on both sides.
  while (n < 3000 || !Rehashing(ks)) {
    ks.Set(Key(n), Val(n), n % 5 == 0 ? 10 : kNoDeadline);
    ++n;
    ASSERT_LT(n, 1'000'000u);
  }
  ASSERT_TRUE(Rehashing(ks));
  std::map<std::string, int> visits;
  ks.ForEach([&](const Keyspace::Entry& e) { ++visits[std::string(e.key())]; });
  EXPECT_EQ(visits.size(), n);
  for (size_t i = 0; i < n; ++i) {
    auto it = visits.find(Key(i));
    ASSERT_NE(it, visits.end()) << Key(i);
    EXPECT_EQ(it->second, 1) << Key(i);
  }
  // Expired entries not yet reclaimed are visited too (the caller decides).
  size_t expired_seen = 0;
  ks.ForEach([&](const Keyspace::Entry& e) { expired_seen += e.has_deadline(); });
  EXPECT_EQ(expired_seen, (n + 4) / 5);
}

TEST(KeyspaceTest, ActiveExpireCycleSmallSetReclaimsAllExpiredAtOnce) {
  Keyspace ks;
  std::set<std::string> notified;
  ks.set_expiry_listener([&](std::string_view k) { notified.emplace(k); });
  for (size_t i = 0; i < 10; ++i) ks.Set(Key(i), "v", i < 5 ? 100 : 1000);
  ks.Set("no-ttl", "v", kNoDeadline);
  EXPECT_EQ(ks.ActiveExpireCycle(/*now=*/50, 1000), 0u);
  EXPECT_EQ(ks.size(), 11u);
  EXPECT_EQ(ks.ActiveExpireCycle(/*now=*/100, 1000), 0u);  // at the deadline: still live
  EXPECT_EQ(ks.ActiveExpireCycle(/*now=*/101, 1000), 5u);
  EXPECT_EQ(ks.size(), 6u);
  EXPECT_EQ(ks.keys_with_deadline(), 5u);
  EXPECT_EQ(notified, (std::set<std::string>{Key(0), Key(1), Key(2), Key(3), Key(4)}));
  EXPECT_EQ(ks.ActiveExpireCycle(/*now=*/1001, 1000), 5u);
  EXPECT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks.keys_with_deadline(), 0u);
  EXPECT_EQ(ks.ActiveExpireCycle(/*now=*/1'000'000, 1000), 0u);
  EXPECT_NE(ks.Find("no-ttl", 1'000'000), nullptr);
}

TEST(KeyspaceTest, ActiveExpireCycleReclaimsALargeSetWithinItsBudget) {
  Keyspace ks;
  std::multiset<std::string> notified;
  ks.set_expiry_listener([&](std::string_view k) { notified.emplace(k); });
  constexpr size_t kExpired = 60'000, kLiveTtl = 20'000, kLiveNoTtl = 20'000;
  constexpr int64_t kNow = 5000;
  size_t id = 0;
  std::set<std::string> expected_expired;
  for (size_t i = 0; i < kExpired; ++i, ++id) {
    ks.Set(Key(id), Val(id), 1000 + static_cast<int64_t>(i % 4000));  // all < kNow
    expected_expired.insert(Key(id));
  }
  for (size_t i = 0; i < kLiveTtl; ++i, ++id) {
    ks.Set(Key(id), Val(id), kNow + (i % 2 == 0 ? 0 : 1'000'000));  // == now is still live
  }
  for (size_t i = 0; i < kLiveNoTtl; ++i, ++id) ks.Set(Key(id), Val(id), kNoDeadline);
  // Shuffle the insertion order's effect on the TTL index a little.
  ASSERT_EQ(ks.size(), kExpired + kLiveTtl + kLiveNoTtl);

  // A tiny budget stops the first cycle long before it is done.
  size_t first = ks.ActiveExpireCycle(kNow, /*budget_us=*/1);
  EXPECT_GT(first, 0u);
  EXPECT_LT(first, kExpired / 4);
  EXPECT_EQ(notified.size(), first);

  // Repeated cycles with a real budget get them all; each stays near it.
  size_t total = first;
  int cycles = 0;
  auto slowest = std::chrono::steady_clock::duration::zero();
  while (ks.size() > kLiveTtl + kLiveNoTtl && cycles < 2'000'000) {
    auto start = std::chrono::steady_clock::now();
    total += ks.ActiveExpireCycle(kNow, /*budget_us=*/2000);
    slowest = std::max(slowest, std::chrono::steady_clock::now() - start);
    ++cycles;
  }
  EXPECT_EQ(ks.size(), kLiveTtl + kLiveNoTtl);
  EXPECT_EQ(ks.keys_with_deadline(), kLiveTtl);
  EXPECT_EQ(total, kExpired);
  // Generous bound (sanitizers, loaded CI): the point is that a cycle does
  // not run unbounded through 60k keys.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(slowest).count(), 200);

  // Every expired key was reported exactly once, and nothing else was.
  EXPECT_EQ(notified.size(), kExpired);
  EXPECT_EQ(std::set<std::string>(notified.begin(), notified.end()), expected_expired);
  // Live keys are all intact.
  for (size_t i = kExpired; i < id; ++i) ASSERT_EQ(ValueAt(ks, Key(i), kNow), Val(i)) << i;
  EXPECT_EQ(ks.ActiveExpireCycle(kNow, 2000), 0u);
}

// ------------------------------------------------------------------ SCAN

// Runs a whole scan, calling between(step) before every step after the
// first (where a test changes the table). Returns how often each key was
// seen; fails if the walk does not end within `max_steps`.
std::map<std::string, int> ScanAll(Keyspace& ks, size_t max_steps,
                                   const std::function<void(size_t)>& between = nullptr) {
  std::map<std::string, int> seen;
  uint64_t cursor = 0;
  size_t step = 0;
  do {
    if (step > 0 && between) between(step);
    cursor = ks.Scan(cursor, [&](const Keyspace::Entry& e) { ++seen[std::string(e.key())]; });
    ++step;
  } while (cursor != 0 && step < max_steps);
  EXPECT_EQ(cursor, 0u) << "the scan did not end within " << max_steps << " steps";
  return seen;
}

TEST(KeyspaceScanTest, EmptyKeyspaceEndsAtOnceFromAnyCursor) {
  Keyspace ks;
  size_t calls = 0;
  uint64_t cursor = 0;
  size_t steps = 0;
  do {
    cursor = ks.Scan(cursor, [&](const Keyspace::Entry&) { ++calls; });
    ++steps;
  } while (cursor != 0 && steps < 100);
  EXPECT_EQ(cursor, 0u);
  EXPECT_EQ(calls, 0u);
  // One step per bucket of the initial table (16), none skipped.
  EXPECT_EQ(steps, 16u);
  // A cursor from a larger table (or garbage) still leads back to 0.
  auto seen = [&] {
    uint64_t c = 0xdeadbeefcafe;
    size_t n = 0;
    do {
      c = ks.Scan(c, [](const Keyspace::Entry&) {});
    } while (c != 0 && ++n < 100);
    return c;
  }();
  EXPECT_EQ(seen, 0u);
}

TEST(KeyspaceScanTest, StableTableReturnsEveryKeyExactlyOnce) {
  Keyspace ks;
  for (size_t i = 0; i < 5000; ++i) ks.Set(Key(i), Val(i), i % 3 == 0 ? 10 : kNoDeadline);
  while (ks.RehashStep(100)) {
  }
  auto seen = ScanAll(ks, 1'000'000);
  ASSERT_EQ(seen.size(), 5000u);
  for (size_t i = 0; i < 5000; ++i) {
    auto it = seen.find(Key(i));
    ASSERT_NE(it, seen.end()) << Key(i);
    EXPECT_EQ(it->second, 1) << Key(i);  // no resize during the walk: no duplicates
  }
}

TEST(KeyspaceScanTest, StartedMidRehashReturnsEveryKey) {
  Keyspace ks;
  size_t n = 0;
  while (n < 2000 || !Rehashing(ks)) {
    ks.Set(Key(n), Val(n), kNoDeadline);
    ++n;
  }
  ASSERT_TRUE(Rehashing(ks));
  auto seen = ScanAll(ks, 1'000'000);
  for (size_t i = 0; i < n; ++i) ASSERT_GE(seen[Key(i)], 1) << Key(i);
  EXPECT_EQ(seen.size(), n);
}

// The SCAN guarantee under a table that grows several times while it is
// walked: keys present from start to end are each returned at least once,
// whatever was inserted or removed around them.
TEST(KeyspaceScanTest, KeysPresentThroughoutSurviveGrowth) {
  Keyspace ks;
  constexpr size_t kStable = 300, kTarget = 40'000;
  for (size_t i = 0; i < kStable; ++i) ks.Set("stable:" + std::to_string(i), "v", kNoDeadline);
  std::mt19937_64 rng(7);
  size_t churn = 0, resizes_seen = 0;
  auto seen = ScanAll(ks, 1'000'000, [&](size_t) {
    // Grow up to kTarget keys, 40 per step (a few removed again), lookups in
    // between (each moves the rehash on), sometimes the cron's rehash step.
    for (int j = 0; j < 40 && ks.size() < kTarget; ++j) {
      ks.Set("churn:" + std::to_string(churn++), "v", kNoDeadline);
    }
    if (churn > 0) ks.Erase("churn:" + std::to_string(rng() % churn));
    ks.Find("stable:" + std::to_string(rng() % kStable), 1);
    if (rng() % 4 == 0) ks.RehashStep(1);
    resizes_seen += Rehashing(ks);
  });
  EXPECT_GT(ks.size(), kTarget - 100);  // the table doubled six times meanwhile
  EXPECT_GT(resizes_seen, 10u);         // and was walked mid-resize
  for (size_t i = 0; i < kStable; ++i) {
    EXPECT_GE(seen["stable:" + std::to_string(i)], 1) << i;
  }
}

TEST(KeyspaceScanTest, KeysPresentThroughoutSurviveShrinking) {
  Keyspace ks;
  constexpr size_t kStable = 200, kChurn = 60'000;
  for (size_t i = 0; i < kChurn; ++i) ks.Set("churn:" + std::to_string(i), "v", kNoDeadline);
  for (size_t i = 0; i < kStable; ++i) ks.Set("stable:" + std::to_string(i), "v", kNoDeadline);
  while (ks.RehashStep(100)) {
  }
  size_t next_victim = 0, resizes_seen = 0;
  auto seen = ScanAll(ks, 1'000'000, [&](size_t) {
    // Remove the churn keys as the walk goes, so the table halves again and
    // again under the cursor.
    for (int j = 0; j < 200 && next_victim < kChurn; ++j) {
      ASSERT_TRUE(ks.Erase("churn:" + std::to_string(next_victim++)));
    }
    resizes_seen += Rehashing(ks);
  });
  EXPECT_EQ(ks.size(), kStable + (kChurn - next_victim));
  EXPECT_GT(next_victim, kChurn / 2);  // most of the shrinking happened mid-walk
  EXPECT_GT(resizes_seen, 10u);
  for (size_t i = 0; i < kStable; ++i) {
    EXPECT_GE(seen["stable:" + std::to_string(i)], 1) << i;
  }
}

TEST(KeyspaceScanTest, GrowAndShrinkInterleaved) {
  // Random inserts and erases of other keys between steps, growing and
  // shrinking in turns (up to 20,000 other keys), over several walks.
  std::mt19937_64 rng(99);
  for (int round = 0; round < 5; ++round) {
    Keyspace ks;
    std::set<std::string> stable;
    for (size_t i = 0; i < 500; ++i) {
      std::string k = "s" + std::to_string(round) + ":" + std::to_string(i);
      ks.Set(k, "v", kNoDeadline);
      stable.insert(std::move(k));
    }
    std::vector<std::string> others;
    size_t resizes_seen = 0;
    auto seen = ScanAll(ks, 1'000'000, [&](size_t step) {
      bool growing = (step / 100) % 2 == 0;
      int ops = static_cast<int>(rng() % 400);
      for (int j = 0; j < ops; ++j) {
        if ((growing && others.size() < 20'000) || others.empty()) {
          others.push_back("o:" + std::to_string(rng()));
          ks.Set(others.back(), "v", kNoDeadline);
        } else if (!growing) {
          size_t i = rng() % others.size();
          ks.Erase(others[i]);
          others[i] = others.back();
          others.pop_back();
        }
      }
      resizes_seen += Rehashing(ks);
    });
    EXPECT_GT(resizes_seen, 5u) << "round " << round;
    for (const std::string& k : stable) ASSERT_GE(seen[k], 1) << "round " << round << " " << k;
  }
}

// ------------------------------------------------------------------ RANDOMKEY

TEST(KeyspaceTest, RandomEntryReachesEveryKeyEvenMidRehash) {
  Keyspace ks;
  EXPECT_EQ(ks.RandomEntry(), nullptr);
  ks.Set("only", "v", kNoDeadline);
  ASSERT_NE(ks.RandomEntry(), nullptr);
  EXPECT_EQ(ks.RandomEntry()->key(), "only");
  size_t n = 1;
  while (n < 40 || !Rehashing(ks)) {
    ks.Set(Key(n), Val(n), kNoDeadline);
    ++n;
  }
  std::set<std::string> drawn;
  for (int i = 0; i < 20'000 && drawn.size() < n; ++i) {
    const Keyspace::Entry* e = ks.RandomEntry();
    ASSERT_NE(e, nullptr);
    drawn.insert(std::string(e->key()));
  }
  EXPECT_EQ(drawn.size(), n);  // every key can come up
  EXPECT_TRUE(drawn.count("only"));
}

// ------------------------------------------------------------------ access clock, allocation

TEST(KeyspaceTest, AccessClockCountsIdleSecondsAndWraps) {
  Keyspace ks;
  ks.Tick(10'000);
  ks.Set("k", "v", kNoDeadline);
  const Keyspace::Entry* e = ks.Find("k", 10'500, /*touch=*/false);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(Keyspace::IdleMs(*e, 10'900), 0);
  EXPECT_EQ(Keyspace::IdleMs(*e, 25'000), 15'000);
  // A lookup without touch leaves the clock; a normal one resets it.
  ks.Find("k", 40'000, false);
  EXPECT_EQ(Keyspace::IdleMs(*e, 40'000), 30'000);
  e = ks.Find("k", 40'000);
  EXPECT_EQ(Keyspace::IdleMs(*e, 42'000), 2'000);
  // The clock has 24 bits of seconds, as Redis's: idle time across the wrap.
  const int64_t wrap_ms = int64_t{1 << 24} * 1000;
  ks.Tick(wrap_ms - 3'000);
  ks.Set("w", "v", kNoDeadline);
  e = ks.Find("w", wrap_ms - 3'000, false);
  EXPECT_EQ(Keyspace::IdleMs(*e, wrap_ms + 4'000), 6'000);  // Redis's modular estimate
}

TEST(KeyspaceTest, ValueKindAndAllocation) {
  Keyspace ks;
  ks.Set("k", "v", kNoDeadline, false, 2);
  const Keyspace::Entry* e = ks.Find("k", 1);
  EXPECT_EQ(e->value_kind, 2u);
  ks.Set("k", "w", kNoDeadline);  // same length, in place: the kind is the new write's
  EXPECT_EQ(ks.Find("k", 1)->value_kind, 0u);
  ks.Set("k", std::string(1000, 'x'), kNoDeadline, false, 1);
  e = ks.Find("k", 1);
  EXPECT_EQ(e->value_kind, 1u);
  // At least the header, key and value; malloc rounds up by little.
  size_t bytes = Keyspace::AllocationOf(*e);
  EXPECT_GE(bytes, sizeof(Keyspace::Entry) + 1 + 1000 + sizeof(void*));
  EXPECT_LT(bytes, sizeof(Keyspace::Entry) + 1 + 1000 + 64);
  // A deadline adds the key's slot in the TTL index. (Compared beside each
  // entry's own allocation: two requests of one size may get chunks that
  // differ by malloc's alignment, whatever the heap held before.)
  ks.Set("t", std::string(1000, 'x'), 100);
  auto beside_entry = [&](const char* key) {
    const Keyspace::Entry* entry = ks.Find(key, 1);
    return Keyspace::AllocationOf(*entry) - malloc_usable_size(const_cast<Keyspace::Entry*>(entry));
  };
  EXPECT_EQ(beside_entry("t") - beside_entry("k"), sizeof(void*));
}

TEST(KeyspaceTest, AFencedEntryKeepsItsTokenAfterItsValue) {
  Keyspace ks;
  ks.Set("plain", "v", kNoDeadline);
  const size_t plain_bytes = ks.entry_bytes();
  EXPECT_EQ(ks.Find("plain", 1)->token(), 0u);
  EXPECT_FALSE(ks.Find("plain", 1)->fenced);

  // A token costs its 8 bytes, on fenced entries only.
  const Keyspace::Entry* e = ks.Set("lock", "holder-A", 500, false, 0, 41);
  EXPECT_EQ(e->token(), 41u);
  EXPECT_EQ(e->value(), "holder-A");
  EXPECT_EQ(ks.entry_bytes() - plain_bytes, sizeof(Keyspace::Entry) + 4 + 8 + 8);
  // The same value is the same holder: a renewal keeps the token, in place.
  const Keyspace::Entry* again = ks.Set("lock", "holder-A", 900);
  EXPECT_EQ(again, e);
  EXPECT_EQ(again->token(), 41u);
  EXPECT_EQ(again->deadline, 900);
  // An explicit token replaces it (FENCE MIN raising the holder's token).
  EXPECT_EQ(ks.Set("lock", "holder-A", 900, false, 0, 77)->token(), 77u);
  // Another value of the same length is another holder: no token, and the
  // entry shrinks back to header, key and value.
  e = ks.Set("lock", "holder-B", 900);
  EXPECT_EQ(e->token(), 0u);
  EXPECT_EQ(ks.entry_bytes() - plain_bytes, sizeof(Keyspace::Entry) + 4 + 8);
  // A token for a value of another length, then an explicit 0.
  e = ks.Set("lock", "a longer holder", 900, false, 0, 99);
  EXPECT_EQ(e->token(), 99u);
  EXPECT_EQ(e->deadline, 900);
  EXPECT_EQ(ks.Set("lock", "a longer holder", 900, false, 0, 0)->token(), 0u);
  EXPECT_EQ(ks.Set("lock", "a longer holder", 900, false, 0, 5)->token(), 5u);
  // The token survives a deadline change and a rehash's moves.
  ASSERT_TRUE(ks.SetDeadline("lock", 1200));
  for (size_t i = 0; i < 500; ++i) ks.Set(Key(i), Val(i), kNoDeadline, false, 0, i + 1);
  while (ks.RehashStep(100)) {
  }
  EXPECT_EQ(ks.Find("lock", 1)->token(), 5u);
  for (size_t i = 0; i < 500; ++i) EXPECT_EQ(ks.Find(Key(i), 1)->token(), i + 1);
  // Erasing gives every byte back.
  for (size_t i = 0; i < 500; ++i) ks.Erase(Key(i));
  ks.Erase("lock");
  EXPECT_EQ(ks.entry_bytes(), plain_bytes);
  // A new key with kKeepTokenIfSame has nothing to keep.
  EXPECT_EQ(ks.Set("fresh", "v", kNoDeadline)->token(), 0u);
}

}  // namespace
}  // namespace latch
