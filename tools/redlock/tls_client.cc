#include "tools/redlock/tls_client.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

namespace latch {

std::string TlsLastError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "connection closed during the TLS handshake";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

std::shared_ptr<const TlsClient> TlsClient::Build(const TlsClientOptions& o, std::string* error) {
  std::shared_ptr<TlsClient> c(new TlsClient());
  c->options_ = o;
  c->ctx_ = SSL_CTX_new(TLS_client_method());
  if (c->ctx_ == nullptr) {
    *error = "TLS: " + TlsLastError();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(c->ctx_, TLS1_2_VERSION);
  // Writes may be retried with the same bytes from a moved buffer (the
  // pending output is a std::string that shrinks as it goes out).
  SSL_CTX_set_mode(c->ctx_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
  if (!o.insecure) {
    SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_PEER, nullptr);
    if (o.cacert.empty() && o.cacertdir.empty()) {
      if (SSL_CTX_set_default_verify_paths(c->ctx_) != 1) {
        *error = "TLS: cannot load the system's CA certificates: " + TlsLastError();
        return nullptr;
      }
    } else if (SSL_CTX_load_verify_locations(c->ctx_, o.cacert.empty() ? nullptr : o.cacert.c_str(),
                                             o.cacertdir.empty() ? nullptr : o.cacertdir.c_str()) !=
               1) {
      *error = "--cacert/--cacertdir: " + TlsLastError();
      return nullptr;
    }
  }
  if (o.cert.empty() != o.key.empty()) {
    *error = "--cert and its key go together";
    return nullptr;
  }
  if (!o.cert.empty()) {
    if (SSL_CTX_use_certificate_chain_file(c->ctx_, o.cert.c_str()) != 1) {
      *error = "--cert " + o.cert + ": " + TlsLastError();
      return nullptr;
    }
    if (SSL_CTX_use_PrivateKey_file(c->ctx_, o.key.c_str(), SSL_FILETYPE_PEM) != 1) {
      *error = "key " + o.key + ": " + TlsLastError();
      return nullptr;
    }
  }
  return c;
}

TlsClient::~TlsClient() {
  SSL_CTX_free(ctx_);
}

SSL* TlsClient::NewSession(int fd, const std::string& host) const {
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return nullptr;
  SSL_set_fd(ssl, fd);
  SSL_set_connect_state(ssl);
  const std::string& name = options_.sni.empty() ? host : options_.sni;
  in6_addr ip{};
  const bool is_ip =
      inet_pton(AF_INET, name.c_str(), &ip) == 1 || inet_pton(AF_INET6, name.c_str(), &ip) == 1;
  // SNI carries host names only; an address is checked against the
  // certificate's IP entries instead.
  if (!is_ip) SSL_set_tlsext_host_name(ssl, name.c_str());
  if (!options_.insecure) {
    if (is_ip) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
    } else {
      SSL_set1_host(ssl, name.c_str());
    }
  }
  return ssl;
}

}  // namespace latch
