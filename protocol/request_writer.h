// Encodes requests as RESP multibulk arrays: what clients send, and what the
// append-only log stores (the log is a sequence of such requests).
#pragma once

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace latch::resp {

// Appends `*N\r\n$len\r\narg\r\n…` for the given arguments.
void AppendRequest(std::string& out, std::initializer_list<std::string_view> args);
void AppendRequest(std::string& out, std::span<const std::string_view> args);
void AppendRequest(std::string& out, std::span<const std::string> args);

// Begins an array of n elements, for callers that append bulks one by one.
void AppendArrayHeader(std::string& out, size_t n);
void AppendBulk(std::string& out, std::string_view arg);

}  // namespace latch::resp
