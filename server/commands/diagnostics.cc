// Diagnostics: SLOWLOG, LATENCY and MEMORY, with Redis's replies, so that
// redis-cli, dashboards and the habits of Redis operators work unchanged.
//
// What they report is kept elsewhere: the gate times every command and
// feeds the slow log, the latency monitor and the per-command histograms
// (gate.h); the keyspace knows what each key costs (keyspace.h).
#include <malloc.h>

#include <cstdio>

#include "server/commands/common.h"
#include "server/control.h"
#include "server/latency.h"
#include "server/slowlog.h"

namespace latch::commands {

namespace {

// A command or "container|subcommand" by name, as LATENCY HISTOGRAM looks
// them up.
const CommandSpec* FindCommandOrSubcommand(std::string_view name) {
  size_t bar = name.find('|');
  const CommandSpec* c = CommandRegistry::Get().Find(name.substr(0, bar));
  if (c == nullptr || bar == std::string_view::npos) return c;
  for (const CommandSpec& s : c->subcommands) {
    if (EqualsIgnoreCase(s.name, name.substr(bar + 1))) return &s;
  }
  return nullptr;
}

}  // namespace

// ---------------------------------------------------------------- SLOWLOG

void SlowlogGet(CommandContext& ctx) {
  if (ctx.argv.size() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  const auto& entries = ctx.diagnostics().slowlog().entries();
  size_t count = 10;
  if (ctx.argv.size() == 3) {
    auto n = ParseInt64(ctx.argv[2]);
    if (!n || *n < -1) {
      ctx.reply.Error("ERR count should be greater than or equal to -1");
      return;
    }
    count = *n == -1 ? entries.size() : static_cast<size_t>(*n);
  }
  count = std::min(count, entries.size());
  ctx.reply.Array(count);
  for (size_t i = 0; i < count; ++i) {
    const SlowlogEntry& e = entries[i];
    ctx.reply.Array(6);
    ctx.reply.Int(static_cast<int64_t>(e.id));
    ctx.reply.Int(e.unix_s);
    ctx.reply.Int(e.duration_us);
    ctx.reply.Array(e.argv.size());
    for (const std::string& a : e.argv) ctx.reply.Bulk(a);
    ctx.reply.Bulk(e.peer);
    ctx.reply.Bulk(e.name);
  }
}

void SlowlogLen(CommandContext& ctx) {
  ctx.reply.Int(static_cast<int64_t>(ctx.diagnostics().slowlog().entries().size()));
}

void SlowlogReset(CommandContext& ctx) {
  ctx.diagnostics().slowlog().Reset();
  ctx.reply.Ok();
}

void SlowlogHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "GET [<count>]",
      "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
      "    Entries are made of:",
      "    id, timestamp, time in microseconds, arguments array, client IP and port,",
      "    client name",
      "LEN",
      "    Return the length of the slowlog.",
      "RESET",
      "    Reset the slowlog.",
  };
  ReplyRedisHelp(ctx, "SLOWLOG", kLines);
}

// ---------------------------------------------------------------- LATENCY

void LatencyLatest(CommandContext& ctx) {
  const auto& events = ctx.diagnostics().latency_monitor().events();
  ctx.reply.Array(events.size());
  for (const auto& [name, series] : events) {
    const LatencyMonitor::Sample& last = series.Latest();
    ctx.reply.Array(4);
    ctx.reply.Bulk(name);
    ctx.reply.Int(last.time);
    ctx.reply.Int(last.latency);
    ctx.reply.Int(series.max);
  }
}

void LatencyHistory(CommandContext& ctx) {
  const LatencyMonitor::Series* series = ctx.diagnostics().latency_monitor().Find(ctx.argv[2]);
  if (series == nullptr) {
    ctx.reply.Array(0);
    return;
  }
  std::vector<LatencyMonitor::Sample> samples = series->Ordered();
  ctx.reply.Array(samples.size());
  for (const auto& s : samples) {
    ctx.reply.Array(2);
    ctx.reply.Int(s.time);
    ctx.reply.Int(s.latency);
  }
}

void LatencyReset(CommandContext& ctx) {
  std::vector<std::string_view> events(ctx.argv.begin() + 2, ctx.argv.end());
  ctx.reply.Int(static_cast<int64_t>(ctx.diagnostics().latency_monitor().Reset(events)));
}

void LatencyGraph(CommandContext& ctx) {
  const LatencyMonitor& monitor = ctx.diagnostics().latency_monitor();
  const LatencyMonitor::Series* series = monitor.Find(ctx.argv[2]);
  if (series == nullptr) {
    ctx.reply.Error("ERR No samples available for event '" + std::string(UpToNul(ctx.argv[2])) +
                    "'");
    return;
  }
  ctx.reply.Verbatim("txt", monitor.Graph(ctx.argv[2], *series, ctx.now.wall_ms / 1000));
}

void LatencyDoctor(CommandContext& ctx) {
  ctx.reply.Verbatim("txt",
                     ctx.diagnostics().latency_monitor().Doctor(
                         ctx.admin().config().latency_monitor_threshold, ctx.now.wall_ms / 1000));
}

void LatencyHistogramCommand(CommandContext& ctx) {
  // LATENCY HISTOGRAM [command …]: for each command with a histogram, its
  // calls and the cumulative counts at 1, 2, 4… µs; a container's
  // subcommands follow it; unknown names are skipped.
  const Stats& stats = ctx.diagnostics().stats();
  std::vector<const CommandSpec*> list;
  auto consider = [&](const CommandSpec& c) {
    const CommandStats* cs = stats.find_command(c.index);
    if (cs != nullptr && cs->histogram && cs->histogram->count() > 0) list.push_back(&c);
  };
  if (ctx.argv.size() == 2) {
    CommandRegistry::Get().ForEachCommand(consider);
  } else {
    for (size_t i = 2; i < ctx.argv.size(); ++i) {
      const CommandSpec* c = FindCommandOrSubcommand(ctx.argv[i]);
      if (c == nullptr) continue;
      consider(*c);
      for (const CommandSpec& s : c->subcommands) consider(s);
    }
  }
  ctx.reply.Map(list.size());
  for (const CommandSpec* c : list) {
    const LatencyHistogram& h = *stats.find_command(c->index)->histogram;
    ctx.reply.Bulk(c->fullname);
    ctx.reply.Map(2);
    ctx.reply.Bulk("calls");
    ctx.reply.Int(static_cast<int64_t>(h.count()));
    ctx.reply.Bulk("histogram_usec");
    auto buckets = h.PowerOfTwoBuckets();
    ctx.reply.Map(buckets.size());
    for (const auto& [usec, count] : buckets) {
      ctx.reply.Int(usec);
      ctx.reply.Int(static_cast<int64_t>(count));
    }
  }
}

void LatencyHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "GRAPH <event>",
      "    Return an ASCII latency graph for the <event> class.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      ("    Return a cumulative distribution of latencies in the format of a histogram for the "
       "specified command names."),
      "    If no commands are specified then all histograms are replied.",
  };
  ReplyRedisHelp(ctx, "LATENCY", kLines);
}

// ---------------------------------------------------------------- MEMORY

void MemoryUsage(CommandContext& ctx) {
  // MEMORY USAGE key [SAMPLES count]: the bytes the key costs (its entry as
  // the allocator sized it, and its slots in the table and the TTL index).
  // SAMPLES is accepted as Redis accepts it; a string has nothing to sample.
  for (size_t j = 3; j < ctx.argv.size(); ++j) {
    if (IsWord(ctx.argv[j], "SAMPLES") && j + 1 < ctx.argv.size()) {
      auto samples = IntArgOrReply(ctx, ctx.argv[j + 1]);
      if (!samples) return;
      if (*samples < 0) {
        ctx.reply.Error(kSyntaxError);
        return;
      }
      ++j;
    } else {
      ctx.reply.Error(kSyntaxError);
      return;
    }
  }
  const Keyspace::Entry* e = ctx.store.Find(ctx.argv[2], ctx.now, /*touch=*/false);
  if (e == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Int(static_cast<int64_t>(Keyspace::AllocationOf(*e)));
}

void MemoryStats(CommandContext& ctx) {
  // Redis's MEMORY STATS fields that mean something here; the allocator's
  // own (jemalloc's arenas) have no glibc counterpart and are left out.
  ServerControl::MemoryFigures m = ctx.diagnostics().memory();
  const Keyspace& ks = ctx.store.keyspace();
  const uint64_t table = ks.table_bytes(), expires = ks.ttl_index_bytes();
  const uint64_t overhead = m.startup + m.clients + m.log_buffer + table + expires;
  const uint64_t net = m.used > m.startup ? m.used - m.startup : 0;
  const uint64_t dataset = m.used > overhead ? m.used - overhead : 0;
  auto ratio = [](uint64_t a, uint64_t b) {
    return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
  };
  const bool has_keys = m.keys > 0;
  ctx.reply.Map(18 + (has_keys ? 1 : 0));
  auto field = [&](std::string_view name, uint64_t v) {
    ctx.reply.Bulk(name);
    ctx.reply.Int(static_cast<int64_t>(v));
  };
  field("peak.allocated", m.peak);
  field("total.allocated", m.used);
  field("startup.allocated", m.startup);
  field("replication.backlog", 0);  // no replicas, no backlog
  field("clients.slaves", 0);
  field("clients.normal", m.clients);
  field("cluster.links", 0);
  field("aof.buffer", m.log_buffer);
  field("lua.caches", 0);  // no Lua: the known scripts are native
  field("functions.caches", 0);
  if (has_keys) {
    ctx.reply.Bulk("db.0");
    ctx.reply.Map(2);
    field("overhead.hashtable.main", table);
    field("overhead.hashtable.expires", expires);
  }
  field("overhead.total", overhead);
  field("keys.count", m.keys);
  field("keys.bytes-per-key", m.keys ? net / m.keys : 0);
  field("dataset.bytes", dataset);
  ctx.reply.Bulk("dataset.percentage");
  ctx.reply.Double(100.0 * ratio(dataset, net));
  ctx.reply.Bulk("peak.percentage");
  ctx.reply.Double(100.0 * ratio(m.used, m.peak));
  ctx.reply.Bulk("fragmentation");
  ctx.reply.Double(ratio(m.rss, m.used));
  ctx.reply.Bulk("fragmentation.bytes");
  ctx.reply.Int(static_cast<int64_t>(m.rss) - static_cast<int64_t>(m.used));
}

void MemoryDoctor(CommandContext& ctx) {
  ServerControl::MemoryFigures m = ctx.diagnostics().memory();
  auto mb = [](uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f MB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return std::string(buf);
  };
  std::string report;
  if (m.used < 5 * 1024 * 1024) {
    report = "This instance holds little data (" + std::to_string(m.keys) + " keys, " + mb(m.used) +
             " allocated): there is no memory problem to look for.\n";
  } else {
    std::vector<std::string> issues;
    if (m.peak > m.used + m.used / 2) {
      issues.push_back("Peak memory: the process once held " + mb(m.peak) + ", over 150% of the " +
                       mb(m.used) +
                       " it holds now. The memory freed since may not be given "
                       "back to the system (MEMORY PURGE asks the allocator to).");
    }
    if (m.rss > m.used + m.used * 2 / 5 && m.rss - m.used > 10 * 1024 * 1024) {
      char ratio[32];
      std::snprintf(ratio, sizeof(ratio), "%.2f",
                    static_cast<double>(m.rss) / static_cast<double>(m.used));
      issues.push_back(std::string("Fragmentation: the process is resident in ") + mb(m.rss) +
                       " for " + mb(m.used) + " allocated (ratio " + ratio +
                       "), typically after many keys were deleted. MEMORY PURGE may return "
                       "some of it.");
    }
    if (m.clients > 32 * 1024 * 1024) {
      issues.push_back("Client buffers hold " + mb(m.clients) +
                       ": clients that do not read their replies, or very large requests. "
                       "CLIENT LIST shows each one's buffers (qbuf, omem, tot-mem); "
                       "client-output-buffer-limit bounds them.");
    }
    if (m.log_buffer > 16 * 1024 * 1024) {
      issues.push_back("The log's buffer holds " + mb(m.log_buffer) +
                       " not yet written: the disk is not keeping up.");
    }
    if (issues.empty()) {
      report = "No memory problem found: " + mb(m.used) + " allocated for " +
               std::to_string(m.keys) + " keys, " + mb(m.rss) + " resident.\n";
    } else {
      report = "Memory issues found:\n\n";
      for (const std::string& i : issues) report += " * " + i + "\n\n";
    }
  }
  ctx.reply.Verbatim("txt", report);
}

void MemoryMallocStats(CommandContext& ctx) {
  // glibc's own report of its arenas (malloc_info), where Redis shows
  // jemalloc's.
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  if (f == nullptr) {
    ctx.reply.Error("ERR cannot produce the allocator's report");
    return;
  }
  malloc_info(0, f);
  std::fclose(f);
  std::string text(buf, len);
  std::free(buf);
  ctx.reply.Verbatim("txt", text);
}

void MemoryPurge(CommandContext& ctx) {
  // Gives free memory at the top of the heap (and of each arena) back.
  malloc_trim(0);
  ctx.reply.Ok();
}

void MemoryHelp(CommandContext& ctx) {
  static const char* kLines[] = {
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
  };
  ReplyRedisHelp(ctx, "MEMORY", kLines);
}

// ---------------------------------------------------------------- registration

void RegisterDiagnostics(CommandRegistry& r) {
  using namespace spec;
  auto srv = [](std::string summary, std::string since, std::string complexity = "O(1)") {
    return Doc{std::move(summary), std::move(since), "server", std::move(complexity)};
  };
  const std::vector<std::string> kAdminAcl = {"admin", "slow", "dangerous"};
  const uint32_t kSlowlogFlags = kCmdAdmin | kCmdLoading | kCmdStale;
  const uint32_t kLatencyFlags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;
  const uint32_t kHelpFlags = kCmdLoading | kCmdStale;
  const std::string kDepends = "Depends on subcommand.";
  r.Add(Container("slowlog", {"slow"}, srv("A container for slow log commands", "2.2.12", kDepends),
                  {Cmd("len", 2, kSlowlogFlags, SlowlogLen, kAdminAcl,
                       srv("Get the slow log's length", "2.2.12")),
                   Cmd("get", -2, kSlowlogFlags, SlowlogGet, kAdminAcl,
                       srv("Get the slow log's entries", "2.2.12",
                           "O(N) where N is the number of entries returned"),
                       {Optional(Int("count"))}),
                   Cmd("reset", 2, kSlowlogFlags, SlowlogReset, kAdminAcl,
                       srv("Clear all entries from the slow log", "2.2.12",
                           "O(N) where N is the number of entries in the slowlog")),
                   Cmd("help", 2, kHelpFlags, SlowlogHelp, {"slow"},
                       srv("Show helpful text about the different subcommands", "6.2.0"))}));
  r.Add(Container(
      "latency", {"slow"}, srv("A container for latency diagnostics commands", "2.8.13", kDepends),
      {Cmd("history", 3, kLatencyFlags, LatencyHistory, kAdminAcl,
           srv("Return timestamp-latency samples for the event.", "2.8.13"), {Str("event")}),
       Cmd("doctor", 2, kLatencyFlags, LatencyDoctor, kAdminAcl,
           srv("Return a human readable latency analysis report.", "2.8.13")),
       Cmd("histogram", -2, kLatencyFlags, LatencyHistogramCommand, kAdminAcl,
           srv("Return the cumulative distribution of latencies of a subset of commands or all.",
               "7.0.0",
               "O(N) where N is the number of commands with latency information being "
               "retrieved."),
           {Optional(Multiple(Str("command")))}),
       Cmd("latest", 2, kLatencyFlags, LatencyLatest, kAdminAcl,
           srv("Return the latest latency samples for all events.", "2.8.13")),
       Cmd("graph", 3, kLatencyFlags, LatencyGraph, kAdminAcl,
           srv("Return a latency graph for the event.", "2.8.13"), {Str("event")}),
       Cmd("reset", -2, kLatencyFlags, LatencyReset, kAdminAcl,
           srv("Reset latency data for one or more events.", "2.8.13"),
           {Optional(Multiple(Str("event")))}),
       Cmd("help", 2, kHelpFlags, LatencyHelp, {"slow"},
           srv("Show helpful text about the different subcommands.", "2.8.13"))}));
  r.Add(Container(
      "memory", {"slow"}, srv("A container for memory diagnostics commands", "4.0.0", kDepends),
      {Keys(Cmd("usage", -3, kRead, MemoryUsage, {"read", "slow"},
                srv("Estimate the memory usage of a key", "4.0.0",
                    "O(N) where N is the number of samples."),
                {Key(), Optional(Int("count", "SAMPLES"))}),
            2, 2, 1, {"RO"}),
       Cmd("doctor", 2, 0, MemoryDoctor, {"slow"}, srv("Outputs memory problems report", "4.0.0")),
       Cmd("stats", 2, 0, MemoryStats, {"slow"}, srv("Show memory usage details", "4.0.0")),
       Cmd("purge", 2, 0, MemoryPurge, {"slow"},
           srv("Ask the allocator to release memory", "4.0.0",
               "Depends on how much memory is allocated, could be slow")),
       Cmd("help", 2, kHelpFlags, MemoryHelp, {"slow"},
           srv("Show helpful text about the different subcommands", "4.0.0")),
       Cmd("malloc-stats", 2, 0, MemoryMallocStats, {"slow"},
           srv("Show allocator internal stats", "4.0.0",
               "Depends on how much memory is allocated, could be slow"))}));
}

}  // namespace latch::commands
