// A client's session: what a command may know and change about the client
// that sent it. Commands see a Session, never the socket behind it
// (connection.h is the only implementation that has one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "server/transaction.h"

namespace latch {

namespace acl {
struct User;
}

class Session {
 public:
  explicit Session(uint64_t id) : id_(id) {}
  virtual ~Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  uint64_t id() const { return id_; }

  // Ends the session once the replies produced so far have been sent (QUIT,
  // CLIENT KILL of oneself), or at once (CLIENT KILL of another).
  virtual void CloseAfterReply() = 0;
  virtual void Close() = 0;
  virtual bool closing() const = 0;

  // Buffer sizes and the socket, for CLIENT LIST.
  struct Buffers {
    int fd = -1;
    size_t query = 0, query_capacity = 0;
    size_t output = 0, output_pending = 0, output_capacity = 0;
    size_t output_peak = 0;  // the most output held in the last 5 seconds
    bool reading = false;    // reading requests (not paused by back-pressure)
  };
  virtual Buffers buffers() const = 0;

  int resp = 2;                // protocol version chosen with HELLO
  int db = 0;                  // the database chosen with SELECT
  bool authenticated = false;  // true once AUTH succeeded or no password is set
  // The ACL user the session runs as (server/acl); nullptr: `default`.
  const acl::User* user = nullptr;
  bool monitor = false;           // receives the MONITOR feed
  std::string name;               // CLIENT SETNAME
  std::string lib_name, lib_ver;  // CLIENT SETINFO
  std::string addr, laddr;        // "ip:port" of the peer and of our socket
  bool local = false;             // the peer is a loopback address (or the unix socket)
  bool unix_socket = false;       // connected through `unixsocket` (CLIENT LIST: flag U)
  int64_t created_ms = 0;         // boot clock
  int64_t last_interaction_ms = 0;
  // The command being or last executed (its full name lives in the command
  // table), for CLIENT LIST; nullptr before the first.
  const std::string* last_command = nullptr;

  // MULTI … EXEC and WATCH (transaction.h).
  Transaction multi;

  // CLIENT REPLY, as Redis's three flags: OFF until ON; SKIP sets
  // skip_next, which becomes skip_this for the following command only. A
  // command's reply is dropped when, once it ran, off or skip_this is set
  // (Server::Dispatch).
  bool reply_off = false;
  bool reply_skip_next = false;
  bool reply_skip_this = false;
  bool ReplySuppressed() const { return reply_off || reply_skip_this; }
  bool no_evict = false;  // CLIENT NO-EVICT (reported; latch never evicts)

  // Pub/sub (pubsub.h keeps the server's side): the channels, shard
  // channels and patterns this session listens to.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using NameSet = std::unordered_set<std::string, NameHash, std::equal_to<>>;
  NameSet channels;
  NameSet shard_channels;
  std::vector<std::string> patterns;  // in subscription order, as Redis
  // SUBSCRIBE's and PSUBSCRIBE's count (channels and patterns together).
  size_t subscriptions() const { return channels.size() + patterns.size(); }
  // Listening to anything: Redis's CLIENT_PUBSUB (RESP2's subscribed mode,
  // the pubsub output-limit class, CLIENT LIST's flag P).
  bool subscribed() const {
    return !channels.empty() || !shard_channels.empty() || !patterns.empty();
  }
  // Delivers an out-of-band message — a pub/sub message or an
  // (un)subscribe confirmation pushed by another command — given as a RESP2
  // array (`*…`; a RESP3 session gets it as a push frame `>…`). It leaves
  // with the session's other output; a session over its output limit is
  // closed.
  virtual void Push(std::string_view frame) = 0;

  // WAITAOF parked the session: its next requests wait in the buffer.
  bool blocked = false;
  // Where the log's byte stream ended after this session's last write:
  // what WAITAOF waits to see fsynced.
  uint64_t last_write_offset = 0;

 private:
  uint64_t id_;
};

}  // namespace latch
