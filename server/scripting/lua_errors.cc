// The errors a script sees and raises: Redis's error tables ({err = "..."}),
// the error handler that adds the script's line to a runtime error, and the
// error a script gets for reading or writing an undeclared global.
#include <cstring>

#include "server/log.h"
#include "server/scripting/lua_state.h"

namespace latch::scripting {

// ---------------------------------------------------------------- errors

namespace {

// __index of the globals: Redis's luaProtectedTableError.
int GlobalIndexError(lua_State* L) {
  if (lua_gettop(L) != 2) {
    log::Warning("malicious code trying to call luaProtectedTableError with wrong arguments");
    return luaL_error(L, "Wrong number of arguments to luaProtectedTableError");
  }
  if (!lua_isstring(L, -1) && !lua_isnumber(L, -1)) {
    return luaL_error(L, "Second argument to luaProtectedTableError must be a string or number");
  }
  const char* name = lua_tostring(L, -1);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'", name);
}

}  // namespace

void SetErrorMetatable(lua_State* L) {
  lua_newtable(L);
  lua_pushcfunction(L, GlobalIndexError);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

void PushErrorTable(lua_State* L, const char* text, size_t len) {
  // "-CODE msg" keeps its code; plain text gets ERR (luaPushErrorBuff).
  // Trailing CR/LF are trimmed.
  const char* code = "ERR";
  size_t code_len = 3;
  const char* msg = text;
  size_t msg_len = len;
  if (len > 0 && text[0] == '-') {
    const char* sp = static_cast<const char*>(std::memchr(text, ' ', len));
    if (sp == nullptr) {
      msg = text + 1;
      msg_len = len - 1;
    } else {
      code = text + 1;
      code_len = static_cast<size_t>(sp - text - 1);
      msg = sp + 1;
      msg_len = len - static_cast<size_t>(sp + 1 - text);
    }
  }
  // sdstrim(msg, "\r\n"): both ends.
  while (msg_len > 0 && (msg[0] == '\r' || msg[0] == '\n')) {
    ++msg;
    --msg_len;
  }
  while (msg_len > 0 && (msg[msg_len - 1] == '\r' || msg[msg_len - 1] == '\n')) --msg_len;
  lua_newtable(L);
  lua_pushlstring(L, code, code_len);
  lua_pushlstring(L, " ", 1);
  lua_pushlstring(L, msg, msg_len);
  lua_concat(L, 3);
  lua_setfield(L, -2, "err");
}

void RaiseErrorTable(lua_State* L, const char* text) {
  PushErrorTable(L, text, std::strlen(text));
  lua_error(L);
  std::abort();  // (lua_error does not return)
}

int ErrorHandler(lua_State* L) {
  // The function that raised: level 1, or level 2 when level 1 is a C
  // function (error(), redis.call…): the script's line, as Redis reports.
  lua_Debug ar;
  bool have = false;
  if (lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "nSl", &ar) != 0) {
    have = true;
    if (std::strcmp(ar.what, "C") == 0) {
      have = lua_getstack(L, 2, &ar) != 0 && lua_getinfo(L, "nSl", &ar) != 0;
    }
  }
  if (!lua_istable(L, 1)) {
    // err = {err = 'ERR ' .. tostring(err)}
    lua_getfield(L, LUA_REGISTRYINDEX, LuaState::kTostring);
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_pushstring(L, "ERR ");
    lua_insert(L, -2);
    lua_concat(L, 2);
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, "err");
    lua_replace(L, 1);
  }
  if (have) {
    lua_pushstring(L, ar.source);
    lua_setfield(L, 1, "source");
    lua_pushnumber(L, ar.currentline);
    lua_setfield(L, 1, "line");
  }
  lua_settop(L, 1);
  return 1;
}

}  // namespace latch::scripting
