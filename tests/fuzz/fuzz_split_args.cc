// Fuzz target: the inline-request and config-line splitter (SplitArgs in
// protocol/text.*, Redis's sdssplitargs rules).
//
// Input: one line of arbitrary bytes.
//
// Beyond "no crash and no sanitizer report", each run checks:
//  - the first NUL ends the line (sdssplitargs works on a C string);
//  - round trip: when the line splits, writing its words back in the
//    double-quoted form (every byte that is not a plain printable character
//    as \xHH) and splitting that gives the same words;
//  - the inline request parser gives the same words for the same line (it
//    must: an inline request is exactly such a line plus a newline).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/request_parser.h"
#include "protocol/text.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_split_args: property violated: %s\n", what);
    std::abort();
  }
}

std::string Quote(const std::vector<std::string>& words) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out.push_back(' ');
    out.push_back('"');
    for (unsigned char ch : w) {
      if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\') {
        out.push_back(static_cast<char>(ch));
      } else {
        out += "\\x";
        out.push_back(kHex[ch >> 4]);
        out.push_back(kHex[ch & 15]);
      }
    }
    out.push_back('"');
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  auto words = latch::SplitArgs(line);

  size_t nul = line.find('\0');
  if (nul != std::string_view::npos) {
    Check(latch::SplitArgs(line.substr(0, nul)) == words, "bytes after a NUL changed the result");
  }

  if (words) {
    for (const std::string& w : *words) {
      Check(w.size() <= line.size(), "a word longer than its line");
    }
    auto again = latch::SplitArgs(Quote(*words));
    Check(again.has_value(), "the quoted form of the words does not split");
    Check(*again == *words, "quoting and splitting again changed the words");
  }

  // The same line as an inline request (a line starting with '*' would be a
  // multibulk request, and one with a newline would be two requests).
  if (size > 0 && line[0] != '*' && line.find('\n') == std::string_view::npos &&
      size <= latch::resp::kMaxInlineSize) {
    std::string request(line);
    request += "\r\n";
    latch::resp::RequestParser parser;
    auto r = parser.Parse(request, {});
    if (!words) {
      Check(r == latch::resp::RequestParser::Result::kError, "unbalanced line accepted inline");
    } else {
      Check(r == latch::resp::RequestParser::Result::kRequest, "valid line refused inline");
      std::vector<std::string> args(parser.args().begin(), parser.args().end());
      Check(args == *words, "the inline parser split the line differently");
    }
  }
  return 0;
}
