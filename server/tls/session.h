// One TLS connection's state: an SSL object between two memory BIOs.
//
// The socket stays libuv's: what uv_read delivers is fed in (Feed), the
// plaintext comes out of Read, replies go in through Write, and the records
// OpenSSL produces (replies, handshake messages, alerts) are taken out with
// TakeOutput and handed to uv_write. OpenSSL never touches the socket, so it
// never blocks the loop, and the parser and the reply path see plain bytes
// exactly as on a plain connection.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>
#include <string>

#include "server/config.h"

namespace latch::tls {

struct SslDeleter {
  void operator()(SSL* ssl) const { SSL_free(ssl); }  // frees both BIOs too
};

class Session {
 public:
  enum class Status {
    kOk,      // go on (maybe more input is needed)
    kClosed,  // the client sent close_notify: the TLS stream ended
    kError,   // a failed handshake or a broken record: close the connection
  };

  // nullptr (error set) if OpenSSL could not create the objects.
  static std::unique_ptr<Session> Accept(SSL_CTX* ctx, TlsAuthClients auth, std::string* error);

  // Ciphertext read from the socket.
  void Feed(const char* data, size_t len);
  // Decrypts into buf (at most cap bytes); *n: how many. While the
  // handshake runs, advances it instead (its replies wait in TakeOutput).
  Status Read(char* buf, size_t cap, size_t* n);
  // Whether Read may have more plaintext to give without more input.
  bool HasBufferedInput() const;
  // Encrypts plaintext (only once the handshake is done).
  Status Write(const char* data, size_t len);
  // Sends close_notify (a client that QUITs, or one we close).
  void Shutdown();
  // Records waiting to be written to the socket, appended to *out.
  void TakeOutput(std::string* out);
  size_t pending_output() const;

  bool handshake_done() const { return SSL_is_init_finished(ssl_.get()) == 1; }
  // Why the last kError happened, for the log.
  const std::string& error() const { return error_; }

 private:
  Session() = default;
  Status Failed(int rc, const char* what);

  std::unique_ptr<SSL, SslDeleter> ssl_;
  BIO* in_ = nullptr;   // owned by ssl_: ciphertext from the client
  BIO* out_ = nullptr;  // owned by ssl_: ciphertext for the client
  std::string error_;
};

}  // namespace latch::tls
