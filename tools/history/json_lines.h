// The JSON the histories are written in: one flat object per line, whose
// values are strings, numbers, booleans or null. That is all the formats
// here need (docs/testbench.md), so this is a small exact parser for that
// subset rather than a dependency: nested objects and arrays are refused
// with a clear error, never half-read.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/json_string.h"

namespace latch::history {

struct JsonValue {
  enum Type { kNull, kBool, kNumber, kString } type = kNull;
  bool boolean = false;
  double number = 0;
  std::string text;
};

using JsonObject = std::map<std::string, JsonValue, std::less<>>;

// Parses one line holding one flat object. nullopt with `error` set when it
// is not one.
std::optional<JsonObject> ParseJsonObject(std::string_view line, std::string* error);

// `s` as a JSON string, quotes included (common/json_string.h: the server's
// history writes with the same function).
using ::latch::AppendJsonString;

// Accessors that tolerate a missing or differently typed field.
std::string GetString(const JsonObject& o, std::string_view name, std::string fallback = "");
std::optional<double> GetNumber(const JsonObject& o, std::string_view name);

}  // namespace latch::history
