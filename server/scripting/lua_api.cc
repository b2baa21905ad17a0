// The `redis` table scripts see (Redis 7.0's script_lua.c, eval.c and
// function_lua.c): redis.call and redis.pcall through the script's client
// (runner.h), and the helpers around them. Each function keeps the rule of
// lua_state.h: its C++ work happens in a frame no Lua error crosses.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "common/sha1.h"
#include "protocol/text.h"
#include "server/acl/users.h"
#include "server/command.h"
#include "server/config.h"
#include "server/control.h"
#include "server/log.h"
#include "server/scripting/engine.h"
#include "server/scripting/functions_load.h"
#include "server/scripting/lua_convert.h"
#include "server/scripting/lua_state.h"

namespace latch::scripting {

namespace {

// An error table raised at once, or returned (redis.pcall's way).
int ErrorOut(lua_State* L, const char* text, bool raise) {
  PushErrorTable(L, text, std::strlen(text));
  if (raise) return lua_error(L);
  return 1;
}

// Fills run.argv from the arguments 1..argc: strings as they are, numbers
// printed with %.17g (Lua's own conversion loses precision). False when one
// is neither. (C++ only: no Lua call here may raise.)
bool CollectArgs(lua_State* L, LuaRun& run, int argc) noexcept {
  try {
    run.argv.clear();
    if (run.numbers.size() < static_cast<size_t>(argc)) run.numbers.resize(argc);
    for (int j = 1; j <= argc; ++j) {
      int t = lua_type(L, j);
      if (t == LUA_TNUMBER) {
        char buf[64];
        int n = std::snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(lua_tonumber(L, j)));
        std::string& s = run.numbers[static_cast<size_t>(j - 1)];
        s.assign(buf, static_cast<size_t>(n));
        run.argv.push_back(s);
      } else if (t == LUA_TSTRING) {
        size_t len = 0;
        const char* s = lua_tolstring(L, j, &len);
        run.argv.emplace_back(s, len);
      } else {
        return false;
      }
    }
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

const resp::Reply* Execute(LuaRun& run) noexcept {
  static const resp::Reply kOom = [] {
    resp::Reply r;
    r.type = resp::Reply::Type::kError;
    r.str = "OOM command not allowed: out of memory";
    return r;
  }();
  try {
    return run.client.Call(run.argv);
  } catch (const std::bad_alloc&) {
    return &kOom;
  }
}

// redis.call / redis.pcall (luaRedisGenericCommand).
int GenericCall(lua_State* L, bool raise) {
  LuaRun* run = LuaState::From(L).run();
  if (run == nullptr) {
    return ErrorOut(L, "redis.call/pcall can only be called inside a script invocation", true);
  }
  int argc = lua_gettop(L);
  if (argc == 0) {
    return ErrorOut(L, "Please specify at least one argument for this redis lib call", raise);
  }
  if (!CollectArgs(L, *run, argc)) {
    lua_settop(L, 0);
    return ErrorOut(L, "Lua redis lib command arguments must be strings or integers", raise);
  }
  const resp::Reply* reply = Execute(*run);
  lua_settop(L, 0);
  if (reply == nullptr) {
    // The lease policy refused: the script ends with that error, and no
    // pcall may catch it (RunHook raises again on every instruction).
    run->stop_error = run->client.refusal();
    lua_sethook(L, RunHook, LUA_MASKCOUNT, 1);
    return ErrorOut(L, run->stop_error.c_str(), true);
  }
  PushReply(L, *reply, run->client.resp());
  if (raise && reply->type == resp::Reply::Type::kError) return lua_error(L);
  return 1;
}

int RedisCall(lua_State* L) {
  return GenericCall(L, true);
}

int RedisPCallCommand(lua_State* L) {
  return GenericCall(L, false);
}

void Digest(std::string_view s, char* out) noexcept {
  try {
    std::string hex = Sha1Hex(s);
    std::memcpy(out, hex.data(), 40);
  } catch (...) {
    std::memset(out, '0', 40);
  }
}

int Sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) return ErrorOut(L, "wrong number of arguments", true);
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  char digest[40];
  Digest(std::string_view(s != nullptr ? s : "", s != nullptr ? len : 0), digest);
  lua_pushlstring(L, digest, 40);
  return 1;
}

int ErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    return ErrorOut(L, "wrong number or type of arguments", false);
  }
  // "-" is added when missing: the first word is the code.
  const char* err = lua_tostring(L, -1);
  if (err[0] != '-') {
    lua_pushliteral(L, "-");
    lua_pushvalue(L, -2);
    lua_concat(L, 2);
    err = lua_tostring(L, -1);
  }
  PushErrorTable(L, err, std::strlen(err));
  return 1;
}

int StatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    return ErrorOut(L, "wrong number or type of arguments", false);
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

// redis.log(level, ...): the arguments joined by spaces.
void WriteLog(int level, lua_State* L, int argc) noexcept {
  try {
    std::string text;
    for (int j = 2; j <= argc; ++j) {
      size_t len = 0;
      const char* s = lua_type(L, j) == LUA_TSTRING ? lua_tolstring(L, j, &len) : nullptr;
      if (s == nullptr) continue;
      if (j != 2) text.push_back(' ');
      text.append(s, len);
    }
    switch (level) {
      case 0:
        log::Debug("{}", text);
        break;
      case 1:
        log::Verbose("{}", text);
        break;
      case 2:
        log::Notice("{}", text);
        break;
      default:
        log::Warning("{}", text);
    }
  } catch (...) {
  }
}

int Log(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc < 2) return ErrorOut(L, "redis.log() requires two arguments or more.", true);
  if (!lua_isnumber(L, 1)) return ErrorOut(L, "First argument must be a number (log level).", true);
  int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) return ErrorOut(L, "Invalid debug level.", true);
  // Numbers become strings first (the only Lua calls that allocate here).
  for (int j = 2; j <= argc; ++j) {
    if (lua_type(L, j) == LUA_TNUMBER) lua_tolstring(L, j, nullptr);
  }
  WriteLog(level, L, argc);
  return 0;
}

int SetResp(lua_State* L) {
  LuaRun* run = LuaState::From(L).run();
  if (run == nullptr) {
    return ErrorOut(L, "redis.setresp can only be called inside a script invocation", true);
  }
  if (lua_gettop(L) != 1) return ErrorOut(L, "redis.setresp() requires one argument.", true);
  int resp = static_cast<int>(lua_tonumber(L, 1));
  if (resp != 2 && resp != 3) return ErrorOut(L, "RESP version must be 2 or 3.", true);
  run->client.set_resp(resp);
  return 0;
}

// redis.set_repl: the flags are checked as Redis checks them, and ignored:
// latch logs every write a script makes, whatever the script asks (the log
// is what a lock's safety across a restart rests on).
int SetRepl(lua_State* L) {
  if (LuaState::From(L).run() == nullptr) {
    return ErrorOut(L, "redis.set_repl can only be called inside a script invocation", true);
  }
  if (lua_gettop(L) != 1) return ErrorOut(L, "redis.set_repl() requires two arguments.", true);
  int flags = static_cast<int>(lua_tonumber(L, -1));
  if ((flags & ~3) != 0) {
    return ErrorOut(
        L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.", true);
  }
  return 0;
}

int ReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

// The Lua debugger (SCRIPT DEBUG) is not provided: breakpoint() is false
// and debug() does nothing, as in Redis when no debugging session is on.
int Breakpoint(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}

int Debug(lua_State*) {
  return 0;
}

// The command (or subcommand) argv names, as lookupCommand finds it: a
// container alone names itself; an unknown subcommand names nothing.
const CommandSpec* NamedCommand(const LuaRun& run) noexcept {
  if (run.argv.empty()) return nullptr;
  const CommandSpec* cmd = CommandRegistry::Get().Find(run.argv[0]);
  if (cmd == nullptr) return nullptr;
  if (cmd->subcommands.empty() || run.argv.size() < 2) return cmd;
  for (const CommandSpec& sub : cmd->subcommands) {
    if (EqualsIgnoreCase(sub.name, run.argv[1])) return &sub;
  }
  return nullptr;
}

// redis.acl_check_cmd(cmd, args…): whether the user running the script
// (the client that sent EVAL or FCALL) may run that command with those
// arguments — its command rules, key patterns and channels, as the ACL
// check of a real call would decide, but without logging a refusal
// (luaRedisAclCheckCmdPermissionsCommand). Arity is not checked.
int AclCheckCmd(lua_State* L) {
  LuaRun* run = LuaState::From(L).run();
  if (run == nullptr) {
    return ErrorOut(L, "redis.acl_check_cmd can only be called inside a script invocation", true);
  }
  int argc = lua_gettop(L);
  if (argc == 0) {
    return ErrorOut(L, "Please specify at least one argument for this redis lib call", true);
  }
  if (!CollectArgs(L, *run, argc)) {
    return ErrorOut(L, "Lua redis lib command arguments must be strings or integers", true);
  }
  const CommandSpec* cmd = NamedCommand(*run);
  bool allowed = false;
  if (cmd != nullptr) {
    CommandContext& ctx = run->client.ctx();
    int pos = 0;
    allowed =
        ctx.acl().acl_users().Of(ctx.session).Check(*cmd, run->argv, &pos) == acl::Denied::kNone;
  }
  lua_settop(L, 0);
  if (cmd == nullptr) return ErrorOut(L, "Invalid command passed to redis.acl_check_cmd()", true);
  lua_pushboolean(L, allowed ? 1 : 0);
  return 1;
}

// ---- redis.register_function (FUNCTION LOAD only)

// Reads the flags table on top ({'no-writes', …}); false on an unknown flag.
bool ReadFlags(lua_State* L, uint32_t* flags) {
  uint32_t f = 0;
  for (int j = 1;; ++j) {
    lua_pushnumber(L, j);
    lua_gettable(L, -2);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    if (!lua_isstring(L, -1)) {
      lua_pop(L, 1);
      return false;
    }
    const char* name = lua_tostring(L, -1);
    bool found = false;
    for (const FlagName& fn : kFlagNames) {
      if (EqualsIgnoreCase(fn.name, name)) {
        f |= fn.flag;
        found = true;
        break;
      }
    }
    lua_pop(L, 1);
    if (!found) return false;
  }
  *flags = f;
  return true;
}

int RegisterFunction(lua_State* L) {
  LibraryLoad* load = LuaState::From(L).load();
  if (load == nullptr) {
    return ErrorOut(L, "redis.register_function can only be called on FUNCTION LOAD command", true);
  }
  int argc = lua_gettop(L);
  if (argc < 1 || argc > 2) {
    return ErrorOut(L, "wrong number of arguments to redis.register_function", true);
  }
  // Name and description stay on the stack (slots argc+1, argc+2) until
  // the function is added; the callback goes to the registry.
  int ref = LUA_NOREF;
  uint32_t flags = 0;
  const char* err = nullptr;
  lua_pushnil(L);  // name
  lua_pushnil(L);  // description
  const int name_slot = argc + 1, desc_slot = argc + 2;
  if (argc == 2) {
    if (!lua_isstring(L, 1)) {
      err = "first argument to redis.register_function must be a string";
    } else if (!lua_isfunction(L, 2)) {
      err = "second argument to redis.register_function must be a function";
    } else {
      lua_pushvalue(L, 1);
      lua_replace(L, name_slot);
      lua_pushvalue(L, 2);
      ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
  } else if (!lua_istable(L, 1)) {
    err =
        "calling redis.register_function with a single argument is only applicable to Lua table "
        "(representing named arguments).";
  } else {
    lua_pushnil(L);
    while (err == nullptr && lua_next(L, 1) != 0) {
      if (!lua_isstring(L, -2)) {
        err = "named argument key given to redis.register_function is not a string";
        break;
      }
      const char* key = lua_tostring(L, -2);
      if (EqualsIgnoreCase(key, "function_name")) {
        if (!lua_isstring(L, -1)) {
          err = "function_name argument given to redis.register_function must be a string";
          break;
        }
        lua_pushvalue(L, -1);
        lua_replace(L, name_slot);
      } else if (EqualsIgnoreCase(key, "description")) {
        if (!lua_isstring(L, -1)) {
          err = "description argument given to redis.register_function must be a string";
          break;
        }
        lua_pushvalue(L, -1);
        lua_replace(L, desc_slot);
      } else if (EqualsIgnoreCase(key, "callback")) {
        if (!lua_isfunction(L, -1)) {
          err = "callback argument given to redis.register_function must be a function";
          break;
        }
        if (ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, ref);
        ref = luaL_ref(L, LUA_REGISTRYINDEX);  // pops the value
        continue;
      } else if (EqualsIgnoreCase(key, "flags")) {
        if (!lua_istable(L, -1)) {
          err =
              "flags argument to redis.register_function must be a table representing function "
              "flags";
          break;
        }
        if (!ReadFlags(L, &flags)) {
          err = "unknown flag given";
          break;
        }
      } else {
        err = "unknown argument given to redis.register_function";
        break;
      }
      lua_pop(L, 1);
    }
    if (err == nullptr && lua_isnil(L, name_slot)) {
      err = "redis.register_function must get a function name argument";
    } else if (err == nullptr && ref == LUA_NOREF) {
      err = "redis.register_function must get a callback argument";
    }
  }
  if (err != nullptr) {
    if (ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, ref);
    return ErrorOut(L, err, true);
  }
  // Strings on the stack (numbers converted in place first).
  lua_tolstring(L, name_slot, nullptr);
  if (!lua_isnil(L, desc_slot)) lua_tolstring(L, desc_slot, nullptr);
  size_t name_len = 0, desc_len = 0;
  const char* name = lua_tolstring(L, name_slot, &name_len);
  const char* desc = lua_isnil(L, desc_slot) ? nullptr : lua_tolstring(L, desc_slot, &desc_len);
  const char* add_err =
      load->Add(std::string_view(name, name_len),
                desc != nullptr ? std::optional<std::string_view>(std::string_view(desc, desc_len))
                                : std::nullopt,
                flags, ref);
  if (add_err != nullptr) {
    luaL_unref(L, LUA_REGISTRYINDEX, ref);
    return ErrorOut(L, add_err, true);
  }
  return 0;
}

void SetNumber(lua_State* L, const char* name, lua_Number v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, name);
}

void SetFunction(lua_State* L, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, -2, name);
}

void RegisterVersion(lua_State* L) {
  // The version INFO reports (redis_version), and its number as Redis
  // encodes it: 0x00MMmmpp.
  int major = 0, minor = 0, patch = 0;
  std::sscanf(kRedisCompatVersion, "%d.%d.%d", &major, &minor, &patch);
  SetNumber(L, "REDIS_VERSION_NUM", (major << 16) | (minor << 8) | patch);
  lua_pushstring(L, kRedisCompatVersion);
  lua_setfield(L, -2, "REDIS_VERSION");
}

}  // namespace

void RegisterLogApi(lua_State* L) {
  SetFunction(L, "log", Log);
  SetNumber(L, "LOG_DEBUG", 0);
  SetNumber(L, "LOG_VERBOSE", 1);
  SetNumber(L, "LOG_NOTICE", 2);
  SetNumber(L, "LOG_WARNING", 3);
}

void RegisterRedisApi(lua_State* L, LuaState::Kind kind) {
  SetFunction(L, "call", RedisCall);
  SetFunction(L, "pcall", RedisPCallCommand);
  RegisterLogApi(L);
  RegisterVersion(L);
  SetFunction(L, "setresp", SetResp);
  SetFunction(L, "sha1hex", Sha1hex);
  SetFunction(L, "error_reply", ErrorReply);
  SetFunction(L, "status_reply", StatusReply);
  SetFunction(L, "set_repl", SetRepl);
  SetNumber(L, "REPL_NONE", 0);
  SetNumber(L, "REPL_AOF", 1);
  SetNumber(L, "REPL_SLAVE", 2);
  SetNumber(L, "REPL_REPLICA", 2);
  SetNumber(L, "REPL_ALL", 3);
  SetFunction(L, "acl_check_cmd", AclCheckCmd);
  if (kind == LuaState::Kind::kEval) {
    SetFunction(L, "breakpoint", Breakpoint);
    SetFunction(L, "debug", Debug);
    SetFunction(L, "replicate_commands", ReplicateCommands);
  }
}

void RegisterLibraryApi(lua_State* L) {
  SetFunction(L, "register_function", RegisterFunction);
  RegisterLogApi(L);
  RegisterVersion(L);
}

}  // namespace latch::scripting
