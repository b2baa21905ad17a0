// The client registry: every open connection, and the lists the loop keeps
// about them.
//
// Owns the connections' list (newest first, as CLIENT LIST shows them; a
// Connection links itself in at accept and out when it closes), the client
// ids, the client whose request is being executed, the connections with
// output to flush before the loop sleeps, the MONITOR clients, and the
// parked clients answered whose buffered requests run on the next loop
// iteration. It does not run requests: Connection asks its ClientHost
// (connection.h) for that. Kept apart from Server so the loop's class
// does not reach into Connection: only this class touches the list links.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "server/uv_handle.h"

namespace latch {

class Connection;
class IoRing;
class Session;

class ClientRegistry {
 public:
  explicit ClientRegistry(uv_loop_t* loop) : loop_(loop) {}
  ClientRegistry(const ClientRegistry&) = delete;
  ClientRegistry& operator=(const ClientRegistry&) = delete;

  // ---- the list
  uint64_t NextId() { return next_id_++; }
  // c, just accepted, goes first in the list.
  void Link(Connection& c);
  // c is closing: out of the list and of every list below.
  void Unlink(Connection& c);
  size_t size() const { return size_; }
  // Every connection, newest first. `f` may close the one it is given.
  void ForEach(const std::function<void(Connection&)>& f);
  // The open connection with this id, or nullptr.
  Connection* Find(uint64_t id);
  // Closes every connection (shutdown).
  void CloseAll();

  // ---- output
  // c has output to flush before the loop sleeps.
  void NeedsFlush(Connection& c);
  // Flushes every connection on the list but `keep` (nullptr: all), which
  // stays on it (busy.cc: the script's own client).
  void FlushPending(const Session* keep = nullptr);
  // `io-uring yes`: the ring plain connections use (nullptr: libuv's reads
  // and writes). FlushPending submits its queued sends at once (one
  // io_uring_enter per loop iteration).
  void set_ring(IoRing* ring) { ring_ = ring; }
  IoRing* ring() const { return ring_; }

  // ---- the request being executed (nullptr between requests)
  const Connection* executing() const { return executing_; }
  void set_executing(Connection* c) { executing_ = c; }

  // ---- MONITOR
  // Whether the feed changed from empty to one client (Add) or from some
  // to none (Remove): the gate's hook goes on or off then.
  bool AddMonitor(Connection& c);
  bool RemoveMonitor(Connection& c);
  const std::vector<Connection*>& monitors() const { return monitors_; }

  // ---- parked clients going on
  // c was answered; its buffered requests run on the next loop iteration
  // (an idle handle keeps the loop from sleeping until then).
  void ResumeSoon(Connection& c);
  void CloseHandles() { resume_idle_.Close(); }

 private:
  static void OnResume(uv_idle_t* idle);

  uv_loop_t* loop_;
  Connection* head_ = nullptr;
  size_t size_ = 0;
  uint64_t next_id_ = 1;
  Connection* executing_ = nullptr;
  IoRing* ring_ = nullptr;
  std::vector<Connection*> pending_flush_;
  std::vector<Connection*> monitors_;
  std::vector<Connection*> resumable_;
  UvHandle<uv_idle_t> resume_idle_;
};

}  // namespace latch
