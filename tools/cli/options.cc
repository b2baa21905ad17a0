#include "tools/cli/options.h"

#include "common/version.h"

#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace latch::cli {

const char* Version() {
  return kLatchVersion;
}

std::optional<Micros> ParseDuration(std::string_view text, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<Micros> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  size_t digits = 0;
  bool dot = false;
  while (digits < text.size() &&
         ((text[digits] >= '0' && text[digits] <= '9') || (text[digits] == '.' && !dot))) {
    dot |= text[digits] == '.';
    ++digits;
  }
  const std::string number(text.substr(0, digits));
  const std::string_view unit = text.substr(digits);
  if (number.empty() || number == ".") {
    return fail("'" + std::string(text) + "' is not a duration (e.g. 500ms, 8s, 2m)");
  }
  if (unit.empty()) {
    // The tools used to read a bare number as seconds (latch-redlock) or as
    // milliseconds (latch-fixture): say which the caller has to choose.
    return fail("'" + std::string(text) + "' has no unit: write " + number + "ms or " + number +
                "s (units: us, ms, s, m, h)");
  }
  double scale;
  if (unit == "us") {
    scale = 1;
  } else if (unit == "ms") {
    scale = 1e3;
  } else if (unit == "s") {
    scale = 1e6;
  } else if (unit == "m" || unit == "min") {
    scale = 60e6;
  } else if (unit == "h") {
    scale = 3600e6;
  } else {
    return fail("'" + std::string(text) + "' has an unknown unit '" + std::string(unit) +
                "' (units: us, ms, s, m, h)");
  }
  const double us = std::strtod(number.c_str(), nullptr) * scale;
  if (!std::isfinite(us) || us > 7 * 24 * 3600e6) {
    return fail("'" + std::string(text) + "' is too long (at most a week)");
  }
  return Micros(static_cast<int64_t>(std::llround(us)));
}

std::string FormatDuration(Millis d) {
  char buf[64];
  const int64_t ms = d.count();
  if (ms < 1000 && ms > -1000) {
    std::snprintf(buf, sizeof(buf), "%lld ms", static_cast<long long>(ms));
  } else if (ms < 120'000) {
    std::snprintf(buf, sizeof(buf), "%.2f s", static_cast<double>(ms) / 1000.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld min %lld s", static_cast<long long>(ms / 60'000),
                  static_cast<long long>((ms % 60'000) / 1000));
  }
  return buf;
}

namespace {

// The synopsis, one line per form, the first after "Usage: ".
std::string Synopsis(const Manual& m, const char* first_prefix, const char* prefix) {
  std::string out;
  std::string_view s = m.synopsis;
  bool first = true;
  while (!s.empty()) {
    size_t nl = s.find('\n');
    std::string_view line = s.substr(0, nl);
    out += first ? first_prefix : prefix;
    out += line;
    out += '\n';
    first = false;
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace

void UsageError(const Manual& m, const std::string& what) {
  std::string out = std::string(m.program) + ": " + what + "\n";
  out += Synopsis(m, "Usage: ", "       ");
  out += "Try '" + std::string(m.program) + " --help' for the manual.\n";
  std::fputs(out.c_str(), stderr);
  std::exit(kExitUsage);
}

void PrintHelp(const Manual& m) {
  std::string out = "NAME\n    " + std::string(m.program) + " - " + m.summary + "\n\nSYNOPSIS\n";
  out += Synopsis(m, "    ", "    ");
  out += "\n";
  out += m.body;
  if (!out.empty() && out.back() != '\n') out += '\n';
  std::fputs(out.c_str(), stdout);
}

void PrintVersion(const char* program) {
  std::printf("%s (latch) %s\n", program, Version());
}

Parser& Parser::Add(Option o) {
  options_.push_back(std::move(o));
  return *this;
}

Parser& Parser::Flag(const char* name, bool* out, char letter) {
  return Add({name, letter, false, [out](const std::string&) -> std::optional<std::string> {
                *out = true;
                return std::nullopt;
              }});
}

Parser& Parser::Text(const char* name, std::string* out, char letter) {
  return Add({name, letter, true, [out](const std::string& v) -> std::optional<std::string> {
                *out = v;
                return std::nullopt;
              }});
}

Parser& Parser::Texts(const char* name, std::vector<std::string>* out) {
  return Add({name, 0, true, [out](const std::string& v) -> std::optional<std::string> {
                out->push_back(v);
                return std::nullopt;
              }});
}

Parser& Parser::Int(const char* name, int64_t* out, int64_t lo, int64_t hi) {
  return Add({name, 0, true, [=](const std::string& v) -> std::optional<std::string> {
                char* end = nullptr;
                errno = 0;
                long long n = std::strtoll(v.c_str(), &end, 10);
                if (v.empty() || *end != '\0' || errno != 0 || n < lo || n > hi) {
                  return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                         ", not '" + v + "'";
                }
                *out = n;
                return std::nullopt;
              }});
}

Parser& Parser::Int(const char* name, int* out, int lo, int hi) {
  return Add({name, 0, true, [=](const std::string& v) -> std::optional<std::string> {
                char* end = nullptr;
                errno = 0;
                long long n = std::strtoll(v.c_str(), &end, 10);
                if (v.empty() || *end != '\0' || errno != 0 || n < lo || n > hi) {
                  return "an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                         ", not '" + v + "'";
                }
                *out = static_cast<int>(n);
                return std::nullopt;
              }});
}

Parser& Parser::Duration(const char* name, Micros* out, Micros lo, Micros hi) {
  return Add({name, 0, true, [=](const std::string& v) -> std::optional<std::string> {
                std::string why;
                auto d = ParseDuration(v, &why);
                if (!d) return why;
                if (*d < lo || *d > hi) {
                  return "a duration from " +
                         FormatDuration(std::chrono::duration_cast<Millis>(lo)) + " to " +
                         FormatDuration(std::chrono::duration_cast<Millis>(hi)) + ", not '" + v +
                         "'";
                }
                *out = *d;
                return std::nullopt;
              }});
}

Parser& Parser::Duration(const char* name, Millis* out, Millis lo, Millis hi) {
  return Add({name, 0, true, [=](const std::string& v) -> std::optional<std::string> {
                std::string why;
                auto d = ParseDuration(v, &why);
                if (!d) return why;
                Millis ms = std::chrono::duration_cast<Millis>(*d);
                if (ms < lo || ms > hi || (ms.count() == 0 && d->count() > 0)) {
                  return "a duration from " + FormatDuration(lo) + " to " + FormatDuration(hi) +
                         ", not '" + v + "'";
                }
                *out = ms;
                return std::nullopt;
              }});
}

Parser& Parser::Choice(const char* name, std::string* out, std::vector<std::string> choices) {
  return Add({name, 0, true, [=](const std::string& v) -> std::optional<std::string> {
                if (std::find(choices.begin(), choices.end(), v) != choices.end()) {
                  *out = v;
                  return std::nullopt;
                }
                std::string list;
                for (const std::string& c : choices) list += (list.empty() ? "" : ", ") + c;
                return "one of " + list + ", not '" + v + "'";
              }});
}

Parser& Parser::Refused(const char* name, std::string hint) {
  return Add(
      {name, 0, true, [hint](const std::string&) -> std::optional<std::string> { return hint; }});
}

Parser& Parser::Custom(const char* name,
                       std::function<std::optional<std::string>(const std::string&)> parse) {
  return Add({name, 0, true, std::move(parse)});
}

bool Parser::Given(std::string_view name) const {
  return std::find(given_.begin(), given_.end(), name) != given_.end();
}

Parser::Result Parser::Parse(int argc, char** argv, int first, bool stop_at_operand) {
  // getopt_long over argv[first-1 ..]: the word before `first` stands in for
  // the program name, and optind = 0 makes glibc start afresh (a tool may
  // parse twice: once for the subcommand's options).
  enum : int { kHelp = 1000, kVersion, kFirst };
  std::vector<option> longs;
  std::string shorts = stop_at_operand ? "+:" : ":";
  for (size_t i = 0; i < options_.size(); ++i) {
    const Option& o = options_[i];
    const int val = o.letter != 0 ? o.letter : kFirst + static_cast<int>(i);
    longs.push_back(
        {o.name.c_str(), o.takes_value ? required_argument : no_argument, nullptr, val});
    if (o.letter != 0) {
      shorts += o.letter;
      if (o.takes_value) shorts += ':';
    }
  }
  longs.push_back({"help", no_argument, nullptr, kHelp});
  longs.push_back({"version", no_argument, nullptr, kVersion});
  longs.push_back({nullptr, 0, nullptr, 0});
  shorts += "h";

  // Permuting, getopt would move the operands before a "--" after it: cut
  // what follows the first "--" off first, so that the two stay apart.
  int end = argc;
  if (!stop_at_operand) {
    for (int i = first; i < argc; ++i) {
      if (std::string_view(argv[i]) == "--") {
        end = i;
        break;
      }
    }
  }
  const int n = end - first + 1;
  char** v = argv + first - 1;
  opterr = 0;
  optind = 0;
  int c;
  while ((c = getopt_long(n, v, shorts.c_str(), longs.data(), nullptr)) != -1) {
    if (c == kHelp || c == 'h') {
      PrintHelp(manual_);
      std::exit(0);
    }
    if (c == kVersion) {
      PrintVersion(manual_.program);
      std::exit(0);
    }
    const Option* o = nullptr;
    if (c >= kFirst && c < kFirst + static_cast<int>(options_.size())) {
      o = &options_[static_cast<size_t>(c - kFirst)];
    } else {
      for (const Option& x : options_) {
        if (x.letter != 0 && x.letter == c) o = &x;
      }
    }
    if (o == nullptr) {
      // '?' or ':': name the option as typed, without any "=value".
      std::string word = optind > 0 ? v[optind - 1] : "";
      const bool long_form = word.rfind("--", 0) == 0;
      const bool has_value = word.find('=') != std::string::npos;
      const bool short_char = optopt > 0 && optopt < 256;
      if (!long_form || (c == '?' && short_char && !has_value)) {
        word = std::string("-") + static_cast<char>(optopt);
      } else {
        word = word.substr(0, word.find('='));
      }
      if (c == ':') Fail("option " + word + " needs a value");
      if (optopt != 0 && long_form && has_value) Fail("option " + word + " takes no value");
      Fail("unknown option " + word);
    }
    const std::string value = optarg != nullptr ? optarg : "";
    if (auto err = o->store(value)) Fail("--" + o->name + ": " + *err);
    given_.push_back(o->name);
  }
  Result r;
  // getopt has moved the operands after the options, in order. Stopping at
  // the first operand, it steps over a "--" before it (left in v[optind-1]).
  for (int i = optind; i < n; ++i) r.operands.emplace_back(v[i]);
  r.before_dashes = r.operands.size();
  if (end < argc) {
    r.dashes = true;
    for (int i = end + 1; i < argc; ++i) r.operands.emplace_back(argv[i]);
  } else if (stop_at_operand && optind > 1 && std::string_view(v[optind - 1]) == "--") {
    r.dashes = true;
    r.before_dashes = 0;
  }
  return r;
}

size_t Subcommand(const Manual& m, std::string_view word, const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == word) return i;
  }
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  if (word.empty()) UsageError(m, "no command given (commands: " + list + ")");
  if (word.rfind("-", 0) == 0) {
    UsageError(m, "unknown option " + std::string(word) + " (a command comes first: " + list + ")");
  }
  UsageError(m, "unknown command '" + std::string(word) + "' (commands: " + list + ")");
}

std::string Companion(const char* name, int mode) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path dir = self.parent_path();
  // Installed: bin/latch-chaos next to bin/latch-server, libraries in
  // lib/latch/; built: build/tools/latch-chaos, build/latch-server and
  // build/tools/latch-chaos-slow-fsync.so.
  for (const std::filesystem::path& p :
       {dir / name, dir.parent_path() / name, dir.parent_path() / "lib" / "latch" / name}) {
    if (::access(p.c_str(), mode) == 0) return p.string();
  }
  return "";
}

}  // namespace latch::cli
