// The interpreter and its sandbox (see lua_state.h for the why): the
// allocator with its limit, the libraries, the read-only proxies, and the
// base functions that must see through them.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "server/log.h"
#include "server/scripting/lua_state.h"

extern "C" {
#include <lua-bitop.h>
#include <lua-cjson.h>
}

namespace latch::scripting {

namespace {

// Registry slots.
constexpr const char* kProxies = "latch_proxies";  // proxy -> real table (weak keys)
constexpr const char* kGlobals = "latch_globals";  // the globals scripts see
constexpr const char* kRealGlobals = "latch_real_globals";
constexpr const char* kLibraryGlobals = "latch_library_globals";  // kFunctions, while loading
constexpr const char* kGlobalsMeta = "latch_globals_meta";        // kFunctions: switches __index

// ---------------------------------------------------------------- proxies

// __newindex of every read-only proxy. luaL_error names the line of the
// script that assigned (level 1 is the caller of this metamethod), as
// Redis's patched VM does.
int ReadonlyNewIndex(lua_State* L) {
  return luaL_error(L, "Attempt to modify a readonly table");
}

// The real table behind proxy `idx`, pushed; or nothing and false when the
// value there is not a proxy.
bool PushReal(lua_State* L, int idx) {
  if (!lua_istable(L, idx)) return false;
  lua_getfield(L, LUA_REGISTRYINDEX, kProxies);
  lua_pushvalue(L, idx < 0 ? idx - 1 : idx);
  lua_rawget(L, -2);
  lua_remove(L, -2);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return false;
  }
  return true;
}

// Wraps the table on top in a proxy: an empty table whose metatable reads
// through to the real one and refuses writes. `meta_visible` is what
// getmetatable() returns for it (its index on the stack, or 0 for false).
void ProxyTop(lua_State* L, int meta_visible) {
  int real = lua_gettop(L);
  if (meta_visible < 0) meta_visible = real + 1 + meta_visible;  // (before the push below)
  lua_newtable(L);                                               // proxy
  lua_createtable(L, 0, 3);                                      // its metatable
  lua_pushvalue(L, real);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyNewIndex);
  lua_setfield(L, -2, "__newindex");
  if (meta_visible != 0) {
    lua_pushvalue(L, meta_visible);
  } else {
    lua_pushboolean(L, 0);
  }
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  // proxies[proxy] = real
  lua_getfield(L, LUA_REGISTRYINDEX, kProxies);
  lua_pushvalue(L, -2);
  lua_pushvalue(L, real);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_replace(L, real);
}

// Replaces every table field of the table on top by its proxy, depth
// first (the globals' `string`, `redis`… and whatever they hold).
void ProtectFields(lua_State* L, int depth) {
  if (depth > 8) return;
  int t = lua_gettop(L);
  // Collect the keys first: a table must not change while lua_next walks it.
  lua_newtable(L);
  int keys = lua_gettop(L);
  int n = 0;
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    if (lua_istable(L, -1) && !lua_rawequal(L, -1, t)) {
      lua_pushvalue(L, -2);
      lua_rawseti(L, keys, ++n);
    }
    lua_pop(L, 1);
  }
  for (int i = 1; i <= n; ++i) {
    lua_rawgeti(L, keys, i);  // key
    lua_pushvalue(L, -1);
    lua_rawget(L, t);  // value
    if (PushReal(L, -1)) {
      lua_pop(L, 2);  // already a proxy
      lua_pop(L, 1);
      continue;
    }
    ProtectFields(L, depth + 1);
    ProxyTop(L, 0);
    lua_rawset(L, t);
  }
  lua_settop(L, t);
}

}  // namespace

void ProtectTopTable(lua_State* L) {
  ProtectFields(L, 0);
  ProxyTop(L, 0);
}

// ---------------------------------------------------------------- base functions

namespace {

// rawset, setmetatable, table.insert/remove/sort on a read-only table: the
// error Redis's VM raises from inside the C function (so without a line).
int RefuseIfProxy(lua_State* L) {
  if (PushReal(L, 1)) {
    lua_pushstring(L, "Attempt to modify a readonly table");
    return lua_error(L);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// rawget, next, unpack, table.concat/getn/maxn/foreach/foreachi: on a
// read-only table they read the real one.
int SeeThrough(lua_State* L) {
  if (PushReal(L, 1)) lua_replace(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// pairs(t) and ipairs(t) return an iterator and t itself: for a proxy the
// iterator reads the real table, which the script never gets hold of.
int ProxyNext(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  if (PushReal(L, 1)) lua_replace(L, 1);
  if (lua_next(L, 1) != 0) return 2;
  lua_pushnil(L);
  return 1;
}

int ProxyInext(lua_State* L) {
  int i = luaL_checkint(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  if (PushReal(L, 1)) lua_replace(L, 1);
  ++i;
  lua_pushinteger(L, i);
  lua_rawgeti(L, 1, i);
  return lua_isnil(L, -1) ? 0 : 2;
}

int Pairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));  // next (ours)
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int Ipairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));  // ProxyInext
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  return 3;
}

// Redis's Lua parses every chunk as text: a binary chunk (string.dump's
// output) is a syntax error there, never bytecode to run. Debian's Lua would
// load it, so chunks that start with the bytecode signature are parsed as
// text here too (after a space, which the lexer skips: the same error).
int LoadChunk(lua_State* L, int s_idx, const char* chunkname) {
  size_t len = 0;
  const char* s = lua_tolstring(L, s_idx, &len);
  if (len > 0 && s[0] == LUA_SIGNATURE[0]) {
    lua_pushliteral(L, " ");
    lua_pushvalue(L, s_idx);
    lua_concat(L, 2);
    s = lua_tolstring(L, -1, &len);
    int status = luaL_loadbuffer(L, s, len, chunkname);
    lua_remove(L, -2);
    return status;
  }
  return luaL_loadbuffer(L, s, len, chunkname);
}

int LoadResult(lua_State* L, int status) {
  if (status == 0) return 1;
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

int Loadstring(lua_State* L) {
  luaL_checkstring(L, 1);
  const char* chunkname = luaL_optstring(L, 2, lua_tostring(L, 1));
  return LoadResult(L, LoadChunk(L, 1, chunkname));
}

// load(f [, name]): reads every piece from f, then as loadstring.
int Load(lua_State* L) {
  const char* chunkname = luaL_optstring(L, 2, "=(load)");
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 2);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (true) {
    lua_pushvalue(L, 1);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    if (!lua_isstring(L, -1)) {
      lua_pop(L, 1);
      luaL_pushresult(&b);
      lua_pushnil(L);
      lua_pushliteral(L, "reader function must return a string");
      return 2;
    }
    if (lua_objlen(L, -1) == 0) {
      lua_pop(L, 1);
      break;
    }
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  return LoadResult(L, LoadChunk(L, lua_gettop(L), chunkname));
}

// Redis's pcall (luaRedisPcall): an error table raised by redis.call comes
// back as its message, as in older Redis versions.
int RedisPcall(lua_State* L) {
  int argc = lua_gettop(L);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

// math.random and math.randomseed on Redis's generator (lmathlib's code with
// rand() replaced), so a seeded sequence is the one Redis gives.
int MathRandom(lua_State* L) {
  constexpr int32_t kMax = INT32_MAX;
  int32_t v = LuaState::From(L).random().Next();
  lua_Number r = static_cast<lua_Number>(v % kMax) / static_cast<lua_Number>(kMax);
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      int l = luaL_checkint(L, 1);
      int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomSeed(lua_State* L) {
  LuaState::From(L).random().Seed(luaL_checkint(L, 1));
  return 0;
}

// bit.tohex(x [, n]) as LuaBitOp 1.0.2, with Redis's fix for n = INT_MIN
// (CVE-2024-31449: Debian's lua-bitop may predate it).
int BitToHex(lua_State* L) {
  uint32_t b = static_cast<uint32_t>(static_cast<int64_t>(luaL_checknumber(L, 1)));
  int32_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(luaL_checknumber(L, 2));
  const char* hexdigits = "0123456789abcdef";
  char buf[8];
  if (n == INT32_MIN) n = INT32_MIN + 1;
  if (n < 0) {
    n = -n;
    hexdigits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  for (int i = n; --i >= 0;) {
    buf[i] = hexdigits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

// struct and cmsgpack: Redis ships them; latch does not (yet). Each of their
// functions says so instead of leaving a nonexistent global.
int NotProvided(lua_State* L) {
  return luaL_error(L, "%s is not provided by latch (see README, Scripting)",
                    lua_tostring(L, lua_upvalueindex(1)));
}

void RegisterRefusedLibrary(lua_State* L, const char* name,
                            std::initializer_list<const char*> functions) {
  lua_newtable(L);
  for (const char* f : functions) {
    lua_pushfstring(L, "%s.%s", name, f);
    lua_pushcclosure(L, NotProvided, 1);
    lua_setfield(L, -2, f);
  }
  lua_setglobal(L, name);
}

void Wrap(lua_State* L, int table, const char* name, lua_CFunction wrapper) {
  lua_getfield(L, table, name);
  lua_pushcclosure(L, wrapper, 1);
  lua_setfield(L, table, name);
}

void OpenLibrary(lua_State* L, const char* name, lua_CFunction open) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  // luaopen_cjson returns its table without setting a global.
  if (name[0] != '\0' && lua_istable(L, -1)) lua_setglobal(L, name);
  lua_settop(L, 0);
}

}  // namespace

// ---------------------------------------------------------------- the state

int32_t LuaState::Random::Next() {
  state = (0x5DEECE66DULL * state + 0xB) & ((1ULL << 48) - 1);
  return static_cast<int32_t>(state >> 17);
}

void LuaState::Random::Seed(int32_t seed) {
  state = (static_cast<uint64_t>(static_cast<uint32_t>(seed)) << 16) | 0x330E;
}

void* LuaState::Alloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* self = static_cast<LuaState*>(ud);
  if (nsize == 0) {
    std::free(ptr);
    self->used_ -= osize;
    return nullptr;
  }
  // While user code runs, growth past the limit fails (Lua raises "not
  // enough memory"); shrinking never does, as Lua requires. Outside it (the
  // few allocations latch's own bookkeeping makes between runs) nothing
  // fails, so no Lua call made outside protected mode can raise.
  if (self->enforce_ && nsize > osize && self->used_ - osize + nsize > self->limit_) {
    return nullptr;
  }
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nullptr;
  self->used_ = self->used_ - osize + nsize;
  return p;
}

LuaState& LuaState::From(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return *static_cast<LuaState*>(ud);
}

namespace {

int AtPanic(lua_State* L) {
  // Every call into Lua is protected; reaching this is a bug.
  log::Warning("Lua panic: {}", lua_isstring(L, -1) ? lua_tostring(L, -1) : "(no message)");
  std::abort();
}

}  // namespace

int LuaState::Setup(lua_State* L) {
  LuaState& self = From(L);
  lua_settop(L, 0);
  lua_newtable(L);
  lua_newtable(L);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxies);

  OpenLibrary(L, "", luaopen_base);
  OpenLibrary(L, LUA_TABLIBNAME, luaopen_table);
  OpenLibrary(L, LUA_STRLIBNAME, luaopen_string);
  OpenLibrary(L, LUA_MATHLIBNAME, luaopen_math);
  OpenLibrary(L, "cjson", luaopen_cjson);
  OpenLibrary(L, "bit", luaopen_bit);
  RegisterRefusedLibrary(L, "struct", {"pack", "unpack", "size"});
  RegisterRefusedLibrary(L, "cmsgpack", {"pack", "unpack", "unpack_one", "unpack_limit"});
  // Not in Redis 7.0.15's sandbox (its Lua drops getfenv, setfenv and
  // newproxy too).
  for (const char* name : {"print", "dofile", "loadfile", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_getglobal(L, "tostring");
  lua_setfield(L, LUA_REGISTRYINDEX, LuaState::kTostring);

  // The base functions that bypass metatables.
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  int g = lua_gettop(L);
  for (const char* name : {"rawset", "setmetatable"}) Wrap(L, g, name, RefuseIfProxy);
  for (const char* name : {"rawget", "unpack"}) Wrap(L, g, name, SeeThrough);
  lua_pushcfunction(L, ProxyNext);
  lua_pushvalue(L, -1);
  lua_setfield(L, g, "next");
  lua_pushcclosure(L, Pairs, 1);
  lua_setfield(L, g, "pairs");
  lua_pushcfunction(L, ProxyInext);
  lua_pushcclosure(L, Ipairs, 1);
  lua_setfield(L, g, "ipairs");
  lua_pushcfunction(L, Loadstring);
  lua_setfield(L, g, "loadstring");
  lua_pushcfunction(L, Load);
  lua_setfield(L, g, "load");
  lua_pushcfunction(L, RedisPcall);
  lua_setfield(L, g, "pcall");
  lua_getglobal(L, "table");
  int t = lua_gettop(L);
  for (const char* name : {"insert", "remove", "sort", "setn"}) Wrap(L, t, name, RefuseIfProxy);
  for (const char* name : {"concat", "getn", "maxn", "foreach", "foreachi"}) {
    Wrap(L, t, name, SeeThrough);
  }
  lua_settop(L, g);
  lua_getglobal(L, "math");
  lua_pushcfunction(L, MathRandom);
  lua_setfield(L, -2, "random");
  lua_pushcfunction(L, MathRandomSeed);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);
  lua_getglobal(L, "bit");
  lua_pushcfunction(L, BitToHex);
  lua_setfield(L, -2, "tohex");
  lua_pop(L, 1);

  // redis
  lua_newtable(L);
  RegisterRedisApi(L, self.kind_);
  lua_setglobal(L, "redis");

  lua_pushcfunction(L, ErrorHandler);
  lua_setfield(L, LUA_REGISTRYINDEX, kErrorHandler);
  if (self.kind_ == Kind::kEval) {
    // Redis keeps EVAL's error handler as a global too.
    lua_pushcfunction(L, ErrorHandler);
    lua_setglobal(L, "__redis__err__handler");
  }

  // Protect: the real globals raise on unknown names; every table in them
  // becomes a proxy; the globals scripts see are a proxy too, whose
  // metatable (as getmetatable(_G) shows it) is read-only as well.
  lua_settop(L, g);
  SetErrorMetatable(L);
  lua_pushvalue(L, g);
  lua_setfield(L, LUA_REGISTRYINDEX, kRealGlobals);
  lua_pushnil(L);
  lua_setfield(L, g, "_G");  // (set again below, to the proxy)
  ProtectFields(L, 0);
  lua_getmetatable(L, g);
  ProxyTop(L, 0);  // the visible metatable
  lua_pushvalue(L, g);
  ProxyTop(L, -2);  // the globals' proxy
  lua_pushvalue(L, -1);
  lua_setfield(L, g, "_G");
  // Strings' methods: string.rep… through the proxy too.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_getfield(L, g, "string");
  lua_setfield(L, -2, "__index");
  lua_pop(L, 2);

  if (self.kind_ == Kind::kEval) {
    lua_setfield(L, LUA_REGISTRYINDEX, kGlobals);
  } else {
    lua_pop(L, 1);
    // The library API, seen while FUNCTION LOAD runs the library's code.
    lua_newtable(L);
    int lib = lua_gettop(L);
    lua_newtable(L);
    RegisterLibraryApi(L);
    SetErrorMetatable(L);
    lua_setfield(L, lib, "redis");
    SetErrorMetatable(L);
    ProtectFields(L, 0);
    lua_setfield(L, LUA_REGISTRYINDEX, kLibraryGlobals);
    // The globals code sees: an empty read-only table whose metatable's
    // __index is switched between the two (ShowLibraryApi).
    lua_newtable(L);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, g);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, ReadonlyNewIndex);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kGlobalsMeta);
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, kGlobals);
  }
  lua_settop(L, 0);
  lua_getfield(L, LUA_REGISTRYINDEX, kGlobals);
  lua_replace(L, LUA_GLOBALSINDEX);
  return 0;
}

LuaState::LuaState(Kind kind, size_t memory_limit, Random* random)
    : kind_(kind), limit_(memory_limit), random_(random) {
  L_ = lua_newstate(Alloc, this);
  if (L_ == nullptr) return;
  lua_atpanic(L_, AtPanic);
  if (lua_cpcall(L_, Setup, nullptr) != 0) {
    log::Warning("Could not set up the Lua interpreter: {}",
                 lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "not enough memory");
    lua_close(L_);
    L_ = nullptr;
  }
}

LuaState::~LuaState() {
  if (L_ != nullptr) lua_close(L_);
}

namespace {

struct CompileArgs {
  const char* body;
  size_t len;
  const char* chunk;
  int status;
  int ref;
};

int CompileProtected(lua_State* L) {
  auto* a = static_cast<CompileArgs*>(lua_touserdata(L, 1));
  lua_pushlstring(L, a->body, a->len);
  a->status = LoadChunk(L, lua_gettop(L), a->chunk);
  if (a->status != 0) {
    // (lua_cpcall drops what this returns: the message waits in the registry.)
    lua_setfield(L, LUA_REGISTRYINDEX, "latch_compile_error");
    return 0;
  }
  a->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

}  // namespace

std::optional<int> LuaState::Compile(std::string_view body, const char* chunk, std::string* error) {
  CompileArgs a{body.data(), body.size(), chunk, 0, LUA_NOREF};
  int top = lua_gettop(L_);
  int rc;
  {
    LimitScope limit(*this);
    rc = lua_cpcall(L_, CompileProtected, &a);
  }
  std::optional<int> out;
  if (rc != 0) {
    *error = lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "not enough memory";
  } else if (a.status != 0) {
    lua_getfield(L_, LUA_REGISTRYINDEX, "latch_compile_error");
    *error = lua_isstring(L_, -1) ? lua_tostring(L_, -1) : "not enough memory";
    lua_pushnil(L_);
    lua_setfield(L_, LUA_REGISTRYINDEX, "latch_compile_error");
  } else {
    out = a.ref;
  }
  lua_settop(L_, top);
  return out;
}

void LuaState::Unref(int ref) {
  luaL_unref(L_, LUA_REGISTRYINDEX, ref);
}

void LuaState::ShowLibraryApi(bool loading) {
  lua_getfield(L_, LUA_REGISTRYINDEX, kGlobalsMeta);
  lua_getfield(L_, LUA_REGISTRYINDEX, loading ? kLibraryGlobals : kRealGlobals);
  lua_setfield(L_, -2, "__index");
  lua_pop(L_, 1);
}

void LuaState::PushGlobals() {
  lua_getfield(L_, LUA_REGISTRYINDEX, kGlobals);
}

void LuaState::PushRealGlobals() {
  lua_getfield(L_, LUA_REGISTRYINDEX, kRealGlobals);
}

void LuaState::AfterRun() {
  lua_settop(L_, 0);
  PushGlobals();
  lua_replace(L_, LUA_GLOBALSINDEX);
  // A step of the collector every 50 runs, as Redis (LUA_GC_CYCLE_PERIOD):
  // a full cycle at once would add latency.
  if (++runs_since_gc_ >= 50) {
    lua_gc(L_, LUA_GCSTEP, 50);
    runs_since_gc_ = 0;
  }
}

void LuaState::CollectGarbage() {
  lua_gc(L_, LUA_GCCOLLECT, 0);
}

}  // namespace latch::scripting
