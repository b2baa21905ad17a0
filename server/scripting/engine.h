// The script engine: the EVAL script cache, the function libraries, and
// the run of a script — a known lock script natively, anything else in Lua.
//
// A run, start to end (EVAL, EVALSHA, FCALL and their _RO forms):
//   the script's flags are checked (shebang `#!lua flags=…`, a function's
//   flags: a writer is refused under MISCONF or by a *_RO command) →
//   the Store opens a transaction (the script's writes are one unit in the
//   log: one record alone, or MULTI … EXEC) → KEYS and ARGV → the script
//   runs; each redis.call goes through the gate as the script's client
//   (runner.h) → the Lua value returned becomes the reply (lua_convert.h) →
//   the transaction closes, the caller's database is restored (a SELECT
//   inside lasts for the script only, as in Redis 7).
// A script that fails after writing keeps its writes (Redis's rule); the log
// has them, bracketed. Replay never runs a script: the log holds effects.
//
// Known lock scripts are a fast path: a script whose text is one of theirs
// (known_scripts.h) runs its native equivalent, with the same replies and
// log records as the Lua text gives (tests/unit/known_scripts_test.cc runs
// every case both ways, known-scripts-native yes and no). The
// script cache is Redis's: EVAL and SCRIPT LOAD add a script, SCRIPT FLUSH
// empties it, and EVALSHA of a script never loaded is NOSCRIPT — known
// scripts included, so clients see exactly what Redis would tell them.
//
// Busy scripts. Every 100,000 Lua instructions a hook looks at the time.
// Past busy-reply-threshold (lua-time-limit) the script is "busy": the
// engine tells the server (BusyHost), whose gate answers other clients
// -BUSY except for the few commands Redis allows then (SCRIPT KILL, FUNCTION
// KILL, SHUTDOWN NOSAVE, AUTH, HELLO, MULTI…), and from then on, at each
// hook, the server reads and answers the other clients once (see
// BusyHost::ServeWhileBusy: libuv's loop cannot be re-entered, so this is a
// poll of its own). SCRIPT KILL / FUNCTION KILL mark the run; the hook then
// raises an error the script cannot catch. A script that has written cannot
// be killed (UNKILLABLE): its writes must not be left half done; SHUTDOWN
// NOSAVE stops it anyway (the server stops).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "protocol/reply_parser.h"
#include "server/command.h"
#include "server/scripting/lua_state.h"
#include "server/scripting/runner.h"

namespace latch {
class Session;
struct Config;
}  // namespace latch

namespace latch::scripting {

struct KnownScript;
class Engine;

// Script flags (`#!lua flags=…`, redis.register_function's flags), with
// Redis's names and order.
enum ScriptFlag : uint32_t {
  kFlagNoWrites = 1u << 0,
  kFlagAllowOom = 1u << 1,
  kFlagAllowStale = 1u << 2,
  kFlagNoCluster = 1u << 3,
  kFlagAllowCrossSlot = 1u << 4,
  kFlagEvalCompat = 1u << 5,  // an EVAL script without a shebang
};
struct FlagName {
  uint32_t flag;
  const char* name;
};
inline constexpr FlagName kFlagNames[] = {{kFlagNoWrites, "no-writes"},
                                          {kFlagAllowOom, "allow-oom"},
                                          {kFlagAllowStale, "allow-stale"},
                                          {kFlagNoCluster, "no-cluster"},
                                          {kFlagAllowCrossSlot, "allow-cross-slot-keys"}};

// What the engine needs from the server around the loop.
class BusyHost {
 public:
  virtual ~BusyHost() = default;
  // A script passed busy-reply-threshold: other clients get -BUSY until
  // LeaveBusy (eval: the SCRIPT KILL text, else FUNCTION KILL's).
  virtual void EnterBusy(bool eval) = 0;
  virtual void LeaveBusy() = 0;
  // Reads and answers the other clients once, without blocking: never
  // `caller`, whose request is the script.
  virtual void ServeWhileBusy(Session& caller) = 0;
  // SHUTDOWN was asked for meanwhile: the script stops.
  virtual bool ShutdownRequested() const = 0;
  // MISCONF's text while the log cannot be written (a writing script is
  // refused before it starts), else empty.
  virtual std::string WriteRefusal() const = 0;
  // The boot clock in µs (a run's duration).
  virtual int64_t MonoUs() const = 0;
};

// One Lua run in progress (what redis.call and the hook act for).
class LuaRun {
 public:
  LuaRun(Engine& engine, CommandContext& ctx, bool read_only, bool eval, std::string name,
         int64_t start_us)
      : engine(engine),
        client(ctx, read_only),
        eval(eval),
        name(std::move(name)),
        start_us(start_us) {}

  Engine& engine;
  ScriptClient client;
  const bool eval;         // EVAL (else FCALL): names the kill command
  const std::string name;  // the sha, or the function's name
  const int64_t start_us;
  bool timed_out = false;  // past busy-reply-threshold
  bool killed = false;     // SCRIPT KILL / FUNCTION KILL / SHUTDOWN
  int hook_calls = 0;
  // The reply the script must end with, whatever it does next (a lease
  // refused, a shutdown), when not empty.
  std::string stop_error;
  // redis.call's arguments: views into the Lua strings on the stack, and
  // numbers printed into `numbers` (kept between calls: no allocation per
  // call once warm).
  std::vector<std::string_view> argv;
  std::vector<std::string> numbers;
};

// A cached EVAL script.
struct EvalScript {
  std::string body;
  uint32_t flags = kFlagEvalCompat;
  const KnownScript* known = nullptr;  // the native fast path
  int ref = LUA_NOREF;                 // its compiled function
};

// A function library (FUNCTION LOAD) and its functions.
struct Function {
  std::string name;
  std::string description;  // empty with has_description false: nil
  bool has_description = false;
  uint32_t flags = 0;
  int ref = LUA_NOREF;
  std::string library;
};
struct Library {
  std::string name;
  std::string code;                    // as loaded, shebang included
  std::vector<std::string> functions;  // names, in registration order
};

class Engine {
 public:
  Engine(BusyHost& host, const Config& config);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void Configure(const Config& config);

  // ---- EVAL's script cache
  // The cached script with this SHA1 (hex, any case), or nullptr; `key`,
  // if given, is set to its SHA1 as the cache keeps it (lower case). No
  // allocation: EVALSHA runs it on every call.
  const EvalScript* Find(std::string_view sha, const std::string** key = nullptr) const;
  // Adds `body` (EVAL, SCRIPT LOAD): its SHA1, or nullptr after writing the
  // error (a bad shebang, a compile error) to *error.
  const std::string* Load(std::string_view body, std::string* error);
  void FlushScripts();
  size_t num_scripts() const { return scripts_.size(); }
  size_t scripts_memory() const;
  size_t eval_memory() const { return eval_ ? eval_->used_memory() : 0; }

  // Runs a cached script for EVAL/EVALSHA (read_only: the _RO forms).
  void RunEval(CommandContext& ctx, const std::string& sha, const EvalScript& script,
               std::span<const std::string_view> keys, std::span<const std::string_view> args,
               bool read_only);

  // ---- functions (functions.cc)
  // FUNCTION LOAD [REPLACE]: the library's name, or nullopt with *error.
  // (The caller logs it: the command through the Store; replay loads what
  // the log says, without the 500 ms limit on the library's code.)
  std::optional<std::string> LoadLibrary(std::string_view code, bool replace, std::string* error,
                                         bool replaying = false);
  bool DeleteLibrary(std::string_view name);
  void FlushLibraries();
  const std::map<std::string, Library>& libraries() const { return libraries_; }
  const Function* FindFunction(std::string_view name) const;
  size_t num_functions() const { return functions_.size(); }
  size_t functions_memory() const { return fn_state_ ? fn_state_->used_memory() : 0; }
  size_t functions_overhead() const;
  // FUNCTION DUMP's payload, and FUNCTION RESTORE of one: the libraries'
  // codes in it, or nullopt with *error.
  std::string Dump() const;
  static std::optional<std::vector<std::string>> ParseDump(std::string_view payload,
                                                           std::string* error);
  // FUNCTION RESTORE: loads `codes` all or nothing (policy: "FLUSH",
  // "APPEND", "REPLACE").
  bool Restore(const std::vector<std::string>& codes, std::string_view policy, std::string* error);
  void RunFunction(CommandContext& ctx, const Function& f, std::span<const std::string_view> keys,
                   std::span<const std::string_view> args, bool read_only);

  // ---- the run in progress
  const LuaRun* running() const { return running_; }
  // SCRIPT KILL (eval) / FUNCTION KILL: replies.
  void Kill(CommandContext& ctx, bool eval);
  // The hook's question, every 100,000 instructions: true when the script
  // must stop now.
  bool Interrupt(LuaRun& run);
  // Whether `flags` (a shebang's or a function's) let the script run for
  // this command: false after replying why not.
  bool CheckFlags(CommandContext& ctx, uint32_t flags, bool read_only_command);

  LuaState::Random& random() { return random_; }
  // For the fuzzer: a script is stopped (as by SCRIPT KILL) after this many
  // hook calls, i.e. about n * 100,000 instructions (0: no limit).
  void set_hook_budget_for_tests(int n) { hook_budget_ = n; }
  int64_t busy_reply_threshold_ms() const { return busy_threshold_ms_; }

 private:
  friend class FunctionLoader;
  void RunLua(CommandContext& ctx, LuaState& state, int ref, std::string name, bool eval,
              bool read_only, std::span<const std::string_view> keys,
              std::span<const std::string_view> args);
  void EnsureEvalState();
  void EnsureFunctionsState();

  BusyHost& host_;
  LuaState::Random random_;
  size_t lua_limit_;
  int64_t busy_threshold_ms_;
  const bool* native_known_;  // config known-scripts-native
  int hook_budget_ = 0;
  std::unique_ptr<LuaState> eval_;
  // By lower-case sha, looked up by string_view (no key string built).
  // A SHA-1 in hex is already uniform: 16 of its characters, mixed once,
  // hash it (the whole string hashed byte by byte cost more than the rest
  // of the lookup).
  struct ShaHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const {
      if (s.size() < 16) return std::hash<std::string_view>{}(s);
      uint64_t a, b;
      std::memcpy(&a, s.data(), 8);
      std::memcpy(&b, s.data() + 8, 8);
      return static_cast<size_t>((a ^ (b * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull);
    }
  };
  std::unordered_map<std::string, EvalScript, ShaHash, std::equal_to<>> scripts_;
  size_t scripts_bytes_ = 0;
  std::unique_ptr<LuaState> fn_state_;
  std::map<std::string, Library> libraries_;
  // By lower-case name: FCALL finds a function whatever the case (Redis's
  // functions dictionary is case-insensitive; its libraries' is not).
  std::unordered_map<std::string, Function> functions_;
  LuaRun* running_ = nullptr;
};

}  // namespace latch::scripting
