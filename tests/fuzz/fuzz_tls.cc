// Fuzz target: the TLS read path (server/tls/): bytes from a client go into
// the server side's SSL through its memory BIO (tls::Session::Feed), come out
// as plaintext (Read) and go to the RESP parser, as Connection::OnTlsRead
// does. The context is the server's own (tls::Context::Build from a config
// naming a key and certificate this target writes at start).
//
// Input: a mode byte, a byte that seeds where the stream is cut, then bytes.
//   mode % 3 == 0: the bytes are the client's first flight (ClientHello
//                  parsing, record layer, alerts)
//   mode % 3 == 1: an in-process client completes a real handshake, then
//                  sends the bytes encrypted (the plaintext path: requests)
//   mode % 3 == 2: a real handshake, then the bytes raw, as records in the
//                  established session (garbage after the handshake)
// Checks: no crash or sanitizer report; a session that failed stays failed
// (nothing is read from it afterwards); in mode 1 the plaintext that comes
// out is exactly the bytes sent.
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "protocol/request_parser.h"
#include "server/config.h"
#include "server/tls/context.h"
#include "server/tls/session.h"

namespace {

std::unique_ptr<latch::tls::Context> server_ctx;
SSL_CTX* client_ctx = nullptr;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_tls: property violated: %s\n", what);
    std::abort();
  }
}

// A P-256 key and a self-signed certificate, written where the config
// points.
void WriteKeyAndCert(const std::string& key_path, const std::string& cert_path) {
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
  FILE* f = std::fopen(key_path.c_str(), "w");
  PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(f);
  f = std::fopen(cert_path.c_str(), "w");
  PEM_write_X509(f, cert);
  std::fclose(f);
  X509_free(cert);
  EVP_PKEY_free(key);
}

// Moves every record waiting in one side's output into the other's input.
void Pump(latch::tls::Session& server, SSL* client, BIO* client_in, BIO* client_out) {
  std::string records;
  server.TakeOutput(&records);
  if (!records.empty()) BIO_write(client_in, records.data(), static_cast<int>(records.size()));
  char buf[16384];
  int n;
  while ((n = BIO_read(client_out, buf, sizeof(buf))) > 0) server.Feed(buf, static_cast<size_t>(n));
  (void)client;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char dir[] = "/tmp/fuzz_tls.XXXXXX";
  Check(mkdtemp(dir) != nullptr, "mkdtemp");
  latch::Config config;
  config.tls_port = 1;
  config.tls_cert_file = std::string(dir) + "/cert.pem";
  config.tls_key_file = std::string(dir) + "/key.pem";
  config.tls_auth_clients = latch::TlsAuthClients::kNo;
  WriteKeyAndCert(config.tls_key_file, config.tls_cert_file);
  std::string error;
  server_ctx = latch::tls::Context::Build(config, &error);
  if (!server_ctx) {
    std::fprintf(stderr, "fuzz_tls: %s\n", error.c_str());
    std::abort();
  }
  std::remove(config.tls_cert_file.c_str());
  std::remove(config.tls_key_file.c_str());
  rmdir(dir);
  client_ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_verify(client_ctx, SSL_VERIFY_NONE, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int mode = data[0] % 3;
  std::minstd_rand cuts(data[1]);
  const char* bytes = reinterpret_cast<const char*>(data + 2);
  size = size - 2;

  std::string error;
  auto server = latch::tls::Session::Accept(server_ctx->get(), latch::TlsAuthClients::kNo, &error);
  Check(server != nullptr, "Session::Accept failed");
  latch::resp::RequestParser parser;
  std::string plain;  // what the server decrypted, not yet parsed
  std::string all_plain;
  bool failed = false;

  // Feeds `len` bytes in random cuts, reading after each as OnTlsRead does.
  auto feed = [&](const char* p, size_t len) {
    size_t at = 0;
    while (at < len && !failed) {
      size_t cut = std::min<size_t>(len - at, 1 + cuts() % 700);
      server->Feed(p + at, cut);
      at += cut;
      char buf[4096];
      for (;;) {
        size_t got = 0;
        auto status = server->Read(buf, sizeof(buf), &got);
        if (status != latch::tls::Session::Status::kOk) {
          failed = true;
          break;
        }
        if (got == 0) break;
        plain.append(buf, got);
        all_plain.append(buf, got);
      }
      std::string out;
      server->TakeOutput(&out);  // handshake replies and alerts: dropped
      // The parser takes what came out, as ProcessInput does.
      latch::resp::ParseLimits limits;
      limits.unauthenticated = true;
      while (!plain.empty()) {
        auto r = parser.Parse(plain, limits);
        if (r != latch::resp::RequestParser::Result::kRequest) {
          if (r == latch::resp::RequestParser::Result::kError) plain.clear();
          break;
        }
        plain.erase(0, parser.consumed());
      }
    }
  };

  if (mode == 0) {
    feed(bytes, size);
    if (failed) {
      // Failed stays failed: nothing comes out of a broken session.
      size_t got = 0;
      char buf[64];
      server->Feed("\x17\x03\x03\x00\x01x", 6);
      Check(server->Read(buf, sizeof(buf), &got) != latch::tls::Session::Status::kOk || got == 0,
            "plaintext from a failed session");
    }
    return 0;
  }

  // A real client, over memory BIOs too.
  SSL* client = SSL_new(client_ctx);
  BIO* cin = BIO_new(BIO_s_mem());
  BIO* cout = BIO_new(BIO_s_mem());
  SSL_set_bio(client, cin, cout);
  SSL_set_connect_state(client);
  for (int i = 0; i < 10 && !(SSL_is_init_finished(client) && server->handshake_done()); ++i) {
    SSL_do_handshake(client);
    Pump(*server, client, cin, cout);
    size_t got = 0;
    char buf[16];
    server->Read(buf, sizeof(buf), &got);
    Pump(*server, client, cin, cout);
  }
  Check(server->handshake_done(), "the in-process handshake did not complete");
  if (mode == 1) {
    if (size > 0) SSL_write(client, bytes, static_cast<int>(size));
    std::string records;
    char buf[16384];
    int n;
    while ((n = BIO_read(cout, buf, sizeof(buf))) > 0) records.append(buf, static_cast<size_t>(n));
    feed(records.data(), records.size());
    Check(!failed, "a valid session failed");
    Check(all_plain == std::string(bytes, size), "decrypted bytes differ from those sent");
  } else {
    feed(bytes, size);
  }
  SSL_free(client);
  ERR_clear_error();
  return 0;
}
