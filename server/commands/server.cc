// Server commands: DBSIZE, FLUSHALL/FLUSHDB, TIME, INFO, CONFIG, COMMAND,
// SHUTDOWN.
#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>

#include "common/glob.h"
#include "server/commands/common.h"
#include "server/connection.h"
#include "server/effects.h"
#include "server/keyspace.h"
#include "server/known_scripts.h"
#include "server/log.h"
#include "server/server.h"

namespace latch::commands {

void DbSize(CommandContext& ctx) {
  ctx.reply.Int(static_cast<int64_t>(ctx.db.size()));
}

void FlushAll(CommandContext& ctx) {
  if (ctx.argv.size() > 2 || (ctx.argv.size() == 2 && !EqualsIgnoreCase(ctx.argv[1], "ASYNC") &&
                              !EqualsIgnoreCase(ctx.argv[1], "SYNC"))) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  ctx.effects.FlushAll();  // first: WATCH needs to see which keys go
  ctx.db.Clear();
  ctx.reply.Ok();
}

void Time(CommandContext& ctx) {
  int64_t us = ctx.server.clock().WallUs();
  ctx.reply.Array(2);
  ctx.reply.Bulk(std::to_string(us / 1'000'000));
  ctx.reply.Bulk(std::to_string(us % 1'000'000));
}

// ---------------------------------------------------------------- INFO

namespace {

std::string HumanBytes(uint64_t n) {
  char buf[32];
  double d = static_cast<double>(n);
  if (n < 1024) {
    std::snprintf(buf, sizeof(buf), "%" PRIu64 "B", n);
  } else if (n < 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2fK", d / 1024);
  } else if (n < 1024ULL * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.2fM", d / (1024 * 1024));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2fG", d / (1024.0 * 1024 * 1024));
  }
  return buf;
}

uint64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// The INFO text, section by section, with Redis's field names where they
// apply. Each section is a function of the server state, nothing cached.
class InfoBuilder {
 public:
  explicit InfoBuilder(CommandContext& ctx) : ctx_(ctx), s_(ctx.server) {}

  std::string Build(const std::vector<std::string>& wanted) {
    bool all = wanted.empty();
    auto want = [&](std::string_view name, bool in_default) {
      if (all) return in_default;
      for (const std::string& w : wanted) {
        if (w == name || w == "all" || w == "everything" || (w == "default" && in_default)) {
          return true;
        }
      }
      return false;
    };
    if (want("server", true)) ServerSection();
    if (want("clients", true)) ClientsSection();
    if (want("memory", true)) MemorySection();
    if (want("persistence", true)) PersistenceSection();
    if (want("stats", true)) StatsSection();
    if (want("replication", true)) ReplicationSection();
    if (want("cpu", true)) CpuSection();
    if (want("latch", true)) LatchSection();
    if (want("keyspace", true)) KeyspaceSection();
    return out_;
  }

 private:
  void Section(const char* title) {
    if (!out_.empty()) out_ += "\r\n";
    out_ += "# ";
    out_ += title;
    out_ += "\r\n";
  }
  void Field(std::string_view name, const std::string& value) {
    out_.append(name);
    out_ += ":";
    out_ += value;
    out_ += "\r\n";
  }
  void Field(std::string_view name, int64_t value) { Field(name, std::to_string(value)); }
  void Field(std::string_view name, uint64_t value) { Field(name, std::to_string(value)); }

  void ServerSection() {
    Section("Server");
    utsname u{};
    uname(&u);
    int64_t uptime = (ctx_.now.mono - s_.start_mono_ms()) / 1000;
    Field("redis_version", std::string(kRedisCompatVersion));
    Field("latch_version", std::string(kLatchVersion));
    Field("redis_git_sha1", std::string("00000000"));
    Field("redis_git_dirty", int64_t{0});
    Field("redis_mode", std::string("standalone"));
    Field("os", std::string(u.sysname) + " " + u.release + " " + u.machine);
    Field("arch_bits", int64_t{64});
    Field("monotonic_clock", std::string("POSIX clock_gettime"));
    Field("multiplexing_api", std::string("libuv ") + uv_version_string());
    Field("gcc_version", std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
                             std::to_string(__GNUC_PATCHLEVEL__));
    Field("process_id", static_cast<int64_t>(getpid()));
    Field("process_supervised", std::string("no"));
    Field("run_id", s_.run_id());
    Field("tcp_port", s_.config().port);
    Field("server_time_usec", s_.clock().WallUs());
    Field("uptime_in_seconds", uptime);
    Field("uptime_in_days", uptime / 86400);
    Field("hz", s_.config().hz);
    Field("configured_hz", s_.config().hz);
    char exe[4096] = {};
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    Field("executable", n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string());
    Field("config_file", s_.config().config_file);
    Field("io_threads_active", int64_t{0});
  }

  void ClientsSection() {
    Section("Clients");
    size_t max_in = 0, max_out = 0;
    s_.ForEachClient([&](Connection& c) {
      max_in = std::max(max_in, c.query_buffer_size());
      max_out = std::max(max_out, c.pending_output());
    });
    Field("connected_clients", static_cast<uint64_t>(s_.connected_clients()));
    Field("cluster_connections", int64_t{0});
    Field("maxclients", s_.config().maxclients);
    Field("client_recent_max_input_buffer", static_cast<uint64_t>(max_in));
    Field("client_recent_max_output_buffer", static_cast<uint64_t>(max_out));
    Field("blocked_clients", int64_t{0});
    Field("tracking_clients", int64_t{0});
    Field("clients_in_timeout_table", int64_t{0});
  }

  void MemorySection() {
    Section("Memory");
    struct mallinfo2 mi = mallinfo2();
    uint64_t used = mi.uordblks + mi.hblkhd;
    uint64_t rss = RssBytes();
    Field("used_memory", used);
    Field("used_memory_human", HumanBytes(used));
    Field("used_memory_rss", rss);
    Field("used_memory_rss_human", HumanBytes(rss));
    Field("used_memory_dataset", static_cast<uint64_t>(s_.db().memory_bytes()));
    Field("maxmemory", int64_t{0});
    Field("maxmemory_human", std::string("0B"));
    Field("maxmemory_policy", std::string("noeviction"));
    Field("mem_fragmentation_ratio",
          used ? std::to_string(static_cast<double>(rss) / static_cast<double>(used))
               : std::string("0"));
    Field("mem_allocator", std::string("libc"));
  }

  void PersistenceSection() {
    Section("Persistence");
    const AofLoader* loader = s_.loader();
    bool loading = s_.loading() && loader != nullptr;
    Field("loading", int64_t{loading});
    Field("async_loading", int64_t{0});
    if (loading) {
      uint64_t total = loader->total_bytes(), done = loader->loaded_bytes();
      int64_t elapsed_ms = ctx_.now.mono - s_.loading_start_ms();
      Field("loading_start_time", (ctx_.now.wall_ms - elapsed_ms) / 1000);
      Field("loading_total_bytes", total);
      Field("loading_loaded_bytes", done);
      Field("loading_loaded_perc",
            std::to_string(total ? 100.0 * static_cast<double>(done) / static_cast<double>(total)
                                 : 0.0));
      int64_t eta = done > 0 ? static_cast<int64_t>(static_cast<double>(elapsed_ms) *
                                                    static_cast<double>(total - done) /
                                                    static_cast<double>(done) / 1000.0)
                             : 1;
      Field("loading_eta_seconds", eta);
    }
    Field("rdb_changes_since_last_save", s_.effects().count());
    Field("rdb_bgsave_in_progress", int64_t{0});
    Field("rdb_last_bgsave_status", std::string("ok"));
    Aof* aof = s_.aof();
    Field("aof_enabled", int64_t{s_.config().appendonly});
    Field("aof_rewrite_in_progress", int64_t{aof != nullptr && aof->rewrite_in_progress()});
    Field("aof_rewrite_scheduled", int64_t{0});
    Field("aof_last_rewrite_time_sec", aof ? aof->last_rewrite_time_sec() : int64_t{-1});
    Field("aof_current_rewrite_time_sec",
          aof ? aof->current_rewrite_time_sec(ctx_.now.mono) : int64_t{-1});
    Field("aof_last_bgrewrite_status",
          std::string(aof == nullptr || aof->last_rewrite_ok() ? "ok" : "err"));
    Field("aof_rewrites", aof ? aof->rewrites() : uint64_t{0});
    Field("aof_last_write_status", std::string(aof == nullptr || aof->write_ok() ? "ok" : "err"));
    if (aof != nullptr) {
      Field("aof_current_size", aof->current_size());
      Field("aof_base_size", aof->base_size());
      Field("aof_pending_rewrite", int64_t{0});
      Field("aof_buffer_length", aof->buffer_length());
      Field("aof_pending_bio_fsync", aof->pending_bio_fsync());
      Field("aof_delayed_fsync", aof->delayed_fsync());
      // latch's own: how the log's durability is paid for.
      Field("latch_aof_fsync_policy", std::string(FsyncPolicyName(s_.config().appendfsync)));
      Field("latch_aof_writes", aof->writes());
      Field("latch_aof_fsyncs", aof->fsyncs());
      Field("latch_aof_fsync_micros", aof->fsync_micros());
      if (s_.loader() != nullptr && s_.loader()->truncated_at() >= 0) {
        Field("latch_aof_truncated_at_load", s_.loader()->truncated_at());
      }
    }
  }

  void StatsSection() {
    Section("Stats");
    const Stats& st = s_.stats();
    Field("total_connections_received", st.total_connections_received);
    Field("total_commands_processed", st.total_commands_processed);
    Field("instantaneous_ops_per_sec", st.InstantaneousOps());
    Field("total_net_input_bytes", st.total_net_input_bytes);
    Field("total_net_output_bytes", st.total_net_output_bytes);
    Field("rejected_connections", st.rejected_connections);
    Field("expired_keys", st.expired_keys);
    Field("evicted_keys", int64_t{0});
    Field("keyspace_hits", st.keyspace_hits);
    Field("keyspace_misses", st.keyspace_misses);
    Field("total_error_replies", st.total_error_replies);
  }

  void ReplicationSection() {
    Section("Replication");
    Field("role", std::string("master"));
    Field("connected_slaves", int64_t{0});
  }

  void CpuSection() {
    Section("CPU");
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    auto secs = [](const timeval& tv) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%ld.%06ld", static_cast<long>(tv.tv_sec),
                    static_cast<long>(tv.tv_usec));
      return std::string(buf);
    };
    Field("used_cpu_sys", secs(self.ru_stime));
    Field("used_cpu_user", secs(self.ru_utime));
  }

  void LatchSection() {
    Section("Latch");
    Quarantine& q = s_.quarantine();
    Field("quarantine", int64_t{q.active(ctx_.now.mono)});
    Field("quarantine_mode", std::string(QuarantineModeName(s_.config().quarantine)));
    Field("quarantine_reason", q.reason());
    Field("quarantine_remaining_ms", q.remaining_ms(ctx_.now.mono));
    Field("max_lock_ttl", s_.config().max_lock_ttl);
    Field("keys_with_ttl", static_cast<uint64_t>(s_.db().keys_with_deadline()));
    // Lock-library scripts run natively (known_scripts.h).
    Field("known_scripts", static_cast<uint64_t>(KnownScripts().size()));
    Field("known_script_calls", s_.stats().known_script_calls);
    Field("known_script_libraries", KnownScriptLibraries());
  }

  void KeyspaceSection() {
    Section("Keyspace");
    if (s_.db().size() > 0) {
      out_ += "db0:keys=" + std::to_string(s_.db().size()) +
              ",expires=" + std::to_string(s_.db().keys_with_deadline()) + ",avg_ttl=0\r\n";
    }
  }

  CommandContext& ctx_;
  Server& s_;
  std::string out_;
};

}  // namespace

void Info(CommandContext& ctx) {
  std::vector<std::string> sections;
  for (size_t i = 1; i < ctx.argv.size(); ++i) sections.push_back(ToLower(ctx.argv[i]));
  ctx.reply.Verbatim("txt", InfoBuilder(ctx).Build(sections));
}

// ---------------------------------------------------------------- CONFIG

void ConfigGet(CommandContext& ctx) {
  // As Redis 7.0: a pattern without glob characters is an exact (case-
  // insensitive) name and is echoed as typed; a glob matches every name. Each
  // parameter appears once.
  std::vector<std::pair<std::string, const ConfigParam*>> found;
  auto seen = [&](const ConfigParam* p) {
    for (const auto& f : found) {
      if (f.second == p) return true;
    }
    return false;
  };
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    std::string_view pattern = ctx.argv[i];
    if (pattern.find_first_of("[*?") == std::string_view::npos) {
      const ConfigParam* p = FindConfigParam(pattern);
      if (p != nullptr && !seen(p)) found.emplace_back(std::string(pattern), p);
      continue;
    }
    for (const ConfigParam& p : ConfigParams()) {
      if (!seen(&p) && GlobMatch(pattern, p.name, true)) found.emplace_back(p.name, &p);
    }
  }
  ctx.reply.Map(found.size());
  for (const auto& [name, param] : found) {
    ctx.reply.Bulk(name);
    ctx.reply.Bulk(param->get(ctx.server.config()));
  }
}

void ConfigSet(CommandContext& ctx) {
  // CONFIG SET name value [name value …]: all or nothing.
  if (ctx.argv.size() % 2 != 0) {
    ctx.reply.Error(kSyntaxError);  // what Redis 7.0 answers to an odd count
    return;
  }
  std::vector<const ConfigParam*> params;
  for (size_t i = 2; i < ctx.argv.size(); i += 2) {
    const ConfigParam* p = FindConfigParam(ctx.argv[i]);
    if (p == nullptr) {
      ctx.reply.Error("ERR Unknown option or number of arguments for CONFIG SET - '" +
                      std::string(UpToNul(ctx.argv[i])) + "'");
      return;
    }
    auto fail = [&](const std::string& why) {
      ctx.reply.Error("ERR CONFIG SET failed (possibly related to argument '" +
                      std::string(ctx.argv[i]) + "') - " + why);
    };
    if (!p->mutable_at_runtime) {
      fail("can't set immutable config");
      return;
    }
    if (std::find(params.begin(), params.end(), p) != params.end()) {
      fail("duplicate parameter");
      return;
    }
    params.push_back(p);
  }
  Config updated = ctx.server.config();
  for (size_t k = 0; k < params.size(); ++k) {
    std::string_view value = ctx.argv[3 + 2 * k];
    std::vector<std::string> words;
    if (params[k]->arity == -1) {
      words = SplitArgs(value).value_or(std::vector<std::string>{});
      if (words.empty()) words.push_back("");
    } else {
      words.emplace_back(value);
    }
    if (auto err = params[k]->set(updated, words)) {
      ctx.reply.Error("ERR CONFIG SET failed (possibly related to argument '" +
                      std::string(ctx.argv[2 + 2 * k]) + "') - " + *err);
      return;
    }
  }
  Config before = ctx.server.config();
  ctx.server.config() = std::move(updated);
  for (size_t k = 0; k < params.size(); ++k) {
    if (auto err = ctx.server.ApplyConfigChange(params[k]->name)) {
      // All or nothing: put every value back and let the server act on the
      // old values again.
      ctx.server.config() = before;
      for (const ConfigParam* p : params) ctx.server.ApplyConfigChange(p->name);
      ctx.reply.Error("ERR CONFIG SET failed (possibly related to argument '" +
                      std::string(ctx.argv[2 + 2 * k]) + "') - " + *err);
      return;
    }
  }
  for (const ConfigParam* p : params) {
    log::Notice("CONFIG SET {} = {}", p->name,
                p->name == "requirepass" ? std::string("(hidden)") : p->get(ctx.server.config()));
  }
  ctx.reply.Ok();
}

void ConfigResetStat(CommandContext& ctx) {
  Stats& st = ctx.server.stats();
  st = Stats{};
  ctx.reply.Ok();
}

void ConfigHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "HELP",
      "    Print this help.",
  };
  ReplyHelp(ctx, kLines);
}

// ---------------------------------------------------------------- COMMAND

void Command(CommandContext& ctx) {
  const auto& all = CommandTable::Get().commands();
  ctx.reply.Array(all.size());
  for (const CommandSpec& c : all) CommandTable::WriteInfo(c, ctx.reply);
}

void CommandCount(CommandContext& ctx) {
  ctx.reply.Int(static_cast<int64_t>(CommandTable::Get().commands().size()));
}

void CommandInfo(CommandContext& ctx) {
  if (ctx.argv.size() == 2) {
    Command(ctx);
    return;
  }
  ctx.reply.Array(ctx.argv.size() - 2);
  for (size_t i = 2; i < ctx.argv.size(); ++i) {
    const CommandSpec* c = CommandTable::Get().Find(ctx.argv[i]);
    if (c == nullptr) {
      ctx.reply.Null();  // Redis: addReplyNull, so $-1 in RESP2
    } else {
      CommandTable::WriteInfo(*c, ctx.reply);
    }
  }
}

void CommandDocs(CommandContext& ctx) {
  std::vector<const CommandSpec*> list;
  if (ctx.argv.size() == 2) {
    for (const CommandSpec& c : CommandTable::Get().commands()) list.push_back(&c);
  } else {
    for (size_t i = 2; i < ctx.argv.size(); ++i) {
      if (const CommandSpec* c = CommandTable::Get().Find(ctx.argv[i])) list.push_back(c);
    }
  }
  ctx.reply.Map(list.size());
  for (const CommandSpec* c : list) {
    ctx.reply.Bulk(c->name);
    CommandTable::WriteDocs(*c, ctx.reply);
  }
}

void CommandList(CommandContext& ctx) {
  // COMMAND LIST [FILTERBY MODULE m | ACLCAT cat | PATTERN p]
  std::string_view kind, arg;
  if (ctx.argv.size() == 5 && EqualsIgnoreCase(ctx.argv[2], "FILTERBY")) {
    kind = ctx.argv[3];
    arg = ctx.argv[4];
    if (!EqualsIgnoreCase(kind, "MODULE") && !EqualsIgnoreCase(kind, "ACLCAT") &&
        !EqualsIgnoreCase(kind, "PATTERN")) {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  } else if (ctx.argv.size() != 2) {
    ctx.reply.Error(kSyntaxError);
    return;
  }
  std::vector<std::string> names;
  auto consider = [&](const CommandSpec& c) {
    if (kind.empty()) {
      names.push_back(c.fullname);
    } else if (EqualsIgnoreCase(kind, "PATTERN")) {
      if (GlobMatch(arg, c.fullname, true)) names.push_back(c.fullname);
    } else if (EqualsIgnoreCase(kind, "ACLCAT")) {
      for (const std::string& cat : c.acl_categories) {
        if (EqualsIgnoreCase(cat, arg)) names.push_back(c.fullname);
      }
    }
  };
  for (const CommandSpec& c : CommandTable::Get().commands()) {
    consider(c);
    for (const CommandSpec& s : c.subcommands) consider(s);
  }
  ctx.reply.Array(names.size());
  for (const std::string& n : names) ctx.reply.Bulk(n);
}

void CommandHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)",
      "    Return details about all commands.",
      "COUNT",
      "    Return the total number of commands in this server.",
      "LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
      "    Return a list of all commands in this server.",
      "INFO [<command-name> ...]",
      "    Return details about the given commands, or all of them.",
      "DOCS [<command-name> ...]",
      "    Return documentation details about the given commands, or all of them.",
      "HELP",
      "    Print this help.",
  };
  ReplyHelp(ctx, kLines);
}

// ---------------------------------------------------------------- BGREWRITEAOF

void BgRewriteAof(CommandContext& ctx) {
  Aof* aof = ctx.server.aof();
  if (aof == nullptr) {
    ctx.reply.Error("ERR the append-only log is disabled (appendonly no)");
    return;
  }
  if (auto err = aof->Rewrite(ctx.now)) {
    ctx.reply.Error("ERR " + *err);
    return;
  }
  ctx.reply.Simple("Background append only file rewriting started");
}

// ---------------------------------------------------------------- DEBUG

// Fault injection for tests and the chaos harness. Off unless
// enable-debug-command is yes (or local, for loopback clients).
void Debug(CommandContext& ctx) {
  DebugCommand mode = ctx.server.config().enable_debug_command;
  if (mode == DebugCommand::kNo || (mode == DebugCommand::kLocal && !ctx.client.local)) {
    ctx.reply.Error(
        "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", "
        "you can run it from a local connection, otherwise you need to set this option in the "
        "configuration file, and then restart the server.");
    return;
  }
  std::string_view sub = ctx.argv[1];
  if (EqualsIgnoreCase(sub, "POWERLOSS") && ctx.argv.size() == 2) {
    // A machine crash: whatever the log had not fsynced is gone.
    if (Aof* aof = ctx.server.aof()) aof->SimulatePowerLoss();
    log::Warning("DEBUG POWERLOSS: exiting without a clean shutdown (appendonly no).");
    ::_exit(1);
  }
  if (EqualsIgnoreCase(sub, "SLEEP") && ctx.argv.size() == 3) {
    // Blocks the whole server, like a long GC pause or a stalled host.
    auto secs = ParseDouble(ctx.argv[2]);
    if (!secs || *secs < 0) {
      ctx.reply.Error(kNotInteger);
      return;
    }
    ::usleep(static_cast<useconds_t>(*secs * 1e6));
    ctx.reply.Ok();
    return;
  }
  if (EqualsIgnoreCase(sub, "HELP")) {
    static const char* kLines[] = {
        "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "POWERLOSS",
        "    Simulate a machine crash: cut the log to what was fsynced and exit at once.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds> (decimals allowed).",
        "HELP",
        "    Print this help.",
    };
    ReplyHelp(ctx, kLines);
    return;
  }
  ctx.reply.Error("ERR unknown subcommand '" + std::string(sub.substr(0, 128)) +
                  "'. Try DEBUG HELP.");
}

// ---------------------------------------------------------------- SHUTDOWN

void Shutdown(CommandContext& ctx) {
  // SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE]. latch has no snapshots: SAVE and
  // NOSAVE both mean "stop now"; the log is flushed and fsynced either way,
  // since every write it holds was acknowledged to a client.
  for (size_t i = 1; i < ctx.argv.size(); ++i) {
    std::string_view a = ctx.argv[i];
    if (!EqualsIgnoreCase(a, "NOSAVE") && !EqualsIgnoreCase(a, "SAVE") &&
        !EqualsIgnoreCase(a, "NOW") && !EqualsIgnoreCase(a, "FORCE")) {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  // Like Redis, no reply on success: the connection closes as the server exits.
  ctx.server.RequestShutdown();
}

}  // namespace latch::commands
