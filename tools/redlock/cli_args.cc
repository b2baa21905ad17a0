#include "tools/redlock/cli_args.h"

#include <getopt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace latch {

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  size_t digits = 0;
  bool dot = false;
  while (digits < text.size() &&
         ((text[digits] >= '0' && text[digits] <= '9') || (text[digits] == '.' && !dot))) {
    dot |= text[digits] == '.';
    ++digits;
  }
  std::string number(text.substr(0, digits));
  std::string_view unit = text.substr(digits);
  if (number.empty() || number == ".") return std::nullopt;
  double scale;
  if (unit.empty() || unit == "s") {
    scale = 1000;
  } else if (unit == "ms") {
    scale = 1;
  } else if (unit == "m" || unit == "min") {
    scale = 60'000;
  } else if (unit == "h") {
    scale = 3'600'000;
  } else {
    return std::nullopt;
  }
  double ms = std::strtod(number.c_str(), nullptr) * scale;
  if (!std::isfinite(ms) || ms < 0 || ms > 86'400'000.0) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(ms)));
}

std::string FormatDuration(std::chrono::milliseconds d) {
  char buf[64];
  int64_t ms = d.count();
  if (ms < 1000 && ms > -1000) {
    std::snprintf(buf, sizeof(buf), "%lld ms", static_cast<long long>(ms));
  } else if (ms < 120'000) {
    std::snprintf(buf, sizeof(buf), "%.2f s", static_cast<double>(ms) / 1000.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld min %lld s", static_cast<long long>(ms / 60'000),
                  static_cast<long long>((ms % 60'000) / 1000));
  }
  return buf;
}

std::string GetoptErrorMessage(int result, char* const argv[]) {
  // getopt has moved optind past the word it refused, except inside a
  // cluster of short options ("-vx"), where optopt names the character.
  std::string word = optind > 0 ? argv[optind - 1] : "";
  const bool long_form = word.rfind("--", 0) == 0;
  const bool has_value = word.find('=') != std::string::npos;
  const bool short_char = optopt > 0 && optopt < 256;
  if (!long_form || (result == '?' && short_char && !has_value)) {
    word = std::string("-") + static_cast<char>(optopt);
  } else {
    word = word.substr(0, word.find('='));
  }
  if (result == ':') return "option " + word + " needs a value";
  if (optopt != 0 && long_form && has_value) return "option " + word + " takes no value";
  return "unknown option " + word;
}

}  // namespace latch
