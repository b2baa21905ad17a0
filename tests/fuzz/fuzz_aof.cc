// Fuzz target: the append-only log's reader (log/reader.h) and the replay
// (server/replay.h, Store::Replay). A log is read back after crashes, full
// disks and hand edits: whatever its bytes, loading must end in "loaded",
// "tail cut off" or a clear refusal, never in a crash or a half-understood
// record.
//
// Input: a flags byte, then the bytes of the log file.
//   flags bit 0: aof-load-truncated yes (else no)
//
// Each run:
//  1. frames the bytes with a model written here, from the format's rules
//     (RESP arrays cut by the strict request parser and checked by
//     aof::Decode; '#' lines are annotations, the latch-clock one decoded;
//     MULTI … EXEC applied as a whole, a fence annotation with the SET that
//     must follow it), applying records to a simple map per database (16,
//     the default; a unit that names a database past them refuses the load
//     there);
//  2. reads the same bytes with aof::Reader and checks it agrees with the
//     model: the same records in the same units, the same safe offset, the
//     same verdict (end, truncated tail, corruption);
//  3. writes them to a file and replays it into a Store, and checks that the
//     replay stops where the model does (corruption reported at its offset,
//     the tail cut off there or refused with aof-load-truncated no), and that
//     the keyspace holds what the model holds: keys, values, deadlines,
//     fencing tokens.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "log/reader.h"
#include "log/record.h"
#include "protocol/request_parser.h"
#include "protocol/text.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/replay.h"
#include "server/store.h"
#include "server/types/hash.h"
#include "server/types/list.h"
#include "server/types/set.h"
#include "server/types/value_ref.h"
#include "server/types/zset.h"

namespace {

constexpr const char* kClockId = "fuzz-clock";

void Check(bool ok, const char* what, std::string_view detail = {}) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_aof: property violated: %s\n%.*s\n", what,
                 static_cast<int>(detail.size()), detail.data());
    std::abort();
  }
}

std::string TempPath() {
  static std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string p =
        std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/latch-fuzz-aof-XXXXXX";
    int fd = ::mkstemp(p.data());
    Check(fd >= 0, "mkstemp failed");
    ::close(fd);
    static std::string to_remove;
    to_remove = p;
    std::atexit([] { ::unlink(to_remove.c_str()); });
    return p;
  }();
  return path;
}

void WriteFile(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  Check(fd >= 0, "cannot open the temporary file");
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    Check(n > 0, "cannot write the temporary file");
    off += static_cast<size_t>(n);
  }
  ::close(fd);
}

constexpr int kDatabases = 16;

// One key of the model.
struct ModelEntry {
  latch::ValueType type = latch::ValueType::kString;
  std::string value;                        // a string
  std::map<std::string, std::string> hash;  // a hash: field → value
  std::set<std::string> set;                // a set's members
  int64_t deadline = latch::kNoDeadline;
  uint64_t token = 0;  // fencing token (0: none)
  // A sorted set (ZADD, ZREM): member → score.
  std::map<std::string, double, std::less<>> zset;
  // A list (the list records): its elements, head first.
  std::deque<std::string> list;
};

// The model: (database, key) → entry, the selected database, the clock
// relation in force, and the token a fence annotation gives the SET that
// follows it.
struct Model {
  using Keys = std::map<std::string, ModelEntry, std::less<>>;
  Keys dbs[kDatabases];
  int db = 0;
  Keys& keys() { return dbs[db]; }
  bool have_mark = false;
  std::string mark_id;
  int64_t mark_offset = 0;
  uint64_t pending_token = 0;
};

int64_t NonZero(int64_t d) {
  return d == latch::kNoDeadline ? -1 : d;
}

// After the last record: every lease that has ended is gone.
void Expire(Model& m, latch::TimeSnapshot now) {
  for (Model::Keys& keys : m.dbs) {
    for (auto it = keys.begin(); it != keys.end();) {
      if (it->second.deadline != latch::kNoDeadline && now.mono > it->second.deadline) {
        it = keys.erase(it);
      } else {
        ++it;
      }
    }
  }
}

// Whether the record names a database the server (kDatabases) lacks.
bool BeyondDatabases(const latch::aof::Record& r) {
  using latch::aof::Op;
  return (r.op == Op::kSelect && r.db >= kDatabases) ||
         (r.op == Op::kSwapDb && (r.db >= kDatabases || r.db2 >= kDatabases));
}

int64_t ModelDeadline(const Model& m, int64_t unix_ms, latch::TimeSnapshot now) {
  if (m.have_mark && m.mark_id == kClockId) return unix_ms - m.mark_offset;
  return now.MonoFromWall(unix_ms);  // no foreign bound in this target
}

// The model's side of each record kind (log/record_kinds.h): a kind the
// model lacks does not compile.
class ModelApplier final : public latch::aof::Handler {
 public:
  using Record = latch::aof::Record;
  ModelApplier(Model& m, latch::TimeSnapshot now) : m_(m), now_(now) {}

  void Clock(const Record& r) override {
    m_.have_mark = true;
    m_.mark_id = r.clock.clock_id;
    m_.mark_offset = r.clock.unix_ms - r.clock.boot_ms;
  }
  void Fence(const Record& r) override { m_.pending_token = r.token; }
  void Set(const Record& r) override {
    // Ended leases stay until the end of the replay (a later record may
    // extend them): Expire() below.
    int64_t deadline = latch::kNoDeadline;
    if (r.unix_ms != 0) deadline = NonZero(ModelDeadline(m_, r.unix_ms, now_));
    ModelEntry e;
    e.value = std::string(r.value);
    e.deadline = deadline;
    e.token = m_.pending_token;
    m_.keys()[std::string(r.key)] = std::move(e);
    m_.pending_token = 0;
  }
  void Del(const Record& r) override {
    for (std::string_view k : r.keys) m_.keys().erase(std::string(k));
  }
  void PExpireAt(const Record& r) override {
    auto it = m_.keys().find(r.key);
    if (it != m_.keys().end()) it->second.deadline = NonZero(ModelDeadline(m_, r.unix_ms, now_));
  }
  void Persist(const Record& r) override {
    auto it = m_.keys().find(r.key);
    if (it != m_.keys().end()) it->second.deadline = latch::kNoDeadline;
  }
  void FlushAll(const Record&) override {
    for (Model::Keys& keys : m_.dbs) keys.clear();
  }
  void FlushDb(const Record&) override { m_.keys().clear(); }
  void SwapDb(const Record& r) override {
    std::swap(m_.dbs[r.db], m_.dbs[r.db2]);
    if (r.db != r.db2) {  // keys that change database lose their tokens
      for (auto db : {r.db, r.db2}) {
        for (auto& kv : m_.dbs[db]) kv.second.token = 0;
      }
    }
  }
  void Select(const Record& r) override { m_.db = static_cast<int>(r.db); }
  void Multi(const Record&) override {}
  void Exec(const Record&) override {}
  void Rename(const Record& r) override {
    auto it = m_.keys().find(r.args[1]);
    if (it == m_.keys().end()) return;
    ModelEntry moved = std::move(it->second);
    moved.token = 0;  // another name is another lock
    m_.keys().erase(it);
    m_.keys()[std::string(r.args[2])] = std::move(moved);
  }
  // Libraries: the script engine's, not the keys'.
  void FunctionLoad(const Record&) override {}
  void FunctionDelete(const Record&) override {}
  void FunctionFlush(const Record&) override {}
  // A collection record on a key of another type changes nothing (the
  // replay skips it, as Redis's loader skips a command that fails); one
  // that empties its collection removes the key.
  void HSet(const Record& r) override {
    ModelEntry* e = Collection(r.key, latch::ValueType::kHash, true);
    if (e == nullptr) return;
    for (size_t i = 2; i + 1 < r.args.size(); i += 2) {
      e->hash[std::string(r.args[i])] = std::string(r.args[i + 1]);
    }
  }
  void HDel(const Record& r) override {
    ModelEntry* e = Collection(r.key, latch::ValueType::kHash, false);
    if (e == nullptr) return;
    for (size_t i = 2; i < r.args.size(); ++i) e->hash.erase(std::string(r.args[i]));
    if (e->hash.empty()) m_.keys().erase(std::string(r.key));
  }
  void SAdd(const Record& r) override {
    ModelEntry* e = Collection(r.key, latch::ValueType::kSet, true);
    if (e == nullptr) return;
    for (size_t i = 2; i < r.args.size(); ++i) e->set.emplace(r.args[i]);
  }
  void SRem(const Record& r) override {
    ModelEntry* e = Collection(r.key, latch::ValueType::kSet, false);
    if (e == nullptr) return;
    for (size_t i = 2; i < r.args.size(); ++i) e->set.erase(std::string(r.args[i]));
    if (e->set.empty()) m_.keys().erase(std::string(r.key));
  }
  // A record for a key of another type is skipped (the Store refuses it and
  // the replay goes on), as is a ZREM of a key that does not exist.
  void ZAdd(const Record& r) override {
    ModelEntry* e = Collection(r.key, latch::ValueType::kZSet, true);
    if (e == nullptr) return;
    for (size_t i = 2; i + 1 < r.args.size(); i += 2) {
      e->zset[std::string(r.args[i + 1])] = *latch::ParseDoubleArg(r.args[i]);
    }
  }
  void ZRem(const Record& r) override {
    ModelEntry* e = Collection(r.key, latch::ValueType::kZSet, false);
    if (e == nullptr) return;
    for (size_t i = 2; i < r.args.size(); ++i) e->zset.erase(std::string(r.args[i]));
    if (e->zset.empty()) m_.keys().erase(std::string(r.key));
  }

  // Lists: a deque per key. A list record on a key of another type changes
  // nothing (the replay skips it); an emptied list is no key.
  void RPush(const Record& r) override { Push(r, false); }
  void LPush(const Record& r) override { Push(r, true); }
  void LPop(const Record& r) override { Pop(r, true); }
  void RPop(const Record& r) override { Pop(r, false); }
  void LSet(const Record& r) override {
    std::deque<std::string>* l = List(r.key);
    int64_t i = *latch::ParseInt64(r.args[2]);
    if (l == nullptr) return;
    if (i < 0) i += static_cast<int64_t>(l->size());
    if (i >= 0 && i < static_cast<int64_t>(l->size())) (*l)[i] = std::string(r.args[3]);
  }
  void LInsert(const Record& r) override {
    std::deque<std::string>* l = List(r.key);
    if (l == nullptr) return;
    auto it = std::find(l->begin(), l->end(), r.args[3]);
    if (it == l->end()) return;
    if (latch::EqualsIgnoreCase(r.args[2], "AFTER")) ++it;
    l->insert(it, std::string(r.args[4]));
  }
  void LRem(const Record& r) override {
    std::deque<std::string>* l = List(r.key);
    if (l == nullptr) return;
    int64_t count = *latch::ParseInt64(r.args[2]);
    uint64_t limit = count < 0 ? 0 - static_cast<uint64_t>(count) : static_cast<uint64_t>(count);
    uint64_t removed = 0;
    std::deque<std::string> kept;
    if (count >= 0) {
      for (auto& e : *l) {
        if (e == r.args[3] && (limit == 0 || removed < limit)) {
          ++removed;
        } else {
          kept.push_back(std::move(e));
        }
      }
    } else {
      for (auto it = l->rbegin(); it != l->rend(); ++it) {
        if (*it == r.args[3] && removed < limit) {
          ++removed;
        } else {
          kept.push_front(std::move(*it));
        }
      }
    }
    *l = std::move(kept);
    DropIfEmpty(r.key);
  }
  void LTrim(const Record& r) override {
    std::deque<std::string>* l = List(r.key);
    if (l == nullptr) return;
    int64_t n = static_cast<int64_t>(l->size());
    int64_t start = *latch::ParseInt64(r.args[2]), stop = *latch::ParseInt64(r.args[3]);
    if (start < 0) start += n;
    if (stop < 0) stop += n;
    if (start < 0) start = 0;
    if (start > stop || start >= n) {
      l->clear();
    } else {
      if (stop >= n) stop = n - 1;
      *l = std::deque<std::string>(l->begin() + start, l->begin() + stop + 1);
    }
    DropIfEmpty(r.key);
  }

 private:
  // The key's entry if it holds `type` (created when absent and `create`).
  ModelEntry* Collection(std::string_view key, latch::ValueType type, bool create) {
    auto it = m_.keys().find(key);
    if (it == m_.keys().end()) {
      if (!create) return nullptr;
      ModelEntry e;
      e.type = type;
      return &(m_.keys()[std::string(key)] = std::move(e));
    }
    return it->second.type == type ? &it->second : nullptr;
  }
  // The list at `key`, or nullptr (absent, or another type).
  std::deque<std::string>* List(std::string_view key) {
    auto it = m_.keys().find(key);
    if (it == m_.keys().end() || it->second.type != latch::ValueType::kList) return nullptr;
    return &it->second.list;
  }
  void DropIfEmpty(std::string_view key) {
    auto it = m_.keys().find(key);
    if (it != m_.keys().end() && it->second.type == latch::ValueType::kList &&
        it->second.list.empty()) {
      m_.keys().erase(it);
    }
  }
  void Push(const Record& r, bool head) {
    ModelEntry* e = Collection(r.key, latch::ValueType::kList, true);
    if (e == nullptr) return;
    for (std::string_view v : r.args.subspan(2)) {
      if (head) {
        e->list.emplace_front(v);
      } else {
        e->list.emplace_back(v);
      }
    }
  }
  void Pop(const Record& r, bool head) {
    std::deque<std::string>* l = List(r.key);
    if (l == nullptr) return;
    int64_t n = r.args.size() > 2 ? *latch::ParseInt64(r.args[2]) : 1;
    for (; n > 0 && !l->empty(); --n) {
      if (head) {
        l->pop_front();
      } else {
        l->pop_back();
      }
    }
    DropIfEmpty(r.key);
  }

  Model& m_;
  latch::TimeSnapshot now_;
};

void ApplyToModel(Model& m, const latch::aof::Record& r, latch::TimeSnapshot now) {
  ModelApplier applier(m, now);
  latch::aof::Visit(r, applier);
}

// What the model concludes about a log.
struct Verdict {
  enum { kEnd, kTruncated, kCorrupt } kind = kEnd;
  size_t safe_offset = 0;  // end of the last complete unit
  uint64_t units = 0;      // units with at least one record
  uint64_t records = 0;    // records in complete units (annotations included)
  // The replay refuses the first complete unit that names a database past
  // kDatabases, at the offset before it (-1: none does); the model applies
  // nothing from there on.
  int64_t refused_at = -1;
};

// Frames the log with the format's rules, independently of aof::Reader.
Verdict Frame(std::string_view log, Model& model, latch::TimeSnapshot now) {
  Verdict v;
  latch::resp::RequestParser parser;
  latch::resp::ParseLimits limits;
  limits.strict = true;
  limits.max_bulk_len = INT32_MAX;
  size_t pos = 0;
  bool in_tx = false;
  size_t tx_start = 0;
  uint64_t tx_records = 0;
  std::vector<std::vector<std::string>> tx;  // owned copies of the transaction's records
  std::vector<std::string> tx_annotations;
  // A fence annotation outside a transaction, waiting for its SET: the two
  // are one unit (neither counted nor applied until the SET is there).
  bool fence_open = false;
  latch::aof::Record pending_fence;
  while (pos < log.size()) {
    std::string_view in = log.substr(pos);
    latch::aof::Record rec;
    std::vector<std::string> owned;
    bool is_annotation = false;
    size_t len = 0;
    if (in[0] == '#') {
      size_t nl = in.find('\n');
      if (nl == std::string_view::npos) {
        if (in.size() > 4096) {
          v.kind = Verdict::kCorrupt;
          break;
        }
        v.kind = Verdict::kTruncated;
        break;
      }
      len = nl + 1;
      std::string_view line = in.substr(0, nl);
      bool clock = line.substr(0, 13) == "#latch-clock ";
      bool fence = line.substr(0, 13) == "#latch-fence ";
      if (!clock && !fence) {
        pos += len;
        if (!in_tx && !fence_open) v.safe_offset = pos;
        continue;
      }
      if (line.empty() || line.back() != '\r') {
        v.kind = Verdict::kCorrupt;
        break;
      }
      std::string_view body = line.substr(0, line.size() - 1);
      if (clock) {
        auto mark = latch::aof::DecodeClockAnnotation(body);
        if (!mark) {
          v.kind = Verdict::kCorrupt;
          break;
        }
        rec.op = latch::aof::Op::kClock;
        rec.clock = *mark;
      } else {
        auto token = latch::aof::DecodeFenceAnnotation(body);
        if (!token) {
          v.kind = Verdict::kCorrupt;
          break;
        }
        rec.op = latch::aof::Op::kFence;
        rec.token = *token;
      }
      is_annotation = true;
    } else {
      parser.Reset();
      auto res = parser.Parse(in, limits);
      if (res == latch::resp::RequestParser::Result::kNeedMore) {
        v.kind = Verdict::kTruncated;
        break;
      }
      if (res == latch::resp::RequestParser::Result::kError || parser.args().empty() ||
          !latch::aof::Decode(parser.args(), &rec).empty()) {
        v.kind = Verdict::kCorrupt;
        break;
      }
      len = parser.consumed();
      for (std::string_view a : parser.args()) owned.emplace_back(a);
    }
    (void)is_annotation;
    // The record after a fence annotation must be its SET.
    if (fence_open && rec.op != latch::aof::Op::kSet) {
      v.kind = Verdict::kCorrupt;
      break;
    }
    const bool completes_fence = fence_open;
    fence_open = rec.op == latch::aof::Op::kFence;
    if (rec.op == latch::aof::Op::kMulti) {
      if (in_tx) {
        v.kind = Verdict::kCorrupt;
        break;
      }
      in_tx = true;
      tx_start = pos;
      tx_records = 1;
      pos += len;
      continue;
    }
    if (rec.op == latch::aof::Op::kExec) {
      if (!in_tx) {
        v.kind = Verdict::kCorrupt;
        break;
      }
      // Apply the whole transaction now, unless the replay refuses it.
      std::vector<latch::aof::Record> decoded;
      // A Record's views point into `views`, which must outlive them.
      std::vector<std::vector<std::string_view>> views_of;
      views_of.reserve(tx.size());
      for (const auto& args : tx) {
        const auto& views = views_of.emplace_back(args.begin(), args.end());
        latch::aof::Record r;
        if (!args.empty() && args[0] == "#") {
          if (args[1].rfind("#latch-clock ", 0) == 0) {
            r.op = latch::aof::Op::kClock;
            r.clock = *latch::aof::DecodeClockAnnotation(args[1]);
          } else {
            r.op = latch::aof::Op::kFence;
            r.token = *latch::aof::DecodeFenceAnnotation(args[1]);
          }
        } else {
          latch::aof::Decode(views, &r);
        }
        decoded.push_back(r);
      }
      bool refused = false;
      for (const auto& r : decoded) refused = refused || BeyondDatabases(r);
      if (refused && v.refused_at < 0) v.refused_at = static_cast<int64_t>(v.safe_offset);
      if (v.refused_at < 0) {
        for (const auto& r : decoded) ApplyToModel(model, r, now);
      }
      v.records += tx_records + 1;
      if (!tx.empty()) ++v.units;
      tx.clear();
      in_tx = false;
      pos += len;
      v.safe_offset = pos;
      continue;
    }
    if (in_tx) {
      if (rec.op == latch::aof::Op::kClock || rec.op == latch::aof::Op::kFence) {
        std::string line(in.substr(0, len - 2));
        tx.push_back({"#", line});
      } else {
        tx.push_back(owned);
      }
      ++tx_records;
      pos += len;
      continue;
    }
    if (rec.op == latch::aof::Op::kFence) {
      pending_fence = rec;
      pos += len;
      continue;
    }
    if (BeyondDatabases(rec) && v.refused_at < 0) {
      v.refused_at = static_cast<int64_t>(v.safe_offset);
    }
    if (completes_fence) {
      if (v.refused_at < 0) ApplyToModel(model, pending_fence, now);
      ++v.records;
    }
    if (v.refused_at < 0) ApplyToModel(model, rec, now);
    ++v.records;
    ++v.units;
    pos += len;
    v.safe_offset = pos;
  }
  if (v.kind == Verdict::kEnd && (in_tx || fence_open)) v.kind = Verdict::kTruncated;
  (void)tx_start;
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("fuzz"));
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool load_truncated = data[0] & 1;
  std::string_view log(reinterpret_cast<const char*>(data + 1), size - 1);
  const latch::TimeSnapshot now{5'000'000, 1'700'000'000'000};

  // 1. The model.
  Model model;
  Verdict expected = Frame(log, model, now);
  Expire(model, now);

  // 2. The reader, over the bytes in memory.
  {
    latch::aof::Reader reader(log);
    uint64_t units = 0;
    latch::aof::Reader::Status st;
    while ((st = reader.Next()) == latch::aof::Reader::Status::kUnit) {
      Check(!reader.records().empty(), "an empty unit");
      ++units;
    }
    Check(reader.safe_offset() == expected.safe_offset, "reader and model disagree on the offset");
    Check(units == expected.units, "reader and model disagree on the units");
    Check(reader.record_count() == expected.records, "reader and model disagree on the records");
    switch (expected.kind) {
      case Verdict::kEnd:
        Check(st == latch::aof::Reader::Status::kEnd, "reader did not end where the model does");
        break;
      case Verdict::kTruncated:
        Check(st == latch::aof::Reader::Status::kTruncated, "reader missed a truncated tail");
        Check(reader.tail_bytes() == log.size() - expected.safe_offset, "tail length differs");
        break;
      case Verdict::kCorrupt:
        Check(st == latch::aof::Reader::Status::kCorrupt, "reader missed a corruption");
        break;
    }
  }

  // 3. The replay, over the same bytes in a file.
  const std::string path = TempPath();
  WriteFile(path, log);
  latch::Config config;
  config.appendfilename = path;
  config.aof_load_truncated = load_truncated;
  latch::Store store(kClockId, kDatabases);
  latch::Replay replay(config, store);
  Check(!replay.Open().has_value(), "cannot open the log");
  latch::ReplayClock clock;
  clock.clock_id = kClockId;
  clock.now = now;
  latch::Replay::State state;
  do {
    state = replay.Step(clock, 1'000'000);
  } while (state == latch::Replay::State::kMore);

  const std::string where = "offset " + std::to_string(expected.safe_offset);
  if (expected.refused_at >= 0) {
    // Too few databases: refused at that unit, before any later corruption or
    // tail, and the file is left alone.
    Check(state == latch::Replay::State::kFailed, "a SELECT past `databases` loaded");
    Check(replay.error().find("offset " + std::to_string(expected.refused_at) + ":") !=
              std::string::npos,
          "refusal reported elsewhere", replay.error());
    struct stat st {};
    Check(::stat(path.c_str(), &st) == 0 && static_cast<size_t>(st.st_size) == log.size(),
          "a refused file was changed");
  } else if (expected.kind == Verdict::kCorrupt) {
    Check(state == latch::Replay::State::kFailed, "corruption not reported");
    Check(replay.error().find(where) != std::string::npos, "corruption reported elsewhere",
          replay.error());
  } else if (expected.kind == Verdict::kTruncated && !load_truncated) {
    Check(state == latch::Replay::State::kFailed,
          "incomplete tail loaded with aof-load-truncated no");
    Check(replay.error().find(where) != std::string::npos, "tail reported elsewhere",
          replay.error());
  } else {
    Check(state == latch::Replay::State::kDone, "a loadable log was refused", replay.error());
    bool tail = expected.kind == Verdict::kTruncated;
    Check(replay.truncated_at() == (tail ? static_cast<int64_t>(expected.safe_offset) : -1),
          "tail cut at the wrong offset");
    struct stat st {};
    Check(::stat(path.c_str(), &st) == 0 && static_cast<size_t>(st.st_size) == expected.safe_offset,
          "file not cut back to its last complete unit");
  }

  // The keyspace against the model (a refused log still applied the units
  // before the bad one).
  for (int db = 0; db < kDatabases; ++db) {
    store.Select(db);
    Check(store.size() == model.dbs[db].size(), "keyspace size differs from the model");
    for (const auto& [key, entry] : model.dbs[db]) {
      const latch::Keyspace::Entry* e = store.Find(key, now);
      Check(e != nullptr, "a key of the model is missing", key);
      Check(e->type() == entry.type, "type differs from the model", key);
      if (entry.type == latch::ValueType::kString) {
        Check(e->value() == entry.value, "value differs from the model", key);
      } else if (entry.type == latch::ValueType::kHash) {
        const latch::ValueRef<latch::HashValue> h(e);
        Check(h->size() == entry.hash.size(), "hash size differs from the model", key);
        for (const auto& [field, value] : entry.hash) {
          auto v = h->Get(field);
          Check(v.has_value() && *v == value, "hash field differs from the model", key);
        }
      } else if (entry.type == latch::ValueType::kZSet) {
        const latch::ValueRef<latch::ZSetValue> z(e);
        Check(z->size() == entry.zset.size(), "sorted set size differs from the model", key);
        for (const auto& [member, score] : entry.zset) {
          auto got = z->Score(member);
          // (A listpack keeps -0 as 0, as Redis's does.)
          Check(got && *got == score, "score differs from the model", key);
        }
      } else if (entry.type == latch::ValueType::kList) {
        const auto* l = static_cast<const latch::ListValue*>(e->object());
        Check(l->size() == entry.list.size(), "list length differs from the model", key);
        size_t i = 0;
        for (auto c = l->Head(); c.valid(); c.Next(), ++i) {
          Check(c.value() == entry.list[i], "list element differs from the model", key);
        }
      } else {
        const latch::ValueRef<latch::SetValue> set(e);
        Check(set->size() == entry.set.size(), "set size differs from the model", key);
        for (const std::string& m : entry.set) {
          Check(set->Contains(m), "set member missing from the model", key);
        }
      }
      Check(e->deadline == entry.deadline, "deadline differs from the model", key);
      Check(e->token() == entry.token, "fencing token differs from the model", key);
    }
  }
  return 0;
}
