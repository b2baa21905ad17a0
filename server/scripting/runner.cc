#include "server/scripting/runner.h"

#include <string>

#include "server/grant.h"
#include "server/scripting/known_scripts.h"
#include "server/session.h"

namespace latch::scripting {

resp::Reply* ScriptClient::Call(std::span<const std::string_view> argv) {
  capture_.RewindTo(0);
  capture_.SetProtocol(resp_);
  CommandRunner::Result r = ctx_.Call(
      argv, capture_,
      read_only_ ? CommandRunner::Origin::kScriptReadOnly : CommandRunner::Origin::kScript);
  if (r.ran && r.cmd != nullptr && r.cmd->has(kCmdWrite)) wrote_ = true;
  if (r.lease_refused) {
    refusal_ = capture_.reply().str;
    return nullptr;
  }
  return &capture_.reply();
}

// ---------------------------------------------------------------- known scripts

std::string ScriptRun::Suffix(int line) const {
  return " script: " + std::string(script_.sha1) + ", on @user_script:" + std::to_string(line) +
         ".";
}

void ScriptRun::RuntimeError(int line, std::string_view message) {
  reply().Error("ERR user_script:" + std::to_string(line) + ": " + std::string(message) +
                Suffix(line));
}

bool ScriptRun::Invoke(std::initializer_list<LuaArg> args, resp::Reply* out) {
  auto fail = [&](std::string text) {
    *out = resp::Reply{};
    out->type = resp::Reply::Type::kError;
    out->str = std::move(text);
    return true;
  };
  char storage[8][32];  // numbers, printed (nothing built for strings)
  std::string_view argv[8];
  size_t argc = 0;
  if (args.size() > std::size(argv)) return fail("ERR Too many arguments in a script call");
  for (const LuaArg& a : args) {
    if (a.nil()) return fail("ERR Lua redis lib command arguments must be strings or integers");
    argv[argc] = a.Bytes(storage[argc]);
    ++argc;
  }
  resp::Reply* r = client_.Call(std::span<const std::string_view>(argv, argc));
  if (r == nullptr) {
    // Refused as a whole, exactly as when sent alone.
    reply().Error(client_.refusal());
    return false;
  }
  *out = std::move(*r);  // (the capture is rewound by the next call)
  return true;
}

bool ScriptRun::Queued(size_t i) const {
  const Str key = Key(i);
  return key && client_.ctx().grants.Queued(client_.ctx().session.db, *key);
}

std::optional<resp::Reply> ScriptRun::Call(int line, std::initializer_list<LuaArg> argv) {
  resp::Reply r;
  if (!Invoke(argv, &r)) return std::nullopt;  // already replied (quarantine)
  if (r.is_error()) {
    reply().Error(r.str + Suffix(line));
    return std::nullopt;
  }
  return r;
}

bool ScriptRun::PCall(std::initializer_list<LuaArg> argv) {
  resp::Reply r;
  return Invoke(argv, &r);
}

}  // namespace latch::scripting
