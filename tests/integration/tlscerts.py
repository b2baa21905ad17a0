"""Certificates for the TLS tests, made by the openssl CLI in a directory.

make(dir) writes, all with P-256 keys (fast to make):
  ca.crt/ca.key          the test CA
  server.crt/server.key  CN=localhost, SAN localhost and 127.0.0.1, by the CA
  client.crt/client.key  a client certificate by the CA
  expired.crt/.key       a client certificate by the CA that expired yesterday
  other-ca.crt/.key      another CA, and rogue.crt/.key a client certificate by it
  server-enc.key         server.key encrypted with the passphrase "secret"
  cadir/                 ca.crt under its subject hash (tls-ca-cert-dir)
and returns a dict of the paths.
"""
import os
import subprocess


def _run(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _key(name, cwd):
    _run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-out", name + ".key", cwd=cwd)


def _ca(name, cwd):
    _key(name, cwd)
    _run("req", "-x509", "-new", "-key", name + ".key", "-out", name + ".crt", "-days", "3",
         "-subj", "/CN=latch test " + name, cwd=cwd)


def _signed(name, ca, cn, cwd, days="2", ext=None):
    _key(name, cwd)
    _run("req", "-new", "-key", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + cn,
         cwd=cwd)
    args = ["x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
            "-CAcreateserial", "-out", name + ".crt", "-days", days]
    if ext:
        with open(os.path.join(cwd, name + ".ext"), "w") as f:
            f.write(ext)
        args += ["-extfile", name + ".ext"]
    _run(*args, cwd=cwd)


def make(cwd):
    os.makedirs(cwd, exist_ok=True)
    _ca("ca", cwd)
    _ca("other-ca", cwd)
    _signed("server", "ca", "localhost", cwd,
            ext="subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _signed("client", "ca", "latch-client", cwd)
    _signed("expired", "ca", "expired-client", cwd, days="-1")
    _signed("rogue", "other-ca", "rogue-client", cwd)
    _run("pkey", "-in", "server.key", "-aes256", "-passout", "pass:secret",
         "-out", "server-enc.key", cwd=cwd)
    cadir = os.path.join(cwd, "cadir")
    os.makedirs(cadir, exist_ok=True)
    h = subprocess.run(["openssl", "x509", "-in", "ca.crt", "-noout", "-subject_hash"], cwd=cwd,
                       check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(cwd, "ca.crt"), "rb") as src, \
            open(os.path.join(cadir, h + ".0"), "wb") as dst:
        dst.write(src.read())
    names = ["ca", "other-ca", "server", "client", "expired", "rogue"]
    paths = {}
    for n in names:
        paths[n + ".crt"] = os.path.join(cwd, n + ".crt")
        paths[n + ".key"] = os.path.join(cwd, n + ".key")
    paths["server-enc.key"] = os.path.join(cwd, "server-enc.key")
    paths["cadir"] = cadir
    return paths
