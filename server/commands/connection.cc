// Connection commands: PING, ECHO, QUIT, HELLO, AUTH, RESET, SELECT and CLIENT.
//
// They change or report the state of one session (protocol version, name,
// authentication) and never touch the keyspace.
#include <cctype>

#include <algorithm>

#include "server/acl/users.h"
#include "server/commands/common.h"
#include "server/control.h"
#include "server/pubsub.h"
#include "server/watch.h"

namespace latch::commands {

namespace {

// AUTH and HELLO … AUTH: the user must exist, be on, and have that
// password (any, with nopass); the session then runs as it. A failure goes
// to ACL LOG (reason "auth"), as Redis's ACLAuthenticateUser does.
bool CheckCredentials(CommandContext& ctx, std::string_view user, std::string_view pass) {
  acl::Users& users = ctx.acl().acl_users();
  const acl::User* u = users.Find(user);
  if (u == nullptr || !u->enabled || !u->CheckPassword(pass)) {
    users.Log(acl::Denied::kAuth,
              ctx.session.multi.open() ? acl::Context::kMulti : acl::Context::kToplevel,
              ctx.argv[0], user, ctx.now.wall_ms, ctx.session);
    return false;
  }
  ctx.session.user = u == &users.Default() ? nullptr : u;
  return true;
}

constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";

// Client names and library names: printable ASCII without spaces.
bool ValidName(std::string_view s) {
  for (char c : s) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

}  // namespace

// One line of CLIENT LIST / CLIENT INFO, with Redis 7.2's fields in its
// order. `argv_bytes`: the size of the request being executed (the client
// asking; every other client is between requests).
std::string ClientLine(int64_t now, const Session& c, size_t argv_bytes) {
  Session::Buffers b = c.buffers();
  // Redis's flag letters that apply: O monitor, x in MULTI, b blocked (a
  // blocking pop, SET … WAIT, WAITAOF), d a watched key changed, e CLIENT
  // NO-EVICT, P subscribed, U the unix socket; N for none.
  std::string flags;
  if (c.monitor) flags += 'O';
  if (c.multi.open()) flags += 'x';
  if (c.blocked) flags += 'b';
  if (c.multi.watched_key_touched) flags += 'd';
  if (c.no_evict) flags += 'e';
  if (c.subscribed()) flags += 'P';
  if (c.unix_socket) flags += 'U';
  if (flags.empty()) flags = "N";
  size_t multi_mem = 0;
  for (const auto& request : c.multi.queued()) {
    for (const std::string& arg : request) multi_mem += arg.size();
  }
  std::string events = b.reading ? "r" : "";
  if (b.output_pending > 0) events += 'w';
  std::string line;
  line.reserve(320);
  line += "id=" + std::to_string(c.id());
  line += " addr=" + c.addr;
  line += " laddr=" + c.laddr;
  line += " fd=" + std::to_string(b.fd);
  line += " name=" + c.name;
  line += " age=" + std::to_string((now - c.created_ms) / 1000);
  line += " idle=" + std::to_string((now - c.last_interaction_ms) / 1000);
  line += " flags=" + flags;
  line += " db=" + std::to_string(c.db);
  line += " sub=" + std::to_string(c.channels.size());
  line += " psub=" + std::to_string(c.patterns.size());
  line += " ssub=" + std::to_string(c.shard_channels.size());
  line += " multi=" +
          std::to_string(c.multi.open() ? static_cast<int64_t>(c.multi.queued().size()) : -1);
  line += " qbuf=" + std::to_string(b.query);
  line += " qbuf-free=" + std::to_string(b.query_capacity - b.query);
  line += " argv-mem=" + std::to_string(argv_bytes);
  line += " multi-mem=" + std::to_string(multi_mem);
  // rbs/rbp: the reply buffer's size and its peak use in the last 5 s.
  line += " rbs=" + std::to_string(b.output_capacity);
  line += " rbp=" + std::to_string(b.output_peak);
  line += " obl=" + std::to_string(b.output);
  line += " oll=0 omem=" + std::to_string(b.output_pending);
  line +=
      " tot-mem=" + std::to_string(b.query_capacity + b.output_capacity + argv_bytes + multi_mem);
  line += " events=" + events;
  line += " cmd=" + (c.last_command != nullptr ? *c.last_command : std::string("NULL"));
  line += " user=" + (c.user != nullptr ? c.user->name : std::string("default"));
  line += " redir=-1";
  line += " resp=" + std::to_string(c.resp);
  line += " lib-name=" + c.lib_name;
  line += " lib-ver=" + c.lib_ver;
  line += "\n";
  return line;
}

namespace {

size_t ArgvBytes(std::span<const std::string_view> argv) {
  size_t n = 0;
  for (std::string_view a : argv) n += a.size();
  return n;
}

// Redis's client types (getClientTypeByName): 0 normal (a MONITOR client
// too, as in Redis), 2 pubsub (a client that listens to anything); replicas
// (1) and masters (3) latch never has. -1: not a type.
int ClientType(std::string_view name) {
  name = UpToNul(name);
  if (EqualsIgnoreCase(name, "normal")) return 0;
  if (EqualsIgnoreCase(name, "slave") || EqualsIgnoreCase(name, "replica")) return 1;
  if (EqualsIgnoreCase(name, "pubsub")) return 2;
  if (EqualsIgnoreCase(name, "master")) return 3;
  return -1;
}

int TypeOf(const Session& c) {
  return c.subscribed() ? 2 : 0;
}

}  // namespace

void Ping(CommandContext& ctx) {
  if (ctx.argv.size() > 2) {
    ctx.reply.Error("ERR wrong number of arguments for 'ping' command");
    return;
  }
  // A subscribed RESP2 connection reads messages: PING's answer is one, a
  // ["pong", message] array (Redis's rule, so a client's subscriber loop
  // can health-check its connection).
  if (ctx.may_block && !ctx.reply.resp3() && ctx.session.subscribed()) {
    ctx.reply.Array(2);
    ctx.reply.Bulk("pong");
    ctx.reply.Bulk(ctx.argv.size() == 2 ? ctx.argv[1] : std::string_view());
    return;
  }
  if (ctx.argv.size() == 2) {
    ctx.reply.Bulk(ctx.argv[1]);
  } else {
    ctx.reply.Simple("PONG");
  }
}

void Echo(CommandContext& ctx) {
  ctx.reply.Bulk(ctx.argv[1]);
}

void Quit(CommandContext& ctx) {
  ctx.reply.Ok();
  ctx.session.CloseAfterReply();
}

void Hello(CommandContext& ctx) {
  int64_t version = 0;
  size_t next = 1;
  if (ctx.argv.size() >= 2) {
    auto v = ParseInt64(ctx.argv[next++]);
    if (!v) {
      ctx.reply.Error("ERR Protocol version is not an integer or out of range");
      return;
    }
    if (*v < 2 || *v > 3) {
      ctx.reply.Error("NOPROTO unsupported protocol version");
      return;
    }
    version = *v;
  }
  std::string_view user, pass, name;
  bool has_auth = false, has_name = false;
  for (size_t j = next; j < ctx.argv.size(); ++j) {
    size_t more = ctx.argv.size() - 1 - j;
    std::string_view opt = ctx.argv[j];
    if (IsWord(opt, "AUTH") && more >= 2) {
      user = ctx.argv[j + 1];
      pass = ctx.argv[j + 2];
      has_auth = true;
      ctx.Redact(j + 1);  // never in the slow log
      ctx.Redact(j + 2);
      j += 2;
    } else if (IsWord(opt, "SETNAME") && more >= 1) {
      name = ctx.argv[j + 1];
      if (!ValidName(name)) {
        ctx.reply.Error("ERR Client names cannot contain spaces, newlines or special characters.");
        return;
      }
      has_name = true;
      ++j;
    } else {
      ctx.reply.Error("ERR Syntax error in HELLO option '" + std::string(UpToNul(opt)) + "'");
      return;
    }
  }
  if (has_auth) {
    if (!CheckCredentials(ctx, user, pass)) {
      ctx.reply.Error(kWrongPass);
      return;
    }
    ctx.session.authenticated = true;
  }
  if (!ctx.session.authenticated) {
    ctx.reply.Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
        "the RESP protocol version at the same time");
    return;
  }
  if (has_name) ctx.session.name = std::string(name);
  if (version != 0) ctx.session.resp = static_cast<int>(version);

  // The reply uses the protocol just selected.
  resp::ReplySink& w = ctx.reply;
  w.SetProtocol(ctx.session.resp);
  w.Map(7);
  w.Bulk("server");
  w.Bulk("redis");
  w.Bulk("version");
  w.Bulk(kRedisCompatVersion);
  w.Bulk("proto");
  w.Int(ctx.session.resp);
  w.Bulk("id");
  w.Int(static_cast<int64_t>(ctx.session.id()));
  w.Bulk("mode");
  w.Bulk("standalone");
  w.Bulk("role");
  w.Bulk("master");
  w.Bulk("modules");
  w.Array(0);
}

void Auth(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  // Never in the slow log, as Redis.
  ctx.Redact(1);
  ctx.Redact(2);
  std::string_view user = "default", pass;
  if (ctx.argv.size() == 2) {
    if (ctx.acl().acl_users().Default().nopass) {
      ctx.reply.Error(
          "ERR AUTH <password> called without any password configured for the default user. "
          "Are you sure your configuration is correct?");
      return;
    }
    pass = ctx.argv[1];
  } else {
    user = ctx.argv[1];
    pass = ctx.argv[2];
  }
  if (!CheckCredentials(ctx, user, pass)) {
    ctx.reply.Error(kWrongPass);
    return;
  }
  ctx.session.authenticated = true;
  ctx.reply.Ok();
}

void Select(CommandContext& ctx) {
  auto index = IntArgOrReply(ctx, ctx.argv[1]);
  if (!index) return;
  if (*index < INT32_MIN || *index > INT32_MAX) {
    // Redis parses the index as a C int.
    ctx.reply.Error("ERR value is out of range, value must between -2147483648 and 2147483647");
    return;
  }
  if (*index < 0 || *index >= ctx.store.databases()) {
    ctx.reply.Error("ERR DB index is out of range");
    return;
  }
  // The session's database from now on; the gate selects it in the Store
  // before each command. (Inside a known script, only for the rest of the
  // script: the runner puts the caller's back, as Redis 7 does.)
  ctx.session.db = static_cast<int>(*index);
  ctx.store.Select(ctx.session.db);
  ctx.reply.Ok();
}

void Monitor(CommandContext& ctx) {
  ctx.clients().AddMonitor(ctx.session);
  ctx.reply.Ok();
}

// RESET: the connection as it was when it opened (Redis 6.2's
// clearClientConnectionState): out of MONITOR, database 0, RESP2, the
// default user (authenticated again only if no password is set), no
// transaction and no watched key, no subscription (dropped without a
// confirmation each), no name, replies on. The reply is +RESET.
void Reset(CommandContext& ctx) {
  Session& s = ctx.session;
  if (s.monitor) ctx.clients().RemoveMonitor(s);
  ctx.pubsub.Forget(s);
  s.db = 0;
  ctx.store.Select(0);
  s.resp = 2;
  s.user = nullptr;
  const acl::User& d = ctx.acl().acl_users().Default();
  s.authenticated = d.nopass && d.enabled;
  s.multi.Discard();
  ctx.clients().watches().UnwatchAll(s);
  s.name.clear();
  s.reply_off = s.reply_skip_next = s.reply_skip_this = false;
  ctx.reply.Simple("RESET");
}

void ClientId(CommandContext& ctx) {
  ctx.reply.Int(static_cast<int64_t>(ctx.session.id()));
}

void ClientSetName(CommandContext& ctx) {
  if (!ValidName(ctx.argv[2])) {
    ctx.reply.Error("ERR Client names cannot contain spaces, newlines or special characters.");
    return;
  }
  ctx.session.name = std::string(ctx.argv[2]);
  ctx.reply.Ok();
}

void ClientGetName(CommandContext& ctx) {
  if (ctx.session.name.empty()) {
    ctx.reply.Null();
  } else {
    ctx.reply.Bulk(ctx.session.name);
  }
}

void ClientList(CommandContext& ctx) {
  // CLIENT LIST [TYPE normal] [ID id …]
  std::vector<uint64_t> ids;
  bool only_ids = false;
  int only_type = -1;
  for (size_t j = 2; j < ctx.argv.size(); ++j) {
    if (IsWord(ctx.argv[j], "TYPE") && j + 1 < ctx.argv.size()) {
      std::string_view type = ctx.argv[++j];
      only_type = ClientType(type);
      if (only_type >= 0) continue;
      ctx.reply.Error("ERR Unknown client type '" + std::string(UpToNul(type)) + "'");
      return;
    }
    if (IsWord(ctx.argv[j], "ID") && j + 1 < ctx.argv.size()) {
      only_ids = true;
      for (++j; j < ctx.argv.size(); ++j) {
        auto id = ParseInt64(ctx.argv[j]);
        if (!id || *id <= 0) {
          ctx.reply.Error("ERR Invalid client ID");
          return;
        }
        ids.push_back(static_cast<uint64_t>(*id));
      }
      break;
    }
    ctx.reply.Error(kSyntaxError);
    return;
  }
  std::string out;
  // Oldest first, as Redis lists them.
  std::vector<Session*> clients;
  ctx.clients().ForEachSession([&](Session& c) { clients.push_back(&c); });
  for (auto it = clients.rbegin(); it != clients.rend(); ++it) {
    Session& c = **it;
    if (c.closing()) continue;
    if (only_type >= 0 && TypeOf(c) != only_type) continue;
    if (only_ids && std::find(ids.begin(), ids.end(), c.id()) == ids.end()) continue;
    out += ClientLine(ctx.now.mono, c, &c == &ctx.session ? ArgvBytes(ctx.argv) : 0);
  }
  ctx.reply.Verbatim("txt", out);
}

void ClientInfo(CommandContext& ctx) {
  ctx.reply.Verbatim("txt", ClientLine(ctx.now.mono, ctx.session, ArgvBytes(ctx.argv)));
}

void ClientSetInfo(CommandContext& ctx) {
  std::string_view attr = ctx.argv[2], value = ctx.argv[3];
  bool is_name = IsWord(attr, "LIB-NAME");
  if (!is_name && !IsWord(attr, "LIB-VER")) {
    ctx.reply.Error("ERR Unrecognized option '" + std::string(UpToNul(attr)) + "'");
    return;
  }
  if (!ValidName(value)) {
    ctx.reply.Error("ERR " + ToLower(attr) +
                    " cannot contain spaces, newlines or special characters.");
    return;
  }
  (is_name ? ctx.session.lib_name : ctx.session.lib_ver) = std::string(value);
  ctx.reply.Ok();
}

void ClientKill(CommandContext& ctx) {
  // CLIENT KILL ip:port (the old form: +OK, or an error; may kill oneself),
  // or CLIENT KILL <filter> <value> … (the number killed), with Redis's
  // filters and errors, options read in order.
  const bool old_form = ctx.argv.size() == 3;
  std::optional<uint64_t> id;
  std::optional<std::string_view> addr, laddr;
  std::optional<int64_t> max_age;
  int type = -1;
  const acl::User* kill_user = nullptr;  // USER: the sessions logged in as it
  bool skipme = !old_form;
  if (old_form) {
    addr = UpToNul(ctx.argv[2]);  // compared as a C string (strcmp)
  } else {
    for (size_t j = 2; j < ctx.argv.size(); j += 2) {
      std::string_view f = ctx.argv[j];
      if (j + 1 >= ctx.argv.size()) {
        ctx.reply.Error(kSyntaxError);
        return;
      }
      std::string_view v = ctx.argv[j + 1];
      if (IsWord(f, "ID")) {
        auto n = ParseInt64(v);
        if (!n || *n <= 0) {
          ctx.reply.Error("ERR client-id should be greater than 0");
          return;
        }
        id = static_cast<uint64_t>(*n);
      } else if (IsWord(f, "TYPE")) {
        type = ClientType(v);
        if (type == -1) {
          ctx.reply.Error("ERR Unknown client type '" + std::string(UpToNul(v)) + "'");
          return;
        }
      } else if (IsWord(f, "ADDR")) {
        addr = UpToNul(v);
      } else if (IsWord(f, "LADDR")) {
        laddr = UpToNul(v);
      } else if (IsWord(f, "USER")) {
        kill_user = ctx.acl().acl_users().Find(v);
        if (kill_user == nullptr) {
          ctx.reply.Error("ERR No such user '" + std::string(UpToNul(v)) + "'");
          return;
        }
      } else if (IsWord(f, "SKIPME")) {
        if (IsWord(v, "yes")) {
          skipme = true;
        } else if (IsWord(v, "no")) {
          skipme = false;
        } else {
          ctx.reply.Error(kSyntaxError);
          return;
        }
      } else if (IsWord(f, "MAXAGE")) {
        // Redis 7.4: only clients connected at least this many seconds.
        auto n = IntArgOrReply(ctx, v);
        if (!n) return;
        max_age = *n;
      } else {
        ctx.reply.Error(kSyntaxError);
        return;
      }
    }
  }
  int64_t killed = 0;
  bool kill_self = false;
  ctx.clients().ForEachSession([&](Session& c) {
    if (c.closing()) return;
    if (addr && c.addr != *addr) return;
    if (laddr && c.laddr != *laddr) return;
    if (type >= 0 && TypeOf(c) != type) return;
    if (kill_user != nullptr && &ctx.acl().acl_users().Of(c) != kill_user) return;
    if (id && c.id() != *id) return;
    if (max_age && *max_age != 0 && (ctx.now.mono - c.created_ms) / 1000 < *max_age) return;
    if (&c == &ctx.session) {
      if (skipme) return;
      kill_self = true;
    } else {
      c.Close();
    }
    ++killed;
  });
  if (old_form) {
    if (killed == 0) {
      ctx.reply.Error("ERR No such client");
    } else {
      ctx.reply.Ok();
    }
  } else {
    ctx.reply.Int(killed);
  }
  if (kill_self) ctx.session.CloseAfterReply();
}

void ClientReply(CommandContext& ctx) {
  // CLIENT REPLY ON|OFF|SKIP. The replies are cut once each command is over
  // (Server::FinishReply); here only the state changes, as Redis's flags:
  // ON clears OFF and a pending skip and answers OK; OFF and SKIP answer
  // nothing (SKIP, ignored while OFF, drops the next command's reply).
  std::string_view mode = ctx.argv[2];
  if (IsWord(mode, "ON")) {
    ctx.session.reply_off = false;
    ctx.session.reply_skip_this = false;
    ctx.reply.Ok();
  } else if (IsWord(mode, "OFF")) {
    ctx.session.reply_off = true;
  } else if (IsWord(mode, "SKIP")) {
    if (!ctx.session.reply_off) ctx.session.reply_skip_next = true;
  } else {
    ctx.reply.Error(kSyntaxError);
  }
}

void ClientNoEvict(CommandContext& ctx) {
  if (IsWord(ctx.argv[2], "on") || IsWord(ctx.argv[2], "off")) {
    // Recorded (CLIENT LIST's flag e); latch never evicts keys anyway.
    ctx.session.no_evict = IsWord(ctx.argv[2], "on");
    ctx.reply.Ok();
  } else {
    ctx.reply.Error(kSyntaxError);
  }
}

void ClientUnblock(CommandContext& ctx) {
  // CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client blocked by a blocking pop,
  // SET … WAIT or WAITAOF is answered as if its timeout had passed (or with
  // the UNBLOCKED error) and goes on. 1 if it was blocked, else 0.
  if (ctx.argv.size() > 4) {
    std::string sub(UpToNul(ctx.argv[1]).substr(0, 128));
    ctx.reply.Error("ERR unknown subcommand or wrong number of arguments for '" + sub +
                    "'. Try CLIENT HELP.");
    return;
  }
  bool error = false;
  if (ctx.argv.size() == 4) {
    if (IsWord(ctx.argv[3], "ERROR")) {
      error = true;
    } else if (!IsWord(ctx.argv[3], "TIMEOUT")) {
      ctx.reply.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
      return;
    }
  }
  auto id = IntArgOrReply(ctx, ctx.argv[2]);
  if (!id) return;
  const bool unblocked = *id > 0 && ctx.clients().UnblockClient(static_cast<uint64_t>(*id), error);
  ctx.reply.Int(unblocked ? 1 : 0);
}

void ClientHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ID <client-id>",
      "      Kill connections by client id.",
      "    * ADDR <ip:port>",
      "      Kill connections made from the specified address",
      "    * LADDR <ip:port>",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "    * MAXAGE <maxage>",
      "      Kill connections older than the specified age (seconds).",
      "LIST [TYPE normal] [ID <client-id> [<client-id> ...]]",
      "    Return information about client connections.",
      "NO-EVICT (ON|OFF)",
      "    Accepted for compatibility: latch never evicts.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETINFO <LIB-NAME|LIB-VER> <value>",
      "    Record the client library's name or version.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "HELP",
      "    Print this help.",
  };
  ReplyHelp(ctx, kLines);
}

// ---------------------------------------------------------------- registration

namespace {

// CLIENT KILL's filters in COMMAND DOCS, as Redis documents them.
std::vector<ArgDoc> KillFilters() {
  using namespace spec;
  ArgDoc type = Optional(
      OneOf("normal_master_slave_pubsub",
            {Token("normal", "NORMAL"), Optional(Token("master", "MASTER")),
             Token("slave", "SLAVE"), Token("replica", "REPLICA"), Token("pubsub", "PUBSUB")}),
      "2.8.12");
  type.token = "TYPE";
  type.args[1].optional = false;
  type.args[1].since = "3.2.0";
  type.args[3].since = "5.0.0";
  return {Optional(Int("client-id", "ID"), "2.8.12"), type,
          Optional(Str("username", "USER")),          Optional(Str("ip:port", "ADDR")),
          Optional(Str("ip:port", "LADDR"), "6.2.0"), Optional(Str("yes/no", "SKIPME")),
          Optional(Int("maxage", "MAXAGE"), "7.4.0")};
}

}  // namespace

void RegisterConnection(CommandRegistry& r) {
  using namespace spec;
  // ---- connection
  const uint32_t kHandshake =
      kCmdNoScript | kCmdLoading | kCmdStale | kFast | kCmdNoAuth | kCmdSentinel | kCmdAllowBusy;
  auto conn = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "connection", std::move(complexity)};
  };
  r.Add(Cmd("ping", -1, kFast | kCmdSentinel | kCmdHealthCheck | kCmdSubscribedContext, Ping,
            {"fast", "connection"}, conn("Ping the server", "1.0.0"), {Optional(Str("message"))}));
  r.Add(Cmd("echo", 2, kFast, Echo, {"fast", "connection"}, conn("Echo the given string", "1.0.0"),
            {Str("message")}));
  r.Add(Cmd("quit", -1,
            kCmdAllowBusy | kCmdNoScript | kCmdLoading | kCmdStale | kFast | kCmdNoAuth |
                kCmdTransactionControl | kCmdSubscribedContext,
            Quit, {"fast", "connection"}, conn("Close the connection", "1.0.0")));
  r.Add(Cmd(
      "hello", -1, kHandshake, Hello, {"fast", "connection"}, conn("Handshake with Redis", "6.0.0"),
      {Optional(Block("arguments", {Int("protover"),
                                    Optional(Block("username-password",
                                                   {Str("username"), Str("password")}, "AUTH")),
                                    Optional(Str("clientname", "SETNAME"))}))}));
  r.Add(Cmd("auth", -2, kHandshake, Auth, {"fast", "connection"},
            conn("Authenticate to the server", "1.0.0",
                 "O(N) where N is the number of passwords defined for the user"),
            {Optional(Str("username"), "6.0.0"), Str("password")}));
  // RESET runs at once inside MULTI (it discards the transaction), before
  // authentication, and in RESP2's subscribed mode (it leaves it): Redis's.
  r.Add(Cmd("reset", 1,
            kCmdNoScript | kCmdLoading | kCmdStale | kFast | kCmdNoAuth | kCmdAllowBusy |
                kCmdTransactionControl | kCmdSubscribedContext,
            Reset, {"fast", "connection"}, conn("Reset the connection", "6.2.0")));
  r.Add(Cmd("select", 2, kCmdLoading | kCmdStale | kFast, Select, {"fast", "connection"},
            conn("Change the selected database for the current connection", "1.0.0"),
            {Int("index")}));
  r.Add(Cmd("monitor", 1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Monitor,
            {"admin", "slow", "dangerous"},
            Doc{"Listen for all requests received by the server in real time", "1.0.0", "server",
                "O(1)"}));
  const uint32_t kClientFlags = kCmdNoScript | kCmdLoading | kCmdStale;
  r.Add(Container(
      "client", {"slow"}, conn("A container for client connection commands", "2.4.0"),
      {Cmd("id", 2, kClientFlags, ClientId, {"slow", "connection"},
           conn("Returns the client ID for the current connection", "5.0.0")),
       Cmd("setname", 3, kClientFlags, ClientSetName, {"slow", "connection"},
           conn("Set the current connection name", "2.6.9"), {Str("connection-name")}),
       Cmd("getname", 2, kClientFlags, ClientGetName, {"slow", "connection"},
           conn("Get the current connection name", "2.6.9")),
       Cmd("list", -2, kCmdAdmin | kClientFlags, ClientList,
           {"admin", "slow", "dangerous", "connection"},
           conn("Get the list of client connections", "2.4.0",
                "O(N) where N is the number of client connections"),
           {Optional(Token("type", "TYPE")), Optional(Multiple(Int("client-id", "ID")))}),
       Cmd("info", 2, kClientFlags, ClientInfo, {"slow", "connection"},
           conn("Returns information about the current client connection.", "6.2.0")),
       Cmd("setinfo", 4, kClientFlags, ClientSetInfo, {"slow", "connection"},
           conn("Set client or connection specific info", "7.2.0"),
           {OneOf("attr", {Str("libname", "LIB-NAME"), Str("libver", "LIB-VER")})}),
       Cmd("kill", -3, kCmdAdmin | kClientFlags, ClientKill,
           {"admin", "slow", "dangerous", "connection"},
           conn("Kill the connection of a client", "2.4.0",
                "O(N) where N is the number of client connections"),
           {OneOf("filter", {Str("ip:port"), Multiple(OneOf("new-format", KillFilters()))})}),
       Cmd("reply", 3, kClientFlags, ClientReply, {"slow", "connection"},
           conn("Instruct the server whether to reply to commands", "3.2.0"),
           {OneOf("on_off_skip", {Token("on", "ON"), Token("off", "OFF"), Token("skip", "SKIP")})}),
       Cmd("no-evict", 3, kCmdAdmin | kClientFlags, ClientNoEvict,
           {"admin", "slow", "dangerous", "connection"},
           conn("Set client eviction mode for the current connection", "7.0.0"),
           {OneOf("enabled", {Token("on", "ON"), Token("off", "OFF")})}),
       Cmd("unblock", -3, kCmdAdmin | kClientFlags, ClientUnblock,
           {"admin", "slow", "dangerous", "connection"},
           conn("Unblock a client blocked in a blocking command from a different connection",
                "5.0.0", "O(log N) where N is the number of client connections"),
           {Int("client-id"), Optional(OneOf("unblock-type", {Token("timeout", "TIMEOUT"),
                                                              Token("error", "ERROR")}))}),
       Cmd("help", 2, kCmdLoading | kCmdStale, ClientHelp, {"slow", "connection"},
           conn("Show helpful text about the different subcommands", "5.0.0"))}));
}

}  // namespace latch::commands
