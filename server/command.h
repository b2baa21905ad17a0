// What a command is: its metadata (name, arity, flags, key positions, docs)
// and its handler, declared together by the family that owns it.
//
// A family (server/commands/*.cc) registers its commands in one function
// next to their handlers, as Dragonfly's StringFamily::Register does, so a
// command's whole behaviour is in one file: how it parses, what it does to
// the Store, what it replies, and what COMMAND INFO / COMMAND DOCS say about
// it (Redis keeps the same metadata as data in src/commands/*.json).
//
// The handler contract. A handler gets a CommandContext and
//  - reads its arguments from ctx.argv (argv[0] is the command name; arity
//    was already checked by the gate);
//  - reads and changes data only through ctx.store, whose mutators also
//    write the log record (so a handler cannot forget the record);
//  - gives a key to a holder through ctx.grants.Grant (grant.h), and before
//    any other write that would re-grant or extend a lease asks
//    ctx.AdmitGrant(deadline), stopping if it says no (the reply is written);
//  - writes exactly one reply to ctx.reply (a command that parks the client,
//    WAITAOF, writes it later through the server);
//  - uses ctx.now for every time it needs (one reading of both clocks per
//    request: a deadline and the TTL logged for it agree).
// Administrative commands (CONFIG, INFO, CLIENT, SHUTDOWN…) also use one
// role of the server around the loop each (control.h: ctx.admin(),
// ctx.clients(), ctx.persistence(), ctx.diagnostics(), ctx.scripting(),
// ctx.acl(), ctx.bench()); data commands never do.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/reply_sink.h"
#include "server/clock.h"

namespace latch {

class Grants;
class Parking;
class PubSub;
class AccessControl;
class AdminControl;
class ClientsControl;
class DiagnosticsControl;
class PersistenceControl;
class ScriptingControl;
class ServerControl;
class TestBenchControl;
class Session;
class Store;
struct Config;
struct Stats;

// Flags. The first group is what Redis reports in COMMAND INFO; the second
// is latch's own and drives the gate.
enum CommandFlag : uint32_t {
  kCmdWrite = 1u << 0,
  kCmdReadonly = 1u << 1,
  kCmdAdmin = 1u << 2,
  kCmdFast = 1u << 3,
  kCmdNoAuth = 1u << 4,        // allowed before AUTH (AUTH, HELLO, QUIT)
  kCmdLoading = 1u << 5,       // allowed while the log is being loaded
  kCmdStale = 1u << 6,         // (reported only)
  kCmdNoScript = 1u << 7,      // (reported only)
  kCmdDenyOom = 1u << 8,       // (reported only)
  kCmdSentinel = 1u << 9,      // (reported only)
  kCmdNoMulti = 1u << 10,      // (reported only)
  kCmdAllowBusy = 1u << 11,    // (reported only)
  kCmdSkipSlowlog = 1u << 12,  // never in the slow log (EXEC: its commands are)
  kCmdSkipMonitor = 1u << 13,  // shown to MONITOR before it runs (EVAL, FCALL)
  kCmdBlocking = 1u << 14,     // (reported only) may block the client (BLPOP…)
  kCmdMovableKeys = 1u << 20,  // (reported only) keys found by parsing (LMPOP, ZUNION…)
  // Refused, before authentication and ACL, unless enable-debug-command
  // allows it (DEBUG; Redis's CMD_PROTECTED).
  kCmdProtected = 1u << 21,
  // latch: may grant, re-grant or extend a lease (it calls AdmitGrant). A
  // write command without it only ever removes or shortens: a release, always
  // allowed (the restart quarantine's refusal text lists them).
  kCmdGrantsLease = 1u << 16,
  // latch: runs at once inside MULTI instead of being queued (EXEC, DISCARD,
  // MULTI, WATCH, QUIT).
  kCmdTransactionControl = 1u << 17,
  // latch: answers PING-like health checks; refused with MISCONF when the
  // log cannot be written, as Redis does for PING.
  kCmdHealthCheck = 1u << 18,
  // latch: allowed on a RESP2 connection in subscribed mode (the
  // (P|S)(UN)SUBSCRIBE family, PING, QUIT, RESET), as Redis allows.
  kCmdSubscribedContext = 1u << 19,
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

// One key spec of COMMAND INFO (Redis's key_specs), for a command whose
// keys are not one plain range (Keys()): several groups (ZRANGESTORE's
// destination and source), or keys counted by an argument (ZUNIONSTORE's
// numkeys). The keys begin at argument `index`; from there they are a
// range (up to `lastkey`, relative, -1 the last argument, every `keystep`)
// or `keynum`: the count at index + keynumidx, the first key at index +
// firstkey.
struct KeySpec {
  std::vector<std::string> flags;
  // Redis's "unknown" begin_search and find_keys: keys only the command
  // itself can find (SORT's STORE and BY/GET patterns); see SortStoreKey.
  bool unknown = false;
  int index = 1;
  bool keynum = false;
  int lastkey = 0, keystep = 1, limit = 0;
  int keynumidx = 0, firstkey = 1;
  // What `flags` say, read once by the registry (CommandRegistry::Index) so
  // that the ACL check of each request compares no strings: the key is
  // read ("access"), changed ("insert", "delete", "update"), not a key at
  // all ("not_key"), or the arguments decide ("variable_flags": SET … GET).
  bool reads = false, writes = false, not_key = false, variable_flags = false;
};

struct CommandSpec;

// Runs a command on behalf of another through the gate (gate.h): EXEC's
// queue, a script's redis.call. The Gate implements it; a handler reaches it
// only through CommandContext::Call.
class CommandRunner {
 public:
  enum class Origin { kClient, kExec, kScript, kScriptReadOnly };
  struct Result {
    const CommandSpec* cmd = nullptr;  // nullptr: refused before it was found
    bool ran = false;                  // the handler ran (or the command was queued)
    bool lease_refused = false;        // the grant operation refused a lease
  };
  // `literal_name`: argv[0] is a string literal (a known lock script's
  // redis.call("get", …)), so the gate may remember its lookup by address.
  virtual Result Execute(Session& session, std::span<const std::string_view> argv,
                         const TimeSnapshot& now, resp::ReplySink& reply,
                         Origin origin = Origin::kClient, bool literal_name = false) = 0;

  // The known lock scripts' fast path (scripting/runner.h, ScriptRun's
  // Direct calls): a script's call of the command named by the literal
  // `name` with `argc` arguments that the gate would pass unchanged for
  // `session` — a user who may run every command on every key, a writable
  // log, no MONITOR to show the call to, not a write from a read-only
  // script, a command allowed in scripts with that many arguments — may be
  // carried out by the script itself. Returns the command, or nullptr: the
  // call then goes through Execute.
  virtual const CommandSpec* Trusted(Session& session, const char* name, int argc,
                                     Origin origin) = 0;
  // Accounts such a call as Execute would have: its calls and duration.
  virtual void AccountTrusted(const CommandSpec& cmd) = 0;

 protected:
  ~CommandRunner() = default;
};

// Everything a handler may use while it runs. A data command needs nothing
// else: its arguments, the session, the Store, the clocks, the reply, the
// grant operation for any write that grants or extends a lease, the
// statistics it counts and the settings it reads.
struct CommandContext {
  CommandContext(std::span<const std::string_view> argv_, Session& session_, Store& store_,
                 resp::ReplySink& reply_, const TimeSnapshot& now_, const CommandSpec& cmd_,
                 Grants& grants_, Stats& stats_, const Config& config_, PubSub& pubsub_,
                 CommandRunner& runner, Parking& parking, ServerControl& control)
      : argv(argv_),
        session(session_),
        store(store_),
        reply(reply_),
        now(now_),
        cmd(cmd_),
        grants(grants_),
        stats(stats_),
        config(config_),
        pubsub(pubsub_),
        runner_(runner),
        parking_(parking),
        control_(control) {}

  std::span<const std::string_view> argv;
  Session& session;
  Store& store;
  resp::ReplySink& reply;
  // One reading of both clocks for the whole request.
  const TimeSnapshot now;
  const CommandSpec& cmd;
  // The grant operation (grant.h).
  Grants& grants;
  // INFO's counters (keyspace hits and misses…).
  Stats& stats;
  const Config& config;
  // Pub/sub channels (PUBLISH) and keyspace notifications.
  PubSub& pubsub;

  // Grants::Admit for a write that grants, re-grants or extends a lease
  // ending at `deadline` (kNoDeadline: a key without one). `blind`: the
  // write's reply does not depend on what the key held (it counts only when
  // the command was sent alone). False after replying with the refusal
  // (QUARANTINE, MISCONF).
  bool AdmitGrant(int64_t deadline, bool blind = false);
  // max-lock-ttl. False after replying with the error.
  bool CheckTtl(int64_t ttl_ms);
  // Whether a write that takes `key` only when it is absent (SET NX, SETNX,
  // MSETNX, MOVE's destination, EXISTS inside a script) must find it
  // taken (Grants::Free): it is stored, or clients wait in its queue (SET … NX WAIT) — a
  // released key goes to the first waiter, even in the instant between its
  // release inside a transaction and the handoff once the command is over.
  // A script that tests with EXISTS before it SETs (the usual acquire
  // script) thus never takes a key from its first waiter.
  bool TakenForAcquire(std::string_view key);
  // Replies with a refused grant's error and notes it for the gate (a
  // script stops at a refused lease, as the command sent alone would).
  void ReplyRefusal(const std::string& text);
  // Runs `args` through the gate on behalf of this command (EXEC's queue, a
  // script's redis.call), replying to `out`.
  CommandRunner::Result Call(std::span<const std::string_view> args, resp::ReplySink& out,
                             CommandRunner::Origin origin, bool literal_name = false);
  // The known scripts' fast path (CommandRunner::Trusted, AccountTrusted).
  const CommandSpec* Trusted(const char* name, int argc, CommandRunner::Origin origin) {
    return runner_.Trusted(session, name, argc, origin);
  }
  void AccountTrusted(const CommandSpec& c) { runner_.AccountTrusted(c); }
  // A keyspace notification (pubsub.h) about `key` in the session's
  // database: the event as Redis names it ("set", "del", "expire"…) in its
  // class (kNotifyString…). One branch while the class is off.
  void Notify(uint32_t type, std::string_view event, std::string_view key);
  // Parks the client: SET … NX WAIT, WAITAOF (server/parking.h).
  Parking& parking() { return parking_; }
  // The server around the loop, for administrative commands only (CONFIG,
  // INFO, CLIENT, SHUTDOWN…), one role at a time (control.h): a data
  // command never needs any.
  AdminControl& admin();
  ClientsControl& clients();
  PersistenceControl& persistence();
  DiagnosticsControl& diagnostics();
  ScriptingControl& scripting();
  AccessControl& acl();
  TestBenchControl& bench();
  // Whether the command may park the client (WAITAOF, SET … WAIT): only a
  // client's own request may, not one queued in MULTI or called by a script.
  bool may_block = false;
  // Called by a script (redis.call), not sent by a client.
  bool in_script = false;
  // Sent by a client on its own: not queued in a MULTI, not called by a
  // script (which may have read the key before writing it). Only such a
  // write can be blind to a restart quarantine (Grants::Admit).
  bool alone = false;
  // A blocked pop run again because `serving_key` may serve it now
  // (commands/blocking.h; none: a request as sent). The command serves
  // from that key only; if it cannot, it writes nothing and sets
  // keep_waiting, and the client stays parked.
  std::optional<std::string_view> serving_key;
  bool keep_waiting = false;
  // Arguments to show as "(redacted)" in the slow log (AUTH's password…):
  // bit i for argv[i].
  uint64_t redacted = 0;
  void Redact(size_t i) {
    if (i < 64) redacted |= uint64_t{1} << i;
  }
  // The command's full name in lower case ("set", "config|get"), for error
  // texts that name it.
  const std::string& name() const;
  // Whether the grant operation refused a lease during this command.
  bool lease_refused = false;

 private:
  CommandRunner& runner_;
  Parking& parking_;
  ServerControl& control_;
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
  // When not empty, COMMAND INFO's key specs instead of the one Keys() gives.
  std::vector<KeySpec> key_specs;
  // COMMAND INFO's tips ("nondeterministic_output"…).
  std::vector<std::string> tips;
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
  // What the ACL check must know of a command beyond its key specs, told
  // once by the registry from the name (CommandRegistry::Index) so that no
  // request compares names: SORT's STORE key, SET's GET (variable flags),
  // the channels PUBLISH and the SUBSCRIBE family name.
  enum class AclSpecial : uint8_t { kNone, kSort, kSet, kPublish, kSubscribe, kPSubscribe };
  AclSpecial acl_special = AclSpecial::kNone;
  // Whether its only key spec (key_specs[0]) is a plain range (GET, SET,
  // HSET, DEL, MGET…: no key count, no keys only the command finds): the
  // ACL check then walks the positions itself, without collecting them.
  bool plain_keys = false;
  // The pipeline prefetch's hints (prefetch.h): the argument holding the
  // first key, and the one holding the field or member looked up in it
  // (0: none). Set by the registry (CommandRegistry::Index).
  int prefetch_key = 0, prefetch_member = 0;
  // Position among all commands and subcommands (per-command statistics).
  size_t index = 0;
};

// ---------------------------------------------------------------- builders
// Small constructors that keep the families' registrations readable.
namespace spec {

struct Doc {
  std::string summary, since, group, complexity;
};

ArgDoc Arg(std::string name, std::string type, std::string token = "");
ArgDoc Key(std::string name = "key", bool multiple = false);
ArgDoc Str(std::string name, std::string token = "");
ArgDoc Int(std::string name, std::string token = "");
ArgDoc Double(std::string name, std::string token = "");
ArgDoc Time(std::string name, std::string token = "");
ArgDoc Pattern(std::string name, std::string token = "");
ArgDoc Token(std::string name, std::string token);
ArgDoc OneOf(std::string name, std::vector<ArgDoc> args);
ArgDoc Block(std::string name, std::vector<ArgDoc> args, std::string token = "");
ArgDoc Optional(ArgDoc a, std::string since = "");
ArgDoc Multiple(ArgDoc a);

CommandSpec Cmd(std::string name, int arity, uint32_t flags, CommandHandler handler,
                std::vector<std::string> acl, Doc doc, std::vector<ArgDoc> args = {});
// Marks a command as taking keys at positions first..last (step), with the
// key-spec flags COMMAND INFO reports.
CommandSpec Keys(CommandSpec c, int first, int last, int step, std::vector<std::string> flags);
// Several key specs (see KeySpec); first..last (step) is the legacy range
// COMMAND INFO also reports (0 0 0 when the keys are counted). A keynum
// spec makes the command "movablekeys".
CommandSpec KeySpecs(CommandSpec c, int first, int last, int step, std::vector<KeySpec> specs);
KeySpec RangeSpec(std::vector<std::string> flags, int index, int lastkey = 0, int keystep = 1,
                  int limit = 0);
// Keys only the command itself finds (Redis's "unknown" search).
KeySpec UnknownSpec(std::vector<std::string> flags);
KeySpec KeyNumSpec(std::vector<std::string> flags, int index, int keynumidx = 0, int firstkey = 1,
                   int keystep = 1);
// A key argument of the key spec `spec_index` (COMMAND DOCS).
ArgDoc KeyAt(std::string name, int spec_index, bool multiple = false);
CommandSpec Container(std::string name, std::vector<std::string> acl, Doc doc,
                      std::vector<CommandSpec> subs);

}  // namespace spec

// The registry: every command, registered by its family.
class CommandRegistry {
 public:
  // The registry with every latch command.
  static const CommandRegistry& Get();

  void Add(CommandSpec spec);
  // Finds a command (case-insensitive) by its name.
  const CommandSpec* Find(std::string_view name) const;
  const std::vector<CommandSpec>& commands() const { return commands_; }
  // How many commands and subcommands there are (CommandSpec::index < it).
  size_t count() const { return count_; }
  // Calls f(const CommandSpec&) for every command, then its subcommands.
  template <typename F>
  void ForEachCommand(F&& f) const {
    for (const CommandSpec& c : commands_) {
      f(c);
      for (const CommandSpec& s : c.subcommands) f(s);
    }
  }
  // "DEL, DELIFEQ, DELEX, …": the write commands that never grant a lease.
  std::string ReleaseCommands() const;

  // COMMAND INFO / COMMAND DOCS entries for one command.
  static void WriteInfo(const CommandSpec& cmd, resp::ReplySink& w);
  static void WriteDocs(const CommandSpec& cmd, resp::ReplySink& w);

 private:
  CommandRegistry();
  void Index();
  std::vector<CommandSpec> commands_;
  size_t count_ = 0;
  // Lower-case name → command: a small open-addressing table (FNV-1a hash,
  // linear probing) that Find() probes with the name folded on the fly.
  static uint32_t NameHash(std::string_view lower);
  std::vector<const CommandSpec*> slots_;
};

// The families, each in server/commands/<family>.cc.
namespace commands {
void RegisterStrings(CommandRegistry& r);
void RegisterStringOps(CommandRegistry& r);
void RegisterExpiry(CommandRegistry& r);
void RegisterConnection(CommandRegistry& r);
void RegisterKeyspace(CommandRegistry& r);
void RegisterServer(CommandRegistry& r);
void RegisterConfig(CommandRegistry& r);
void RegisterIntrospection(CommandRegistry& r);
void RegisterTransactions(CommandRegistry& r);
void RegisterScripting(CommandRegistry& r);
void RegisterFaults(CommandRegistry& r);  // fault.cc: the test bench
void RegisterDiagnostics(CommandRegistry& r);
void RegisterDurability(CommandRegistry& r);
void RegisterLocks(CommandRegistry& r);      // locks.cc: FENCE, LOCKINFO
void RegisterPubSub(CommandRegistry& r);     // pubsub.cc: SUBSCRIBE … PUBSUB
void RegisterHashes(CommandRegistry& r);     // hashes.cc: HSET … HSCAN
void RegisterSets(CommandRegistry& r);       // sets.cc: SADD … SSCAN
void RegisterSetOps(CommandRegistry& r);     // set_ops.cc: SINTER, SUNION, SDIFF (+STORE)…
void RegisterSort(CommandRegistry& r);       // sort.cc: SORT, SORT_RO
void RegisterZSets(CommandRegistry& r);      // zsets.cc (+ zset_ranges.cc, zset_algebra.cc)
void RegisterLists(CommandRegistry& r);      // lists.cc
void RegisterListMoves(CommandRegistry& r);  // list_moves.cc: moves, LMPOP, blocking pops
void RegisterAcl(CommandRegistry& r);        // acl.cc: ACL SETUSER … ACL LOG
// One line of CLIENT LIST for `c` (connection.cc), also ACL LOG's client-info.
std::string ClientLine(int64_t now, const Session& c, size_t argv_bytes);
}  // namespace commands

}  // namespace latch
