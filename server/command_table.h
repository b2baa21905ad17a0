// The command table: every command the server understands, declared once.
//
// Each entry carries what dispatch needs (name, arity, flags, handler) and
// what `COMMAND INFO` / `COMMAND DOCS` report (key positions, ACL categories,
// summary, arguments). Dispatch, arity errors, unknown-command errors, the
// checks for authentication, loading and quarantine, and COMMAND's output are
// all driven from here, so adding a command is one entry plus its handler.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_writer.h"
#include "server/clock.h"

namespace latch {

class Server;
class Connection;
class Keyspace;
class Effects;

// Flags. The first group is what Redis reports in COMMAND INFO; the second
// is latch's own and drives the checks in Dispatch().
enum CommandFlag : uint32_t {
  kCmdWrite = 1u << 0,
  kCmdReadonly = 1u << 1,
  kCmdAdmin = 1u << 2,
  kCmdFast = 1u << 3,
  kCmdNoAuth = 1u << 4,      // allowed before AUTH (AUTH, HELLO, QUIT)
  kCmdLoading = 1u << 5,     // allowed while the log is being loaded
  kCmdStale = 1u << 6,       // (reported only)
  kCmdNoScript = 1u << 7,    // (reported only)
  kCmdDenyOom = 1u << 8,     // (reported only)
  kCmdSentinel = 1u << 9,    // (reported only)
  kCmdNoMulti = 1u << 10,    // (reported only)
  kCmdAllowBusy = 1u << 11,  // (reported only)
  // latch: may grant, re-grant or extend a lease, so it is refused while the
  // server is in restart quarantine (see quarantine.h).
  kCmdGrantsLease = 1u << 16,
  // latch: runs at once inside MULTI instead of being queued (EXEC, DISCARD,
  // MULTI, WATCH, QUIT).
  kCmdTransactionControl = 1u << 17,
};

// One argument in COMMAND DOCS, in Redis's structure (name, type, token,
// optional/multiple flags, nested arguments for "oneof" and "block").
struct ArgDoc {
  std::string name;
  std::string type;  // key, string, integer, double, unix-time, pure-token, oneof, block
  std::string token;
  bool optional = false;
  bool multiple = false;
  std::string since;
  std::vector<ArgDoc> args;
  int key_spec_index = -1;
};

// Everything a handler may use while it runs.
struct CommandContext {
  Server& server;
  Connection& client;
  std::span<const std::string_view> argv;
  resp::ReplyWriter& reply;
  Keyspace& db;
  Effects& effects;
  // One reading of both clocks for the whole command, so every time it uses
  // is consistent (a lock's deadline and the TTL logged for it agree).
  TimeSnapshot now;
  // The command's full name in lower case ("set", "config|get"), for error
  // texts that name it.
  std::string_view command_name = {};
};

using CommandHandler = void (*)(CommandContext&);

struct CommandSpec {
  std::string name;  // lower case; subcommands are named by their word ("get")
  int arity = 0;     // > 0: exact argc; < 0: at least -arity
  uint32_t flags = 0;
  CommandHandler handler = nullptr;
  // Key positions for COMMAND INFO (0, 0, 0 when there are none).
  int first_key = 0, last_key = 0, key_step = 0;
  // Key spec flags for COMMAND INFO (RW/RO/OW and access/update/insert/delete).
  std::vector<std::string> key_spec_flags;
  std::vector<std::string> acl_categories;  // without the '@'
  // COMMAND DOCS
  std::string summary;
  std::string since;
  std::string group;
  std::string complexity;
  std::vector<ArgDoc> args;
  std::vector<CommandSpec> subcommands;

  bool has(uint32_t f) const { return (flags & f) != 0; }
  // "config|get" for a subcommand, "get" otherwise.
  std::string fullname;
};

class CommandTable {
 public:
  // The table with every latch command.
  static const CommandTable& Get();

  // Finds a command (case-insensitive) by its name.
  const CommandSpec* Find(std::string_view name) const;

  const std::vector<CommandSpec>& commands() const { return commands_; }

  // COMMAND INFO / COMMAND DOCS entries for one command.
  static void WriteInfo(const CommandSpec& cmd, resp::ReplyWriter& w);
  static void WriteDocs(const CommandSpec& cmd, resp::ReplyWriter& w);

 private:
  CommandTable();
  std::vector<CommandSpec> commands_;
  // Lower-case name → command: a small open-addressing table (FNV-1a hash,
  // linear probing) that Find() probes with the name folded on the fly.
  static uint32_t NameHash(std::string_view lower);
  std::vector<const CommandSpec*> slots_;
};

// Handlers, grouped by family (server/commands/*.cc).
namespace commands {
// strings.cc
void Set(CommandContext&);
void SetNx(CommandContext&);
void SetEx(CommandContext&);
void Get(CommandContext&);
void Del(CommandContext&);
void Exists(CommandContext&);
void DelIfEq(CommandContext&);
void DelEx(CommandContext&);
void Digest(CommandContext&);
// expire.cc
void Expire(CommandContext&);
void PExpire(CommandContext&);
void ExpireAt(CommandContext&);
void PExpireAt(CommandContext&);
void Ttl(CommandContext&);
void PTtl(CommandContext&);
void ExpireTime(CommandContext&);
void PExpireTime(CommandContext&);
void Persist(CommandContext&);
// connection.cc
void Ping(CommandContext&);
void Echo(CommandContext&);
void Quit(CommandContext&);
void Hello(CommandContext&);
void Auth(CommandContext&);
void Select(CommandContext&);
void Monitor(CommandContext&);
void ClientId(CommandContext&);
void ClientSetName(CommandContext&);
void ClientGetName(CommandContext&);
void ClientList(CommandContext&);
void ClientInfo(CommandContext&);
void ClientSetInfo(CommandContext&);
void ClientKill(CommandContext&);
void ClientNoEvict(CommandContext&);
void ClientHelp(CommandContext&);
// admin.cc
void DbSize(CommandContext&);
void FlushAll(CommandContext&);
void Time(CommandContext&);
void Info(CommandContext&);
void ConfigGet(CommandContext&);
void ConfigSet(CommandContext&);
void ConfigResetStat(CommandContext&);
void ConfigRewrite(CommandContext&);
void ConfigHelp(CommandContext&);
void Command(CommandContext&);
void CommandCount(CommandContext&);
void CommandInfo(CommandContext&);
void CommandDocs(CommandContext&);
void CommandList(CommandContext&);
void CommandGetKeys(CommandContext&);
void CommandHelp(CommandContext&);
void Shutdown(CommandContext&);
void BgRewriteAof(CommandContext&);
void Debug(CommandContext&);
// scripting.cc
void Eval(CommandContext&);
void EvalSha(CommandContext&);
void EvalRo(CommandContext&);
void EvalShaRo(CommandContext&);
void ScriptLoad(CommandContext&);
void ScriptExists(CommandContext&);
void ScriptFlush(CommandContext&);
void ScriptKill(CommandContext&);
void ScriptHelp(CommandContext&);
void NoScripting(CommandContext&);
// transactions.cc
void Multi(CommandContext&);
void Exec(CommandContext&);
void Discard(CommandContext&);
void Watch(CommandContext&);
void Unwatch(CommandContext&);
}  // namespace commands

}  // namespace latch
