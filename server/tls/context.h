// The server side of TLS (Redis 6+'s tls-* settings): one SSL_CTX built from
// the configuration, shared by every TLS connection accepted after it was
// built.
//
// Each SSL object holds a reference to the context it was created from, so
// CONFIG SET tls-cert-file (…) simply builds a new Context and swaps it in:
// live connections keep the old certificate until they close, new ones get
// the new one, and a file that fails to load leaves the old Context in
// place (Redis's tlsConfigure is atomic in the same way).
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <optional>
#include <string>

#include "server/config.h"

namespace latch::tls {

struct CtxDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using CtxPtr = std::unique_ptr<SSL_CTX, CtxDeleter>;

class Context {
 public:
  // Builds a context from the tls-* settings. On failure returns nullptr and
  // sets *error to Redis's log line for the cause (which file, which
  // setting, OpenSSL's reason).
  static std::unique_ptr<Context> Build(const Config& config, std::string* error);

  SSL_CTX* get() const { return ctx_.get(); }

 private:
  CtxPtr ctx_;
};

// Whether the tls-* settings are in use: a TLS port to listen on.
inline bool TlsEnabled(const Config& c) {
  return c.tls_port != 0;
}

}  // namespace latch::tls
