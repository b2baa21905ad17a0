// One execution of a known lock script: its KEYS and ARGV, and redis.call /
// redis.pcall as latch's own commands.
//
// A call goes through the Execute gate like any command (origin kScript):
// the same lookup and arity rules in the words Redis uses for scripts, the
// read-only rule of EVAL_RO, MISCONF, and, for a write that would grant or
// extend a lease, the lease policy. The command's reply is captured as a
// value (protocol/reply_capture.h), in RESP2 as a script's client speaks it,
// and handed back to the native script. Every write a script makes is thus
// validated, capped and logged exactly as the same command sent alone: the
// log holds the SETs, DELs and PEXPIREATs performed, never an EVAL.
//
// Errors, as Redis words them: a redis.call() that fails ends the script
// with that error followed by " script: <sha>, on @user_script:<line>.";
// a Lua runtime error reads "ERR user_script:<line>: <message> script: …".
// A call refused by the restart quarantine ends the script with the
// QUARANTINE error itself, exactly as the command sent alone would get.
#pragma once

#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "protocol/reply_parser.h"
#include "server/command.h"
#include "server/scripting/lua_value.h"

namespace latch::scripting {

struct KnownScript;

class ScriptRun {
 public:
  ScriptRun(const KnownScript& script, CommandContext& ctx, std::span<const std::string_view> keys,
            std::span<const std::string_view> args, bool read_only)
      : script_(script), ctx_(ctx), keys_(keys), args_(args), read_only_(read_only) {}

  // KEYS[i] and ARGV[i], 1-based as in Lua; nil past the end (and ARGV[0]).
  Str Key(size_t i) const { return i >= 1 && i <= keys_.size() ? Str(keys_[i - 1]) : Str(); }
  Str Arg(size_t i) const { return i >= 1 && i <= args_.size() ? Str(args_[i - 1]) : Str(); }
  size_t NumKeys() const { return keys_.size(); }  // #KEYS
  size_t NumArgs() const { return args_.size(); }  // #ARGV

  // Whether clients wait in KEYS[i]'s queue (SET … NX WAIT) in the script's
  // current database. An acquire script takes a key it found absent only if
  // nobody waits for it, as SET NX: a key released earlier in the same
  // transaction goes to its first waiter (CommandContext::TakenForAcquire).
  bool Queued(size_t i) const;

  // redis.call(...) at `line`: the command's reply. On an error the script
  // ends there: the error (with the script suffix) becomes the reply and
  // nullopt is returned; whatever the script changed before stays changed,
  // as in Redis.
  std::optional<resp::Reply> Call(int line, std::initializer_list<LuaArg> argv);

  // redis.pcall(...): like Call, but an error is returned to the script
  // instead of ending it (the scripts here ignore it). Returns false only if
  // the script must stop anyway (a lease refused by the quarantine).
  bool PCall(std::initializer_list<LuaArg> argv);

  // A Lua runtime error at `line` ("attempt to compare number with nil").
  void RuntimeError(int line, std::string_view message);

  // The script's return value.
  resp::ReplySink& reply() { return ctx_.reply; }

 private:
  std::string Suffix(int line) const;
  // Runs one command for the script. Sets *out to its reply (or an error
  // Reply). Returns false after replying to the client directly.
  bool Invoke(std::initializer_list<LuaArg> args, resp::Reply* out);

  const KnownScript& script_;
  CommandContext& ctx_;
  std::span<const std::string_view> keys_;
  std::span<const std::string_view> args_;
  bool read_only_;
};

}  // namespace latch::scripting
