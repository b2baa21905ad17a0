// Glob-style matching with Redis's `stringmatchlen` rules: * ? [a-z] [^x] \x,
// binary safe, optionally case-insensitive (ASCII), with Redis's bound on
// pathological patterns (CVE-2022-36021).
#pragma once

#include <string_view>

namespace latch {

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase = false);

}  // namespace latch
