#include "log/record.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <ctime>

#include "protocol/request_writer.h"
#include "protocol/text.h"

namespace latch::aof {

namespace {

std::string Itoa(int64_t v) {
  std::string s;
  AppendInt(s, v);
  return s;
}

}  // namespace

void Batch::Set(std::string_view key, std::string_view value, int64_t unix_ms) {
  if (unix_ms == 0) {
    resp::AppendRequest(rep_, {"SET", key, value});
  } else {
    char digits[24];  // the time on the stack, not in a string of its own
    const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), unix_ms);
    (void)ec;
    resp::AppendRequest(rep_, {"SET", key, value, "PXAT", std::string_view(digits, end - digits)});
  }
}

void Batch::Del(std::string_view key) {
  resp::AppendRequest(rep_, {"DEL", key});
}

void Batch::PExpireAt(std::string_view key, int64_t unix_ms) {
  resp::AppendRequest(rep_, {"PEXPIREAT", key, Itoa(unix_ms)});
}

void Batch::Persist(std::string_view key) {
  resp::AppendRequest(rep_, {"PERSIST", key});
}

void Batch::FlushAll() {
  resp::AppendRequest(rep_, {"FLUSHALL"});
}

void Batch::FlushDb() {
  resp::AppendRequest(rep_, {"FLUSHDB"});
}

void Batch::SwapDb(int64_t a, int64_t b) {
  resp::AppendRequest(rep_, {"SWAPDB", Itoa(a), Itoa(b)});
}

void Batch::Select(int64_t db) {
  resp::AppendRequest(rep_, {"SELECT", Itoa(db)});
}

void Batch::Multi() {
  resp::AppendRequest(rep_, {"MULTI"});
  open_multi_ = true;
}

void Batch::InsertMulti(size_t offset) {
  std::string multi;
  resp::AppendRequest(multi, {"MULTI"});
  rep_.insert(offset, multi);
  open_multi_ = true;
}

void Batch::Exec() {
  resp::AppendRequest(rep_, {"EXEC"});
  open_multi_ = false;
}

void Batch::Clock(const ClockMark& mark) {
  rep_ += "#latch-clock ";
  rep_ += mark.clock_id;
  rep_ += ' ';
  AppendInt(rep_, mark.boot_ms);
  rep_ += ' ';
  AppendInt(rep_, mark.unix_ms);
  rep_ += "\r\n";
}

void Batch::LogId(std::string_view id) {
  rep_ += "#latch-log ";
  rep_ += id;
  rep_ += "\r\n";
}

std::string NewLogId() {
  uint64_t v = 0;
  if (::getrandom(&v, sizeof(v), 0) != sizeof(v)) {
    // No entropy source: the time and the pid still make a collision with an
    // older log of this directory very unlikely.
    v = static_cast<uint64_t>(::time(nullptr)) * 1'000'003u ^ static_cast<uint64_t>(::getpid());
  }
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

LogIdentity ReadLogIdentity(const std::string& path) {
  LogIdentity out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  out.exists = true;
  struct stat st {};
  if (::fstat(fd, &st) == 0) out.size = static_cast<uint64_t>(st.st_size);
  char buf[64];
  ssize_t n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  constexpr std::string_view kPrefix = "#latch-log ";
  std::string_view head(buf, n > 0 ? static_cast<size_t>(n) : 0);
  if (head.substr(0, kPrefix.size()) == kPrefix) {
    size_t end = head.find("\r\n");
    if (end != std::string_view::npos)
      out.id = std::string(head.substr(kPrefix.size(), end - kPrefix.size()));
  }
  return out;
}

void Batch::Fence(uint64_t token) {
  rep_ += "#latch-fence ";
  AppendInt(rep_, static_cast<int64_t>(token));
  rep_ += "\r\n";
}

void Batch::FunctionLoad(std::string_view code) {
  Append(Op::kFunctionLoad, {"LOAD", "REPLACE", code});
}

void Batch::FunctionDelete(std::string_view name) {
  Append(Op::kFunctionDelete, {"DELETE", name});
}

void Batch::FunctionFlush() {
  Append(Op::kFunctionFlush, {"FLUSH"});
}

std::optional<uint64_t> DecodeFenceAnnotation(std::string_view line) {
  constexpr std::string_view kPrefix = "#latch-fence ";
  if (line.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  auto v = ParseInt64(line.substr(kPrefix.size()));
  if (!v || *v <= 0) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

namespace {

constexpr KindInfo kKinds[] = {
#define LATCH_RECORD_INFO(name, word, min, max, step) {word, min, max, step},
    LATCH_RECORD_KINDS(LATCH_RECORD_INFO)
#undef LATCH_RECORD_INFO
};

}  // namespace

const KindInfo& Kind(Op op) {
  return kKinds[static_cast<size_t>(op)];
}

std::optional<Op> KindOf(std::string_view word) {
  for (size_t i = 0; i < std::size(kKinds); ++i) {
    if (!kKinds[i].annotation() && EqualsIgnoreCase(kKinds[i].word, word)) return Op(i);
  }
  return std::nullopt;
}

void Visit(const Record& r, Handler& h) {
  switch (r.op) {
#define LATCH_RECORD_VISIT(name, word, min, max, step) \
  case Op::k##name:                                    \
    h.name(r);                                         \
    return;
    LATCH_RECORD_KINDS(LATCH_RECORD_VISIT)
#undef LATCH_RECORD_VISIT
  }
}

void Batch::Append(Op op, std::string_view key, std::span<const std::string_view> rest) {
  // *N, the word, the key, the rest: as resp::AppendRequest writes them.
  rep_ += '*';
  AppendInt(rep_, static_cast<int64_t>(rest.size() + 2));
  rep_ += "\r\n";
  auto bulk = [&](std::string_view b) {
    rep_ += '$';
    AppendInt(rep_, static_cast<int64_t>(b.size()));
    rep_ += "\r\n";
    rep_.append(b);
    rep_ += "\r\n";
  };
  bulk(Kind(op).word);
  bulk(key);
  for (std::string_view b : rest) bulk(b);
}

void Batch::Append(Op op, std::initializer_list<std::string_view> args) {
  std::string_view words[16];
  size_t n = 0;
  words[n++] = Kind(op).word;
  for (std::string_view a : args) words[n++] = a;
  resp::AppendRequest(rep_, std::span<const std::string_view>(words, n));
}

// Each kind's own rules, once its shape (the number of words) is known to
// be what record_kinds.h says.
std::string Decode(std::span<const std::string_view> args, Record* out) {
  *out = Record{};
  if (args.empty()) return "empty record";
  std::optional<Op> op = KindOf(args[0]);
  if (!op) return "unknown command '" + std::string(args[0].substr(0, 64)) + "' in the log";
  const KindInfo& kind = Kind(*op);
  const int words = static_cast<int>(args.size());
  const bool shaped =
      words >= kind.min_words &&
      (kind.max_words >= 0 ? words <= kind.max_words : (words - kind.min_words) % kind.step == 0);
  out->op = *op;
  out->args = args;
  if (words >= 2) out->key = args[1];
  switch (*op) {
    case Op::kSet:
      if (words == 3 || (words == 5 && EqualsIgnoreCase(args[3], "PXAT"))) {
        out->value = args[2];
        if (words == 5) {
          auto at = ParseInt64(args[4]);
          if (!at) return "SET with a PXAT that is not an integer";
          // 0 would read as "no lease": PXAT 0 is an instant long past, as is 1.
          out->unix_ms = *at == 0 ? -1 : *at;
        }
        return {};
      }
      return "SET record with unexpected arguments (expected SET key value [PXAT ms])";
    case Op::kDel:
      if (!shaped) return "DEL without a key";
      out->keys = args.subspan(1);
      return {};
    case Op::kPExpireAt: {
      if (!shaped) return "PEXPIREAT record with a wrong number of arguments";
      auto at = ParseInt64(args[2]);
      if (!at) return "PEXPIREAT with a time that is not an integer";
      out->unix_ms = *at;
      return {};
    }
    case Op::kPersist:
      if (!shaped) return "PERSIST with a wrong number of arguments";
      return {};
    case Op::kFlushAll:
    case Op::kFlushDb:
      // (Redis writes FLUSHALL and FLUSHDB with an ASYNC or SYNC some day:
      // the effect is the same.)
      out->key = {};
      return {};
    case Op::kSwapDb: {
      auto a = words == 3 ? ParseInt64(args[1]) : std::nullopt;
      auto b = words == 3 ? ParseInt64(args[2]) : std::nullopt;
      if (!a || !b || *a < 0 || *b < 0 || *a > INT32_MAX || *b > INT32_MAX) {
        return "SWAPDB record with arguments that are not two database numbers";
      }
      out->key = {};
      out->db = *a;
      out->db2 = *b;
      return {};
    }
    case Op::kMulti:
    case Op::kExec:
      if (!shaped) return "MULTI/EXEC record with arguments";
      return {};
    case Op::kSelect: {
      auto db = words == 2 ? ParseInt64(args[1]) : std::nullopt;
      if (!db || *db < 0 || *db > INT32_MAX) return "SELECT record without a database number";
      out->key = {};
      out->db = *db;
      return {};
    }
    case Op::kRename:
      if (!shaped) return "RENAME record with a wrong number of arguments";
      return {};
    case Op::kFunctionLoad:
    case Op::kFunctionDelete:
    case Op::kFunctionFlush:
      // One word for three kinds (KindOf names the first): the subcommand
      // says which. As latch writes them, and as Redis's AOF holds them
      // (LOAD without REPLACE, FLUSH with its mode).
      out->key = {};
      if (words >= 3 && EqualsIgnoreCase(args[1], "LOAD")) {
        bool replace = words == 4 && EqualsIgnoreCase(args[2], "REPLACE");
        if (words == 3 || replace) {
          out->op = Op::kFunctionLoad;
          out->value = args.back();
          return {};
        }
      } else if (words == 3 && EqualsIgnoreCase(args[1], "DELETE")) {
        out->op = Op::kFunctionDelete;
        out->key = args[2];
        return {};
      } else if (words >= 2 && words <= 3 && EqualsIgnoreCase(args[1], "FLUSH")) {
        out->op = Op::kFunctionFlush;
        return {};
      }
      return "FUNCTION record with unexpected arguments";
    case Op::kHSet:
      if (!shaped) return "HSET record without field value pairs";
      return {};
    case Op::kHDel:
      if (!shaped) return "HDEL record without a field";
      return {};
    case Op::kSAdd:
    case Op::kSRem:
      if (!shaped) return std::string(kind.word) + " record without a member";
      return {};
    case Op::kZAdd:
      // Each score as Redis's ZADD reads it (string2d): no NaN, no junk.
      if (!shaped) return "ZADD record without score-member pairs";
      for (size_t i = 2; i < args.size(); i += 2) {
        if (!ParseDoubleArg(args[i])) return "ZADD record with a score that is not a float";
      }
      return {};
    case Op::kZRem:
      if (!shaped) return "ZREM record without a member";
      return {};
    case Op::kRPush:
    case Op::kLPush:
      if (!shaped) return "list push record without an element";
      return {};
    case Op::kLPop:
    case Op::kRPop: {
      if (!shaped) return "list pop record with a wrong number of arguments";
      // latch writes the count it removed; Redis writes a single pop without one.
      auto n = words == 3 ? ParseInt64(args[2]) : std::optional<int64_t>(1);
      if (!n || *n <= 0) return "list pop record with a count that is not a positive integer";
      return {};
    }
    case Op::kLSet:
      if (!shaped || !ParseInt64(args[2])) return "LSET record without an integer index";
      return {};
    case Op::kLInsert:
      if (!shaped || !(EqualsIgnoreCase(args[2], "BEFORE") || EqualsIgnoreCase(args[2], "AFTER"))) {
        return "LINSERT record without BEFORE or AFTER";
      }
      return {};
    case Op::kLRem:
      if (!shaped || !ParseInt64(args[2])) return "LREM record without an integer count";
      return {};
    case Op::kLTrim:
      if (!shaped || !ParseInt64(args[2]) || !ParseInt64(args[3])) {
        return "LTRIM record without integer indexes";
      }
      return {};
    case Op::kClock:
    case Op::kFence:
      break;  // annotations are lines, not commands (KindOf never names them)
  }
  return "unknown command '" + std::string(args[0].substr(0, 64)) + "' in the log";
}

std::optional<ClockMark> DecodeClockAnnotation(std::string_view line) {
  constexpr std::string_view kPrefix = "#latch-clock ";
  if (line.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  line.remove_prefix(kPrefix.size());
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) return std::nullopt;
  size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return std::nullopt;
  auto boot = ParseInt64(line.substr(sp1 + 1, sp2 - sp1 - 1));
  auto wall = ParseInt64(line.substr(sp2 + 1));
  if (!boot || !wall) return std::nullopt;
  ClockMark m;
  m.clock_id = std::string(line.substr(0, sp1));
  m.boot_ms = *boot;
  m.unix_ms = *wall;
  return m;
}

}  // namespace latch::aof
