// The Store: the keyspace, and the only way to change it.
//
// Every mutator changes the keyspace *and* appends the record that says so
// to the log, as one operation (LevelDB's rule: the change and its record
// cannot drift apart). Handlers never write to the log; they cannot forget
// to, and they cannot log something they did not do. Records are effects,
// not requests: a relative TTL is logged as an absolute PXAT, `SET … GET` as
// a plain SET, a refused `SET NX` as nothing, an expired key as DEL, so a
// replay needs no command logic and gives the same result whenever it runs.
//
// Replay goes through the same Store, with the log switched off: Replay()
// maps each record back onto the mutators' effect on the keyspace. There is
// one applier, so what the log says and what memory holds cannot disagree
// (tests/unit/store_test.cc replays the log of random command sequences and
// compares).
//
// Time. Leases are deadlines on the boot clock (see clock.h); the log speaks
// Unix time. Each absolute time is written under a clock annotation (see
// log/record.h) stating the clock and the wall/boot relation it was
// converted with; the Store emits one whenever that relation changes. On
// replay, a time written on this same clock converts back exactly, so a
// wall-clock step while the server was down neither drops nor lengthens a
// lease. A time written on another clock (another boot, host or time
// namespace) cannot be trusted: it is converted with today's wall clock and
// clamped to the bound the lease policy gives (the node's lease horizon,
// during which it is quarantined anyway; see lease_policy.h).
//
// Databases: the Store holds one keyspace per database (Redis's SELECT; 16 by
// default). Reads and writes act on the selected one, which the gate sets
// from the session before each command; the log says SELECT n before a
// record whenever the database changes, exactly where Redis's AOF does.
//
// Fencing tokens (SET … FENCE): a key may hold a token, a number from the
// lease policy's counter (lease_policy.h, IssueToken) that names its holder.
// The token stays with the holder: a write that leaves the value as it was
// (a renewal, SET of the same value, PEXPIRE, PERSIST) keeps it, and one
// that stores another value — a new holder: SET, GETSET, INCR, SETRANGE… —
// drops it unless it gives a new one. A key that changes database (MOVE,
// SWAPDB) loses its token: there it is another lock, whose last holder may
// have had a larger one; its holder renews with FENCE for a new token. The
// record of a fenced key's SET is
// preceded by its `#latch-fence` annotation (log/record.h), in the log and
// in a rewrite, so a replay gives every key its token back.
//
// Transactions: between BeginTransaction and EndTransaction the records are
// bracketed by MULTI/EXEC (opened lazily: a transaction that changed nothing
// logs nothing), so a replay applies all of them or none.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "log/record.h"
#include "server/clock.h"
#include "server/keyspace.h"

namespace latch {

// The lease a write gives a key.
struct Lease {
  enum Kind { kNone, kKeep, kUntil } kind = kNone;
  int64_t deadline = kNoDeadline;  // kUntil: boot-clock ms
  static Lease None() { return {}; }
  static Lease Keep() { return {kKeep, kNoDeadline}; }
  static Lease Until(int64_t deadline) { return {kUntil, deadline}; }
};

// One change to a key by a live write (never by replay): what it held before
// and after. The history (server/history.h) tells grants, renewals, releases
// and expiries apart from these.
struct KeyChange {
  enum Kind { kWrite, kExpire, kFlush } kind = kWrite;
  std::string_view key;
  bool had = false;  // before
  std::string_view old_value;
  int64_t old_deadline = kNoDeadline;
  bool has = false;  // after
  std::string_view value;
  int64_t deadline = kNoDeadline;
};

// How a value came to be, as far as OBJECT ENCODING can tell: Redis encodes
// the same bytes differently depending on the command that produced them.
enum class ValueKind : uint8_t {
  kAsSet = 0,   // SET, MSET, INCR…: "int" if it reads as an integer, else by length
  kString = 1,  // INCRBYFLOAT's result: "embstr" or "raw" by length, never "int"
  kRaw = 2,     // modified in place (APPEND, SETRANGE): always "raw"
};

// How replay converts the log's Unix times into deadlines.
struct ReplayClock {
  std::string clock_id;  // this run's clock
  TimeSnapshot now;
  // Times written on another clock are clamped to this deadline (the lease
  // horizon carried from the previous run, in this run's clock).
  int64_t foreign_bound = 0;
  // The previous run's clock, and when it wrote its last state record: a
  // time on that clock is converted assuming no time has passed since
  // (lease_policy.h, "Clocks"), so a replayed lease is never cut short.
  std::string anchor_clock_id;
  int64_t anchor_written_at = 0;
  // The relation of the last annotation read.
  bool have_mark = false;
  aof::ClockMark mark;
  // A fence annotation read, for the SET that follows it.
  uint64_t pending_token = 0;
  // Counters for the start-up report.
  uint64_t foreign_times = 0;
  uint64_t unanchored = 0;  // of those, on neither this clock nor the anchor's
  uint64_t expired = 0;

  int64_t Deadline(int64_t unix_ms);
};

class Store {
 public:
  using KeyObserver = std::function<void(std::string_view key)>;

  explicit Store(std::string clock_id, int databases = 1);

  // ---- databases
  int databases() const { return static_cast<int>(dbs_.size()); }
  // The database the next reads and writes act on (0 <= db < databases()).
  void Select(int db) {
    selected_ = db;
    cur_ = dbs_[static_cast<size_t>(db)].get();
  }
  int selected() const { return selected_; }
  // Keys and keys with a lease in database `db` (INFO keyspace), and the
  // average remaining lease of its keys that have one (avg_ttl), in ms.
  size_t size_of(int db) const { return dbs_[static_cast<size_t>(db)]->size(); }
  size_t keys_with_deadline_of(int db) const {
    return dbs_[static_cast<size_t>(db)]->keys_with_deadline();
  }
  int64_t AverageTtl(int db, int64_t now) const;
  // SWAPDB: the two databases exchange their keys (clients stay where they are).
  void SwapDatabases(int a, int b);
  // Whether `key` is stored in database `db`, expired or not (WATCH).
  bool ContainsIn(int db, std::string_view key) {
    return dbs_[static_cast<size_t>(db)]->Contains(key);
  }
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Where records go; nullptr: nowhere (appendonly no, replay, most tests).
  void set_log(aof::Batch* batch) {
    log_ = batch;
    last_mark_valid_ = false;
    logged_db_ = -1;
  }
  aof::Batch* log() const { return log_; }
  // The next record with an absolute time repeats the clock annotation, and
  // the next record its SELECT (a rewrite started: the new file must state
  // its own).
  void ForgetClockMark() {
    last_mark_valid_ = false;
    logged_db_ = -1;
  }
  // The boot clock was warped (FAULT CLOCK): later annotations name `id`.
  void set_clock_id(std::string id) {
    clock_id_ = std::move(id);
    last_mark_valid_ = false;
  }
  // Told about every key a write changes (with its database), and about
  // FLUSHALL (db -1) / FLUSHDB before the keys go: WATCH uses them.
  using DbKeyObserver = std::function<void(int db, std::string_view key)>;
  void set_key_observer(DbKeyObserver f) { on_key_ = std::move(f); }
  void set_flush_observer(std::function<void(int db)> f) { on_flush_ = std::move(f); }
  // Told about every key that expires (INFO's expired_keys, the "expired"
  // keyspace event), with its database.
  void set_expiry_observer(DbKeyObserver f) { on_expired_ = std::move(f); }
  // Told about every key a live write creates (the "new" keyspace event).
  void set_new_key_observer(DbKeyObserver f) { on_new_ = std::move(f); }
  // A key rewritten by deleting it and writing it again (a STORE form's
  // destination, SPOP COUNT rebuilding the set from what stays) is not new:
  // Redis overwrites the value in place (setKey → dbOverwrite) and sends no
  // "new" event. While an Overwriting of `key` lives (`active`: the key
  // existed), its writes do not report it to the new-key observer.
  class Overwriting {
   public:
    Overwriting(Store& s, std::string_view key, bool active)
        : s_(s), prev_(s.overwriting_), prev_active_(s.overwriting_active_) {
      if (!active) return;
      s.overwriting_ = key;
      s.overwriting_active_ = true;
    }
    ~Overwriting() {
      s_.overwriting_ = prev_;
      s_.overwriting_active_ = prev_active_;
    }
    Overwriting(const Overwriting&) = delete;
    Overwriting& operator=(const Overwriting&) = delete;

   private:
    Store& s_;
    std::string_view prev_;
    bool prev_active_;
  };
  // Told about every change a live write or an expiry makes to a key, with
  // the value and deadline before and after (the history's hook). Unset, a
  // write pays one branch for it.
  using ChangeObserver = std::function<void(const KeyChange&)>;
  void set_change_observer(ChangeObserver f) { on_change_ = std::move(f); }

  // ---- reads
  // The live entry for `key`, or nullptr. An expired key is removed on the
  // spot and logged as DEL (lazy expiry). The lookup counts as an access of
  // the key (OBJECT IDLETIME) unless `touch` is false.
  // In the selected database:
  const Keyspace::Entry* Find(std::string_view key, const TimeSnapshot& now, bool touch = true) {
    return cur_->Find(key, now.mono, touch);
  }
  // A random stored entry (perhaps expired: look it up with Find), or nullptr.
  const Keyspace::Entry* RandomEntry() const { return cur_->RandomEntry(); }
  // One step of a SCAN (Keyspace::Scan).
  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& f) const {
    return cur_->Scan(cursor, std::forward<F>(f));
  }
  // Whether `key` is stored, expired or not (no lazy expiry).
  bool Contains(std::string_view key) { return cur_->Contains(key); }
  // The entry for `key`, expired or not (no lazy expiry, not an access).
  const Keyspace::Entry* Peek(std::string_view key) { return cur_->Peek(key); }
  size_t size() const { return cur_->size(); }
  size_t keys_in_all_databases() const {
    size_t n = 0;
    for (const auto& ks : dbs_) n += ks->size();
    return n;
  }
  size_t keys_with_deadline() const { return cur_->keys_with_deadline(); }
  const Keyspace& keyspace() const { return *cur_; }
  const Keyspace& keyspace_of(int db) const { return *dbs_[static_cast<size_t>(db)]; }
  // Across the databases:
  size_t total_size() const;
  size_t total_keys_with_deadline() const;
  // The latest lease deadline of any key (INT64_MIN: no key has one).
  int64_t MaxDeadline() const;
  size_t memory_bytes() const;

  // ---- writes (each logs itself)
  // Stores `value` under `key` with `lease`. Lease::Keep keeps an existing
  // key's deadline. A deadline already past deletes the key instead (an
  // EXAT/PXAT in the past), logged as DEL; nothing happens to a missing key.
  // `kind` is remembered for OBJECT ENCODING (the log does not need it: a
  // replayed SET is what Redis would encode by value too). `token` is the
  // key's fencing token; by default the key keeps the one it has if the
  // value is unchanged, and has none otherwise (see "Fencing tokens").
  void Put(std::string_view key, std::string_view value, Lease lease, const TimeSnapshot& now,
           ValueKind kind = ValueKind::kAsSet, uint64_t token = Keyspace::kKeepTokenIfSame);
  // Removes a key that exists (call Find first). Logged as DEL.
  void Delete(std::string_view key);
  // A write to a collection (types/object.h): applies the record `op` (a
  // kind of record_kinds.h) with `key` and the words `rest` to the selected
  // database — the same applier a replay runs — and logs it when it changed
  // anything. The caller checked the key's type; the record is the effect
  // (HINCRBY gives HSET key field <new value>). Returns what it did.
  Applied Apply(aof::Op op, std::string_view key, std::span<const std::string_view> rest,
                const TimeSnapshot& now);
  // RENAME: `from` (which exists) takes the name `to`, replacing any key
  // there, with its value and lease and without its fencing token. Logged
  // as RENAME.
  bool Rename(std::string_view from, std::string_view to, const TimeSnapshot& now);
  // COPY: a copy of `from` (which exists) under `to` in database `to_db`
  // (any key there already gone: the caller deletes it), with its lease,
  // without its token. Logged as the records that rebuild it.
  void Copy(std::string_view from, int to_db, std::string_view to, const TimeSnapshot& now);
  // MOVE: `key` (which exists) goes to database `to_db` (where the caller
  // found it free), without its token: its records there and its DEL here,
  // as one transaction.
  void MoveKey(std::string_view key, int to_db, const TimeSnapshot& now);
  // Gives an existing key a new deadline; one not after now deletes it (as
  // Redis's EXPIRE does for a time already reached).
  void SetDeadline(std::string_view key, int64_t deadline, const TimeSnapshot& now);
  // Removes an existing key's deadline.
  void Persist(std::string_view key);
  // Removes every key of every database (FLUSHALL).
  void Clear();
  // Removes every key of the selected database (FLUSHDB).
  void ClearSelected();

  // A transaction (EXEC) brackets its records from the first one; a script
  // (`single_unwrapped`) only once it writes a second record, as Redis does
  // for a script's effects: a script that writes once logs that one record.
  // Nested calls (a script inside EXEC) join the outer transaction.
  void BeginTransaction(bool single_unwrapped = false) {
    if (tx_depth_++ > 0) return;
    transaction_ = kOpenNotLogged;
    tx_single_unwrapped_ = single_unwrapped;
  }
  void EndTransaction();
  bool in_transaction() const { return transaction_ != kNone; }

  // The records of one command that writes several keys (MSET, MSETNX) as
  // one transaction in the log, so that a crash in the middle of writing
  // them leaves a replay all of them or none, as one command should. Inside
  // MULTI … EXEC the open transaction already does that.
  class Atomic {
   public:
    explicit Atomic(Store& store) : store_(store), opened_(!store.in_transaction()) {
      if (opened_) store_.BeginTransaction(/*single_unwrapped=*/true);
    }
    ~Atomic() {
      if (opened_) store_.EndTransaction();
    }
    Atomic(const Atomic&) = delete;
    Atomic& operator=(const Atomic&) = delete;

   private:
    Store& store_;
    bool opened_;
  };

  // ---- function libraries (FUNCTION LOAD …)
  // Libraries are data like keys, but the script engine holds them
  // (scripting/engine.h): the Store logs their changes, hands replayed ones
  // to the engine, and asks it for their codes in a rewrite. The records
  // belong to no database (no SELECT), as in Redis's AOF.
  void LogFunctionLoad(std::string_view code);
  void LogFunctionDelete(std::string_view name);
  void LogFunctionFlush();
  // Applies a replayed FUNCTION record; an error text if it cannot be.
  using LibraryReplayer = std::function<std::string(const aof::Record&)>;
  void set_library_replayer(LibraryReplayer f) { library_replayer_ = std::move(f); }
  // Calls its argument with each library's code (rewrite).
  using LibraryLister = std::function<void(const std::function<void(std::string_view)>&)>;
  void set_library_lister(LibraryLister f) { library_lister_ = std::move(f); }

  // Writes made since start (Redis's "changes since last save"); a command
  // changed something when this moved.
  uint64_t changes() const { return changes_; }

  // When collections leave their compact encodings (CONFIG SET).
  void set_encoding_limits(const EncodingLimits& limits) { limits_ = limits; }
  const EncodingLimits& encoding_limits() const { return limits_; }

  // DEBUG RELOAD (Redis saves its dataset and loads it back): every
  // database is written as a rewrite writes it (WriteSnapshot) and replayed
  // into this Store, so values come back in the encodings their records
  // give, as after a rewrite and a restart. The log is not written (the
  // data is the same); WATCH sees every key change, as Redis's reload
  // empties the databases first. The selected database stays selected.
  // Returns the replay's error, if any (none for a snapshot of this Store).
  std::string Reload(const TimeSnapshot& now);

  // ---- expiry and housekeeping (every database)
  size_t ActiveExpireCycle(int64_t now, int64_t budget_us);
  bool RehashStep(int buckets);

  // ---- the log's other readers
  // Applies one replayed record (the log is off meanwhile). A lease that
  // has ended since is applied anyway (a later record may extend it, or
  // PERSIST it, as happened live); FinishReplay() then drops every key whose
  // lease has ended, and counts them. An error text for a record this
  // server cannot apply (a SELECT of a database it does not have).
  std::string Replay(const aof::Record& record, ReplayClock& clock);
  // Why `record` cannot be replayed here (a database this server does not
  // have), or "". Replay checks it too; the loader checks a whole unit first
  // so a refused transaction leaves nothing half-applied.
  std::string CheckReplayable(const aof::Record& record) const;
  size_t FinishReplay(ReplayClock& clock);
  // Partway through a replay that has read 1/`factor` of the log: sizes each
  // database's table for `factor` times the keys it holds, as the rest of
  // the log is likely to bring (Keyspace::Reserve).
  void ExpectReplayGrowth(double factor);
  // The live dataset as records, for a rewrite: a clock annotation, one
  // `FUNCTION LOAD REPLACE code` per library, then for each database that
  // has keys, SELECT and one `SET key value [PXAT t]` per live key. Runs in
  // the rewrite's child.
  bool WriteSnapshot(aof::Batch& out, const std::function<bool()>& drain,
                     const TimeSnapshot& now) const;

 private:
  // Each record kind's effect on the keyspace (store.cc).
  class Applier;
  // The records that rebuild one entry (a rewrite, COPY, MOVE).
  static void WriteEntry(const Keyspace::Entry& e, aof::Batch& out, const TimeSnapshot& now);
  void WriteCopy(const Keyspace::Entry& e, std::string_view to, const TimeSnapshot& now);
  // SWAPDB's effect, live and in replay (fenced keys lose their tokens).
  void SwapKeyspaces(int a, int b);
  // Counts the change, tells the observer, opens a pending MULTI. Whether
  // to write a record.
  bool Note(std::string_view key);
  bool NoteIn(int db, std::string_view key);
  bool NoteFlush(int db);
  // The log says SELECT db before a record of another database.
  void NoteDb(int db);
  // Opens the transaction in the log as needed before a record.
  void NoteTransaction();
  // Emits a clock annotation before a record with an absolute time when the
  // relation differs from the last one emitted.
  void NoteClock(const TimeSnapshot& now);
  void OnExpired(int db, std::string_view key);

  std::vector<std::unique_ptr<Keyspace>> dbs_;
  EncodingLimits limits_;
  std::vector<std::string_view> words_;  // Apply's record, reused
  Keyspace* cur_ = nullptr;
  int selected_ = 0;
  int logged_db_ = -1;    // the database of the last record (-1: none yet)
  size_t expire_db_ = 0;  // where the next active expiry cycle starts
  std::string clock_id_;
  aof::Batch* log_ = nullptr;
  uint64_t changes_ = 0;
  enum { kNone, kOpenNotLogged, kOpenOneRecord, kOpenLogged } transaction_ = kNone;
  int tx_depth_ = 0;
  bool tx_single_unwrapped_ = false;
  size_t tx_first_offset_ = 0;  // kOpenOneRecord: where its record starts in the batch
  bool last_mark_valid_ = false;
  int64_t last_mark_offset_ = 0;
  DbKeyObserver on_key_;
  std::function<void(int db)> on_flush_;
  DbKeyObserver on_expired_;
  DbKeyObserver on_new_;
  std::string_view overwriting_;  // Overwriting's key (when active)
  bool overwriting_active_ = false;
  // Tells on_new_ when the selected keyspace grew past `before` keys.
  void NoteNew(size_t before, std::string_view key) {
    if (on_new_ && cur_->size() > before && !(overwriting_active_ && key == overwriting_)) {
      on_new_(selected_, key);
    }
  }
  // The change observer: Observed (store.cc) captures a key before a
  // mutator runs and reports it after; only the outermost one reports.
  class Observed;
  ChangeObserver on_change_;
  int observing_ = 0;
  LibraryReplayer library_replayer_;
  LibraryLister library_lister_;
  // Opens the log's transaction for a record of no database.
  bool NoteLibrary();
};

}  // namespace latch
