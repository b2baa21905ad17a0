// WAITAOF's parked clients: a request that asks for its writes to be on disk
// before it is answered waits here, without blocking the loop, until the
// log's fsync covers them or its timeout passes.
//
// The wait is checked where the answer can change: at the end of each loop
// iteration, right after the log's write (and, under appendfsync always, its
// fsync; a background fsync that finished is noticed there too), and by the
// cron, which also ends the waits whose deadline passed (at hz granularity,
// 100 ms by default). A parked client reads no further request; once
// answered, the requests already in its buffer run on the next loop
// iteration, in order.
#include "protocol/reply_writer.h"
#include "server/connection.h"
#include "server/server.h"

namespace latch {

ServerControl::LogDurability Server::log_durability() const {
  LogDurability d;
  d.enabled = log_ != nullptr;
  d.fsynced_end = log_ != nullptr ? log_->synced_end() : 0;
  return d;
}

void Server::ParkForFsync(Session& s, bool local, int64_t numreplicas, int64_t deadline) {
  auto& c = static_cast<Connection&>(s);
  c.blocked = true;
  fsync_waits_.push_back({&c, local, numreplicas, deadline});
}

void Server::ServeFsyncWaits(int64_t now) {
  const LogDurability log = log_durability();
  std::vector<FsyncWait> still;
  for (const FsyncWait& w : fsync_waits_) {
    Connection& c = *w.client;
    const bool synced = log.enabled && log.fsynced_end >= c.last_write_offset;
    // No replica ever acknowledges: a wait for one ends only at its deadline.
    const bool met = (synced || !w.local) && w.numreplicas <= 0;
    if (!met && (w.deadline == 0 || now < w.deadline)) {
      still.push_back(w);
      continue;
    }
    size_t start = c.output().size();
    resp::ReplyWriter reply(&c.output(), c.resp);
    reply.Array(2);
    reply.Int(synced ? 1 : 0);
    reply.Int(0);
    Unpark(c, start);
  }
  fsync_waits_.swap(still);
}

void Server::Unpark(Connection& c, size_t reply_start) {
  c.blocked = false;
  FinishReply(c, reply_start);
  c.NoteOutput();
  OnClientOutput(c);
  if (c.query_buffer_size() > 0 && resume_idle_.get() != nullptr) {
    // Its next requests run on the next loop iteration: an idle handle
    // keeps the loop from sleeping until then.
    if (!resume_idle_.initialized()) {
      uv_idle_init(&loop_, resume_idle_.get());
      resume_idle_.MarkInitialized();
      resume_idle_->data = this;
    }
    resumable_.push_back(&c);
    uv_idle_start(resume_idle_.get(), OnResume);
  }
}

void Server::OnResume(uv_idle_t* idle) {
  auto* server = static_cast<Server*>(idle->data);
  uv_idle_stop(idle);
  std::vector<Connection*> clients;
  clients.swap(server->resumable_);
  for (Connection* c : clients) {
    if (!c->closing() && !c->blocked) c->ProcessInput();
  }
}

void Server::ForgetWaits(Connection& c) {
  std::erase_if(fsync_waits_, [&](const FsyncWait& w) { return w.client == &c; });
  // A waiter that disconnects leaves its queues: the next one moves up.
  waiters_.Forget(c);
  std::erase(resumable_, &c);
}

}  // namespace latch
