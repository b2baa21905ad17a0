#include "server/store.h"

#include <algorithm>

#include "log/reader.h"
#include "server/types/hash.h"
#include "server/types/list.h"
#include "server/types/set.h"
#include "server/types/value_ref.h"
#include "server/types/zset.h"

namespace latch {

namespace {

// 0 means "no lease" in the keyspace; an instant that long past is as good
// as any other past one.
int64_t NonZero(int64_t deadline) {
  return deadline == kNoDeadline ? -1 : deadline;
}

}  // namespace

// Captures `key` as it is before a mutator runs and tells the change
// observer what it became, when the mutator returns. Inactive (one branch)
// without an observer, and inside another Observed (SetDeadline → Delete).
class Store::Observed {
 public:
  Observed(Store& store, std::string_view key) : store_(store), key_(key) {
    if (!store_.on_change_ || store_.observing_++ > 0) return;
    active_ = true;
    if (const Keyspace::Entry* e = store_.cur_->Peek(key)) {
      had_ = true;
      if (e->is_string()) old_value_ = e->value();  // (a collection: no value)
      old_deadline_ = e->deadline;
    }
  }
  ~Observed() {
    if (!store_.on_change_) return;
    --store_.observing_;
    if (!active_) return;
    KeyChange c;
    c.key = key_;
    c.had = had_;
    c.old_value = old_value_;
    c.old_deadline = old_deadline_;
    if (const Keyspace::Entry* e = store_.cur_->Peek(key_)) {
      c.has = true;
      if (e->is_string()) c.value = e->value();
      c.deadline = e->deadline;
    }
    store_.on_change_(c);
  }
  Observed(const Observed&) = delete;
  Observed& operator=(const Observed&) = delete;

 private:
  Store& store_;
  std::string_view key_;
  bool active_ = false;
  bool had_ = false;
  std::string old_value_;  // a copy: the write may free the entry
  int64_t old_deadline_ = kNoDeadline;
};

// The Store's side of each record kind (record_kinds.h): how a replayed
// record changes the keyspace. A kind missing here does not compile.
class Store::Applier final : public aof::Handler {
 public:
  // `clock`: the replay's (nullptr for a live write through Store::Apply,
  // whose kinds carry no times).
  Applier(Store& store, ReplayClock* clock) : s_(store), clock_(*clock_or_dummy(clock)) {}

  void Clock(const aof::Record& r) override {
    clock_.have_mark = true;
    clock_.mark = r.clock;
  }
  void Fence(const aof::Record& r) override {
    // The token of the key the next SET stores.
    clock_.pending_token = r.token;
  }
  void Set(const aof::Record& r) override {
    // A lease that has ended since is still applied: a later record may
    // extend it or remove its end (PERSIST), exactly as it did live.
    // FinishReplay() drops what is expired once every record is in. The
    // key's token is the fence annotation right before (0: none).
    int64_t deadline = r.unix_ms != 0 ? NonZero(clock_.Deadline(r.unix_ms)) : kNoDeadline;
    s_.cur_->Set(r.key, r.value, deadline, false, 0, clock_.pending_token);
    clock_.pending_token = 0;
  }
  void Del(const aof::Record& r) override {
    for (std::string_view k : r.keys) s_.cur_->Erase(k);
  }
  void PExpireAt(const aof::Record& r) override {
    s_.cur_->SetDeadline(r.key, NonZero(clock_.Deadline(r.unix_ms)));
  }
  void Persist(const aof::Record& r) override { s_.cur_->SetDeadline(r.key, kNoDeadline); }
  void FlushAll(const aof::Record&) override {
    for (auto& ks : s_.dbs_) ks->Clear();
  }
  void FlushDb(const aof::Record&) override { s_.cur_->Clear(); }
  void Select(const aof::Record& r) override { s_.Select(static_cast<int>(r.db)); }
  void SwapDb(const aof::Record& r) override {
    int keep = s_.selected_;
    s_.SwapKeyspaces(static_cast<int>(r.db), static_cast<int>(r.db2));
    s_.Select(keep);
  }
  // The reader hands whole transactions over: nothing to do at their edges.
  void Multi(const aof::Record&) override {}
  void Exec(const aof::Record&) override {}
  void Rename(const aof::Record& r) override {
    if (!s_.cur_->Rename(r.args[1], r.args[2])) error = "RENAME of a key that does not exist";
  }
  // Function libraries belong to the script engine, not the keyspace: the
  // Store hands their records to it (Server wires the replayer).
  void FunctionLoad(const aof::Record& r) override { Library(r); }
  void FunctionDelete(const aof::Record& r) override { Library(r); }
  void FunctionFlush(const aof::Record& r) override { Library(r); }

  void Library(const aof::Record& r) {
    if (s_.library_replayer_) error = s_.library_replayer_(r);
  }
  void HSet(const aof::Record& r) override { Take(ApplyHSet(*s_.cur_, r, s_.limits_)); }
  void HDel(const aof::Record& r) override { Take(ApplyHDel(*s_.cur_, r)); }
  void SAdd(const aof::Record& r) override { Take(ApplySAdd(*s_.cur_, r, s_.limits_)); }
  void SRem(const aof::Record& r) override { Take(ApplySRem(*s_.cur_, r)); }
  void ZAdd(const aof::Record& r) override { Take(ApplyZAdd(*s_.cur_, r, s_.limits_)); }
  void ZRem(const aof::Record& r) override { Take(ApplyZRem(*s_.cur_, r)); }
  // Lists (types/list.h).
  void RPush(const aof::Record& r) override {
    Take(ApplyListPush(*s_.cur_, r, ListValue::End::kTail, s_.limits_));
  }
  void LPush(const aof::Record& r) override {
    Take(ApplyListPush(*s_.cur_, r, ListValue::End::kHead, s_.limits_));
  }
  void LPop(const aof::Record& r) override {
    Take(ApplyListPop(*s_.cur_, r, ListValue::End::kHead));
  }
  void RPop(const aof::Record& r) override {
    Take(ApplyListPop(*s_.cur_, r, ListValue::End::kTail));
  }
  void LSet(const aof::Record& r) override { Take(ApplyListSet(*s_.cur_, r, s_.limits_)); }
  void LInsert(const aof::Record& r) override { Take(ApplyListInsert(*s_.cur_, r, s_.limits_)); }
  void LRem(const aof::Record& r) override { Take(ApplyListRemove(*s_.cur_, r)); }
  void LTrim(const aof::Record& r) override { Take(ApplyListTrim(*s_.cur_, r)); }

  // What the last record did (its error: a record this keyspace cannot
  // take, such as an HSET on a key that holds a string).
  Applied applied;
  std::string error;

 private:
  static ReplayClock* clock_or_dummy(ReplayClock* c) {
    static thread_local ReplayClock unused;
    return c != nullptr ? c : &unused;
  }
  // A collection record's outcome: its error, if any, is the replay's.
  void Take(Applied a) {
    if (!a.error.empty()) error = a.error;
    applied = std::move(a);
  }

  Store& s_;
  ReplayClock& clock_;
};

int64_t ReplayClock::Deadline(int64_t unix_ms) {
  if (have_mark && mark.clock_id == clock_id) {
    // Written on this very clock: the boot-clock deadline it was converted
    // from, exactly, whatever the wall clock did since.
    return unix_ms - mark.offset();
  }
  ++foreign_times;
  if (have_mark && !anchor_clock_id.empty() && mark.clock_id == anchor_clock_id) {
    // The previous run's clock (a reboot since): the lease ends as long
    // after now as it ended after that run's last state record.
    int64_t d = SatAdd(now.mono, SatSub(SatSub(unix_ms, mark.offset()), anchor_written_at));
    return foreign_bound > 0 ? std::min(d, foreign_bound) : d;
  }
  // An older boot, another host, or a log without annotations (written by
  // Redis or an older latch): only the wall clock relates the two. The
  // lease policy quarantines such a restart until the carried horizon, and
  // no lease may outlive it.
  ++unanchored;
  int64_t d = now.MonoFromWall(unix_ms);
  if (foreign_bound > 0) d = std::min(d, foreign_bound);
  return d;
}

Store::Store(std::string clock_id, int databases) : clock_id_(std::move(clock_id)) {
  if (databases < 1) databases = 1;
  for (int db = 0; db < databases; ++db) {
    auto ks = std::make_unique<Keyspace>();
    ks->set_expiry_listener([this, db](std::string_view key) { OnExpired(db, key); });
    dbs_.push_back(std::move(ks));
  }
  Select(0);
}

bool Store::Note(std::string_view key) {
  return NoteIn(selected_, key);
}

bool Store::NoteIn(int db, std::string_view key) {
  ++changes_;
  if (on_key_) on_key_(db, key);
  if (log_ == nullptr) return false;
  // SELECT first, then MULTI: Redis's order, so a transaction's MULTI comes
  // after the SELECT of its first record.
  if (transaction_ != kOpenLogged) NoteDb(db);
  NoteTransaction();
  NoteDb(db);  // (inside a transaction, a record of another database)
  return true;
}

void Store::NoteDb(int db) {
  if (db == logged_db_) return;
  log_->Select(db);
  logged_db_ = db;
}

void Store::NoteTransaction() {
  if (transaction_ == kOpenNotLogged) {
    if (tx_single_unwrapped_) {
      tx_first_offset_ = log_->size();
      transaction_ = kOpenOneRecord;
    } else {
      log_->Multi();
      transaction_ = kOpenLogged;
    }
  } else if (transaction_ == kOpenOneRecord) {
    // A second record: the script's effects are a transaction after all.
    log_->InsertMulti(tx_first_offset_);
    transaction_ = kOpenLogged;
  }
}

bool Store::NoteFlush(int db) {
  ++changes_;
  if (on_flush_) on_flush_(db);
  if (log_ == nullptr) return false;
  if (db >= 0 && transaction_ != kOpenLogged) NoteDb(db);
  NoteTransaction();
  if (db >= 0) NoteDb(db);
  return true;
}

void Store::NoteClock(const TimeSnapshot& now) {
  int64_t offset = now.wall_ms - now.mono;
  if (last_mark_valid_ && offset == last_mark_offset_) return;
  log_->Clock(aof::ClockMark{clock_id_, now.mono, now.wall_ms});
  last_mark_valid_ = true;
  last_mark_offset_ = offset;
}

void Store::OnExpired(int db, std::string_view key) {
  if (on_expired_) on_expired_(db, key);
  if (on_change_) {
    // Told before the entry goes, so the expired value is still there.
    const Keyspace::Entry* e = dbs_[static_cast<size_t>(db)]->Peek(key);
    KeyChange c;
    c.kind = KeyChange::kExpire;
    c.key = key;
    c.had = e != nullptr;
    if (e != nullptr) {
      if (e->is_string()) c.old_value = e->value();
      c.old_deadline = e->deadline;
    }
    on_change_(c);
  }
  // A key removed because its lease passed is an effect like any other: the
  // log says DEL (in its database), so the log and memory agree.
  if (NoteIn(db, key)) log_->Del(key);
}

void Store::EndTransaction() {
  if (tx_depth_ == 0 || --tx_depth_ > 0) return;
  if (transaction_ == kOpenLogged && log_ != nullptr) log_->Exec();
  transaction_ = kNone;
}

bool Store::NoteLibrary() {
  ++changes_;
  if (log_ == nullptr) return false;
  NoteTransaction();
  return true;
}

void Store::LogFunctionLoad(std::string_view code) {
  if (NoteLibrary()) log_->FunctionLoad(code);
}

void Store::LogFunctionDelete(std::string_view name) {
  if (NoteLibrary()) log_->FunctionDelete(name);
}

void Store::LogFunctionFlush() {
  if (NoteLibrary()) log_->FunctionFlush();
}

void Store::Put(std::string_view key, std::string_view value, Lease lease, const TimeSnapshot& now,
                ValueKind kind, uint64_t token) {
  Observed observed(*this, key);
  if (lease.kind == Lease::kUntil && lease.deadline < now.mono) {
    // Already in the past (EXAT/PXAT before now): the key ends up deleted.
    // Even when there was nothing to delete it counts as a write to the key
    // for WATCH, as in Redis.
    if (cur_->Erase(key)) {
      if (Note(key)) log_->Del(key);
    } else if (on_key_) {
      on_key_(selected_, key);
    }
    return;
  }
  int64_t deadline = lease.kind == Lease::kUntil ? lease.deadline : kNoDeadline;
  if (lease.kind == Lease::kKeep) {
    // The record states the deadline the key keeps.
    const Keyspace::Entry* old = cur_->Peek(key);
    deadline = old != nullptr ? old->deadline : kNoDeadline;
  }
  cur_->Tick(now.mono);
  const size_t before = cur_->size();
  const Keyspace::Entry* e =
      cur_->Set(key, value, deadline, false, static_cast<uint8_t>(kind), token);
  NoteNew(before, key);
  if (!Note(key)) return;
  // The fence annotation goes right before its SET (after any clock
  // annotation): the reader keeps the two together.
  if (deadline == kNoDeadline) {
    if (e->fenced) log_->Fence(e->token());
    log_->Set(key, value, 0);
  } else {
    NoteClock(now);
    if (e->fenced) log_->Fence(e->token());
    log_->Set(key, value, now.WallFromMono(deadline));
  }
}

Applied Store::Apply(aof::Op op, std::string_view key, std::span<const std::string_view> rest,
                     const TimeSnapshot& now) {
  Observed observed(*this, key);
  words_.clear();
  words_.push_back(aof::Kind(op).word);
  words_.push_back(key);
  words_.insert(words_.end(), rest.begin(), rest.end());
  aof::Record r;
  r.op = op;
  r.args = words_;
  r.key = key;
  cur_->Tick(now.mono);
  const size_t before = cur_->size();
  Applier applier(*this, nullptr);
  aof::Visit(r, applier);
  NoteNew(before, key);
  // The applier changes memory; the record says what it did. A record that
  // changed nothing (HDEL of absent fields) is not logged, as a failed
  // SET NX is not.
  if (applier.applied.changed && Note(key)) log_->Append(op, key, rest);
  return std::move(applier.applied);
}

bool Store::Rename(std::string_view from, std::string_view to, const TimeSnapshot& now) {
  if (from == to) return cur_->Contains(from);
  Observed observed_to(*this, to);
  cur_->Tick(now.mono);
  const size_t before = cur_->size();
  if (!cur_->Rename(from, to)) return false;
  if (cur_->size() == before) NoteNew(before - 1, to);  // (from went, to came)
  // Both names changed (WATCH, waiters): the old one is gone.
  if (on_key_) on_key_(selected_, from);
  if (Note(to)) log_->Append(aof::Op::kRename, {from, to});
  return true;
}

void Store::WriteCopy(const Keyspace::Entry& e, std::string_view to, const TimeSnapshot& now) {
  // The copy's records are those a rewrite would write for it, under the
  // new name (there is no record of a whole value).
  if (e.is_string()) {
    Put(to, e.value(), e.has_deadline() ? Lease::Until(e.deadline) : Lease::None(), now,
        static_cast<ValueKind>(e.value_kind), /*token=*/0);
    return;
  }
  Observed observed(*this, to);
  cur_->Tick(now.mono);
  const size_t before = cur_->size();
  const int64_t deadline = e.has_deadline() ? e.deadline : kNoDeadline;
  // A packed collection is copied as its image, a boxed one as its Object.
  const Keyspace::Entry* copy = e.packed_in_entry()
                                    ? cur_->SetImage(to, e.type(), e.image(), deadline)
                                    : cur_->SetObject(to, e.object()->Clone(), deadline);
  NoteNew(before, to);
  if (!Note(to)) return;
  if (copy->has_deadline()) NoteClock(now);
  WriteEntry(*copy, *log_, now);
}

void Store::Copy(std::string_view from, int to_db, std::string_view to, const TimeSnapshot& now) {
  const Keyspace::Entry* e = cur_->Peek(from);
  if (e == nullptr) return;
  if (to_db == selected_) {
    WriteCopy(*e, to, now);
    return;
  }
  const int back = selected_;
  Select(to_db);
  WriteCopy(*e, to, now);
  Select(back);
}

void Store::MoveKey(std::string_view key, int to_db, const TimeSnapshot& now) {
  const Keyspace::Entry* e = cur_->Peek(key);
  if (e == nullptr) return;
  // Its records there (a string without its token: another database is
  // another lock), then its DEL here, as one transaction.
  Atomic atomic(*this);
  Copy(key, to_db, key, now);
  Delete(key);
}

void Store::Delete(std::string_view key) {
  Observed observed(*this, key);
  if (cur_->Erase(key) && Note(key)) log_->Del(key);
}

void Store::SetDeadline(std::string_view key, int64_t deadline, const TimeSnapshot& now) {
  Observed observed(*this, key);
  if (deadline <= now.mono) {
    Delete(key);
    return;
  }
  if (!cur_->SetDeadline(key, deadline) || !Note(key)) return;
  NoteClock(now);
  log_->PExpireAt(key, now.WallFromMono(deadline));
}

void Store::Persist(std::string_view key) {
  Observed observed(*this, key);
  if (cur_->SetDeadline(key, kNoDeadline) && Note(key)) log_->Persist(key);
}

void Store::Clear() {
  if (on_change_) {
    KeyChange c;
    c.kind = KeyChange::kFlush;
    on_change_(c);
  }
  if (NoteFlush(-1)) log_->FlushAll();  // first: WATCH needs to see which keys go
  for (auto& ks : dbs_) ks->Clear();
}

void Store::ClearSelected() {
  if (on_change_) {
    KeyChange c;
    c.kind = KeyChange::kFlush;
    on_change_(c);
  }
  if (NoteFlush(selected_)) log_->FlushDb();
  cur_->Clear();
}

// SWAPDB's effect, live and in replay: the two keyspaces change numbers.
void Store::SwapKeyspaces(int a, int b) {
  std::swap(dbs_[static_cast<size_t>(a)], dbs_[static_cast<size_t>(b)]);
  // The expiry listeners still name the database each keyspace was created
  // for: give them their new numbers. Fenced keys lose their tokens (see
  // "Fencing tokens"); a replay of the SWAPDB record does the same.
  for (int db : {a, b}) {
    Keyspace& ks = *dbs_[static_cast<size_t>(db)];
    ks.set_expiry_listener([this, db](std::string_view key) { OnExpired(db, key); });
    if (a == b) break;
    std::vector<std::string> fenced;
    ks.ForEach([&](const Keyspace::Entry& e) {
      if (e.token() != 0) fenced.emplace_back(e.key());
    });
    for (const std::string& key : fenced) {
      const Keyspace::Entry* e = ks.Peek(key);
      ks.Set(key, std::string(e->value()), e->deadline, /*keep_deadline=*/true, e->value_kind,
             /*token=*/0);
    }
  }
}

void Store::SwapDatabases(int a, int b) {
  if (on_flush_) {
    on_flush_(a);  // (WATCH: the keys of both change, see watch.cc)
    on_flush_(b);
  }
  ++changes_;
  if (log_ != nullptr) {
    if (transaction_ != kOpenLogged) NoteDb(selected_);
    NoteTransaction();
    log_->SwapDb(a, b);
  }
  SwapKeyspaces(a, b);
  Select(selected_);
  // A watched key changes if it existed on either side (Redis's rule): what
  // it names now, too.
  if (on_flush_) {
    on_flush_(a);
    on_flush_(b);
  }
}

size_t Store::total_size() const {
  size_t n = 0;
  for (const auto& ks : dbs_) n += ks->size();
  return n;
}

size_t Store::total_keys_with_deadline() const {
  size_t n = 0;
  for (const auto& ks : dbs_) n += ks->keys_with_deadline();
  return n;
}

int64_t Store::MaxDeadline() const {
  int64_t m = INT64_MIN;
  for (const auto& ks : dbs_) m = std::max(m, ks->MaxDeadline());
  return m;
}

size_t Store::memory_bytes() const {
  size_t n = 0;
  for (const auto& ks : dbs_) n += ks->memory_bytes();
  return n;
}

int64_t Store::AverageTtl(int db, int64_t now) const {
  return dbs_[static_cast<size_t>(db)]->AverageTtl(now);
}

size_t Store::ActiveExpireCycle(int64_t now, int64_t budget_us) {
  // Each database in turn, as Redis's cycle does; a database without
  // leases costs nothing.
  size_t total = 0;
  size_t n = dbs_.size();
  int64_t per_db = std::max<int64_t>(1, budget_us / static_cast<int64_t>(std::min<size_t>(n, 16)));
  for (size_t i = 0; i < n; ++i) {
    Keyspace& ks = *dbs_[(expire_db_ + i) % n];
    if (ks.keys_with_deadline() == 0) continue;
    total += ks.ActiveExpireCycle(now, per_db);
  }
  expire_db_ = (expire_db_ + 1) % n;
  return total;
}

bool Store::RehashStep(int buckets) {
  bool more = false;
  for (auto& ks : dbs_) more = ks->RehashStep(buckets) || more;
  return more;
}

std::string Store::CheckReplayable(const aof::Record& r) const {
  auto have = [&](int64_t db) { return db < databases(); };
  if (r.op == aof::Op::kSelect && !have(r.db)) {
    return "SELECT " + std::to_string(r.db) + ", but this server has " +
           std::to_string(databases()) + " databases (the databases setting)";
  }
  if (r.op == aof::Op::kSwapDb && (!have(r.db) || !have(r.db2))) {
    return "SWAPDB " + std::to_string(r.db) + " " + std::to_string(r.db2) +
           ", but this server has " + std::to_string(databases()) +
           " databases (the databases setting)";
  }
  return {};
}

std::string Store::Replay(const aof::Record& r, ReplayClock& clock) {
  if (std::string why = CheckReplayable(r); !why.empty()) return why;
  cur_->Tick(clock.now.mono);  // a replayed key was last written at the replay
  cur_->set_bulk_load(true);   // until FinishReplay
  Applier applier(*this, &clock);
  aof::Visit(r, applier);
  return std::move(applier.error);
}

void Store::ExpectReplayGrowth(double factor) {
  // (Each database by its own share of the keys.)
  for (auto& ks : dbs_) {
    if (ks->size() > 0) ks->Reserve(static_cast<size_t>(static_cast<double>(ks->size()) * factor));
  }
}

size_t Store::FinishReplay(ReplayClock& clock) {
  size_t n = 0;
  for (auto& ks : dbs_) {
    ks->set_bulk_load(false);
    n += ks->EraseExpired(clock.now.mono);
  }
  clock.expired += n;
  Select(0);  // a new session starts in database 0; the log's next record says SELECT
  return n;
}

std::string Store::Reload(const TimeSnapshot& now) {
  aof::Batch snapshot;
  WriteSnapshot(
      snapshot, [] { return true; }, now);
  aof::Batch* log = log_;
  log_ = nullptr;
  const int selected = selected_;
  if (on_flush_) on_flush_(-1);
  for (auto& ks : dbs_) ks->Clear();
  ReplayClock clock;
  clock.clock_id = clock_id_;
  clock.now = now;
  std::string error;
  aof::Reader reader(snapshot.bytes());
  while (error.empty() && reader.Next() == aof::Reader::Status::kUnit) {
    for (const aof::Record& r : reader.records()) {
      if (std::string why = Replay(r, clock); !why.empty() && error.empty()) error = why;
    }
  }
  FinishReplay(clock);
  Select(selected);
  set_log(log);  // the next record states its SELECT and clock again
  return error;
}

void Store::WriteEntry(const Keyspace::Entry& e, aof::Batch& out, const TimeSnapshot& now) {
  if (e.is_string()) {
    if (e.fenced) out.Fence(e.token());
    out.Set(e.key(), e.value(), e.has_deadline() ? now.WallFromMono(e.deadline) : 0);
    return;
  }
  // A collection: its elements in batches, then its lease, as Redis's
  // rewrite writes them.
  WithObject(e, [&](const Object& o) { o.WriteRecords(e.key(), out); });
  if (e.has_deadline()) out.PExpireAt(e.key(), now.WallFromMono(e.deadline));
}

bool Store::WriteSnapshot(aof::Batch& out, const std::function<bool()>& drain,
                          const TimeSnapshot& now) const {
  out.Clock(aof::ClockMark{clock_id_, now.mono, now.wall_ms});
  bool ok = true;
  if (library_lister_) {
    library_lister_([&](std::string_view code) {
      if (ok) out.FunctionLoad(code);
      if (ok && out.size() >= (1 << 20)) ok = drain();
    });
  }
  for (size_t db = 0; db < dbs_.size() && ok; ++db) {
    if (dbs_[db]->size() == 0) continue;
    out.Select(static_cast<int64_t>(db));
    dbs_[db]->ForEach([&](const Keyspace::Entry& e) {
      if (!ok) return;
      if (e.has_deadline() && now.mono > e.deadline) return;  // expired: leave it out
      WriteEntry(e, out, now);
      if (out.size() >= (1 << 20)) ok = drain();
    });
  }
  return ok;
}

}  // namespace latch
