#include "server/clients.h"

#include <algorithm>

#include "server/connection.h"
#include "server/uring.h"

namespace latch {

void ClientRegistry::Link(Connection& c) {
  c.next_ = head_;
  if (head_ != nullptr) head_->prev_ = &c;
  head_ = &c;
  ++size_;
}

void ClientRegistry::Unlink(Connection& c) {
  if (c.monitor) std::erase(monitors_, &c);
  if (c.pending_flush_) {
    std::erase(pending_flush_, &c);
    c.pending_flush_ = false;
  }
  std::erase(resumable_, &c);
  if (c.prev_ != nullptr) c.prev_->next_ = c.next_;
  if (c.next_ != nullptr) c.next_->prev_ = c.prev_;
  if (head_ == &c) head_ = c.next_;
  c.prev_ = c.next_ = nullptr;
  --size_;
}

void ClientRegistry::ForEach(const std::function<void(Connection&)>& f) {
  for (Connection* c = head_; c != nullptr;) {
    Connection* next = c->next_;
    f(*c);
    c = next;
  }
}

Connection* ClientRegistry::Find(uint64_t id) {
  for (Connection* c = head_; c != nullptr; c = c->next_) {
    if (c->id() == id && !c->closing()) return c;
  }
  return nullptr;
}

void ClientRegistry::CloseAll() {
  while (head_ != nullptr) head_->Close();
}

void ClientRegistry::NeedsFlush(Connection& c) {
  if (!c.pending_flush_) {
    c.pending_flush_ = true;
    pending_flush_.push_back(&c);
  }
}

void ClientRegistry::FlushPending(const Session* keep) {
  // Flush() may close a connection, which removes it from pending_flush_,
  // so walk a copy.
  std::vector<Connection*> flush;
  flush.swap(pending_flush_);
  for (Connection* c : flush) {
    if (c == keep) {
      pending_flush_.push_back(c);
      continue;
    }
    if (!c->pending_flush_) continue;  // closed meanwhile
    c->Flush();
  }
  // Every send queued above (and receives armed since the last submit)
  // goes to the kernel in one system call.
  if (ring_ != nullptr) ring_->Submit();
}

bool ClientRegistry::AddMonitor(Connection& c) {
  if (c.monitor) return false;
  c.monitor = true;
  monitors_.push_back(&c);
  return monitors_.size() == 1;
}

bool ClientRegistry::RemoveMonitor(Connection& c) {
  if (!c.monitor) return false;
  c.monitor = false;
  std::erase(monitors_, &c);
  return monitors_.empty();
}

void ClientRegistry::ResumeSoon(Connection& c) {
  if (resume_idle_.get() == nullptr) return;  // shutting down
  if (!resume_idle_.initialized()) {
    uv_idle_init(loop_, resume_idle_.get());
    resume_idle_.MarkInitialized();
    resume_idle_->data = this;
  }
  resumable_.push_back(&c);
  uv_idle_start(resume_idle_.get(), OnResume);
}

void ClientRegistry::OnResume(uv_idle_t* idle) {
  auto* self = static_cast<ClientRegistry*>(idle->data);
  uv_idle_stop(idle);
  std::vector<Connection*> clients;
  clients.swap(self->resumable_);
  for (Connection* c : clients) {
    if (!c->closing() && !c->blocked) c->ProcessInput();
  }
}

}  // namespace latch
