"""Differential family: Redis 7.0's operator surface — CONFIG REWRITE, RESET,
ROLE, COMMAND GETKEYS/GETKEYSANDFLAGS, SHUTDOWN's modifiers, daemonize,
pidfile, logfile, unixsocket/unixsocketperm, maxmemory/maxmemory-policy and
CONFIG SET appendonly — against redis-server, byte for byte where the two
share the behaviour (differential.py), and side by side (files, processes,
sockets) where the effect is outside the protocol.

Where latch differs on purpose it says so in the test: CONFIG REWRITE
appends the lines a server needs in its own order (Redis's is its hash
table's), latch refuses the LFU policies (it counts no access frequencies),
and each server's defaults differ where latch's do (appendonly yes)."""

import os
import re
import signal
import socket
import stat
import subprocess
import time

import pytest

import latchtest as lt
from differential import PROTOS, check_script, switch_proto

SCRIPTS = {
    "role": [("ROLE",), ("ROLE", "x")],
    "reset_session_state": [
        ("SELECT", "3"),
        ("CLIENT", "SETNAME", "before"),
        ("SET", "k", "in-db-3"),
        ("RESET",),
        ("CLIENT", "GETNAME"),
        ("GET", "k"),
        ("SELECT", "3"),
        ("GET", "k"),
        ("RESET", "extra"),
    ],
    "reset_in_multi_discards": [
        ("MULTI",),
        ("SET", "a", "1"),
        ("RESET",),
        ("EXEC",),
        ("GET", "a"),
    ],
    "reset_unwatches": [
        ("SET", "w", "1"),
        ("WATCH", "w"),
        ("RESET",),
        ("MULTI",),
        ("SET", "x", "2"),
        ("EXEC",),
        ("GET", "x"),
    ],
    "command_getkeys": [
        ("COMMAND", "GETKEYS", "set", "a", "b"),
        ("COMMAND", "GETKEYS", "SET", "a", "b", "NX", "PX", "100"),
        ("COMMAND", "GETKEYS", "get", "a"),
        ("COMMAND", "GETKEYS", "mset", "a", "1", "b", "2"),
        ("COMMAND", "GETKEYS", "mset", "a", "1", "b"),
        ("COMMAND", "GETKEYS", "mget", "a", "b", "c"),
        ("COMMAND", "GETKEYS", "del", "a", "b"),
        ("COMMAND", "GETKEYS", "pexpire", "a", "100"),
        ("COMMAND", "GETKEYS", "rename", "a", "b"),
        ("COMMAND", "GETKEYS", "object", "encoding", "a"),
        ("COMMAND", "GETKEYS", "memory", "usage", "a"),
        ("COMMAND", "GETKEYS", "ping", "x"),
        ("COMMAND", "GETKEYS", "config", "get", "x"),
        ("COMMAND", "GETKEYS", "config", "bogus", "x"),
        ("COMMAND", "GETKEYS", "config|get", "x"),
        ("COMMAND", "GETKEYS", "nosuchcommand", "a"),
        ("COMMAND", "GETKEYS", "set", "a"),
        ("COMMAND", "GETKEYS", "get", "a", "b"),
        ("COMMAND", "GETKEYS", "get"),
        ("COMMAND", "GETKEYS"),
        ("COMMAND", "GETKEYS", "client", "kill", "x"),
    ],
    "command_getkeysandflags": [
        ("COMMAND", "GETKEYSANDFLAGS", "set", "a", "b"),
        ("COMMAND", "GETKEYSANDFLAGS", "set", "a", "b", "get"),
        ("COMMAND", "GETKEYSANDFLAGS", "set", "a", "b", "NX", "GET", "PX", "10"),
        ("COMMAND", "GETKEYSANDFLAGS", "get", "a"),
        ("COMMAND", "GETKEYSANDFLAGS", "del", "a", "b"),
        ("COMMAND", "GETKEYSANDFLAGS", "mset", "a", "1", "b", "2"),
        ("COMMAND", "GETKEYSANDFLAGS", "getdel", "a"),
        ("COMMAND", "GETKEYSANDFLAGS", "incr", "a"),
        ("COMMAND", "GETKEYSANDFLAGS", "exists", "a", "b"),
        ("COMMAND", "GETKEYSANDFLAGS", "ping", "x"),
        ("COMMAND", "GETKEYSANDFLAGS", "nosuchcommand", "a"),
    ],
    "shutdown_abort_and_syntax": [
        ("SHUTDOWN", "ABORT"),
        ("SHUTDOWN", "abort"),
        ("SHUTDOWN", "ABORT", "NOW"),
        ("SHUTDOWN", "NOSAVE", "ABORT"),
        ("SHUTDOWN", "NOSAVE", "SAVE"),
        ("SHUTDOWN", "NOW", "bogus"),
        ("SHUTDOWN", "bogus"),
        ("PING",),
    ],
    "config_get_operator_settings": [
        ("CONFIG", "GET", "maxmemory"),
        ("CONFIG", "GET", "maxmemory-policy"),
        ("CONFIG", "GET", "maxmemory-samples"),
        ("CONFIG", "GET", "unixsocket"),
        ("CONFIG", "GET", "unixsocketperm"),
        ("CONFIG", "GET", "daemonize"),
        ("CONFIG", "GET", "supervised"),
        ("CONFIG", "GET", "pidfile"),
        ("CONFIG", "GET", "logfile"),
    ],
    "config_set_maxmemory": [
        ("CONFIG", "SET", "maxmemory", "100mb"),
        ("CONFIG", "GET", "maxmemory"),
        ("CONFIG", "SET", "maxmemory", "1gb"),
        ("CONFIG", "GET", "maxmemory"),
        ("CONFIG", "SET", "maxmemory", "12345"),
        ("CONFIG", "GET", "maxmemory"),
        ("CONFIG", "SET", "maxmemory", "lots"),
        ("CONFIG", "SET", "maxmemory", "-1"),
        ("CONFIG", "SET", "maxmemory-policy", "allkeys-lru"),
        ("CONFIG", "GET", "maxmemory-policy"),
        ("CONFIG", "SET", "maxmemory-policy", "VOLATILE-TTL"),
        ("CONFIG", "GET", "maxmemory-policy"),
        ("CONFIG", "SET", "maxmemory-policy", "bogus"),
        ("CONFIG", "SET", "maxmemory-samples", "10"),
        ("CONFIG", "GET", "maxmemory-samples"),
        ("CONFIG", "SET", "maxmemory-samples", "0"),
        ("CONFIG", "SET", "maxmemory-policy", "noeviction"),
        ("CONFIG", "SET", "maxmemory", "0"),
        ("CONFIG", "SET", "maxmemory-samples", "5"),
    ],
    "config_set_immutable_operator_settings": [
        ("CONFIG", "SET", "daemonize", "yes"),
        ("CONFIG", "SET", "supervised", "systemd"),
        ("CONFIG", "SET", "unixsocket", "/tmp/x.sock"),
        ("CONFIG", "SET", "unixsocketperm", "700"),
        ("CONFIG", "SET", "pidfile", "/tmp/x.pid"),
        ("CONFIG", "SET", "logfile", "/tmp/x.log"),
    ],
    "config_set_appendonly": [
        ("CONFIG", "SET", "appendonly", "maybe"),
        ("SET", "before", "1"),
        ("CONFIG", "SET", "appendonly", "yes"),
        ("CONFIG", "GET", "appendonly"),
        ("SET", "after", "2"),
        ("CONFIG", "SET", "appendonly", "no"),
        ("CONFIG", "GET", "appendonly"),
        ("GET", "before"),
    ],
    "config_rewrite_without_a_file": [("CONFIG", "REWRITE"), ("CONFIG", "REWRITE", "x")],
    "command_info_and_docs_of_subcommands": [
        ("COMMAND", "INFO", "config|rewrite", "COMMAND|GETKEYS", "nosuch|x", "config|nosuch"),
        ("COMMAND", "DOCS", "config|rewrite"),
        ("COMMAND", "DOCS", "nosuch|x"),
        # The key specs (a set) and no subcommands (an empty set), in RESP3 too.
        ("COMMAND", "INFO", "get", "role", "reset"),
    ],
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])
    if script == "config_set_appendonly":
        # Redis rewrites in the background: let it finish before the next
        # script turns the log on again.
        lt.wait_for(lambda: b"aof_rewrite_in_progress:0" in pair.redis.cmd("INFO", "persistence"),
                    10)


def test_reset_returns_to_resp2(pair):
    switch_proto(pair, 3)
    got, want = pair.both("RESET")
    assert got == want == b"+RESET\r\n"
    # A map in RESP3 would start with '%': RESET went back to RESP2.
    got, want = pair.both("CONFIG", "GET", "maxmemory")
    assert got == want and got.startswith(b"*2\r\n")


def test_reset_leaves_monitor(pair):
    check_script(pair, [("MONITOR",), ("RESET",), ("PING",)])


# ---------------------------------------------------------------- COMMAND's metadata

def _docs_as_dict(d):
    if isinstance(d, lt.OrderedMap):
        return {k: _docs_as_dict(v) for k, v in d.pairs if k != b"history"}
    if isinstance(d, list):
        return [_docs_as_dict(x) for x in d]
    return d


@pytest.mark.parametrize("name", ["reset", "role", "command|getkeys", "command|getkeysandflags",
                                  "config|rewrite", "shutdown"])
def test_command_info_matches(pair, name):
    switch_proto(pair, 3)
    got, want = (c.cmd("COMMAND", "INFO", name)[0] for c in (pair.latch, pair.redis))
    assert got[0] == want[0]
    assert got[1] == want[1], "arity"
    assert sorted(got[2]) == sorted(want[2]), "flags"
    assert got[3:6] == want[3:6], "keys"
    assert sorted(got[6]) == sorted(want[6]), "acl"


@pytest.mark.parametrize("name", ["reset", "role"])
def test_command_docs_match(pair, name):
    switch_proto(pair, 3)
    got, want = (_docs_as_dict(c.cmd("COMMAND", "DOCS", name)) for c in (pair.latch, pair.redis))
    assert got == want


def test_subcommand_docs_match(pair):
    switch_proto(pair, 3)
    for container, subs in (("command", ("command|getkeys", "command|getkeysandflags")),
                            ("config", ("config|rewrite",))):
        got, want = (_docs_as_dict(c.cmd("COMMAND", "DOCS", container))[container.encode()]
                     [b"subcommands"] for c in (pair.latch, pair.redis))
        for s in subs:
            assert got[s.encode()] == want[s.encode()], s
    # SHUTDOWN's arguments (latch's summary says it flushes the log, not a
    # snapshot): the same names, tokens and flags, ABORT included.
    got, want = (_docs_as_dict(c.cmd("COMMAND", "DOCS", "shutdown"))[b"shutdown"][b"arguments"]
                 for c in (pair.latch, pair.redis))
    assert got == want


# ---------------------------------------------------------------- servers of their own

def start_pair(tmp_path, latch_args=(), redis_args=(), conf_text=None, env=None):
    """A latch-server and a redis-server with the same extra arguments (and
    each its own copy of the same config file when `conf_text` is given)."""
    out = []
    for kind in ("latch", "redis"):
        work = tmp_path / kind
        work.mkdir()
        data = work / "data"
        data.mkdir()
        extra = [str(x) for x in (latch_args if kind == "latch" else redis_args)]
        binary = lt.latch_binary() if kind == "latch" else lt.redis_server_binary()
        conf = []
        if conf_text is not None:
            path = work / (kind + ".conf")
            path.write_text(conf_text)
            conf = [str(path)]
        base = ["--bind", lt.HOST, "--dir", str(data)]
        if kind == "latch":
            base += ["--quarantine", "never"]
        else:
            base += ["--save", ""]

        def argv(p, binary=binary, conf=conf, base=base, extra=extra):
            return [binary] + conf + ["--port", str(p)] + base + extra

        out.append(lt.ServerProcess(kind, argv, str(work), env=env).start())
    return out


def test_config_rewrite_keeps_the_file_as_redis_does(tmp_path):
    conf = ("# an operator's comments stay\n"
            "port 6379\n"
            "\n"
            "\n"
            "# the timeout, changed below\n"
            "timeout 10\n"
            "hash-max-ziplist-entries 100\n"
            "tcp-keepalive 300\n"
            "tcp-keepalive 200\n"
            "slowlog-max-len 128\n"
            "# last line\n")
    servers = start_pair(tmp_path, conf_text=conf)
    try:
        for s in servers:
            with s.conn() as c:
                assert c.cmd("CONFIG", "SET", "timeout", "42") == b"OK"
                assert c.cmd("CONFIG", "SET", "maxmemory", "64mb") == b"OK"
                assert c.cmd("CONFIG", "SET", "maxmemory-policy", "volatile-ttl") == b"OK"
                assert c.cmd("CONFIG", "SET", "hash-max-listpack-entries", "256") == b"OK"
                assert c.cmd("CONFIG", "REWRITE") == b"OK"
        texts = [(tmp_path / k / (k + ".conf")).read_text() for k in ("latch", "redis")]
    finally:
        for s in servers:
            s.stop()

    def head(text):
        # Everything before the appended part is the operator's file,
        # rewritten in place: identical but for the port each was given.
        return re.sub(r"(?m)^port \d+$", "port P", text.split("# Generated by CONFIG REWRITE")[0])

    assert head(texts[0]) == head(texts[1])
    assert head(texts[0]) == ("# an operator's comments stay\n"
                              "port P\n"
                              "\n"
                              "# the timeout, changed below\n"
                              "timeout 42\n"
                              "hash-max-listpack-entries 256\n"
                              "tcp-keepalive 200\n"
                              "\n"
                              "slowlog-max-len 128\n"
                              "# last line\n"
                              "\n")
    for text in texts:
        tail = text.split("# Generated by CONFIG REWRITE\n")[1].splitlines()
        # Appended: what differs from the defaults, in each server's own
        # order (Redis's is its hash table's).
        assert "maxmemory 64mb" in tail
        assert "maxmemory-policy volatile-ttl" in tail
        assert any(line.startswith('dir "') for line in tail)
    # Rewriting again changes nothing.
    # (Each server reads back its own file at the next start.)


def test_config_rewrite_file_restarts_with_the_values(tmp_path):
    conf = tmp_path / "latch.conf"
    conf.write_text("# mine\nport 0\nmaxmemory 0\n")
    data = tmp_path / "data"
    data.mkdir()
    srv = lt.ServerProcess("latch", lambda p: [lt.latch_binary(), str(conf), "--port", str(p),
                                               "--dir", str(data), "--quarantine", "never"],
                           str(tmp_path)).start()
    try:
        with srv.conn() as c:
            assert c.cmd("CONFIG", "SET", "maxmemory", "3mb", "max-lock-ttl", "60000") == b"OK"
            assert c.cmd("CONFIG", "REWRITE") == b"OK"
            assert c.cmd("CONFIG", "REWRITE") == b"OK"
    finally:
        srv.stop()
    text = conf.read_text()
    assert text.startswith("# mine\nport ")  # the port it ran on, in place
    assert "\nmaxmemory 3mb\n" in text
    assert text.count("# Generated by CONFIG REWRITE") == 1
    assert "\nmax-lock-ttl 60000\n" in text
    # The rewritten file starts the server with those values.
    srv = lt.ServerProcess("latch2", lambda p: [lt.latch_binary(), str(conf), "--port", str(p)],
                           str(tmp_path)).start()
    try:
        with srv.conn() as c:
            assert c.cmd("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"3145728"]
            assert c.cmd("CONFIG", "GET", "max-lock-ttl") == [b"max-lock-ttl", b"60000"]
    finally:
        srv.stop()


def test_reset_after_auth_requires_auth_again(tmp_path):
    servers = start_pair(tmp_path, ("--requirepass", "s3cret"), ("--requirepass", "s3cret"))
    try:
        p = lt.Pair(servers[0].port, servers[1].port)
        check_script(p, [("AUTH", "s3cret"), ("PING",), ("RESET",), ("PING",),
                         ("AUTH", "s3cret"), ("PING",)])
        p.close()
    finally:
        for s in servers:
            s.stop()


@pytest.mark.parametrize("words", [(), ("NOW",), ("FORCE",), ("NOSAVE", "NOW", "FORCE"),
                                   ("SAVE",)])
def test_shutdown_modifiers_stop_the_server(tmp_path, words):
    servers = start_pair(tmp_path)
    p = lt.Pair(servers[0].port, servers[1].port)
    got, want = p.send_until_close(lt.encode("SHUTDOWN", *words))
    assert got == want == b""
    for s in servers:
        assert s.proc.wait(timeout=20) == 0, s.log_text()


def test_unix_socket(tmp_path):
    socks = [str(tmp_path / ("%s.sock" % k)) for k in ("latch", "redis")]
    (tmp_path / "l").mkdir()
    servers = [start_pair(tmp_path / "l", ("--unixsocket", socks[0], "--unixsocketperm", "700"),
                          ())[0]]
    # The same options for Redis, on its own socket path.
    (tmp_path / "r").mkdir()
    servers.append(start_pair(tmp_path / "r", (), ("--unixsocket", socks[1],
                                                   "--unixsocketperm", "700"))[1])
    try:
        lines = []
        for path in socks:
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
            assert stat.S_ISSOCK(os.stat(path).st_mode)
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.sendall(lt.encode("CLIENT", "INFO"))
            reply = b""
            while not reply.endswith(b"\n\r\n"):
                reply += s.recv(4096)
            s.sendall(lt.encode("CONFIG", "GET", "unixsocketperm"))
            perm = s.recv(4096)
            s.close()
            assert perm == b"*2\r\n$14\r\nunixsocketperm\r\n$3\r\n700\r\n"
            fields = dict(f.split("=", 1) for f in reply.decode().split("\r\n")[1].split())
            lines.append(fields)
            assert fields["addr"] == fields["laddr"] == path + ":0"
        assert lines[0]["flags"] == lines[1]["flags"] == "U"
        for srv, path in zip(servers, socks):
            with srv.conn() as c:
                c.send(lt.encode("SHUTDOWN"))
            assert srv.proc.wait(timeout=20) == 0
            assert not os.path.exists(path), "the socket file is removed at shutdown"
    finally:
        for s in servers:
            s.stop()


def test_unix_socket_clients_pass_protected_mode(tmp_path):
    """A unix-socket client is local: protected mode lets it in, as Redis."""
    sock = str(tmp_path / "latch.sock")
    srv = start_pair(tmp_path, ("--unixsocket", sock))[0]
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
        s.close()
    finally:
        srv.stop()


def test_unixsocketperm_errors_match(tmp_path):
    for value in ("999", "abc", "1777", "-1"):
        outs = []
        for binary in (lt.latch_binary(), lt.redis_server_binary()):
            p = subprocess.run([binary, "--port", "0", "--unixsocketperm", value],
                               capture_output=True, text=True, timeout=20, cwd=str(tmp_path))
            assert p.returncode == 1
            outs.append((p.stdout + p.stderr).strip().splitlines()[-1])
        assert outs[0] == outs[1], value


def test_daemonize_and_pidfile(tmp_path):
    """daemonize yes: the command returns at once (the parent exits 0), the
    server runs on in the background with its pid in the pidfile, logs to
    its logfile, and a clean shutdown removes the pidfile."""
    for kind, binary in (("latch", lt.latch_binary()), ("redis", lt.redis_server_binary())):
        work = tmp_path / kind
        work.mkdir()
        pidfile, logfile = work / "server.pid", work / "server.log"
        port = lt.free_port()
        argv = [binary, "--port", str(port), "--bind", lt.HOST, "--dir", str(work),
                "--daemonize", "yes", "--pidfile", str(pidfile), "--logfile", str(logfile)]
        argv += ["--quarantine", "never"] if kind == "latch" else ["--save", ""]
        p = subprocess.run(argv, capture_output=True, timeout=20)
        assert p.returncode == 0, p
        assert lt.wait_for(lambda: pidfile.exists() and pidfile.read_text().strip(), 10)
        pid = int(pidfile.read_text())
        try:
            os.kill(pid, 0)
            conn = None
            deadline = time.monotonic() + 10
            while conn is None:
                try:
                    conn = lt.Conn(port)
                    conn.cmd("PING")
                except OSError:
                    conn = None
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            with conn:
                assert conn.cmd("CONFIG", "GET", "daemonize") == [b"daemonize", b"yes"]
                assert conn.cmd("CONFIG", "GET", "pidfile") == [b"pidfile", str(pidfile).encode()]
                assert conn.cmd("CONFIG", "GET", "logfile") == [b"logfile", str(logfile).encode()]
                conn.send(lt.encode("SHUTDOWN"))
            assert lt.wait_for(lambda: not _alive(pid), 20)
            assert not pidfile.exists()
            assert logfile.stat().st_size > 0
        finally:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is not alive (the daemon's parent, init here, reaps it).
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1].split()[0] != "Z"
    except OSError:
        return False


# ---------------------------------------------------------------- maxmemory

def _fill_until_oom(conn, limit=200000):
    """SETs of 10 KB values until an error; the error reply's raw bytes."""
    value = "x" * 10000
    for i in range(limit):
        conn.send(lt.encode("SET", "fill:%d" % i, value))
        raw = conn.read_n_raw(1)
        if raw.startswith(b"-"):
            return raw, i
    raise AssertionError("no error after %d SETs" % limit)


def test_noeviction_refuses_writes_and_keeps_every_lock(tmp_path):
    servers = start_pair(tmp_path)
    try:
        errors = []
        for s in servers:
            with s.conn() as c:
                used = int(lt.info_fields(c.cmd("INFO", "memory").decode())["used_memory"])
                assert c.cmd("SET", "lock:held", "tok", "PX", "600000") == b"OK"
                assert c.cmd("CONFIG", "SET", "maxmemory", str(used + 2 * 1024 * 1024)) == b"OK"
                raw, n = _fill_until_oom(c)
                errors.append(raw)
                # Reads and releases go on; nothing was deleted.
                assert c.cmd("GET", "lock:held") == b"tok"
                assert c.cmd("DEL", "fill:0") == 1
                evicted = lt.info_fields(c.cmd("INFO", "stats").decode())["evicted_keys"]
                assert evicted == "0"
                c.cmd("CONFIG", "SET", "maxmemory", "0")
        assert errors[0] == errors[1] == \
            b"-OOM command not allowed when used memory > 'maxmemory'.\r\n"
    finally:
        for s in servers:
            s.stop()


def test_oom_in_multi_as_redis(tmp_path):
    servers = start_pair(tmp_path)
    try:
        p = lt.Pair(servers[0].port, servers[1].port)
        for c in (p.latch, p.redis):
            c.cmd("CONFIG", "SET", "maxmemory", "1")
        check_script(p, [("SET", "a", "1"), ("GET", "a"), ("DEL", "a"), ("MULTI",),
                         ("SET", "b", "1"), ("EXEC",), ("MULTI",), ("DISCARD",), ("PING",)])
        for c in (p.latch, p.redis):
            c.cmd("CONFIG", "SET", "maxmemory", "0")
        p.close()
    finally:
        for s in servers:
            s.stop()


@pytest.mark.parametrize("policy", ["allkeys-random", "allkeys-lru", "volatile-lru",
                                    "volatile-ttl", "volatile-random"])
def test_eviction_policies_delete_keys(server_factory, policy):
    srv = server_factory("latch")
    with srv.conn() as c:
        used = int(lt.info_fields(c.cmd("INFO", "memory").decode())["used_memory"])
        assert c.cmd("CONFIG", "SET", "maxmemory-policy", policy) == b"OK"
        assert c.cmd("CONFIG", "SET", "maxmemory", str(used + 4 * 1024 * 1024)) == b"OK"
        value = "x" * 10000
        for i in range(2000):  # 20 MB, five times the room
            reply = c.cmd("SET", "k:%d" % i, value, "PX", str(600000 + i))
            assert reply == b"OK", (i, reply)
        info = lt.info_fields(c.cmd("INFO").decode())
        assert int(info["evicted_keys"]) > 0
        assert info["maxmemory_policy"] == policy
        assert c.cmd("DBSIZE") < 2000
        if policy == "volatile-ttl":
            # The leases that end first went first: the last keys stay.
            assert c.cmd("EXISTS", "k:1999") == 1
        c.cmd("CONFIG", "SET", "maxmemory", "0")


def test_lfu_policies_are_refused_with_the_reason(server_factory):
    srv = server_factory("latch")
    with srv.conn() as c:
        for policy in ("allkeys-lfu", "volatile-lfu"):
            err = c.cmd("CONFIG", "SET", "maxmemory-policy", policy)
            assert isinstance(err, lt.RespError)
            assert b"access frequency" in err.text and b"noeviction" in err.text
        assert c.cmd("CONFIG", "GET", "maxmemory-policy") == [b"maxmemory-policy", b"noeviction"]


# ---------------------------------------------------------------- CONFIG SET appendonly

def test_appendonly_switched_on_logs_the_whole_dataset(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    argv = lambda p: [lt.latch_binary(), "--port", str(p), "--dir", str(data),  # noqa: E731
                      "--appendonly", "no", "--quarantine", "auto"]
    srv = lt.ServerProcess("latch", argv, str(tmp_path)).start()
    try:
        with srv.conn() as c:
            assert c.cmd("SET", "lock:a", "tok", "PX", "600000") == b"OK"
            assert c.cmd("SELECT", "2") == b"OK"
            assert c.cmd("SET", "lock:b", "tok2") == b"OK"
            assert c.cmd("CONFIG", "SET", "appendonly", "yes") == b"OK"
            assert c.cmd("SELECT", "0") == b"OK"
            assert c.cmd("SET", "after", "3") == b"OK"
            c.send(lt.encode("SHUTDOWN"))
        assert srv.proc.wait(timeout=20) == 0
    finally:
        srv.stop()
    log = (data / "latch.aof").read_bytes()
    assert b"lock:a" in log and b"lock:b" in log and b"after" in log
    # Restarted with the log on, every key is back, and (a clean stop with
    # the log synced) without quarantine.
    srv = lt.ServerProcess("latch2", lambda p: argv(p)[:-4] + ["--appendonly", "yes"],
                           str(tmp_path)).start()
    try:
        with srv.conn() as c:
            assert c.cmd("GET", "lock:a") == b"tok"
            assert 0 < c.cmd("PTTL", "lock:a") <= 600000
            assert c.cmd("GET", "after") == b"3"
            c.cmd("SELECT", "2")
            assert c.cmd("GET", "lock:b") == b"tok2"
    finally:
        srv.stop()


def test_appendonly_switched_off_quarantines_the_next_start(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    argv = lambda p: [lt.latch_binary(), "--port", str(p), "--dir", str(data),  # noqa: E731
                      "--appendonly", "yes"]
    srv = lt.ServerProcess("latch", argv, str(tmp_path)).start()
    try:
        with srv.conn() as c:
            assert c.cmd("SET", "lock:a", "tok", "PX", "3000") == b"OK"
            assert c.cmd("CONFIG", "SET", "appendonly", "no") == b"OK"
            # Not logged from here on: a grant the log never sees.
            assert c.cmd("SET", "lock:b", "tok", "PX", "3000") == b"OK"
            c.send(lt.encode("SHUTDOWN"))
        assert srv.proc.wait(timeout=20) == 0
    finally:
        srv.stop()
    srv = lt.ServerProcess("latch2", argv, str(tmp_path)).start()
    try:
        with srv.conn() as c:
            err = c.cmd("SET", "lock:b", "other", "NX", "PX", "1000")
            assert isinstance(err, lt.RespError) and err.text.startswith(b"QUARANTINE"), err
    finally:
        srv.stop()
