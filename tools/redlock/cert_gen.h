// Throwaway certificates for nodes a tool starts itself (latch-fixture up
// --tls, latch-chaos --tls): a CA made on the spot, a server certificate it
// signs for 127.0.0.1 and localhost, and a client certificate (for
// tls-auth-clients yes). They are for tests on one machine, not for
// production: the CA's key is left next to them and lasts a week.
#pragma once

#include <optional>
#include <string>

namespace latch {

struct GeneratedCerts {
  std::string ca_cert;  // PEM files in the directory given
  std::string server_cert, server_key;
  std::string client_cert, client_key;
};

// Writes ca.crt, ca.key, server.crt, server.key, client.crt and client.key
// into `dir` (created if missing; keys mode 0600). nullopt and *error on
// failure.
std::optional<GeneratedCerts> GenerateCertificates(const std::string& dir, std::string* error);

}  // namespace latch
