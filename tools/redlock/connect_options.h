// How a RedLock tool reaches its nodes, with redis-cli's option names, so
// that latch-redlock, latch-fixture and latch-chaos say it alike:
//
//   --user NAME      AUTH NAME PASSWORD (an ACL user; needs a password)
//   --pass P, -a P   the password (--password: the older name); default
//                    $REDISCLI_AUTH as redis-cli, else $LATCH_PASSWORD
//   --tls            TLS, with --cacert FILE, --cacertdir DIR, --cert FILE,
//                    --tls-key FILE (redis-cli's --key: --key names the lock
//                    in latch-redlock), --sni NAME, --insecure
//
// Declare() puts them on a command line; Build() checks them together and
// makes the TLS context every connection shares.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <vector>

#include "tools/cli/options.h"
#include "tools/redlock/cert_gen.h"
#include "tools/redlock/tls_client.h"

namespace latch {

struct ConnectOptions {
  std::string user;
  std::string password;
  TlsClientOptions tls;

  // The environment's defaults (REDISCLI_AUTH, LATCH_PASSWORD): call before
  // parsing, so that the command line wins.
  void FromEnvironment();
  void Declare(cli::Parser& p);
  // The TLS context (null without --tls), or a usage error's text.
  std::optional<std::string> Build(std::shared_ptr<const TlsClient>* out) const;

  // ---- for the tools that start their nodes (latch-fixture, latch-chaos)
  // With --tls: the certificates made in `dir` (cert_gen.h) become the
  // defaults of --cacert and --cert/--tls-key (the user's own, when given,
  // win: for nodes started with the user's certificates). nullopt, or the
  // error.
  std::optional<std::string> UseGeneratedCerts(const std::string& dir, GeneratedCerts* certs);
  // The nodes' options that match: with TLS, a tls-port and the generated
  // server certificate (later options, the user's, override them); with
  // --user, that user allowed everything and the default user off (only
  // the user gets in); with only a password, requirepass.
  std::vector<std::string> NodeOptions(const GeneratedCerts* certs, uint16_t tls_port) const;
};

}  // namespace latch
