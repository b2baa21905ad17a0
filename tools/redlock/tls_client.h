// The client side of TLS for the tools (latch-redlock, latch-fixture,
// latch-chaos): redis-cli's options and what they mean.
//
//   --tls              connect with TLS
//   --cacert FILE      trust the CAs in FILE       --cacertdir DIR  …in DIR
//   --cert FILE        the client certificate      --key FILE       its key
//   --sni NAME         the server name sent (and checked against the server's
//                      certificate; default: the node's host)
//   --insecure         do not verify the server's certificate
//
// One TlsClient (an SSL_CTX) is built from them and shared by every
// connection a NodeSet opens; each connection gets its own SSL over the
// socket (node_set.cc drives it non-blocking, inside a round's deadline).
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

namespace latch {

struct TlsClientOptions {
  bool enabled = false;
  std::string cacert;
  std::string cacertdir;
  std::string cert;
  std::string key;
  std::string sni;
  bool insecure = false;
};

class TlsClient {
 public:
  // nullptr and *error (naming the option and OpenSSL's reason) on failure.
  static std::shared_ptr<const TlsClient> Build(const TlsClientOptions& o, std::string* error);
  ~TlsClient();
  TlsClient(const TlsClient&) = delete;
  TlsClient& operator=(const TlsClient&) = delete;

  // A new client-side SSL for a connected socket to `host` (the SNI name
  // and the name checked, unless --sni or --insecure say otherwise).
  SSL* NewSession(int fd, const std::string& host) const;

 private:
  TlsClient() = default;
  SSL_CTX* ctx_ = nullptr;
  TlsClientOptions options_;
};

// OpenSSL's reason for the last failure, and the queue cleared.
std::string TlsLastError();

}  // namespace latch
