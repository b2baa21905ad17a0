#include "server/effects.h"

#include "protocol/request_writer.h"
#include "protocol/text.h"

namespace latch {

void AppendSetRecord(std::string& out, std::string_view key, std::string_view value,
                     int64_t unix_deadline_ms) {
  if (unix_deadline_ms == 0) {
    resp::AppendRequest(out, {"SET", key, value});
  } else {
    std::string at;
    AppendInt(at, unix_deadline_ms);
    resp::AppendRequest(out, {"SET", key, value, "PXAT", at});
  }
}

void Effects::Set(std::string_view key, std::string_view value, int64_t unix_deadline_ms) {
  ++count_;
  if (sink_ != nullptr) AppendSetRecord(*sink_, key, value, unix_deadline_ms);
}

void Effects::Del(std::string_view key) {
  ++count_;
  if (sink_ != nullptr) resp::AppendRequest(*sink_, {"DEL", key});
}

void Effects::PExpireAt(std::string_view key, int64_t unix_ms) {
  ++count_;
  if (sink_ == nullptr) return;
  std::string at;
  AppendInt(at, unix_ms);
  resp::AppendRequest(*sink_, {"PEXPIREAT", key, at});
}

void Effects::Persist(std::string_view key) {
  ++count_;
  if (sink_ != nullptr) resp::AppendRequest(*sink_, {"PERSIST", key});
}

void Effects::FlushAll() {
  ++count_;
  if (sink_ != nullptr) resp::AppendRequest(*sink_, {"FLUSHALL"});
}

}  // namespace latch
