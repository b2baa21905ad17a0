#include "protocol/text.h"

#include <cctype>
#include <cerrno>
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

bool ParseSmallIntegerDouble(std::string_view s, double* out) {
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) i = 1;
  const size_t digits = s.size() - i;
  if (digits == 0 || digits > 15) return false;  // 10^15 < 2^53: exact
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - '0';
    if (d > 9) return false;
    v = v * 10 + d;
  }
  *out = negative ? -static_cast<double>(v) : static_cast<double>(v);
  return true;
}

std::optional<double> ParseDouble(std::string_view s) {
  if (double fast; ParseSmallIntegerDouble(s, &fast)) return fast;
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

std::optional<double> ParseDoubleArg(std::string_view s) {
  if (double fast; ParseSmallIntegerDouble(s, &fast)) return fast;
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || std::isnan(v)) return std::nullopt;
  // Subnormal results (ERANGE, but neither infinite nor zero) are accepted.
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return std::nullopt;
  return v;
}

std::optional<long double> ParseLongDouble(std::string_view s) {
  constexpr size_t kMaxChars = 5 * 1024;  // Redis's MAX_LONG_DOUBLE_CHARS
  if (s.empty() || s.size() >= kMaxChars || std::isspace(static_cast<unsigned char>(s[0]))) {
    return std::nullopt;
  }
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  long double v = std::strtold(copy.c_str(), &end);
  // (A NUL inside stops strtold short of the end: rejected too.)
  if (end != copy.c_str() + copy.size() || std::isnan(v)) return std::nullopt;
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return std::nullopt;
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

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  out.append(buf, end);
}

}  // namespace latch
