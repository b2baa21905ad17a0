// Small helpers shared by the command-line tools (latch-redlock, latch-chaos).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace latch {

// Parses a duration: a decimal number with an optional unit, "ms", "s", "m"
// or "h" ("30s", "1.5s", "250ms", "2m"). A bare number means seconds, as in
// flock(1) and timeout(1). Returns nullopt for anything else, negative
// values, or more than a day.
std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);

// "250 ms", "1.50 s", "2 min 5 s": for messages.
std::string FormatDuration(std::chrono::milliseconds d);

// The tools parse options with getopt_long(3), with opterr = 0 and ':'
// first in the short option string, so that they word errors themselves
// (and exit with their own status). After getopt_long returned '?' or ':'
// (`result`), this names the option as the user typed it, without any
// "=value": "unknown option --bogus", "option --ttl needs a value",
// "option --verbose takes no value", "unknown option -x".
std::string GetoptErrorMessage(int result, char* const argv[]);

}  // namespace latch
