#include "server/command_table.h"

#include "protocol/text.h"
#include "server/known_scripts.h"

namespace latch {

namespace {

ArgDoc MakeArg(std::string name, std::string type, std::string token = "") {
  ArgDoc a;
  a.name = std::move(name);
  a.type = std::move(type);
  a.token = std::move(token);
  return a;
}

// Small constructors that keep the table below readable.
ArgDoc KeyArg(std::string name = "key", bool multiple = false) {
  ArgDoc a = MakeArg(std::move(name), "key");
  a.key_spec_index = 0;
  a.multiple = multiple;
  return a;
}
ArgDoc StrArg(std::string name, std::string token = "") {
  return MakeArg(std::move(name), "string", std::move(token));
}
ArgDoc IntArg(std::string name, std::string token = "") {
  return MakeArg(std::move(name), "integer", std::move(token));
}
ArgDoc TimeArg(std::string name, std::string token = "") {
  return MakeArg(std::move(name), "unix-time", std::move(token));
}
ArgDoc Token(std::string name, std::string token) {
  return MakeArg(std::move(name), "pure-token", std::move(token));
}
ArgDoc OneOf(std::string name, std::vector<ArgDoc> args) {
  ArgDoc a = MakeArg(std::move(name), "oneof");
  a.args = std::move(args);
  return a;
}
ArgDoc Block(std::string name, std::vector<ArgDoc> args, std::string token = "") {
  ArgDoc a = MakeArg(std::move(name), "block", std::move(token));
  a.args = std::move(args);
  return a;
}
ArgDoc Optional(ArgDoc a, std::string since = "") {
  a.optional = true;
  a.since = std::move(since);
  return a;
}
ArgDoc Multiple(ArgDoc a) {
  a.multiple = true;
  return a;
}

struct Doc {
  std::string summary, since, group, complexity;
};

CommandSpec Cmd(std::string name, int arity, uint32_t flags, CommandHandler handler,
                std::vector<std::string> acl, Doc doc, std::vector<ArgDoc> args = {}) {
  CommandSpec c;
  c.name = std::move(name);
  c.arity = arity;
  c.flags = flags;
  c.handler = handler;
  c.acl_categories = std::move(acl);
  c.summary = std::move(doc.summary);
  c.since = std::move(doc.since);
  c.group = std::move(doc.group);
  c.complexity = std::move(doc.complexity);
  c.args = std::move(args);
  return c;
}

// Marks a command as taking keys at positions first..last (step), with the
// key-spec flags COMMAND INFO reports.
CommandSpec Keys(CommandSpec c, int first, int last, int step, std::vector<std::string> flags) {
  c.first_key = first;
  c.last_key = last;
  c.key_step = step;
  c.key_spec_flags = std::move(flags);
  return c;
}

CommandSpec Container(std::string name, std::vector<std::string> acl, Doc doc,
                      std::vector<CommandSpec> subs) {
  CommandSpec c = Cmd(std::move(name), -2, 0, nullptr, std::move(acl), std::move(doc));
  c.subcommands = std::move(subs);
  return c;
}

constexpr uint32_t kWrite = kCmdWrite;
constexpr uint32_t kRead = kCmdReadonly;
constexpr uint32_t kFast = kCmdFast;
constexpr uint32_t kLease = kCmdGrantsLease;
constexpr uint32_t kAdminFlags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;

std::vector<CommandSpec> BuildTable() {
  using namespace commands;
  const std::vector<ArgDoc> expire_condition = {
      Optional(OneOf("condition",
                     {Token("nx", "NX"), Token("xx", "XX"), Token("gt", "GT"), Token("lt", "LT")}),
               "7.0.0")};
  auto expire_args = [&](ArgDoc when) {
    std::vector<ArgDoc> args = {KeyArg(), std::move(when)};
    args.insert(args.end(), expire_condition.begin(), expire_condition.end());
    return args;
  };
  const std::vector<std::string> kRW_UPDATE = {"RW", "update"};
  const std::vector<std::string> kRO_ACCESS = {"RO", "access"};
  const std::vector<std::string> kRW_DELETE = {"RW", "delete"};

  std::vector<CommandSpec> t;

  // ---- strings: the lock primitives
  t.push_back(
      Keys(Cmd("set", -3, kWrite | kCmdDenyOom | kLease, Set, {"write", "string", "slow"},
               {"Set the string value of a key", "1.0.0", "string", "O(1)"},
               {KeyArg(), StrArg("value"),
                Optional(OneOf("condition",
                               {Token("nx", "NX"), Token("xx", "XX"), StrArg("ifeq-value", "IFEQ"),
                                StrArg("ifne-value", "IFNE"), StrArg("ifdeq-digest", "IFDEQ"),
                                StrArg("ifdne-digest", "IFDNE")}),
                         "2.6.12"),
                Optional(Token("get", "GET"), "6.2.0"),
                Optional(OneOf("expiration", {IntArg("seconds", "EX"), IntArg("milliseconds", "PX"),
                                              TimeArg("unix-time-seconds", "EXAT"),
                                              TimeArg("unix-time-milliseconds", "PXAT"),
                                              Token("keepttl", "KEEPTTL")}))}),
           1, 1, 1, {"RW", "access", "update", "variable_flags"}));
  t.push_back(Keys(
      Cmd("setnx", 3, kWrite | kCmdDenyOom | kFast | kLease, SetNx, {"write", "string", "fast"},
          {"Set the value of a key, only if the key does not exist", "1.0.0", "string", "O(1)"},
          {KeyArg(), StrArg("value")}),
      1, 1, 1, {"OW", "insert"}));
  t.push_back(
      Keys(Cmd("setex", 4, kWrite | kCmdDenyOom | kLease, SetEx, {"write", "string", "slow"},
               {"Set the value and expiration of a key", "2.0.0", "string", "O(1)"},
               {KeyArg(), IntArg("seconds"), StrArg("value")}),
           1, 1, 1, {"OW", "update"}));
  t.push_back(
      Keys(Cmd("psetex", 4, kWrite | kCmdDenyOom | kLease, SetEx, {"write", "string", "slow"},
               {"Set the value and expiration in milliseconds of a key", "2.6.0", "string", "O(1)"},
               {KeyArg(), IntArg("milliseconds"), StrArg("value")}),
           1, 1, 1, {"OW", "update"}));
  t.push_back(Keys(Cmd("get", 2, kRead | kFast, Get, {"read", "string", "fast"},
                       {"Get the value of a key", "1.0.0", "string", "O(1)"}, {KeyArg()}),
                   1, 1, 1, kRO_ACCESS));
  t.push_back(Keys(Cmd("del", -2, kWrite, Del, {"keyspace", "write", "slow"},
                       {"Delete a key", "1.0.0", "generic",
                        "O(N) where N is the number of keys that will be removed."},
                       {KeyArg("key", true)}),
                   1, -1, 1, {"RM", "delete"}));
  t.push_back(Keys(Cmd("exists", -2, kRead | kFast, Exists, {"keyspace", "read", "fast"},
                       {"Determine if a key exists", "1.0.0", "generic",
                        "O(N) where N is the number of keys to check."},
                       {KeyArg("key", true)}),
                   1, -1, 1, {"RO"}));
  t.push_back(Keys(Cmd("delifeq", 3, kWrite | kFast, DelIfEq, {"write", "string", "fast"},
                       {"Delete key if value matches string.", "9.0.0", "string", "O(1)"},
                       {KeyArg(), StrArg("value")}),
                   1, 1, 1, kRW_DELETE));
  t.push_back(Keys(
      Cmd("delex", -2, kWrite | kFast, DelEx, {"write", "string", "fast"},
          {"Conditionally removes the specified key based on value or digest comparison.", "8.4.0",
           "string",
           "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string "
           "value."},
          {KeyArg(),
           Optional(OneOf("condition",
                          {StrArg("ifeq-value", "IFEQ"), StrArg("ifne-value", "IFNE"),
                           StrArg("ifdeq-digest", "IFDEQ"), StrArg("ifdne-digest", "IFDNE")}))}),
      1, 1, 1, {"RW", "delete", "variable_flags"}));
  t.push_back(Keys(Cmd("digest", 2, kRead | kFast, Digest, {"read", "string", "fast"},
                       {"Returns the hash digest of a string value", "8.4.0", "string",
                        "O(N) where N is the length of the string value."},
                       {KeyArg()}),
                   1, 1, 1, kRO_ACCESS));

  // ---- expiry: the lease
  const Doc kGen = {"", "", "generic", "O(1)"};
  auto doc = [&](std::string summary, std::string since) {
    Doc d = kGen;
    d.summary = std::move(summary);
    d.since = std::move(since);
    return d;
  };
  t.push_back(
      Keys(Cmd("expire", -3, kWrite | kFast | kLease, Expire, {"keyspace", "write", "fast"},
               doc("Set a key's time to live in seconds", "1.0.0"), expire_args(IntArg("seconds"))),
           1, 1, 1, kRW_UPDATE));
  t.push_back(
      Keys(Cmd("pexpire", -3, kWrite | kFast | kLease, PExpire, {"keyspace", "write", "fast"},
               doc("Set a key's time to live in milliseconds", "2.6.0"),
               expire_args(IntArg("milliseconds"))),
           1, 1, 1, kRW_UPDATE));
  t.push_back(
      Keys(Cmd("expireat", -3, kWrite | kFast | kLease, ExpireAt, {"keyspace", "write", "fast"},
               doc("Set the expiration for a key as a UNIX timestamp", "1.2.0"),
               expire_args(TimeArg("unix-time-seconds"))),
           1, 1, 1, kRW_UPDATE));
  t.push_back(
      Keys(Cmd("pexpireat", -3, kWrite | kFast | kLease, PExpireAt, {"keyspace", "write", "fast"},
               doc("Set the expiration for a key as a UNIX timestamp specified in "
                   "milliseconds",
                   "2.6.0"),
               expire_args(TimeArg("unix-time-milliseconds"))),
           1, 1, 1, kRW_UPDATE));
  t.push_back(Keys(Cmd("ttl", 2, kRead | kFast, Ttl, {"keyspace", "read", "fast"},
                       doc("Get the time to live for a key in seconds", "1.0.0"), {KeyArg()}),
                   1, 1, 1, kRO_ACCESS));
  t.push_back(Keys(Cmd("pttl", 2, kRead | kFast, PTtl, {"keyspace", "read", "fast"},
                       doc("Get the time to live for a key in milliseconds", "2.6.0"), {KeyArg()}),
                   1, 1, 1, kRO_ACCESS));
  t.push_back(Keys(Cmd("expiretime", 2, kRead | kFast, ExpireTime, {"keyspace", "read", "fast"},
                       doc("Get the expiration Unix timestamp for a key", "7.0.0"), {KeyArg()}),
                   1, 1, 1, kRO_ACCESS));
  t.push_back(Keys(
      Cmd("pexpiretime", 2, kRead | kFast, PExpireTime, {"keyspace", "read", "fast"},
          doc("Get the expiration Unix timestamp for a key in milliseconds", "7.0.0"), {KeyArg()}),
      1, 1, 1, kRO_ACCESS));
  t.push_back(
      Keys(Cmd("persist", 2, kWrite | kFast | kLease, Persist, {"keyspace", "write", "fast"},
               doc("Remove the expiration from a key", "2.2.0"), {KeyArg()}),
           1, 1, 1, kRW_UPDATE));

  // ---- connection
  const uint32_t kHandshake =
      kCmdNoScript | kCmdLoading | kCmdStale | kFast | kCmdNoAuth | kCmdSentinel | kCmdAllowBusy;
  auto conn = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "connection", std::move(complexity)};
  };
  t.push_back(Cmd("ping", -1, kFast | kCmdSentinel, Ping, {"fast", "connection"},
                  conn("Ping the server", "1.0.0"), {Optional(StrArg("message"))}));
  t.push_back(Cmd("echo", 2, kFast, Echo, {"fast", "connection"},
                  conn("Echo the given string", "1.0.0"), {StrArg("message")}));
  t.push_back(Cmd("quit", -1,
                  kCmdAllowBusy | kCmdNoScript | kCmdLoading | kCmdStale | kFast | kCmdNoAuth |
                      kCmdTransactionControl,
                  Quit, {"fast", "connection"}, conn("Close the connection", "1.0.0")));
  t.push_back(Cmd(
      "hello", -1, kHandshake, Hello, {"fast", "connection"}, conn("Handshake with Redis", "6.0.0"),
      {Optional(Block(
          "arguments",
          {IntArg("protover"),
           Optional(Block("username-password", {StrArg("username"), StrArg("password")}, "AUTH")),
           Optional(StrArg("clientname", "SETNAME"))}))}));
  t.push_back(Cmd("auth", -2, kHandshake, Auth, {"fast", "connection"},
                  conn("Authenticate to the server", "1.0.0",
                       "O(N) where N is the number of passwords defined for the user"),
                  {Optional(StrArg("username"), "6.0.0"), StrArg("password")}));
  t.push_back(Cmd("select", 2, kCmdLoading | kCmdStale | kFast, Select, {"fast", "connection"},
                  conn("Change the selected database for the current connection", "1.0.0"),
                  {IntArg("index")}));
  t.push_back(Cmd("monitor", 1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Monitor,
                  {"admin", "slow", "dangerous"},
                  Doc{"Listen for all requests received by the server in real time", "1.0.0",
                      "server", "O(1)"}));
  const uint32_t kClientFlags = kCmdNoScript | kCmdLoading | kCmdStale;
  t.push_back(Container(
      "client", {"slow"}, conn("A container for client connection commands", "2.4.0"),
      {Cmd("id", 2, kClientFlags, ClientId, {"slow", "connection"},
           conn("Returns the client ID for the current connection", "5.0.0")),
       Cmd("setname", 3, kClientFlags, ClientSetName, {"slow", "connection"},
           conn("Set the current connection name", "2.6.9"), {StrArg("connection-name")}),
       Cmd("getname", 2, kClientFlags, ClientGetName, {"slow", "connection"},
           conn("Get the current connection name", "2.6.9")),
       Cmd("list", -2, kCmdAdmin | kClientFlags, ClientList,
           {"admin", "slow", "dangerous", "connection"},
           conn("Get the list of client connections", "2.4.0",
                "O(N) where N is the number of client connections"),
           {Optional(Token("type", "TYPE")), Optional(Multiple(IntArg("client-id", "ID")))}),
       Cmd("info", 2, kClientFlags, ClientInfo, {"slow", "connection"},
           conn("Returns information about the current client connection.", "6.2.0")),
       Cmd("setinfo", 4, kClientFlags, ClientSetInfo, {"slow", "connection"},
           conn("Set client or connection specific info", "7.2.0"),
           {OneOf("attr", {StrArg("libname", "LIB-NAME"), StrArg("libver", "LIB-VER")})}),
       Cmd("kill", -3, kCmdAdmin | kClientFlags, ClientKill,
           {"admin", "slow", "dangerous", "connection"},
           conn("Kill the connection of a client", "2.4.0",
                "O(N) where N is the number of client connections"),
           {OneOf("filter",
                  {StrArg("ip:port"), Multiple(StrArg("client-id", "ID")),
                   Multiple(StrArg("ip:port", "ADDR")), Multiple(StrArg("ip:port", "LADDR")),
                   Multiple(StrArg("yes/no", "SKIPME"))})}),
       Cmd("no-evict", 3, kCmdAdmin | kClientFlags, ClientNoEvict,
           {"admin", "slow", "dangerous", "connection"},
           conn("Set client eviction mode for the current connection", "7.0.0"),
           {OneOf("enabled", {Token("on", "ON"), Token("off", "OFF")})}),
       Cmd("help", 2, kCmdLoading | kCmdStale, ClientHelp, {"slow", "connection"},
           conn("Show helpful text about the different subcommands", "5.0.0"))}));

  // ---- server
  auto srv = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "server", std::move(complexity)};
  };
  t.push_back(Cmd("dbsize", 1, kRead | kFast, DbSize, {"keyspace", "read", "fast"},
                  srv("Return the number of keys in the selected database", "1.0.0")));
  const ArgDoc flush_type =
      Optional(OneOf("flush-type", {Token("async", "ASYNC"), Token("sync", "SYNC")}));
  t.push_back(Cmd("flushall", -1, kWrite, FlushAll, {"keyspace", "write", "slow", "dangerous"},
                  srv("Remove all keys from all databases", "1.0.0",
                      "O(N) where N is the total number of keys in all databases"),
                  {flush_type}));
  t.push_back(Cmd("flushdb", -1, kWrite, FlushAll, {"keyspace", "write", "slow", "dangerous"},
                  srv("Remove all keys from the current database", "1.0.0",
                      "O(N) where N is the number of keys in the selected database"),
                  {flush_type}));
  t.push_back(Cmd("time", 1, kCmdLoading | kCmdStale | kFast, Time, {"fast"},
                  srv("Return the current server time", "2.6.0")));
  t.push_back(Cmd("info", -1, kCmdLoading | kCmdStale | kCmdSentinel, Info, {"slow", "dangerous"},
                  srv("Get information and statistics about the server", "1.0.0"),
                  {Optional(Multiple(StrArg("section")))}));
  t.push_back(
      Container("config", {"slow"}, srv("A container for server configuration commands", "2.0.0"),
                {Cmd("get", -3, kAdminFlags, ConfigGet, {"admin", "slow", "dangerous"},
                     srv("Get the values of configuration parameters", "2.0.0",
                         "O(N) when N is the number of configuration parameters provided"),
                     {Multiple(StrArg("parameter"))}),
                 Cmd("set", -4, kAdminFlags, ConfigSet, {"admin", "slow", "dangerous"},
                     srv("Set configuration parameters to the given values", "2.0.0",
                         "O(N) when N is the number of configuration parameters provided"),
                     {Multiple(Block("data", {StrArg("parameter"), StrArg("value")}))}),
                 Cmd("resetstat", 2, kAdminFlags, ConfigResetStat, {"admin", "slow", "dangerous"},
                     srv("Reset the stats returned by INFO", "2.0.0")),
                 Cmd("help", 2, kCmdLoading | kCmdStale, ConfigHelp, {"slow"},
                     srv("Show helpful text about the different subcommands", "5.0.0"))}));
  CommandSpec command = Container(
      "command", {"slow", "connection"},
      srv("Get array of Redis command details", "2.8.13",
          "O(N) where N is the total number of Redis commands"),
      {Cmd("count", 2, kCmdLoading | kCmdStale, CommandCount, {"slow", "connection"},
           srv("Get total number of Redis commands", "2.8.13")),
       Cmd("info", -2, kCmdLoading | kCmdStale, CommandInfo, {"slow", "connection"},
           srv("Get array of specific Redis command details, or all when no argument "
               "is given.",
               "2.8.13", "O(N) where N is the number of commands to look up"),
           {Optional(Multiple(StrArg("command-name")))}),
       Cmd("docs", -2, kCmdLoading | kCmdStale, CommandDocs, {"slow", "connection"},
           srv("Get array of specific Redis command documentation", "7.0.0",
               "O(N) where N is the number of commands to look up"),
           {Optional(Multiple(StrArg("command-name")))}),
       Cmd("list", -2, kCmdLoading | kCmdStale, CommandList, {"slow", "connection"},
           srv("Get an array of Redis command names", "7.0.0",
               "O(N) where N is the total number of Redis commands"),
           {Optional(Block(
               "filterby",
               {OneOf("filter", {StrArg("module-name", "MODULE"), StrArg("category", "ACLCAT"),
                                 StrArg("pattern", "PATTERN")})},
               "FILTERBY"))}),
       Cmd("help", 2, kCmdLoading | kCmdStale, CommandHelp, {"slow", "connection"},
           srv("Show helpful text about the different subcommands", "5.0.0"))});
  // COMMAND alone lists every command.
  command.arity = -1;
  command.flags = kCmdLoading | kCmdStale | kCmdSentinel;
  command.handler = Command;
  t.push_back(std::move(command));
  t.push_back(Cmd("bgrewriteaof", 1, kCmdAdmin | kCmdNoScript, BgRewriteAof,
                  {"admin", "slow", "dangerous"},
                  srv("Asynchronously rewrite the append-only file", "1.0.0")));
  t.push_back(Cmd("debug", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Debug,
                  {"admin", "slow", "dangerous"},
                  srv("Fault injection for tests (enable-debug-command)", "1.0.0"),
                  {StrArg("subcommand"), Optional(Multiple(StrArg("arg")))}));
  t.push_back(
      Cmd("shutdown", -1,
          kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdNoMulti | kCmdSentinel |
              kCmdAllowBusy,
          Shutdown, {"admin", "slow", "dangerous"},
          srv("Synchronously flush the log to disk and then shut down the server", "1.0.0",
              "O(N) when saving, where N is the total number of keys"),
          {Optional(OneOf("nosave-save", {Token("nosave", "NOSAVE"), Token("save", "SAVE")})),
           Optional(Token("now", "NOW"), "7.0.0"), Optional(Token("force", "FORCE"), "7.0.0")}));

  // ---- transactions
  auto tx = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "transactions", std::move(complexity)};
  };
  const uint32_t kTxFlags = kCmdNoScript | kCmdLoading | kCmdStale | kFast | kCmdAllowBusy;
  t.push_back(Cmd("multi", 1, kTxFlags | kCmdTransactionControl, Multi, {"fast", "transaction"},
                  tx("Start a transaction block", "1.2.0")));
  t.push_back(Cmd("exec", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdTransactionControl, Exec,
                  {"slow", "transaction"},
                  tx("Execute all commands issued after MULTI", "1.2.0",
                     "Depends on commands in the transaction")));
  t.push_back(Cmd("discard", 1, kTxFlags | kCmdTransactionControl, Discard, {"fast", "transaction"},
                  tx("Discard all commands issued after MULTI", "2.0.0",
                     "O(N), when N is the number of queued commands")));
  t.push_back(
      Keys(Cmd("watch", -2, kTxFlags | kCmdTransactionControl, Watch, {"fast", "transaction"},
               tx("Monitor changes to keys to determine execution of a MULTI/EXEC block", "2.2.0",
                  "O(1) for every key."),
               {KeyArg("key", true)}),
           1, -1, 1, {"RO"}));
  t.push_back(Cmd("unwatch", 1, kTxFlags, Unwatch, {"fast", "transaction"},
                  tx("Forget about all watched keys", "2.2.0")));

  // ---- scripting: no Lua; the known lock-library scripts run natively (see
  // scripting.cc and known_scripts.h). EVAL and EVALSHA are not flagged as
  // granting leases: each known script decides on the path it takes.
  auto script = [](std::string summary, std::string since,
                   std::string complexity = "Depends on the script") {
    return Doc{std::move(summary), std::move(since), "scripting", std::move(complexity)};
  };
  const std::string known =
      " latch runs no Lua: it recognises the exact scripts of known lock libraries and runs "
      "them natively: " +
      KnownScriptLibraries() + ".";
  const std::vector<ArgDoc> eval_args = {StrArg("script"), IntArg("numkeys"),
                                         Optional(Multiple(KeyArg())),
                                         Optional(Multiple(StrArg("arg")))};
  const std::vector<ArgDoc> evalsha_args = {StrArg("sha1"), IntArg("numkeys"),
                                            Optional(Multiple(KeyArg())),
                                            Optional(Multiple(StrArg("arg")))};
  const uint32_t kScriptFlags = kCmdNoScript | kCmdStale;
  t.push_back(Cmd("eval", -3, kScriptFlags, Eval, {"slow", "scripting"},
                  script("Execute a Lua script server side." + known, "2.6.0"), eval_args));
  t.push_back(Cmd("evalsha", -3, kScriptFlags, EvalSha, {"slow", "scripting"},
                  script("Execute a Lua script server side." + known, "2.6.0"), evalsha_args));
  t.push_back(Cmd("eval_ro", -3, kScriptFlags | kRead, EvalRo, {"slow", "scripting"},
                  script("Execute a read-only Lua script server side." + known, "7.0.0"),
                  eval_args));
  t.push_back(Cmd("evalsha_ro", -3, kScriptFlags | kRead, EvalShaRo, {"slow", "scripting"},
                  script("Execute a read-only Lua script server side." + known, "7.0.0"),
                  evalsha_args));
  t.push_back(Container(
      "script", {"slow"},
      script("A container for Lua scripts management commands." + known, "2.6.0",
             "Depends on subcommand."),
      {Cmd("load", 3, kScriptFlags, ScriptLoad, {"slow", "scripting"},
           script("Load the specified Lua script into the script cache.", "2.6.0",
                  "O(N) with N being the length in bytes of the script body."),
           {StrArg("script")}),
       Cmd("exists", -3, kCmdNoScript, ScriptExists, {"slow", "scripting"},
           script("Check existence of scripts in the script cache.", "2.6.0",
                  "O(N) with N being the number of scripts to check (so checking a single "
                  "script is an O(1) operation)."),
           {Multiple(StrArg("sha1"))}),
       Cmd("flush", -2, kCmdNoScript, ScriptFlush, {"slow", "scripting"},
           script("Remove all the scripts from the script cache.", "2.6.0",
                  "O(N) with N being the number of scripts in cache"),
           {Optional(OneOf("async", {Token("async", "ASYNC"), Token("sync", "SYNC")}), "6.2.0")}),
       Cmd("kill", 2, kCmdNoScript | kCmdAllowBusy, ScriptKill, {"slow", "scripting"},
           script("Kill the script currently in execution.", "2.6.0", "O(1)")),
       Cmd("help", 2, kCmdLoading | kCmdStale, ScriptHelp, {"slow", "scripting"},
           script("Show helpful text about the different subcommands", "5.0.0", "O(1)"))}));
  t.push_back(Cmd("fcall", -3, kCmdNoScript, NoScripting, {"slow", "scripting"},
                  script("Invoke a function", "7.0.0"), eval_args));
  t.push_back(Cmd("fcall_ro", -3, kCmdNoScript | kRead, NoScripting, {"slow", "scripting"},
                  script("Invoke a read-only function", "7.0.0"), eval_args));
  t.push_back(Cmd("function", -2, kCmdNoScript, NoScripting, {"slow", "scripting"},
                  script("A container for function commands", "7.0.0")));
  return t;
}

void WriteArgDoc(const ArgDoc& a, resp::ReplyWriter& w) {
  size_t fields = 2 + (a.key_spec_index >= 0) + !a.token.empty() + !a.since.empty() +
                  (a.optional || a.multiple) + !a.args.empty();
  w.Map(fields);
  w.Bulk("name");
  w.Bulk(a.name);
  w.Bulk("type");
  w.Bulk(a.type);
  if (a.key_spec_index >= 0) {
    w.Bulk("key_spec_index");
    w.Int(a.key_spec_index);
  }
  if (!a.token.empty()) {
    w.Bulk("token");
    w.Bulk(a.token);
  }
  if (!a.since.empty()) {
    w.Bulk("since");
    w.Bulk(a.since);
  }
  if (a.optional || a.multiple) {
    w.Bulk("flags");
    w.Set(static_cast<size_t>(a.optional) + static_cast<size_t>(a.multiple));
    if (a.optional) w.Simple("optional");
    if (a.multiple) w.Simple("multiple");
  }
  if (!a.args.empty()) {
    w.Bulk("arguments");
    w.Array(a.args.size());
    for (const ArgDoc& sub : a.args) WriteArgDoc(sub, w);
  }
}

}  // namespace

CommandTable::CommandTable() : commands_(BuildTable()) {
  for (CommandSpec& c : commands_) {
    c.fullname = c.name;
    for (CommandSpec& s : c.subcommands) s.fullname = c.name + "|" + s.name;
  }
  slots_.assign(256, nullptr);
  for (const CommandSpec& c : commands_) {
    size_t i = NameHash(c.name) & (slots_.size() - 1);
    while (slots_[i] != nullptr) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = &c;
  }
}

uint32_t CommandTable::NameHash(std::string_view lower) {
  uint32_t h = 2166136261u;
  for (char c : lower) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

const CommandTable& CommandTable::Get() {
  static const CommandTable table;
  return table;
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  // Every request looks its command up: fold the name to lower case in a
  // small stack buffer, then one hash lookup. No command name is longer.
  char lower[32];
  if (name.empty() || name.size() > sizeof(lower)) return nullptr;
  for (size_t i = 0; i < name.size(); ++i) lower[i] = AsciiLower(name[i]);
  std::string_view key(lower, name.size());
  for (size_t i = NameHash(key) & (slots_.size() - 1); slots_[i] != nullptr;
       i = (i + 1) & (slots_.size() - 1)) {
    if (slots_[i]->name == key) return slots_[i];
  }
  return nullptr;
}

void CommandTable::WriteInfo(const CommandSpec& c, resp::ReplyWriter& w) {
  w.Array(10);
  w.Bulk(c.fullname);
  w.Int(c.arity);
  static const std::pair<uint32_t, const char*> kFlagNames[] = {
      {kCmdWrite, "write"},       {kCmdReadonly, "readonly"}, {kCmdDenyOom, "denyoom"},
      {kCmdAdmin, "admin"},       {kCmdNoScript, "noscript"}, {kCmdLoading, "loading"},
      {kCmdStale, "stale"},       {kCmdFast, "fast"},         {kCmdNoAuth, "no_auth"},
      {kCmdSentinel, "sentinel"}, {kCmdNoMulti, "no_multi"},  {kCmdAllowBusy, "allow_busy"},
  };
  size_t nflags = 0;
  for (const auto& [bit, name] : kFlagNames) nflags += c.has(bit);
  w.Set(nflags);
  for (const auto& [bit, name] : kFlagNames) {
    if (c.has(bit)) w.Simple(name);
  }
  w.Int(c.first_key);
  w.Int(c.last_key);
  w.Int(c.key_step);
  w.Set(c.acl_categories.size());
  for (const std::string& cat : c.acl_categories) w.Simple("@" + cat);
  w.Set(0);  // tips
  if (c.first_key > 0) {
    w.Array(1);
    w.Map(3);
    w.Bulk("flags");
    w.Set(c.key_spec_flags.size());
    for (const std::string& f : c.key_spec_flags) w.Simple(f);
    w.Bulk("begin_search");
    w.Map(2);
    w.Bulk("type");
    w.Bulk("index");
    w.Bulk("spec");
    w.Map(1);
    w.Bulk("index");
    w.Int(c.first_key);
    w.Bulk("find_keys");
    w.Map(2);
    w.Bulk("type");
    w.Bulk("range");
    w.Bulk("spec");
    w.Map(3);
    w.Bulk("lastkey");
    w.Int(c.last_key < 0 ? -1 : c.last_key - c.first_key);
    w.Bulk("keystep");
    w.Int(c.key_step);
    w.Bulk("limit");
    w.Int(0);
  } else {
    w.Array(0);
  }
  w.Array(c.subcommands.size());
  for (const CommandSpec& s : c.subcommands) WriteInfo(s, w);
}

void CommandTable::WriteDocs(const CommandSpec& c, resp::ReplyWriter& w) {
  size_t fields = 4 + !c.args.empty() + !c.subcommands.empty();
  w.Map(fields);
  w.Bulk("summary");
  w.Bulk(c.summary);
  w.Bulk("since");
  w.Bulk(c.since);
  w.Bulk("group");
  w.Bulk(c.group);
  w.Bulk("complexity");
  w.Bulk(c.complexity);
  if (!c.args.empty()) {
    w.Bulk("arguments");
    w.Array(c.args.size());
    for (const ArgDoc& a : c.args) WriteArgDoc(a, w);
  }
  if (!c.subcommands.empty()) {
    w.Bulk("subcommands");
    w.Map(c.subcommands.size());
    for (const CommandSpec& s : c.subcommands) {
      w.Bulk(s.fullname);
      WriteDocs(s, w);
    }
  }
}

}  // namespace latch
