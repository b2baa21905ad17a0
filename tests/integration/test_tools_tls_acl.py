"""The RedLock tools over TLS and as an ACL user (issue 27): latch-redlock
with redis-cli's --user/--pass (and REDISCLI_AUTH) to nodes that let in one
restricted user; latch-fixture and latch-chaos starting their nodes with
--tls (certificates they make) and --user/--pass, their clients connecting
that way; latch-contention's clients logging in. Each run is short."""

import json
import os
import re
import shutil
import socket
import ssl
import subprocess

import pytest

import latchtest as lt
import tlscerts
from test_tls import start_tls


def tool(name):
    path = os.path.join(lt.build_dir(), "tools", name)
    if not os.access(path, os.X_OK):
        pytest.fail("%s not built (cmake --build build --target %s)" % (name, name))
    return path


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.fail("the openssl CLI is needed to make certificates")
    return tlscerts.make(str(tmp_path_factory.mktemp("certs")))


def run(argv, env=None, timeout=30):
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def test_latch_redlock_as_an_acl_user_over_tls(certs, tmp_path):
    """Three TLS nodes that let in only app1 (keys lock:app1:*): the lock is
    taken as app1 with --user/--pass, -a, or REDISCLI_AUTH; another app's key
    is refused (NOPERM: nodes failing), and so is a wrong password."""
    user = ["--user", "app1", "on", ">pw1", "~lock:app1:*", "+@all", "-@dangerous",
            "--user", "default", "off"]
    nodes = []
    for i in range(3):
        (tmp_path / ("n%d" % i)).mkdir()
        nodes.append(start_tls("latch", str(tmp_path / ("n%d" % i)), certs, *user))
    try:
        spec = ",".join("127.0.0.1:%d" % port for _, port in nodes)
        tls = ["--tls", "--cacert", certs["ca.crt"], "--cert", certs["client.crt"],
               "--tls-key", certs["client.key"]]
        base = [tool("latch-redlock"), "--nodes", spec, "--ttl", "5s"] + tls
        p = run(base + ["--user", "app1", "--pass", "pw1", "--key", "lock:app1:a", "--",
                        "sh", "-c", "echo held; exit 3"])
        assert p.returncode == 3 and p.stdout.strip() == "held", p.stderr
        p = run(base + ["--user", "app1", "-a", "pw1", "--key", "lock:app1:b", "--", "true"])
        assert p.returncode == 0, p.stderr
        p = run(base + ["--user", "app1", "--key", "lock:app1:c", "--", "true"],
                env={"REDISCLI_AUTH": "pw1", "LATCH_PASSWORD": "wrong"})
        assert p.returncode == 0, p.stderr
        # The key of another application: every node answers NOPERM.
        p = run(base + ["--user", "app1", "--pass", "pw1", "--key", "lock:app2:a", "-v", "--",
                        "true"])
        assert p.returncode == 69 and "NOPERM" in p.stdout + p.stderr, p.stdout + p.stderr
        p = run(base + ["--user", "app1", "--pass", "nope", "--key", "lock:app1:a", "--", "true"])
        assert p.returncode == 69, p.stderr
        # Not logged in: the default user is off.
        p = run(base + ["--key", "lock:app1:a", "--", "true"])
        assert p.returncode == 69, p.stderr
        p = run(base + ["--user", "app1", "--key", "lock:app1:a", "--", "true"],
                env={"REDISCLI_AUTH": "", "LATCH_PASSWORD": ""})
        assert p.returncode == 64 and "--user needs a password" in p.stderr, p.stderr
    finally:
        for srv, _ in nodes:
            srv.stop()


def test_latch_fixture_up_and_run_with_tls_and_a_user(tmp_path, certs):
    fixture, redlock = tool("latch-fixture"), tool("latch-redlock")
    d = tmp_path / "fx"
    env = {"LATCH_SERVER": lt.latch_binary()}
    p = run([fixture, "up", "--node-count", "3", "--dir", str(d), "--tls", "--user", "app",
             "--pass", "s3cret", "--json"], env=env)
    assert p.returncode == 0, p.stderr
    up = json.loads(p.stdout)
    try:
        nodes = up["LATCH_NODES"]
        ports = [int(x.split(":")[1]) for x in nodes.split(",")]
        assert [n["port"] for n in up["nodes"]] != ports  # the TLS ports
        # A client with the printed certificates, as the user: served;
        # without logging in: NOAUTH (the default user is off).
        ctx = ssl.create_default_context(cafile=up["LATCH_TLS_CACERT"])
        ctx.load_cert_chain(up["LATCH_TLS_CERT"], up["LATCH_TLS_KEY"])
        with ctx.wrap_socket(socket.create_connection((lt.HOST, ports[0]), timeout=5),
                             server_hostname="127.0.0.1") as s:
            s.sendall(lt.encode("PING") + lt.encode("AUTH", "app", "s3cret") + lt.encode("PING"))
            buf = b""
            while buf.count(b"\r\n") < 3:
                chunk = s.recv(4096)
                assert chunk, buf
                buf += chunk
            assert buf.startswith(b"-NOAUTH") and buf.endswith(b"+OK\r\n+PONG\r\n"), buf
        # The fixture's later calls log in as `up` said.
        p = run([fixture, "status", "--dir", str(d)], env=env)
        assert p.returncode == 0 and p.stdout.count("up=yes") == 3, p.stdout + p.stderr
        assert "keys=?" not in p.stdout, p.stdout
        p = run([fixture, "fault", "0", "LIST", "--dir", str(d)], env=env)
        assert p.returncode == 0, p.stderr
        tls = ["--tls", "--cacert", up["LATCH_TLS_CACERT"], "--cert", up["LATCH_TLS_CERT"],
               "--tls-key", up["LATCH_TLS_KEY"]]
        p = run([redlock, "--nodes", nodes, "--key", "k", "--ttl", "5s", "--user", "app",
                 "--pass", "s3cret"] + tls + ["--", "true"])
        assert p.returncode == 0, p.stderr
    finally:
        p = run([fixture, "down", "--dir", str(d)], env=env)
        assert p.returncode == 0, p.stderr
    assert not d.exists()
    # run: the command gets LATCH_NODES and the certificates' paths.
    script = ('exec "$REDLOCK" --tls --cacert "$LATCH_TLS_CACERT" --cert "$LATCH_TLS_CERT" '
              '--tls-key "$LATCH_TLS_KEY" --user app --key k --ttl 5s -- true')
    p = run([fixture, "run", "--node-count", "3", "--tls", "--user", "app", "--", "sh", "-c",
             script], env=dict(env, REDLOCK=redlock, REDISCLI_AUTH="pw"), timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    # The fixture's own requests go over TLS with its client options: told
    # to trust another CA, it cannot read its nodes (status says "?").
    p = run([fixture, "up", "--node-count", "1", "--dir", str(d), "--tls", "--cacert",
             certs["other-ca.crt"]], env=env)
    assert p.returncode == 0, p.stderr
    try:
        p = run([fixture, "status", "--dir", str(d)], env=env)
        assert p.returncode == 0 and "up=yes" in p.stdout and "keys=?" in p.stdout, p.stdout
        p = run([fixture, "fault", "0", "LIST", "--dir", str(d)], env=env)
        assert p.returncode == 2 and "did not answer" in p.stderr, p.stderr
    finally:
        run([fixture, "down", "--dir", str(d)], env=env)
    p = run([fixture, "up", "--node-count", "1", "--dir", str(d), "--cacert", "x"], env=env)
    assert p.returncode == 64 and "need --tls" in p.stderr, p.stderr


def test_latch_chaos_with_tls_and_a_user(certs):
    base = [tool("latch-chaos"), "--server", lt.latch_binary(), "--node-count", "3",
            "--workers", "2", "--duration", "3s", "--faults", "crash,pause", "--seed", "3",
            "--tls", "--user", "chaos", "--pass", "pw"]
    p = run(base, timeout=90)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert p.stdout.splitlines()[-1] == "violations: 0"
    # Locks changed hands and writes were acknowledged: the clients got in
    # (the default user is off: as "chaos")...
    assert re.search(r"^acquisitions: [1-9]", p.stdout, re.M), p.stdout
    assert re.search(r"^acknowledged writes: [1-9]", p.stdout, re.M), p.stdout
    # ...and over TLS: trusting another CA instead, nobody gets in at all.
    p = run(base + ["--cacert", certs["other-ca.crt"]], timeout=90)
    assert re.search(r"^acquisitions: 0 ", p.stdout, re.M), p.stdout
    assert re.search(r"^acknowledged writes: 0 ", p.stdout, re.M), p.stdout
    p = run([tool("latch-chaos"), "--cacert", "x", "--print-schedule"])
    assert p.returncode == 64 and "need --tls" in p.stderr, p.stderr
    p = run([tool("latch-chaos"), "--user", "u", "--print-schedule"],
            env={"REDISCLI_AUTH": "", "LATCH_PASSWORD": ""})
    assert p.returncode == 64 and "--user needs a password" in p.stderr, p.stderr


def test_latch_contention_as_an_acl_user(tmp_path):
    srv = lt.ServerProcess("latch", lambda port: [
        lt.latch_binary(), "--port", str(port), "--dir", str(tmp_path), "--appendonly", "no",
        "--user", "bench", "on", ">pw", "~*", "+@all", "--user", "default", "off"],
        str(tmp_path)).start()
    try:
        base = [tool("latch-contention"), "--port", str(srv.port), "--mode", "wait",
                "--clients", "2", "--duration", "500ms"]
        p = run(base + ["--user", "bench", "--pass", "pw"])
        assert p.returncode == 0 and "handoffs=" in p.stdout, p.stdout + p.stderr
        p = run(base + ["--user", "bench"], env={"REDISCLI_AUTH": "pw"})
        assert p.returncode == 0, p.stderr
        p = run(base + ["--user", "bench", "--pass", "bad"])
        assert p.returncode == 2 and "WRONGPASS" in p.stderr, p.stderr
    finally:
        srv.stop()
