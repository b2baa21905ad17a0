#include "server/scripting/engine.h"

#include <chrono>
#include <cstring>
#include <utility>

#include "common/sha1.h"
#include "protocol/text.h"
#include "server/config.h"
#include "server/control.h"
#include "server/log.h"
#include "server/scripting/functions_load.h"
#include "server/scripting/known_scripts.h"
#include "server/scripting/lua_convert.h"
#include "server/scripting/shebang.h"
#include "server/session.h"
#include "server/stats.h"
#include "server/store.h"

namespace latch::scripting {

namespace {

constexpr const char* kKilled = "Script killed by user with SCRIPT KILL...";

int64_t SteadyUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// ---------------------------------------------------------------- the hook

void RunHook(lua_State* L, lua_Debug* ar) {
  LuaState& st = LuaState::From(L);
  LuaRun* run = st.run();
  if (run == nullptr) {
    // FUNCTION LOAD: the library's code has 500 ms to register its functions.
    LibraryLoad* load = st.load();
    if (load != nullptr && load->timeout_ms > 0 &&
        (SteadyUs() - load->start_us) / 1000 > load->timeout_ms) {
      load->timed_out = true;
      lua_sethook(L, RunHook, LUA_MASKLINE, 0);
      RaiseErrorTable(L, "FUNCTION LOAD timeout");
    }
    return;
  }
  if (!run->stop_error.empty()) RaiseErrorTable(L, run->stop_error.c_str());
  if (run->killed) RaiseErrorTable(L, kKilled);
  if (ar->event != LUA_HOOKCOUNT) return;
  if (!run->engine.Interrupt(*run)) return;
  // From now on every line raises again, so a pcall cannot keep it going.
  lua_sethook(L, RunHook, LUA_MASKLINE, 0);
  RaiseErrorTable(L, kKilled);
}

// ---------------------------------------------------------------- engine

Engine::Engine(BusyHost& host, const Config& config)
    : host_(host),
      lua_limit_(static_cast<size_t>(config.lua_maxmemory)),
      busy_threshold_ms_(config.busy_reply_threshold),
      native_known_(&config.known_scripts_native) {
  EnsureEvalState();
  EnsureFunctionsState();
}

Engine::~Engine() = default;

void Engine::Configure(const Config& config) {
  lua_limit_ = static_cast<size_t>(config.lua_maxmemory);
  busy_threshold_ms_ = config.busy_reply_threshold;
  if (eval_) eval_->set_memory_limit(lua_limit_);
  if (fn_state_) fn_state_->set_memory_limit(lua_limit_);
}

void Engine::EnsureEvalState() {
  if (!eval_) eval_ = std::make_unique<LuaState>(LuaState::Kind::kEval, lua_limit_, &random_);
}

void Engine::EnsureFunctionsState() {
  if (!fn_state_) {
    fn_state_ = std::make_unique<LuaState>(LuaState::Kind::kFunctions, lua_limit_, &random_);
  }
}

// ---------------------------------------------------------------- EVAL's cache

const EvalScript* Engine::Find(std::string_view sha, const std::string** key) const {
  if (sha.size() != 40) return nullptr;
  // As sent (clients send the lower case SCRIPT LOAD returned), else folded.
  auto it = scripts_.find(sha);
  if (it != scripts_.end()) {
    if (key != nullptr) *key = &it->first;
    return &it->second;
  }
  char lower[40];
  for (size_t i = 0; i < 40; ++i) {
    char c = sha[i];
    lower[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
  }
  it = scripts_.find(std::string_view(lower, 40));
  if (it == scripts_.end()) return nullptr;
  if (key != nullptr) *key = &it->first;
  return &it->second;
}

const std::string* Engine::Load(std::string_view body, std::string* error) {
  std::string sha = Sha1Hex(body);
  auto found = scripts_.find(sha);
  if (found != scripts_.end()) return &found->first;
  uint32_t flags = 0;
  size_t shebang_len = 0;
  if (auto err = ParseScriptShebang(body, &flags, &shebang_len)) {
    *error = "ERR " + *err;
    return nullptr;
  }
  EnsureEvalState();
  if (!eval_->ok()) {
    *error = "ERR Error compiling script (new function): the Lua interpreter is unavailable";
    return nullptr;
  }
  // The shebang line is dropped but its newline kept: line numbers stay
  // the user's.
  std::string lua_error;
  auto ref = eval_->Compile(body.substr(shebang_len), "@user_script", &lua_error);
  if (!ref) {
    *error = "ERR Error compiling script (new function): " + lua_error;
    return nullptr;
  }
  EvalScript s;
  s.body = std::string(body);
  s.flags = flags;
  s.known = FindKnownScriptByText(body);
  s.ref = *ref;
  scripts_bytes_ += body.size();
  return &scripts_.emplace(std::move(sha), std::move(s)).first->first;
}

void Engine::FlushScripts() {
  // A new interpreter, as Redis's scriptingReset: whatever the old one
  // accumulated goes with it.
  scripts_.clear();
  scripts_bytes_ = 0;
  eval_.reset();
  EnsureEvalState();
}

size_t Engine::scripts_memory() const {
  // The bodies, their names and the table's entries (Redis's
  // evalScriptsMemory counts the same things).
  return scripts_bytes_ + scripts_.size() * (40 + sizeof(EvalScript) + 32);
}

// ---------------------------------------------------------------- runs

bool Engine::CheckFlags(CommandContext& ctx, uint32_t flags, bool read_only_command) {
  if (flags & kFlagEvalCompat) return true;
  if (!(flags & kFlagNoWrites)) {
    std::string refusal = host_.WriteRefusal();
    if (!refusal.empty()) {
      ctx.reply.Error(
          "MISCONF Redis is configured to persist data to AOF, but it's currently unable to "
          "persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only "
          "scripts. AOF error: " +
          refusal);
      return false;
    }
    if (read_only_command) {
      ctx.reply.Error("ERR Can not execute a script with write flag using *_ro command.");
      return false;
    }
  }
  return true;
}

void Engine::RunEval(CommandContext& ctx, const std::string& sha, const EvalScript& script,
                     std::span<const std::string_view> keys, std::span<const std::string_view> args,
                     bool read_only) {
  if (!CheckFlags(ctx, script.flags, read_only)) return;
  const bool ro =
      read_only || (!(script.flags & kFlagEvalCompat) && (script.flags & kFlagNoWrites));
  if (script.known != nullptr && *native_known_) {
    // The fast path: the same effects, replies and records, without Lua.
    RunKnownScript(*script.known, ctx, keys, args, ro);
    return;
  }
  ++ctx.stats.lua_script_calls;
  RunLua(ctx, *eval_, script.ref, sha, /*eval=*/true, ro, keys, args);
}

void Engine::RunFunction(CommandContext& ctx, const Function& f,
                         std::span<const std::string_view> keys,
                         std::span<const std::string_view> args, bool read_only) {
  if (!CheckFlags(ctx, f.flags, read_only)) return;
  const bool ro = read_only || (f.flags & kFlagNoWrites);
  ++ctx.stats.lua_script_calls;
  RunLua(ctx, *fn_state_, f.ref, f.name, /*eval=*/false, ro, keys, args);
}

namespace {

void PushArray(lua_State* L, std::span<const std::string_view> items) {
  lua_createtable(L, static_cast<int>(std::min<size_t>(items.size(), 1 << 24)), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

// The error a failed run replies (luaCallFunction): the error table's
// message, and where it happened.
std::string RunError(lua_State* L, const std::string& name) {
  if (!lua_istable(L, -1)) {
    const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
    std::string m(msg);
    if (m.size() > 100) m.resize(100);
    return "ERR Error running script " + name + ", " + m + "\n";
  }
  std::string msg, source, line;
  bool have_source = false, have_line = false;
  lua_getfield(L, -1, "err");
  if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
  lua_pop(L, 1);
  if (msg.empty()) {
    // error({…}) without err (redis-server 7.0.15 crashes on it).
    return "ERR Error running script " + name + ", the error raised has no err field";
  }
  lua_getfield(L, -1, "source");
  if (lua_isstring(L, -1)) {
    source = lua_tostring(L, -1);
    have_source = true;
  }
  lua_pop(L, 1);
  lua_getfield(L, -1, "line");
  if (lua_isstring(L, -1)) {
    line = lua_tostring(L, -1);
    have_line = true;
  }
  lua_pop(L, 1);
  if (have_source && have_line) msg += " script: " + name + ", on " + source + ":" + line + ".";
  return msg;
}

}  // namespace

void Engine::RunLua(CommandContext& ctx, LuaState& state, int ref, std::string name, bool eval,
                    bool read_only, std::span<const std::string_view> keys,
                    std::span<const std::string_view> args) {
  if (!state.ok()) {
    ctx.reply.Error("ERR the Lua interpreter is unavailable (lua-maxmemory too small)");
    return;
  }
  if (running_ != nullptr) {
    // One script at a time: a script is never started from inside another
    // (the gate answers -BUSY to other clients while one runs long).
    log::Warning("A script was called while {} runs: refused ({})", running_->name,
                 ctx.cmd.fullname);
    ctx.reply.Error(
        running_->eval
            ? "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
              "NOSAVE."
            : "BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
              "SHUTDOWN NOSAVE.");
    return;
  }
  LuaRun run(*this, ctx, read_only, eval, std::move(name), host_.MonoUs());
  lua_State* L = state.L();
  // Whatever happens below (even an exception from a handler's memory),
  // the transaction closes, the caller's database comes back and the state
  // forgets the run.
  const int db = ctx.session.db;
  struct Cleanup {
    Engine& engine;
    LuaState& state;
    LuaRun& run;
    CommandContext& ctx;
    int db;
    ~Cleanup() {
      lua_sethook(state.L(), nullptr, 0, 0);
      state.set_run(nullptr);
      engine.running_ = nullptr;
      ctx.session.db = db;
      ctx.store.Select(db);
      ctx.store.EndTransaction();
      if (run.timed_out) engine.host_.LeaveBusy();
      state.AfterRun();
    }
  } cleanup{*this, state, run, ctx, db};
  ctx.store.BeginTransaction(/*single_unwrapped=*/true);
  running_ = &run;
  state.set_run(&run);

  lua_settop(L, 0);
  lua_getfield(L, LUA_REGISTRYINDEX, LuaState::kErrorHandler);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  int nargs = 0;
  if (eval) {
    // KEYS and ARGV are globals of EVAL scripts.
    state.PushRealGlobals();
    PushArray(L, keys);
    lua_setfield(L, -2, "KEYS");
    PushArray(L, args);
    lua_setfield(L, -2, "ARGV");
    lua_pop(L, 1);
  } else {
    PushArray(L, keys);
    PushArray(L, args);
    nargs = 2;
  }
  if (busy_threshold_ms_ > 0 || hook_budget_ > 0) lua_sethook(L, RunHook, LUA_MASKCOUNT, 100000);
  int status;
  {
    LuaState::LimitScope limit(state);
    status = lua_pcall(L, nargs, 1, 1);
  }
  lua_sethook(L, nullptr, 0, 0);
  if (!run.stop_error.empty()) {
    // A lease refused (or a shutdown): the script's own outcome is moot.
    ctx.reply.Error(run.stop_error);
    return;
  }
  if (status == LUA_ERRMEM) state.CollectGarbage();
  if (status != 0) {
    ctx.reply.Error(RunError(L, run.name));
    return;
  }
  resp::Reply result;
  PopReply(L, &result);
  WriteReply(result, ctx.reply, run.client.resp());
}

// ---------------------------------------------------------------- busy

bool Engine::Interrupt(LuaRun& run) {
  if (hook_budget_ > 0 && ++run.hook_calls > hook_budget_) {
    run.killed = true;
    return true;
  }
  if (busy_threshold_ms_ <= 0) return false;
  if (!run.timed_out) {
    int64_t elapsed_ms = (host_.MonoUs() - run.start_us) / 1000;
    if (elapsed_ms < busy_threshold_ms_) return false;
    log::Warning(
        "Slow script detected: still in execution after {} milliseconds. You can try killing "
        "the script using the {} command. Script name is: {}.",
        elapsed_ms, run.eval ? "SCRIPT KILL" : "FUNCTION KILL", run.name);
    run.timed_out = true;
    host_.EnterBusy(run.eval);
  }
  host_.ServeWhileBusy(run.client.ctx().session);
  if (host_.ShutdownRequested()) run.killed = true;
  if (run.killed) log::Warning("Lua script killed by user with SCRIPT KILL.");
  return run.killed;
}

void Engine::Kill(CommandContext& ctx, bool eval) {
  if (running_ == nullptr) {
    ctx.reply.Error("NOTBUSY No scripts in execution right now.");
    return;
  }
  if (running_->client.wrote()) {
    ctx.reply.Error(
        "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
        "can either wait the script termination or kill the server in a hard way using the "
        "SHUTDOWN NOSAVE command.");
    return;
  }
  if (eval && !running_->eval) {
    ctx.reply.Error(
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
        "NOSAVE.");
    return;
  }
  if (!eval && running_->eval) {
    ctx.reply.Error(
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
    return;
  }
  running_->killed = true;
  ctx.reply.Ok();
}

}  // namespace latch::scripting
