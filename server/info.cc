// INFO: the server's state, section by section, with Redis's field names
// where they apply. Each section is computed from the parts it describes,
// nothing cached.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "server/connection.h"
#include "server/faults.h"
#include "server/scripting/engine.h"
#include "server/scripting/known_scripts.h"
#include "server/server.h"
#include "server/used_memory.h"

namespace latch {

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
  // Read into the stack, not through an ifstream: its 8 KiB buffer is a
  // large allocation, and glibc answers one by first coalescing every small
  // block freed since the last (malloc_consolidate). After a second of lock
  // releases that is ~10^5 blocks, long out of cache: the cron, which asks
  // every second, stalled the loop for tens of milliseconds (perf: 24% of
  // the CPU in the release benchmark).
  char buf[128];
  ssize_t n = -1;
  int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    n = ::read(fd, buf, sizeof(buf) - 1);
    ::close(fd);
  }
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// The INFO text, section by section, with Redis's field names where they
// apply. Each section is a function of the server state, nothing cached.
}  // namespace

static bool WantedByName(const std::vector<std::string>& wanted, std::string_view name) {
  for (const std::string& w : wanted) {
    if (w == name) return true;
  }
  return false;
}

class InfoBuilder {
 public:
  InfoBuilder(Server& server, const TimeSnapshot& now) : s_(server), now_(now) {}

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
    if (want("modules", true)) Section("Modules");  // latch loads none
    if (want("commandstats", false)) CommandstatsSection();
    if (want("errorstats", true)) ErrorstatsSection();
    if (want("latencystats", false)) LatencystatsSection();
    if (want("cluster", true)) ClusterSection();
    if (want("latch", true)) LatchSection();
    // The test bench (faults.h): only on a fault-injection node (or when
    // asked for by name), so INFO all lists Redis's sections elsewhere.
    bool faults_here = s_.config().enable_fault_injection;
    if (faults_here ? want("faults", true) : WantedByName(wanted, "faults")) {
      if (!out_.empty()) out_ += "\r\n";
      out_ += s_.faults().InfoSection();
    }
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
    int64_t uptime = (now_.mono - s_.diagnostics().start_mono_ms()) / 1000;
    Field("redis_version", std::string(kRedisCompatVersion));
    Field("latch_version", std::string(kLatchVersion));
    Field("redis_git_sha1", std::string("00000000"));
    Field("redis_git_dirty", int64_t{0});
    Field("redis_mode", std::string("standalone"));
    Field("os", std::string(u.sysname) + " " + u.release + " " + u.machine);
    Field("arch_bits", int64_t{64});
    Field("monotonic_clock", std::string("POSIX clock_gettime"));
    Field("multiplexing_api", std::string("libuv ") + uv_version_string());
    // `io-uring yes` and the kernel took it: plain clients' bytes go through
    // the ring (server/uring.h); no: libuv's epoll, read(2) and write(2).
    Field("io_uring", std::string(s_.clients().ring() != nullptr ? "yes" : "no"));
    Field("gcc_version", std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
                             std::to_string(__GNUC_PATCHLEVEL__));
    Field("process_id", static_cast<int64_t>(getpid()));
    Field("process_supervised", std::string("no"));
    Field("run_id", s_.diagnostics().run_id());
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
    s_.ForEachSession([&](Session& c) {
      Session::Buffers b = c.buffers();
      max_in = std::max(max_in, b.query);
      max_out = std::max(max_out, b.output_pending);
    });
    Field("connected_clients", static_cast<uint64_t>(s_.clients().size()));
    Field("cluster_connections", int64_t{0});
    Field("maxclients", s_.config().maxclients);
    Field("client_recent_max_input_buffer", static_cast<uint64_t>(max_in));
    Field("client_recent_max_output_buffer", static_cast<uint64_t>(max_out));
    // WAITAOF, SET … NX WAIT and the blocking pops park clients (log_waits.cc,
    // waits.cc).
    Field("blocked_clients", static_cast<uint64_t>(s_.parked_clients()));
    Field("tracking_clients", int64_t{0});
    Field("clients_in_timeout_table", int64_t{0});
  }

  void MemorySection() {
    Section("Memory");
    ServerControl::MemoryFigures m = s_.memory();
    uint64_t used = m.used, rss = m.rss;
    Field("used_memory", used);
    Field("used_memory_human", HumanBytes(used));
    Field("used_memory_rss", rss);
    Field("used_memory_rss_human", HumanBytes(rss));
    Field("used_memory_peak", m.peak);
    Field("used_memory_peak_human", HumanBytes(m.peak));
    Field("used_memory_startup", m.startup);
    Field("used_memory_dataset", m.dataset);
    // Scripts (Redis 7.0's fields): the EVAL interpreter and its cache, the
    // functions' interpreter and libraries.
    const scripting::Engine& e = s_.scripts_engine();
    const uint64_t vm_eval = e.eval_memory(), vm_functions = e.functions_memory();
    const uint64_t scripts_eval = e.scripts_memory(), functions = e.functions_overhead();
    Field("used_memory_lua", vm_eval);
    Field("used_memory_vm_eval", vm_eval);
    Field("used_memory_lua_human", HumanBytes(vm_eval));
    Field("used_memory_scripts_eval", scripts_eval);
    Field("number_of_cached_scripts", static_cast<uint64_t>(e.num_scripts()));
    Field("number_of_functions", static_cast<uint64_t>(e.num_functions()));
    Field("number_of_libraries", static_cast<uint64_t>(e.libraries().size()));
    Field("used_memory_vm_functions", vm_functions);
    Field("used_memory_vm_total", vm_eval + vm_functions);
    Field("used_memory_vm_total_human", HumanBytes(vm_eval + vm_functions));
    Field("used_memory_functions", functions);
    Field("used_memory_scripts", scripts_eval + functions);
    Field("used_memory_scripts_human", HumanBytes(scripts_eval + functions));
    Field("maxmemory", s_.config().maxmemory);
    Field("maxmemory_human", HumanBytes(static_cast<uint64_t>(s_.config().maxmemory)));
    Field("maxmemory_policy", FindConfigParam("maxmemory-policy")->get(s_.config()));
    Field("mem_fragmentation_ratio",
          used ? std::to_string(static_cast<double>(rss) / static_cast<double>(used))
               : std::string("0"));
    Field("mem_allocator", std::string("libc"));
  }

  void PersistenceSection() {
    Section("Persistence");
    const Persistence& p = s_.persistence();
    const Replay* replay = p.replay();
    bool loading = s_.loading() && replay != nullptr;
    Field("loading", int64_t{loading});
    Field("async_loading", int64_t{0});
    if (loading) {
      uint64_t total = replay->total_bytes(), done = replay->loaded_bytes();
      int64_t elapsed_ms = now_.mono - p.loading_start_ms();
      Field("loading_start_time", (now_.wall_ms - elapsed_ms) / 1000);
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
    Field("rdb_changes_since_last_save", s_.store().changes());
    Field("rdb_bgsave_in_progress", int64_t{0});
    Field("rdb_last_bgsave_status", std::string("ok"));
    const aof::Writer* aof = p.log();
    Field("aof_enabled", int64_t{s_.config().appendonly});
    Field("aof_rewrite_in_progress", int64_t{aof != nullptr && aof->rewrite_in_progress()});
    Field("aof_rewrite_scheduled", int64_t{aof != nullptr && aof->rewrite_scheduled()});
    Field("aof_last_rewrite_time_sec", aof ? aof->last_rewrite_time_sec() : int64_t{-1});
    Field("aof_current_rewrite_time_sec",
          aof ? aof->current_rewrite_time_sec(now_.mono) : int64_t{-1});
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
      if (p.truncated_at() >= 0) Field("latch_aof_truncated_at_load", p.truncated_at());
    }
  }

  void StatsSection() {
    Section("Stats");
    const Stats& st = s_.diagnostics().stats();
    Field("total_connections_received", st.total_connections_received);
    Field("total_commands_processed", st.total_commands_processed);
    Field("instantaneous_ops_per_sec", st.InstantaneousOps());
    Field("total_net_input_bytes", st.total_net_input_bytes);
    Field("total_net_output_bytes", st.total_net_output_bytes);
    Field("instantaneous_input_kbps", Kbps(st.InstantaneousInputBytes()));
    Field("instantaneous_output_kbps", Kbps(st.InstantaneousOutputBytes()));
    Field("rejected_connections", st.rejected_connections);
    Field("expired_keys", st.expired_keys);
    Field("evicted_keys", s_.diagnostics().stats().evicted_keys);  // maxmemory (eviction.cc)
    Field("keyspace_hits", st.keyspace_hits);
    Field("keyspace_misses", st.keyspace_misses);
    Field("pubsub_channels", static_cast<uint64_t>(s_.pubsub().channel_count()));
    Field("pubsub_patterns", static_cast<uint64_t>(s_.pubsub().pattern_count()));
    Field("pubsubshard_channels", static_cast<uint64_t>(s_.pubsub().shard_channel_count()));
    Field("unexpected_error_replies", st.unexpected_error_replies);
    Field("total_error_replies", st.total_error_replies);
    Field("total_reads_processed", st.total_reads_processed);
    Field("total_writes_processed", st.total_writes_processed);
  }

  static std::string Kbps(uint64_t bytes_per_sec) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f", static_cast<double>(bytes_per_sec) / 1024);
    return buf;
  }

  void ReplicationSection() {
    // What a Redis master that has never had a replica shows: no backlog
    // was ever created, so its replication offset never moved.
    Section("Replication");
    Field("role", std::string("master"));
    Field("connected_slaves", int64_t{0});
    Field("master_failover_state", std::string("no-failover"));
    Field("master_replid", s_.diagnostics().replid());
    Field("master_replid2", std::string(40, '0'));
    Field("master_repl_offset", int64_t{0});
    Field("second_repl_offset", int64_t{-1});
    Field("repl_backlog_active", int64_t{0});
    Field("repl_backlog_size", int64_t{1024 * 1024});  // Redis's default, never allocated
    Field("repl_backlog_first_byte_offset", int64_t{0});
    Field("repl_backlog_histlen", int64_t{0});
  }

  // Per command, Redis's cmdstat_<name> lines, for those called (or refused)
  // at least once.
  void CommandstatsSection() {
    Section("Commandstats");
    const Stats& st = s_.diagnostics().stats();
    CommandRegistry::Get().ForEachCommand([&](const CommandSpec& c) {
      const CommandStats* cs = st.find_command(c.index);
      if (cs == nullptr || (cs->calls == 0 && cs->rejected_calls == 0 && cs->failed_calls == 0)) {
        return;
      }
      char buf[256];
      std::snprintf(
          buf, sizeof(buf),
          "calls=%" PRIu64 ",usec=%" PRIu64 ",usec_per_call=%.2f,rejected_calls=%" PRIu64
          ",failed_calls=%" PRIu64,
          cs->calls, cs->usec,
          cs->calls ? static_cast<double>(cs->usec) / static_cast<double>(cs->calls) : 0.0,
          cs->rejected_calls, cs->failed_calls);
      Field("cmdstat_" + c.fullname, buf);
    });
  }

  void ErrorstatsSection() {
    Section("Errorstats");
    for (const auto& [code, count] : s_.diagnostics().stats().errors) {
      Field("errorstat_" + code, "count=" + std::to_string(count));
    }
  }

  // Per command, the percentiles of latency-tracking-info-percentiles, in
  // µs with three decimals, from its histogram.
  void LatencystatsSection() {
    Section("Latencystats");
    if (!s_.config().latency_tracking) return;
    const Stats& st = s_.diagnostics().stats();
    CommandRegistry::Get().ForEachCommand([&](const CommandSpec& c) {
      const CommandStats* cs = st.find_command(c.index);
      if (cs == nullptr || !cs->histogram || cs->histogram->count() == 0) return;
      std::string value;
      for (double p : s_.config().latency_tracking_info_percentiles) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "p%s=%.3f", FormatPercentile(p).c_str(),
                      static_cast<double>(cs->histogram->ValueAtPercentile(p)) / 1000.0);
        if (!value.empty()) value += ",";
        value += buf;
      }
      Field("latency_percentiles_usec_" + c.fullname, value);
    });
  }

  void ClusterSection() {
    Section("Cluster");
    Field("cluster_enabled", int64_t{0});
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
    LeasePolicy& q = s_.lease_policy();
    // The restart quarantine, said as the refusal says it: whether, why (a
    // sentence and a few words), how long, and how an operator ends it.
    const bool quarantined = q.quarantined(now_.mono);
    const int64_t remaining = q.remaining_ms(now_.mono);
    Field("quarantine", int64_t{quarantined});
    Field("quarantine_mode", std::string(QuarantineModeName(s_.config().quarantine)));
    Field("quarantine_reason", q.reason());
    Field("quarantine_cause", q.cause());
    Field("quarantine_remaining_ms", remaining);
    Field("quarantine_remaining_s", remaining > 0 ? (remaining + 999) / 1000 : remaining);
    if (quarantined) Field("quarantine_ends_with", std::string(LeasePolicy::kHowToEnd));
    Field("max_lock_ttl", s_.config().max_lock_ttl);
    // The lease horizon (lease_policy.h): no lease granted ends after it;
    // the at-risk horizon: none whose record no fsync covered ends after it.
    auto horizon = q.durable_horizon();
    Field("lease_horizon_ms", horizon ? std::max<int64_t>(0, *horizon - now_.mono) : int64_t{0});
    auto at_risk = q.at_risk_horizon();
    Field("lease_at_risk_ms",
          at_risk ? std::max<int64_t>(0, SatSub(*at_risk, now_.mono)) : int64_t{0});
    Field("lease_horizon_writes_sync", q.horizon_writes_sync());
    Field("lease_horizon_writes_background", q.horizon_writes_background());
    Field("state_record_status", std::string(q.record_ok() ? "ok" : "err"));
    if (!q.record_ok()) Field("state_record_error", q.record_error());
    Field("keys_with_ttl", static_cast<uint64_t>(s_.store().total_keys_with_deadline()));
    // Lock-library scripts run natively (server/scripting/).
    Field("known_scripts", static_cast<uint64_t>(KnownScripts().size()));
    Field("known_script_calls", s_.diagnostics().stats().known_script_calls);
    Field("known_script_libraries", KnownScriptLibraries());
    Field("lua_script_calls", s_.diagnostics().stats().lua_script_calls);
    // SET … NX WAIT (waiters.h): clients parked in key queues, the keys
    // they wait for, and what became of the waits.
    const Waiters& w = s_.waiters();
    Field("lock_waiters", static_cast<uint64_t>(w.lock_waiters()));
    Field("lock_wait_keys", static_cast<uint64_t>(w.lock_keys()));
    Field("lock_handoffs", w.handoffs());
    Field("lock_wait_timeouts", w.timeouts());
    // SET … FENCE: every token issued from now on is at least this.
    Field("fencing_next_token", q.last_token() + 1);
  }

  void KeyspaceSection() {
    Section("Keyspace");
    // One line per database that has keys, as Redis prints them.
    for (int db = 0; db < s_.store().databases(); ++db) {
      size_t keys = s_.store().size_of(db);
      if (keys == 0) continue;
      out_ += "db" + std::to_string(db) + ":keys=" + std::to_string(keys) +
              ",expires=" + std::to_string(s_.store().keys_with_deadline_of(db)) +
              ",avg_ttl=" + std::to_string(s_.store().AverageTtl(db, now_.mono)) + "\r\n";
    }
  }

  Server& s_;
  const TimeSnapshot now_;
  std::string out_;
};

std::string Server::Info(const std::vector<std::string>& sections, const TimeSnapshot& now) {
  return InfoBuilder(*this, now).Build(sections);
}

ServerControl::MemoryFigures Server::memory() {
  MemoryFigures m;
  m.rss = RssBytes();
  m.dataset = store_.memory_bytes();
  ForEachSession([&](Session& c) {
    Session::Buffers b = c.buffers();
    m.clients += b.query_capacity + b.output_capacity;
  });
  m.log_buffer = persistence_->log() != nullptr ? persistence_->log()->buffer_length() : 0;
  m.keys = store_.total_size();
  // Counted as allocated (used_memory.h). Under a sanitizer's allocator,
  // which is not counted, `used` stays 0 and the diagnostics estimate it;
  // they keep the start-up mark and the peak (diagnostics.h).
  if (used_memory::Counted()) m.used = used_memory::Bytes();
  diagnostics_.CompleteMemory(m);
  return m;
}

}  // namespace latch
