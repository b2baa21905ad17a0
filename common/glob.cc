// Redis's glob matching (stringmatchlen), used by KEYS, SCAN MATCH,
// CONFIG GET and COMMAND LIST FILTERBY.
#include "common/glob.h"

#include <utility>

namespace latch {

namespace {

bool GlobMatchImpl(const char* p, size_t plen, const char* s, size_t slen, bool nocase, int depth,
                   bool* skip_longer) {
  // Bound the recursion on patterns like "*****...": Redis does the same.
  if (depth > 1000) return false;
  auto lower = [&](char c) {
    return nocase && c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
  };
  while (plen > 0 && slen > 0) {
    switch (p[0]) {
      case '*':
        while (plen > 1 && p[1] == '*') ++p, --plen;
        if (plen == 1) return true;
        while (slen > 0) {
          if (GlobMatchImpl(p + 1, plen - 1, s, slen, nocase, depth + 1, skip_longer)) return true;
          if (*skip_longer) return false;
          ++s, --slen;
        }
        // The rest of the pattern matches no suffix of the string, so letting
        // an earlier '*' swallow more cannot help either: stop every caller
        // now instead of retrying exponentially many splits (Redis's fix for
        // CVE-2022-36021).
        *skip_longer = true;
        return false;
      case '?':
        ++s, --slen;
        break;
      case '[': {
        ++p, --plen;
        bool negate = plen > 0 && p[0] == '^';
        if (negate) ++p, --plen;
        bool match = false;
        while (true) {
          if (plen == 0) {
            // Unterminated class: Redis treats the '[' ... as a class to the end.
            break;
          }
          if (p[0] == '\\' && plen >= 2) {
            ++p, --plen;
            if (p[0] == s[0]) match = true;
          } else if (p[0] == ']') {
            break;
          } else if (plen >= 3 && p[1] == '-') {
            // Like Redis: order the ends first, lower-case them after.
            char start = p[0], end = p[2];
            if (start > end) std::swap(start, end);
            start = lower(start), end = lower(end);
            char c = lower(s[0]);
            if (c >= start && c <= end) match = true;
            p += 2, plen -= 2;
          } else if (lower(p[0]) == lower(s[0])) {
            match = true;
          }
          ++p, --plen;
        }
        if (plen == 0) {
          // Keep p pointing at the last character like Redis so the outer
          // loop's advance ends the pattern.
          --p, ++plen;
        }
        if (negate) match = !match;
        if (!match) return false;
        ++s, --slen;
        break;
      }
      case '\\':
        if (plen >= 2) ++p, --plen;
        [[fallthrough]];
      default:
        if (lower(p[0]) != lower(s[0])) return false;
        ++s, --slen;
        break;
    }
    ++p, --plen;
    if (slen == 0) {
      while (plen > 0 && p[0] == '*') ++p, --plen;
      break;
    }
  }
  return plen == 0 && slen == 0;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase) {
  bool skip_longer = false;
  return GlobMatchImpl(pattern.data(), pattern.size(), str.data(), str.size(), nocase, 0,
                       &skip_longer);
}

}  // namespace latch
