// latch-chaos's command line: the options of a run (chaos.h) from argv,
// through the tools' option library (tools/cli/options.h). Every value is
// checked here, with a message naming the option, so that a run never starts
// half-configured; a bad command line exits 64, as in every tool.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "protocol/text.h"
#include "tools/chaos/chaos.h"
#include "tools/chaos/schedule.h"
#include "tools/cli/options.h"

namespace latch::chaos {
namespace {

const cli::Manual kManual = {
    "latch-chaos", "RedLock under crashes, pauses, power loss and disk faults, checked",
    "latch-chaos [--node-count N] [--workers M] [--duration D] [--seed S]\n"
    "            [--quarantine auto|never|always] [--appendfsync always|everysec|no]\n"
    "            [--faults LIST] [--vary-appendfsync LIST] [--vary-quarantine LIST]\n"
    "            [--quarantine-duration D] [--ack-rate N] [--rewrites yes|no]\n"
    "            [--appendonly yes|no] [--ttl D] [--timeline FILE.svg] [--html FILE]\n"
    "            [--server PATH] [--check-aof PATH|none] [--keep] [--verbose]\n"
    "            [--print-schedule] [--fence] [--user NAME] [--pass P]\n"
    "            [--tls [--cacert FILE] [--cacertdir DIR] [--cert FILE --tls-key FILE]\n"
    "             [--sni NAME] [--insecure]]",
    R"MAN(DESCRIPTION
    Starts N latch-server processes on loopback, runs M RedLock clients that
    take turns on one key and one writer per node whose acknowledged SETs are
    tracked, while faults are injected from a seeded schedule. Checks that no
    two clients ever held the lock at the same time, and that every
    acknowledged write survives the restarts as the node's fsync policy
    promises. The same seed, node count, duration, TTL, fault kinds and
    --vary lists give the same schedule; what the servers and the machine do
    meanwhile does not repeat, so two runs of one seed report different
    counts (violations, faults that found their moment).

OPTIONS
    --node-count N       latch-server processes, 1-9 (default 5)
    --workers M          client threads, 1-64 (default 8)
    --duration D         length of the run, up to 1h (default 30s)
    --seed S             the schedule depends only on S (and N, D, ttl, --faults and
                         the --vary lists)
    --quarantine Q       the servers' --quarantine at the start (default auto)
    --appendfsync P      the servers' --appendfsync at the start (default everysec)
    --appendonly yes|no  the servers' --appendonly (default yes)
    --ttl D              the lock's TTL, also the servers' max-lock-ttl, 100ms-10s
                         (default 1s)
    --faults LIST        the fault kinds to draw, comma-separated (default all):
        crash            kill -9 of a node, restarted after a while
        pause            SIGSTOP of 1..majority nodes, then SIGCONT
        power            DEBUG POWERLOSS: the log cut to what was fsynced
        torn             a power loss that leaves half a record at the log's end
        amnesia          a majority loses power right after a grant, back at once
        clean            SIGTERM of 1..majority nodes at any moment, then a start
        requarantine     an amnesia, then SIGTERM (or kill -9) and a start while
                         the restart quarantine runs: it must carry on
        disk-error       DEBUG FAULT-IO log-write|log-fsync|state-write ENOSPC|EIO|
                         EDQUOT|EROFS on 1..majority nodes; cleared after a while, or
                         the nodes are stopped (SIGTERM, kill -9, power loss) while
                         it lasts, right after a grant
        slow-disk        DEBUG FAULT-IO <target> <ms>: writes or fsyncs slower;
                         cleared, or ended by kill -9 or a power loss
        wall-step        a majority stopped right after a grant comes back with its
                         wall clock stepped up to an hour either way
                         (--debug-wall-offset-ms; the step stays)
        boot-id          the same, back on another boot clock (--debug-clock-id:
                         a reboot, another host, a time namespace)
        slow-fsync       every fsync of 1..majority servers slower for a while, most
                         often ended by kill -9 while they wait: done by
                         latch-chaos-slow-fsync.so (found next to this program),
                         preloaded into the servers, so any build takes it
        log-lost         kill -9 and the log deleted (not in "all": it loses
                         acknowledged writes by design, to show the check fails)
                         "classic" is crash,pause,power,torn,amnesia.
                         Faults that need a knob the server lacks (an old build:
                         DEBUG FAULT-IO, --debug-wall-offset-ms, --debug-clock-id)
                         are skipped, and the report says so.
    --vary-appendfsync LIST
                         each restart of a node draws its appendfsync from LIST
                         (e.g. always,everysec,no); default: no change
    --vary-quarantine LIST
                         each restart draws its quarantine mode from LIST (auto,
                         always, never; always comes with a quarantine-ms of
                         ttl/2..2*ttl unless --quarantine-duration is given); default: no
                         change. never may lose locks by design: the report counts
                         violations after a restart into never apart
    --quarantine-duration D
                         the servers' --quarantine-ms (default: not given)
    --ack-rate N         acknowledged SETs per second per node, 0-5000 (default
                         100; 0: only the rewrite side-job's). Every one must be
                         there after each restart and at the end, except writes
                         after the last fsync lost in a power loss under everysec
                         or no (counted apart, allowed)
    --rewrites yes|no    the rewrite side-job: BGREWRITEAOF now and then, most
                         inside MULTI between two SETs (default yes)
    --timeline FILE      write an SVG picture of the run (open it in a browser)
    --html FILE          write the run as latch-fixture check's HTML page
                         (tools/history/)
    --server PATH        latch-server binary (default: next to this program,
                         installed or in the build tree; else $LATCH_BUILD_DIR/
                         latch-server, else on the PATH)
    --check-aof PATH     the log checker that repairs a node whose log will not load
                         (latch-check-aof --fix, as an operator would; what it cuts
                         counts as lost); default: next to this program; none: such
                         a node stays down, its acknowledged writes counted as lost
    --keep               keep the temporary directory (server logs, data)
    --verbose            print faults, restarts and losses as they happen
    --print-schedule     print the fault schedule and the rewrites, and exit
                         (a dry run: nothing is started)
    --fence              acquire with fencing tokens and also check that a later
                         holder always carries a larger token (reported apart:
                         "token order violations: N"; any makes the exit status 1)
    --user NAME          the servers get an ACL user NAME (every command and
                         key) and their default user is off: every connection
                         of the run logs in as NAME (AUTH NAME P)
    -a, --pass P         its password (--password: the same; default
                         $REDISCLI_AUTH, else $LATCH_PASSWORD); without --user,
                         the servers' requirepass
    --tls                every server also listens on a tls-port with a
                         certificate the run makes (a CA, server and client
                         certificates in the run's directory, tls/), and every
                         client, writer and probe connects there with TLS
                         (client certificate included: tls-auth-clients yes)
    --cacert FILE, --cacertdir DIR, --cert FILE, --tls-key FILE, --sni NAME,
    --insecure           as latch-redlock's (redis-cli's names): the clients'
                         TLS settings, in place of the made ones
    -h, --help           this manual
    --version            the version

EXIT STATUS
    0    no violation and no acknowledged write lost beyond what the policies
         allow
    1    a violation, or acknowledged writes lost
    2    harness error (a server that would not start, a missing binary...)
    64   usage error
    The report has a line "acknowledged writes lost: N (allowed: A)"; its
    last line is "violations: N".

EXAMPLES
    latch-chaos --node-count 5 --workers 8 --duration 10m --seed 1 \
        --vary-appendfsync always,everysec,no --timeline run.svg
    latch-chaos --node-count 5 --workers 8 --duration 2m --seed 1 --faults classic \
        --quarantine never --appendfsync no

SEE ALSO
    tools/redlock/README.md (the fault kinds, the loss rule, the figures),
    latch-fixture(1), latch-redlock(1)
)MAN"};

[[noreturn]] void Usage(const std::string& message) {
  cli::UsageError(kManual, message);
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

std::string DefaultServerPath() {
  std::string p = cli::Companion("latch-server", X_OK);
  if (!p.empty()) return p;
  if (const char* b = std::getenv("LATCH_BUILD_DIR")) return std::string(b) + "/latch-server";
  return "latch-server";
}

}  // namespace

Options ParseOptions(int argc, char** argv) {
  Options o;
  std::string faults, vary_appendfsync, vary_quarantine, rewrites = "yes";
  cli::Millis quarantine_for{0};
  int64_t seed = static_cast<int64_t>(o.seed);
  cli::Parser p(kManual);
  p.Int("node-count", &o.nodes, 1, 9)
      .Int("workers", &o.workers, 1, 64)
      .Duration("duration", &o.duration, Millis{1000}, Millis{3'600'000})
      .Int("seed", &seed, 0, INT64_MAX)
      .Choice("quarantine", &o.quarantine, {"auto", "never", "always"})
      .Choice("appendfsync", &o.appendfsync, {"always", "everysec", "no"})
      .Choice("appendonly", &o.appendonly, {"yes", "no"})
      .Duration("ttl", &o.ttl, Millis{100}, Millis{10'000})
      .Text("timeline", &o.timeline)
      .Text("html", &o.page)
      .Text("server", &o.server)
      .Flag("keep", &o.keep)
      .Flag("print-schedule", &o.schedule_only)
      .Text("faults", &faults)
      .Text("vary-appendfsync", &vary_appendfsync)
      .Text("vary-quarantine", &vary_quarantine)
      .Duration("quarantine-duration", &quarantine_for, Millis{0}, Millis{3'600'000})
      .Int("ack-rate", &o.ack_rate, 0, 5000)
      .Choice("rewrites", &rewrites, {"yes", "no"})
      .Text("check-aof", &o.check_aof)
      .Flag("fence", &o.fence)
      .Flag("verbose", &o.verbose, 'v');
  o.connect.FromEnvironment();
  o.connect.Declare(p);
  p.Refused("nodes",
            "a HOST:PORT list in every latch tool; to start N nodes: "
            "--node-count N")
      .Refused("page", "now --html FILE (the same page as latch-fixture check --html)")
      .Refused("schedule-only", "now --print-schedule (as in latch-fixture run)")
      .Refused("quarantine-ms", "now --quarantine-duration D, with a unit (2s, 500ms)");
  cli::Parser::Result r = p.Parse(argc, argv);
  if (!r.operands.empty()) Usage("unexpected argument '" + r.operands[0] + "'");
  o.seed = static_cast<uint64_t>(seed);
  o.rewrites = rewrites == "yes";
  if (p.Given("quarantine-duration")) o.quarantine_ms = quarantine_for.count();
  if (p.Given("faults")) {
    std::string error;
    auto kinds = ParseFaultList(faults, &error);
    if (!kinds) Usage("--faults: " + error);
    o.faults = std::move(*kinds);
  } else {
    o.faults = DefaultFaults();
  }
  if (p.Given("vary-appendfsync")) {
    o.vary_appendfsync =
        ChoiceList("--vary-appendfsync", vary_appendfsync, {"always", "everysec", "no"});
  }
  if (p.Given("vary-quarantine")) {
    o.vary_quarantine =
        ChoiceList("--vary-quarantine", vary_quarantine, {"auto", "never", "always"});
  }
  if (o.server.empty()) o.server = DefaultServerPath();
  if (!p.Given("check-aof")) o.check_aof = cli::Companion("latch-check-aof", X_OK);
  o.slow_fsync_lib = cli::Companion("latch-chaos-slow-fsync.so", R_OK);
  if (o.check_aof == "none") o.check_aof.clear();
  {
    // Checked now (a usage error, exit 64); the TLS context itself is made
    // once the run's certificates exist.
    std::shared_ptr<const latch::TlsClient> unused;
    latch::ConnectOptions plain = o.connect;
    plain.tls = latch::TlsClientOptions{};
    if (auto err = plain.Build(&unused)) Usage(*err);
    if (!o.connect.tls.enabled && (p.Given("cacert") || p.Given("cacertdir") || p.Given("cert") ||
                                   p.Given("tls-key") || p.Given("sni") || p.Given("insecure"))) {
      Usage("--cacert, --cacertdir, --cert, --tls-key, --sni and --insecure need --tls");
    }
  }
  return o;
}

}  // namespace latch::chaos
