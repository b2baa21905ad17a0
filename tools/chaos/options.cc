// latch-chaos's command line: the options of a run (chaos.h) from argv,
// with getopt_long(3). Every value is checked here, with a message naming the
// option, so that a run never starts half-configured; bad options exit 2,
// like any other harness error, because scripts read 1 as "violations".
#include <getopt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "protocol/text.h"
#include "tools/chaos/chaos.h"
#include "tools/redlock/cli_args.h"

namespace latch::chaos {
namespace {

const char kUsage[] =
    "Usage: latch-chaos --nodes N --workers M --duration D --seed S\n"
    "                   --quarantine auto|never|always --appendfsync always|everysec|no\n"
    "                   [--appendonly yes|no] [--ttl D] [--timeline out.svg] [--server PATH]\n"
    "                   [--keep] [--verbose] [--schedule-only] [--fence]\n";

const char kHelp[] =
    "\n"
    "Starts N latch-server processes on loopback, runs M RedLock clients that take\n"
    "turns on one key while faults are injected from a seeded schedule, and checks\n"
    "that no two clients ever held the lock at the same time.\n"
    "\n"
    "  --nodes N            latch-server processes, 1-9 (default 5)\n"
    "  --workers M          client threads, 1-64 (default 8)\n"
    "  --duration D         length of the run, up to 1h (default 30s)\n"
    "  --seed S             the fault schedule depends only on S (and N, D, ttl)\n"
    "  --quarantine Q       the servers' --quarantine (default auto)\n"
    "  --appendfsync P      the servers' --appendfsync (default everysec)\n"
    "  --appendonly yes|no  the servers' --appendonly (default yes)\n"
    "  --ttl D              the lock's TTL, also the servers' max-lock-ttl, 100ms-10s\n"
    "                       (default 1s)\n"
    "  --timeline FILE      write an SVG picture of the run (open it in a browser)\n"
    "  --page FILE          write the run as latch-fixture check's HTML page (tools/history/)\n"
    "  --server PATH        latch-server binary (default: next to this program's\n"
    "                       directory, or $LATCH_BUILD_DIR/latch-server)\n"
    "  --keep               keep the temporary directory (server logs, data)\n"
    "  --verbose            print faults and restarts as they happen\n"
    "  --schedule-only      print the fault schedule and exit\n"
    "  --fence              acquire with fencing tokens and also check that a later\n"
    "                       holder always carries a larger token (reported apart:\n"
    "                       \"token order violations: N\"; any makes the exit status 1)\n"
    "\n"
    "Exit status: 0 no violation, 1 violations found, 2 harness error.\n"
    "The report's last line is \"violations: N\".\n";

[[noreturn]] void Usage(const std::string& message) {
  std::fprintf(stderr, "latch-chaos: %s\n%s", message.c_str(), kUsage);
  std::exit(kExitHarness);
}

int64_t IntArg(const char* name, const std::string& v, int64_t lo, int64_t hi) {
  auto n = latch::ParseInt64(v);
  if (!n || *n < lo || *n > hi) {
    Usage(std::string(name) + " must be an integer from " + std::to_string(lo) + " to " +
          std::to_string(hi));
  }
  return *n;
}

Millis DurationArg(const char* name, const std::string& v, Millis lo, Millis hi) {
  auto d = latch::ParseDuration(v);
  if (!d || *d < lo || *d > hi) Usage("bad duration '" + v + "' for " + name);
  return *d;
}

std::string ChoiceArg(const char* name, const std::string& v,
                      std::initializer_list<const char*> choices) {
  for (const char* c : choices) {
    if (v == c) return v;
  }
  Usage("bad value '" + v + "' for " + name);
}

std::string DefaultServerPath() {
  // Built layout: build/tools/latch-chaos next to build/latch-server.
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto p = self.parent_path().parent_path() / "latch-server";
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  if (const char* b = std::getenv("LATCH_BUILD_DIR")) return std::string(b) + "/latch-server";
  return "latch-server";
}

}  // namespace

Options ParseOptions(int argc, char** argv) {
  Options o;
  enum : int {
    kNodes = 256,
    kWorkers,
    kDuration,
    kSeed,
    kQuarantine,
    kAppendfsync,
    kAppendonly,
    kTtl,
    kTimeline,
    kServer,
    kKeep,
    kScheduleOnly,
    kPage,
    kFence
  };
  static const option kOptions[] = {
      {"nodes", required_argument, nullptr, kNodes},
      {"workers", required_argument, nullptr, kWorkers},
      {"duration", required_argument, nullptr, kDuration},
      {"seed", required_argument, nullptr, kSeed},
      {"quarantine", required_argument, nullptr, kQuarantine},
      {"appendfsync", required_argument, nullptr, kAppendfsync},
      {"appendonly", required_argument, nullptr, kAppendonly},
      {"ttl", required_argument, nullptr, kTtl},
      {"timeline", required_argument, nullptr, kTimeline},
      {"server", required_argument, nullptr, kServer},
      {"keep", no_argument, nullptr, kKeep},
      {"schedule-only", no_argument, nullptr, kScheduleOnly},
      {"page", required_argument, nullptr, kPage},
      {"fence", no_argument, nullptr, kFence},
      {"verbose", no_argument, nullptr, 'v'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  opterr = 0;  // the messages below, then the usage, then exit 2
  int c;
  while ((c = getopt_long(argc, argv, ":hv", kOptions, nullptr)) != -1) {
    const std::string value = optarg != nullptr ? optarg : "";
    switch (c) {
      case 'h':
        std::printf("%s%s", kUsage, kHelp);
        std::exit(0);
      case 'v':
        o.verbose = true;
        break;
      case kKeep:
        o.keep = true;
        break;
      case kScheduleOnly:
        o.schedule_only = true;
        break;
      case kFence:
        o.fence = true;
        break;
      case kNodes:
        o.nodes = static_cast<int>(IntArg("--nodes", value, 1, 9));
        break;
      case kWorkers:
        o.workers = static_cast<int>(IntArg("--workers", value, 1, 64));
        break;
      case kDuration:
        o.duration = DurationArg("--duration", value, Millis{1000}, Millis{3'600'000});
        break;
      case kSeed:
        o.seed = static_cast<uint64_t>(IntArg("--seed", value, 0, INT64_MAX));
        break;
      case kQuarantine:
        o.quarantine = ChoiceArg("--quarantine", value, {"auto", "never", "always"});
        break;
      case kAppendfsync:
        o.appendfsync = ChoiceArg("--appendfsync", value, {"always", "everysec", "no"});
        break;
      case kAppendonly:
        o.appendonly = ChoiceArg("--appendonly", value, {"yes", "no"});
        break;
      case kTtl:
        o.ttl = DurationArg("--ttl", value, Millis{100}, Millis{10'000});
        break;
      case kTimeline:
        o.timeline = value;
        break;
      case kPage:
        o.page = value;
        break;
      case kServer:
        o.server = value;
        break;
      default:  // '?' or ':'
        Usage(latch::GetoptErrorMessage(c, argv));
    }
  }
  if (optind < argc) Usage(std::string("unexpected argument '") + argv[optind] + "'");
  if (o.server.empty()) o.server = DefaultServerPath();
  return o;
}

}  // namespace latch::chaos
