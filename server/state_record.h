// latch.state: what a run tells the next one about the locks it may have
// granted. Small text, written with fsync and an atomic rename, checksummed.
//
//   latch-state 3
//   status running|clean       clean: shut down with every acknowledged write
//                              in the log and on disk
//   clock <clock-id>           the boot clock the times below are on
//   written-at <ms>            when this record was written (that clock)
//   horizon <ms>|none          no lease this node granted ends after this
//   at-risk <ms>|none          no lease whose record no completed fsync of
//                              the log covered ends after this (<= horizon):
//                              what a power loss can make the node forget
//   forgotten-until <ms>|none  leases lost by an earlier unsafe restart may
//                              live until then (a quarantine in progress)
//   ttl-cap <ms>|none          the longest lease any of them can have
//   appendonly yes|no          the run logged its writes
//   fsync-always yes|no        appendfsync always from start to end, no fsync error
//   log-errors yes|no          a write or fsync of the log failed in this run
//   log <id>|none <bytes>      the log file the promises above rest on, and
//                              how much of it was synced when this was written
//   fence-reserved <n>         fencing tokens up to n may have been issued: the
//                              next run starts above it (reserved ahead of use)
//   checksum <xxh64 of the lines above>
//
// Version 2 (without at-risk and log-errors) is still read: its horizon
// stands for the at-risk bound, and log errors are assumed unless it says
// fsync-always. A missing record (with a log present) or a damaged one means "unsafe":
// see lease_policy.h for what each combination implies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace latch {

struct StateRecord {
  bool clean = false;
  std::string clock_id;
  int64_t written_at = 0;
  std::optional<int64_t> horizon;
  std::optional<int64_t> at_risk;
  std::optional<int64_t> forgotten_until;
  std::optional<int64_t> ttl_cap;  // nullopt: leases of any length
  bool appendonly = false;
  bool fsync_always = false;
  bool log_errors = false;
  uint64_t fence_reserved = 0;
  std::string log_id;  // empty: none
  uint64_t log_synced = 0;

  std::string Serialize() const;
  // nullopt if the text is damaged: bad syntax, a missing or unknown field,
  // another version, a checksum that does not match.
  static std::optional<StateRecord> Parse(const std::string& text);
};

// Writes `text` to `path` durably: a temporary file, fsync, rename over
// `path`, fsync of the directory. Returns 0 or the errno of the step that
// failed (then `path` still holds the previous record). Honours injected
// faults (common/io_faults.h, IoOp::kStateWrite).
int WriteStateFile(const std::string& path, const std::string& text);

}  // namespace latch
