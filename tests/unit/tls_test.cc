// server/tls/: the context built from the tls-* settings (the errors Redis
// logs for each bad one) and one session between memory BIOs, driven by an
// in-process OpenSSL client: handshake, requests both ways, garbage, a
// missing client certificate, close_notify.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "server/config.h"
#include "server/tls/context.h"
#include "server/tls/session.h"

namespace latch {
namespace {

// A P-256 key and a self-signed certificate (its own CA) in a temporary
// directory, removed with the fixture.
class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/latch_tls_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    key_ = dir_ + "/key.pem";
    cert_ = dir_ + "/cert.pem";
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), 86400);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509_sign(cert, key, EVP_sha256());
    FILE* f = std::fopen(key_.c_str(), "w");
    PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(f);
    f = std::fopen(cert_.c_str(), "w");
    PEM_write_X509(f, cert);
    std::fclose(f);
    X509_free(cert);
    EVP_PKEY_free(key);
    config_.tls_port = 6380;
    config_.tls_cert_file = cert_;
    config_.tls_key_file = key_;
    config_.tls_ca_cert_file = cert_;
  }
  void TearDown() override {
    std::remove(key_.c_str());
    std::remove(cert_.c_str());
    rmdir(dir_.c_str());
  }

  std::string BuildError(const Config& c) {
    std::string error;
    auto ctx = tls::Context::Build(c, &error);
    EXPECT_EQ(ctx == nullptr, !error.empty());
    return error;
  }

  // An OpenSSL client over memory BIOs, trusting the test certificate and
  // showing it as its own certificate when `with_cert`.
  struct Client {
    SSL_CTX* ctx = nullptr;
    SSL* ssl = nullptr;
    BIO* in = nullptr;
    BIO* out = nullptr;
    ~Client() {
      SSL_free(ssl);
      SSL_CTX_free(ctx);
    }
  };
  void MakeClient(Client& c, bool with_cert) {
    c.ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_load_verify_locations(c.ctx, cert_.c_str(), nullptr);
    SSL_CTX_set_verify(c.ctx, SSL_VERIFY_PEER, nullptr);
    if (with_cert) {
      SSL_CTX_use_certificate_file(c.ctx, cert_.c_str(), SSL_FILETYPE_PEM);
      SSL_CTX_use_PrivateKey_file(c.ctx, key_.c_str(), SSL_FILETYPE_PEM);
    }
    c.ssl = SSL_new(c.ctx);
    c.in = BIO_new(BIO_s_mem());
    c.out = BIO_new(BIO_s_mem());
    SSL_set_bio(c.ssl, c.in, c.out);
    SSL_set_connect_state(c.ssl);
  }
  // Moves records both ways and lets the server read; returns its status
  // and appends what it decrypted.
  tls::Session::Status Exchange(Client& c, tls::Session& s, std::string* plain) {
    tls::Session::Status status = tls::Session::Status::kOk;
    for (int round = 0; round < 8; ++round) {
      SSL_do_handshake(c.ssl);
      char buf[16384];
      int n;
      while ((n = BIO_read(c.out, buf, sizeof(buf))) > 0) s.Feed(buf, static_cast<size_t>(n));
      for (;;) {
        size_t got = 0;
        status = s.Read(buf, sizeof(buf), &got);
        if (status != tls::Session::Status::kOk || got == 0) break;
        plain->append(buf, got);
      }
      std::string records;
      s.TakeOutput(&records);
      if (!records.empty()) BIO_write(c.in, records.data(), static_cast<int>(records.size()));
      if (status != tls::Session::Status::kOk) break;
    }
    ERR_clear_error();
    return status;
  }

  std::string dir_, key_, cert_;
  Config config_;
};

TEST_F(TlsTest, ContextErrorsAreRedisLogLines) {
  EXPECT_EQ(BuildError(config_), "");
  Config c = config_;
  c.tls_cert_file.clear();
  EXPECT_EQ(BuildError(c), "No tls-cert-file configured!");
  c = config_;
  c.tls_key_file.clear();
  EXPECT_EQ(BuildError(c), "No tls-key-file configured!");
  c = config_;
  c.tls_ca_cert_file.clear();
  EXPECT_EQ(BuildError(c),
            "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
            "tls-replication or tls-auth-clients are enabled!");
  c.tls_auth_clients = TlsAuthClients::kNo;
  EXPECT_EQ(BuildError(c), "");
  c = config_;
  c.tls_protocols = "TLSv1.2 SSLv3";
  EXPECT_EQ(BuildError(c),
            "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', "
            "'TLSv1.2' and 'TLSv1.3'.");
  c = config_;
  c.tls_cert_file = dir_ + "/missing.pem";
  EXPECT_EQ(BuildError(c).rfind("Failed to load certificate: " + c.tls_cert_file + ": ", 0), 0u);
  c = config_;
  c.tls_ciphers = "NOT-A-CIPHER";
  EXPECT_EQ(BuildError(c), "Failed to configure ciphers: NOT-A-CIPHER (tls-ciphers)");
  c = config_;
  c.tls_key_file = cert_;  // a certificate is no key
  EXPECT_EQ(BuildError(c).rfind("Failed to load private key: ", 0), 0u);
}

TEST_F(TlsTest, HandshakeThenPlaintextBothWays) {
  std::string error;
  auto ctx = tls::Context::Build(config_, &error);
  ASSERT_NE(ctx, nullptr) << error;
  auto s = tls::Session::Accept(ctx->get(), TlsAuthClients::kYes, &error);
  ASSERT_NE(s, nullptr);
  Client c;
  MakeClient(c, true);
  std::string plain;
  ASSERT_EQ(Exchange(c, *s, &plain), tls::Session::Status::kOk);
  ASSERT_TRUE(s->handshake_done());
  const std::string request = "*1\r\n$4\r\nPING\r\n";
  ASSERT_EQ(SSL_write(c.ssl, request.data(), static_cast<int>(request.size())),
            static_cast<int>(request.size()));
  ASSERT_EQ(Exchange(c, *s, &plain), tls::Session::Status::kOk);
  EXPECT_EQ(plain, request);
  // A reply larger than a record arrives whole.
  std::string reply(100000, 'r');
  ASSERT_EQ(s->Write(reply.data(), reply.size()), tls::Session::Status::kOk);
  std::string records;
  s->TakeOutput(&records);
  BIO_write(c.in, records.data(), static_cast<int>(records.size()));
  std::string got(reply.size(), '\0');
  size_t at = 0;
  while (at < got.size()) {
    int n = SSL_read(c.ssl, got.data() + at, static_cast<int>(got.size() - at));
    ASSERT_GT(n, 0);
    at += static_cast<size_t>(n);
  }
  EXPECT_EQ(got, reply);
  // close_notify from the client ends the stream.
  SSL_shutdown(c.ssl);
  EXPECT_EQ(Exchange(c, *s, &plain), tls::Session::Status::kClosed);
}

TEST_F(TlsTest, MissingClientCertificateFailsTheHandshake) {
  std::string error;
  auto ctx = tls::Context::Build(config_, &error);
  ASSERT_NE(ctx, nullptr);
  for (auto [auth, ok] :
       {std::pair{TlsAuthClients::kYes, false}, std::pair{TlsAuthClients::kOptional, true},
        std::pair{TlsAuthClients::kNo, true}}) {
    auto s = tls::Session::Accept(ctx->get(), auth, &error);
    Client c;
    MakeClient(c, false);
    std::string plain;
    EXPECT_EQ(Exchange(c, *s, &plain) == tls::Session::Status::kOk, ok);
    if (!ok) {
      EXPECT_NE(s->error().find("peer did not return a certificate"), std::string::npos);
    }
  }
}

TEST_F(TlsTest, PlaintextAndGarbageFailTheSession) {
  std::string error;
  auto ctx = tls::Context::Build(config_, &error);
  ASSERT_NE(ctx, nullptr);
  for (std::string input : {std::string("*1\r\n$4\r\nPING\r\n"), std::string(300, '\x16'),
                            std::string("\x16\x03\x01\xff\xff garbage", 13)}) {
    auto s = tls::Session::Accept(ctx->get(), TlsAuthClients::kNo, &error);
    s->Feed(input.data(), input.size());
    char buf[64];
    size_t got = 0;
    auto status = s->Read(buf, sizeof(buf), &got);
    // Either refused now, or still waiting for the rest of a record that
    // can never be valid: no plaintext comes out either way.
    EXPECT_EQ(got, 0u);
    if (input[0] != '\x16') {
      EXPECT_EQ(status, tls::Session::Status::kError) << input;
    }
  }
}

}  // namespace
}  // namespace latch
