// NodeSet: one connection to each of N independent latch (or Redis) nodes, and
// "rounds" that send the same request to all of them at once.
//
// RedLock's safety argument needs the requests to go out in parallel: the
// validity of a lock is its TTL minus the time the whole round took, so a
// client that asked the nodes one after another would spend its TTL waiting
// for slow nodes. A round therefore writes to every node, then waits for the
// replies with poll() on non-blocking sockets, all under one deadline that is
// far shorter than the TTL. A node that is down (connection refused), slow or
// paused (no answer before the deadline), or that answers garbage is a
// failure of that node only; the caller always gets control back by the
// deadline. No thread per node is needed.
//
// Connections are kept between rounds, but a node that failed in any way has
// its connection closed: a late reply to a timed-out request would otherwise
// be read as the answer to the next one.
//
// Not thread-safe: one round at a time (RedLock serializes them).
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/unique_fd.h"
#include "protocol/reply_parser.h"
#include "tools/redlock/tls_client.h"

namespace latch {

// host:port of one node.
struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string ToString() const;
};

// Parses "host:port,host:port,…" (IPv6 as [addr]:port). On error returns
// nullopt and sets *error to a message naming the bad element.
std::optional<std::vector<Endpoint>> ParseEndpoints(std::string_view list, std::string* error);

// What one node did in one round.
struct NodeResult {
  enum class Status {
    kReplied,        // every expected reply arrived, nothing more
    kTimeout,        // no complete answer before the deadline (slow, paused)
    kConnectFailed,  // could not connect (down, refused, unresolvable)
    kClosed,         // the node closed the connection (crashed, or refused us)
    kIoError,        // send/recv failed
    kGarbage,        // bytes that are not RESP, or more bytes than replies
    kAuthFailed,     // the AUTH sent on a new connection was refused
  };
  Status status = Status::kTimeout;
  std::vector<resp::Reply> replies;      // kReplied: one per command sent
  std::string detail;                    // failures: a short human-readable reason
  std::chrono::microseconds latency{0};  // from the start of the round to the answer
  // Whether any byte of the request left for the node: when false the node
  // cannot have applied it (it was down, or the connection never opened).
  bool sent = false;

  bool ok() const { return status == Status::kReplied; }
};

const char* StatusName(NodeResult::Status s);

class NodeSet {
 public:
  // Resolves every host once, here (a round must not block on DNS). A host
  // that does not resolve fails every round with the resolver's message.
  // With `tls`, every connection speaks TLS (tls_client.h): the handshake
  // runs inside the first round's deadline, like the connect.
  // With a password, each new connection first sends AUTH [user] password
  // (pipelined with the round's request).
  explicit NodeSet(std::vector<Endpoint> nodes, std::string password = "",
                   std::shared_ptr<const TlsClient> tls = nullptr, std::string user = "");
  ~NodeSet();
  NodeSet(const NodeSet&) = delete;
  NodeSet& operator=(const NodeSet&) = delete;

  size_t size() const { return nodes_.size(); }
  const Endpoint& endpoint(size_t i) const { return nodes_[i].endpoint; }

  // Sends `request` (already RESP-encoded: `n_replies` pipelined commands) to
  // each node i with which[i] true (every node when `which` is empty), and
  // collects the answers until `timeout` has passed. Results are indexed by
  // node; unselected nodes are reported as kTimeout with detail "skipped".
  std::vector<NodeResult> Round(std::string_view request, size_t n_replies,
                                std::chrono::microseconds timeout,
                                const std::vector<bool>& which = {});

  // Drops every connection (the next round reconnects).
  void CloseAll();

 private:
  struct Node {
    Endpoint endpoint;
    sockaddr_storage addr{};
    socklen_t addr_len = 0;
    std::string resolve_error;  // non-empty: the host did not resolve
    struct SslFree {
      void operator()(SSL* s) const { SSL_free(s); }
    };
    std::unique_ptr<SSL, SslFree> ssl;  // TLS: over fd, freed before it
    UniqueFd fd;
    bool authenticated = false;
    void Drop() {
      ssl.reset();
      fd.reset();
      authenticated = false;
    }
  };
  std::vector<Node> nodes_;
  std::string password_;
  std::shared_ptr<const TlsClient> tls_;
  std::string user_;
};

}  // namespace latch
