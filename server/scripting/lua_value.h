// The little of Lua's value model the known lock scripts need, so their
// native equivalents compute exactly what the scripts compute on Redis 7.0:
// a string or nil (KEYS/ARGV past the end are nil), Lua 5.1's string to
// number conversion, a value passed to redis.call() (a string, a number
// printed with %.17g, or nil, which Redis refuses), and Lua's `==` between
// what redis.call("GET") returned and a string.
#pragma once

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/reply_parser.h"

namespace latch::scripting {

using Str = std::optional<std::string_view>;  // a Lua string, or nil

// Lua 5.1's string → number conversion (luaO_str2d), used by tonumber() and
// by arithmetic on strings: strtod (so "1e3", " 10 ", "0x10", "inf" are
// numbers), hexadecimal through strtoul, trailing spaces allowed. Lua reads
// the string as a C string, so it stops at the first NUL byte.
inline std::optional<double> LuaToNumber(Str s) {
  if (!s) return std::nullopt;
  std::string c(s->substr(0, s->find('\0')));
  const char* p = c.c_str();
  char* end = nullptr;
  double v = std::strtod(p, &end);
  if (end == p) return std::nullopt;
  if (*end == 'x' || *end == 'X') v = static_cast<double>(std::strtoul(p, &end, 16));
  while (*end != '\0' && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (*end != '\0') return std::nullopt;
  return v;
}

// A value passed to redis.call(): a Lua string, a Lua number or nil (which
// Redis refuses: "Lua redis lib command arguments must be strings or
// integers").
class LuaArg {
 public:
  // (A literal: the command names of the known scripts' calls.)
  LuaArg(const char* s) : kind_(Kind::kString), str_(s), literal_(true) {}
  LuaArg(std::string_view s) : kind_(Kind::kString), str_(s) {}
  LuaArg(Str s) : kind_(s ? Kind::kString : Kind::kNil), str_(s.value_or("")) {}
  LuaArg(std::optional<double> n) : kind_(n ? Kind::kNumber : Kind::kNil), num_(n.value_or(0)) {}

  bool nil() const { return kind_ == Kind::kNil; }
  // Made from a `const char*`: in the known scripts always a string
  // literal, whose address the gate may cache a lookup by.
  bool literal() const { return literal_; }
  // The bytes Redis passes to the command: a number is printed with
  // "%.17g", as Redis 7.0 does (so 1000 → "1000", 1e20 → "1e+20").
  // A number is printed into `storage` (the longest, "-1.2345678901234567e-308",
  // is 24 bytes).
  std::string_view Bytes(char (&storage)[32]) const {
    if (kind_ != Kind::kNumber) return str_;
    int n = std::snprintf(storage, sizeof(storage), "%.17g", num_);
    return std::string_view(storage, static_cast<size_t>(n));
  }

 private:
  enum class Kind { kNil, kString, kNumber };
  Kind kind_;
  std::string_view str_;
  double num_ = 0;
  bool literal_ = false;
};

// Lua's `reply == s` where `reply` is what redis.call("GET") returned (a
// string, or false for a missing key) and `s` a string or nil.
inline bool LuaEquals(const resp::Reply& reply, Str s) {
  return reply.type == resp::Reply::Type::kBulk && s && reply.str == *s;
}

}  // namespace latch::scripting
