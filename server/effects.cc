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

bool Effects::Note(std::string_view key) {
  ++count_;
  if (observer_) observer_(key);
  if (sink_ == nullptr) return false;
  if (transaction_ == kOpenNotLogged) {
    resp::AppendRequest(*sink_, {"MULTI"});
    transaction_ = kOpenLogged;
  }
  return true;
}

void Effects::EndTransaction() {
  if (transaction_ == kOpenLogged && sink_ != nullptr) resp::AppendRequest(*sink_, {"EXEC"});
  transaction_ = kNone;
}

void Effects::Set(std::string_view key, std::string_view value, int64_t unix_deadline_ms) {
  if (Note(key)) AppendSetRecord(*sink_, key, value, unix_deadline_ms);
}

void Effects::Del(std::string_view key) {
  if (Note(key)) resp::AppendRequest(*sink_, {"DEL", key});
}

void Effects::PExpireAt(std::string_view key, int64_t unix_ms) {
  if (!Note(key)) return;
  std::string at;
  AppendInt(at, unix_ms);
  resp::AppendRequest(*sink_, {"PEXPIREAT", key, at});
}

void Effects::Persist(std::string_view key) {
  if (Note(key)) resp::AppendRequest(*sink_, {"PERSIST", key});
}

void Effects::FlushAll() {
  if (Note("")) resp::AppendRequest(*sink_, {"FLUSHALL"});
}

}  // namespace latch
