// The records of latch's append-only log, and the one place that knows their
// format.
//
// The log is Redis's single-file AOF: a sequence of RESP arrays of bulk
// strings, each one a command Redis itself could replay (`redis-check-aof`
// accepts the file, and redis-server loads it). latch writes *effects*, never
// requests. log/record_kinds.h lists every kind of record, once, with the
// shape the reader checks; those of keys and databases are:
//
//   SET key value [PXAT unix-ms]     the key now holds value (until unix-ms)
//   DEL key [key …]                  the keys are gone (deleted or expired)
//   PEXPIREAT key unix-ms            the key's lease now ends at unix-ms
//   PERSIST key                      the key no longer has a lease
//   FLUSHALL                         every key of every database is gone
//   FLUSHDB                          every key of the selected database is gone
//   SWAPDB a b                       databases a and b exchange their keys
//   SELECT db                        the records that follow are for database db
//   MULTI … EXEC                     the records between apply all or none
//   FUNCTION LOAD REPLACE code       the function library named in code's
//                                    shebang now holds code
//   FUNCTION DELETE name             the library is gone
//   FUNCTION FLUSH                   every library is gone
//
// and two annotations, lines that Redis's loader and redis-check-aof skip
// (Redis 7 writes `#TS:` annotations the same way):
//
//   #latch-log <id>\r\n           the first line of a log file: which file this is
//   #latch-clock <clock-id> <boot-ms> <unix-ms>\r\n
//   #latch-fence <token>\r\n      the key of the next SET holds this fencing token
//
// A fence annotation is always directly followed by its SET: the reader
// returns the two as one unit, so a tail torn between them drops both (a
// token left alone would otherwise attach itself to whatever SET the next
// run appends). A SET without one stores a key without a token.
//
// The log's id ties it to the state record (server/state_record.h): a run
// records which log, and how much of it, its promises rest on, so a log
// repaired, restored from a backup or damaged since is not trusted for them.
// Each new file (a fresh log, a rewrite) gets a new random id.
//
// A lease in memory is a deadline on CLOCK_BOOTTIME, but the log speaks Unix
// time, because that is what Redis's PXAT means. The annotation states the
// relation between the two clocks that the following absolute times were
// written with, and which clock that was (the boot, and the time namespace).
// A replay on the same clock converts PXAT back to the exact boot-clock
// deadline, so a wall-clock step between writing and replaying neither drops a
// live lock nor lengthens one (see server/store.h, Store::Replay).
//
// Writing: Batch appends encoded records to a string (LevelDB's WriteBatch:
// the change and its record are one operation, done by the Store). Reading:
// Decode turns the arguments of one parsed record into a Record, refusing
// anything latch would not write; log/reader.h cuts records out of a file.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "log/record_kinds.h"

namespace latch::aof {

// Which clock a deadline was measured on, and how it related to the wall
// clock at one instant.
struct ClockMark {
  std::string clock_id;  // boot id and time namespace: see server/clock.h
  int64_t boot_ms = 0;   // CLOCK_BOOTTIME at that instant
  int64_t unix_ms = 0;   // the wall clock at the same instant
  // The offset wall − boot. Two marks with the same clock and offset
  // describe the same relation.
  int64_t offset() const { return unix_ms - boot_ms; }
};

// The kinds of record (record_kinds.h lists them: kSet, kDel, …, kClock,
// kFence).
enum class Op {
#define LATCH_RECORD_OP(name, word, min, max, step) k##name,
  LATCH_RECORD_KINDS(LATCH_RECORD_OP)
#undef LATCH_RECORD_OP
};

// What record_kinds.h says of a kind: its word and its shape.
struct KindInfo {
  std::string_view word;
  int min_words, max_words, step;
  bool annotation() const { return !word.empty() && word[0] == '#'; }
};
const KindInfo& Kind(Op op);
// The record kind a log word names (case-insensitively, as Redis's loader
// reads commands), or nullopt. Annotations are not looked up here.
std::optional<Op> KindOf(std::string_view word);

// Appends encoded records. Cheap to keep and reuse: Clear() keeps capacity.
class Batch {
 public:
  // `unix_ms` 0: a key without a lease (no PXAT).
  void Set(std::string_view key, std::string_view value, int64_t unix_ms);
  void Del(std::string_view key);
  void PExpireAt(std::string_view key, int64_t unix_ms);
  void Persist(std::string_view key);
  void FlushAll();
  void FlushDb();
  void SwapDb(int64_t a, int64_t b);
  void Select(int64_t db);
  void Multi();
  // A MULTI inserted at `offset` of the batch (before records already
  // appended: a script's effects become a transaction at its second write).
  void InsertMulti(size_t offset);
  void Exec();
  void Clock(const ClockMark& mark);
  // The first line of a new log file.
  void LogId(std::string_view id);
  // The fencing token of the key the next SET record stores.
  void Fence(uint64_t token);
  // A record of kind `op` (not an annotation): its word, `key`, then `rest`.
  void Append(Op op, std::string_view key, std::span<const std::string_view> rest);
  void Append(Op op, std::initializer_list<std::string_view> args);
  // Function libraries (of no database, like Redis's AOF records).
  void FunctionLoad(std::string_view code);
  void FunctionDelete(std::string_view name);
  void FunctionFlush();

  const std::string& bytes() const { return rep_; }
  size_t size() const { return rep_.size(); }
  bool empty() const { return rep_.empty(); }
  // Whether a MULTI has been appended without its EXEC: a rewrite must not
  // start in the middle of a transaction.
  bool in_transaction() const { return open_multi_; }
  // Empties the batch. A buffer past kKeptBytes is given back (Redis frees
  // an AOF buffer past 4 KB the same way): one huge value must not keep its
  // size allocated for the life of the process; a smaller one is kept for
  // the next batch, so a busy loop does not allocate one per iteration.
  static constexpr size_t kKeptBytes = 1 << 20;
  void Clear() {
    if (rep_.capacity() > kKeptBytes) {
      std::string().swap(rep_);
    } else {
      rep_.clear();
    }
  }
  // Drops the first n bytes (they were written to the file).
  void Consume(size_t n) { rep_.erase(0, n); }

 private:
  std::string rep_;
  bool open_multi_ = false;
};

// One decoded record. Views point into the bytes it was decoded from.
struct Record {
  Op op = Op::kSet;
  // The record's words (args[0] names its kind), for every record that is a
  // command (not the annotations). Kinds without fields of their own below
  // (those of the data types) are read from here.
  std::span<const std::string_view> args;
  std::string_view key;                    // SET, PEXPIREAT, PERSIST
  std::string_view value;                  // SET; FUNCTION LOAD's code
  std::span<const std::string_view> keys;  // DEL
  int64_t unix_ms = 0;                     // SET with PXAT (else 0), PEXPIREAT
  int64_t db = 0;                          // SELECT, SWAPDB (the first)
  int64_t db2 = 0;                         // SWAPDB (the second)
  ClockMark clock;                         // clock annotation
  uint64_t token = 0;                      // fence annotation
};

// A consumer of records: one method per kind, so a consumer that lacks one
// does not compile (LevelDB's WriteBatch::Handler). Visit calls the method
// of the record's kind.
class Handler {
 public:
#define LATCH_RECORD_METHOD(name, word, min, max, step) virtual void name(const Record& r) = 0;
  LATCH_RECORD_KINDS(LATCH_RECORD_METHOD)
#undef LATCH_RECORD_METHOD

 protected:
  ~Handler() = default;
};
void Visit(const Record& r, Handler& h);

// Decodes the arguments of one RESP record. Returns an empty string and
// fills *out, or says what is wrong ("SET with a PXAT that is not an
// integer"). Command names are matched case-insensitively, as Redis's
// loader does.
std::string Decode(std::span<const std::string_view> args, Record* out);

// Decodes the clock annotation (the line without its CRLF); nullopt if it is
// damaged. (Other annotations, Redis's #TS: and the like, are skipped by the
// reader.)
std::optional<ClockMark> DecodeClockAnnotation(std::string_view line);
// Decodes `#latch-fence <token>` (without CRLF); nullopt if damaged.
std::optional<uint64_t> DecodeFenceAnnotation(std::string_view line);

// A new random log id (16 hex digits).
std::string NewLogId();

// What a log file is, without reading it all: whether it exists, its size,
// and the id on its first line (empty for a log without one: written by
// Redis or an older latch).
struct LogIdentity {
  bool exists = false;
  uint64_t size = 0;
  std::string id;
};
LogIdentity ReadLogIdentity(const std::string& path);

}  // namespace latch::aof
