#include "server/diagnostics.h"

#include <algorithm>
#include <random>

namespace latch {

namespace {

std::string RandomHex(size_t n) {
  std::random_device rd;
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out.push_back(kHex[rd() % 16]);
  return out;
}

}  // namespace

Diagnostics::Diagnostics(int64_t start_mono_ms)
    : run_id_(RandomHex(40)), replid_(RandomHex(40)), start_mono_ms_(start_mono_ms) {}

void Diagnostics::CountErrorReply(std::string_view text) {
  ++stats_.total_error_replies;
  // The error's code is its first word, as Redis counts them (up to 32
  // characters; "ERR" when there is none).
  std::string_view code = "ERR";
  size_t space = text.substr(0, 32).find(' ');
  if (space != std::string_view::npos && space > 0) code = text.substr(0, space);
  auto it = stats_.errors.find(code);
  if (it == stats_.errors.end()) it = stats_.errors.emplace(std::string(code), 0).first;
  ++it->second;
}

void Diagnostics::CompleteMemory(ServerControl::MemoryFigures& m) {
  // Not counted (a sanitizer's allocator: used_memory.h): the resident
  // size at start-up plus what the data structures say they hold. The
  // resident size itself would not shrink when keys are deleted (a
  // sanitizer keeps freed memory in quarantine), and maxmemory's eviction
  // could never get below its limit.
  if (m.used == 0) {
    m.used = startup_memory_ == 0 ? m.rss : startup_memory_ + m.dataset + m.clients + m.log_buffer;
  }
  peak_memory_ = std::max(peak_memory_, m.used);
  m.peak = peak_memory_;
  m.startup = startup_memory_;
}

}  // namespace latch
