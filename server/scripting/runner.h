// The script's client: how a script (a Lua script, a function, or a known
// lock script run natively) runs Redis commands — the one place where a
// script re-enters the Execute gate.
//
// A call goes through the gate like any command (origin kScript): the same
// lookup and arity rules in the words Redis uses for scripts ("Unknown Redis
// command called from script", "Wrong number of args calling Redis command
// from script"), the commands refused inside scripts ("This Redis command is
// not allowed from script": MULTI, WAIT, blocking pops…), the read-only rule
// of EVAL_RO/FCALL_RO and no-writes scripts, MISCONF, and, for a write that
// would grant or extend a lease, the lease policy. Nothing a script sends may
// park the script's client: SET … NX WAIT answers at once, as BLPOP does in
// Redis scripts. The command's reply is captured as a value
// (protocol/reply_capture.h) in the script's protocol (RESP2 until
// redis.setresp(3)). Every write a script makes is thus validated, capped
// and logged exactly as the same command sent alone: the log holds the
// SETs, DELs and PEXPIREATs performed, never an EVAL.
//
// A call refused by the restart quarantine (or another refusal of the lease
// policy) ends the whole script with that error, exactly as the command sent
// alone would get it: a script cannot catch it with pcall and carry on as if
// it held a lock it was refused.
//
// The known lock scripts' native equivalents use the ScriptRun below, whose
// calls go through the same ScriptClient.
#pragma once

#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "protocol/reply_capture.h"
#include "protocol/reply_parser.h"
#include "server/command.h"
#include "server/scripting/lua_value.h"

namespace latch::scripting {

struct KnownScript;

class ScriptClient {
 public:
  ScriptClient(CommandContext& ctx, bool read_only) : ctx_(ctx), read_only_(read_only) {}
  ScriptClient(const ScriptClient&) = delete;
  ScriptClient& operator=(const ScriptClient&) = delete;

  // Runs argv through the gate. Returns its reply (an error reply when the
  // gate refused it), or nullptr when the lease policy refused it: the
  // script must end, with refusal() as its reply. The reply is the
  // client's until the next call: a caller may move it out.
  // `literal_name`: argv[0] is a string literal (the gate caches its lookup).
  resp::Reply* Call(std::span<const std::string_view> argv, bool literal_name = false);

  // redis.setresp: the protocol replies are captured in (2 or 3).
  int resp() const { return resp_; }
  void set_resp(int resp) { resp_ = resp; }
  // Whether a write command ran (Redis's SCRIPT_WRITE_DIRTY: the script can
  // no longer be killed).
  bool wrote() const { return wrote_; }
  void set_wrote() { wrote_ = true; }
  const std::string& refusal() const { return refusal_; }
  bool read_only() const { return read_only_; }
  CommandContext& ctx() { return ctx_; }
  const CommandContext& ctx() const { return ctx_; }

 private:
  CommandContext& ctx_;
  bool read_only_;
  int resp_ = 2;
  bool wrote_ = false;
  std::string refusal_;
  resp::ReplyCapture capture_;
};

// One execution of a known lock script: its KEYS and ARGV, and redis.call /
// redis.pcall as latch's own commands. Errors as Redis words them: a
// redis.call() that fails ends the script with that error followed by
// " script: <sha>, on @user_script:<line>."; a Lua runtime error reads
// "ERR user_script:<line>: <message> script: …".
class ScriptRun {
 public:
  ScriptRun(const KnownScript& script, ScriptClient& client, std::span<const std::string_view> keys,
            std::span<const std::string_view> args)
      : script_(script), client_(client), keys_(keys), args_(args) {}

  // KEYS[i] and ARGV[i], 1-based as in Lua; nil past the end (and ARGV[0]).
  Str Key(size_t i) const { return i >= 1 && i <= keys_.size() ? Str(keys_[i - 1]) : Str(); }
  Str Arg(size_t i) const { return i >= 1 && i <= args_.size() ? Str(args_[i - 1]) : Str(); }
  size_t NumKeys() const { return keys_.size(); }  // #KEYS
  size_t NumArgs() const { return args_.size(); }  // #ARGV

  // Whether clients wait in KEYS[i]'s queue (SET … NX WAIT) in the script's
  // current database: what EXISTS inside a script counts as taken (see
  // CommandContext::TakenForAcquire), so an acquire script never takes a
  // key from its first waiter.
  bool Queued(size_t i) const;

  // redis.call(...) at `line`: the command's reply, valid until the next
  // call (it lives in the client's capture: nothing is copied or freed per
  // call). On an error the script ends there: the error (with the script
  // suffix) becomes the reply and nullptr is returned; whatever the script
  // changed before stays changed, as in Redis.
  const resp::Reply* Call(int line, std::initializer_list<LuaArg> argv);

  // redis.pcall(...): like Call, but an error is returned to the script
  // instead of ending it (the scripts here ignore it). Returns false only if
  // the script must stop anyway (a lease refused by the quarantine).
  bool PCall(std::initializer_list<LuaArg> argv);

  // A Lua runtime error at `line` ("attempt to compare number with nil").
  void RuntimeError(int line, std::string_view message);

  // The fast path. A call the gate would pass unchanged (CommandRunner::
  // Trusted: a user who may run everything, a writable log, no MONITOR…)
  // is carried out here with the same effects as its handler — keyspace
  // hits and misses, notifications, the log, the command's statistics —
  // without re-entering the gate, looking the command up or capturing its
  // reply. Each returns false, having done nothing, when it cannot be
  // taken: the script then makes the same call with Call().
  //
  // GET KEYS[i] (`get` as the script spells it): true with *value the
  // string, or nullopt for a missing key. A key of another type is left to
  // Call, which words the WRONGTYPE error.
  bool DirectGet(const char* get, size_t i, std::optional<std::string_view>* value);
  // DEL KEYS[i] right after DirectGet found it (nothing ran between, so it
  // is still there): deletes it, as DEL's handler does.
  bool DirectDel(const char* del, size_t i);

  // The script's return value.
  resp::ReplySink& reply() { return client_.ctx().reply; }

 private:
  std::string Suffix(int line) const;
  // The command a Direct call of `name` on KEYS[i] may run as, or nullptr
  // (KEYS[i] is nil, or the gate must see the call: CommandRunner::Trusted).
  const CommandSpec* TrustedCall(const char* name, size_t i);
  // Runs one command for the script: its reply (or an error Reply), valid
  // until the next call; nullptr after replying to the client directly.
  const resp::Reply* Invoke(std::initializer_list<LuaArg> args);

  const KnownScript& script_;
  ScriptClient& client_;
  std::span<const std::string_view> keys_;
  std::span<const std::string_view> args_;
  resp::Reply error_;  // Invoke's own refusals (a nil argument…)
};

}  // namespace latch::scripting
