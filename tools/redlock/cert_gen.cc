#include "tools/redlock/cert_gen.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <filesystem>
#include <memory>
#include <system_error>

#include "tools/redlock/tls_client.h"

namespace latch {
namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Cert = std::unique_ptr<X509, X509Free>;

// P-256 keys: quick to make (a test starts nodes in well under a second)
// and taken by every TLS library the clients use.
Pkey NewKey() {
  return Pkey(EVP_EC_gen("prime256v1"));
}

bool AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `key` named `cn`, signed by `issuer_key` (the issuer is
// the certificate itself when `issuer` is null: the CA).
Cert NewCert(EVP_PKEY* key, const char* cn, long serial, X509* issuer, EVP_PKEY* issuer_key,
             const char* basic, const char* usage, const char* ext_usage, const char* san) {
  Cert cert(X509_new());
  if (!cert) return nullptr;
  X509* x = cert.get();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 7L * 24 * 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("latch test"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : x;
  X509_set_issuer_name(x, X509_get_subject_name(signer));
  if (!AddExt(x, signer, NID_basic_constraints, basic) ||
      !AddExt(x, signer, NID_key_usage, usage) ||
      (ext_usage != nullptr && !AddExt(x, signer, NID_ext_key_usage, ext_usage)) ||
      (san != nullptr && !AddExt(x, signer, NID_subject_alt_name, san)) ||
      !AddExt(x, signer, NID_subject_key_identifier, "hash")) {
    return nullptr;
  }
  if (X509_sign(x, issuer_key, EVP_sha256()) == 0) return nullptr;
  return cert;
}

bool WritePem(const std::string& path, X509* cert, EVP_PKEY* key) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_file(path.c_str(), "w"));
  if (!bio) return false;
  if (key != nullptr) {
    // Private keys readable by their owner only.
    ::chmod(path.c_str(), 0600);
    return PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  }
  return PEM_write_bio_X509(bio.get(), cert) == 1;
}

}  // namespace

std::optional<GeneratedCerts> GenerateCertificates(const std::string& dir, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create " + dir + ": " + ec.message();
    return std::nullopt;
  }
  Pkey ca_key = NewKey(), server_key = NewKey(), client_key = NewKey();
  if (!ca_key || !server_key || !client_key) {
    *error = "cannot make a key: " + TlsLastError();
    return std::nullopt;
  }
  Cert ca = NewCert(ca_key.get(), "latch test CA", 1, nullptr, ca_key.get(), "critical,CA:TRUE",
                    "critical,keyCertSign,cRLSign", nullptr, nullptr);
  Cert server = ca ? NewCert(server_key.get(), "localhost", 2, ca.get(), ca_key.get(),
                             "critical,CA:FALSE", "critical,digitalSignature,keyEncipherment",
                             "serverAuth", "DNS:localhost,IP:127.0.0.1,IP:::1")
                   : nullptr;
  Cert client =
      ca ? NewCert(client_key.get(), "latch test client", 3, ca.get(), ca_key.get(),
                   "critical,CA:FALSE", "critical,digitalSignature", "clientAuth", nullptr)
         : nullptr;
  if (!ca || !server || !client) {
    *error = "cannot make a certificate: " + TlsLastError();
    return std::nullopt;
  }
  GeneratedCerts out;
  out.ca_cert = dir + "/ca.crt";
  out.server_cert = dir + "/server.crt";
  out.server_key = dir + "/server.key";
  out.client_cert = dir + "/client.crt";
  out.client_key = dir + "/client.key";
  if (!WritePem(out.ca_cert, ca.get(), nullptr) ||
      !WritePem(dir + "/ca.key", nullptr, ca_key.get()) ||
      !WritePem(out.server_cert, server.get(), nullptr) ||
      !WritePem(out.server_key, nullptr, server_key.get()) ||
      !WritePem(out.client_cert, client.get(), nullptr) ||
      !WritePem(out.client_key, nullptr, client_key.get())) {
    *error = "cannot write the certificates into " + dir + ": " + TlsLastError();
    return std::nullopt;
  }
  return out;
}

}  // namespace latch
