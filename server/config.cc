#include "server/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "protocol/text.h"
#include "server/acl/users.h"
#include "server/pubsub.h"

namespace latch {

namespace {

using Args = std::vector<std::string>;
using SetResult = std::optional<std::string>;

std::string Join(const Args& args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out.push_back(' ');
    out += args[i];
  }
  return out;
}

ConfigParam Bool(std::string name, bool Config::*field, bool mut = true) {
  return {std::move(name), mut, [field](const Config& c) { return c.*field ? "yes" : "no"; },
          [field](Config& c, const Args& a) -> SetResult {
            if (EqualsIgnoreCase(a[0], "yes")) {
              c.*field = true;
            } else if (EqualsIgnoreCase(a[0], "no")) {
              c.*field = false;
            } else {
              return "argument must be 'yes' or 'no'";
            }
            return std::nullopt;
          }};
}

SetResult CheckRange(int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi) {
    return "argument must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
           " inclusive";
  }
  return std::nullopt;
}

ConfigParam Int(std::string name, int64_t Config::*field, int64_t lo, int64_t hi, bool mut = true) {
  return {std::move(name), mut, [field](const Config& c) { return std::to_string(c.*field); },
          [=](Config& c, const Args& a) -> SetResult {
            auto v = ParseInt64(a[0]);
            if (!v) return "argument couldn't be parsed into an integer";
            if (auto err = CheckRange(*v, lo, hi)) return err;
            c.*field = *v;
            return std::nullopt;
          }};
}

ConfigParam Memory(std::string name, int64_t Config::*field, int64_t lo, int64_t hi,
                   bool mut = true) {
  ConfigParam p{std::move(name), mut, [field](const Config& c) { return std::to_string(c.*field); },
                [=](Config& c, const Args& a) -> SetResult {
                  auto v = ParseMemory(a[0]);
                  if (!v) return "argument must be a memory value";
                  if (auto err = CheckRange(*v, lo, hi)) return err;
                  c.*field = *v;
                  return std::nullopt;
                }};
  p.style = ConfigParam::Style::kMemory;
  return p;
}

ConfigParam String(std::string name, std::string Config::*field, bool mut = true) {
  ConfigParam p{std::move(name), mut, [field](const Config& c) { return c.*field; },
                [field](Config& c, const Args& a) -> SetResult {
                  c.*field = a[0];
                  return std::nullopt;
                }};
  p.style = ConfigParam::Style::kQuoted;
  return p;
}

// A string whose empty value means "not set" (Redis's NULL): CONFIG REWRITE
// removes its lines rather than write an empty one.
ConfigParam OptionalString(std::string name, std::string Config::*field, bool mut = true) {
  ConfigParam p = String(std::move(name), field, mut);
  p.empty_is_unset = true;
  return p;
}

ConfigParam AlwaysRewritten(ConfigParam p) {
  p.always_rewrite = true;
  return p;
}

template <typename E>
ConfigParam Enum(std::string name, E Config::*field, std::vector<std::pair<std::string, E>> values,
                 bool mut = true) {
  return {std::move(name), mut,
          [field, values](const Config& c) {
            for (const auto& [word, v] : values) {
              if (v == c.*field) return word;
            }
            return std::string();
          },
          [field, values](Config& c, const Args& a) -> SetResult {
            for (const auto& [word, v] : values) {
              if (EqualsIgnoreCase(word, a[0])) {
                c.*field = v;
                return std::nullopt;
              }
            }
            std::string msg = "argument(s) must be one of the following: ";
            for (size_t i = 0; i < values.size(); ++i) {
              if (i) msg += ", ";
              msg += values[i].first;
            }
            return msg;
          }};
}

ConfigParam Affects(ConfigParam p, uint32_t effects) {
  p.effects = effects;
  return p;
}

std::vector<ConfigParam> BuildParams() {
  constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
  constexpr int64_t kIntMin = std::numeric_limits<int32_t>::min();
  constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();
  std::vector<ConfigParam> p;

  // Network
  p.push_back({"bind", false, [](const Config& c) { return Join(c.bind); },
               [](Config& c, const Args& a) -> SetResult {
                 c.bind = a;
                 return std::nullopt;
               },
               -1});
  p.push_back(Int("port", &Config::port, 0, 65535, false));
  // A unix socket besides TCP (listeners.cc); its permissions in octal, as
  // Redis reads and shows them.
  p.push_back(OptionalString("unixsocket", &Config::unixsocket, false));
  p.push_back({"unixsocketperm", false,
               [](const Config& c) {
                 char buf[32];
                 std::snprintf(buf, sizeof(buf), "%llo",
                               static_cast<unsigned long long>(c.unixsocketperm));
                 return std::string(buf);
               },
               [](Config& c, const Args& a) -> SetResult {
                 char* end = nullptr;
                 errno = 0;
                 long long v = std::strtoll(a[0].c_str(), &end, 8);
                 if (a[0].empty() || *end != '\0' || errno != 0) {
                   return "argument couldn't be parsed as an octal number";
                 }
                 if (v < 0 || v > 0777) return "argument must be between 0 and 777 inclusive";
                 c.unixsocketperm = v;
                 return std::nullopt;
               }});
  p.push_back(Int("tcp-backlog", &Config::tcp_backlog, 0, kIntMax, false));
  p.push_back(Int("timeout", &Config::timeout, 0, kIntMax));
  p.push_back(Int("tcp-keepalive", &Config::tcp_keepalive, 0, kIntMax));
  p.push_back(Bool("protected-mode", &Config::protected_mode));
  // The connection path (server/uring.h): chosen at start, as the loop is.
  p.push_back(Bool("io-uring", &Config::io_uring, false));
  p.push_back(
      Affects(Int("maxclients", &Config::maxclients, 1, std::numeric_limits<uint32_t>::max()),
              kEffectMaxClients));

  // Limits
  p.push_back(Memory("proto-max-bulk-len", &Config::proto_max_bulk_len, 1024 * 1024, kLongMax));
  p.push_back(Memory("client-query-buffer-limit", &Config::client_query_buffer_limit, 1024 * 1024,
                     kLongMax));
  p.push_back(
      {"client-output-buffer-limit", true,
       [](const Config& c) {
         auto show = [](const char* cls, const OutputBufferLimit& l) {
           return std::string(cls) + " " + std::to_string(l.hard_bytes) + " " +
                  std::to_string(l.soft_bytes) + " " + std::to_string(l.soft_seconds);
         };
         return show("normal", c.client_output_buffer_limit) + " " +
                show("slave", c.client_output_buffer_limit_replica) + " " +
                show("pubsub", c.client_output_buffer_limit_pubsub);
       },
       [](Config& c, const Args& a) -> SetResult {
         // Groups of "<class> <hard> <soft> <seconds>": normal clients and
         // pub/sub subscribers; the replica class is kept (latch has no
         // replicas) so an existing file loads and CONFIG GET shows it.
         if (a.size() % 4 != 0) return "Wrong number of arguments in buffer limit configuration.";
         OutputBufferLimit normal = c.client_output_buffer_limit;
         OutputBufferLimit replica = c.client_output_buffer_limit_replica;
         OutputBufferLimit pubsub = c.client_output_buffer_limit_pubsub;
         for (size_t i = 0; i < a.size(); i += 4) {
           const std::string& cls = a[i];
           if (!EqualsIgnoreCase(cls, "normal") && !EqualsIgnoreCase(cls, "replica") &&
               !EqualsIgnoreCase(cls, "slave") && !EqualsIgnoreCase(cls, "pubsub")) {
             return "Invalid client class specified in buffer limit configuration.";
           }
           auto hard = ParseMemory(a[i + 1]);
           auto soft = ParseMemory(a[i + 2]);
           auto secs = ParseInt64(a[i + 3]);
           if (!hard || !soft || !secs || *secs < 0) {
             return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
           }
           const OutputBufferLimit limit{*hard, *soft, *secs};
           if (EqualsIgnoreCase(cls, "normal")) {
             normal = limit;
           } else if (EqualsIgnoreCase(cls, "pubsub")) {
             pubsub = limit;
           } else {
             replica = limit;
           }
         }
         c.client_output_buffer_limit = normal;
         c.client_output_buffer_limit_replica = replica;
         c.client_output_buffer_limit_pubsub = pubsub;
         return std::nullopt;
       },
       -1});

  p.push_back(
      Affects({"notify-keyspace-events", true,
               [](const Config& c) { return NotifyFlagsToString(c.notify_keyspace_events); },
               [](Config& c, const Args& a) -> SetResult {
                 const int64_t flags = NotifyFlagsFromString(a[0]);
                 if (flags < 0) return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
                 c.notify_keyspace_events = static_cast<uint32_t>(flags);
                 return std::nullopt;
               }},
              kEffectNotify));

  // Security
  p.push_back(OptionalString("requirepass", &Config::requirepass));
  // TLS (server/tls/context.h): a change rebuilds the context, or fails
  // with the old one kept. tls-auth-clients is read per new connection.
  p.push_back(Int("tls-port", &Config::tls_port, 0, 65535, false));
  for (auto [name, field] : std::initializer_list<std::pair<const char*, std::string Config::*>>{
           {"tls-cert-file", &Config::tls_cert_file},
           {"tls-key-file", &Config::tls_key_file},
           {"tls-key-file-pass", &Config::tls_key_file_pass},
           {"tls-client-cert-file", &Config::tls_client_cert_file},
           {"tls-client-key-file", &Config::tls_client_key_file},
           {"tls-client-key-file-pass", &Config::tls_client_key_file_pass},
           {"tls-dh-params-file", &Config::tls_dh_params_file},
           {"tls-ca-cert-file", &Config::tls_ca_cert_file},
           {"tls-ca-cert-dir", &Config::tls_ca_cert_dir},
           {"tls-protocols", &Config::tls_protocols},
           {"tls-ciphers", &Config::tls_ciphers},
           {"tls-ciphersuites", &Config::tls_ciphersuites}}) {
    p.push_back(Affects(OptionalString(name, field), kEffectTls));
  }
  p.push_back(Enum<TlsAuthClients>("tls-auth-clients", &Config::tls_auth_clients,
                                   {{"no", TlsAuthClients::kNo},
                                    {"yes", TlsAuthClients::kYes},
                                    {"optional", TlsAuthClients::kOptional}}));
  p.push_back(
      Affects(Bool("tls-prefer-server-ciphers", &Config::tls_prefer_server_ciphers), kEffectTls));
  p.push_back(Affects(Bool("tls-session-caching", &Config::tls_session_caching), kEffectTls));
  p.push_back(Affects(Int("tls-session-cache-size", &Config::tls_session_cache_size, 0, kIntMax),
                      kEffectTls));
  p.push_back(
      Affects(Int("tls-session-cache-timeout", &Config::tls_session_cache_timeout, 0, kIntMax),
              kEffectTls));
  p.push_back(Affects(Bool("tls-replication", &Config::tls_replication), kEffectTls));
  p.push_back(Affects(Bool("tls-cluster", &Config::tls_cluster), kEffectTls));
  p.push_back(OptionalString("aclfile", &Config::aclfile, false));
  p.push_back(Int("acllog-max-len", &Config::acllog_max_len, 0, kLongMax));
  p.push_back(Enum<DebugCommand>(
      "enable-debug-command", &Config::enable_debug_command,
      {{"no", DebugCommand::kNo}, {"yes", DebugCommand::kYes}, {"local", DebugCommand::kLocal}},
      false));

  // General
  // Always written, as the absolute path of the working directory (Redis's
  // rewriteConfigDirOption): see config_rewrite.cc.
  p.push_back(AlwaysRewritten(String("dir", &Config::dir, false)));
  p.push_back(String("logfile", &Config::logfile, false));
  p.push_back(Affects(Enum<LogLevel>("loglevel", &Config::loglevel,
                                     {{"debug", LogLevel::kDebug},
                                      {"verbose", LogLevel::kVerbose},
                                      {"notice", LogLevel::kNotice},
                                      {"warning", LogLevel::kWarning}}),
                      kEffectLogLevel));
  p.push_back(OptionalString("pidfile", &Config::pidfile, false));
  // How the server lives under an init system (supervision.h): start-up only.
  p.push_back(Bool("daemonize", &Config::daemonize, false));
  p.push_back(Enum<SupervisedMode>("supervised", &Config::supervised,
                                   {{"upstart", SupervisedMode::kUpstart},
                                    {"systemd", SupervisedMode::kSystemd},
                                    {"auto", SupervisedMode::kAuto},
                                    {"no", SupervisedMode::kNo}},
                                   false));
  // Memory (eviction.cc).
  p.push_back(Affects(Memory("maxmemory", &Config::maxmemory, 0, kLongMax), kEffectMaxMemory));
  p.push_back(Affects(Enum<MaxMemoryPolicy>("maxmemory-policy", &Config::maxmemory_policy,
                                            {{"volatile-lru", MaxMemoryPolicy::kVolatileLru},
                                             {"volatile-lfu", MaxMemoryPolicy::kVolatileLfu},
                                             {"volatile-random", MaxMemoryPolicy::kVolatileRandom},
                                             {"volatile-ttl", MaxMemoryPolicy::kVolatileTtl},
                                             {"allkeys-lru", MaxMemoryPolicy::kAllKeysLru},
                                             {"allkeys-lfu", MaxMemoryPolicy::kAllKeysLfu},
                                             {"allkeys-random", MaxMemoryPolicy::kAllKeysRandom},
                                             {"noeviction", MaxMemoryPolicy::kNoEviction}}),
                      kEffectMaxMemory));
  p.push_back(
      Affects(Int("maxmemory-samples", &Config::maxmemory_samples, 1, kIntMax), kEffectMaxMemory));
  // Like Redis: any non-negative value is accepted and clamped to 1..500.
  p.push_back({"hz", true, [](const Config& c) { return std::to_string(c.hz); },
               [](Config& c, const Args& a) -> SetResult {
                 auto v = ParseInt64(a[0]);
                 if (!v) return "argument couldn't be parsed into an integer";
                 if (auto err = CheckRange(*v, 0, std::numeric_limits<int32_t>::max())) return err;
                 c.hz = std::clamp<int64_t>(*v, 1, 500);
                 return std::nullopt;
               },
               1, kEffectCron});
  p.push_back({"save", true, [](const Config& c) { return c.save; },
               [](Config& c, const Args& a) -> SetResult {
                 // "<seconds> <changes>" pairs, or "" (latch has no snapshots;
                 // the setting is kept so tools that read it are content).
                 std::vector<std::string> words;
                 for (const std::string& w : a) {
                   if (!w.empty()) words.push_back(w);
                 }
                 if (words.size() % 2 != 0) return "Invalid save parameters";
                 for (const std::string& w : words) {
                   auto v = ParseInt64(w);
                   if (!v || *v < 0) return "Invalid save parameters";
                 }
                 c.save = Join(words);
                 return std::nullopt;
               },
               -1});
  p.push_back(Int("databases", &Config::databases, 1, 65536, false));

  // Append-only log
  // CONFIG SET appendonly opens or closes the log (log_switch.cc), recorded
  // in the state record first.
  p.push_back(
      Affects(Bool("appendonly", &Config::appendonly), kEffectAppendOnly | kEffectLeasePolicy));
  p.push_back(String("appendfilename", &Config::appendfilename, false));
  p.push_back(Affects(Enum<FsyncPolicy>("appendfsync", &Config::appendfsync,
                                        {{"everysec", FsyncPolicy::kEverysec},
                                         {"always", FsyncPolicy::kAlways},
                                         {"no", FsyncPolicy::kNo}}),
                      kEffectLogWriter | kEffectLeasePolicy));
  p.push_back(Bool("aof-load-truncated", &Config::aof_load_truncated));
  p.push_back(
      Affects(Int("auto-aof-rewrite-percentage", &Config::auto_aof_rewrite_percentage, 0, kIntMax),
              kEffectLogWriter));
  p.push_back(
      Affects(Memory("auto-aof-rewrite-min-size", &Config::auto_aof_rewrite_min_size, 0, kLongMax),
              kEffectLogWriter));

  // Diagnostics
  p.push_back(
      Affects(Int("slowlog-log-slower-than", &Config::slowlog_log_slower_than, -1, kLongMax),
              kEffectDiagnostics));
  p.push_back(
      Affects(Int("slowlog-max-len", &Config::slowlog_max_len, 0, kLongMax), kEffectDiagnostics));
  p.push_back(
      Affects(Int("latency-monitor-threshold", &Config::latency_monitor_threshold, 0, kLongMax),
              kEffectDiagnostics));
  p.push_back(Affects(Bool("latency-tracking", &Config::latency_tracking), kEffectDiagnostics));
  p.push_back({"latency-tracking-info-percentiles", true,
               [](const Config& c) {
                 std::string out;
                 for (double v : c.latency_tracking_info_percentiles) {
                   if (!out.empty()) out.push_back(' ');
                   out += FormatPercentile(v);
                 }
                 return out;
               },
               [](Config& c, const Args& a) -> SetResult {
                 // Words of one quoted value, or several words in a file;
                 // none ("") is allowed: no percentile is printed.
                 std::vector<double> values;
                 for (const std::string& w : a) {
                   if (w.empty()) continue;
                   auto v = ParseDouble(w);
                   if (!v) return "Invalid latency-tracking-info-percentiles parameters";
                   if (*v < 0.0 || *v > 100.0) {
                     return "latency-tracking-info-percentiles parameters should sit between "
                            "[0.0,100.0]";
                   }
                   values.push_back(*v);
                 }
                 c.latency_tracking_info_percentiles = std::move(values);
                 return std::nullopt;
               },
               -1});

  // Collection encodings (types/object.h), each under its Redis 7.0 name
  // and the older one Redis still accepts (ziplist).
  for (auto [name, alias, field, lo, hi] : std::initializer_list<
           std::tuple<const char*, const char*, int64_t Config::*, int64_t, int64_t>>{
           {"hash-max-listpack-entries", "hash-max-ziplist-entries",
            &Config::hash_max_listpack_entries, 0, kLongMax},
           {"hash-max-listpack-value", "hash-max-ziplist-value", &Config::hash_max_listpack_value,
            0, kLongMax},
           {"set-max-intset-entries", nullptr, &Config::set_max_intset_entries, 0, kLongMax},
           {"zset-max-listpack-entries", "zset-max-ziplist-entries",
            &Config::zset_max_listpack_entries, 0, kLongMax},
           {"zset-max-listpack-value", "zset-max-ziplist-value", &Config::zset_max_listpack_value,
            0, kLongMax},
           {"list-max-listpack-size", "list-max-ziplist-size", &Config::list_max_listpack_size,
            kIntMin, kIntMax},
           {"list-compress-depth", nullptr, &Config::list_compress_depth, 0, kIntMax}}) {
    p.push_back(Affects(Int(name, field, lo, hi), kEffectEncodings));
    if (alias != nullptr) {
      p.push_back(Affects(Int(alias, field, lo, hi), kEffectEncodings));
      p.back().alias_of = name;
    }
  }
  // Scripting
  p.push_back(Affects(Int("busy-reply-threshold", &Config::busy_reply_threshold, 0, kLongMax),
                      kEffectScripts));
  p.push_back(
      Affects(Int("lua-time-limit", &Config::busy_reply_threshold, 0, kLongMax), kEffectScripts));
  p.push_back(
      Affects(Memory("lua-maxmemory", &Config::lua_maxmemory, 1024 * 1024, 340LL * 1024 * 1024),
              kEffectScripts));
  // The known lock scripts natively (yes) or in Lua like any other script
  // (no): the same replies, records and statistics either way.
  p.push_back(Bool("known-scripts-native", &Config::known_scripts_native));

  // Lock safety
  p.push_back(Affects(Int("max-lock-ttl", &Config::max_lock_ttl, 0, kLongMax), kEffectLeasePolicy));
  p.push_back(Affects(Enum<QuarantineMode>("quarantine", &Config::quarantine,
                                           {{"auto", QuarantineMode::kAuto},
                                            {"always", QuarantineMode::kAlways},
                                            {"never", QuarantineMode::kNever}}),
                      kEffectLeasePolicy));
  p.push_back(
      Affects(Int("quarantine-ms", &Config::quarantine_ms, -1, kLongMax), kEffectLeasePolicy));
  // Test knobs (enable-debug-command): see Config.
  p.push_back(Int("debug-wall-offset-ms", &Config::debug_wall_offset_ms, -kLongMax / 4,
                  kLongMax / 4, false));
  p.push_back(OptionalString("debug-clock-id", &Config::debug_clock_id, false));
  // The test bench (server/faults.h, server/history.h): start-up only, so a
  // production node cannot be turned into one by CONFIG SET.
  p.push_back(Bool("enable-fault-injection", &Config::enable_fault_injection, false));
  p.push_back(OptionalString("history-file", &Config::history_file, false));
  return p;
}

}  // namespace

EncodingLimits EncodingLimitsOf(const Config& c) {
  EncodingLimits l;
  l.hash_max_listpack_entries = c.hash_max_listpack_entries;
  l.hash_max_listpack_value = c.hash_max_listpack_value;
  l.set_max_intset_entries = c.set_max_intset_entries;
  l.zset_max_listpack_entries = c.zset_max_listpack_entries;
  l.zset_max_listpack_value = c.zset_max_listpack_value;
  l.list_max_listpack_size = c.list_max_listpack_size;
  return l;
}

const std::vector<ConfigParam>& ConfigParams() {
  static const std::vector<ConfigParam> params = BuildParams();
  return params;
}

const ConfigParam* FindConfigParam(std::string_view name) {
  for (const ConfigParam& p : ConfigParams()) {
    if (EqualsIgnoreCase(p.name, name)) return &p;
  }
  return nullptr;
}

std::optional<int64_t> ParseMemory(std::string_view s) {
  // A number with an optional unit: b, k/kb, m/mb, g/gb (case-insensitive),
  // where k = 1000 and kb = 1024, as in redis.conf.
  size_t digits = 0;
  while (digits < s.size() && (std::isdigit(static_cast<unsigned char>(s[digits])) ||
                               (digits == 0 && s[digits] == '-'))) {
    ++digits;
  }
  std::string unit = ToLower(s.substr(digits));
  int64_t mul;
  if (unit.empty() || unit == "b") {
    mul = 1;
  } else if (unit == "k") {
    mul = 1000;
  } else if (unit == "kb") {
    mul = 1024;
  } else if (unit == "m") {
    mul = 1000 * 1000;
  } else if (unit == "mb") {
    mul = 1024 * 1024;
  } else if (unit == "g") {
    mul = 1000LL * 1000 * 1000;
  } else if (unit == "gb") {
    mul = 1024LL * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  auto n = ParseInt64(s.substr(0, digits));
  if (!n || *n < 0) return std::nullopt;
  if (*n > std::numeric_limits<int64_t>::max() / mul) return std::nullopt;
  return *n * mul;
}

std::optional<std::string> LoadConfig(Config& config, const std::string& file,
                                      const std::vector<std::string>& cli_args) {
  // Gather (line number, original text, words) for the file, then for the
  // command line, whose `--name v…` groups continue the numbering as Redis's
  // do.
  struct Line {
    int number;
    std::string text;
    std::optional<std::vector<std::string>> words;
  };
  std::vector<Line> lines;
  int number = 0;
  if (!file.empty()) {
    std::ifstream in(file);
    if (!in) return "Fatal error, can't open config file '" + file + "': " + std::strerror(errno);
    std::string text;
    while (std::getline(in, text)) {
      ++number;
      // Comments and blank lines are skipped before the line is split, so a
      // comment may contain anything (quotes included).
      size_t first = text.find_first_not_of(" \t\r");
      if (first == std::string::npos || text[first] == '#') continue;
      lines.push_back({number, text, SplitArgs(text)});
    }
    config.config_file = file;
  }
  for (size_t i = 0; i < cli_args.size();) {
    const std::string& a = cli_args[i];
    if (a.rfind("--", 0) != 0) {
      return "Invalid argument '" + a + "': options are given as --name value";
    }
    std::vector<std::string> words = {a.substr(2)};
    std::string text = a.substr(2);
    for (++i; i < cli_args.size() && cli_args[i].rfind("--", 0) != 0; ++i) {
      words.push_back(cli_args[i]);
      text += " \"" + cli_args[i] + "\"";
    }
    lines.push_back({++number, text, words});
  }

  for (const Line& line : lines) {
    auto fail = [&](const std::string& why) {
      return "\n*** FATAL CONFIG FILE ERROR (latch " + std::string(kLatchVersion) +
             ") ***\nReading the configuration file, at line " + std::to_string(line.number) +
             "\n>>> '" + line.text + "'\n" + why;
    };
    if (!line.words) return fail("Unbalanced quotes in configuration line");
    const auto& words = *line.words;
    if (words.empty() || words[0][0] == '#') continue;
    // `user <name> <rules…>`: an ACL user, checked here so a bad rule
    // names its line (server/acl).
    if (EqualsIgnoreCase(words[0], "user")) {
      if (auto err = acl::CheckUserLine(words)) return fail(*err);
      config.users.emplace_back(words.begin() + 1, words.end());
      continue;
    }
    const ConfigParam* param = FindConfigParam(words[0]);
    std::vector<std::string> args(words.begin() + 1, words.end());
    // Like Redis 7, a multi-word directive given as one quoted argument
    // (`--client-output-buffer-limit "normal 32mb 16mb 10"`) is split.
    if (param != nullptr && param->arity == -1 && args.size() == 1 && !args[0].empty()) {
      if (auto split = SplitArgs(args[0]); split && !split->empty()) args = std::move(*split);
    }
    bool arity_ok = param != nullptr &&
                    (param->arity == -1 ? !args.empty() : static_cast<int>(args.size()) == 1);
    // `save ""` is one empty word; `save` with nothing is also accepted.
    if (param != nullptr && param->name == "save" && args.empty()) {
      args.push_back("");
      arity_ok = true;
    }
    if (!arity_ok) return fail("Bad directive or wrong number of arguments");
    if (auto err = param->set(config, args)) return fail(*err);
  }
  return CheckConfig(config);
}

std::optional<std::string> CheckConfig(const Config& config) {
  auto fail = [](const std::string& why) {
    return "\n*** FATAL CONFIG FILE ERROR (latch " + std::string(kLatchVersion) + ") ***\n" + why;
  };
  if (auto err = acl::CheckAclConfig(config)) return fail(*err);
  if (config.quarantine == QuarantineMode::kAlways && config.quarantine_ms < 0 &&
      config.max_lock_ttl <= 0) {
    return fail(
        "'quarantine always' quarantines every start as if the node's storage had vanished, "
        "and needs to know for how long: set quarantine-ms, or max-lock-ttl (the longest lease "
        "the node grants)");
  }
  if ((config.debug_wall_offset_ms != 0 || !config.debug_clock_id.empty()) &&
      config.enable_debug_command == DebugCommand::kNo) {
    return fail(
        "debug-wall-offset-ms and debug-clock-id are test knobs: they need "
        "enable-debug-command yes (or local)");
  }
  if (config.maxmemory_policy == MaxMemoryPolicy::kVolatileLfu ||
      config.maxmemory_policy == MaxMemoryPolicy::kAllKeysLfu) {
    return fail(
        "maxmemory-policy volatile-lfu and allkeys-lfu rank keys by access frequency, which "
        "latch does not count: use volatile-lru or allkeys-lru, or noeviction (the default, "
        "which never deletes a held lock)");
  }
  if (config.debug_clock_id.find_first_of(" \t\r\n") != std::string::npos) {
    return fail("debug-clock-id cannot contain spaces");
  }
  return std::nullopt;
}

std::string FormatPercentile(double p) {
  char buf[64];
  int len = std::snprintf(buf, sizeof(buf), "%f", p);
  std::string s(buf, static_cast<size_t>(len));
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

const char* QuarantineModeName(QuarantineMode m) {
  switch (m) {
    case QuarantineMode::kAuto:
      return "auto";
    case QuarantineMode::kAlways:
      return "always";
    case QuarantineMode::kNever:
      return "never";
  }
  return "?";
}

}  // namespace latch
