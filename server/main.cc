// latch-server: parse the configuration, build the server, run the loop.
//
//   latch-server [/path/to/latch.conf] [--name value …]
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "server/config.h"
#include "server/log.h"
#include "server/server.h"
#include "server/supervision.h"

namespace {

// The manual, laid out as the tools' (tools/cli/options.h). The server's own
// options are redis.conf's, so it parses them itself (config.h).
void Help() {
  std::printf(
      "NAME\n"
      "    latch-server - a lock server that speaks the Redis protocol\n"
      "\n"
      "SYNOPSIS\n"
      "    latch-server [/path/to/latch.conf] [--name value ...]\n"
      "    latch-server --help | --version\n"
      "\n"
      "DESCRIPTION\n"
      "    Serves Redis clients on 127.0.0.1:6379 (bind, port) with the lock commands\n"
      "    and their safety rules: an append-only log in Redis's AOF format, a restart\n"
      "    quarantine that keeps RedLock safe when a node forgets locks it granted,\n"
      "    fencing tokens and fair waiting. Its data directory (dir) holds the log\n"
      "    (latch.aof), the quarantine's record (latch.state) and latch.lock; one\n"
      "    server per directory.\n"
      "\n"
      "    The configuration is a file of redis.conf lines (\"name value\"), then the\n"
      "    --name value pairs of the command line, read as more lines: the later\n"
      "    wins. Every setting is also CONFIG GET's and CONFIG SET's, by the same\n"
      "    name; CONFIG REWRITE writes the running values back into the file.\n"
      "    latch.conf (in the source tree, or /etc/latch/latch.conf from the\n"
      "    Debian package) documents each one.\n"
      "\n"
      "OPTIONS\n"
      "    --port N                   TCP port (0: none)\n"
      "    --bind ADDR...             addresses to listen on\n"
      "    --unixsocket PATH          a unix socket too (--unixsocketperm 770)\n"
      "    --dir DIR                  the data directory\n"
      "    --appendonly yes|no        the append-only log (default yes)\n"
      "    --appendfsync always|everysec|no\n"
      "    --quarantine auto|always|never, --max-lock-ttl MS\n"
      "    --maxmemory BYTES, --maxmemory-policy noeviction|...\n"
      "    --daemonize yes|no, --pidfile PATH, --logfile PATH,\n"
      "    --supervised no|systemd|upstart|auto\n"
      "    (and every other setting of latch.conf, by its name)\n"
      "    -h, --help                 this manual\n"
      "    -v, --version              the version\n"
      "\n"
      "EXIT STATUS\n"
      "    0    a clean shutdown (SHUTDOWN, SIGTERM, SIGINT)\n"
      "    1    a configuration error (the message names the line), a data\n"
      "         directory in use or unreadable, a log that will not load, a\n"
      "         failed fsync under appendfsync always\n"
      "\n"
      "EXAMPLES\n"
      "    latch-server /etc/latch/latch.conf\n"
      "    latch-server --port 6380 --dir ./data --appendfsync always\n"
      "\n"
      "SEE ALSO\n"
      "    latch-check-aof(1), latch-redlock(1), latch-fixture(1), latch-chaos(1),\n"
      "    latch-demo(1); README.md and docs/guide.md (/usr/share/doc/latch)\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-v" || a == "--version") {
      std::printf("latch-server (latch) %s\nspeaks the Redis protocol; reports Redis %s\n",
                  latch::kLatchVersion, latch::kRedisCompatVersion);
      return 0;
    }
    if (a == "-h" || a == "--help") {
      Help();
      return 0;
    }
    if (i == 1 && a.rfind("--", 0) != 0) {
      file = a;
    } else {
      args.push_back(a);
    }
  }

  latch::Config config;
  if (auto err = latch::LoadConfig(config, file, args)) {
    std::fprintf(stderr, "%s\n", err->c_str());
    return 1;
  }
  // CONFIG REWRITE writes back to the file it was read from: keep its
  // absolute path, since the server runs in its data directory.
  if (!config.config_file.empty()) {
    char* real = ::realpath(config.config_file.c_str(), nullptr);
    if (real != nullptr) {
      config.config_file = real;
      std::free(real);
    }
  }
  // Like Redis, the server runs inside its data directory.
  if (chdir(config.dir.c_str()) != 0) {
    std::fprintf(stderr, "Can't chdir to '%s': %s\n", config.dir.c_str(), std::strerror(errno));
    return 1;
  }
  if (auto err = latch::log::Init(config)) {
    std::fprintf(stderr, "%s\n", err->c_str());
    return 1;
  }
  // Before any thread starts: upstart's stop, or daemonize's fork.
  const latch::SupervisedMode supervisor =
      latch::supervision::Begin(config.supervised, config.daemonize);
  if (config.daemonize && supervisor == latch::SupervisedMode::kNo && config.pidfile.empty()) {
    config.pidfile = "/var/run/latch.pid";  // as Redis's /var/run/redis.pid
  }
  latch::supervision::WritePidFile(config.pidfile);
  const std::string pidfile = config.pidfile;
  // A peer that goes away mid-write must not kill the server.
  std::signal(SIGPIPE, SIG_IGN);
  // Past a file-size limit (RLIMIT_FSIZE), writes to the log must fail with
  // EFBIG and be handled like a full disk, not kill the process.
  std::signal(SIGXFSZ, SIG_IGN);

  auto clock = std::make_unique<latch::SystemClock>();
  // Test knobs (CheckConfig allows them only with enable-debug-command).
  clock->set_wall_offset_ms(config.debug_wall_offset_ms);
  clock->set_id_override(config.debug_clock_id);
  int code;
  {
    latch::Server server(std::move(config), std::move(clock));
    code = server.Run();
  }
  latch::supervision::RemovePidFile(pidfile);
  return code;
}
