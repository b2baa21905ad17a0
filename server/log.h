// Logging with Redis's four levels on top of spdlog.
//
//   debug (.)  verbose (-)  notice (*)  warning (#)
//
// Lines look like Redis's: `pid:M 30 Nov 2026 07:25:25.123 * message`, to
// stderr or to `logfile`. The levels map onto spdlog's trace, debug, info and
// warn.
#pragma once

#include <spdlog/spdlog.h>

#include <optional>
#include <string>

#include "server/config.h"

namespace latch::log {

// Sets up the default logger. Returns an error text if the logfile cannot be
// opened.
std::optional<std::string> Init(const Config& config);
void SetLevel(LogLevel level);

template <typename... Args>
void Debug(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  spdlog::trace(fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void Verbose(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  spdlog::debug(fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void Notice(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  spdlog::info(fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void Warning(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  spdlog::warn(fmt, std::forward<Args>(args)...);
}

}  // namespace latch::log
