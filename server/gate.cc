#include "server/gate.h"

#include <algorithm>
#include <memory>
#include <new>
#include <utility>

#include "log/writer.h"
#include "protocol/text.h"
#include "server/acl/users.h"
#include "server/config.h"
#include "server/control.h"
#include "server/grant.h"
#include "server/latency.h"
#include "server/log.h"
#include "server/pubsub.h"
#include "server/session.h"
#include "server/slowlog.h"
#include "server/store.h"
#include "server/watch.h"

namespace latch {

bool CommandContext::AdmitGrant(int64_t deadline, bool blind) {
  if (auto refusal = grants.Admit(deadline, now.mono, blind && alone)) {
    ReplyRefusal(*refusal);
    return false;
  }
  return true;
}

bool CommandContext::CheckTtl(int64_t ttl_ms) {
  if (auto err = grants.CheckTtl(ttl_ms)) {
    reply.Error(*err);
    return false;
  }
  return true;
}

void CommandContext::Notify(uint32_t type, std::string_view event, std::string_view key) {
  pubsub.Notify(type, event, key, store.selected());
}

bool CommandContext::TakenForAcquire(std::string_view key) {
  return !grants.Free(session.db, key, now);
}

void CommandContext::ReplyRefusal(const std::string& text) {
  reply.Error(text);
  lease_refused = true;
}

// The server's roles (control.h), each a view of the one ServerControl.
AdminControl& CommandContext::admin() {
  return control_;
}
ClientsControl& CommandContext::clients() {
  return control_;
}
PersistenceControl& CommandContext::persistence() {
  return control_;
}
DiagnosticsControl& CommandContext::diagnostics() {
  return control_;
}
ScriptingControl& CommandContext::scripting() {
  return control_;
}
AccessControl& CommandContext::acl() {
  return control_;
}
TestBenchControl& CommandContext::bench() {
  return control_;
}

CommandRunner::Result CommandContext::Call(std::span<const std::string_view> args,
                                           resp::ReplySink& out, CommandRunner::Origin origin,
                                           bool literal_name) {
  return runner_.Execute(session, args, now, out, origin, literal_name);
}

const std::string& CommandContext::name() const {
  return cmd.fullname;
}

void Gate::Configure(const Config& config) {
  stats_ = &control_.stats();
  slowlog_ = &control_.slowlog();
  latency_ = &control_.latency_monitor();
  clock_ = &control_.clock();
  slowlog_slower_than_us_ = config.slowlog_log_slower_than;
  slowlog_max_len_ = static_cast<size_t>(config.slowlog_max_len);
  latency_threshold_ms_ = config.latency_monitor_threshold;
  latency_tracking_ = config.latency_tracking;
  memory_limited_ = config.maxmemory > 0;
  timing_ = slowlog_slower_than_us_ >= 0 || latency_threshold_ms_ > 0 || latency_tracking_;
}

CommandStats& Gate::CountCall(const CommandSpec& cmd, bool failed, int64_t duration_us) {
  CommandStats& cs = stats_->command(cmd.index);
  ++cs.calls;
  if (failed) ++cs.failed_calls;
  if (!timing_) return cs;
  cs.usec += static_cast<uint64_t>(duration_us);
  if (latency_tracking_) {
    if (!cs.histogram) cs.histogram = std::make_unique<LatencyHistogram>();
    cs.histogram->Record(duration_us * 1000);
  }
  return cs;
}

void Gate::Account(const CommandContext& ctx, bool failed, int64_t duration_us, bool from_script) {
  const CommandSpec& cmd = ctx.cmd;
  CountCall(cmd, failed, duration_us);
  if (!timing_) return;
  // A script's calls are part of the script's own entry, as in Redis.
  if (from_script) return;
  const int64_t now_s = ctx.now.wall_ms / 1000;
  if (slowlog_slower_than_us_ >= 0) {
    if (duration_us >= slowlog_slower_than_us_ && !cmd.has(kCmdSkipSlowlog)) {
      slowlog_->Push(ctx.argv, ctx.redacted, duration_us, now_s, ctx.session.addr, ctx.session.name,
                     slowlog_max_len_);
    }
    slowlog_->Trim(slowlog_max_len_);
  }
  const int64_t ms = duration_us / 1000;
  if (latency_threshold_ms_ > 0 && ms >= latency_threshold_ms_) {
    latency_->Add(cmd.has(kCmdFast) ? "fast-command" : "command", ms, now_s);
  }
}

namespace {

// Like Redis: the name and the first arguments, each cut to 128 bytes.
std::string UnknownCommandText(std::span<const std::string_view> argv) {
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    // (Appended piece by piece: GCC 12 warns, wrongly, on "literal" +
    // std::string&& at -O3, its bug 105329.)
    const size_t room = 128 - args.size();
    args += '\'';
    args += UpToNul(argv[i]).substr(0, room);
    args += "' ";
  }
  std::string text = "ERR unknown command '";
  text += UpToNul(argv[0]).substr(0, 128);
  text += "', with args beginning with: ";
  text += args;
  return text;
}

}  // namespace

const CommandSpec* Gate::Lookup(std::span<const std::string_view> argv, bool from_script,
                                std::string* error) const {
  const CommandSpec* cmd = registry_.Find(argv[0]);
  if (cmd == nullptr) {
    *error =
        from_script ? "ERR Unknown Redis command called from script" : UnknownCommandText(argv);
    return nullptr;
  }
  if (cmd->subcommands.empty() || argv.size() < 2) return cmd;
  for (const CommandSpec& s : cmd->subcommands) {
    if (EqualsIgnoreCase(s.name, argv[1])) return &s;
  }
  if (from_script) {
    *error = "ERR Unknown Redis command called from script";
    return nullptr;
  }
  std::string upper = cmd->name;
  for (char& ch : upper) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
  *error = "ERR unknown subcommand '" + std::string(UpToNul(argv[1]).substr(0, 128)) + "'. Try " +
           upper + " HELP.";
  return nullptr;
}

std::optional<std::string> Gate::CheckAcl(const CommandSpec& cmd, Session& session,
                                          std::span<const std::string_view> argv, Origin origin,
                                          const TimeSnapshot& now) const {
  const acl::User& user = users_->Of(session);
  int pos = 0;
  const acl::Denied denied = user.Check(cmd, argv, &pos);
  if (denied == acl::Denied::kNone) return std::nullopt;
  // ACL LOG: the command's name, or the key or channel at fault.
  const bool from_script = origin == Origin::kScript || origin == Origin::kScriptReadOnly;
  const acl::Context context = from_script ? acl::Context::kLua
                               : (origin == Origin::kExec || session.multi.open())
                                   ? acl::Context::kMulti
                                   : acl::Context::kToplevel;
  const std::string_view object = denied == acl::Denied::kCommand ? std::string_view(cmd.fullname)
                                                                  : argv[static_cast<size_t>(pos)];
  // client-info shows the refused command as the client's current one
  // (inside EXEC, EXEC: Redis's lastcmd).
  if (origin == Origin::kClient) session.last_command = &cmd.fullname;
  users_->Log(denied, context, object, user.name, now.wall_ms, session);
  if (from_script) {
    // Redis words it for the script's author (scriptVerifyACL).
    switch (denied) {
      case acl::Denied::kCommand:
        return "ERR The user executing the script can't run this command or subcommand";
      case acl::Denied::kKey:
        return "ERR The user executing the script can't access at least one of the keys "
               "mentioned in the command arguments";
      default:
        return "ERR The user executing the script can't publish to the channel mentioned in "
               "the command";
    }
  }
  if (origin == Origin::kExec) {
    // Rights changed between MULTI's queueing and EXEC (execCommand).
    const char* reason = denied == acl::Denied::kCommand
                             ? "no permission to execute the command or subcommand"
                         : denied == acl::Denied::kKey
                             ? "no permission to touch the specified keys"
                             : "no permission to access one of the channels used as arguments";
    return std::string(
               "NOPERM ACLs rules changed between the moment the transaction was accumulated "
               "and the EXEC call. This command is no longer allowed for the following reason: ") +
           reason;
  }
  switch (denied) {
    case acl::Denied::kCommand:
      return "NOPERM this user has no permissions to run the '" + cmd.fullname + "' command";
    case acl::Denied::kKey:
      return "NOPERM this user has no permissions to access one of the keys used as arguments";
    default:
      return "NOPERM this user has no permissions to access one of the channels used as "
             "arguments";
  }
}

std::optional<std::string> Gate::Check(const CommandSpec& cmd, Session& session,
                                       std::span<const std::string_view> argv, Origin origin,
                                       const TimeSnapshot& now) const {
  const int argc = static_cast<int>(argv.size());
  const bool from_script = origin == Origin::kScript || origin == Origin::kScriptReadOnly;
  // 2. Arity.
  if ((cmd.arity > 0 && cmd.arity != argc) || argc < -cmd.arity) {
    if (from_script) return "ERR Wrong number of args calling Redis command from script";
    return "ERR wrong number of arguments for '" + cmd.fullname + "' command";
  }
  // Inside a script: the commands Redis refuses there, then the read-only
  // rule (scriptCall's order: before the server's state is looked at).
  if (from_script) {
    if (cmd.has(kCmdNoScript) && !script_deny_disabled_) {
      return "ERR This Redis command is not allowed from script";
    }
    // The user's rights, then the read-only rule (scriptCall's order).
    if (users_ != nullptr && !users_->Of(session).unrestricted_cache) {
      if (auto refusal = CheckAcl(cmd, session, argv, origin, now)) return refusal;
    }
    if (origin == Origin::kScriptReadOnly && cmd.has(kCmdWrite)) {
      return "ERR Write commands are not allowed from read-only scripts.";
    }
  }
  // DEBUG while enable-debug-command does not allow it: refused before
  // authentication and ACL, as Redis does (the handler says the same).
  if (cmd.has(kCmdProtected) && origin == Origin::kClient) {
    const DebugCommand mode = control_.config().enable_debug_command;
    if (mode == DebugCommand::kNo || (mode == DebugCommand::kLocal && !session.local)) {
      return "ERR DEBUG command not allowed. If the enable-debug-command option is set to "
             "\"local\", you can run it from a local connection, otherwise you need to set this "
             "option in the configuration file, and then restart the server.";
    }
  }
  // 3. Authentication (a script or a transaction runs as its caller).
  if (origin == Origin::kClient && !session.authenticated && !cmd.has(kCmdNoAuth)) {
    return "NOAUTH Authentication required.";
  }
  // 3b. The user's rights: one branch while the user may run everything
  // (the default user, unless ACL SETUSER restricted it). (A script's
  // calls were checked above.)
  if (!from_script && users_ != nullptr && !users_->Of(session).unrestricted_cache) {
    if (auto refusal = CheckAcl(cmd, session, argv, origin, now)) return refusal;
  }
  // 4. A log that cannot be written must not acknowledge writes (Redis also
  // answers PING this way, so health checks notice).
  if (log_ != nullptr && !log_->write_ok() &&
      (cmd.has(kCmdWrite) || (!from_script && cmd.has(kCmdHealthCheck)))) {
    return "MISCONF " + log_->write_error();
  }
  // A RESP2 connection that listens to channels reads only messages: it may
  // only change what it listens to, PING, QUIT or RESET (RESP3 mixes push
  // frames with replies, so there everything is allowed).
  if (origin == Origin::kClient && session.resp == 2 && session.subscribed() &&
      !cmd.has(kCmdSubscribedContext)) {
    return "ERR Can't execute '" + cmd.fullname +
           "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
           "this context";
  }
  // 4b. Memory (maxmemory, eviction.cc): the policy frees what it may; if
  // the usage is still past the limit, what may grow memory is refused —
  // a denyoom command, EXEC of one, anything queued in MULTI — as Redis does.
  if (memory_limited_ && origin == Origin::kClient && memory_guard_ && !memory_guard_()) {
    bool grows = cmd.has(kCmdDenyOom) || (session.multi.open() && !cmd.has(kCmdTransactionControl));
    if (!grows && session.multi.open() && cmd.fullname == "exec") {
      for (const auto& q : session.multi.queued()) {
        const CommandSpec* c = q.empty() ? nullptr : registry_.Find(q[0]);
        if (c != nullptr && c->has(kCmdDenyOom)) grows = true;
      }
    }
    if (grows) return "OOM command not allowed when used memory > 'maxmemory'.";
  }
  // 5. Loading.
  if (loading_ && !cmd.has(kCmdLoading)) return "LOADING latch is loading the dataset in memory";
  // A busy script: only what Redis allows meanwhile.
  if (busy_ != 0 && origin == Origin::kClient && !cmd.has(kCmdAllowBusy)) {
    return busy_ == 1 ? "BUSY Redis is busy running a script. You can only call SCRIPT "
                        "KILL or SHUTDOWN NOSAVE."
                      : "BUSY Redis is busy running a script. You can only call FUNCTION "
                        "KILL or SHUTDOWN NOSAVE.";
  }
  return std::nullopt;
}

Gate::Result Gate::Reject(Session& session, const CommandSpec* cmd, std::string_view text,
                          resp::ReplySink& reply, Origin origin) {
  // A refused command. Inside MULTI it also dooms the transaction: EXEC will
  // answer EXECABORT (Redis's rule); an EXEC that is itself refused discards
  // the transaction at once, saying why — also outside MULTI, as Redis does
  // (`EXEC x` answers EXECABORT, not the arity error).
  const bool from_script = origin == Origin::kScript || origin == Origin::kScriptReadOnly;
  if (origin == Origin::kClient && cmd != nullptr && cmd->name == "exec") {
    std::string_view why = text;
    if (why.substr(0, 4) == "ERR ") why.remove_prefix(4);
    reply.Error("EXECABORT Transaction discarded because of: " + std::string(why));
    session.multi.Discard();
    control_.watches().UnwatchAll(session);
  } else {
    reply.Error(text);
  }
  if (origin == Origin::kClient) session.multi.Fail();
  if (!from_script) ++nested_errors_;
  if (cmd != nullptr) ++stats_->command(cmd->index).rejected_calls;
  Result result;
  result.cmd = cmd;
  return result;
}

Gate::Result Gate::Execute(Session& session, std::span<const std::string_view> argv,
                           const TimeSnapshot& now, resp::ReplySink& reply, Origin origin,
                           bool literal_name) {
  // 1. The command (and subcommand).
  const CommandSpec* cmd = literal_name ? FindLiteral(argv[0]) : nullptr;
  if (cmd == nullptr) {
    std::string error;
    cmd = Lookup(argv, origin == Origin::kScript || origin == Origin::kScriptReadOnly, &error);
    if (cmd == nullptr) return Reject(session, nullptr, error, reply, origin);
  }
  // 2–5, 7: arity, authentication, MISCONF, LOADING, read-only scripts.
  if (auto refusal = Check(*cmd, session, argv, origin, now)) {
    return Reject(session, cmd, *refusal, reply, origin);
  }
  Result result;
  result.cmd = cmd;
  result.ran = true;
  // 6. MULTI: queued, to run together at EXEC (transactions.cc).
  if (origin == Origin::kClient && session.multi.open() && !cmd->has(kCmdTransactionControl)) {
    session.multi.Queue(argv);  // (kept only while the transaction can still run)
    reply.Simple("QUEUED");
    return result;
  }
  // 8. The handler.
  result.lease_refused = Run(*cmd, session, argv, now, reply, origin);
  return result;
}

const CommandSpec* Gate::FindLiteral(std::string_view name) {
  // Direct-mapped by the literal's address; a command with subcommands is
  // looked up in full each time (its spec depends on argv[1]).
  const auto address = reinterpret_cast<uintptr_t>(name.data());
  LiteralEntry& slot = literal_cache_[(address >> 3) % literal_cache_.size()];
  if (slot.name == name.data() && slot.size == name.size()) return slot.cmd;
  const CommandSpec* cmd = registry_.Find(name);
  if (cmd == nullptr || !cmd->subcommands.empty()) return nullptr;
  slot = {name.data(), name.size(), cmd};
  return cmd;
}

const CommandSpec* Gate::Trusted(Session& session, const char* name, int argc, Origin origin) {
  // What Execute would check for this call, settled once: anything that
  // could refuse it, word it differently or show it elsewhere sends it
  // through Execute instead.
  if (origin != Origin::kScript && origin != Origin::kScriptReadOnly) return nullptr;
  if (on_executed_ || loading_) return nullptr;  // MONITOR shows every call
  if (users_ != nullptr && !users_->Of(session).unrestricted_cache) return nullptr;
  const CommandSpec* cmd = FindLiteral(name);
  if (cmd == nullptr) return nullptr;
  if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity) return nullptr;
  if (cmd->has(kCmdNoScript)) return nullptr;
  if (cmd->has(kCmdWrite)) {
    if (origin == Origin::kScriptReadOnly) return nullptr;
    if (log_ != nullptr && !log_->write_ok()) return nullptr;  // MISCONF
  }
  return cmd;
}

void Gate::AccountTrusted(const CommandSpec& cmd) {
  // As Run accounts a script's call: one reading of the clock, the time
  // since the previous one.
  int64_t duration_us = 0;
  if (timing_) {
    const int64_t end_us = clock_->MonoUs();
    duration_us = std::max<int64_t>(end_us - mark_us_, 0);
    mark_us_ = end_us;
  }
  CountCall(cmd, /*failed=*/false, duration_us);
}

bool Gate::Run(const CommandSpec& cmd, Session& session, std::span<const std::string_view> argv,
               const TimeSnapshot& now, resp::ReplySink& reply, Origin origin) {
  const bool from_script = origin == Origin::kScript || origin == Origin::kScriptReadOnly;
  size_t mark = reply.Mark();
  uint64_t errors_before = reply.errors();
  // Errors written by commands this one runs through the gate (EXEC's
  // queue) count for those commands, not for this one.
  uint64_t outer_nested = std::exchange(nested_errors_, 0);
  // The handler reads and writes the session's database.
  store_.Select(session.db);
  CommandContext ctx(argv, session, store_, reply, now, cmd, grants_, *stats_, control_.config(),
                     pubsub_, *this, parking_, control_);
  ctx.may_block = ctx.alone = origin == Origin::kClient;
  ctx.in_script = from_script;
  // (EXEC's queued commands leave EXEC as the client's command, as Redis's
  // lastcmd does.)
  if (origin == Origin::kClient) session.last_command = &cmd.fullname;
  // EVAL and FCALL are shown to MONITOR before the calls their script makes.
  if (on_executed_ && cmd.has(kCmdSkipMonitor) && !from_script) {
    on_executed_(session, argv, cmd, false);
  }
  const int64_t start_us = mark_us_;
  try {
    cmd.handler(ctx);
  } catch (const std::bad_alloc&) {
    // Out of memory: refuse this command, keep serving the others. (The
    // handlers change the keyspace only after allocating what they store.)
    // Logged at most once a second, with a count, so a burst does not flood
    // the log.
    static int64_t last_oom_log_ms = 0;
    static uint64_t ooms = 0;
    ++ooms;
    if (now.mono - last_oom_log_ms >= 1000) {
      log::Warning(
          "Out of memory executing '{}' for client {} ({} commands refused since the last "
          "report)",
          cmd.fullname, session.addr, ooms);
      last_oom_log_ms = now.mono;
      ooms = 0;
    }
    reply.RewindTo(mark);
    reply.Error("OOM command not allowed: out of memory");
  }
  int64_t duration_us = 0;
  if (timing_) {
    const int64_t end_us = clock_->MonoUs();
    duration_us = std::max<int64_t>(end_us - start_us, 0);
    mark_us_ = end_us;
  }
  uint64_t written = reply.errors() - errors_before;
  bool own_error = written > nested_errors_;
  // (A script's calls write to a sink of their own, not to this reply.)
  nested_errors_ = outer_nested + (from_script ? 0 : written);
  Account(ctx, own_error, duration_us, from_script);
  if (!from_script) ++stats_->total_commands_processed;
  if (on_executed_ && !cmd.has(kCmdAdmin) && !cmd.has(kCmdSkipMonitor)) {
    on_executed_(session, argv, cmd, from_script);
  }
  return ctx.lease_refused;
}

}  // namespace latch
