#include "tools/history/json_lines.h"

#include <cstdlib>

namespace latch::history {

namespace {

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  std::optional<JsonObject> Object(std::string* error) {
    JsonObject out;
    Space();
    if (!Eat('{')) return Fail(error, "expected '{'");
    Space();
    if (Eat('}')) return Trailing(error) ? std::optional(out) : std::nullopt;
    while (true) {
      Space();
      std::string name;
      if (!String(name)) return Fail(error, "expected a field name");
      Space();
      if (!Eat(':')) return Fail(error, "expected ':' after \"" + name + "\"");
      Space();
      JsonValue v;
      if (!Value(v)) return Fail(error, "bad value for \"" + name + "\"" + why_);
      out[name] = std::move(v);
      Space();
      if (Eat(',')) continue;
      if (Eat('}')) break;
      return Fail(error, "expected ',' or '}'");
    }
    if (!Trailing(error)) return std::nullopt;
    return out;
  }

 private:
  std::optional<JsonObject> Fail(std::string* error, const std::string& what) {
    if (error != nullptr) *error = what + " at column " + std::to_string(pos_ + 1);
    return std::nullopt;
  }
  bool Trailing(std::string* error) {
    Space();
    if (pos_ == s_.size()) return true;
    Fail(error, "unexpected text after the object");
    return false;
  }
  void Space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Word(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  static void Utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  bool String(std::string& out) {
    if (!Eat('"')) return false;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return false;
      char e = s_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return false;
          uint32_t cp = 0;
          for (int i = 0; i < 4; ++i) {
            int h = Hex(s_[pos_++]);
            if (h < 0) return false;
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          // \u0000-\u00ff stand for one byte each (the server's history
          // writes bytes that way); above, a code point in UTF-8.
          if (cp < 0x100) {
            out += static_cast<char>(cp);
          } else {
            Utf8(out, cp);
          }
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }
  bool Value(JsonValue& v) {
    why_.clear();
    if (pos_ >= s_.size()) return false;
    char c = s_[pos_];
    if (c == '"') {
      v.type = JsonValue::kString;
      return String(v.text);
    }
    if (Word("true")) {
      v.type = JsonValue::kBool;
      v.boolean = true;
      return true;
    }
    if (Word("false")) {
      v.type = JsonValue::kBool;
      return true;
    }
    if (Word("null")) return true;
    if (c == '{' || c == '[') {
      why_ = " (nested objects and arrays are not part of the format)";
      return false;
    }
    // A number: strtod on a bounded copy, which must consume all of it.
    size_t end = pos_;
    while (end < s_.size() &&
           std::string_view("+-0123456789.eE").find(s_[end]) != std::string::npos) {
      ++end;
    }
    if (end == pos_) return false;
    std::string num(s_.substr(pos_, end - pos_));
    char* stop = nullptr;
    v.number = std::strtod(num.c_str(), &stop);
    if (stop != num.c_str() + num.size()) return false;
    v.type = JsonValue::kNumber;
    pos_ = end;
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string why_;
};

}  // namespace

std::optional<JsonObject> ParseJsonObject(std::string_view line, std::string* error) {
  return Parser(line).Object(error);
}

std::string GetString(const JsonObject& o, std::string_view name, std::string fallback) {
  auto it = o.find(name);
  if (it == o.end()) return fallback;
  if (it->second.type == JsonValue::kString) return it->second.text;
  if (it->second.type == JsonValue::kNumber) {
    // A number where a token was expected (an integer token): its text.
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", it->second.number);
    return buf;
  }
  return fallback;
}

std::optional<double> GetNumber(const JsonObject& o, std::string_view name) {
  auto it = o.find(name);
  if (it == o.end() || it->second.type != JsonValue::kNumber) return std::nullopt;
  return it->second.number;
}

}  // namespace latch::history
