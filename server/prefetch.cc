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
constexpr uint64_t kMaxArgs = 64;

// "<digits>\r\n" at p: its value, and p past it; nullptr if it is not one
// (at most 10 digits, so no overflow).
inline const char* ReadCount(const char* p, const char* end, uint64_t& out) {
  // Most counts and lengths in a pipeline have one or two digits.
  if (end - p >= 4) {
    const unsigned d0 = static_cast<unsigned char>(p[0] - '0');
    const unsigned d1 = static_cast<unsigned char>(p[1] - '0');
    if (d0 <= 9 && p[1] == '\r' && p[2] == '\n') {
      out = d0;
      return p + 3;
    }
    if (d0 <= 9 && d1 <= 9 && p[2] == '\r' && p[3] == '\n') {
      out = d0 * 10 + d1;
      return p + 4;
    }
  }
  const char* digits = p;
  uint64_t v = 0;
  while (p < end && p - digits <= 10 && static_cast<unsigned char>(*p - '0') <= 9) {
    v = v * 10 + (*p++ - '0');
  }
  if (p == digits || p - digits > 10 || end - p < 2 || p[0] != '\r' || p[1] != '\n') {
    return nullptr;
  }
  out = v;
  return p + 2;
}

// One request's first arguments (the name, and where the registry's hints
// point), left uninitialised past argc.
struct Peeked {
  const char* arg[kArgsSeen];
  uint32_t len[kArgsSeen];
  uint32_t argc;
  std::string_view at(int i) const { return {arg[i], len[i]}; }
};

// The complete multibulk request at p (`*N\r\n$L\r\n<bytes>\r\n…`): its
// first arguments into out; returns p past it, or nullptr for anything else
// (an incomplete or inline request, a protocol error: the parser's business).
inline const char* ScanRequest(const char* p, const char* end, Peeked& out) {
  if (p >= end || *p != '*') return nullptr;
  uint64_t argc;
  p = ReadCount(p + 1, end, argc);
  if (p == nullptr || argc < 1 || argc > kMaxArgs) return nullptr;
  for (uint64_t i = 0; i < argc; ++i) {
    if (p >= end || *p != '$') return nullptr;
    uint64_t len;
    p = ReadCount(p + 1, end, len);
    if (p == nullptr || len + 2 > static_cast<uint64_t>(end - p)) return nullptr;
    if (i < kArgsSeen) {
      out.arg[i] = p;
      out.len[i] = static_cast<uint32_t>(len);
    }
    p += len + 2;
  }
  out.argc = static_cast<uint32_t>(argc);
  return p;
}

struct Lookup {
  std::string_view key, member;
  uint64_t key_hash = 0, member_hash = 0;
  const Dict* members = nullptr;
};

}  // namespace

PipelinePrefetch::Result PipelinePrefetch::Run(std::string_view input, const Keyspace& ks,
                                               const CommandRegistry& registry) {
  // The requests first, so that a lone one (no pipeline) costs only its scan.
  Peeked peeked[kMaxRequests];
  size_t requests = 0;
  const char* p = input.data();
  const char* const end = p + input.size();
  while (requests < kMaxRequests && (p = ScanRequest(p, end, peeked[requests])) != nullptr) {
    ++requests;
  }
  if (requests < 2) return {};
  Lookup lookups[kMaxRequests];
  size_t n = 0;
  // A pipeline usually repeats one command: look its name up once.
  std::string_view last_name;
  const CommandSpec* last = nullptr;
  for (size_t r = 0; r < requests; ++r) {
    const Peeked& req = peeked[r];
    const std::string_view name = req.at(0);
    const CommandSpec* spec = last != nullptr && name == last_name ? last : registry.Find(name);
    last_name = name;
    last = spec;
    const int k = spec != nullptr ? spec->prefetch_key : 0;
    if (k <= 0 || k >= static_cast<int>(req.argc) || k >= kArgsSeen) continue;
    Lookup& l = lookups[n++];
    l.key = req.at(k);
    const int m = spec->prefetch_member;
    if (m > 0 && m < static_cast<int>(req.argc) && m < kArgsSeen) l.member = req.at(m);
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
  return {requests, n};
}

}  // namespace latch
