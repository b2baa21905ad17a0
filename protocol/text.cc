#include "protocol/text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace latch {

std::optional<int64_t> ParseInt64(std::string_view s) {
  // Redis rejects anything of 21 characters or more before looking at it.
  if (s.empty() || s.size() >= 21) return std::nullopt;
  if (s == "0") return 0;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return std::nullopt;
  }
  // The first digit must be 1-9: this is what rules out "01" and "-0".
  if (s[i] < '1' || s[i] > '9') return std::nullopt;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c < '0' || c > '9') return std::nullopt;
    if (v > (UINT64_MAX / 10)) return std::nullopt;
    v *= 10;
    if (v > UINT64_MAX - static_cast<uint64_t>(c - '0')) return std::nullopt;
    v += static_cast<uint64_t>(c - '0');
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - v);
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> ParseDouble(std::string_view s) {
  if (s.empty() || s.size() > 64 || std::isspace(static_cast<unsigned char>(s[0]))) {
    return std::nullopt;
  }
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno == ERANGE || std::isnan(v)) return std::nullopt;
  return v;
}

namespace {

bool IsHexDigit(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return (AsciiLower(c) - 'a') + 10;
}

bool IsBlank(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

std::optional<std::vector<std::string>> SplitArgs(std::string_view line) {
  // sdssplitargs works on a C string: the first NUL ends the input.
  if (size_t nul = line.find('\0'); nul != std::string_view::npos) line = line.substr(0, nul);
  // at(i) returns '\0' past the end, which keeps the scanner below as simple
  // as the C original it mirrors.
  auto at = [&](size_t i) -> char { return i < line.size() ? line[i] : '\0'; };

  std::vector<std::string> words;
  size_t p = 0;
  while (true) {
    while (at(p) != '\0' && IsBlank(at(p))) ++p;
    if (at(p) == '\0') return words;

    std::string current;
    bool in_double = false, in_single = false, done = false;
    while (!done) {
      char c = at(p);
      if (in_double) {
        if (c == '\\' && at(p + 1) == 'x' && IsHexDigit(at(p + 2)) && IsHexDigit(at(p + 3))) {
          current.push_back(static_cast<char>(HexValue(at(p + 2)) * 16 + HexValue(at(p + 3))));
          p += 3;
        } else if (c == '\\' && at(p + 1) != '\0') {
          ++p;
          switch (at(p)) {
            case 'n':
              current.push_back('\n');
              break;
            case 'r':
              current.push_back('\r');
              break;
            case 't':
              current.push_back('\t');
              break;
            case 'b':
              current.push_back('\b');
              break;
            case 'a':
              current.push_back('\a');
              break;
            default:
              current.push_back(at(p));
              break;
          }
        } else if (c == '"') {
          // A closing quote must be followed by a blank or nothing at all.
          if (at(p + 1) != '\0' && !IsBlank(at(p + 1))) return std::nullopt;
          done = true;
        } else if (c == '\0') {
          return std::nullopt;  // unterminated quotes
        } else {
          current.push_back(c);
        }
      } else if (in_single) {
        if (c == '\\' && at(p + 1) == '\'') {
          ++p;
          current.push_back('\'');
        } else if (c == '\'') {
          if (at(p + 1) != '\0' && !IsBlank(at(p + 1))) return std::nullopt;
          done = true;
        } else if (c == '\0') {
          return std::nullopt;
        } else {
          current.push_back(c);
        }
      } else {
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            in_double = true;
            break;
          case '\'':
            in_single = true;
            break;
          default:
            current.push_back(c);
            break;
        }
      }
      if (at(p) != '\0') ++p;
    }
    words.push_back(std::move(current));
  }
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

void SanitizeErrorText(std::string& text) {
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
}

namespace {

bool GlobMatchImpl(const char* p, size_t plen, const char* s, size_t slen, bool nocase, int depth,
                   bool* skip_longer) {
  // Bound the recursion on patterns like "*****...": Redis does the same.
  if (depth > 1000) return false;
  auto lower = [&](char c) { return nocase ? AsciiLower(c) : c; };
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

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  out.append(buf, end);
}

}  // namespace latch
