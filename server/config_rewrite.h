// CONFIG REWRITE: the running configuration written back into the file the
// server was started with, the way Redis 7.0's rewriteConfig() does it, so
// that an operator's file keeps its shape:
//
//  - every comment and blank line stays where it was (runs of blank lines
//    become one), and so does every option line, rewritten in place with the
//    option's current value (an alias's line under the primary name);
//  - an option the file did not mention is appended, after a line "# Generated
//    by CONFIG REWRITE", only if its value differs from the default (dir and
//    save are always written, as Redis writes them);
//  - lines of an option that no longer needs them (a second `save` line, an
//    unset pidfile) become blank; a line naming no known option is kept as a
//    comment, "# ??? <line>";
//  - the new file replaces the old one atomically (a temporary file, fsync,
//    rename, fsync of the directory), with mode 0644 less the umask.
#pragma once

#include <optional>
#include <string>

#include "server/config.h"

namespace latch {

// The new text of the file whose current text is `old_text` (empty for a
// file that does not exist), for configuration `c`; `cwd` is what `dir` is
// written as (the server runs inside its data directory).
std::string RewriteConfigText(const std::string& old_text, const Config& c, const std::string& cwd);

// Reads `path`, rewrites it and replaces it. nullopt on success, else the
// reason (strerror's text).
std::optional<std::string> RewriteConfigFile(const std::string& path, const Config& c);

}  // namespace latch
