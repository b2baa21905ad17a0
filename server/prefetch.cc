#include "server/prefetch.h"

#include <cstdint>

#include "server/command.h"
#include "server/keyspace.h"
#include "server/types/dict.h"

namespace latch {

namespace {

// The arguments the prefetch reads: the name, and positions 1 to 3 (where
// the registry's hints point).
constexpr int kArgsSeen = 4;
// A request with more arguments than this ends the look-ahead: walking a
// long one twice (here and in the parser) would cost more than it saves.
constexpr int64_t kMaxArgs = 64;

// "<digits>\r\n" at in[pos]; moves pos past it.
bool ReadCount(std::string_view in, size_t& pos, int64_t& out) {
  int64_t v = 0;
  size_t i = pos;
  const size_t end = in.size();
  while (i < end && in[i] >= '0' && in[i] <= '9' && i - pos < 10) v = v * 10 + (in[i++] - '0');
  if (i == pos || end - i < 2 || in[i] != '\r' || in[i + 1] != '\n') return false;
  pos = i + 2;
  out = v;
  return true;
}

// The complete multibulk request at in[pos] (`*N\r\n$L\r\n<bytes>\r\n…`):
// its first arguments into args, pos past it. False for anything else (an
// incomplete or inline request, a protocol error: the parser's business).
bool ScanRequest(std::string_view in, size_t& pos, std::string_view (&args)[kArgsSeen],
                 int64_t& argc) {
  if (pos >= in.size() || in[pos] != '*') return false;
  ++pos;
  if (!ReadCount(in, pos, argc) || argc < 1 || argc > kMaxArgs) return false;
  for (int64_t i = 0; i < argc; ++i) {
    if (pos >= in.size() || in[pos] != '$') return false;
    ++pos;
    int64_t len;
    if (!ReadCount(in, pos, len)) return false;
    const size_t left = in.size() - pos;
    if (static_cast<uint64_t>(len) + 2 > left) return false;
    if (i < kArgsSeen) args[i] = in.substr(pos, static_cast<size_t>(len));
    pos += static_cast<size_t>(len) + 2;
  }
  return true;
}

struct Lookup {
  std::string_view key, member;
  uint64_t key_hash = 0, member_hash = 0;
  const Dict* members = nullptr;
};

}  // namespace

size_t PipelinePrefetch::Run(std::string_view input, const Keyspace& ks,
                             const CommandRegistry& registry) {
  // The requests first, so that a lone one (no pipeline) costs only its scan.
  std::string_view args[kMaxRequests][kArgsSeen];
  int64_t argc[kMaxRequests];
  size_t requests = 0;
  for (size_t pos = 0; requests < kMaxRequests; ++requests) {
    if (!ScanRequest(input, pos, args[requests], argc[requests])) break;
  }
  if (requests < 2) return 0;
  Lookup lookups[kMaxRequests];
  size_t n = 0;
  // A pipeline usually repeats one command: look its name up once.
  std::string_view last_name;
  const CommandSpec* last = nullptr;
  for (size_t r = 0; r < requests; ++r) {
    const std::string_view name = args[r][0];
    const CommandSpec* spec = last != nullptr && name == last_name ? last : registry.Find(name);
    last_name = name;
    last = spec;
    const int k = spec != nullptr ? spec->prefetch_key : 0;
    if (k <= 0 || k >= argc[r] || k >= kArgsSeen) continue;
    Lookup& l = lookups[n++];
    l.key = args[r][k];
    const int m = spec->prefetch_member;
    if (m > 0 && m < argc[r] && m < kArgsSeen) l.member = args[r][m];
    l.key_hash = Keyspace::HashOf(l.key);
  }
  // Each step's loads overlap with the others of the same step.
  for (size_t i = 0; i < n; ++i) ks.PrefetchBucket(lookups[i].key_hash);
  for (size_t i = 0; i < n; ++i) ks.PrefetchChain(lookups[i].key_hash);
  bool any_members = false;
  for (size_t i = 0; i < n; ++i) {
    Lookup& l = lookups[i];
    if (l.member.data() == nullptr) continue;
    const Keyspace::Entry* e = ks.PeekQuiet(l.key, l.key_hash);
    if (e == nullptr || !e->boxed()) continue;
    const Dict* d = e->object()->members();
    if (d == nullptr) continue;
    l.members = d;
    l.member_hash = Dict::HashOf(l.member);
    d->PrefetchBucket(l.member_hash);
    any_members = true;
  }
  if (any_members) {
    for (size_t i = 0; i < n; ++i) {
      if (lookups[i].members != nullptr) lookups[i].members->PrefetchChain(lookups[i].member_hash);
    }
  }
  return n;
}

}  // namespace latch
