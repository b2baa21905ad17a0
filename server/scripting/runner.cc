#include "server/scripting/runner.h"

#include <string>

#include "protocol/reply_capture.h"
#include "server/grant.h"
#include "server/scripting/known_scripts.h"
#include "server/session.h"

namespace latch::scripting {

std::string ScriptRun::Suffix(int line) const {
  return " script: " + std::string(script_.sha1) + ", on @user_script:" + std::to_string(line) +
         ".";
}

void ScriptRun::RuntimeError(int line, std::string_view message) {
  ctx_.reply.Error("ERR user_script:" + std::to_string(line) + ": " + std::string(message) +
                   Suffix(line));
}

bool ScriptRun::Invoke(std::initializer_list<LuaArg> args, resp::Reply* out) {
  auto fail = [&](std::string text) {
    *out = resp::Reply{};
    out->type = resp::Reply::Type::kError;
    out->str = std::move(text);
    return true;
  };
  std::string storage[8];
  std::string_view argv[8];
  size_t argc = 0;
  if (args.size() > std::size(argv)) return fail("ERR Too many arguments in a script call");
  for (const LuaArg& a : args) {
    if (a.nil()) return fail("ERR Lua redis lib command arguments must be strings or integers");
    argv[argc] = a.Bytes(storage[argc]);
    ++argc;
  }
  resp::ReplyCapture capture(2);
  CommandRunner::Result r = ctx_.Call(
      std::span<const std::string_view>(argv, argc), capture,
      read_only_ ? CommandRunner::Origin::kScriptReadOnly : CommandRunner::Origin::kScript);
  if (r.lease_refused) {
    // Refused as a whole, exactly as when sent alone.
    ctx_.reply.Error(capture.reply().str);
    return false;
  }
  *out = std::move(capture.reply());
  return true;
}

bool ScriptRun::Queued(size_t i) const {
  const Str key = Key(i);
  return key && ctx_.grants.Queued(ctx_.session.db, *key);
}

std::optional<resp::Reply> ScriptRun::Call(int line, std::initializer_list<LuaArg> argv) {
  resp::Reply r;
  if (!Invoke(argv, &r)) return std::nullopt;  // already replied (quarantine)
  if (r.is_error()) {
    ctx_.reply.Error(r.str + Suffix(line));
    return std::nullopt;
  }
  return r;
}

bool ScriptRun::PCall(std::initializer_list<LuaArg> argv) {
  resp::Reply r;
  return Invoke(argv, &r);
}

}  // namespace latch::scripting
