"""TLS as Redis 6+ has it (issue 27): tls-port beside port, the tls-*
settings, and the clients people use over it — redis-cli --tls, redis-py
ssl=True, ioredis and node-redis — with certificates the tests make
(tlscerts.py). Then what a hostile or broken client does to the TLS port:
plaintext, garbage, truncated handshakes, no/wrong/expired client
certificates, half-open handshakes against maxclients and timeout,
renegotiation, half-closed sockets. Each gets a closed connection; the server
stays up and keeps serving. CONFIG GET tls-* is compared with redis-server
7.0 started with the same settings.
"""

import json
import os
import shutil
import socket
import ssl
import subprocess
import time

import pytest

import latchtest as lt
import nodeclients
import tlscerts

REDIS_CLI = shutil.which("redis-cli")


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("the openssl CLI is needed to make certificates")
    return tlscerts.make(str(tmp_path_factory.mktemp("certs")))


def tls_args(certs, tls_port, *extra):
    return ["--tls-port", str(tls_port), "--tls-cert-file", certs["server.crt"],
            "--tls-key-file", certs["server.key"], "--tls-ca-cert-file", certs["ca.crt"]] + \
        [str(x) for x in extra]


def start_tls(kind, workdir, certs, *extra):
    """latch (or redis-server) with a plain port (for readiness) and a TLS
    port; returns (server, tls_port)."""
    ports = []

    def argv(p):
        ports.append(lt.free_port())
        args = tls_args(certs, ports[-1], *extra)
        if kind == "latch":
            data = os.path.join(workdir, "latch-data")
            os.makedirs(data, exist_ok=True)
            return [lt.latch_binary(), "--port", str(p), "--dir", data, "--appendonly", "no",
                    "--quarantine", "never", "--loglevel", "verbose"] + args
        return [lt.redis_server_binary(), "--port", str(p), "--bind", lt.HOST, "--save", "",
                "--appendonly", "no", "--dir", workdir] + args

    srv = lt.ServerProcess(kind, argv, workdir).start()
    return srv, ports[-1]


@pytest.fixture(scope="module")
def node(certs, tmp_path_factory):
    srv, port = start_tls("latch", str(tmp_path_factory.mktemp("tls")), certs)
    srv.tls_port = port
    yield srv
    srv.stop()


def client_ctx(certs, cert="client", ca="ca.crt"):
    ctx = ssl.create_default_context(cafile=certs[ca])
    if cert is not None:
        ctx.load_cert_chain(certs[cert + ".crt"], certs[cert + ".key"])
    return ctx


def tls_sock(port, ctx, timeout=5.0):
    raw = socket.create_connection((lt.HOST, port), timeout=timeout)
    return ctx.wrap_socket(raw, server_hostname="localhost")


def whole_replies(buf):
    """How many whole replies buf starts with."""
    pos, n = 0, 0
    while pos < len(buf):
        try:
            _, pos = lt.parse_reply(buf, pos)
        except lt.Incomplete:
            break
        n += 1
    return n


def tls_cmd(sock, *args):
    """One request over a TLS socket; the raw reply bytes (b"" if closed)."""
    sock.sendall(lt.encode(*args))
    buf = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return buf
        buf += chunk
        if whole_replies(buf) >= 1:
            return buf


def refused(port, ctx):
    """True if a TLS client with `ctx` cannot get a reply: the handshake
    fails, or (TLS 1.3: the client learns of it late) the first read does."""
    try:
        with tls_sock(port, ctx) as s:
            return tls_cmd(s, "PING") != b"+PONG\r\n"
    except (ssl.SSLError, OSError):
        return True


def closed_by_server(sock, timeout=5.0):
    """Reads until the server closes the connection; False on a timeout."""
    sock.settimeout(timeout)
    try:
        while sock.recv(4096):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def client_hello():
    """A real TLS ClientHello, as the first flight of a Python client."""
    ctx = ssl.create_default_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        obj.do_handshake()
    return outgoing.read()


def alive(srv):
    with srv.conn() as c:
        return c.cmd("PING") == b"PONG"


def connected_clients(srv):
    with srv.conn() as c:
        info = c.cmd("INFO", "clients").decode()
    return int(info.split("connected_clients:")[1].split()[0])


# ----------------------------------------------------------------- clients


def test_lock_round_trip_over_tls(node, certs):
    with tls_sock(node.tls_port, client_ctx(certs)) as s:
        assert s.version() in ("TLSv1.2", "TLSv1.3")
        assert tls_cmd(s, "SET", "lock:a", "tok", "NX", "PX", "30000") == b"+OK\r\n"
        assert tls_cmd(s, "SET", "lock:a", "other", "NX", "PX", "30000") == b"$-1\r\n"
        # A reply far larger than a TLS record (16 KB) and a pipeline.
        big = "x" * 300000
        assert tls_cmd(s, "ECHO", big) == b"$300000\r\n" + big.encode() + b"\r\n"
        s.sendall(lt.encode("GET", "lock:a") * 50)
        buf = b""
        while whole_replies(buf) < 50:
            buf += s.recv(65536)
        assert buf == b"$3\r\ntok\r\n" * 50
    # The plain port serves the same data.
    with node.conn() as c:
        assert c.cmd("GET", "lock:a") == b"tok"


@pytest.mark.skipif(REDIS_CLI is None, reason="redis-cli (redis-tools) not installed")
def test_redis_cli_tls_with_and_without_client_certificate(node, certs):
    base = [REDIS_CLI, "-p", str(node.tls_port), "--tls", "--cacert", certs["ca.crt"],
            "--sni", "localhost"]
    with_cert = base + ["--cert", certs["client.crt"], "--key", certs["client.key"]]
    p = subprocess.run(with_cert + ["SET", "lock:cli", "t", "NX", "PX", "10000"],
                       capture_output=True, text=True, timeout=20)
    assert p.stdout.strip() == "OK", p.stderr
    p = subprocess.run(with_cert + ["GET", "lock:cli"], capture_output=True, text=True, timeout=20)
    assert p.stdout.strip() == "t"
    # tls-auth-clients yes (the default): no certificate, no reply.
    p = subprocess.run(base + ["PING"], capture_output=True, text=True, timeout=20)
    assert "PONG" not in p.stdout
    # --cacertdir and --insecure are the other ways to trust the server.
    p = subprocess.run([REDIS_CLI, "-p", str(node.tls_port), "--tls", "--cacertdir",
                        certs["cadir"], "--cert", certs["client.crt"], "--key",
                        certs["client.key"], "PING"], capture_output=True, text=True, timeout=20)
    assert p.stdout.strip() == "PONG", p.stderr
    with node.conn() as c:
        assert c.cmd("CONFIG", "SET", "tls-auth-clients", "no") == b"OK"
    try:
        p = subprocess.run([REDIS_CLI, "-p", str(node.tls_port), "--tls", "--insecure", "PING"],
                           capture_output=True, text=True, timeout=20)
        assert p.stdout.strip() == "PONG", p.stderr
    finally:
        with node.conn() as c:
            c.cmd("CONFIG", "SET", "tls-auth-clients", "yes")


def test_redis_py_ssl(node, certs):
    redis = pytest.importorskip("redis")
    r = redis.Redis(host="localhost", port=node.tls_port, ssl=True,
                    ssl_ca_certs=certs["ca.crt"], ssl_certfile=certs["client.crt"],
                    ssl_keyfile=certs["client.key"], socket_timeout=5)
    try:
        assert r.set("lock:py", "tok", nx=True, px=30000) is True
        assert r.set("lock:py", "tok2", nx=True, px=30000) is None
        lock = r.lock("lock:pylock", timeout=10)
        assert lock.acquire(blocking=False)
        lock.release()
        assert r.exists("lock:pylock") == 0
    finally:
        r.close()


@pytest.mark.parametrize("client", ["ioredis", "node-redis"])
def test_node_clients_over_tls(node, certs, client):
    nodebin, folder = nodeclients.install(pytest.skip)
    p = subprocess.run([nodebin, "tls.mjs", client, str(node.tls_port), certs["ca.crt"],
                        certs["client.crt"], certs["client.key"]], cwd=folder,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert "fatal" not in out, out["fatal"]
    assert out["acquire"] == "OK" and out["again"] is None
    assert out["get"] == "tok-A" and out["release"] == 1 and out["big"] == 200000


def test_tls_only_with_port_0(certs, tmp_path):
    """`port 0`: no plain listener at all, the TLS port serves."""
    tls_port = lt.free_port()
    data = tmp_path / "data"
    data.mkdir()
    proc = subprocess.Popen([lt.latch_binary(), "--port", "0", "--dir", str(data),
                             "--appendonly", "no", "--quarantine", "never"]
                            + tls_args(certs, tls_port),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ctx = client_ctx(certs)

        def answers():
            try:
                with tls_sock(tls_port, ctx, timeout=1) as s:
                    return tls_cmd(s, "PING") == b"+PONG\r\n"
            except (OSError, ssl.SSLError):
                return False

        assert lt.wait_for(answers, 10)
        with tls_sock(tls_port, ctx) as s:
            assert tls_cmd(s, "CONFIG", "GET", "port") == b"*2\r\n$4\r\nport\r\n$1\r\n0\r\n"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


# ------------------------------------------------------------------ config


def config_map(conn, pattern):
    flat = conn.cmd("CONFIG", "GET", pattern)
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def test_config_get_tls_as_redis(certs, tmp_path):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    extra = ["--tls-auth-clients", "optional", "--tls-protocols", "TLSv1.2 TLSv1.3",
             "--tls-ciphers", "DEFAULT", "--tls-ciphersuites", "TLS_AES_256_GCM_SHA384",
             "--tls-prefer-server-ciphers", "yes", "--tls-session-cache-size", "1000",
             "--tls-session-cache-timeout", "60", "--tls-ca-cert-dir", certs["cadir"]]
    latch, lport = start_tls("latch", str(tmp_path), certs, *extra)
    red, rport = start_tls("redis", str(tmp_path), certs, *extra)
    try:
        with latch.conn() as a, red.conn() as b:
            got, want = config_map(a, "tls-*"), config_map(b, "tls-*")
            assert got.pop(b"tls-port") == str(lport).encode()
            assert want.pop(b"tls-port") == str(rport).encode()
            assert got == want
            # A file that does not load: Redis's error, the old context kept.
            for conn in (a, b):
                assert conn.raw("CONFIG", "SET", "tls-cert-file", "/nonexistent") == (
                    b"-ERR CONFIG SET failed (possibly related to argument 'tls-cert-file') - "
                    b"Unable to update TLS configuration. Check server logs.\r\n")
                assert conn.raw("CONFIG", "SET", "tls-protocols", "TLSv9") == (
                    b"-ERR CONFIG SET failed (possibly related to argument 'tls-protocols') - "
                    b"Unable to update TLS configuration. Check server logs.\r\n")
                assert conn.raw("CONFIG", "SET", "tls-auth-clients", "maybe") == (
                    b"-ERR CONFIG SET failed (possibly related to argument 'tls-auth-clients') - "
                    b"argument(s) must be one of the following: no, yes, optional\r\n")
            assert config_map(a, "tls-*") == {**config_map(b, "tls-*"),
                                              b"tls-port": str(lport).encode()}
        assert not refused(lport, client_ctx(certs))
        assert "Failed to load certificate: /nonexistent" in latch.log_text()
    finally:
        latch.stop()
        red.stop()


def test_config_set_cert_reloads_without_dropping_connections(node, certs, tmp_path):
    # A second server certificate from the same CA.
    tlscerts._signed("server2", "ca", "localhost", os.path.dirname(certs["ca.crt"]),
                     ext="subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    d = os.path.dirname(certs["ca.crt"])
    ctx = client_ctx(certs)
    old = tls_sock(node.tls_port, ctx)
    try:
        first = old.getpeercert(binary_form=True)
        assert tls_cmd(old, "PING") == b"+PONG\r\n"
        with node.conn() as c:
            assert c.cmd("CONFIG", "SET", "tls-cert-file", os.path.join(d, "server2.crt"),
                         "tls-key-file", os.path.join(d, "server2.key")) == b"OK"
        with tls_sock(node.tls_port, ctx) as s:
            assert s.getpeercert(binary_form=True) != first
            assert tls_cmd(s, "PING") == b"+PONG\r\n"
        # The connection made before keeps working with its session.
        assert tls_cmd(old, "SET", "lock:reload", "t") == b"+OK\r\n"
    finally:
        old.close()
        with node.conn() as c:
            c.cmd("CONFIG", "SET", "tls-cert-file", certs["server.crt"],
                  "tls-key-file", certs["server.key"])


def test_auth_clients_no_optional_yes(node, certs):
    try:
        for mode, anonymous_ok, rogue_ok in (("no", True, True), ("optional", True, False),
                                             ("yes", False, False)):
            with node.conn() as c:
                assert c.cmd("CONFIG", "SET", "tls-auth-clients", mode) == b"OK"
            assert refused(node.tls_port, client_ctx(certs, cert=None)) != anonymous_ok, mode
            assert refused(node.tls_port, client_ctx(certs, cert="rogue")) != rogue_ok, mode
            assert not refused(node.tls_port, client_ctx(certs)), mode
    finally:
        with node.conn() as c:
            c.cmd("CONFIG", "SET", "tls-auth-clients", "yes")


def test_encrypted_key_and_bad_start_up_config(certs, tmp_path):
    srv, port = start_tls("latch", str(tmp_path), certs, "--tls-key-file",
                          certs["server-enc.key"], "--tls-key-file-pass", "secret")
    try:
        assert not refused(port, client_ctx(certs))
    finally:
        srv.stop()
    data = tmp_path / "bad"
    data.mkdir()
    for extra, says in ((["--tls-key-file", certs["server-enc.key"], "--tls-key-file-pass", "no"],
                         "tls-key-file"),
                        (["--tls-cert-file", str(tmp_path / "missing.crt")], "tls-cert-file"),
                        (["--tls-ca-cert-file", ""], "tls-ca-cert-file"),
                        (["--tls-protocols", "SSLv3"], "tls-protocols"),
                        (["--tls-auth-clients", "sometimes"], "tls-auth-clients")):
        p = subprocess.run([lt.latch_binary(), "--port", str(lt.free_port()), "--dir", str(data),
                            "--appendonly", "no"] + tls_args(certs, lt.free_port(), *extra),
                           capture_output=True, text=True, timeout=20)
        assert p.returncode != 0, extra
        assert says in p.stdout + p.stderr, (extra, p.stdout + p.stderr)


# ----------------------------------------------------------------- hostile


def test_plaintext_and_garbage_to_the_tls_port(node):
    for payload in (lt.encode("PING"), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", os.urandom(5000),
                    b"\x16\x03\x01\xff\xff" + os.urandom(64)):
        with socket.create_connection((lt.HOST, node.tls_port), timeout=5) as s:
            s.sendall(payload)
            assert closed_by_server(s), payload[:20]
    assert alive(node)


def test_truncated_handshakes(node):
    hello = client_hello()
    for cut in (1, 5, len(hello) // 2, len(hello) - 1):
        with socket.create_connection((lt.HOST, node.tls_port), timeout=5) as s:
            s.sendall(hello[:cut])
            s.shutdown(socket.SHUT_WR)  # then nothing more: the server closes
            assert closed_by_server(s), cut
    assert alive(node)


def test_wrong_ca_expired_and_missing_client_certificates(node, certs):
    assert refused(node.tls_port, client_ctx(certs, cert=None))
    assert refused(node.tls_port, client_ctx(certs, cert="rogue"))
    assert refused(node.tls_port, client_ctx(certs, cert="expired"))
    # A client that does not trust the server's CA refuses the server.
    with pytest.raises(ssl.SSLCertVerificationError):
        tls_sock(node.tls_port, client_ctx(certs, ca="other-ca.crt"))
    assert lt.wait_for(lambda: "certificate has expired" in node.log_text(), 5)
    assert alive(node)


def test_half_open_handshakes_bounded_by_maxclients_and_timeout(node, certs):
    hello = client_hello()
    base = connected_clients(node)
    socks = []
    with node.conn() as admin:
        assert admin.cmd("CONFIG", "SET", "maxclients", str(base + 10), "timeout", "1") == b"OK"
        try:
            for _ in range(30):
                s = socket.create_connection((lt.HOST, node.tls_port), timeout=5)
                s.sendall(hello[:len(hello) // 2])
                socks.append(s)
            # Those past maxclients were closed at once; the others count as
            # clients until the idle timeout closes them too.
            assert lt.wait_for(lambda: connected_clients_via(admin) <= base + 10, 5)
            # (<=: an idle client of an earlier test may go with them.)
            assert lt.wait_for(lambda: connected_clients_via(admin) <= base, 10), (
                base, connected_clients_via(admin))
            assert all(closed_by_server(s, timeout=5) for s in socks)
        finally:
            for s in socks:
                s.close()
            admin.cmd("CONFIG", "SET", "maxclients", "10000", "timeout", "0")
    assert not refused(node.tls_port, client_ctx(certs))


def connected_clients_via(conn):
    info = conn.cmd("INFO", "clients").decode()
    return int(info.split("connected_clients:")[1].split()[0])


def test_renegotiation_refused(node, certs):
    """A TLS 1.2 client asking to renegotiate (openssl s_client's R) gets a
    refusal; the server stays up and other clients are served."""
    p = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % node.tls_port,
                        "-tls1_2", "-CAfile", certs["ca.crt"], "-cert", certs["client.crt"],
                        "-key", certs["client.key"], "-servername", "localhost"],
                       input=b"R\nPING\r\n", capture_output=True, timeout=20)
    out = (p.stdout + p.stderr).decode(errors="replace")
    assert "RENEGOTIATING" in out
    assert "no renegotiation" in out  # the server's no_renegotiation alert
    assert "+PONG" not in out.split("RENEGOTIATING", 1)[1]
    assert alive(node)
    assert not refused(node.tls_port, client_ctx(certs))


def test_half_closed_connections(node, certs):
    ctx = client_ctx(certs)
    # close_notify from the client: the server closes its side.
    s = tls_sock(node.tls_port, ctx)
    assert tls_cmd(s, "PING") == b"+PONG\r\n"
    raw = s.unwrap()
    assert closed_by_server(raw)
    raw.close()
    # A TCP half-close (FIN without close_notify) mid-session.
    s = tls_sock(node.tls_port, ctx)
    assert tls_cmd(s, "PING") == b"+PONG\r\n"
    s.shutdown(socket.SHUT_WR)
    assert closed_by_server(s)
    s.close()
    # QUIT: the reply, then close_notify and the close.
    s = tls_sock(node.tls_port, ctx)
    assert tls_cmd(s, "QUIT") == b"+OK\r\n"
    assert closed_by_server(s)
    s.close()
    assert alive(node)


# ------------------------------------------------------------------- tools


def test_latch_redlock_over_tls(certs, tmp_path):
    """latch-redlock to three TLS-only nodes, with redis-cli's options."""
    tool = os.path.join(lt.build_dir(), "tools", "latch-redlock")
    if not os.access(tool, os.X_OK):
        pytest.skip("latch-redlock not built")
    nodes = [start_tls("latch", str(tmp_path / ("n%d" % i)), certs) for i in range(3)
             if (tmp_path / ("n%d" % i)).mkdir() is None]
    try:
        spec = ",".join("127.0.0.1:%d" % port for _, port in nodes)
        tls = ["--tls", "--cacert", certs["ca.crt"], "--sni", "localhost"]
        cert = ["--cert", certs["client.crt"], "--tls-key", certs["client.key"]]
        p = subprocess.run([tool, "--nodes", spec, "--key", "lock:tools", "--ttl", "5s"] + tls +
                           cert + ["--", "sh", "-c", "echo held; exit 3"],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 3 and p.stdout.strip() == "held", p.stderr
        p = subprocess.run([tool, "acquire", "--nodes", spec, "--key", "lock:tools", "--ttl",
                            "10s"] + tls + cert, capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stderr
        token = p.stdout.split()[0]
        for srv, _ in nodes:
            with srv.conn() as c:
                assert c.cmd("GET", "lock:tools") == token.encode()
        p = subprocess.run([tool, "status", "--nodes", spec, "--key", "lock:tools"] + tls + cert,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and token in p.stdout, p.stdout + p.stderr
        # No client certificate under tls-auth-clients yes: every node
        # refuses the handshake, and the tool says the nodes are unreachable.
        p = subprocess.run([tool, "acquire", "--nodes", spec, "--key", "lock:other", "--ttl",
                            "10s", "-v"] + tls, capture_output=True, text=True, timeout=30)
        assert p.returncode == 69, p.stdout + p.stderr
        assert "TLS" in p.stderr or "TLS" in p.stdout
        # Nor does a node that is not the one the certificate names pass
        # verification without --insecure.
        p = subprocess.run([tool, "status", "--nodes", spec, "--key", "lock:tools", "--tls",
                            "--cacert", certs["other-ca.crt"]] + cert,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 69, p.stdout + p.stderr
        p = subprocess.run([tool, "status", "--nodes", spec, "--key", "lock:tools", "--tls",
                            "--insecure"] + cert, capture_output=True, text=True, timeout=30)
        assert p.returncode == 0 and token in p.stdout, p.stdout + p.stderr
    finally:
        for srv, _ in nodes:
            srv.stop()
