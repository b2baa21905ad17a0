#include "protocol/reply_writer.h"

#include <cmath>
#include <cstdio>

#include "protocol/text.h"

namespace latch::resp {

void ReplyWriter::Header(char type, int64_t n) {
  out_->push_back(type);
  AppendInt(*out_, n);
  out_->append("\r\n");
}

void ReplyWriter::Simple(std::string_view s) {
  out_->push_back('+');
  out_->append(s);
  out_->append("\r\n");
}

void ReplyWriter::Error(std::string_view text) {
  CountError(text);
  size_t start = out_->size();
  out_->push_back('-');
  out_->append(text);
  for (size_t i = start; i < out_->size(); ++i) {
    char& c = (*out_)[i];
    if (c == '\r' || c == '\n') c = ' ';
  }
  out_->append("\r\n");
}

void ReplyWriter::Int(int64_t v) {
  Header(':', v);
}

void ReplyWriter::Bulk(std::string_view s) {
  Header('$', static_cast<int64_t>(s.size()));
  out_->append(s);
  out_->append("\r\n");
}

void ReplyWriter::Null() {
  out_->append(resp3_ ? "_\r\n" : "$-1\r\n");
}

void ReplyWriter::NullArray() {
  out_->append(resp3_ ? "_\r\n" : "*-1\r\n");
}

void ReplyWriter::Array(size_t n) {
  Header('*', static_cast<int64_t>(n));
}

void ReplyWriter::Map(size_t pairs) {
  if (resp3_) {
    Header('%', static_cast<int64_t>(pairs));
  } else {
    Header('*', static_cast<int64_t>(pairs * 2));
  }
}

void ReplyWriter::Set(size_t n) {
  Header(resp3_ ? '~' : '*', static_cast<int64_t>(n));
}

void ReplyWriter::Push(size_t n) {
  Header(resp3_ ? '>' : '*', static_cast<int64_t>(n));
}

void ReplyWriter::Double(double v) {
  char buf[64];
  int len;
  if (std::isinf(v)) {
    len = std::snprintf(buf, sizeof(buf), "%s", v > 0 ? "inf" : "-inf");
  } else {
    len = std::snprintf(buf, sizeof(buf), "%.17g", v);
  }
  std::string_view text(buf, static_cast<size_t>(len));
  if (resp3_) {
    out_->push_back(',');
    out_->append(text);
    out_->append("\r\n");
  } else {
    Bulk(text);
  }
}

void ReplyWriter::Bool(bool v) {
  if (resp3_) {
    out_->append(v ? "#t\r\n" : "#f\r\n");
  } else {
    out_->append(v ? ":1\r\n" : ":0\r\n");
  }
}

void ReplyWriter::Verbatim(std::string_view format, std::string_view text) {
  if (!resp3_) {
    Bulk(text);
    return;
  }
  Header('=', static_cast<int64_t>(text.size() + format.size() + 1));
  out_->append(format);
  out_->push_back(':');
  out_->append(text);
  out_->append("\r\n");
}

void ReplyWriter::BigNumber(std::string_view digits) {
  if (!resp3_) {
    Bulk(digits);
    return;
  }
  out_->push_back('(');
  out_->append(digits);
  out_->append("\r\n");
}

}  // namespace latch::resp
