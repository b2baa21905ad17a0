// Sorted-set scores as text and as bytes: how a score prints (Redis's %.17g
// rules), how the range arguments of ZRANGEBYSCORE / ZRANGEBYLEX parse, and
// how a listpack stores a score (zset.cc keeps the set itself).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "protocol/text.h"
#include "server/types/zset.h"

namespace latch {

// ---------------------------------------------------------------- scores

namespace {

// Redis's double2ll: a whole number of at most 2^62 in magnitude, which a
// long long holds exactly.
bool WholeScore(double d, int64_t* out) {
  if (d < static_cast<double>(-INT64_MAX / 2) || d > static_cast<double>(INT64_MAX / 2)) {
    return false;
  }
  const auto ll = static_cast<int64_t>(d);
  if (static_cast<double>(ll) != d) return false;
  *out = ll;
  return true;
}

std::string G17(double d) {
  char buf[64];
  int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  return std::string(buf, static_cast<size_t>(n));
}

// strtod of the argument as a C string, as zslParseRange reads an end.
bool ParseRangeEnd(std::string_view arg, double* out, bool* exclusive) {
  *exclusive = !arg.empty() && arg[0] == '(';
  if (*exclusive) arg.remove_prefix(1);
  if (ParseSmallIntegerDouble(UpToNul(arg), out)) return true;
  std::string c(UpToNul(arg));
  char* end = nullptr;
  *out = std::strtod(c.c_str(), &end);
  return *end == '\0' && !std::isnan(*out);
}

bool ParseLexBound(std::string_view arg, LexBound* out) {
  if (arg.empty()) return false;
  switch (arg[0]) {
    case '+':
    case '-':
      // (Compared as a C string: "+" followed by a NUL is "+".)
      if (arg.size() > 1 && arg[1] != '\0') return false;
      out->kind = arg[0] == '-' ? LexBound::kMinusInf : LexBound::kPlusInf;
      out->exclusive = true;
      return true;
    case '(':
    case '[':
      out->kind = LexBound::kValue;
      out->exclusive = arg[0] == '(';
      out->value.assign(arg.substr(1));
      return true;
    default:
      return false;
  }
}

// Redis's sdscmplex: the two infinities are below and above every string.
int CompareBounds(const LexBound& a, const LexBound& b) {
  if (a.kind == b.kind && a.kind != LexBound::kValue) return 0;
  if (a.kind == LexBound::kMinusInf || b.kind == LexBound::kPlusInf) return -1;
  if (a.kind == LexBound::kPlusInf || b.kind == LexBound::kMinusInf) return 1;
  return a.value.compare(b.value);
}

}  // namespace

std::string FormatScore(double score) {
  if (std::isinf(score)) return score > 0 ? "inf" : "-inf";
  if (score == 0) return std::signbit(score) ? "-0" : "0";
  int64_t ll;
  if (WholeScore(score, &ll)) {
    std::string s;
    AppendInt(s, ll);
    return s;
  }
  return G17(score);
}

std::string ScanScoreText(double score, bool packed) {
  if (packed) return FormatScore(score);
  if (std::isinf(score)) return score > 0 ? "inf" : "-inf";
  char buf[80];
  int n = std::snprintf(buf, sizeof(buf), "%.17Lg", static_cast<long double>(score));
  return std::string(buf, static_cast<size_t>(n));
}

std::optional<ScoreRange> ParseScoreRange(std::string_view min, std::string_view max) {
  ScoreRange r;
  if (!ParseRangeEnd(min, &r.min, &r.minex) || !ParseRangeEnd(max, &r.max, &r.maxex)) {
    return std::nullopt;
  }
  return r;
}

bool LexRange::AboveMin(std::string_view v) const {
  switch (min.kind) {
    case LexBound::kMinusInf:
      return true;
    case LexBound::kPlusInf:
      return false;
    case LexBound::kValue:
      break;
  }
  const int cmp = v.compare(min.value);
  return min.exclusive ? cmp > 0 : cmp >= 0;
}

bool LexRange::BelowMax(std::string_view v) const {
  switch (max.kind) {
    case LexBound::kMinusInf:
      return false;
    case LexBound::kPlusInf:
      return true;
    case LexBound::kValue:
      break;
  }
  const int cmp = v.compare(max.value);
  return max.exclusive ? cmp < 0 : cmp <= 0;
}

bool LexRange::Empty() const {
  const int cmp = CompareBounds(min, max);
  return cmp > 0 || (cmp == 0 && (min.exclusive || max.exclusive));
}

std::optional<LexRange> ParseLexRange(std::string_view min, std::string_view max) {
  LexRange r;
  if (!ParseLexBound(min, &r.min) || !ParseLexBound(max, &r.max)) return std::nullopt;
  return r;
}

// ---------------------------------------------------------------- listpack scores

namespace zset_detail {

// A listpack score: a whole number of at most 2^55 as a little-endian
// two's-complement integer of 0 to 7 bytes (0 is no bytes), anything else
// as the 8 bytes of the double.
constexpr int64_t kPackedIntLimit = int64_t{1} << 55;

size_t EncodePackedScore(double d, char out[8]) {
  int64_t ll;
  if (WholeScore(d, &ll) && ll < kPackedIntLimit && ll >= -kPackedIntLimit) {
    // The fewest bytes whose sign extension gives ll back.
    size_t n = 0;
    if (ll != 0) {
      n = 1;
      while (n < 7 && (ll < -(int64_t{1} << (8 * n - 1)) || ll >= (int64_t{1} << (8 * n - 1)))) ++n;
    }
    const auto u = static_cast<uint64_t>(ll);
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<char>((u >> (8 * i)) & 0xff);
    return n;
  }
  std::memcpy(out, &d, 8);
  return 8;
}

double DecodePackedScore(std::string_view b) {
  if (b.size() == 8) {
    double d;
    std::memcpy(&d, b.data(), 8);
    return d;
  }
  if (b.empty()) return 0;
  uint64_t u = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    u |= static_cast<uint64_t>(static_cast<unsigned char>(b[i])) << (8 * i);
  }
  const int shift = 64 - 8 * static_cast<int>(b.size());
  return static_cast<double>(static_cast<int64_t>(u << shift) >> shift);
}

}  // namespace zset_detail

}  // namespace latch
