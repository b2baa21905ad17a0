#include "protocol/request_writer.h"

#include <cstring>

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

namespace {

size_t Digits(size_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// Writes `v` (Digits(v) of them) ending just before `end`.
void PutDigits(char* end, size_t v) {
  do {
    *--end = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
}

}  // namespace

// A whole request sized first and written in one pass: every record a grant
// logs goes through here (the string grows once, not per piece).
void AppendRequest(std::string& out, std::span<const std::string_view> args) {
  size_t total = 1 + Digits(args.size()) + 2;
  for (std::string_view a : args) total += 1 + Digits(a.size()) + 2 + a.size() + 2;
  const size_t at = out.size();
  out.resize(at + total);
  char* p = out.data() + at;
  auto header = [&p](char kind, size_t n) {
    *p++ = kind;
    const size_t d = Digits(n);
    PutDigits(p + d, n);
    p += d;
    *p++ = '\r';
    *p++ = '\n';
  };
  header('*', args.size());
  for (std::string_view a : args) {
    header('$', a.size());
    if (!a.empty()) std::memcpy(p, a.data(), a.size());
    p += a.size();
    *p++ = '\r';
    *p++ = '\n';
  }
}

void AppendRequest(std::string& out, std::initializer_list<std::string_view> args) {
  AppendRequest(out, std::span<const std::string_view>(args.begin(), args.size()));
}

void AppendRequest(std::string& out, std::span<const std::string> args) {
  AppendArrayHeader(out, args.size());
  for (const std::string& a : args) AppendBulk(out, a);
}

}  // namespace latch::resp
