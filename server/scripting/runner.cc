#include "server/scripting/runner.h"

#include <string>

#include "server/commands/common.h"
#include "server/grant.h"
#include "server/pubsub.h"
#include "server/scripting/known_scripts.h"
#include "server/session.h"
#include "server/stats.h"
#include "server/store.h"

namespace latch::scripting {

resp::Reply* ScriptClient::Call(std::span<const std::string_view> argv, bool literal_name) {
  capture_.RewindTo(0);
  capture_.SetProtocol(resp_);
  CommandRunner::Result r = ctx_.Call(
      argv, capture_,
      read_only_ ? CommandRunner::Origin::kScriptReadOnly : CommandRunner::Origin::kScript,
      literal_name);
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

const resp::Reply* ScriptRun::Invoke(std::initializer_list<LuaArg> args) {
  auto fail = [&](std::string_view text) {
    error_.type = resp::Reply::Type::kError;
    error_.str = text;
    return &error_;
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
  resp::Reply* r =
      client_.Call(std::span<const std::string_view>(argv, argc), args.begin()->literal());
  if (r == nullptr) {
    // Refused as a whole, exactly as when sent alone.
    reply().Error(client_.refusal());
    return nullptr;
  }
  return r;
}

const CommandSpec* ScriptRun::TrustedCall(const char* name, size_t i) {
  if (!Key(i)) return nullptr;  // (Call answers the nil argument)
  const CommandRunner::Origin origin =
      client_.read_only() ? CommandRunner::Origin::kScriptReadOnly : CommandRunner::Origin::kScript;
  return client_.ctx().Trusted(name, 2, origin);
}

bool ScriptRun::DirectGet(const char* get, size_t i, std::optional<std::string_view>* value) {
  const CommandSpec* cmd = TrustedCall(get, i);
  if (cmd == nullptr) return false;
  const std::string_view key = *Key(i);
  CommandContext& ctx = client_.ctx();
  // GET's handler (commands/strings.cc): a read of a string (FindTyped).
  ctx.store.Select(ctx.session.db);
  const Keyspace::Entry* e = ctx.store.Find(key, ctx.now);
  if (e != nullptr && !e->is_string()) return false;  // WRONGTYPE: Call says it
  commands::CountRead(ctx, key, e != nullptr);
  if (e == nullptr) {
    value->reset();
  } else {
    *value = e->value();
  }
  ctx.AccountTrusted(*cmd);
  return true;
}

bool ScriptRun::DirectDel(const char* del, size_t i) {
  const CommandSpec* cmd = TrustedCall(del, i);
  if (cmd == nullptr) return false;
  const std::string_view key = *Key(i);
  CommandContext& ctx = client_.ctx();
  // DEL's handler for one key DirectGet just found (commands/strings.cc).
  ctx.store.Select(ctx.session.db);
  ctx.store.Delete(key);
  ctx.Notify(kNotifyGeneric, "del", key);
  client_.set_wrote();
  ctx.AccountTrusted(*cmd);
  return true;
}

bool ScriptRun::Queued(size_t i) const {
  const Str key = Key(i);
  return key && client_.ctx().grants.Queued(client_.ctx().session.db, *key);
}

const resp::Reply* ScriptRun::Call(int line, std::initializer_list<LuaArg> argv) {
  const resp::Reply* r = Invoke(argv);
  if (r == nullptr) return nullptr;  // already replied (quarantine)
  if (r->is_error()) {
    reply().Error(r->str + Suffix(line));
    return nullptr;
  }
  return r;
}

bool ScriptRun::PCall(std::initializer_list<LuaArg> argv) {
  return Invoke(argv) != nullptr;
}

}  // namespace latch::scripting
