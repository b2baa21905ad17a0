#include "server/tls/context.h"

#include <openssl/decoder.h>
#include <openssl/err.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "protocol/text.h"

namespace latch::tls {

namespace {

constexpr int kTlsV1 = 1 << 0;
constexpr int kTlsV1_1 = 1 << 1;
constexpr int kTlsV1_2 = 1 << 2;
constexpr int kTlsV1_3 = 1 << 3;

// OpenSSL's reason for the last failure ("error:80000002:system
// library::No such file or directory"), as Redis logs it.
std::string LastError() {
  char buf[256];
  ERR_error_string_n(ERR_get_error(), buf, sizeof(buf));
  ERR_clear_error();
  return buf;
}

std::vector<std::string> SplitSpaces(const std::string& text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  return words;
}

// tls-protocols: words among TLSv1, TLSv1.1, TLSv1.2, TLSv1.3 (any case);
// none: TLSv1.2 and TLSv1.3, Redis's default. -1: a word it does not know.
int ParseProtocols(const std::string& text) {
  if (text.empty()) return kTlsV1_2 | kTlsV1_3;
  int protocols = 0;
  for (const std::string& word : SplitSpaces(text)) {
    if (EqualsIgnoreCase(word, "tlsv1")) {
      protocols |= kTlsV1;
    } else if (EqualsIgnoreCase(word, "tlsv1.1")) {
      protocols |= kTlsV1_1;
    } else if (EqualsIgnoreCase(word, "tlsv1.2")) {
      protocols |= kTlsV1_2;
    } else if (EqualsIgnoreCase(word, "tlsv1.3")) {
      protocols |= kTlsV1_3;
    } else {
      return -1;
    }
  }
  return protocols;
}

// The private key's passphrase (tls-key-file-pass), handed to OpenSSL when
// it reads an encrypted key.
int PasswordCallback(char* buf, int size, int, void* userdata) {
  const auto* pass = static_cast<const std::string*>(userdata);
  if (pass == nullptr || pass->empty() || pass->size() > static_cast<size_t>(size)) return -1;
  std::memcpy(buf, pass->data(), pass->size());
  return static_cast<int>(pass->size());
}

}  // namespace

std::unique_ptr<Context> Context::Build(const Config& c, std::string* error) {
  ERR_clear_error();
  if (c.tls_cert_file.empty()) {
    *error = "No tls-cert-file configured!";
    return nullptr;
  }
  if (c.tls_key_file.empty()) {
    *error = "No tls-key-file configured!";
    return nullptr;
  }
  if ((c.tls_auth_clients != TlsAuthClients::kNo || c.tls_cluster || c.tls_replication) &&
      c.tls_ca_cert_file.empty() && c.tls_ca_cert_dir.empty()) {
    *error =
        "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
        "tls-replication or tls-auth-clients are enabled!";
    return nullptr;
  }
  const int protocols = ParseProtocols(c.tls_protocols);
  if (protocols < 0) {
    *error =
        "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' "
        "and 'TLSv1.3'.";
    return nullptr;
  }

  CtxPtr ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) {
    *error = "Failed to create the TLS context: " + LastError();
    return nullptr;
  }
  SSL_CTX* x = ctx.get();
  SSL_CTX_set_options(x, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION |
                             SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS | SSL_OP_SINGLE_DH_USE);
  if (!(protocols & kTlsV1)) SSL_CTX_set_options(x, SSL_OP_NO_TLSv1);
  if (!(protocols & kTlsV1_1)) SSL_CTX_set_options(x, SSL_OP_NO_TLSv1_1);
  if (!(protocols & kTlsV1_2)) SSL_CTX_set_options(x, SSL_OP_NO_TLSv1_2);
  if (!(protocols & kTlsV1_3)) SSL_CTX_set_options(x, SSL_OP_NO_TLSv1_3);
  // No renegotiation (TLS 1.2; 1.3 has none): each one costs the server a
  // handshake whenever the client asks, a cheap denial of service.
  // OpenSSL 3 already refuses client-initiated ones unless allowed.
  SSL_CTX_set_options(x, SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_clear_options(x, SSL_OP_ALLOW_CLIENT_RENEGOTIATION);
  // Records are written into a memory BIO (session.h): whole writes always
  // succeed, but let OpenSSL move the buffer between retries anyway.
  SSL_CTX_set_mode(x, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  SSL_CTX_set_verify(x, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);

  // The passphrase is read only while the key loads, below: pointing at
  // the config's string for that long is enough.
  SSL_CTX_set_default_passwd_cb(x, PasswordCallback);
  SSL_CTX_set_default_passwd_cb_userdata(x, const_cast<std::string*>(&c.tls_key_file_pass));
  if (SSL_CTX_use_certificate_chain_file(x, c.tls_cert_file.c_str()) <= 0) {
    *error =
        "Failed to load certificate: " + c.tls_cert_file + ": " + LastError() + " (tls-cert-file)";
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(x, c.tls_key_file.c_str(), SSL_FILETYPE_PEM) <= 0) {
    *error = "Failed to load private key: " + c.tls_key_file + ": " + LastError() +
             " (tls-key-file, tls-key-file-pass)";
    return nullptr;
  }
  SSL_CTX_set_default_passwd_cb_userdata(x, nullptr);
  if (SSL_CTX_check_private_key(x) <= 0) {
    *error = "Private key does not match the certificate: " + c.tls_key_file + ": " + LastError() +
             " (tls-key-file)";
    return nullptr;
  }
  if ((!c.tls_ca_cert_file.empty() || !c.tls_ca_cert_dir.empty()) &&
      SSL_CTX_load_verify_locations(
          x, c.tls_ca_cert_file.empty() ? nullptr : c.tls_ca_cert_file.c_str(),
          c.tls_ca_cert_dir.empty() ? nullptr : c.tls_ca_cert_dir.c_str()) <= 0) {
    *error = "Failed to configure CA certificate(s) file/directory: " + LastError() +
             " (tls-ca-cert-file, tls-ca-cert-dir)";
    return nullptr;
  }
  if (!c.tls_ciphers.empty() && !SSL_CTX_set_cipher_list(x, c.tls_ciphers.c_str())) {
    ERR_clear_error();
    *error = "Failed to configure ciphers: " + c.tls_ciphers + " (tls-ciphers)";
    return nullptr;
  }
  if (!c.tls_ciphersuites.empty() && !SSL_CTX_set_ciphersuites(x, c.tls_ciphersuites.c_str())) {
    ERR_clear_error();
    *error = "Failed to configure ciphersuites: " + c.tls_ciphersuites + " (tls-ciphersuites)";
    return nullptr;
  }
  if (c.tls_session_caching) {
    SSL_CTX_set_session_cache_mode(x, SSL_SESS_CACHE_SERVER);
    SSL_CTX_sess_set_cache_size(x, c.tls_session_cache_size);
    SSL_CTX_set_timeout(x, static_cast<long>(c.tls_session_cache_timeout));
    SSL_CTX_set_session_id_context(x, reinterpret_cast<const unsigned char*>("latch"), 5);
  } else {
    SSL_CTX_set_session_cache_mode(x, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(x, 0);
  }
  if (c.tls_prefer_server_ciphers) SSL_CTX_set_options(x, SSL_OP_CIPHER_SERVER_PREFERENCE);

  if (c.tls_dh_params_file.empty()) {
    SSL_CTX_set_dh_auto(x, 1);
  } else {
    FILE* f = std::fopen(c.tls_dh_params_file.c_str(), "r");
    if (f == nullptr) {
      *error = "Failed to load " + c.tls_dh_params_file + ": " + std::strerror(errno);
      return nullptr;
    }
    EVP_PKEY* pkey = nullptr;
    OSSL_DECODER_CTX* dctx = OSSL_DECODER_CTX_new_for_pkey(
        &pkey, "PEM", nullptr, "DH", OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS, nullptr, nullptr);
    const bool decoded = dctx != nullptr && OSSL_DECODER_from_fp(dctx, f);
    OSSL_DECODER_CTX_free(dctx);
    std::fclose(f);
    if (!decoded) {
      ERR_clear_error();
      *error = c.tls_dh_params_file + ": failed to read DH params.";
      return nullptr;
    }
    if (SSL_CTX_set0_tmp_dh_pkey(x, pkey) <= 0) {  // owns pkey on success only
      EVP_PKEY_free(pkey);
      *error = "Failed to load DH params file: " + c.tls_dh_params_file + ": " + LastError();
      return nullptr;
    }
  }
  auto out = std::unique_ptr<Context>(new Context());
  out->ctx_ = std::move(ctx);
  return out;
}

}  // namespace latch::tls
