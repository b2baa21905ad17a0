// Function libraries (Redis 7.0's functions.c and function_lua.c): FUNCTION
// LOAD runs a library's code with only the library API in sight
// (redis.register_function, redis.log, the version), collects the functions
// it registers, and adds the library all or nothing. FUNCTION DUMP's payload
// is Redis's own (function_dump.cc), so a payload moves between Redis and
// latch.
#include <chrono>
#include <new>
#include <set>

#include "protocol/text.h"
#include "server/scripting/engine.h"
#include "server/scripting/functions_load.h"
#include "server/scripting/shebang.h"

namespace latch::scripting {

bool LibraryLoad::ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

const char* LibraryLoad::Add(std::string_view name, std::optional<std::string_view> description,
                             uint32_t flags, int ref) noexcept {
  // (Redis checks a function's name with the library's words.)
  if (!ValidName(name)) {
    return "Library names can only contain letters, numbers, or underscores(_) and must be at "
           "least one character long";
  }
  for (const Registered& r : functions_) {
    if (r.name == name) return "Function already exists in the library";
  }
  try {
    Registered r;
    r.name = std::string(name);
    if (description) r.description = std::string(*description);
    r.flags = flags;
    r.ref = ref;
    functions_.push_back(std::move(r));
  } catch (const std::bad_alloc&) {
    return "out of memory";
  }
  return nullptr;
}

namespace {

int64_t SteadyUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct RunChunkArgs {
  int ref;
  int status;
};

}  // namespace

std::optional<std::string> Engine::LoadLibrary(std::string_view code, bool replace,
                                               std::string* error, bool replaying) {
  LibraryMetadata md;
  if (auto err = ParseLibraryMetadata(code, &md)) {
    *error = "ERR " + *err;
    return std::nullopt;
  }
  if (!LibraryLoad::ValidName(md.name)) {
    *error =
        "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
        "least one character long";
    return std::nullopt;
  }
  if (!EqualsIgnoreCase(md.engine, "LUA")) {
    *error = "ERR Engine '" + md.engine + "' not found";
    return std::nullopt;
  }
  auto old = libraries_.find(md.name);
  if (old != libraries_.end() && !replace) {
    *error = "ERR Library '" + md.name + "' already exists";
    return std::nullopt;
  }
  EnsureFunctionsState();
  LuaState& st = *fn_state_;
  if (!st.ok()) {
    *error = "ERR the Lua interpreter is unavailable (lua-maxmemory too small)";
    return std::nullopt;
  }

  // Compile and run the library's code with the library API as globals.
  LibraryLoad load;
  load.start_us = SteadyUs();
  load.timeout_ms = replaying ? 0 : 500;
  st.ShowLibraryApi(true);
  std::string lua_error;
  auto chunk = st.Compile(md.code, "@user_function", &lua_error);
  auto unref_all = [&] {
    for (auto& f : load.functions()) st.Unref(f.ref);
  };
  if (!chunk) {
    st.ShowLibraryApi(false);
    *error = "ERR Error compiling function: " + lua_error;
    return std::nullopt;
  }
  lua_State* L = st.L();
  st.set_load(&load);
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, *chunk);
  lua_sethook(L, RunHook, LUA_MASKCOUNT, 100000);
  int status;
  {
    LuaState::LimitScope limit(st);
    status = lua_pcall(L, 0, 0, 0);
  }
  lua_sethook(L, nullptr, 0, 0);
  st.set_load(nullptr);
  st.Unref(*chunk);
  st.ShowLibraryApi(false);
  if (status != 0) {
    // luaExtractErrorInformation: a string is "ERR <it>", a table its err.
    std::string msg;
    if (lua_isstring(L, -1)) msg = std::string("ERR ") + lua_tostring(L, -1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
      lua_pop(L, 1);
    }
    lua_settop(L, 0);
    unref_all();
    if (status == LUA_ERRMEM) st.CollectGarbage();
    *error = "ERR Error registering functions: " + msg;
    return std::nullopt;
  }
  lua_settop(L, 0);
  if (load.functions().empty()) {
    *error = "ERR No functions registered";
    return std::nullopt;
  }
  for (const auto& f : load.functions()) {
    auto it = functions_.find(ToLower(f.name));
    if (it != functions_.end() && !(old != libraries_.end() && it->second.library == md.name)) {
      unref_all();
      *error = "ERR Function " + f.name + " already exists";
      return std::nullopt;
    }
  }
  // Commit: the old library's functions go, the new ones come.
  if (old != libraries_.end()) {
    for (const std::string& fname : old->second.functions) {
      auto it = functions_.find(ToLower(fname));
      if (it != functions_.end()) {
        st.Unref(it->second.ref);
        functions_.erase(it);
      }
    }
    libraries_.erase(old);
  }
  Library lib;
  lib.name = md.name;
  lib.code = std::string(code);
  for (auto& f : load.functions()) {
    Function fn;
    fn.name = f.name;
    fn.has_description = f.description.has_value();
    if (f.description) fn.description = *f.description;
    fn.flags = f.flags;
    fn.ref = f.ref;
    fn.library = md.name;
    lib.functions.push_back(f.name);
    functions_.emplace(ToLower(f.name), std::move(fn));
  }
  libraries_.emplace(md.name, std::move(lib));
  return md.name;
}

bool Engine::DeleteLibrary(std::string_view name) {
  auto it = libraries_.find(std::string(name));
  if (it == libraries_.end()) return false;
  for (const std::string& fname : it->second.functions) {
    auto f = functions_.find(ToLower(fname));
    if (f != functions_.end()) {
      fn_state_->Unref(f->second.ref);
      functions_.erase(f);
    }
  }
  libraries_.erase(it);
  return true;
}

void Engine::FlushLibraries() {
  for (auto& [name, f] : functions_) fn_state_->Unref(f.ref);
  functions_.clear();
  libraries_.clear();
  fn_state_->CollectGarbage();
}

const Function* Engine::FindFunction(std::string_view name) const {
  auto it = functions_.find(ToLower(name));
  return it == functions_.end() ? nullptr : &it->second;
}

size_t Engine::functions_overhead() const {
  size_t n = 0;
  for (const auto& [name, lib] : libraries_) n += name.size() + lib.code.size() + sizeof(Library);
  for (const auto& [name, f] : functions_) {
    n += name.size() + f.description.size() + sizeof(Function);
  }
  return n;
}

bool Engine::Restore(const std::vector<std::string>& codes, std::string_view policy,
                     std::string* error) {
  // All or nothing: the libraries as they are now, kept to put back.
  std::vector<std::string> before;
  for (const auto& [name, lib] : libraries_) before.push_back(lib.code);
  auto put_back = [&] {
    FlushLibraries();
    std::string ignored;
    for (const std::string& c : before) LoadLibrary(c, true, &ignored, true);
  };
  if (EqualsIgnoreCase(policy, "FLUSH")) FlushLibraries();
  const bool replace = EqualsIgnoreCase(policy, "REPLACE");
  // Within the payload a name may not repeat; against the existing ones,
  // APPEND refuses a collision and REPLACE replaces.
  std::set<std::string> seen;
  for (const std::string& code : codes) {
    LibraryMetadata md;
    if (!ParseLibraryMetadata(code, &md) && !seen.insert(md.name).second) {
      put_back();
      *error = "ERR Library " + md.name + " already exists";
      return false;
    }
    if (!replace && !ParseLibraryMetadata(code, &md) && libraries_.count(md.name) > 0) {
      put_back();
      *error = "ERR Library " + md.name + " already exists";
      return false;
    }
  }
  for (const std::string& code : codes) {
    std::string err;
    if (!LoadLibrary(code, true, &err, true)) {
      put_back();
      *error = err;
      return false;
    }
  }
  return true;
}

}  // namespace latch::scripting
