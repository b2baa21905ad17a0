// A string as a JSON string literal, for the JSON-lines files that the server
// (history-file) writes and the tools (latch-fixture, the checker) read and
// write: one escaping rule on both sides.
#pragma once

#include <string>
#include <string_view>

namespace latch {

// Appends `s` to `out` as a JSON string, quotes included: `"` and `\` are
// escaped, and every byte outside printable ASCII becomes \u00XX (a binary
// key or token stays readable and round-trips byte for byte).
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace latch
