#include "server/scripting/lua_convert.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "server/scripting/lua_state.h"

namespace latch::scripting {

using Type = resp::Reply::Type;

int64_t LuaNumberToInt(lua_Number n) {
  if (std::isnan(n) || n >= 9223372036854775808.0 || n < -9223372036854775808.0) return INT64_MIN;
  return static_cast<int64_t>(n);
}

// ---------------------------------------------------------------- reply → Lua

void PushReply(lua_State* L, const resp::Reply& r, int resp) {
  luaL_checkstack(L, 5, "reached lua stack limit");
  switch (r.type) {
    case Type::kInteger:
      lua_pushnumber(L, static_cast<lua_Number>(r.integer));
      return;
    case Type::kBulk:
      lua_pushlstring(L, r.str.data(), r.str.size());
      return;
    case Type::kNull:
      if (resp == 2) {
        lua_pushboolean(L, 0);
      } else {
        lua_pushnil(L);
      }
      return;
    case Type::kSimple:
      lua_createtable(L, 0, 1);
      lua_pushlstring(L, r.str.data(), r.str.size());
      lua_setfield(L, -2, "ok");
      return;
    case Type::kError: {
      // The captured text is "CODE msg", as luaPushErrorBuff makes it.
      std::string_view text = r.str;
      size_t sp = text.find(' ');
      lua_createtable(L, 0, 2);
      if (sp == std::string_view::npos) {
        lua_pushliteral(L, "ERR ");
        lua_pushlstring(L, text.data(), text.size());
        lua_concat(L, 2);
      } else {
        // Trailing CR/LF trimmed, as sdstrim does.
        size_t end = text.size();
        while (end > sp + 1 && (text[end - 1] == '\r' || text[end - 1] == '\n')) --end;
        lua_pushlstring(L, text.data(), end);
      }
      lua_setfield(L, -2, "err");
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "ignore_error_stats_update");
      return;
    }
    case Type::kArray:
    case Type::kPush:
      lua_createtable(L, static_cast<int>(std::min<size_t>(r.elements.size(), 1 << 20)), 0);
      for (size_t i = 0; i < r.elements.size(); ++i) {
        PushReply(L, r.elements[i], resp);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      return;
    case Type::kMap:
      lua_createtable(L, 0, 1);
      lua_createtable(L, 0, static_cast<int>(std::min<size_t>(r.elements.size() / 2, 1 << 20)));
      for (size_t i = 0; i + 1 < r.elements.size(); i += 2) {
        PushReply(L, r.elements[i], resp);
        PushReply(L, r.elements[i + 1], resp);
        lua_settable(L, -3);
      }
      lua_setfield(L, -2, "map");
      return;
    case Type::kSet:
      lua_createtable(L, 0, 1);
      lua_createtable(L, 0, static_cast<int>(std::min<size_t>(r.elements.size(), 1 << 20)));
      for (const resp::Reply& e : r.elements) {
        PushReply(L, e, resp);
        lua_pushboolean(L, 1);
        lua_settable(L, -3);
      }
      lua_setfield(L, -2, "set");
      return;
    case Type::kDouble:
      lua_createtable(L, 0, 1);
      lua_pushnumber(L, std::strtod(r.str.c_str(), nullptr));
      lua_setfield(L, -2, "double");
      return;
    case Type::kBoolean:
      lua_pushboolean(L, r.integer != 0);
      return;
    case Type::kBigNumber:
      lua_createtable(L, 0, 1);
      lua_pushlstring(L, r.str.data(), r.str.size());
      lua_setfield(L, -2, "big_number");
      return;
    case Type::kVerbatim: {
      // Captured as "fmt:text".
      std::string_view v = r.str;
      size_t colon = v.find(':');
      std::string_view format = colon == std::string_view::npos ? "txt" : v.substr(0, colon);
      std::string_view text = colon == std::string_view::npos ? v : v.substr(colon + 1);
      lua_createtable(L, 0, 1);
      lua_createtable(L, 0, 2);
      lua_pushlstring(L, text.data(), text.size());
      lua_setfield(L, -2, "string");
      lua_pushlstring(L, format.data(), format.size());
      lua_setfield(L, -2, "format");
      lua_setfield(L, -2, "verbatim_string");
      return;
    }
  }
  lua_pushnil(L);
}

// ---------------------------------------------------------------- Lua → reply

namespace {

// t[field] (raw) of the table at -1, pushed.
int RawField(lua_State* L, const char* field) {
  lua_pushstring(L, field);
  lua_rawget(L, -2);
  return lua_type(L, -1);
}

std::string MapCrLf(const char* s, size_t len) {
  std::string out(s, len);
  for (char& c : out) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return out;
}

}  // namespace

void PopReply(lua_State* L, resp::Reply* out) {
  *out = resp::Reply{};
  // Room for the pushes below (a map needs 4): past Lua's stack limit the
  // value becomes an error, as in Redis.
  if (lua_checkstack(L, 4) == 0) {
    out->type = Type::kError;
    out->str = "ERR reached lua stack limit";
    lua_pop(L, 1);
    return;
  }
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      out->type = Type::kBulk;
      out->str.assign(s, len);
      break;
    }
    case LUA_TBOOLEAN:
      out->type = Type::kBoolean;
      out->integer = lua_toboolean(L, -1);
      break;
    case LUA_TNUMBER:
      out->type = Type::kInteger;
      out->integer = LuaNumberToInt(lua_tonumber(L, -1));
      break;
    case LUA_TTABLE: {
      if (RawField(L, "err") == LUA_TSTRING) {
        // (luaExtractErrorInformation reads the field with lua_getfield.)
        lua_pop(L, 1);
        lua_getfield(L, -1, "err");
        size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        out->type = Type::kError;
        out->str.assign(s != nullptr ? s : "", s != nullptr ? len : 0);
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      if (RawField(L, "ok") == LUA_TSTRING) {
        // sdsnew: the status stops at a NUL byte.
        const char* s = lua_tostring(L, -1);
        out->type = Type::kSimple;
        out->str = MapCrLf(s, std::strlen(s));
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      if (RawField(L, "double") == LUA_TNUMBER) {
        char buf[64];
        int n = std::snprintf(buf, sizeof(buf), "%.17g", lua_tonumber(L, -1));
        out->type = Type::kDouble;
        out->str.assign(buf, static_cast<size_t>(n));
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      if (RawField(L, "big_number") == LUA_TSTRING) {
        size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        out->type = Type::kBigNumber;
        out->str = MapCrLf(s, len);
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      if (RawField(L, "verbatim_string") == LUA_TTABLE) {
        if (RawField(L, "format") == LUA_TSTRING) {
          lua_pushstring(L, "string");
          lua_rawget(L, -3);
          if (lua_type(L, -1) == LUA_TSTRING) {
            size_t flen = 0, len = 0;
            const char* f = lua_tolstring(L, -2, &flen);
            const char* s = lua_tolstring(L, -1, &len);
            out->type = Type::kVerbatim;
            // The format is three characters (addReplyVerbatim copies 3).
            out->str.assign(f, std::min<size_t>(flen, 3));
            out->str.resize(3, ' ');
            out->str += ':';
            out->str.append(s, len);
            lua_pop(L, 4);
            return;
          }
          lua_pop(L, 1);
        }
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
      if (RawField(L, "map") == LUA_TTABLE) {
        out->type = Type::kMap;
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          lua_pushvalue(L, -2);  // the key, converted and popped first
          out->elements.emplace_back();
          PopReply(L, &out->elements.back());
          out->elements.emplace_back();
          PopReply(L, &out->elements.back());
        }
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      if (RawField(L, "set") == LUA_TTABLE) {
        out->type = Type::kSet;
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          lua_pop(L, 1);
          lua_pushvalue(L, -1);
          out->elements.emplace_back();
          PopReply(L, &out->elements.back());
        }
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      out->type = Type::kArray;
      for (int j = 1;; ++j) {
        lua_rawgeti(L, -1, j);
        if (lua_isnil(L, -1)) {
          lua_pop(L, 1);
          break;
        }
        out->elements.emplace_back();
        PopReply(L, &out->elements.back());
      }
      break;
    }
    default:
      out->type = Type::kNull;
      break;
  }
  lua_pop(L, 1);
}

void WriteReply(const resp::Reply& v, resp::ReplySink& out, int script_resp) {
  switch (v.type) {
    case Type::kBulk:
      out.Bulk(v.str);
      return;
    case Type::kBoolean:
      if (script_resp == 2) {
        if (v.integer != 0) {
          out.Int(1);
        } else {
          out.Null();
        }
      } else {
        out.Bool(v.integer != 0);
      }
      return;
    case Type::kInteger:
      out.Int(v.integer);
      return;
    case Type::kError:
      out.Error(v.str);
      return;
    case Type::kSimple:
      out.Simple(v.str);
      return;
    case Type::kDouble:
      out.Double(std::strtod(v.str.c_str(), nullptr));
      return;
    case Type::kBigNumber:
      out.BigNumber(v.str);
      return;
    case Type::kVerbatim:
      out.Verbatim(std::string_view(v.str).substr(0, 3), std::string_view(v.str).substr(4));
      return;
    case Type::kMap:
      out.Map(v.elements.size() / 2);
      for (const resp::Reply& e : v.elements) WriteReply(e, out, script_resp);
      return;
    case Type::kSet:
      out.Set(v.elements.size());
      for (const resp::Reply& e : v.elements) WriteReply(e, out, script_resp);
      return;
    case Type::kArray:
    case Type::kPush:
      out.Array(v.elements.size());
      for (const resp::Reply& e : v.elements) WriteReply(e, out, script_resp);
      return;
    case Type::kNull:
      out.Null();
      return;
  }
}

}  // namespace latch::scripting
