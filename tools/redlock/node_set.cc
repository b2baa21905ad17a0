#include "tools/redlock/node_set.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <openssl/err.h>

#include "protocol/request_writer.h"
#include "protocol/text.h"

namespace latch {

namespace {

using std::chrono::microseconds;
using Clock = std::chrono::steady_clock;

// A lock reply is a few dozen bytes; a node that sends more than this before
// the replies we expect are complete is not speaking the protocol.
constexpr size_t kMaxReplyBytes = 1 << 20;

std::string Errno(const char* what, int err) {
  return std::string(what) + ": " + std::strerror(err);
}

// Per-node progress within one round.
struct Pending {
  bool active = false;      // selected and not finished
  bool connecting = false;  // non-blocking connect() not yet completed
  std::string out;          // bytes still to send
  size_t expected = 0;      // replies to read (the AUTH reply included)
  bool sent_auth = false;   // the first expected reply answers AUTH
  std::string in;           // bytes received, not yet parsed
  size_t parsed = 0;        // in[0, parsed) holds complete replies
  // TLS: the socket event OpenSSL waits for before the next SSL_write or
  // SSL_read can progress (a handshake reads while we write, and back).
  short tls_wait = 0;
};

// A kept connection is usable if nothing is waiting to be read on it: we
// read every reply in full, so readable means closed (EOF, reset) or junk.
bool StillOpen(int fd, SSL* ssl) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) == 0) return true;
  if (ssl == nullptr) return false;
  // Over TLS the bytes may be a record with no data (a TLS 1.3 session
  // ticket): open if reading yields nothing yet.
  char byte;
  int r = SSL_read(ssl, &byte, 1);
  bool open = r <= 0 && SSL_get_error(ssl, r) == SSL_ERROR_WANT_READ;
  ERR_clear_error();
  return open;
}

}  // namespace

std::string Endpoint::ToString() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::optional<std::vector<Endpoint>> ParseEndpoints(std::string_view list, std::string* error) {
  std::vector<Endpoint> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = list.substr(pos, comma - pos);
    pos = comma + 1;
    std::string_view host, port;
    if (!item.empty() && item.front() == '[') {  // [::1]:7000
      size_t close = item.find(']');
      if (close == std::string_view::npos || close + 1 >= item.size() || item[close + 1] != ':') {
        *error = "bad node '" + std::string(item) + "' (expected [ADDR]:PORT)";
        return std::nullopt;
      }
      host = item.substr(1, close - 1);
      port = item.substr(close + 2);
    } else {
      size_t colon = item.rfind(':');
      if (colon == std::string_view::npos) {
        *error = "bad node '" + std::string(item) + "' (expected HOST:PORT)";
        return std::nullopt;
      }
      host = item.substr(0, colon);
      port = item.substr(colon + 1);
    }
    auto p = ParseInt64(port);
    if (host.empty() || !p || *p < 1 || *p > 65535) {
      *error = "bad node '" + std::string(item) + "' (expected HOST:PORT, port 1-65535)";
      return std::nullopt;
    }
    out.push_back(Endpoint{std::string(host), static_cast<uint16_t>(*p)});
  }
  return out;
}

const char* StatusName(NodeResult::Status s) {
  switch (s) {
    case NodeResult::Status::kReplied:
      return "replied";
    case NodeResult::Status::kTimeout:
      return "timeout";
    case NodeResult::Status::kConnectFailed:
      return "down";
    case NodeResult::Status::kClosed:
      return "closed";
    case NodeResult::Status::kIoError:
      return "i/o error";
    case NodeResult::Status::kGarbage:
      return "garbage";
    case NodeResult::Status::kAuthFailed:
      return "auth failed";
  }
  return "?";
}

NodeSet::NodeSet(std::vector<Endpoint> nodes, std::string password,
                 std::shared_ptr<const TlsClient> tls, std::string user)
    : password_(std::move(password)), tls_(std::move(tls)), user_(std::move(user)) {
  for (Endpoint& ep : nodes) {
    Node n;
    n.endpoint = std::move(ep);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* res = nullptr;
    std::string port = std::to_string(n.endpoint.port);
    int rc = ::getaddrinfo(n.endpoint.host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0 || res == nullptr) {
      n.resolve_error = std::string("cannot resolve host: ") + ::gai_strerror(rc);
    } else {
      std::memcpy(&n.addr, res->ai_addr, res->ai_addrlen);
      n.addr_len = res->ai_addrlen;
    }
    if (res != nullptr) ::freeaddrinfo(res);
    nodes_.push_back(std::move(n));
  }
}

NodeSet::~NodeSet() = default;

void NodeSet::CloseAll() {
  for (Node& n : nodes_) n.Drop();
}

std::vector<NodeResult> NodeSet::Round(std::string_view request, size_t n_replies,
                                       microseconds timeout, const std::vector<bool>& which) {
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  const size_t n = nodes_.size();
  std::vector<NodeResult> results(n);
  std::vector<Pending> pending(n);

  auto finish = [&](size_t i, NodeResult::Status status, std::string detail) {
    results[i].status = status;
    results[i].detail = std::move(detail);
    results[i].latency = std::chrono::duration_cast<microseconds>(Clock::now() - start);
    pending[i].active = false;
    // Any failure leaves the connection in an unknown state: drop it.
    if (status != NodeResult::Status::kReplied) nodes_[i].Drop();
  };

  // 1. Open connections where needed and queue the request.
  for (size_t i = 0; i < n; ++i) {
    if (!which.empty() && !which[i]) {
      results[i].detail = "skipped";
      continue;
    }
    Node& node = nodes_[i];
    Pending& p = pending[i];
    p.active = true;
    if (!node.resolve_error.empty()) {
      finish(i, NodeResult::Status::kConnectFailed, node.resolve_error);
      continue;
    }
    if (node.fd && !StillOpen(node.fd.get(), node.ssl.get())) {
      // The node closed the kept connection since the last round (it
      // restarted, or an idle timeout): reconnect now rather than fail.
      node.Drop();
    }
    if (!node.fd) {
      int fd = ::socket(node.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd < 0) {
        finish(i, NodeResult::Status::kConnectFailed, Errno("socket", errno));
        continue;
      }
      node.fd.reset(fd);
      node.authenticated = false;
      if (tls_) {
        node.ssl.reset(tls_->NewSession(fd, node.endpoint.host));
        if (!node.ssl) {
          finish(i, NodeResult::Status::kConnectFailed, "TLS: " + TlsLastError());
          continue;
        }
      }
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      if (::connect(fd, reinterpret_cast<const sockaddr*>(&node.addr), node.addr_len) != 0) {
        if (errno != EINPROGRESS) {
          finish(i, NodeResult::Status::kConnectFailed, Errno("connect", errno));
          continue;
        }
        p.connecting = true;
      }
    }
    if (!password_.empty() && !node.authenticated) {
      // Pipelined in front of the request: one round trip, not two.
      if (user_.empty()) {
        resp::AppendRequest(p.out, {"AUTH", password_});
      } else {
        resp::AppendRequest(p.out, {"AUTH", user_, password_});
      }
      p.sent_auth = true;
      p.expected = 1;
    }
    p.out.append(request);
    p.expected += n_replies;
  }

  // 2. Drive every socket until all have answered or the deadline passed.
  std::vector<pollfd> fds;
  std::vector<size_t> index;
  char buf[16384];
  while (true) {
    fds.clear();
    index.clear();
    for (size_t i = 0; i < n; ++i) {
      if (!pending[i].active) continue;
      short events = (pending[i].connecting || !pending[i].out.empty()) ? POLLOUT : POLLIN;
      if (!pending[i].connecting && pending[i].tls_wait != 0) events = pending[i].tls_wait;
      fds.push_back(pollfd{nodes_[i].fd.get(), events, 0});
      index.push_back(i);
    }
    if (fds.empty()) break;
    auto now = Clock::now();
    if (now >= deadline) break;
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
    timespec ts{static_cast<time_t>(left.count() / 1'000'000'000),
                static_cast<long>(left.count() % 1'000'000'000)};
    int rc = ::ppoll(fds.data(), fds.size(), &ts, nullptr);
    if (rc < 0 && errno != EINTR) break;  // cannot happen with valid fds; time out the rest
    if (rc <= 0) continue;

    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      size_t i = index[k];
      Node& node = nodes_[i];
      Pending& p = pending[i];
      if (p.connecting) {
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(node.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
          finish(i, NodeResult::Status::kConnectFailed, Errno("connect", err));
          continue;
        }
        p.connecting = false;
      }
      p.tls_wait = 0;
      if (!p.out.empty()) {
        ssize_t w;
        if (node.ssl) {
          // The first write runs the handshake; OpenSSL may need to read
          // the server's messages first (tls_wait).
          int rc = SSL_write(node.ssl.get(), p.out.data(), static_cast<int>(p.out.size()));
          w = rc;
          if (rc <= 0) {
            int err = SSL_get_error(node.ssl.get(), rc);
            if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
              p.tls_wait = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
              continue;
            }
            finish(i, NodeResult::Status::kIoError, "TLS: " + TlsLastError());
            continue;
          }
        } else {
          w = ::send(node.fd.get(), p.out.data(), p.out.size(), MSG_NOSIGNAL);
        }
        if (w < 0) {
          if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            finish(i, NodeResult::Status::kIoError, Errno("send", errno));
          }
          continue;
        }
        if (w > 0) results[i].sent = true;
        p.out.erase(0, static_cast<size_t>(w));
        continue;  // read once the request is out (poll says when)
      }
      if (node.ssl) {
        // Everything OpenSSL has decrypted, until it needs the socket.
        bool closed = false, failed = false, got = false;
        while (true) {
          int rc = SSL_read(node.ssl.get(), buf, sizeof(buf));
          if (rc > 0) {
            p.in.append(buf, static_cast<size_t>(rc));
            got = true;
            continue;
          }
          int err = SSL_get_error(node.ssl.get(), rc);
          if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
            if (err == SSL_ERROR_WANT_WRITE) p.tls_wait = POLLOUT;
            ERR_clear_error();
          } else if (err == SSL_ERROR_ZERO_RETURN ||
                     (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
            ERR_clear_error();
            closed = true;
          } else {
            failed = true;
          }
          break;
        }
        if (failed) {
          finish(i, NodeResult::Status::kIoError, "TLS: " + TlsLastError());
          continue;
        }
        if (closed && !got) {
          finish(i, NodeResult::Status::kClosed, "connection closed by the node");
          continue;
        }
        if (!got) continue;
      } else {
        ssize_t r = ::recv(node.fd.get(), buf, sizeof(buf), 0);
        if (r == 0) {
          finish(i, NodeResult::Status::kClosed, "connection closed by the node");
          continue;
        }
        if (r < 0) {
          if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            finish(i, NodeResult::Status::kIoError, Errno("recv", errno));
          }
          continue;
        }
        p.in.append(buf, static_cast<size_t>(r));
      }
      // Parse whatever complete replies arrived.
      NodeResult& res = results[i];
      bool failed = false;
      while (res.replies.size() < p.expected) {
        resp::Reply reply;
        size_t used = 0;
        auto st = resp::ParseReply(std::string_view(p.in).substr(p.parsed), &reply, &used);
        if (st == resp::ReplyStatus::kIncomplete) break;
        if (st == resp::ReplyStatus::kMalformed) {
          finish(i, NodeResult::Status::kGarbage,
                 "not a RESP reply: \"" + p.in.substr(p.parsed, 40) + "\"");
          failed = true;
          break;
        }
        p.parsed += used;
        res.replies.push_back(std::move(reply));
      }
      if (failed) continue;
      if (res.replies.size() < p.expected) {
        if (p.in.size() > kMaxReplyBytes) {
          finish(i, NodeResult::Status::kGarbage, "oversized reply");
        }
        continue;
      }
      if (p.parsed != p.in.size()) {
        finish(i, NodeResult::Status::kGarbage, "unexpected bytes after the reply");
        continue;
      }
      if (p.sent_auth) {
        resp::Reply auth = std::move(res.replies.front());
        res.replies.erase(res.replies.begin());
        if (auth.type != resp::Reply::Type::kSimple || auth.str != "OK") {
          res.replies.clear();
          finish(i, NodeResult::Status::kAuthFailed, "AUTH: " + auth.ToString());
          continue;
        }
        node.authenticated = true;
      }
      finish(i, NodeResult::Status::kReplied, "");
    }
  }

  // 3. Whoever has not answered by now has failed for this round.
  for (size_t i = 0; i < n; ++i) {
    if (!pending[i].active) continue;
    results[i].replies.clear();
    finish(i, NodeResult::Status::kTimeout,
           pending[i].connecting ? "no connection before the deadline"
                                 : "no answer before the deadline");
  }
  return results;
}

}  // namespace latch
