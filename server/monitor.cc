#include "server/monitor.h"

#include <cctype>
#include <cstdio>
#include <vector>

#include "protocol/text.h"
#include "server/command.h"

namespace latch {

namespace {

// Appends `arg` quoted the way Redis's sdscatrepr does for MONITOR.
void AppendQuoted(std::string& out, std::string_view arg) {
  out.push_back('"');
  for (unsigned char ch : arg) {
    switch (ch) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        if (std::isprint(ch)) {
          out.push_back(static_cast<char>(ch));
        } else {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", ch);
          out += buf;
        }
    }
  }
  out.push_back('"');
}

}  // namespace

std::string MonitorLine(int64_t us, int db, std::string_view addr,
                        std::span<const std::string_view> argv, const CommandSpec& cmd) {
  char head[64];
  std::snprintf(head, sizeof(head), "%lld.%06lld [%d ", static_cast<long long>(us / 1'000'000),
                static_cast<long long>(us % 1'000'000), db);
  std::string line = "+";
  line += head;
  line += addr;
  line += "]";
  // Passwords never reach a monitor. As Redis 7: every AUTH argument is
  // redacted, but of HELLO only the user and password after its AUTH word,
  // so `"hello" "3"` still shows which protocol a client asked for.
  std::vector<bool> redact(argv.size(), cmd.name == "auth");
  if (cmd.name == "hello") {
    // HELLO protover [AUTH user pass] [SETNAME name], options in any order.
    for (size_t i = 2; i < argv.size(); ++i) {
      size_t more = argv.size() - 1 - i;
      if (EqualsIgnoreCase(argv[i], "AUTH") && more >= 2) {
        redact[i + 1] = redact[i + 2] = true;
        i += 2;
      } else if (EqualsIgnoreCase(argv[i], "SETNAME") && more >= 1) {
        ++i;
      } else {
        break;
      }
    }
  }
  for (size_t i = 0; i < argv.size(); ++i) {
    line.push_back(' ');
    AppendQuoted(line, i > 0 && redact[i] ? std::string_view("(redacted)") : argv[i]);
  }
  line += "\r\n";
  return line;
}

}  // namespace latch
