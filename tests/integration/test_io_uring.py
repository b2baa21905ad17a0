"""The io_uring connection path (issue 28, `io-uring yes`): every test runs
latch with the setting on, checks INFO says the ring is in use, and drives
the paths the ring replaces — many receives (pipelines, a 10 MB value),
partial sends, back-pressure, the output limit, closes mid-pipeline, pushes,
blocking commands, a busy script's other clients and its own — with raw
sockets, redis-py and redis-cli. The setting itself (default, CONFIG GET,
CONFIG SET refusing it as Redis refuses an immutable config) is checked
against redis-server."""

import platform
import socket
import subprocess
import sys
import threading
import time

import pytest

import latchtest as lt

URING = ("--io-uring", "yes")


def start(server_factory, *extra):
    srv = server_factory("latch", *(URING + extra))
    with srv.conn() as c:
        info = lt.info_fields(c.cmd("INFO", "server"))
    assert info["io_uring"] == "yes", "the io_uring path is not in use:\n" + srv.log_text()
    return srv


def read_exactly(sock, n, timeout=20.0):
    sock.settimeout(timeout)
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def test_setting_default_config_get_and_immutable_like_redis(server_factory, redis_server):
    plain = server_factory("latch")
    with plain.conn() as c:
        assert lt.info_fields(c.cmd("INFO", "server"))["io_uring"] == "no"
        assert c.cmd("CONFIG", "GET", "io-uring") == [b"io-uring", b"no"]
    srv = start(server_factory)
    with srv.conn() as c, redis_server.conn() as r:
        assert c.cmd("CONFIG", "GET", "io-uring") == [b"io-uring", b"yes"]
        # Refused as Redis refuses any immutable config (daemonize here).
        want = r.raw("CONFIG", "SET", "daemonize", "yes").replace(b"daemonize", b"io-uring")
        assert want.startswith(b"-ERR CONFIG SET failed"), want
        assert c.raw("CONFIG", "SET", "io-uring", "no") == want
        assert c.cmd("CONFIG", "GET", "io-uring") == [b"io-uring", b"yes"]


def test_thousands_of_pipelined_requests_in_one_write(server_factory):
    srv = start(server_factory)
    n = 20000
    with srv.conn() as c:
        c.send(lt.encode("INCR", "n") * n)
        data = c.read_n_raw(n, timeout=30)
        assert data == b"".join(b":%d\r\n" % i for i in range(1, n + 1))
        # Replies of one iteration leave in few sends, not one per request.
        stats = lt.info_fields(c.cmd("INFO", "stats"))
        assert int(stats["total_writes_processed"]) < n // 10, stats


def test_ten_megabyte_value_many_receives_and_partial_sends(server_factory):
    srv = start(server_factory)
    value = bytes(range(256)) * (10 * 4096)  # 10 MB, no repeated 16 KB block
    with srv.conn() as c:
        reads0 = int(lt.info_fields(c.cmd("INFO", "stats"))["total_reads_processed"])
        assert c.cmd("SET", "big", value) == b"OK"
        reads = int(lt.info_fields(c.cmd("INFO", "stats"))["total_reads_processed"]) - reads0
        assert reads > 100, reads  # many receive completions (16 KB buffers)
    # A reader with a small receive buffer: the kernel takes the reply in
    # many partial sends, whose rest is sent in order.
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((lt.HOST, srv.port))
    s.sendall(lt.encode("GET", "big") + lt.encode("PING"))
    want = b"$%d\r\n" % len(value) + value + b"\r\n" + b"+PONG\r\n"
    got = bytearray()
    s.settimeout(20)
    while len(got) < len(want):
        chunk = s.recv(65536)
        if not chunk:
            break
        got += chunk
        time.sleep(0.0005) if len(got) < 1 << 20 else None  # slow at first
    s.close()
    assert bytes(got) == want


def test_many_clients_at_once(server_factory):
    srv = start(server_factory)
    errors = []

    def client(i):
        try:
            with srv.conn() as c:
                for j in range(50):
                    assert c.cmd("SET", "k%d" % i, "v%d" % j) == b"OK"
                    assert c.cmd("GET", "k%d" % i) == b"v%d" % j
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))

    threads = [threading.Thread(target=client, args=(i,)) for i in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:3]
    with srv.conn() as c:
        assert c.cmd("DBSIZE") == 200


def test_client_that_stops_reading_pauses_then_resumes(server_factory):
    srv = start(server_factory)
    value = b"v" * (1 << 20)
    with srv.conn() as c:
        assert c.cmd("SET", "big", value) == b"OK"
    hog = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    hog.connect((lt.HOST, srv.port))
    hog.sendall(lt.encode("CLIENT", "SETNAME", "hog") + lt.encode("GET", "big") * 40 +
                lt.encode("PING"))

    def hog_line():
        with srv.conn() as c:
            for line in c.cmd("CLIENT", "LIST").decode().splitlines():
                if "name=hog" in line:
                    return dict(f.split("=", 1) for f in line.split(" ") if "=" in f)
        return None

    # Back-pressure: more than 1 MB unsent, reading stops (no `r` event).
    assert lt.wait_for(lambda: "r" not in (hog_line() or {}).get("events", "r"), 10), hog_line()
    with srv.conn() as c:
        assert c.cmd("PING") == b"PONG"  # the others are served meanwhile
    # Reading resumes as the client drains its replies; all arrive in order.
    reply = b"$%d\r\n%s\r\n" % (len(value), value)
    want = b"+OK\r\n" + reply * 40 + b"+PONG\r\n"
    assert read_exactly(hog, len(want)) == want
    assert lt.wait_for(lambda: (hog_line() or {}).get("events") == "r", 10), hog_line()
    hog.close()


def test_output_limit_disconnects_a_client_that_never_reads(server_factory):
    srv = start(server_factory, "--client-output-buffer-limit", "normal 4mb 0 0")
    with srv.conn() as c:
        assert c.cmd("SET", "big", b"v" * (1 << 20)) == b"OK"
    hog = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    hog.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    hog.connect((lt.HOST, srv.port))
    hog.sendall(lt.encode("GET", "big") * 200)
    assert lt.wait_for(lambda: "overcoming of output buffer limits" in srv.log_text(), 10), \
        srv.log_text()
    hog.settimeout(10)
    got = lt.read_until_closed(hog)
    assert got < 200 * (1 << 20) // 4
    with srv.conn() as c:
        assert c.cmd("PING") == b"PONG"
        assert int(c.cmd("INFO", "clients").split(b"connected_clients:")[1].split(b"\r")[0]) == 1


def test_quit_client_kill_and_close_mid_pipeline(server_factory):
    srv = start(server_factory)
    # QUIT: the replies before it, +OK, then the close; nothing after it runs.
    with srv.conn() as c:
        c.send(lt.encode("SET", "a", "1") + lt.encode("QUIT") + lt.encode("SET", "b", "2"))
        assert c.read_until_close() == b"+OK\r\n+OK\r\n"
    with srv.conn() as c:
        assert c.cmd("EXISTS", "a", "b") == 1
        # CLIENT KILL of a client parked in BLPOP, then of oneself.
        with srv.conn() as victim:
            victim_id = victim.cmd("CLIENT", "ID")
            victim.send(lt.encode("BLPOP", "q", "0"))
            assert lt.wait_for(lambda: lt.info_fields(
                c.cmd("INFO", "clients"))["blocked_clients"] == "1", 5)
            assert c.cmd("CLIENT", "KILL", "ID", victim_id) == 1
            assert victim.read_until_close() == b""
        assert c.cmd("CLIENT", "KILL", "SKIPME", "no", "ID", c.cmd("CLIENT", "ID")) == 1
    # Clients that vanish with requests and replies in flight.
    for _ in range(20):
        s = socket.create_connection((lt.HOST, srv.port))
        s.sendall(lt.encode("INCR", "gone") * 5000)
        s.close()
    with srv.conn() as c:
        assert c.cmd("PING") == b"PONG"
        assert lt.wait_for(lambda: int(lt.info_fields(
            c.cmd("INFO", "clients"))["connected_clients"]) == 1, 5)
    assert srv.alive()


def test_pubsub_pushes_and_blocking_commands(server_factory):
    srv = start(server_factory)
    with srv.conn() as sub, srv.conn() as pub, srv.conn() as waiter:
        sub.send(lt.encode("HELLO", "3") + lt.encode("SUBSCRIBE", "ch"))
        sub.read()
        assert sub.read() == [b"subscribe", b"ch", 1]
        for i in range(100):
            assert pub.cmd("PUBLISH", "ch", "m%d" % i) == 1
        for i in range(100):
            assert sub.read() == [b"message", b"ch", b"m%d" % i]
        waiter.send(lt.encode("BLPOP", "list", "0"))
        time.sleep(0.1)
        assert pub.cmd("LPUSH", "list", "x") == 1
        assert waiter.read() == [b"list", b"x"]


def test_busy_script_its_own_pipeline_and_others_keep_order(server_factory):
    srv = start(server_factory, "--busy-reply-threshold", "50")
    busy = (b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
            b"SHUTDOWN NOSAVE.\r\n")
    with srv.conn() as runner, srv.conn() as other, srv.conn() as sender:
        runner.send(lt.encode("EVAL", "while true do end", "0"))
        assert lt.wait_for(lambda: other.raw("PING") == busy, 5)
        # The script's own client sends more while it runs: its bytes wait
        # (the ring's completions for it are delivered after the script).
        runner.send(lt.encode("INCR", "r") * 3)
        # Another client keeps sending: each request answered -BUSY, in order.
        for i in range(50):
            sender.send(lt.encode("INCR", "s") + lt.encode("PING"))
            assert sender.read_raw() == busy
            assert sender.read_raw() == busy
        sender.send(lt.encode("INCR", "s") * 200)
        assert sender.read_n_raw(200) == busy * 200
        assert other.raw("SCRIPT", "KILL") == b"+OK\r\n"
        assert runner.read_raw().startswith(b"-ERR Script killed by user with SCRIPT KILL...")
        assert runner.read_n_raw(3) == b":1\r\n:2\r\n:3\r\n"
        assert sender.cmd("GET", "s") is None
        assert sender.cmd("INCR", "s") == 1


def test_redis_py_redis_cli_and_unix_socket(server_factory, tmp_path):
    redis = pytest.importorskip("redis")
    sock_path = str(tmp_path / "latch.sock")
    srv = start(server_factory, "--unixsocket", sock_path)
    r = redis.Redis(port=srv.port)
    assert r.set("lock", "me", nx=True, px=10000)
    assert r.get("lock") == b"me"
    lock = r.lock("res", timeout=5)
    assert lock.acquire(blocking=False)
    lock.release()
    p = r.pipeline(transaction=False)
    for i in range(1000):
        p.set("p%d" % i, i)
    assert all(p.execute())
    u = redis.Redis(unix_socket_path=sock_path)
    assert u.get("p999") == b"999"
    assert u.info("server")["io_uring"] == "yes"
    out = subprocess.run(["redis-cli", "-p", str(srv.port), "GET", "p7"],
                         stdout=subprocess.PIPE, check=True, timeout=10).stdout
    assert out == b"7\n"
    out = subprocess.run(["redis-cli", "-s", sock_path, "--pipe"],
                         input=lt.encode("SET", "viacli", "1") * 100,
                         stdout=subprocess.PIPE, check=True, timeout=10).stdout
    assert b"errors: 0, replies: 100" in out, out
    assert u.get("viacli") == b"1"


# Runs the rest of its command line with io_uring_setup(2) failing ENOSYS,
# as under a seccomp policy or a kernel without io_uring: a one-rule seccomp
# filter (syscall 425 is io_uring_setup on x86-64 and arm64).
NO_URING = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class F(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint)]
class P(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(F))]
prog = (F * 4)(F(0x20, 0, 0, 0), F(0x15, 0, 1, 425), F(0x06, 0, 0, 0x00050000 | 38),
               F(0x06, 0, 0, 0x7fff0000))
p = P(4, prog)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(p), 0, 0) == 0  # PR_SET_SECCOMP, MODE_FILTER
os.execv(sys.argv[1], sys.argv[1:])
"""


def test_kernel_refusal_warns_and_falls_back_to_epoll(tmp_path):
    if platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("the seccomp rule names io_uring_setup by its x86-64/arm64 number")
    data = tmp_path / "data"
    data.mkdir()
    srv = lt.ServerProcess(
        "latch", lambda p: [sys.executable, "-c", NO_URING, lt.latch_binary(), "--port", str(p),
                            "--dir", str(data), "--appendonly", "no", *lt.FRESH_ARGS, *URING],
        str(tmp_path)).start()
    try:
        with srv.conn() as c:
            assert lt.info_fields(c.cmd("INFO", "server"))["io_uring"] == "no"
            assert c.cmd("CONFIG", "GET", "io-uring") == [b"io-uring", b"yes"]
            c.send(lt.encode("INCR", "n") * 1000)
            assert c.read_n_raw(1000) == b"".join(b":%d\r\n" % i for i in range(1, 1001))
        warnings = [line for line in srv.log_text().splitlines() if "io_uring" in line]
        assert len(warnings) == 1, warnings
        assert ("io-uring yes, but the kernel refused io_uring (io_uring_queue_init: Function "
                "not implemented): using epoll") in warnings[0]
    finally:
        srv.stop()
