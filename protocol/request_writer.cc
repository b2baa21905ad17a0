#include "protocol/request_writer.h"

#include "protocol/text.h"

namespace latch::resp {

void AppendArrayHeader(std::string& out, size_t n) {
  out.push_back('*');
  AppendInt(out, static_cast<int64_t>(n));
  out.append("\r\n");
}

void AppendBulk(std::string& out, std::string_view arg) {
  out.push_back('$');
  AppendInt(out, static_cast<int64_t>(arg.size()));
  out.append("\r\n");
  out.append(arg);
  out.append("\r\n");
}

void AppendRequest(std::string& out, std::initializer_list<std::string_view> args) {
  AppendArrayHeader(out, args.size());
  for (std::string_view a : args) AppendBulk(out, a);
}

void AppendRequest(std::string& out, std::span<const std::string_view> args) {
  AppendArrayHeader(out, args.size());
  for (std::string_view a : args) AppendBulk(out, a);
}

void AppendRequest(std::string& out, std::span<const std::string> args) {
  AppendArrayHeader(out, args.size());
  for (const std::string& a : args) AppendBulk(out, a);
}

}  // namespace latch::resp
