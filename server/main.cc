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

namespace {

void Usage() {
  std::fprintf(stderr,
               "Usage: latch-server [/path/to/latch.conf] [--name value ...]\n"
               "       latch-server --version\n"
               "Options are the redis.conf names, e.g. --port 6380 --dir ./data "
               "--appendfsync always\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-v" || a == "--version") {
      std::printf("latch-server v=%s (speaks the Redis %s protocol)\n", latch::kLatchVersion,
                  latch::kRedisCompatVersion);
      return 0;
    }
    if (a == "-h" || a == "--help") {
      Usage();
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
  // Like Redis, the server runs inside its data directory.
  if (chdir(config.dir.c_str()) != 0) {
    std::fprintf(stderr, "Can't chdir to '%s': %s\n", config.dir.c_str(), std::strerror(errno));
    return 1;
  }
  if (auto err = latch::log::Init(config)) {
    std::fprintf(stderr, "%s\n", err->c_str());
    return 1;
  }
  // A peer that goes away mid-write must not kill the server.
  std::signal(SIGPIPE, SIG_IGN);
  // Past a file-size limit (RLIMIT_FSIZE), writes to the log must fail with
  // EFBIG and be handled like a full disk, not kill the process.
  std::signal(SIGXFSZ, SIG_IGN);

  auto clock = std::make_unique<latch::SystemClock>();
  // Test knobs (CheckConfig allows them only with enable-debug-command).
  clock->set_wall_offset_ms(config.debug_wall_offset_ms);
  clock->set_id_override(config.debug_clock_id);
  latch::Server server(std::move(config), std::move(clock));
  return server.Run();
}
