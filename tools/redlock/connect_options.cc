#include "tools/redlock/connect_options.h"

#include <cstdlib>

namespace latch {

void ConnectOptions::FromEnvironment() {
  // redis-cli reads REDISCLI_AUTH (a password kept off the command line,
  // where ps would show it); LATCH_PASSWORD is latch's older name.
  if (const char* pw = std::getenv("LATCH_PASSWORD"); pw != nullptr && *pw != '\0') password = pw;
  if (const char* pw = std::getenv("REDISCLI_AUTH"); pw != nullptr && *pw != '\0') password = pw;
}

void ConnectOptions::Declare(cli::Parser& p) {
  p.Text("user", &user)
      .Text("pass", &password, 'a')
      .Text("password", &password)
      .Flag("tls", &tls.enabled)
      .Text("cacert", &tls.cacert)
      .Text("cacertdir", &tls.cacertdir)
      .Text("cert", &tls.cert)
      .Text("tls-key", &tls.key)
      .Text("sni", &tls.sni)
      .Flag("insecure", &tls.insecure);
}

std::optional<std::string> ConnectOptions::Build(std::shared_ptr<const TlsClient>* out) const {
  out->reset();
  if (!user.empty() && password.empty()) {
    return "--user needs a password (--pass, or REDISCLI_AUTH in the environment)";
  }
  if (!tls.enabled) {
    if (!tls.cacert.empty() || !tls.cacertdir.empty() || !tls.cert.empty() || !tls.key.empty() ||
        !tls.sni.empty() || tls.insecure) {
      return "--cacert, --cacertdir, --cert, --tls-key, --sni and --insecure need --tls";
    }
    return std::nullopt;
  }
  std::string error;
  *out = TlsClient::Build(tls, &error);
  if (!*out) return error;
  return std::nullopt;
}

std::optional<std::string> ConnectOptions::UseGeneratedCerts(const std::string& dir,
                                                             GeneratedCerts* certs) {
  std::string error;
  auto made = GenerateCertificates(dir, &error);
  if (!made) return error;
  *certs = *made;
  if (tls.cacert.empty() && tls.cacertdir.empty()) tls.cacert = certs->ca_cert;
  if (tls.cert.empty() && tls.key.empty()) {
    tls.cert = certs->client_cert;
    tls.key = certs->client_key;
  }
  return std::nullopt;
}

std::vector<std::string> ConnectOptions::NodeOptions(const GeneratedCerts* certs,
                                                     uint16_t tls_port) const {
  std::vector<std::string> out;
  if (tls.enabled && certs != nullptr) {
    out = {"--tls-port",     std::to_string(tls_port), "--tls-cert-file",    certs->server_cert,
           "--tls-key-file", certs->server_key,        "--tls-ca-cert-file", certs->ca_cert};
  }
  if (!user.empty()) {
    out.insert(out.end(), {"--user", user, "on", ">" + password, "~*", "&*", "+@all", "--user",
                           "default", "off"});
  } else if (!password.empty()) {
    out.insert(out.end(), {"--requirepass", password});
  }
  return out;
}

}  // namespace latch
