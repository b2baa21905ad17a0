// The first line of a script or a library, as Redis 7.0 reads it.
//
//   EVAL:           #!lua [flags=no-writes,allow-oom,…]   (optional)
//   FUNCTION LOAD:  #!lua name=mylib                       (required)
//
// The line is split like a config line (Redis's sdssplitargs) and ends at
// the first newline (or a NUL byte: Redis reads the body as a C string).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace latch::scripting {

// An EVAL script's flags (kFlagEvalCompat when there is no shebang) and the
// length of the shebang line (0: none; the newline is not counted, so line
// numbers stay the user's). nullopt, or the error text (without "ERR ").
std::optional<std::string> ParseScriptShebang(std::string_view body, uint32_t* flags,
                                              size_t* shebang_len);

struct LibraryMetadata {
  std::string engine;  // "lua", as written
  std::string name;
  std::string_view code;  // the body from the shebang's newline on
};
// A library's metadata, or the error text (without "ERR ").
std::optional<std::string> ParseLibraryMetadata(std::string_view code, LibraryMetadata* out);

}  // namespace latch::scripting
