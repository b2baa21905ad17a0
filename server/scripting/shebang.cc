#include "server/scripting/shebang.h"

#include <cstring>
#include <vector>

#include "protocol/text.h"
#include "server/scripting/engine.h"

namespace latch::scripting {

namespace {

// The shebang line, if the body starts with "#!": up to its newline, or
// nullopt when there is none before the end of the C string.
std::optional<std::string_view> ShebangLine(std::string_view body) {
  std::string_view c = body.substr(0, body.find('\0'));
  size_t nl = c.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  return c.substr(0, nl);
}

}  // namespace

std::optional<std::string> ParseScriptShebang(std::string_view body, uint32_t* flags,
                                              size_t* shebang_len) {
  *flags = kFlagEvalCompat;
  *shebang_len = 0;
  if (body.substr(0, 2) != "#!") return std::nullopt;
  auto line = ShebangLine(body);
  if (!line) return std::string("Invalid script shebang");
  auto parts = SplitArgs(*line);
  if (!parts || parts->empty()) return std::string("Invalid engine in script shebang");
  if ((*parts)[0] != "#!lua") return "Unexpected engine in script shebang: " + (*parts)[0];
  uint32_t f = 0;
  for (size_t j = 1; j < parts->size(); ++j) {
    const std::string& part = (*parts)[j];
    if (part.compare(0, 6, "flags=") != 0) return "Unknown lua shebang option: " + part;
    std::string_view list = std::string_view(part).substr(6);
    // sdssplitlen: empty items count; an empty list has none.
    size_t start = 0;
    while (!list.empty() && start <= list.size()) {
      size_t comma = list.find(',', start);
      std::string_view item = list.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      bool found = false;
      for (const FlagName& fn : kFlagNames) {
        if (item == fn.name) {
          f |= fn.flag;
          found = true;
        }
      }
      if (!found) return "Unexpected flag in script shebang: " + std::string(item);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  *flags = f;
  *shebang_len = line->size();
  return std::nullopt;
}

std::optional<std::string> ParseLibraryMetadata(std::string_view code, LibraryMetadata* out) {
  if (code.substr(0, 2) != "#!") return std::string("Missing library metadata");
  auto line = ShebangLine(code);
  if (!line) return std::string("Invalid library metadata");
  auto parts = SplitArgs(*line);
  if (!parts || parts->empty()) return std::string("Invalid library metadata");
  out->engine = (*parts)[0].substr(2);
  bool have_name = false;
  for (size_t i = 1; i < parts->size(); ++i) {
    const std::string& part = (*parts)[i];
    if (part.size() >= 5 && EqualsIgnoreCase(std::string_view(part).substr(0, 5), "name=")) {
      if (have_name)
        return std::string("Invalid metadata value, name argument was given multiple times");
      out->name = part.substr(5);
      have_name = true;
      continue;
    }
    return "Invalid metadata value given: " + part;
  }
  if (!have_name) return std::string("Library name was not given");
  out->code = code.substr(line->size());
  return std::nullopt;
}

}  // namespace latch::scripting
