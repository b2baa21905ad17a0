// One command-line convention for every latch tool, on getopt_long(3).
//
// Every program (latch-server's own flags aside, which are redis.conf's)
// parses its arguments through a cli::Parser, so that they all behave alike:
//
//   --help      the manual (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT
//               STATUS…, as a man page is laid out) on stdout; exit 0
//   --version   "<program> (latch) <version>" on stdout; exit 0
//   a usage error (an unknown option or subcommand, a missing or bad value)
//               "<program>: <what>", the synopsis and a pointer to --help on
//               stderr; exit 64 (EX_USAGE) in every tool, so that a script
//               can tell a mistyped call from the tool's own answers (1: a
//               violation found, 2: an error while working, 75/76…)
//   durations   always with a unit: 250us, 500ms, 8s, 1.5s, 2m, 1h. A bare
//               number is refused with a hint ("5000" could be 5000 ms or
//               5000 s: the tools used to disagree)
//
// The same thing has the same name in every tool (tools/README.md lists the
// names): --nodes is a HOST:PORT list (as $LATCH_NODES), --node-count how many
// nodes a tool starts, --duration how long it runs, --seed, --ttl, --server
// (the latch-server binary), --dir, --html (the history page), --keep,
// --print-schedule (a dry run), -v/--verbose, --json.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace latch::cli {

// EX_USAGE (sysexits.h): every tool's status for a command line it refuses.
inline constexpr int kExitUsage = 64;

// The version every tool and the server report (CMake's project version).
const char* Version();

using Micros = std::chrono::microseconds;
using Millis = std::chrono::milliseconds;

// Parses a duration with its unit: a decimal number followed by us, ms, s,
// m (or min) or h. Returns nullopt and says why (naming the fix for a bare
// number) for anything else, a negative value or more than a week.
std::optional<Micros> ParseDuration(std::string_view text, std::string* why = nullptr);

// "250 ms", "1.50 s", "2 min 5 s": durations in messages and reports.
std::string FormatDuration(Millis d);

// What --help prints and what a usage error quotes.
struct Manual {
  const char* program;   // "latch-fixture"
  const char* summary;   // one line, for NAME: "N latch nodes with real faults…"
  const char* synopsis;  // the SYNOPSIS lines, without "Usage:" (a usage error repeats them)
  const char* body;      // DESCRIPTION, OPTIONS, EXIT STATUS, ENVIRONMENT, EXAMPLES, SEE ALSO
};

// "<program>: <what>", the synopsis and "Try '<program> --help'." on
// stderr, then exit 64.
[[noreturn]] void UsageError(const Manual& m, const std::string& what);
// The whole manual, on stdout.
void PrintHelp(const Manual& m);
// "<program> (latch) <version>", on stdout.
void PrintVersion(const char* program);

// The options one program (or one of its subcommands) accepts. Each
// declaration names a long option and where its value goes; values are
// checked as they are read, and a bad one is a usage error naming the option.
class Parser {
 public:
  explicit Parser(const Manual& m) : manual_(m) {}

  Parser& Flag(const char* name, bool* out, char letter = 0);
  Parser& Text(const char* name, std::string* out, char letter = 0);
  // May be given more than once; each value is appended.
  Parser& Texts(const char* name, std::vector<std::string>* out);
  Parser& Int(const char* name, int64_t* out, int64_t lo, int64_t hi);
  Parser& Int(const char* name, int* out, int lo, int hi);
  Parser& Duration(const char* name, Millis* out, Millis lo, Millis hi);
  Parser& Duration(const char* name, Micros* out, Micros lo, Micros hi);
  Parser& Choice(const char* name, std::string* out, std::vector<std::string> choices);
  // An option this program does not have under that name, which users may
  // still type (a name another tool uses for something else, an old name):
  // refused with `hint` rather than as unknown.
  Parser& Refused(const char* name, std::string hint);
  // Any other value: `parse` returns an error message, or nullopt once it
  // stored the value.
  Parser& Custom(const char* name,
                 std::function<std::optional<std::string>(const std::string&)> parse);

  struct Result {
    // Every word that is not an option, in order ("--" itself excluded).
    std::vector<std::string> operands;
    // How many of `operands` came before a "--" (all of them without one).
    size_t before_dashes = 0;
    bool dashes = false;
  };
  // Parses argv[first..argc). --help and --version are always understood.
  // By default options and operands may be mixed (getopt's permutation); with
  // stop_at_operand, the first operand ends the options and everything from
  // it on is an operand, as for env(1) or timeout(1): a COMMAND's own options
  // stay its own.
  Result Parse(int argc, char** argv, int first = 1, bool stop_at_operand = false);

  // Whether the option was on the command line.
  bool Given(std::string_view name) const;

  [[noreturn]] void Fail(const std::string& what) const { UsageError(manual_, what); }
  const Manual& manual() const { return manual_; }

 private:
  struct Option {
    std::string name;
    char letter = 0;
    bool takes_value = true;
    std::function<std::optional<std::string>(const std::string&)> store;
  };
  Parser& Add(Option o);

  const Manual& manual_;
  std::vector<Option> options_;
  std::vector<std::string> given_;
};

// A subcommand: the word must be one of `names`, else a usage error that
// names it as an unknown command and lists the known ones.
size_t Subcommand(const Manual& m, std::string_view word, const std::vector<std::string>& names);

// A companion program or library installed with this one: next to the
// running executable (bin/), in the build tree's layout (build/tools/x next
// to build/x), or in <prefix>/lib/latch/ for libraries. Empty if none is
// there with `mode` (access(2)).
std::string Companion(const char* name, int mode);

}  // namespace latch::cli
