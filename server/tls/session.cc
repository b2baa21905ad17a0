#include "server/tls/session.h"

#include <openssl/err.h>

#include <algorithm>
#include <climits>

namespace latch::tls {

std::unique_ptr<Session> Session::Accept(SSL_CTX* ctx, TlsAuthClients auth, std::string* error) {
  auto s = std::unique_ptr<Session>(new Session());
  s->ssl_.reset(SSL_new(ctx));
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (!s->ssl_ || in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    char buf[256];
    ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
    ERR_clear_error();
    *error = buf;
    return nullptr;
  }
  // An empty input BIO reads as "retry later" rather than end of file.
  BIO_set_mem_eof_return(in, -1);
  BIO_set_mem_eof_return(out, -1);
  SSL_set_bio(s->ssl_.get(), in, out);
  s->in_ = in;
  s->out_ = out;
  // tls-auth-clients, read for each new connection as Redis does: no asks
  // for no certificate, optional verifies one if given, yes requires one.
  switch (auth) {
    case TlsAuthClients::kNo:
      SSL_set_verify(s->ssl_.get(), SSL_VERIFY_NONE, nullptr);
      break;
    case TlsAuthClients::kOptional:
      SSL_set_verify(s->ssl_.get(), SSL_VERIFY_PEER, nullptr);
      break;
    case TlsAuthClients::kYes:
      SSL_set_verify(s->ssl_.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  SSL_set_accept_state(s->ssl_.get());
  return s;
}

void Session::Feed(const char* data, size_t len) {
  // A memory BIO grows as needed; a read never exceeds INT_MAX bytes.
  while (len > 0) {
    int chunk = static_cast<int>(std::min<size_t>(len, INT_MAX));
    int n = BIO_write(in_, data, chunk);
    if (n <= 0) return;
    data += n;
    len -= static_cast<size_t>(n);
  }
}

Session::Status Session::Failed(int rc, const char* what) {
  int err = SSL_get_error(ssl_.get(), rc);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    ERR_clear_error();
    return Status::kOk;
  }
  if (err == SSL_ERROR_ZERO_RETURN) {
    ERR_clear_error();
    return Status::kClosed;
  }
  unsigned long code = ERR_get_error();
  char buf[256] = "";
  if (code != 0) ERR_error_string_n(code, buf, sizeof(buf));
  ERR_clear_error();
  error_ = std::string(what) + ": " + (code != 0 ? buf : "unexpected end of stream");
  if (SSL_get_verify_result(ssl_.get()) != X509_V_OK) {
    error_ +=
        " (" + std::string(X509_verify_cert_error_string(SSL_get_verify_result(ssl_.get()))) + ")";
  }
  return Status::kError;
}

Session::Status Session::Read(char* buf, size_t cap, size_t* n) {
  *n = 0;
  if (!handshake_done()) {
    int rc = SSL_do_handshake(ssl_.get());
    if (rc != 1) return Failed(rc, "TLS handshake failed");
  }
  if (cap == 0) return Status::kOk;
  int rc = SSL_read(ssl_.get(), buf, static_cast<int>(std::min<size_t>(cap, INT_MAX)));
  if (rc > 0) {
    *n = static_cast<size_t>(rc);
    return Status::kOk;
  }
  return Failed(rc, "TLS read failed");
}

bool Session::HasBufferedInput() const {
  return SSL_pending(ssl_.get()) > 0 || BIO_ctrl_pending(in_) > 0;
}

Session::Status Session::Write(const char* data, size_t len) {
  // The output BIO takes any amount, so each SSL_write completes whole.
  while (len > 0) {
    int chunk = static_cast<int>(std::min<size_t>(len, 1 << 20));
    int rc = SSL_write(ssl_.get(), data, chunk);
    if (rc <= 0) {
      Status s = Failed(rc, "TLS write failed");
      return s == Status::kOk ? Status::kError : s;  // never "retry": nothing could block
    }
    data += rc;
    len -= static_cast<size_t>(rc);
  }
  return Status::kOk;
}

void Session::Shutdown() {
  if (handshake_done()) SSL_shutdown(ssl_.get());
  ERR_clear_error();
}

void Session::TakeOutput(std::string* out) {
  size_t pending = BIO_ctrl_pending(out_);
  if (pending == 0) return;
  size_t at = out->size();
  out->resize(at + pending);
  int n = BIO_read(out_, out->data() + at, static_cast<int>(pending));
  out->resize(at + static_cast<size_t>(std::max(n, 0)));
}

size_t Session::pending_output() const {
  return BIO_ctrl_pending(out_);
}

}  // namespace latch::tls
