#include "server/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace latch::log {

namespace {

// Renders the level as Redis's one-character mark.
class LevelMark final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    char c = '*';
    switch (msg.level) {
      case spdlog::level::trace:
        c = '.';
        break;
      case spdlog::level::debug:
        c = '-';
        break;
      case spdlog::level::info:
        c = '*';
        break;
      default:
        c = '#';
        break;
    }
    dest.push_back(c);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelMark>();
  }
};

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::trace;
    case LogLevel::kVerbose:
      return spdlog::level::debug;
    case LogLevel::kNotice:
      return spdlog::level::info;
    case LogLevel::kWarning:
      return spdlog::level::warn;
  }
  return spdlog::level::info;
}

}  // namespace

std::optional<std::string> Init(const Config& config) {
  std::shared_ptr<spdlog::logger> logger;
  try {
    if (config.logfile.empty()) {
      logger = std::make_shared<spdlog::logger>("latch",
                                                std::make_shared<spdlog::sinks::stderr_sink_mt>());
    } else {
      logger = std::make_shared<spdlog::logger>(
          "latch", std::make_shared<spdlog::sinks::basic_file_sink_mt>(config.logfile));
    }
  } catch (const spdlog::spdlog_ex& e) {
    return std::string("Can't open the log file: ") + e.what();
  }
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<LevelMark>('*').set_pattern("%P:M %d %b %Y %H:%M:%S.%e %* %v");
  logger->set_formatter(std::move(formatter));
  logger->set_level(ToSpdlog(config.loglevel));
  // Warnings must reach the file even if the process dies right after.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return std::nullopt;
}

void SetLevel(LogLevel level) {
  spdlog::default_logger()->set_level(ToSpdlog(level));
}

}  // namespace latch::log
