#include "server/aof_format.h"

#include "protocol/text.h"

namespace latch {

std::string ValidateAofRecord(std::span<const std::string_view> args) {
  if (args.empty()) return "empty record";
  std::string_view cmd = args[0];
  auto is = [&](std::string_view name) { return EqualsIgnoreCase(cmd, name); };
  auto quoted = [&] { return "'" + std::string(cmd.substr(0, 64)) + "'"; };
  if (is("SET")) {
    if (args.size() == 3) return {};
    if (args.size() == 5 && EqualsIgnoreCase(args[3], "PXAT")) {
      if (!ParseInt64(args[4])) return "SET with a PXAT that is not an integer";
      return {};
    }
    return "SET record with unexpected arguments (expected SET key value [PXAT ms])";
  }
  if (is("DEL")) return args.size() >= 2 ? std::string() : "DEL without a key";
  if (is("PEXPIREAT")) {
    if (args.size() != 3) return "PEXPIREAT record with a wrong number of arguments";
    if (!ParseInt64(args[2])) return "PEXPIREAT with a time that is not an integer";
    return {};
  }
  if (is("PERSIST"))
    return args.size() == 2 ? std::string() : "PERSIST with a wrong number of arguments";
  if (is("FLUSHALL") || is("FLUSHDB")) return {};
  if (is("MULTI") || is("EXEC")) {
    return args.size() == 1 ? std::string() : "MULTI/EXEC record with arguments";
  }
  if (is("SELECT")) {
    if (args.size() == 2 && args[1] == "0") return {};
    return "SELECT of a database other than 0";
  }
  return "unknown command " + quoted() + " in the log";
}

AofReader::Status AofReader::Next(std::string_view in) {
  resp::ParseLimits limits;
  limits.strict = true;
  limits.max_bulk_len = INT32_MAX;
  switch (parser_.Parse(in, limits)) {
    case resp::RequestParser::Result::kNeedMore:
      return Status::kNeedMore;
    case resp::RequestParser::Result::kError:
      // Drop the "ERR Protocol error: " prefix meant for clients.
      error_ = parser_.error();
      if (error_.rfind("ERR Protocol error: ", 0) == 0) error_ = error_.substr(20);
      return Status::kCorrupt;
    case resp::RequestParser::Result::kRequest:
      break;
  }
  if (parser_.args().empty()) {
    error_ = "empty array";
    return Status::kCorrupt;
  }
  error_ = ValidateAofRecord(parser_.args());
  return error_.empty() ? Status::kRecord : Status::kCorrupt;
}

}  // namespace latch
