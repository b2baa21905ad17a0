// Persistence: everything between a command's effects and the disk, beside
// the loop rather than inside Server.
//
//   start-up   the previous run's state record, the log's replay in slices
//              (clients get -LOADING meanwhile), the lease policy's decision,
//              then the log writer (server/replay.h, server/lease_policy.h,
//              log/writer.h);
//   each loop  the batch of records is written (and fsynced under `always`)
//   iteration  before any reply leaves (Flush);
//   the hold   a reply that reports a write leaves only once the log has the
//              write's record (Hold, ReplyIsDurable; Connection::Flush);
//   WAITAOF    clients parked until an fsync covers their writes;
//   the cron   the writer's everysec fsync, retries and rewrites, the lease
//              policy's background record writes, the automatic rewrite.
//
// The parts tell each other what happened instead of being polled: the
// writer reports (aof::WriterEvents) that bytes were written or synced, that
// a write or fsync failed or recovered, that a rewrite started or switched
// files; this component passes each on to whoever cares — the lease policy
// (its at-risk ledger, "log errors", the log file its record names), the
// Store (a fresh clock annotation after a rewrite's fork), the held replies
// and WAITAOF's parked clients — and tells the server (Listener) what it must
// act on: start serving, a reply may leave, a parked client is answered,
// refused grants may be retried, start-up failed.
#pragma once

#include <uv.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "log/bio.h"
#include "log/writer.h"
#include "server/clock.h"
#include "server/config.h"
#include "server/control.h"
#include "server/lease_policy.h"
#include "server/replay.h"
#include "server/store.h"
#include "server/uv_handle.h"

namespace latch {

class Connection;

class Persistence final : private aof::WriterEvents {
 public:
  // What the server acts on.
  class Listener {
   public:
    // The log is loaded (or there is none) and, with appendonly yes, open:
    // `log` is the writer (nullptr with appendonly no). Serve.
    virtual void OnServing(const aof::Writer* log) = 0;
    // The log will be replayed in slices: answer -LOADING meanwhile.
    virtual void OnLoading() = 0;
    // Start-up failed (an unreadable or corrupt log): stop.
    virtual void OnFatal(const std::string& message) = 0;
    // A held reply of `c` may leave now (its write reached the log).
    virtual void OnReplyDurable(Connection& c) = 0;
    // A parked WAITAOF client was answered, from byte `reply_start` of its output.
    virtual void OnWaitAnswered(Connection& c, size_t reply_start) = 0;
    // A grant refused "for now" may succeed: the quarantine ended, the state
    // record or the log can be written again.
    virtual void OnGrantsMayResume() = 0;

   protected:
    ~Listener() = default;
  };

  // `releases` names the write commands that never grant (for the lease
  // policy's refusal text).
  Persistence(const Config& config, Clock& clock, Store& store, std::string releases,
              Listener& listener);
  ~Persistence();
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  LeasePolicy& policy() { return *policy_; }
  const LeasePolicy& policy() const { return *policy_; }
  // The log, or nullptr when appendonly is no (or while loading).
  aof::Writer* log() { return log_.get(); }
  const aof::Writer* log() const { return log_.get(); }
  // Whether the log accepts writes (no log: yes).
  bool write_ok() const { return log_ == nullptr || log_->write_ok(); }

  // ---- start-up
  // Reads the previous run's record and starts the replay on `loop` (in
  // slices, on an idle handle); the listener hears OnLoading, then
  // OnServing or OnFatal.
  void Start(uv_loop_t* loop, const TimeSnapshot& now);
  // Replay figures for INFO persistence (nullptr: no replay running).
  const Replay* replay() const { return replay_.get(); }
  int64_t loading_start_ms() const { return loading_start_ms_; }
  // Where a torn tail was cut at load (-1: none).
  int64_t truncated_at() const { return truncated_at_; }

  // ---- each loop iteration, before the replies leave
  // Writes the batch (and fsyncs it under `always`). Exits the process on a
  // fatal log error: no reply may leave then.
  void Flush(int64_t now_ms);
  // hz times a second.
  void Cron(const TimeSnapshot& now);

  // ---- the reply hold
  // A reply from byte `reply_start` of c's output reports a write the log
  // got since the Store counted `changes_before`: it is held until the log
  // has it (Connection::Flush asks ReplyIsDurable).
  void Hold(Connection& c, size_t reply_start, uint64_t changes_before);
  bool ReplyIsDurable(uint64_t until) const {
    return log_ == nullptr || log_->durable_end() >= until;
  }
  // c's held reply left (it was durable).
  void Released(Connection& c);
  // c's held reply could not leave (the log is behind): tell the listener
  // as soon as it may.
  void Waiting(Connection& c);

  // ---- WAITAOF
  void ParkForFsync(Connection& c, bool local, int64_t numreplicas, int64_t deadline);
  size_t parked() const { return fsync_waits_.size(); }
  // CLIENT UNBLOCK: ends c's WAITAOF now, answered as at its timeout (or
  // with the UNBLOCKED error). False if c is not waiting for an fsync.
  bool EndFsyncWait(Connection& c, bool error);
  // Answers the parked requests whose wait is over (an fsync covered their
  // writes, or the deadline passed); `now` is boot-clock ms. Each completed
  // fsync and the cron call it.
  void ServeFsyncWaits(int64_t now);
  ServerControl::LogDurability durability() const;

  // A connection closes: it leaves every list here.
  void Forget(Connection& c);

  // ---- control
  // BGREWRITEAOF (and the automatic rewrite): the snapshot is the Store's.
  std::optional<std::string> Rewrite(const TimeSnapshot& now);
  // DEBUG POWERLOSS: the log loses what no fsync covered, the process ends.
  [[noreturn]] void SimulatePowerLoss();
  // After CONFIG SET (kEffectLeasePolicy, kEffectLogWriter): the lease
  // policy records a weaker promise before it takes effect. An error text
  // when it cannot (nothing changed then).
  std::optional<std::string> Reconfigure(uint32_t effects, int64_t now);
  // At exit: the last write and fsync, and (`orderly`: not after a fatal
  // start) the state record says whether the log holds everything.
  void Shutdown(int64_t now, bool orderly);
  // Closes the loop handles (before the loop is closed).
  void CloseHandles();
  // CONFIG SET appendonly (log_switch.cc): the log closed (synced first),
  // or a new one created holding the whole dataset, synced, before the state
  // record names it.
  std::optional<std::string> SwitchAppendOnly(bool on, const TimeSnapshot& now);

  // Drains the background thread (before the log and policy go away).
  void Drain() { bio_->Drain(); }

 private:
  static void OnLoadStep(uv_idle_t* idle);
  void LoadStep();
  void FinishLoading();
  void Fatal(const std::string& message);
  void ReleaseWaiting();
  void MaybeAutoRewrite(const TimeSnapshot& now);

  // aof::WriterEvents
  void OnWritten(uint64_t end) override;
  void OnSynced(uint64_t end) override;
  void OnError() override;
  void OnRecovered() override;
  void OnNewFile(const std::string& log_id) override;
  void OnRewriteStarted() override;

  const Config& config_;
  Clock& clock_;
  Store& store_;
  Listener& listener_;
  // The background thread for slow file operations (log fsync, state record).
  std::unique_ptr<BackgroundIo> bio_;
  // The restart quarantine, the horizons, the fencing counter.
  std::unique_ptr<LeasePolicy> policy_;
  // The log: its replay at start-up, then its writer.
  std::unique_ptr<Replay> replay_;
  ReplayClock replay_clock_;
  std::unique_ptr<aof::Writer> log_;
  aof::LogIdentity log_identity_;  // the log as found at start-up
  // The fsync of the log as found, queued at start-up to run beside the
  // replay, and its errno (0: synced).
  bool existing_sync_pending_ = false;
  // (Shared with the job: it may outlive this object's members on a fatal
  // stop, when the background thread finishes its queue.)
  std::shared_ptr<std::atomic<int>> existing_sync_errno_ = std::make_shared<std::atomic<int>>(0);
  UvHandle<uv_idle_t> load_idle_;
  int64_t loading_start_ms_ = 0;
  int64_t last_progress_log_ms_ = 0;
  int64_t truncated_at_ = -1;

  // Connections whose replies are held: how many, and those whose reply
  // could not leave at the end of an iteration (the log fell behind).
  size_t held_ = 0;
  std::vector<Connection*> waiting_;

  // WAITAOF's parked clients.
  struct FsyncWait {
    Connection* client;
    bool local;
    int64_t numreplicas;
    int64_t deadline;  // boot-clock ms; 0: none
  };
  std::vector<FsyncWait> fsync_waits_;
};

}  // namespace latch
