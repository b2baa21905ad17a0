#include "protocol/reply_parser.h"

#include <cstring>

#include "protocol/text.h"

namespace latch::resp {

namespace {

constexpr int kMaxDepth = 64;

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  size_t pos() const { return pos_; }

  ReplyStatus Read(Reply* out, int depth) {
    if (depth > kMaxDepth) return ReplyStatus::kMalformed;
    if (pos_ >= in_.size()) return ReplyStatus::kIncomplete;
    char type = in_[pos_++];
    std::string_view line;
    if (auto st = Line(&line); st != ReplyStatus::kOk) return st;
    switch (type) {
      case '+':
        out->type = Reply::Type::kSimple;
        out->str.assign(line);
        return ReplyStatus::kOk;
      case '-':
        out->type = Reply::Type::kError;
        out->str.assign(line);
        return ReplyStatus::kOk;
      case ':': {
        auto v = ParseInt64(line);
        if (!v) return ReplyStatus::kMalformed;
        out->type = Reply::Type::kInteger;
        out->integer = *v;
        return ReplyStatus::kOk;
      }
      case ',':
        out->type = Reply::Type::kDouble;
        out->str.assign(line);
        return ReplyStatus::kOk;
      case '(':
        out->type = Reply::Type::kBigNumber;
        out->str.assign(line);
        return ReplyStatus::kOk;
      case '#':
        if (line != "t" && line != "f") return ReplyStatus::kMalformed;
        out->type = Reply::Type::kBoolean;
        out->integer = line == "t" ? 1 : 0;
        return ReplyStatus::kOk;
      case '_':
        out->type = Reply::Type::kNull;
        return ReplyStatus::kOk;
      case '$':
      case '=':
      case '!': {
        auto len = ParseInt64(line);
        if (!len || *len < -1) return ReplyStatus::kMalformed;
        if (*len == -1) {
          out->type = Reply::Type::kNull;
          return ReplyStatus::kOk;
        }
        size_t n = static_cast<size_t>(*len);
        if (in_.size() - pos_ < n + 2) return ReplyStatus::kIncomplete;
        out->type = type == '$'   ? Reply::Type::kBulk
                    : type == '=' ? Reply::Type::kVerbatim
                                  : Reply::Type::kError;
        out->str.assign(in_.substr(pos_, n));
        pos_ += n + 2;
        return ReplyStatus::kOk;
      }
      case '*':
      case '%':
      case '~':
      case '>': {
        auto len = ParseInt64(line);
        if (!len || *len < -1) return ReplyStatus::kMalformed;
        if (*len == -1) {
          out->type = Reply::Type::kNull;
          return ReplyStatus::kOk;
        }
        size_t n = static_cast<size_t>(*len) * (type == '%' ? 2 : 1);
        out->type = type == '*'   ? Reply::Type::kArray
                    : type == '%' ? Reply::Type::kMap
                    : type == '~' ? Reply::Type::kSet
                                  : Reply::Type::kPush;
        out->elements.clear();
        // Don't trust n for a reservation.
        out->elements.reserve(std::min<size_t>(n, 1024));
        for (size_t i = 0; i < n; ++i) {
          out->elements.emplace_back();
          if (auto st = Read(&out->elements.back(), depth + 1); st != ReplyStatus::kOk) return st;
        }
        return ReplyStatus::kOk;
      }
      default:
        return ReplyStatus::kMalformed;
    }
  }

 private:
  ReplyStatus Line(std::string_view* line) {
    const char* start = in_.data() + pos_;
    const char* cr = static_cast<const char*>(std::memchr(start, '\r', in_.size() - pos_));
    if (cr == nullptr) return ReplyStatus::kIncomplete;
    size_t at = static_cast<size_t>(cr - in_.data());
    if (at + 1 >= in_.size()) return ReplyStatus::kIncomplete;
    if (in_[at + 1] != '\n') return ReplyStatus::kMalformed;
    *line = in_.substr(pos_, at - pos_);
    pos_ = at + 2;
    return ReplyStatus::kOk;
  }

  std::string_view in_;
  size_t pos_ = 0;
};

void Render(const Reply& r, std::string& out) {
  switch (r.type) {
    case Reply::Type::kSimple:
      out += r.str;
      break;
    case Reply::Type::kError:
      out += "(error) " + r.str;
      break;
    case Reply::Type::kInteger:
      out += "(integer) " + std::to_string(r.integer);
      break;
    case Reply::Type::kBoolean:
      out += r.integer ? "(true)" : "(false)";
      break;
    case Reply::Type::kNull:
      out += "(nil)";
      break;
    case Reply::Type::kDouble:
    case Reply::Type::kBigNumber:
    case Reply::Type::kBulk:
    case Reply::Type::kVerbatim:
      out += "\"" + r.str + "\"";
      break;
    default:
      out += "[";
      for (size_t i = 0; i < r.elements.size(); ++i) {
        if (i) out += ", ";
        Render(r.elements[i], out);
      }
      out += "]";
  }
}

}  // namespace

std::string Reply::ToString() const {
  std::string out;
  Render(*this, out);
  return out;
}

ReplyStatus ParseReply(std::string_view in, Reply* out, size_t* consumed) {
  Reader reader(in);
  ReplyStatus st = reader.Read(out, 0);
  if (st == ReplyStatus::kOk) *consumed = reader.pos();
  return st;
}

}  // namespace latch::resp
