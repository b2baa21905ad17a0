// Small text helpers shared by the parser, the server and the tools.
//
// They reproduce the exact rules Redis applies, because clients observe them:
// which strings count as integers, how an inline line splits into words, and
// how an error text that echoes client input is made safe for the wire.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latch {

// Parses a signed 64-bit decimal integer with Redis's `string2ll` rules: no
// sign other than a leading '-', no leading zeros ("0" itself is fine, "-0"
// and "01" are not), no spaces, at most 20 characters, no overflow.
// Returns nullopt for anything else.
std::optional<int64_t> ParseInt64(std::string_view s);

// Parses a double the way Redis's `string2ld`/`strtold` accepts it for
// commands such as INCRBYFLOAT: used by the config parser for ratios.
std::optional<double> ParseDouble(std::string_view s);
// The fast path of the parsers of doubles: `s` is an optional sign and 1 to
// 15 decimal digits, whose value a double holds exactly — what strtod would
// return ("-0" is -0.0), for a tenth of its cost. False: use strtod.
bool ParseSmallIntegerDouble(std::string_view s, double* out);

// Parses a double with Redis's `string2d` rules (getDoubleFromObject: ZADD
// scores, WEIGHTS): what strtod accepts (decimals, exponents, hexadecimal
// floats, "inf"), but not the empty string, no leading space, nothing after
// the number (a NUL inside included), no overflow to infinity, no underflow
// to zero, no NaN. Any length.
std::optional<double> ParseDoubleArg(std::string_view s);

// Parses a long double with Redis's `string2ld` rules (INCRBYFLOAT): what
// strtold accepts (decimals, exponents, hexadecimal floats, "inf"), but no
// leading space, nothing after the number, fewer than 5120 characters, no
// overflow to infinity, no underflow to zero, no NaN.
std::optional<long double> ParseLongDouble(std::string_view s);

// Splits a line into words with the rules of Redis's `sdssplitargs`: blanks
// separate words; "double quotes" understand \n \r \t \b \a \xHH and
// backslash escapes; 'single quotes' understand only \'. A closing quote must
// be followed by a blank or the end. A NUL byte ends the line. Returns nullopt
// on unbalanced quotes. Used for inline requests and for config files.
std::optional<std::vector<std::string>> SplitArgs(std::string_view line);

// ASCII lower case, without the locale lookups of std::tolower.
inline char AsciiLower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
}

// ASCII case-insensitive equality (command names and option words).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Lower-cases ASCII letters into a new string.
std::string ToLower(std::string_view s);

// Replaces CR and LF with spaces, as Redis does for any error text, so a reply
// that echoes client input can never break the line-oriented protocol.
void SanitizeErrorText(std::string& text);

// The part of `s` before its first NUL byte: what Redis's "%s" formatting
// echoes of a client's argument in an error text.
inline std::string_view UpToNul(std::string_view s) {
  return s.substr(0, s.find('\0'));
}

// Appends the decimal form of v to out.
void AppendInt(std::string& out, int64_t v);

}  // namespace latch
