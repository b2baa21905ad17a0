// Known lock scripts: the Lua scripts of the well-known lock libraries, run
// natively, without Lua.
//
// Every popular lock library releases and extends its locks with a small Lua
// script sent by EVALSHA (falling back to EVAL or SCRIPT LOAD). latch embeds
// no interpreter — a lock server runs no arbitrary code — so it recognises
// those scripts by the SHA1 of their exact bytes (each text is a file of its
// own under server/scripting/scripts/, embedded at build time) and runs, for
// each, a native handler that does exactly what the script does on Redis 7.0:
//  - the same KEYS/ARGV handling, multi-key scripts included;
//  - the same reply values and types (Lua number → integer, false/nil → nil,
//    table → array, truncated at its first nil);
//  - the same errors (see runner.h);
//  - atomically: one command, one snapshot of the clocks.
// Each redis.call() inside a handler is the latch command itself, through
// the Execute gate (runner.h), so a script's writes are validated, capped by
// max-lock-ttl, admitted by the lease policy and logged exactly as the same
// commands sent alone.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "server/command.h"

namespace latch::scripting {

class ScriptRun;

struct KnownScript {
  std::string_view sha1;     // SHA1 of the text: 40 lower-case hex digits
  std::string_view library;  // the package that sends it
  std::string_view version;  // the exact version whose text this is
  std::string_view file;     // where the text is, inside that package
  std::string_view name;     // the library's own name for the script
  std::string_view summary;  // what the script does, in one paragraph
  std::string_view path;     // its text, under server/scripting/scripts/
  void (*run)(ScriptRun&);   // the native equivalent
  // The exact bytes the library sends.
  std::string_view text() const;
};

// Every known script, in a fixed order (grouped by library).
std::span<const KnownScript> KnownScripts();

// The known script with this SHA1 (hex, any case), or nullptr.
const KnownScript* FindKnownScript(std::string_view sha1);

// The known script whose text is exactly `text`, or nullptr.
const KnownScript* FindKnownScriptByText(std::string_view text);

// "redlock 4.2.0 (lock, unlock, extend), …": the libraries and scripts known,
// for COMMAND DOCS, SCRIPT HELP and INFO.
std::string KnownScriptLibraries();

// Runs `script` for EVAL/EVALSHA (read_only for EVAL_RO/EVALSHA_RO): KEYS are
// `keys`, ARGV are `args`. The reply (or error) goes to ctx.reply.
void RunKnownScript(const KnownScript& script, CommandContext& ctx,
                    std::span<const std::string_view> keys, std::span<const std::string_view> args,
                    bool read_only);

// The embedded text of a script file (generated from the scripts folder).
std::string_view EmbeddedScript(std::string_view path);

}  // namespace latch::scripting

namespace latch {
using scripting::KnownScriptLibraries;
using scripting::KnownScripts;
}  // namespace latch
