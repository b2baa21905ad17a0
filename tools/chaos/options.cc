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
#include "tools/chaos/schedule.h"
#include "tools/redlock/cli_args.h"

namespace latch::chaos {
namespace {

const char kUsage[] =
    "Usage: latch-chaos --nodes N --workers M --duration D --seed S\n"
    "                   --quarantine auto|never|always --appendfsync always|everysec|no\n"
    "                   [--faults LIST] [--vary-appendfsync LIST] [--vary-quarantine LIST]\n"
    "                   [--quarantine-ms MS] [--ack-rate N] [--rewrites yes|no]\n"
    "                   [--appendonly yes|no] [--ttl D] [--timeline out.svg] [--server PATH]\n"
    "                   [--check-aof PATH|none] [--keep] [--verbose] [--schedule-only]\n"
    "                   [--fence]\n";

const char kHelp[] =
    "\n"
    "Starts N latch-server processes on loopback, runs M RedLock clients that take\n"
    "turns on one key and one writer per node whose acknowledged SETs are tracked,\n"
    "while faults are injected from a seeded schedule. Checks that no two clients\n"
    "ever held the lock at the same time, and that every acknowledged write\n"
    "survives the restarts as the node's fsync policy promises.\n"
    "\n"
    "  --nodes N            latch-server processes, 1-9 (default 5)\n"
    "  --workers M          client threads, 1-64 (default 8)\n"
    "  --duration D         length of the run, up to 1h (default 30s)\n"
    "  --seed S             the schedule depends only on S (and N, D, ttl, --faults and\n"
    "                       the --vary lists)\n"
    "  --quarantine Q       the servers' --quarantine at the start (default auto)\n"
    "  --appendfsync P      the servers' --appendfsync at the start (default everysec)\n"
    "  --appendonly yes|no  the servers' --appendonly (default yes)\n"
    "  --ttl D              the lock's TTL, also the servers' max-lock-ttl, 100ms-10s\n"
    "                       (default 1s)\n"
    "  --faults LIST        the fault kinds to draw, comma-separated (default all):\n"
    "      crash            kill -9 of a node, restarted after a while\n"
    "      pause            SIGSTOP of 1..majority nodes, then SIGCONT\n"
    "      power            DEBUG POWERLOSS: the log cut to what was fsynced\n"
    "      torn             a power loss that leaves half a record at the log's end\n"
    "      amnesia          a majority loses power right after a grant, back at once\n"
    "      clean            SIGTERM of 1..majority nodes at any moment, then a start\n"
    "      requarantine     an amnesia, then SIGTERM (or kill -9) and a start while\n"
    "                       the restart quarantine runs: it must carry on\n"
    "      disk-error       DEBUG FAULT-IO log-write|log-fsync|state-write ENOSPC|EIO|\n"
    "                       EDQUOT|EROFS on 1..majority nodes; cleared after a while, or\n"
    "                       the nodes are stopped (SIGTERM, kill -9, power loss) while\n"
    "                       it lasts, right after a grant\n"
    "      slow-disk        DEBUG FAULT-IO <target> <ms>: writes or fsyncs slower;\n"
    "                       cleared, or ended by kill -9 or a power loss\n"
    "      wall-step        a majority stopped right after a grant comes back with its\n"
    "                       wall clock stepped up to an hour either way\n"
    "                       (--debug-wall-offset-ms; the step stays)\n"
    "      boot-id          the same, back on another boot clock (--debug-clock-id:\n"
    "                       a reboot, another host, a time namespace)\n"
    "      slow-fsync       every fsync of 1..majority servers slower for a while, most\n"
    "                       often ended by kill -9 while they wait: done by\n"
    "                       latch-chaos-slow-fsync.so (found next to this program),\n"
    "                       preloaded into the servers, so any build takes it\n"
    "      log-lost         kill -9 and the log deleted (not in \"all\": it loses\n"
    "                       acknowledged writes by design, to show the check fails)\n"
    "                       \"classic\" is crash,pause,power,torn,amnesia.\n"
    "                       Faults that need a knob the server lacks (an old build:\n"
    "                       DEBUG FAULT-IO, --debug-wall-offset-ms, --debug-clock-id)\n"
    "                       are skipped, and the report says so.\n"
    "  --vary-appendfsync LIST\n"
    "                       each restart of a node draws its appendfsync from LIST\n"
    "                       (e.g. always,everysec,no); default: no change\n"
    "  --vary-quarantine LIST\n"
    "                       each restart draws its quarantine mode from LIST (auto,\n"
    "                       always, never; always comes with a quarantine-ms of\n"
    "                       ttl/2..2*ttl unless --quarantine-ms is given); default: no\n"
    "                       change. never may lose locks by design: the report counts\n"
    "                       violations after a restart into never apart\n"
    "  --quarantine-ms MS   the servers' --quarantine-ms (default: not given)\n"
    "  --ack-rate N         acknowledged SETs per second per node, 0-5000 (default\n"
    "                       100; 0: only the rewrite side-job's). Every one must be\n"
    "                       there after each restart and at the end, except writes\n"
    "                       after the last fsync lost in a power loss under everysec\n"
    "                       or no (counted apart, allowed)\n"
    "  --rewrites yes|no    the rewrite side-job: BGREWRITEAOF now and then, most\n"
    "                       inside MULTI between two SETs (default yes)\n"
    "  --timeline FILE      write an SVG picture of the run (open it in a browser)\n"
    "  --page FILE          write the run as latch-fixture check's HTML page (tools/history/)\n"
    "  --server PATH        latch-server binary (default: next to this program's\n"
    "                       directory, or $LATCH_BUILD_DIR/latch-server)\n"
    "  --check-aof PATH     the log checker that repairs a node whose log will not load\n"
    "                       (latch-check-aof --fix, as an operator would; what it cuts\n"
    "                       counts as lost); default: next to this program; none: such\n"
    "                       a node stays down, its acknowledged writes counted as lost\n"
    "  --keep               keep the temporary directory (server logs, data)\n"
    "  --verbose            print faults, restarts and losses as they happen\n"
    "  --schedule-only      print the fault schedule and the rewrites, and exit\n"
    "  --fence              acquire with fencing tokens and also check that a later\n"
    "                       holder always carries a larger token (reported apart:\n"
    "                       \"token order violations: N\"; any makes the exit status 1)\n"
    "\n"
    "Exit status: 0 no violation and no acknowledged write lost beyond what the\n"
    "policies allow, 1 otherwise, 2 harness error. The report has a line\n"
    "\"acknowledged writes lost: N (allowed: A)\"; its last line is \"violations: N\".\n";

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

std::vector<std::string> ChoiceList(const char* name, const std::string& v,
                                    std::initializer_list<const char*> choices) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= v.size()) {
    size_t comma = v.find(',', at);
    if (comma == std::string::npos) comma = v.size();
    out.push_back(ChoiceArg(name, v.substr(at, comma - at), choices));
    at = comma + 1;
  }
  return out;
}

// A program's companion in the build layout: build/tools/latch-check-aof and
// build/tools/latch-chaos-slow-fsync.so next to build/tools/latch-chaos.
std::string NextToThisProgram(const char* name, int mode) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  auto p = self.parent_path() / name;
  return ::access(p.c_str(), mode) == 0 ? p.string() : "";
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
    kFaults,
    kVaryAppendfsync,
    kVaryQuarantine,
    kQuarantineMs,
    kAckRate,
    kRewrites,
    kCheckAof,
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
      {"faults", required_argument, nullptr, kFaults},
      {"vary-appendfsync", required_argument, nullptr, kVaryAppendfsync},
      {"vary-quarantine", required_argument, nullptr, kVaryQuarantine},
      {"quarantine-ms", required_argument, nullptr, kQuarantineMs},
      {"ack-rate", required_argument, nullptr, kAckRate},
      {"rewrites", required_argument, nullptr, kRewrites},
      {"check-aof", required_argument, nullptr, kCheckAof},
      {"fence", no_argument, nullptr, kFence},
      {"verbose", no_argument, nullptr, 'v'},
      {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0},
  };
  bool faults_given = false;
  bool check_aof_given = false;
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
      case kFaults: {
        std::string error;
        auto kinds = ParseFaultList(value, &error);
        if (!kinds) Usage(error + " in --faults");
        o.faults = std::move(*kinds);
        faults_given = true;
        break;
      }
      case kVaryAppendfsync:
        o.vary_appendfsync = ChoiceList("--vary-appendfsync", value, {"always", "everysec", "no"});
        break;
      case kVaryQuarantine:
        o.vary_quarantine = ChoiceList("--vary-quarantine", value, {"auto", "never", "always"});
        break;
      case kQuarantineMs:
        o.quarantine_ms = IntArg("--quarantine-ms", value, 0, 3'600'000);
        break;
      case kAckRate:
        o.ack_rate = static_cast<int>(IntArg("--ack-rate", value, 0, 5000));
        break;
      case kCheckAof:
        o.check_aof = value;
        check_aof_given = true;
        break;
      case kRewrites:
        o.rewrites = ChoiceArg("--rewrites", value, {"yes", "no"}) == "yes";
        break;
      default:  // '?' or ':'
        Usage(latch::GetoptErrorMessage(c, argv));
    }
  }
  if (optind < argc) Usage(std::string("unexpected argument '") + argv[optind] + "'");
  if (o.server.empty()) o.server = DefaultServerPath();
  if (!faults_given) o.faults = DefaultFaults();
  if (!check_aof_given) o.check_aof = NextToThisProgram("latch-check-aof", X_OK);
  o.slow_fsync_lib = NextToThisProgram("latch-chaos-slow-fsync.so", R_OK);
  if (o.check_aof == "none") o.check_aof.clear();
  return o;
}

}  // namespace latch::chaos
