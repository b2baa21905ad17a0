// One sandboxed Lua 5.1 interpreter, set up as Redis 7.0 sets up its own.
//
// Which Lua. latch links Debian's liblua5.1 — Lua compiled as C, whose
// errors unwind with longjmp — and not Debian's lua5.1-c++ build (errors as
// C++ exceptions), on purpose:
//  - Redis itself runs C Lua, so an error inside pcall, a hook or a C
//    function behaves exactly as it does there;
//  - the `cjson` and `bit` libraries Redis ships are Debian's packages
//    lua-cjson and lua-bitop, built against the C ABI: with the C++ build
//    they could not link at all.
// The price is one rule, kept by every C function latch registers with Lua
// (lua_api.cc, lua_convert.cc, lua_sandbox.cc): no C++ object with a
// destructor lives in a frame that a Lua error may cross. A Lua call that
// can raise (any that allocates, luaL_error, lua_error) happens only after
// the C++ work of that frame is over; values that must survive it belong to
// the LuaState or the run (engine-owned buffers, reused), never to a stack
// frame. And no C++ exception ever enters Lua: the C++ parts catch their own.
// The gate and the command handlers a script calls never touch Lua, so
// nothing they do can be skipped by a longjmp.
//
// Memory. Every allocation goes through LuaState's allocator, which refuses
// to grow past a limit (config lua-maxmemory): a string.rep bomb, a huge
// table or deep recursion ends in Lua's "not enough memory" error, the
// script fails, and the server goes on. What the state holds is INFO's
// used_memory_lua. (lua-cjson builds its output with malloc, outside the
// limit; the strings it encodes are bounded by it.)
//
// The sandbox (lua_sandbox.cc), as Redis 7.0's: the base, table, string,
// math, cjson, bit libraries (struct and cmsgpack are tables whose functions
// refuse, see README); no io, os, package, loadfile, dofile, print, debug;
// `redis` (lua_api.cc); math.random on Redis's own generator; and every
// table reachable from the globals read-only ("Attempt to modify a readonly
// table"), reading an unknown global an error ("Script attempted to access
// nonexistent global variable 'x'"). Redis patches its Lua for read-only
// tables; with Debian's unpatched Lua each such table is an empty proxy
// whose metatable reads through to the real one and refuses writes, and the
// base functions that bypass metatables (rawset, rawget, next, pairs,
// ipairs, unpack, setmetatable, table.insert/remove/sort…) see through the
// proxies or refuse as Redis does.
//
// Two kinds, as Redis has two interpreters: kEval (EVAL, EVALSHA: KEYS and
// ARGV are globals; redis.breakpoint, redis.debug, redis.replicate_commands)
// and kFunctions (FUNCTION LOAD, FCALL: the library code runs with only
// redis.register_function, redis.log and the version in sight; the functions
// it registers get KEYS and ARGV as arguments and the full API at call time).
#pragma once

#include <lua.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace latch::scripting {

class LuaRun;
class LibraryLoad;

class LuaState {
 public:
  enum class Kind { kEval, kFunctions };

  // Redis's lrand48 (rand.c): math.random's generator, one per server.
  struct Random {
    uint64_t state = 0x1234ABCD330EULL;
    int32_t Next();
    void Seed(int32_t seed);
  };

  LuaState(Kind kind, size_t memory_limit, Random* random);
  ~LuaState();
  LuaState(const LuaState&) = delete;
  LuaState& operator=(const LuaState&) = delete;

  lua_State* L() const { return L_; }
  Kind kind() const { return kind_; }
  // Whether the interpreter could be set up (false only if even the
  // sandbox did not fit in the memory limit).
  bool ok() const { return L_ != nullptr; }
  size_t used_memory() const { return used_; }
  size_t memory_limit() const { return limit_; }
  void set_memory_limit(size_t limit) { limit_ = limit; }

  // The LuaState behind a lua_State (its allocator's userdata).
  static LuaState& From(lua_State* L);

  // The script run in progress (nullptr outside one): what redis.call and
  // the hook act for.
  LuaRun* run() const { return run_; }
  void set_run(LuaRun* run) { run_ = run; }
  // The library being loaded (FUNCTION LOAD), for redis.register_function.
  LibraryLoad* load() const { return load_; }
  void set_load(LibraryLoad* load) { load_ = load; }
  Random& random() { return *random_; }

  // Compiles `body` as a chunk named `chunk` ("@user_script"). On success
  // keeps the function in the registry and returns its reference; else sets
  // *error to Lua's message.
  std::optional<int> Compile(std::string_view body, const char* chunk, std::string* error);
  void Unref(int ref);

  // kFunctions: what the globals show — the library API while a library
  // loads, the whole API otherwise.
  void ShowLibraryApi(bool loading);

  // The globals table scripts see (a read-only proxy), and the real one
  // behind it (where KEYS and ARGV go).
  void PushGlobals();
  void PushRealGlobals();
  // Puts back what a script may have changed for the scripts after it (the
  // thread's globals table: setfenv(0, t)), and collects a little garbage.
  void AfterRun();
  // A full collection (after an out-of-memory error, SCRIPT FLUSH…).
  void CollectGarbage();

  // Registry slots.
  static constexpr const char* kErrorHandler = "latch_error_handler";
  static constexpr const char* kTostring = "latch_tostring";  // the real tostring

  // The memory limit holds while user code runs (a script, a compilation,
  // a library's loading): allocations past it fail there, as Lua errors.
  // Outside, latch's own calls into the state never fail for memory, so no
  // Lua call it makes unprotected can raise.
  class LimitScope {
   public:
    explicit LimitScope(LuaState& s) : s_(s), was_(s.enforce_) { s_.enforce_ = true; }
    ~LimitScope() { s_.enforce_ = was_; }
    LimitScope(const LimitScope&) = delete;
    LimitScope& operator=(const LimitScope&) = delete;

   private:
    LuaState& s_;
    bool was_;
  };

 private:
  static void* Alloc(void* ud, void* ptr, size_t osize, size_t nsize);
  static int Setup(lua_State* L);

  lua_State* L_ = nullptr;
  Kind kind_;
  size_t limit_;
  size_t used_ = 0;
  bool enforce_ = false;
  Random* random_;
  LuaRun* run_ = nullptr;
  LibraryLoad* load_ = nullptr;
  int runs_since_gc_ = 0;
};

// ---- internals shared by lua_sandbox.cc, lua_api.cc, lua_convert.cc

// Pushes Redis's error table {err = "CODE msg"} (luaPushErrorBuff): text
// starting with '-' is "-CODE msg" and keeps its code; other text gets ERR.
void PushErrorTable(lua_State* L, const char* text, size_t len);
// Pushes it and raises it.
[[noreturn]] void RaiseErrorTable(lua_State* L, const char* text);
// The hook of every run (engine.cc): busy-reply-threshold, kills, and a
// script that must end whatever it does (its error cannot be caught).
void RunHook(lua_State* L, lua_Debug* ar);
// Makes the table on top of the stack read-only (replaced by its proxy).
void ProtectTopTable(lua_State* L);
// Sets Redis's "nonexistent global variable" metatable on the table on top.
void SetErrorMetatable(lua_State* L);
// Registers the redis.* API into the table on top (lua_api.cc).
void RegisterRedisApi(lua_State* L, LuaState::Kind kind);
void RegisterLibraryApi(lua_State* L);
void RegisterLogApi(lua_State* L);
// The error handler every run passes to lua_pcall (Redis's
// __redis__err__handler): adds the source and line to the error table.
int ErrorHandler(lua_State* L);

}  // namespace latch::scripting
