// Server configuration: the values, and the one registry of parameters behind
// the config file, `--name value` flags, CONFIG GET and CONFIG SET.
//
// Names, syntax and error texts follow redis.conf, so an operator's habits and
// tools carry over: a file of `name arg…` lines (quotes as in redis-cli),
// `--name value` on the command line appended as if they were more lines, and
// byte-for-byte Redis errors from CONFIG SET.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/version.h"  // kLatchVersion
#include "log/sync_policy.h"
#include "server/supervision.h"
#include "server/types/object.h"

namespace latch {

// The Redis version latch reports to clients (INFO, HELLO). latch implements
// the lock commands of Redis 8.4 (DELEX, DIGEST, SET IFEQ/IFNE), and some
// libraries only use them when the server says it is at least that version.
inline constexpr const char* kRedisCompatVersion = "8.4.0";

using FsyncPolicy = aof::SyncPolicy;
enum class QuarantineMode { kAuto, kAlways, kNever };
enum class LogLevel { kDebug, kVerbose, kNotice, kWarning };
enum class DebugCommand { kNo, kYes, kLocal };
// tls-auth-clients: whether a TLS client must show a certificate.
enum class TlsAuthClients { kNo, kYes, kOptional };
// Redis's maxmemory-policy values (eviction.cc says what each means for locks).
enum class MaxMemoryPolicy {
  kVolatileLru,
  kVolatileLfu,
  kVolatileRandom,
  kVolatileTtl,
  kAllKeysLru,
  kAllKeysLfu,
  kAllKeysRandom,
  kNoEviction
};

struct OutputBufferLimit {
  int64_t hard_bytes = 0;  // 0 = no limit
  int64_t soft_bytes = 0;
  int64_t soft_seconds = 0;
};

struct Config {
  // Network
  std::vector<std::string> bind = {"127.0.0.1", "-::1"};
  int64_t port = 6379;
  int64_t tcp_backlog = 511;
  int64_t timeout = 0;          // idle seconds before a client is closed; 0 = never
  int64_t tcp_keepalive = 300;  // seconds
  bool protected_mode = true;
  int64_t maxclients = 10000;
  // Plain client connections' reads and writes through one io_uring per
  // loop instead of libuv's (server/uring.h; start-up only).
  bool io_uring = false;
  // Limits
  int64_t proto_max_bulk_len = 512LL * 1024 * 1024;
  int64_t client_query_buffer_limit = 1024LL * 1024 * 1024;
  // client-output-buffer-limit, per class: normal clients (none by
  // default), replicas (latch has none; kept for CONFIG GET) and pub/sub
  // subscribers (Redis's 32mb hard, 8mb for 60 s).
  OutputBufferLimit client_output_buffer_limit;
  OutputBufferLimit client_output_buffer_limit_replica{256LL << 20, 64LL << 20, 60};
  OutputBufferLimit client_output_buffer_limit_pubsub{32LL << 20, 8LL << 20, 60};
  // Keyspace notifications (pubsub.h): the classes on, as flags.
  uint32_t notify_keyspace_events = 0;
  // Security
  std::string requirepass;
  // TLS (server/tls/): Redis 6+'s settings and defaults. tls-port 0: no TLS
  // listener. tls-replication, tls-cluster and the tls-client-* files are
  // kept for CONFIG GET and files written for Redis (latch has no replicas
  // and no cluster bus); empty strings are Redis's unset values.
  int64_t tls_port = 0;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_key_file_pass;
  std::string tls_client_cert_file;
  std::string tls_client_key_file;
  std::string tls_client_key_file_pass;
  std::string tls_dh_params_file;
  std::string tls_ca_cert_file;
  std::string tls_ca_cert_dir;
  std::string tls_protocols;  // empty: TLSv1.2 and TLSv1.3
  std::string tls_ciphers;
  std::string tls_ciphersuites;
  TlsAuthClients tls_auth_clients = TlsAuthClients::kYes;
  bool tls_prefer_server_ciphers = false;
  bool tls_session_caching = true;
  int64_t tls_session_cache_size = 20 * 1024;
  int64_t tls_session_cache_timeout = 300;  // seconds
  bool tls_replication = false;
  bool tls_cluster = false;
  // ACL (server/acl): the users file (ACL LOAD / SAVE), or users declared
  // here with `user <name> <rules…>` lines (each line's words after "user").
  std::string aclfile;
  std::vector<std::vector<std::string>> users;
  // ACL LOG's length: cut to it when an entry is added.
  int64_t acllog_max_len = 128;
  // DEBUG subcommands (fault injection for tests): no, yes, or local
  // (loopback clients only).
  DebugCommand enable_debug_command = DebugCommand::kNo;
  // General
  std::string dir = ".";
  std::string logfile;  // empty = stderr
  LogLevel loglevel = LogLevel::kNotice;
  std::string pidfile;
  bool daemonize = false;                           // supervision.h
  SupervisedMode supervised = SupervisedMode::kNo;  // no, upstart, systemd, auto
  // A unix socket to listen on besides TCP (empty: none), and its mode
  // (octal, as chmod; 0: left to the umask).
  std::string unixsocket;
  int64_t unixsocketperm = 0;
  int64_t hz = 10;
  // Memory (eviction.cc): 0 = no limit. Past the limit, noeviction (the
  // default, and the lock-safe choice) refuses the commands that may grow
  // memory with Redis's OOM error; the other policies delete keys.
  int64_t maxmemory = 0;
  MaxMemoryPolicy maxmemory_policy = MaxMemoryPolicy::kNoEviction;
  int64_t maxmemory_samples = 5;
  std::string save;        // accepted for compatibility; latch has no snapshots
  int64_t databases = 16;  // SELECT 0 … databases-1, as Redis
  // Append-only log
  bool appendonly = true;
  std::string appendfilename = "latch.aof";
  FsyncPolicy appendfsync = FsyncPolicy::kEverysec;
  bool aof_load_truncated = true;
  int64_t auto_aof_rewrite_percentage = 100;
  int64_t auto_aof_rewrite_min_size = 64LL * 1024 * 1024;
  // Diagnostics (SLOWLOG, LATENCY, INFO latencystats), with Redis's defaults
  int64_t slowlog_log_slower_than = 10000;  // µs; -1: off, 0: every command
  int64_t slowlog_max_len = 128;
  int64_t latency_monitor_threshold = 0;  // ms; 0: off
  bool latency_tracking = true;           // per-command latency histograms
  std::vector<double> latency_tracking_info_percentiles = {50.0, 99.0, 99.9};
  // When collections leave their compact encodings (types/object.h),
  // with Redis 7.0's defaults.
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;
  int64_t set_max_intset_entries = 512;
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;
  int64_t list_max_listpack_size = -2;
  int64_t list_compress_depth = 0;  // accepted; latch never compresses list nodes
  // Scripting (scripting/engine.h): after this many ms a running script
  // makes other clients get -BUSY and may be killed (busy-reply-threshold,
  // alias lua-time-limit, Redis's default); the most memory each Lua
  // interpreter may hold (latch's own: a script that wants more fails with
  // "not enough memory"). The cap stays below 340 MB: lua-cjson sizes its
  // output buffer as 6 * len + 2 in an int.
  int64_t busy_reply_threshold = 5000;
  int64_t lua_maxmemory = 256LL * 1024 * 1024;
  // Whether the known lock scripts run natively (the fast path) or in Lua
  // like any other script: the same replies and records either way (the
  // unit tests prove it by running both; the benchmark compares them).
  bool known_scripts_native = true;
  // Lock safety (see lease_policy.h)
  int64_t max_lock_ttl = 0;  // ms; 0 = no cap, as Redis
  QuarantineMode quarantine = QuarantineMode::kAuto;
  // How long to quarantine when no record says (state record lost or
  // damaged, quarantine always); -1: max-lock-ttl if set.
  int64_t quarantine_ms = -1;
  // Test knobs, honoured only with enable-debug-command: a wall clock
  // shifted by this many ms, and another clock identity (as after a reboot
  // or on another host).
  int64_t debug_wall_offset_ms = 0;
  std::string debug_clock_id;
  // The test bench (server/faults.h, server/history.h): the FAULT command
  // family, refused unless this is yes (start-up only), and a JSON-lines
  // record of every grant, renewal, release and expiry (empty: none).
  bool enable_fault_injection = false;
  std::string history_file;

  // Where the config was read from (for INFO and the start-up line).
  std::string config_file;
};

// What a change of a parameter at run time affects: the server runs the
// matching hook after CONFIG SET (server.cc, ApplyConfigChange).
enum ConfigEffect : uint32_t {
  kEffectNone = 0,
  kEffectLeasePolicy = 1u << 0,  // lease_policy.h: appendfsync, max-lock-ttl, quarantine…
  kEffectLogWriter = 1u << 1,    // appendfsync, auto-aof-rewrite-*
  kEffectCron = 1u << 2,         // hz
  kEffectLogLevel = 1u << 3,     // loglevel
  kEffectMaxClients = 1u << 4,   // maxclients: the file-descriptor limit
  kEffectDiagnostics = 1u << 5,  // slowlog-*, latency-*: what the gate times
  kEffectEncodings = 1u << 6,    // *-max-listpack-*, set-max-intset-entries: the Store's limits
  kEffectNotify = 1u << 7,       // notify-keyspace-events
  kEffectScripts = 1u << 8,      // busy-reply-threshold, lua-maxmemory
  kEffectAppendOnly = 1u << 9,   // appendonly: the log opened or closed (log_switch.cc)
  kEffectMaxMemory = 1u << 10,   // maxmemory, maxmemory-policy: the gate's memory check
  kEffectTls = 1u << 11,         // tls-*: the TLS context rebuilt (server/tls/context.h)
};

// The Store's encoding limits from the configuration.
EncodingLimits EncodingLimitsOf(const Config& c);

// One configuration parameter.
struct ConfigParam {
  std::string name;
  bool mutable_at_runtime = true;
  // Renders the current value as CONFIG GET shows it.
  std::function<std::string(const Config&)> get;
  // Parses and stores `args` (one or more words). Returns an error message
  // in Redis's words ("argument must be 'yes' or 'no'"), or nullopt.
  std::function<std::optional<std::string>(Config&, const std::vector<std::string>&)> set;
  // How many words the parameter takes in a config file (-1: one or more).
  int arity = 1;
  uint32_t effects = kEffectNone;

  // CONFIG REWRITE (config_rewrite.h): how the value is written in the file,
  // as Redis's rewriteConfig*Option functions write their types.
  enum class Style {
    kPlain,   // name value… as CONFIG GET shows it (numbers, yes/no, enums, lists)
    kQuoted,  // name "value", quoted and escaped (strings, paths)
    kMemory,  // name 64mb: bytes in gb/mb/kb when they divide
  };
  Style style = Style::kPlain;
  // An empty value means "not set" (Redis's NULL strings: pidfile,
  // unixsocket, requirepass): the option's lines are removed, not rewritten.
  bool empty_is_unset = false;
  // Written even at its default value (dir, save, as Redis does).
  bool always_rewrite = false;
  // Another name for `alias_of` (hash-max-ziplist-entries): never written
  // itself; its lines in the file are rewritten as the primary's.
  const char* alias_of = nullptr;
};

// The registry of every parameter the server has, in a stable order.
// ConfigParams() includes the aliases; FindConfigParam finds either name.
const std::vector<ConfigParam>& ConfigParams();
const ConfigParam* FindConfigParam(std::string_view name);

// Loads a config: the file (if any) then the `--name value…` arguments.
// On error returns the complete message to print before exiting, in the
// format redis-server uses (it names the line and the directive).
std::optional<std::string> LoadConfig(Config& config, const std::string& file,
                                      const std::vector<std::string>& cli_args);

// Checks rules that involve several parameters (run after loading).
std::optional<std::string> CheckConfig(const Config& config);

// Parses "1gb", "512mb", "100" into bytes (Redis's memtoull rules).
std::optional<int64_t> ParseMemory(std::string_view s);

inline const char* FsyncPolicyName(FsyncPolicy p) {
  return aof::SyncPolicyName(p);
}
const char* QuarantineModeName(QuarantineMode m);

// A percentile as Redis prints it in CONFIG GET and INFO latencystats: "%f"
// without trailing zeros ("50", "99.9").
std::string FormatPercentile(double p);

}  // namespace latch
