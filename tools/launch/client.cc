#include "tools/launch/client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <span>
#include <stdexcept>

#include "protocol/request_writer.h"

namespace latch::launch {

Client::Client(const std::string& host, int port)
    : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const std::string ip = host == "localhost" ? "127.0.0.1" : host;
  if (!fd_ || ::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1 ||
      ::connect(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    throw std::runtime_error("cannot connect to " + host + ":" + std::to_string(port));
  }
  int one = 1;
  ::setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

resp::Reply Client::Call(std::initializer_list<std::string_view> args) {
  std::string request;
  resp::AppendRequest(request, args);
  return Exchange(request);
}

resp::Reply Client::Call(const std::vector<std::string>& args) {
  std::string request;
  resp::AppendRequest(request, std::span<const std::string>(args));
  return Exchange(request);
}

void Client::Write(const std::string& request) {
  for (size_t off = 0; off < request.size();) {
    ssize_t n = ::send(fd_.get(), request.data() + off, request.size() - off, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("connection lost");
    off += static_cast<size_t>(n);
  }
}

resp::Reply Client::Exchange(const std::string& request) {
  Write(request);
  std::optional<resp::Reply> r = Receive(std::chrono::seconds(5));
  if (!r) throw std::runtime_error("no reply within 5 s");
  return std::move(*r);
}

void Client::Send(const std::vector<std::string>& args) {
  std::string request;
  resp::AppendRequest(request, std::span<const std::string>(args));
  Write(request);
}

std::optional<resp::Reply> Client::Receive(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    resp::Reply r;
    size_t used = 0;
    auto st = resp::ParseReply(buf_, &r, &used);
    if (st == resp::ReplyStatus::kOk) {
      buf_.erase(0, used);
      return r;
    }
    if (st == resp::ReplyStatus::kMalformed) throw std::runtime_error("bad reply");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd_.get(), POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      return std::nullopt;
    }
    char chunk[4096];
    ssize_t n = ::recv(fd_.get(), chunk, sizeof(chunk), 0);
    if (n <= 0) throw std::runtime_error("connection closed");
    buf_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace latch::launch
