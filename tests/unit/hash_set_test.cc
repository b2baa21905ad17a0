// The hash and set values (server/types/hash.h, set.h, intset.h): their
// contents against std:: models over random operations, their encodings
// against Redis 7.0's rules, and their appliers (create, convert, delete
// the key when empty, refuse another type).
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "log/reader.h"
#include "log/record.h"
#include "server/keyspace.h"
#include "server/types/hash.h"
#include "server/types/intset.h"
#include "server/types/set.h"
#include "server/types/value_ref.h"

namespace latch {
namespace {

// ---------------------------------------------------------------- IntSet

TEST(IntSetTest, MatchesAStdSetAcrossWidths) {
  std::mt19937_64 rng(11);
  IntSet s;
  std::set<int64_t> model;
  // Values of every width, so upgrades happen at both ends.
  auto value = [&]() -> int64_t {
    switch (rng() % 4) {
      case 0:
        return static_cast<int64_t>(rng() % 200) - 100;
      case 1:
        return static_cast<int64_t>(rng() % 200000) - 100000;
      case 2:
        return static_cast<int64_t>(rng() % 20000000000ULL) - 10000000000LL;
      default:
        return static_cast<int64_t>(rng());
    }
  };
  int max_width = 2;
  for (int step = 0; step < 20000; ++step) {
    const int64_t v = value();
    if (rng() % 3 == 0) {
      EXPECT_EQ(s.Remove(v), model.erase(v) == 1);
    } else {
      EXPECT_EQ(s.Add(v), model.insert(v).second);
    }
    ASSERT_EQ(s.size(), model.size());
    if (step % 500 == 0) {
      size_t i = 0;
      for (int64_t m : model) ASSERT_EQ(s.At(i++), m) << "ascending order";
      for (int k = 0; k < 20; ++k) {
        const int64_t probe = value();
        EXPECT_EQ(s.Contains(probe), model.count(probe) == 1);
      }
    }
    // The width never shrinks.
    EXPECT_GE(s.width(), max_width);
    max_width = s.width();
  }
  IntSet copy(s);
  ASSERT_EQ(copy.size(), s.size());
  for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(copy.At(i), s.At(i));
}

TEST(IntSetTest, WidensToTheSmallestWidthThatHoldsEveryValue) {
  IntSet s;
  s.Add(5);
  EXPECT_EQ(s.width(), 2);
  s.Add(-40000);  // below int16: prepended, every element widened
  EXPECT_EQ(s.width(), 4);
  EXPECT_EQ(s.At(0), -40000);
  EXPECT_EQ(s.At(1), 5);
  s.Add(int64_t{1} << 40);  // above int32: appended
  EXPECT_EQ(s.width(), 8);
  EXPECT_EQ(s.At(2), int64_t{1} << 40);
  EXPECT_TRUE(s.Remove(int64_t{1} << 40));
  EXPECT_EQ(s.width(), 8);  // as in Redis: never narrowed
  EXPECT_FALSE(s.Contains(int64_t{1} << 40));
  EXPECT_EQ(s.memory() >= 2 * 8, true);
}

// ---------------------------------------------------------------- helpers

// A record as the log would hold it, decoded.
struct Rec {
  std::vector<std::string> words;
  std::vector<std::string_view> views;
  aof::Record r;
  explicit Rec(std::vector<std::string> w) : words(std::move(w)) {
    for (const std::string& s : words) views.push_back(s);
    EXPECT_EQ(aof::Decode(views, &r), "");
  }
};

Applied Apply(Keyspace& ks, std::vector<std::string> words, const EncodingLimits& limits = {}) {
  Rec rec(std::move(words));
  switch (rec.r.op) {
    case aof::Op::kHSet:
      return ApplyHSet(ks, rec.r, limits);
    case aof::Op::kHDel:
      return ApplyHDel(ks, rec.r);
    case aof::Op::kSAdd:
      return ApplySAdd(ks, rec.r, limits);
    case aof::Op::kSRem:
      return ApplySRem(ks, rec.r);
    default:
      ADD_FAILURE() << "not a collection record";
      return {};
  }
}

// The collection under `key`, or nullptr: the Object itself when boxed, a
// copy when packed in its entry (kept until the test ends: a view would not
// outlive the next change).
const Object* ObjectAt(Keyspace& ks, std::string_view key) {
  static std::deque<std::unique_ptr<Object>> copies;
  const Keyspace::Entry* e = ks.Peek(key);
  if (e == nullptr || e->is_string()) return nullptr;
  if (e->boxed()) return e->object();
  return copies.emplace_back(WithObject(*e, [](const Object& o) { return o.Clone(); })).get();
}

// Replays `value`'s WriteRecords under `key` into a fresh keyspace and
// checks every record holds at most `per_record` words after its key (64
// members, or 64 field/value pairs) and rebuilds it.
void CheckRewrite(const Object& value, size_t per_record, const EncodingLimits& limits) {
  aof::Batch out;
  value.WriteRecords("copy", out);
  aof::Reader reader(out.bytes());
  Keyspace ks;
  size_t records = 0;
  while (reader.Next() == aof::Reader::Status::kUnit) {
    for (const aof::Record& r : reader.records()) {
      ++records;
      EXPECT_LE(r.args.size() - 2, per_record);
      Applied a = r.op == aof::Op::kHSet ? ApplyHSet(ks, r, limits) : ApplySAdd(ks, r, limits);
      EXPECT_EQ(a.error, "");
    }
  }
  EXPECT_GE(records, 1u);
  const Object* copy = ObjectAt(ks, "copy");
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(copy->Equals(value));
  EXPECT_EQ(copy->encoding(), value.encoding());
}

// ---------------------------------------------------------------- hashes

TEST(HashValueTest, MatchesAStdMapAndConvertsPastTheListpackLimits) {
  EncodingLimits limits;
  limits.hash_max_listpack_entries = 16;
  std::mt19937_64 rng(5);
  Keyspace ks;
  std::map<std::string, std::string> model;
  for (int step = 0; step < 3000; ++step) {
    std::string field = "f" + std::to_string(rng() % 40);
    if (rng() % 3 == 0) {
      Applied a = Apply(ks, {"HDEL", "h", field}, limits);
      EXPECT_EQ(a.count, static_cast<int64_t>(model.erase(field)));
    } else {
      std::string value(rng() % 8, static_cast<char>('a' + rng() % 26));
      Applied a = Apply(ks, {"HSET", "h", field, value}, limits);
      EXPECT_EQ(a.count, model.count(field) == 0 ? 1 : 0);
      model[field] = value;
    }
    const auto* h = static_cast<const HashValue*>(ObjectAt(ks, "h"));
    if (model.empty()) {
      EXPECT_EQ(h, nullptr) << "an empty hash is no key";
      continue;
    }
    ASSERT_NE(h, nullptr);
    ASSERT_EQ(h->size(), model.size());
    for (const auto& [f, v] : model) EXPECT_EQ(h->Get(f), std::optional<std::string_view>(v));
    // Listpack while at most 16 fields, unless it ever had more (never back).
    if (model.size() > 16) {
      EXPECT_EQ(h->encoding(), "hashtable");
    }
  }
}

TEST(HashValueTest, EncodingFollowsRedisRules) {
  EncodingLimits limits;
  limits.hash_max_listpack_value = 10;
  limits.hash_max_listpack_entries = 3;
  Keyspace ks;
  Apply(ks, {"HSET", "a", "f", "0123456789"}, limits);
  EXPECT_EQ(ObjectAt(ks, "a")->encoding(), "listpack");
  Apply(ks, {"HSET", "b", "f", "01234567890"}, limits);  // a value over 10 bytes
  EXPECT_EQ(ObjectAt(ks, "b")->encoding(), "hashtable");
  Apply(ks, {"HSET", "c", "01234567890", "v"}, limits);  // a field over 10 bytes
  EXPECT_EQ(ObjectAt(ks, "c")->encoding(), "hashtable");
  // The fourth field converts; removing fields does not convert back.
  Apply(ks, {"HSET", "d", "1", "x", "2", "x", "3", "x"}, limits);
  EXPECT_EQ(ObjectAt(ks, "d")->encoding(), "listpack");
  Apply(ks, {"HSET", "d", "4", "x"}, limits);
  EXPECT_EQ(ObjectAt(ks, "d")->encoding(), "hashtable");
  Apply(ks, {"HDEL", "d", "1", "2", "3"}, limits);
  EXPECT_EQ(ObjectAt(ks, "d")->encoding(), "hashtable");
  // A listpack keeps insertion order; an update keeps the field's place.
  Apply(ks, {"HSET", "e", "z", "1", "a", "2"}, limits);
  Apply(ks, {"HSET", "e", "z", "3"}, limits);
  std::vector<std::string> order;
  static_cast<const HashValue*>(ObjectAt(ks, "e"))->ForEach([&](auto f, auto v) {
    order.push_back(std::string(f) + "=" + std::string(v));
  });
  EXPECT_EQ(order, (std::vector<std::string>{"z=3", "a=2"}));
}

TEST(HashValueTest, AppliersRefuseAnotherTypeAndRewriteInBatches) {
  Keyspace ks;
  ks.Set("s", "string", kNoDeadline);
  Applied a = Apply(ks, {"HSET", "s", "f", "v"});
  EXPECT_FALSE(a.error.empty());
  EXPECT_FALSE(a.changed);
  EXPECT_TRUE(ks.Peek("s")->is_string());
  EXPECT_FALSE(Apply(ks, {"HDEL", "s", "f"}).error.empty());
  EXPECT_FALSE(Apply(ks, {"HDEL", "missing", "f"}).changed);

  EncodingLimits limits;
  for (int n : {1, 64, 65, 700}) {
    Keyspace k2;
    for (int i = 0; i < n; ++i) {
      Apply(k2, {"HSET", "h", "field" + std::to_string(i), std::to_string(i)}, limits);
    }
    CheckRewrite(*ObjectAt(k2, "h"), 2 * 64, limits);
    std::unique_ptr<Object> clone = ObjectAt(k2, "h")->Clone();
    EXPECT_TRUE(clone->Equals(*ObjectAt(k2, "h")));
    EXPECT_GT(clone->memory(), 0u);
  }
}

// ---------------------------------------------------------------- sets

TEST(SetValueTest, MatchesAStdSetThroughBothEncodings) {
  EncodingLimits limits;
  limits.set_max_intset_entries = 20;
  std::mt19937_64 rng(9);
  for (int round = 0; round < 20; ++round) {
    Keyspace ks;
    std::set<std::string> model;
    bool ever_hashtable = false;
    for (int step = 0; step < 300; ++step) {
      // Mostly integers (some not canonical: "012", "+3" are strings).
      std::string m;
      switch (rng() % 10) {
        case 0:
          m = "x" + std::to_string(rng() % 5);
          break;
        case 1:
          m = "0" + std::to_string(rng() % 5);
          break;
        default:
          m = std::to_string(static_cast<int64_t>(rng() % 60) - 30);
      }
      if (rng() % 3 == 0) {
        EXPECT_EQ(Apply(ks, {"SREM", "s", m}, limits).count, static_cast<int64_t>(model.erase(m)));
      } else {
        EXPECT_EQ(Apply(ks, {"SADD", "s", m}, limits).count, model.insert(m).second ? 1 : 0);
      }
      const auto* s = static_cast<const SetValue*>(ObjectAt(ks, "s"));
      if (model.empty()) {
        ASSERT_EQ(s, nullptr);
        ever_hashtable = false;  // the key went: a new set starts over
        continue;
      }
      ASSERT_NE(s, nullptr);
      ASSERT_EQ(s->size(), model.size());
      for (const std::string& x : model) EXPECT_TRUE(s->Contains(x)) << x;
      EXPECT_FALSE(s->Contains("nope"));
      if (s->encoding() == "hashtable") ever_hashtable = true;
      EXPECT_EQ(s->encoding() == "hashtable", ever_hashtable) << "never back to an intset";
    }
  }
}

TEST(SetValueTest, EncodingFollowsRedisRules) {
  EncodingLimits limits;
  limits.set_max_intset_entries = 3;
  Keyspace ks;
  Apply(ks, {"SADD", "a", "3", "1", "2"}, limits);
  EXPECT_EQ(ObjectAt(ks, "a")->encoding(), "intset");
  std::vector<std::string> order;
  static_cast<const SetValue*>(ObjectAt(ks, "a"))->ForEach([&](auto m) { order.emplace_back(m); });
  EXPECT_EQ(order, (std::vector<std::string>{"1", "2", "3"})) << "an intset is ascending";
  Apply(ks, {"SADD", "a", "4"}, limits);  // past set-max-intset-entries
  EXPECT_EQ(ObjectAt(ks, "a")->encoding(), "hashtable");
  Apply(ks, {"SADD", "b", "x"}, limits);  // a first member that is no integer
  EXPECT_EQ(ObjectAt(ks, "b")->encoding(), "hashtable");
  Apply(ks, {"SADD", "c", "1", "x"}, limits);  // converts at "x"
  EXPECT_EQ(ObjectAt(ks, "c")->encoding(), "hashtable");
  Apply(ks, {"SADD", "d", "9223372036854775807", "-9223372036854775808"}, limits);
  EXPECT_EQ(ObjectAt(ks, "d")->encoding(), "intset");
  Apply(ks, {"SADD", "e", "9223372036854775808"}, limits);  // past int64: a string
  EXPECT_EQ(ObjectAt(ks, "e")->encoding(), "hashtable");
  EXPECT_TRUE(static_cast<const SetValue*>(ObjectAt(ks, "d"))->Contains("-9223372036854775808"));
  EXPECT_FALSE(static_cast<const SetValue*>(ObjectAt(ks, "d"))->Contains("-09"));
}

TEST(SetValueTest, AppliersRefuseAnotherTypeAndRewriteInBatches) {
  Keyspace ks;
  ks.Set("s", "string", kNoDeadline);
  EXPECT_FALSE(Apply(ks, {"SADD", "s", "m"}).error.empty());
  EXPECT_FALSE(Apply(ks, {"SREM", "s", "m"}).error.empty());
  EXPECT_FALSE(Apply(ks, {"SREM", "missing", "m"}).changed);
  EXPECT_FALSE(Apply(ks, {"SADD", "t", "m", "m"}).error.size());
  EXPECT_FALSE(Apply(ks, {"SADD", "t", "m"}).changed) << "nothing new";

  EncodingLimits limits;
  for (int n : {1, 64, 65, 600}) {
    for (bool ints : {true, false}) {
      Keyspace k2;
      for (int i = 0; i < n; ++i) {
        Apply(k2, {"SADD", "s", (ints ? "" : "m") + std::to_string(i * 7 - 100)}, limits);
      }
      CheckRewrite(*ObjectAt(k2, "s"), 64, limits);
      std::unique_ptr<Object> clone = ObjectAt(k2, "s")->Clone();
      EXPECT_TRUE(clone->Equals(*ObjectAt(k2, "s")));
    }
  }
}

// ---------------------------------------------------------------- packed in the entry

// A small hash, set or sorted set is its image in its keyspace entry (one
// allocation); past kMaxImageBytes, or once a hashtable, it is boxed; shrunk
// back under, its next write packs it again. Its lease stays through every
// change of where it lives, and the entry's allocation is what MEMORY USAGE
// counts.
TEST(PackedInEntryTest, SmallValuesLiveInTheirEntryAndMoveOutPastTheLimit) {
  EncodingLimits limits;
  Keyspace ks;
  Apply(ks, {"HSET", "h", "field:0", "value:0"}, limits);
  ASSERT_TRUE(ks.SetDeadline("h", 1000000));
  const Keyspace::Entry* e = ks.Peek("h");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->packed_in_entry());
  for (int i = 1; i < 8; ++i) {
    Apply(ks, {"HSET", "h", "field:" + std::to_string(i), "value:" + std::to_string(i)}, limits);
  }
  e = ks.Peek("h");
  EXPECT_TRUE(e->packed_in_entry());
  // Eight 7-byte fields and values in one block (192 bytes from glibc's
  // malloc, with the bucket's pointer): boxed, the same hash takes three
  // blocks, 232 bytes as AllocationOf counts them (more as malloc rounds
  // them: the entry 48, the object 48, the listpack 160, and the bucket).
  EXPECT_LE(Keyspace::AllocationOf(*e), 200u) << "a small hash is one allocation";
  EXPECT_EQ(e->deadline, 1000000);

  // Grown past the image limit while still a listpack: boxed, same lease.
  const std::string wide(40, 'x');
  int added = 0;
  while (ks.Peek("h")->packed_in_entry()) {
    Apply(ks, {"HSET", "h", "wide:" + std::to_string(added++), wide}, limits);
  }
  e = ks.Peek("h");
  EXPECT_TRUE(e->boxed());
  EXPECT_EQ(e->object()->encoding(), "listpack");
  EXPECT_GT(static_cast<const HashValue*>(e->object())->size(), 8u);
  EXPECT_EQ(e->deadline, 1000000);
  // Shrunk under it: packed again by the write that shrank it.
  for (int i = 0; i < added; ++i) Apply(ks, {"HDEL", "h", "wide:" + std::to_string(i)}, limits);
  e = ks.Peek("h");
  EXPECT_TRUE(e->packed_in_entry());
  EXPECT_EQ(e->deadline, 1000000);
  const auto* h = static_cast<const HashValue*>(ObjectAt(ks, "h"));
  ASSERT_EQ(h->size(), 8u);
  EXPECT_EQ(h->Get("field:7").value_or(""), "value:7");

  // A hashtable is always boxed.
  Apply(ks, {"HSET", "h", "long", std::string(100, 'v')}, limits);
  EXPECT_TRUE(ks.Peek("h")->boxed());
  EXPECT_EQ(ks.Peek("h")->object()->encoding(), "hashtable");

  // Sets: an intset is packed; a string member makes it a boxed hashtable.
  for (int i = 0; i < 16; ++i) Apply(ks, {"SADD", "s", std::to_string(i * 1000)}, limits);
  e = ks.Peek("s");
  EXPECT_TRUE(e->packed_in_entry());
  // (80 bytes packed; boxed: 120, in three blocks.)
  EXPECT_LE(Keyspace::AllocationOf(*e), 96u) << "a small intset is one allocation";
  EXPECT_EQ(e->image().size(), 1u + 16 * 2);
  Apply(ks, {"SADD", "s", "70000"}, limits);  // widens to 4 bytes, still packed
  EXPECT_EQ(ks.Peek("s")->image().size(), 1u + 17 * 4);
  Apply(ks, {"SADD", "s", "m"}, limits);
  EXPECT_TRUE(ks.Peek("s")->boxed());
  EXPECT_EQ(ks.Peek("s")->object()->encoding(), "hashtable");
  EXPECT_TRUE(static_cast<const SetValue*>(ObjectAt(ks, "s"))->Contains("70000"));

  // The last element removed from a packed value removes the key.
  Apply(ks, {"SADD", "t", "1"}, limits);
  Apply(ks, {"SREM", "t", "1"}, limits);
  EXPECT_EQ(ks.Peek("t"), nullptr);
}

// A view reads the entry's bytes, and gives them back: destroying it frees
// nothing (ASan would see a free of memory inside the entry).
TEST(PackedInEntryTest, ViewsReadTheImageWithoutOwningIt) {
  Keyspace ks;
  Apply(ks, {"HSET", "h", "a", "1", "b", "2"});
  Apply(ks, {"SADD", "s", "5", "-3"});
  {
    ValueRef<HashValue> h(ks.Peek("h"));
    ASSERT_TRUE(h);
    EXPECT_EQ(h->size(), 2u);
    EXPECT_EQ(h->Get("b").value_or(""), "2");
    ValueRef<SetValue> s(ks.Peek("s"));
    std::vector<std::string> members;
    s->ForEach([&](std::string_view m) { members.emplace_back(m); });
    EXPECT_EQ(members, (std::vector<std::string>{"-3", "5"}));
    h.Reset(nullptr);
    EXPECT_FALSE(h);
  }
  EXPECT_EQ(ValueRef<HashValue>(ks.Peek("h"))->size(), 2u);
}

}  // namespace
}  // namespace latch
