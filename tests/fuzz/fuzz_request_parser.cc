// Fuzz target: the RESP request parser (protocol/request_parser.*), the code
// every byte a stranger sends goes through first.
//
// Input: a flags byte, a byte that seeds where the stream is cut into reads,
// then the bytes of the stream.
//   flags bit 0: unauthenticated limits (10 elements, 16 KiB bulks)
//         bit 1: strict framing (the append-only log's reader)
//         bit 2: a small proto-max-bulk-len (100 bytes)
//         bit 3: feed byte by byte instead of at random cuts
//
// Beyond "no crash and no sanitizer report", each run checks:
//  - resumability: the stream parsed in one piece and the same stream cut
//    into reads give the same requests and the same error (a read may end
//    anywhere, even inside "\r\n");
//  - consumed() is within the input and not zero, and every argument is a
//    view into the bytes of the request that was consumed;
//  - the limits hold: no multibulk request over the unauthenticated limits,
//    no bulk over proto-max-bulk-len, nothing inline in strict mode;
//  - an error is Redis's "ERR Protocol error: …", on one line.
// Every call gets a fresh copy of the unconsumed bytes, so a view the parser
// kept into an earlier buffer is a use-after-free that ASan reports.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/request_parser.h"

namespace {

using latch::resp::ParseLimits;
using latch::resp::RequestParser;

struct Outcome {
  std::vector<std::vector<std::string>> requests;
  std::string error;    // empty unless the stream ended in a protocol error
  size_t leftover = 0;  // bytes of an incomplete request at the end
};

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_request_parser: property violated: %s\n", what);
    std::abort();
  }
}

void CheckRequest(const RequestParser& p, std::string_view in, const ParseLimits& limits) {
  Check(p.consumed() > 0, "a request consumed no bytes");
  Check(p.consumed() <= in.size(), "consumed() beyond the input");
  if (limits.strict) Check(!p.inline_request(), "inline request accepted in strict mode");
  for (std::string_view a : p.args()) {
    if (p.inline_request()) {
      // Inline words are unescaped copies owned by the parser: they can only
      // be shorter than the line they came from.
      Check(a.size() < p.consumed(), "inline word longer than its line");
      continue;
    }
    Check(a.data() >= in.data() && a.data() + a.size() <= in.data() + p.consumed(),
          "argument outside the consumed request");
    Check(static_cast<int64_t>(a.size()) <= limits.max_bulk_len, "bulk over proto-max-bulk-len");
    if (limits.unauthenticated) {
      Check(static_cast<int64_t>(a.size()) <= latch::resp::kUnauthMaxBulkLen,
            "bulk over the unauthenticated limit");
    }
  }
  if (limits.unauthenticated && !p.inline_request()) {
    Check(static_cast<int64_t>(p.args().size()) <= latch::resp::kUnauthMaxElements,
          "multibulk over the unauthenticated limit");
  }
}

// Feeds `stream` to a parser in pieces ending at each of `cuts` (ascending,
// the last one being stream.size()), as a connection does.
Outcome Feed(std::string_view stream, const std::vector<size_t>& cuts, const ParseLimits& limits) {
  Outcome out;
  RequestParser parser;
  std::string pending;  // received, not consumed
  size_t fed = 0;
  for (size_t cut : cuts) {
    pending.append(stream.substr(fed, cut - fed));
    fed = cut;
    while (!pending.empty()) {
      std::unique_ptr<char[]> copy(new char[pending.size()]);
      std::memcpy(copy.get(), pending.data(), pending.size());
      std::string_view in(copy.get(), pending.size());
      RequestParser::Result r = parser.Parse(in, limits);
      if (r == RequestParser::Result::kNeedMore) break;
      if (r == RequestParser::Result::kError) {
        out.error = parser.error();
        Check(out.error.rfind("ERR Protocol error: ", 0) == 0, "error without Redis's prefix");
        Check(out.error.find_first_of("\r\n") == std::string::npos, "error text with CR or LF");
        return out;
      }
      CheckRequest(parser, in, limits);
      std::vector<std::string> args;
      for (std::string_view a : parser.args()) args.emplace_back(a);
      out.requests.push_back(std::move(args));
      pending.erase(0, parser.consumed());
    }
  }
  out.leftover = pending.size();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t flags = data[0];
  const uint8_t seed = data[1];
  std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);

  ParseLimits limits;
  limits.unauthenticated = flags & 1;
  limits.strict = flags & 2;
  if (flags & 4) limits.max_bulk_len = 100;

  Outcome whole = Feed(stream, {stream.size()}, limits);

  std::vector<size_t> cuts;
  if ((flags & 8) && stream.size() <= 2048) {
    for (size_t i = 1; i <= stream.size(); ++i) cuts.push_back(i);
  } else {
    std::minstd_rand rng(seed + 1u);
    size_t n = seed % 24;
    for (size_t i = 0; i < n && !stream.empty(); ++i) cuts.push_back(rng() % stream.size());
    cuts.push_back(stream.size());
    std::sort(cuts.begin(), cuts.end());
  }
  Outcome pieces = Feed(stream, cuts, limits);

  // The "too big" checks look at how much is buffered without a newline, so
  // they legitimately depend on how the stream was cut: compare only streams
  // that never reach them.
  if (stream.size() <= latch::resp::kMaxInlineSize) {
    Check(whole.requests == pieces.requests, "cutting the stream changed the requests");
    Check(whole.error == pieces.error, "cutting the stream changed the error");
    Check(whole.leftover == pieces.leftover, "cutting the stream changed the incomplete tail");
  }
  return 0;
}
