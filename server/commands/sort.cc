// SORT and SORT_RO: the elements of a list, set or sorted set, sorted as
// numbers (or, with ALPHA, as strings), by themselves or by the values other
// keys hold (BY weight_* or BY obj_*->field), optionally only a LIMIT
// window, optionally replaced by other keys' values (GET pattern, GET # for
// the element itself), answered or stored as a list (STORE) — Redis 7.0's
// sort.c, option for option and order for order.
//
// How it goes: parse every option; load the elements (Load below: the one
// place that knows the types SORT reads); give each its weight unless BY
// names a constant (then nothing is sorted and a list or sorted set keeps
// its own order); sort; answer or store the window.
//
// Orders that clients see, as in Redis: numbers compare as doubles, equal
// ones by their bytes; ALPHA compares as strcoll in the C locale (bytes up
// to a NUL), or by all their bytes with STORE; ties that Redis leaves to
// its sort keep the order the elements were loaded in (glibc's qsort, which
// Redis calls, is a stable merge sort). A set with a constant BY is
// answered in its own order, but sorted ALPHA when stored (so the stored
// list does not depend on the set's layout).
//
// The lock rule: SORT … STORE of a non-empty result creates a value, so
// SORT is flagged kLease and asks ctx.AdmitGrant (the stored list has no
// lease) before it writes; an empty result only deletes the destination.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/acl/users.h"
#include "server/commands/common.h"
#include "server/types/hash.h"
#include "server/types/list.h"
#include "server/types/set.h"
#include "server/types/zset.h"

namespace latch::commands {

namespace {

struct SortOptions {
  bool desc = false;
  bool alpha = false;
  int64_t limit_start = 0;
  int64_t limit_count = -1;
  std::optional<std::string_view> by;  // the BY pattern
  bool dont_sort = false;              // BY a pattern without '*'
  std::vector<std::string_view> gets;  // GET patterns, in order
  std::optional<std::string_view> store;
};

// Parses SORT's options (argv[2] on) as Redis does: words in any order,
// case-insensitive, the last of a kind winning; STORE only for SORT.
std::optional<SortOptions> ParseOptions(CommandContext& ctx, bool read_only) {
  SortOptions o;
  const auto& argv = ctx.argv;
  // BY and GET patterns read keys no ACL check can name in advance: Redis
  // allows them only to a user who may read every key.
  const bool all_keys =
      ctx.acl().acl_users().Of(ctx.session).AllKeysFor(ctx.cmd, argv, acl::kPermRead);
  for (size_t j = 2; j < argv.size(); ++j) {
    const size_t left = argv.size() - j - 1;
    std::string_view w = argv[j];
    if (IsWord(w, "ASC")) {
      o.desc = false;
    } else if (IsWord(w, "DESC")) {
      o.desc = true;
    } else if (IsWord(w, "ALPHA")) {
      o.alpha = true;
    } else if (IsWord(w, "LIMIT") && left >= 2) {
      auto start = IntArgOrReply(ctx, argv[j + 1]);
      if (!start) return std::nullopt;
      auto count = IntArgOrReply(ctx, argv[j + 2]);
      if (!count) return std::nullopt;
      o.limit_start = *start;
      o.limit_count = *count;
      j += 2;
    } else if (!read_only && IsWord(w, "STORE") && left >= 1) {
      o.store = argv[++j];
    } else if (IsWord(w, "BY") && left >= 1) {
      o.by = argv[++j];
      // A constant (no '*', as a C string): nothing to weigh, nothing to sort.
      o.dont_sort = UpToNul(*o.by).find('*') == std::string_view::npos;
      if (!o.dont_sort && !all_keys) {
        ctx.reply.Error("ERR BY option of SORT denied due to insufficient ACL permissions.");
        return std::nullopt;
      }
    } else if (IsWord(w, "GET") && left >= 1) {
      if (!all_keys) {
        ctx.reply.Error("ERR GET option of SORT denied due to insufficient ACL permissions.");
        return std::nullopt;
      }
      o.gets.push_back(argv[++j]);
    } else {
      ctx.reply.Error(kSyntaxError);
      return std::nullopt;
    }
  }
  return o;
}

// lookupKeyByPattern: the value `pattern` names for `element`. "#" is the
// element itself; otherwise the first '*' is replaced by the element, and
// a "->field" after it names a field of the hash at that key. Nothing (a
// missing key, another type, a pattern without '*') is nullopt.
std::optional<std::string> ValueByPattern(CommandContext& ctx, std::string_view pattern,
                                          std::string_view element) {
  const std::string_view spat = UpToNul(pattern);
  if (spat == "#") return std::string(element);
  const size_t star = spat.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  // "->" after the '*', followed by at least one byte: a hash field.
  size_t arrow = spat.find("->", star + 1);
  std::string_view field;
  if (arrow != std::string_view::npos && arrow + 2 < spat.size()) {
    field = pattern.substr(arrow + 2);
  } else {
    arrow = std::string_view::npos;
  }
  const std::string_view postfix = pattern.substr(
      star + 1, (arrow == std::string_view::npos ? pattern.size() : arrow) - star - 1);
  std::string key;
  key.reserve(star + element.size() + postfix.size());
  key.append(pattern.substr(0, star)).append(element).append(postfix);
  const Keyspace::Entry* e = FindForRead(ctx, key);
  if (e == nullptr) return std::nullopt;
  if (arrow != std::string_view::npos) {
    if (e->type() != ValueType::kHash) return std::nullopt;
    auto v = ValueRef<HashValue>(e)->Get(field);  // (the entry's bytes, not the ref's)
    if (!v) return std::nullopt;
    return std::string(*v);
  }
  if (!e->is_string()) return std::nullopt;
  return std::string(e->value());
}

// One element being sorted: itself, and its weight (a number, or with
// ALPHA and BY the string it is compared by; none when BY found nothing).
struct Item {
  std::string element;
  double score = 0;
  std::optional<std::string> by;
};

// compareStringObjects: bytes, then length.
int CompareBinary(std::string_view a, std::string_view b) {
  const int c = std::memcmp(a.data(), b.data(), std::min(a.size(), b.size()));
  if (c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// strcoll in the C locale: bytes up to the first NUL of each.
int CompareCollate(std::string_view a, std::string_view b) {
  return CompareBinary(UpToNul(a), UpToNul(b));
}

// strtod as Redis calls it: the whole C string must be the number (leading
// blanks allowed), neither out of range nor NaN.
bool ParseScore(const std::string& s, double* out) {
  errno = 0;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*out);
}

// Loads the elements of the value to sort, in its own order (a set's
// layout; a list's head to tail; a sorted set's dict order), or for a list
// or sorted set not being sorted, only the window [start, end] in its
// order (reversed with DESC). Returns false for a type SORT cannot read.
bool Load(const Keyspace::Entry& e, std::vector<Item>* out) {
  switch (e.type()) {
    case ValueType::kSet: {
      const ValueRef<SetValue> s(&e);
      out->reserve(s->size());
      s->ForEach([&](std::string_view m) {
        Item it;
        it.element = std::string(m);
        out->push_back(std::move(it));
      });
      return true;
    }
    case ValueType::kList: {
      const auto* l = static_cast<const ListValue*>(e.object());
      out->reserve(l->size());
      for (auto c = l->Head(); c.valid(); c.Next()) {
        Item it;
        it.element = std::string(c.value());
        out->push_back(std::move(it));
      }
      return true;
    }
    case ValueType::kZSet: {
      const ValueRef<ZSetValue> z(&e);
      out->reserve(z->size());
      for (auto i = z->First(); i.valid(); i.Next()) {
        Item it;
        it.element = std::string(i.member());
        out->push_back(std::move(it));
      }
      return true;
    }
    default:
      return false;
  }
}

// The destination of SORT … STORE becomes the list `items`: DEL, then
// RPUSH records of at most 64 items, one unit. An empty result only
// deletes it. Replies the number of items, then sends Redis's events:
// "sortstore" (class l) for a stored list — after "new" when the
// destination did not exist; an existing one is overwritten, not created —
// or "del" when an empty result removed a key.
void StoreList(CommandContext& ctx, std::string_view dst, const std::vector<std::string>& items) {
  // Storing data is a grant (the restart quarantine refuses it); an empty
  // result only deletes, a release. RPUSH in batches, as a rewrite writes a
  // list.
  if (!items.empty() && !ctx.AdmitGrant(kNoDeadline)) return;
  constexpr size_t kBatch = 64;
  bool existed = false;
  {
    Store::Atomic atomic(ctx.store);
    existed = ctx.store.Find(dst, ctx.now) != nullptr;
    if (existed) ctx.store.Delete(dst);
    Store::Overwriting overwriting(ctx.store, dst, existed);
    std::vector<std::string_view> batch;
    for (size_t i = 0; i < items.size(); i += kBatch) {
      batch.assign(items.begin() + static_cast<std::ptrdiff_t>(i),
                   items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), i + kBatch)));
      ctx.store.Apply(aof::Op::kRPush, dst, batch, ctx.now);
    }
  }
  ctx.reply.Int(static_cast<int64_t>(items.size()));
  if (!items.empty()) {
    ctx.Notify(kNotifyList, "sortstore", dst);
  } else if (existed) {
    ctx.Notify(kNotifyGeneric, "del", dst);
  }
}

void SortGeneric(CommandContext& ctx, bool read_only) {
  auto opts = ParseOptions(ctx, read_only);
  if (!opts) return;
  const Keyspace::Entry* e = FindForRead(ctx, ctx.argv[1]);
  std::vector<Item> items;
  if (e != nullptr && !Load(*e, &items)) {
    ctx.reply.Error(kWrongType);
    return;
  }
  bool alpha = opts->alpha;
  bool dont_sort = opts->dont_sort;
  std::optional<std::string_view> by = opts->by;
  // A set's own order depends on its layout: stored, it is sorted ALPHA
  // instead, so the stored list is the same on every server.
  if (dont_sort && e != nullptr && e->type() == ValueType::kSet && opts->store) {
    dont_sort = false;
    alpha = true;
    by.reset();
  }
  // A list or sorted set not sorted comes in its own order, from the other
  // end with DESC (Redis walks it backwards); LIMIT then takes its window.
  if (dont_sort && e != nullptr && opts->desc &&
      (e->type() == ValueType::kList || e->type() == ValueType::kZSet)) {
    std::reverse(items.begin(), items.end());
  }
  const auto len = static_cast<int64_t>(items.size());
  int64_t start = std::min(std::max<int64_t>(opts->limit_start, 0), len);
  const int64_t count = std::min(std::max<int64_t>(opts->limit_count, -1), len);
  int64_t end = count < 0 ? len - 1 : start + count - 1;
  if (start >= len) {
    start = len - 1;
    end = len - 2;
  }
  if (end >= len) end = len - 1;

  bool not_a_number = false;
  if (!dont_sort) {
    for (Item& it : items) {
      std::optional<std::string> weight;
      if (by) {
        weight = ValueByPattern(ctx, *by, it.element);
        if (!weight) continue;  // nothing there: 0, or no string to compare
      }
      if (alpha) {
        if (by) it.by = std::move(weight);
      } else if (!ParseScore(by ? *weight : it.element, &it.score)) {
        not_a_number = true;
      }
    }
    const bool stored = opts->store.has_value();
    const bool desc = opts->desc;
    auto cmp = [&](const Item& a, const Item& b) {
      int c;
      if (!alpha) {
        c = a.score > b.score ? 1 : (a.score < b.score ? -1 : CompareBinary(a.element, b.element));
      } else if (by) {
        if (!a.by || !b.by) {
          c = a.by.has_value() == b.by.has_value() ? 0 : (!a.by ? -1 : 1);
        } else {
          c = stored ? CompareBinary(*a.by, *b.by) : CompareCollate(*a.by, *b.by);
        }
      } else {
        c = stored ? CompareBinary(a.element, b.element) : CompareCollate(a.element, b.element);
      }
      return (desc ? -c : c) < 0;
    };
    std::stable_sort(items.begin(), items.end(), cmp);
  }

  if (not_a_number) {
    ctx.reply.Error("ERR One or more scores can't be converted into double");
    return;
  }
  const int64_t window = end - start + 1;
  const size_t per = opts->gets.empty() ? 1 : opts->gets.size();
  if (!opts->store) {
    ctx.reply.Array(static_cast<size_t>(window) * per);
    for (int64_t j = start; j <= end; ++j) {
      const Item& it = items[static_cast<size_t>(j)];
      if (opts->gets.empty()) ctx.reply.Bulk(it.element);
      for (std::string_view g : opts->gets) {
        auto v = ValueByPattern(ctx, g, it.element);
        if (v) {
          ctx.reply.Bulk(*v);
        } else {
          ctx.reply.Null();
        }
      }
    }
    return;
  }
  // STORE: the window (or the values its GETs name, "" for none) becomes a
  // list at the destination.
  std::vector<std::string> result;
  result.reserve(static_cast<size_t>(window) * per);
  for (int64_t j = start; j <= end; ++j) {
    Item& it = items[static_cast<size_t>(j)];
    if (opts->gets.empty()) result.push_back(std::move(it.element));
    for (std::string_view g : opts->gets) {
      result.push_back(ValueByPattern(ctx, g, it.element).value_or(std::string()));
    }
  }
  StoreList(ctx, *opts->store, result);
}

}  // namespace

void Sort(CommandContext& ctx) {
  SortGeneric(ctx, /*read_only=*/false);
}

void SortRo(CommandContext& ctx) {
  SortGeneric(ctx, /*read_only=*/true);
}

void RegisterSort(CommandRegistry& r) {
  using namespace spec;
  auto by = Optional(Pattern("pattern", "BY"));
  auto limit = Optional(Block("offset_count", {Int("offset"), Int("count")}, "LIMIT"));
  auto get = Optional(Multiple(Pattern("pattern", "GET")));
  auto order = Optional(OneOf("order", {Token("asc", "ASC"), Token("desc", "DESC")}));
  auto sorting = Optional(Token("sorting", "ALPHA"));
  ArgDoc destination = Key("destination");
  destination.key_spec_index = 1;
  destination.token = "STORE";
  const std::string complexity =
      "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the "
      "number of returned elements. When the elements are not sorted, complexity is O(N).";
  r.Add(KeySpecs(
      Cmd("sort", -2, kWrite | kCmdDenyOom | kLease, Sort,
          {"write", "set", "sortedset", "list", "slow", "dangerous"},
          {"Sort the elements in a list, set or sorted set", "1.0.0", "generic", complexity},
          {Key("key"), by, limit, get, order, sorting, Optional(destination)}),
      1, 1, 1,
      {RangeSpec({"RO", "access"}, 1), UnknownSpec({"RO", "access"}),
       UnknownSpec({"OW", "update"})}));
  r.Add(KeySpecs(
      Cmd("sort_ro", -2, kRead, SortRo, {"read", "set", "sortedset", "list", "slow", "dangerous"},
          {"Sort the elements in a list, set or sorted set. Read-only variant of SORT.", "7.0.0",
           "generic", complexity},
          {Key("key"), by, limit, get, order, sorting}),
      1, 1, 1, {RangeSpec({"RO", "access"}, 1), UnknownSpec({"RO", "access"})}));
}

}  // namespace latch::commands
