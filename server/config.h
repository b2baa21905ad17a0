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

namespace latch {

inline constexpr const char* kLatchVersion = "0.1.0";
// The Redis version latch reports to clients (INFO, HELLO). latch implements
// the lock commands of Redis 8.4 (DELEX, DIGEST, SET IFEQ/IFNE), and some
// libraries only use them when the server says it is at least that version.
inline constexpr const char* kRedisCompatVersion = "8.4.0";

enum class FsyncPolicy { kAlways, kEverysec, kNo };
enum class QuarantineMode { kAuto, kAlways, kNever };
enum class LogLevel { kDebug, kVerbose, kNotice, kWarning };
enum class DebugCommand { kNo, kYes, kLocal };

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
  // Limits
  int64_t proto_max_bulk_len = 512LL * 1024 * 1024;
  int64_t client_query_buffer_limit = 1024LL * 1024 * 1024;
  OutputBufferLimit client_output_buffer_limit;
  // Security
  std::string requirepass;
  // DEBUG subcommands (fault injection for tests): no, yes, or local
  // (loopback clients only).
  DebugCommand enable_debug_command = DebugCommand::kNo;
  // General
  std::string dir = ".";
  std::string logfile;  // empty = stderr
  LogLevel loglevel = LogLevel::kNotice;
  std::string pidfile;
  int64_t hz = 10;
  std::string save;  // accepted for compatibility; latch has no snapshots
  int64_t databases = 1;
  // Append-only log
  bool appendonly = true;
  std::string appendfilename = "latch.aof";
  FsyncPolicy appendfsync = FsyncPolicy::kEverysec;
  bool aof_load_truncated = true;
  int64_t auto_aof_rewrite_percentage = 100;
  int64_t auto_aof_rewrite_min_size = 64LL * 1024 * 1024;
  // Lock safety
  int64_t max_lock_ttl = 60000;  // ms; 0 = no cap
  QuarantineMode quarantine = QuarantineMode::kAuto;
  int64_t quarantine_ms = -1;  // -1 = same as max-lock-ttl

  // Where the config was read from (for INFO and the start-up line).
  std::string config_file;
};

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
};

// The registry of every parameter the server has, in a stable order.
const std::vector<ConfigParam>& ConfigParams();
const ConfigParam* FindConfigParam(std::string_view name);

// Loads a config: the file (if any) then the `--name value…` arguments.
// On error returns the complete message to print before exiting, in the
// format redis-server uses (it names the line and the directive).
std::optional<std::string> LoadConfig(Config& config, const std::string& file,
                                      const std::vector<std::string>& cli_args);

// Parses "1gb", "512mb", "100" into bytes (Redis's memtoull rules).
std::optional<int64_t> ParseMemory(std::string_view s);

// The effective quarantine duration (quarantine-ms, or max-lock-ttl when unset).
inline int64_t EffectiveQuarantineMs(const Config& c) {
  return c.quarantine_ms >= 0 ? c.quarantine_ms : c.max_lock_ttl;
}

const char* FsyncPolicyName(FsyncPolicy p);
const char* QuarantineModeName(QuarantineMode m);

}  // namespace latch
