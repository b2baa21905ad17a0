"""Real client libraries against latch, unchanged: Debian's python3-redis
(redis-py) and libhiredis, and the npm packages ioredis and redis
(node-redis) at the versions pinned in clients/node/package-lock.json.

Each library runs the lock recipe (SET NX PX, SET IFEQ to renew, DELIFEQ or
DELEX to release), DIGEST, pipelining, and what it sends on its own when it
connects. A recording proxy between the library and latch keeps every byte
in both directions, so the tests assert the handshake each library sent and
the exact replies it got (RESP3 after HELLO 3), and that a pipeline really
was sent before its first reply came back.

The npm packages are installed at test time with `npm ci` from the committed
lock file into a cache ($XDG_CACHE_HOME/latch/node-clients, else
<build dir>/node-clients), keyed by the lock file's hash, so later runs reuse
it. README.md's "Client compatibility" table summarises what is proven here.
"""

import ctypes
import ctypes.util
import hashlib
import json
import os
import selectors
import shutil
import socket
import subprocess
import threading
import time

import pytest

import latchtest as lt
import nodeclients

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENTS = os.path.join(HERE, "clients")
NODE_DIR = os.path.join(CLIENTS, "node")
IN_CI = bool(os.environ.get("CI"))

IOREDIS_VERSION = "6.0.0"
NODE_REDIS_VERSION = "6.3.1"


def unavailable(why):
    """A missing client: a failure in CI (tools/dev/deps.sh installs them
    all), a skip on a developer's machine that lacks it."""
    if IN_CI:
        pytest.fail(why)
    pytest.skip(why)


# ---------------------------------------------------------------- servers


@pytest.fixture(scope="module")
def latch(tmp_path_factory):
    """One latch-server for the module, with a lease cap (max-lock-ttl 60000
    ms, off by default) so the clients' handling of its error is tested too,
    and no restart quarantine."""
    srv = lt.start_latch(str(tmp_path_factory.mktemp("clients")), *lt.FRESH_ARGS,
                         "--max-lock-ttl", "60000")
    yield srv
    srv.stop()


@pytest.fixture
def raw(latch):
    c = latch.conn()
    assert c.cmd("FLUSHALL") == b"OK"
    yield c
    c.close()
    assert latch.alive(), "latch-server died:\n" + latch.log_text()


# ---------------------------------------------------------------- recording proxy


class Exchange(object):
    """One request a client sent and the reply it got, with the global
    sequence numbers of the chunk that completed the request and of the
    chunk that started the reply."""

    def __init__(self, argv, reply, sent_seq, reply_seq):
        self.argv = argv
        self.reply = reply
        self.sent_seq = sent_seq
        self.reply_seq = reply_seq

    @property
    def words(self):
        return [a.decode("utf-8", "replace") for a in self.argv]

    def __repr__(self):
        return "Exchange(%r -> %r)" % (self.words, self.reply[:80])


class RecordingProxy(object):
    """Listens on a free port and relays each connection to latch, keeping
    every chunk read in either direction, numbered in one global order.

    One thread per connection moves both directions. Before it forwards
    anything from the server it first drains what the client has already
    sent, so a request numbered before a reply was written by the client
    before that reply could have reached it: that is what makes
    assert_pipelined() sound."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind((lt.HOST, 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.seq = 0
        self.chunks = []  # per connection: list of (seq, direction, bytes)
        self.relays = []
        self.sockets = []
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection((lt.HOST, self.target_port))
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                index = len(self.chunks)
                self.chunks.append([])
                self.sockets += [client, upstream]
            t = threading.Thread(target=self._relay, args=(client, upstream, index), daemon=True)
            t.start()
            self.relays.append(t)

    def _record(self, index, direction, data):
        with self.lock:
            self.seq += 1
            self.chunks[index].append((self.seq, direction, data))

    def _relay(self, client, upstream, index):
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ)
        sel.register(upstream, selectors.EVENT_READ)
        open_ = {client, upstream}
        peer = {client: upstream, upstream: client}
        name = {client: "c2s", upstream: "s2c"}
        while open_:
            ready = {key.fileobj for key, _ in sel.select(timeout=1.0)}
            # The client side first, always, then the server side.
            for src in (client, upstream):
                if src not in open_ or (src not in ready and src is not client):
                    continue
                while True:
                    try:
                        data = src.recv(1 << 16, socket.MSG_DONTWAIT)
                    except BlockingIOError:
                        break
                    except OSError:
                        data = b""
                    if not data:
                        open_.discard(src)
                        sel.unregister(src)
                        try:
                            peer[src].shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
                        break
                    self._record(index, name[src], data)
                    try:
                        peer[src].sendall(data)
                    except OSError:
                        open_.clear()
                        break
        sel.close()
        client.close()
        upstream.close()

    def wait_idle(self, timeout=10.0):
        """Waits until every relayed connection has closed both ways."""
        deadline = time.monotonic() + timeout
        for t in list(self.relays):
            t.join(max(0.0, deadline - time.monotonic()))

    def close(self):
        self.listener.close()
        for s in self.sockets:
            try:
                s.close()
            except OSError:
                pass

    def connections(self):
        """How many connections were relayed."""
        with self.lock:
            return len(self.chunks)

    def exchanges(self, index):
        """Connection `index` as a list of Exchanges, in order."""
        with self.lock:
            chunks = list(self.chunks[index])

        def stream(direction):
            data, marks = b"", []  # marks: (end offset, seq) per chunk
            for seq, d, b in chunks:
                if d == direction:
                    data += b
                    marks.append((len(data), seq))
            return data, marks

        def seq_at(marks, offset):
            for end, seq in marks:
                if offset < end:
                    return seq
            raise AssertionError("offset %d past the stream" % offset)

        c2s, c2s_marks = stream("c2s")
        s2c, s2c_marks = stream("s2c")
        requests, pos = [], 0
        while pos < len(c2s):
            argv, end = lt.parse_reply(c2s, pos)  # a request is an array of bulks
            requests.append((argv, seq_at(c2s_marks, end - 1)))
            pos = end
        replies, pos = [], 0
        while pos < len(s2c):
            _, end = lt.parse_reply(s2c, pos)
            replies.append((s2c[pos:end], seq_at(s2c_marks, pos)))
            pos = end
        assert len(replies) <= len(requests), "more replies than requests: %r" % replies
        out = []
        for i, (argv, sent) in enumerate(requests):
            reply, rseq = replies[i] if i < len(replies) else (None, None)
            out.append(Exchange(argv, reply, sent, rseq))
        return out


@pytest.fixture
def proxy(latch):
    p = RecordingProxy(latch.port)
    yield p
    p.close()


def assert_pipelined(exchanges, first, last):
    """Requests first..last were all sent before the reply to `first` came.
    Sound (see RecordingProxy); reliable when the client wrote them at once."""
    assert exchanges[last].sent_seq < exchanges[first].reply_seq, (
        "requests %d..%d were not pipelined: %r" % (first, last, exchanges[first:last + 1]))


def error_replies(exchanges):
    return [(x.words, x.reply) for x in exchanges if x.reply is not None and x.reply[:1] in b"-!"]


# ---------------------------------------------------------------- XXH3 digest


def xxh3_hex(data):
    """XXH3-64 of `data` as DIGEST prints it, computed by libxxhash itself
    (a build dependency), independently of latch."""
    path = ctypes.util.find_library("xxhash")
    if path is None:
        unavailable("libxxhash (Debian libxxhash-dev) not found")
    lib = ctypes.CDLL(path)
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return "%016x" % lib.XXH3_64bits(data, len(data))


# ---------------------------------------------------------------- redis-py


@pytest.fixture(scope="module")
def redis_py():
    try:
        import redis  # Debian python3-redis
        import redis.lock  # noqa: F401
    except ImportError:
        unavailable("redis-py (Debian python3-redis) is not installed")
    return redis


def test_redis_py_sends_nothing_on_connect(redis_py, latch, proxy):
    """redis-py 4.3.4 sends no handshake: only AUTH / CLIENT SETNAME / SELECT
    when configured, each of which must succeed."""
    r = redis_py.Redis(host=lt.HOST, port=proxy.port)
    assert r.ping() is True
    r.connection_pool.disconnect()
    named = redis_py.Redis(host=lt.HOST, port=proxy.port, client_name="orders-worker", db=0)
    assert named.client_getname() == "orders-worker"
    named.connection_pool.disconnect()
    proxy.wait_idle()
    assert redis_py.__version__ == "4.3.4"
    plain = proxy.exchanges(0)
    assert [x.words for x in plain] == [["PING"]]
    assert plain[0].reply == b"+PONG\r\n"
    named_x = proxy.exchanges(1)
    assert [x.words for x in named_x] == [["CLIENT", "SETNAME", "orders-worker"],
                                          ["CLIENT", "GETNAME"]]
    assert named_x[0].reply == b"+OK\r\n"
    assert named_x[1].reply == b"$13\r\norders-worker\r\n"


def test_redis_py_auth(redis_py, server_factory):
    srv = server_factory("latch", "--requirepass", "s3cret")
    with pytest.raises(redis_py.AuthenticationError, match="NOAUTH|Authentication required"):
        redis_py.Redis(host=lt.HOST, port=srv.port).get("k")
    r = redis_py.Redis(host=lt.HOST, port=srv.port, password="s3cret")
    assert r.set("k", "v", nx=True, px=10000) is True
    r2 = redis_py.Redis(host=lt.HOST, port=srv.port, username="default", password="s3cret")
    assert r2.get("k") == b"v"
    # redis-py 4.3.4 raises a plain ResponseError for WRONGPASS, as with Redis.
    with pytest.raises(redis_py.ResponseError, match="^WRONGPASS invalid username-password"):
        redis_py.Redis(host=lt.HOST, port=srv.port, password="wrong").get("k")
    r.connection_pool.disconnect()
    r2.connection_pool.disconnect()


def test_redis_py_lock_recipe(redis_py, latch, raw):
    r = redis_py.Redis(host=lt.HOST, port=latch.port)
    k = "py:lock"
    assert r.set(k, "tok-A", nx=True, px=30000) is True
    assert r.set(k, "tok-B", nx=True, px=30000) is None
    assert r.get(k) == b"tok-A"
    assert 0 < r.pttl(k) <= 30000
    # Renew only if still ours: SET IFEQ (no redis-py keyword: execute_command).
    assert r.execute_command("SET", k, "tok-A", "IFEQ", "tok-A", "PX", 50000) is True
    assert 30000 < r.pttl(k) <= 50000
    assert r.execute_command("SET", k, "tok-B", "IFEQ", "tok-B", "PX", 50000) is None
    assert r.pexpire(k, 20000) is True
    assert 0 < r.pttl(k) <= 20000
    assert r.pexpire("py:missing", 20000) is False
    # Release only if still ours.
    assert r.execute_command("DELIFEQ", k, "tok-B") == 0
    assert r.get(k) == b"tok-A"
    assert r.execute_command("DELIFEQ", k, "tok-A") == 1
    assert r.get(k) is None
    assert r.pttl(k) == -2
    # DIGEST is XXH3-64 of the value; DELEX compares values or digests.
    assert r.set(k, "tok-C", px=30000) is True
    digest = r.execute_command("DIGEST", k)
    assert digest == xxh3_hex(b"tok-C").encode()
    assert r.execute_command("DIGEST", "py:missing") is None
    assert r.execute_command("DELEX", k, "IFNE", "tok-C") == 0
    assert r.execute_command("DELEX", k, "IFDNE", digest) == 0
    assert r.execute_command("DELEX", k, "IFEQ", "tok-D") == 0
    assert r.execute_command("DELEX", k, "IFDEQ", xxh3_hex(b"tok-D")) == 0
    assert r.exists(k) == 1
    assert r.execute_command("DELEX", k, "IFEQ", "tok-C") == 1
    for cond, match, want in (("IFDEQ", xxh3_hex(b"v"), 1), ("IFNE", "other", 1),
                              ("IFDNE", xxh3_hex(b"other"), 1)):
        assert r.set(k, "v", px=30000) is True
        assert r.execute_command("DELEX", k, cond, match) == want, cond
        assert r.exists(k) == 0
    assert r.set(k, "v") is True
    assert r.execute_command("DELEX", k) == 1
    assert r.execute_command("DELEX", k) == 0
    assert r.set(k, "v", px=1000) and r.delete(k, "py:missing") == 1
    # A TTL over max-lock-ttl is refused with an error redis-py raises.
    with pytest.raises(redis_py.ResponseError, match=r"exceeds max-lock-ttl \(60000 ms\)"):
        r.set(k, "v", nx=True, px=120000)
    # Any script runs (Lua), through the same rules: here max-lock-ttl.
    assert r.eval("return redis.call('set', KEYS[1], 'v')", 1, k) == b"OK"
    assert r.eval("return redis.call('del', KEYS[1])", 1, k) == 1
    with pytest.raises(redis_py.ResponseError, match=r"exceeds max-lock-ttl"):
        r.eval("return redis.call('set', KEYS[1], 'v', 'PX', 120000)", 1, k)
    r.connection_pool.disconnect()


def test_redis_py_pipeline(redis_py, latch, raw, proxy):
    r = redis_py.Redis(host=lt.HOST, port=proxy.port)
    p = r.pipeline(transaction=False)
    p.set("py:p", "p1", nx=True, px=30000)
    p.set("py:p", "p2", nx=True, px=30000)
    p.get("py:p")
    p.execute_command("DELIFEQ", "py:p", "p2")
    p.pexpire("py:p", 10000)
    p.execute_command("DELIFEQ", "py:p", "p1")
    p.get("py:p")
    assert p.execute() == [True, None, b"p1", 0, True, 1, None]
    # The default pipeline is a MULTI/EXEC transaction.
    t = r.pipeline()
    t.set("py:t", "1", px=30000)
    t.get("py:t")
    assert t.execute() == [True, b"1"]
    r.connection_pool.disconnect()
    proxy.wait_idle()
    x = proxy.exchanges(0)
    assert [w.words[0] for w in x[:7]] == ["SET", "SET", "GET", "DELIFEQ", "PEXPIRE", "DELIFEQ",
                                           "GET"]
    assert_pipelined(x, 0, 6)
    assert [w.words for w in x[7:]] == [["MULTI"], ["SET", "py:t", "1", "PX", "30000"],
                                        ["GET", "py:t"], ["EXEC"]]
    assert [w.reply for w in x[7:]] == [b"+OK\r\n", b"+QUEUED\r\n", b"+QUEUED\r\n",
                                        b"*2\r\n+OK\r\n$1\r\n1\r\n"]
    assert raw.cmd("GET", "py:t") == b"1"


def test_redis_py_lock_class(redis_py, latch, raw, proxy):
    """redis.lock.Lock: acquire is SET NX PX; release, extend and reacquire
    are Lua scripts sent by EVALSHA, which latch runs natively (they are
    among its known scripts)."""
    from redis.exceptions import LockError, LockNotOwnedError
    Lock = redis_py.lock.Lock
    shas = [hashlib.sha1(s.encode()).hexdigest()
            for s in (Lock.LUA_RELEASE_SCRIPT, Lock.LUA_EXTEND_SCRIPT, Lock.LUA_REACQUIRE_SCRIPT)]
    # The scripts are in the cache (a first run of the library would put them
    # there after NOSCRIPT, as with Redis), so the library sends EVALSHA only.
    for s in (Lock.LUA_RELEASE_SCRIPT, Lock.LUA_EXTEND_SCRIPT, Lock.LUA_REACQUIRE_SCRIPT):
        raw.cmd("SCRIPT", "LOAD", s)
    assert raw.cmd("SCRIPT", "EXISTS", *shas) == [1, 1, 1]
    calls_before = int(lt.info_fields(raw.cmd("INFO", "latch"))["known_script_calls"])

    r = redis_py.Redis(host=lt.HOST, port=proxy.port)
    a = r.lock("py:res", timeout=10)
    assert a.acquire(blocking=False) is True
    assert a.locked() and a.owned()
    token = a.local.token
    assert raw.cmd("GET", "py:res") == token
    assert 9000 < raw.cmd("PTTL", "py:res") <= 10000
    b = r.lock("py:res", timeout=10)
    assert b.acquire(blocking=False) is False
    t0 = time.monotonic()
    assert b.acquire(blocking=True, blocking_timeout=0.3) is False
    assert time.monotonic() - t0 >= 0.15  # it kept retrying (every 0.1 s) until the timeout
    assert b.owned() is False
    assert a.extend(5) is True  # adds 5 s to the remaining TTL
    assert 14000 < raw.cmd("PTTL", "py:res") <= 15000
    assert a.extend(3, replace_ttl=True) is True
    assert 2000 < raw.cmd("PTTL", "py:res") <= 3000
    assert a.reacquire() is True  # back to the lock's own timeout
    assert 9000 < raw.cmd("PTTL", "py:res") <= 10000
    a.release()
    assert raw.cmd("EXISTS", "py:res") == 0
    with pytest.raises(LockError):
        a.release()  # no token any more: "Cannot release an unlocked lock"

    # A lock that expired and was taken by someone else is not ours to
    # release or extend: the scripts answer 0, which redis-py raises.
    c = r.lock("py:res", timeout=0.2)
    assert c.acquire(blocking=False) is True
    assert lt.wait_for(lambda: raw.cmd("EXISTS", "py:res") == 0, 3.0)
    d = r.lock("py:res", timeout=10)
    assert d.acquire(blocking=False) is True
    with pytest.raises(LockNotOwnedError):
        c.extend(1)
    with pytest.raises(LockNotOwnedError):
        c.reacquire()
    with pytest.raises(LockNotOwnedError):
        c.release()
    assert raw.cmd("GET", "py:res") == d.local.token
    d.release()
    assert raw.cmd("EXISTS", "py:res") == 0

    # The context-manager form, and a lock timeout above max-lock-ttl.
    with r.lock("py:ctx", timeout=5, blocking_timeout=1):
        assert raw.cmd("EXISTS", "py:ctx") == 1
    assert raw.cmd("EXISTS", "py:ctx") == 0
    with pytest.raises(redis_py.ResponseError, match="exceeds max-lock-ttl"):
        r.lock("py:long", timeout=120).acquire(blocking=False)
    r.connection_pool.disconnect()

    proxy.wait_idle()
    sent = [x for x in proxy.exchanges(0)]
    scripts = [x for x in sent if x.words[0].upper() in ("EVALSHA", "EVAL", "SCRIPT")]
    assert scripts and all(x.words[0] == "EVALSHA" for x in scripts), scripts
    assert {x.words[1] for x in scripts} == set(shas)
    # Every script reply is an integer (1 or 0), never an error.
    assert {x.reply for x in scripts} == {b":1\r\n", b":0\r\n"}
    calls_after = int(lt.info_fields(raw.cmd("INFO", "latch"))["known_script_calls"])
    assert calls_after - calls_before == len(scripts)


# ---------------------------------------------------------------- hiredis


@pytest.fixture(scope="module")
def hiredis_smoke(tmp_path_factory):
    """tests/integration/clients/hiredis_smoke.c, compiled against Debian's
    libhiredis-dev."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        unavailable("no C compiler")
    if not os.path.exists("/usr/include/hiredis/hiredis.h"):
        unavailable("hiredis headers (Debian libhiredis-dev) not installed")
    out = str(tmp_path_factory.mktemp("hiredis") / "hiredis_smoke")
    p = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O1", "-o", out,
                        os.path.join(CLIENTS, "hiredis_smoke.c"), "-lhiredis"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return out


def test_hiredis(hiredis_smoke, latch, raw, proxy):
    p = subprocess.run([hiredis_smoke, str(proxy.port)], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[-1] == "hiredis_smoke: 40 checks passed", p.stdout
    oks = [l for l in lines if l.startswith("ok ")]
    assert len(oks) == 40 and len(set(oks)) == 40
    for name in ("set-nx-px", "set-nx-px-held", "set-ifeq-renew", "delifeq-owner", "digest",
                 "delex-ifdeq", "get-binary", "pipe-delifeq-owner", "pipe-error", "pipe-time",
                 "hello-2", "hello-3-unsupported"):
        assert "ok " + name in oks
    proxy.wait_idle()
    x = proxy.exchanges(0)
    # hiredis sends nothing of its own on connect.
    assert x[0].words == ["PING"] and x[0].reply == b"+PONG\r\n"
    # The ten redisAppendCommand calls went out before their first reply.
    first = next(i for i, e in enumerate(x) if e.words[:3] == ["SET", "hs:p", "p1"])
    assert x[first + 9].words == ["ECHO", "done"]
    assert_pipelined(x, first, first + 9)
    # The HELLO 3 connection got a RESP3 map, which hiredis 0.14 cannot read.
    hello3 = proxy.exchanges(1)
    assert hello3[0].words == ["HELLO", "3"] and hello3[0].reply.startswith(b"%7\r\n")


# ---------------------------------------------------------------- Node.js


@pytest.fixture(scope="module")
def node_clients():
    """The node binary and a folder holding the pinned npm packages and a
    copy of the scripts (nodeclients.py)."""
    return nodeclients.install(unavailable)


def run_node_client(node_clients, which, port):
    node, folder = node_clients
    p = subprocess.run([node, os.path.join(folder, "clients.mjs"), which, str(port)],
                       capture_output=True, text=True, timeout=60, cwd=folder)
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert "fatal" not in out, out["fatal"]
    return out


class Monitor(object):
    """A MONITOR connection: the commands latch executed, as text lines."""

    def __init__(self, port):
        self.conn = lt.Conn(port)
        assert self.conn.cmd("MONITOR") == b"OK"

    def lines_until(self, needle, timeout=10.0):
        lines = []
        deadline = time.monotonic() + timeout
        while not any(needle in l for l in lines):
            line = self.conn.read(timeout=max(0.1, deadline - time.monotonic()))
            lines.append(line.decode("utf-8", "replace"))
        self.conn.close()
        return lines


def expected_recipe(r, digest_of):
    """The values every library must get back for lockRecipe() in clients.mjs."""
    assert r["del_setup"] == 0
    assert r["set_nx_px"] == "OK"
    assert r["set_nx_px_held"] is None
    assert r["get"] == "tok-A"
    assert 0 < r["pttl"] <= 30000
    assert r["set_ifeq_renew"] == "OK"
    assert 30000 < r["pttl_renewed"] <= 50000
    assert r["set_ifeq_not_owner"] is None
    assert r["pexpire"] == 1
    assert 0 < r["pttl_after_pexpire"] <= 20000
    assert r["delifeq_not_owner"] == 0
    assert r["delifeq_owner"] == 1
    assert r["get_released"] is None
    assert r["pttl_missing"] == -2
    assert r["set_px"] == "OK"
    assert r["digest"] == digest_of(b"tok-C")
    assert r["digest_missing"] is None
    assert (r["delex_ifne_same"], r["delex_ifdne_same"], r["delex_ifeq_other"]) == (0, 0, 0)
    assert r["delex_ifeq"] == 1
    assert r["delex_ifdeq"] == 1
    assert r["delex_ifdne_other"] == 1
    assert (r["delex_plain"], r["delex_plain_missing"]) == (1, 0)
    assert r["eval_unknown"] == 1  # any script runs
    assert r["set_over_cap"] == {"error": "ERR TTL 120000 ms exceeds max-lock-ttl (60000 ms)"}


def assert_handshake_replies(x, latch_info_version):
    """HELLO 3 got a RESP3 map naming the protocol; CLIENT SETINFO got OK."""
    hello = x[0]
    assert [w.upper() for w in hello.words] == ["HELLO", "3"]
    assert hello.reply.startswith(b"%7\r\n")
    fields = lt.parse_reply(hello.reply)[0]
    assert fields[b"server"] == b"redis"
    assert fields[b"proto"] == 3
    assert fields[b"version"] == latch_info_version
    assert fields[b"mode"] == b"standalone" and fields[b"role"] == b"master"
    assert x[1].reply == b"+OK\r\n" and x[2].reply == b"+OK\r\n"


def assert_speaks_resp3(x):
    """After HELLO 3, a null is RESP3's '_' and CLIENT INFO a verbatim string."""
    nulls = [e.reply for e in x
             if e.words[0].upper() == "GET" and e.reply in (b"_\r\n", b"$-1\r\n")]
    assert nulls and set(nulls) == {b"_\r\n"}, nulls
    info = [e.reply for e in x if [w.upper() for w in e.words] == ["CLIENT", "INFO"]]
    assert len(info) == 1 and info[0].startswith(b"=") and b"\r\ntxt:id=" in info[0]


def test_ioredis(node_clients, latch, raw, proxy):
    version = lt.info_fields(raw.cmd("INFO", "server"))["redis_version"].encode()
    mon = Monitor(latch.port)
    r = run_node_client(node_clients, "ioredis", proxy.port)
    proxy.wait_idle()
    monitor = mon.lines_until('"quit"')

    assert r["version"] == IOREDIS_VERSION
    assert r["events"] == ["ready"] and r["status_after_connect"] == "ready"
    expected_recipe(r, xxh3_hex)
    assert r["pipeline"] == ["OK", None, "p1", 0, 1, 1, None]
    # A MULTI/EXEC transaction: ioredis gives [error, result] pairs.
    assert r["multi_exec"] == [[None, "OK"], [None, "1"]]
    assert raw.cmd("GET", "io:m") == b"1"
    assert "resp=3 lib-name=ioredis lib-ver=%s\n" % IOREDIS_VERSION in r["client_info"]
    assert "redis_version:%s\r\n" % version.decode() in r["info_server"]
    assert r["quit"] == "OK"

    assert proxy.connections() == 1
    x = proxy.exchanges(0)
    # On connect: HELLO 3 and CLIENT SETINFO x2 (sent without waiting for
    # replies, though not always in one TCP write), then INFO (the ready
    # check, which must succeed: ioredis reads its "loading" field).
    assert [e.words for e in x[:4]] == [
        ["hello", "3"], ["client", "SETINFO", "LIB-VER", IOREDIS_VERSION],
        ["client", "SETINFO", "LIB-NAME", "ioredis"], ["info"]]
    assert_handshake_replies(x, version)
    assert x[3].reply.startswith(b"=") and b"\r\nloading:0\r\n" in x[3].reply
    assert_speaks_resp3(x)
    # Native DELEX and DIGEST methods send the commands as Redis 8.4 spells them.
    assert ["delex", "io:lock", "IFDEQ", r["digest"]] in [e.words for e in x]
    assert ["digest", "io:lock"] in [e.words for e in x]
    # The explicit pipeline went out in one go.
    first = next(i for i, e in enumerate(x) if e.words[:3] == ["set", "io:p", "p1"])
    assert x[first + 6].words == ["get", "io:p"]
    assert_pipelined(x, first, first + 6)
    # The only error replies are the ones the test provoked.
    assert [w[0][0].lower() for w in error_replies(x)] == ["set"]
    # MONITOR shows the handshake as executed, HELLO's protocol included.
    assert any('"hello" "3"' in l for l in monitor), monitor
    assert any('"client" "SETINFO" "LIB-NAME" "ioredis"' in l for l in monitor), monitor


def test_node_redis(node_clients, latch, raw, proxy):
    version = lt.info_fields(raw.cmd("INFO", "server"))["redis_version"].encode()
    mon = Monitor(latch.port)
    r = run_node_client(node_clients, "node-redis", proxy.port)
    proxy.wait_idle()
    monitor = mon.lines_until('"QUIT"')

    assert r["version"] == NODE_REDIS_VERSION and r["client_version"] == NODE_REDIS_VERSION
    assert r["events"] == ["ready"] and r["is_ready"] is True
    expected_recipe(r, xxh3_hex)
    assert r["set_ifdeq"] == "OK" and r["get_after_ifdeq"] == "v2"
    assert r["pipeline"] == ["OK", None, "p1", 0, 1, 1, None]
    assert r["auto_pipeline"] == ["OK", None, "a1", 1, 0]
    assert r["multi_exec"] == ["OK", "1"]  # a MULTI/EXEC transaction
    assert raw.cmd("GET", "nr:m") == b"1"
    # HELLO's map arrives as an object: node-redis speaks RESP3.
    assert r["hello"]["proto"] == 3 and r["hello"]["server"] == "redis"
    assert r["hello"]["version"] == version.decode()
    assert "resp=3 lib-name=node-redis lib-ver=%s\n" % NODE_REDIS_VERSION in r["client_info"]
    assert r["quit"] == "OK"
    assert r["maint_disabled"] == "PONG"
    assert r["maint_enabled"] == {
        "error": "ERR unknown subcommand 'MAINT_NOTIFICATIONS'. Try CLIENT HELP."}

    assert proxy.connections() == 3
    assert [e.words[0] for e in proxy.exchanges(1)] == ["HELLO", "CLIENT", "CLIENT", "PING",
                                                          "QUIT"]
    assert proxy.exchanges(2)[3].words[:2] == ["CLIENT", "MAINT_NOTIFICATIONS"]
    x = proxy.exchanges(0)
    # On connect, without waiting for replies: HELLO 3, CLIENT SETINFO x2 and
    # CLIENT MAINT_NOTIFICATIONS (Redis Enterprise's maintenance push
    # messages; node-redis calls 127.0.0.1 an "external-ip").
    assert [e.words for e in x[:4]] == [
        ["HELLO", "3"], ["CLIENT", "SETINFO", "LIB-VER", NODE_REDIS_VERSION],
        ["CLIENT", "SETINFO", "LIB-NAME", "node-redis"],
        ["CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "external-ip"]]
    assert_handshake_replies(x, version)
    # latch, like Redis 7.0, has no MAINT_NOTIFICATIONS; node-redis's default
    # ('auto') ignores the error. Only maintNotifications: 'enabled' needs it.
    assert x[3].reply == b"-ERR unknown subcommand 'MAINT_NOTIFICATIONS'. Try CLIENT HELP.\r\n"
    assert_speaks_resp3(x)
    assert ["DELEX", "nr:lock", "IFDEQ", r["digest"]] in [e.words for e in x]
    assert ["SET", "nr:lock", "tok-A", "PX", "50000", "IFEQ", "tok-A"] in [e.words for e in x]
    # execAsPipeline: seven commands out before the first reply; the same
    # for five commands issued in one tick (implicit pipelining).
    first = next(i for i, e in enumerate(x) if e.words[:3] == ["SET", "nr:p", "p1"])
    assert x[first + 6].words == ["GET", "nr:p"]
    assert_pipelined(x, first, first + 6)
    first = next(i for i, e in enumerate(x) if e.words[:3] == ["SET", "nr:a", "a1"])
    assert x[first + 4].words == ["EXISTS", "nr:a"]
    assert_pipelined(x, first, first + 4)
    assert [w[0][:2] for w in error_replies(x)] == [
        ["CLIENT", "MAINT_NOTIFICATIONS"], ["SET", "nr:lock"]]
    assert any('"HELLO" "3"' in l for l in monitor), monitor


def test_node_redis_maint_notifications_as_redis(server_factory):
    """The reply node-redis gets to CLIENT MAINT_NOTIFICATIONS is Redis 7.0's."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    redis = server_factory("redis")
    srv = server_factory("latch")
    argv = ("CLIENT", "MAINT_NOTIFICATIONS", "ON", "moving-endpoint-type", "external-ip")
    assert lt.send_both(srv.port, redis.port, lt.encode(*argv)) == (
        b"-ERR unknown subcommand 'MAINT_NOTIFICATIONS'. Try CLIENT HELP.\r\n",) * 2


def test_monitor_shows_hello_protocol_as_redis(server_factory):
    """Clients' HELLO appears in MONITOR as in Redis 7.0: the protocol
    version and SETNAME shown, only the AUTH user and password redacted."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    redis = server_factory("redis")
    srv = server_factory("latch")
    requests = [("HELLO", "3"), ("HELLO", "2", "SETNAME", "w1", "AUTH", "default", "pw"),
                ("hello", "3", "auth", "default", "pw", "setname", "w2"), ("AUTH", "pw")]
    shown = []
    for port in (srv.port, redis.port):
        mon = Monitor(port)
        with lt.Conn(port) as c:
            for argv in requests:
                c.cmd(*argv)
            c.cmd("PING", "end")
        lines = mon.lines_until('"end"')
        shown.append([l.split("] ", 1)[1] for l in lines])
    assert shown[0] == shown[1]
    assert shown[0][:3] == ['"HELLO" "3"',
                            '"HELLO" "2" "SETNAME" "w1" "AUTH" "(redacted)" "(redacted)"',
                            '"hello" "3" "auth" "(redacted)" "(redacted)" "setname" "w2"']


# ---------------------------------------------------------------- fencing tokens


def expected_fenced_grants(r):
    """The values SETFENCE gives every library (fencedGrants in clients.mjs):
    the token as an integer, null when not granted, the holder's own token on
    a renewal, a larger one for the next holder, MIN's floor. (The module's
    server is shared: the counter may be past the floor already.)"""
    token = r["fence_grant"]
    assert isinstance(token, int) and token > 0, r
    assert r["fence_held"] is None
    assert r["fence_renew"] == token
    assert r["fence_of_key"] == token
    assert r["fence_release"] == 1
    assert isinstance(r["fence_next"], int) and r["fence_next"] > token
    # MIN is a floor: a renewal keeps the holder's token if it is already there.
    assert r["fence_min"] == max(r["fence_next"], 1000000)
    assert r["fence_bad"] == {"error": "ERR syntax error"}


def test_fenced_grant_from_redis_py(redis_py, latch, raw):
    """redis-py's SET callback compares the reply with "OK": a granted
    SET … FENCE comes back as False and its token is lost. SETFENCE, a
    command redis-py has no callback for, returns the token unchanged."""
    r = redis_py.Redis(host=lt.HOST, port=latch.port)
    # The problem: granted (the key is set), yet False, and no token.
    assert r.execute_command("SET", "py:fence:set", "tok-A", "NX", "PX", 30000, "FENCE") is False
    assert r.get("py:fence:set") == b"tok-A"
    # The spelling that works, unchanged redis-py.
    token = r.execute_command("SETFENCE", "py:fence", "tok-A", "NX", "PX", 30000)
    assert isinstance(token, int) and token > 0
    assert r.execute_command("SETFENCE", "py:fence", "tok-B", "NX", "PX", 30000) is None
    assert r.execute_command("SETFENCE", "py:fence", "tok-A", "IFEQ", "tok-A", "PX", 30000) == token
    assert r.execute_command("FENCE", "py:fence") == token
    assert r.execute_command("DELIFEQ", "py:fence", "tok-A") == 1
    nxt = r.execute_command("SETFENCE", "py:fence", "tok-B", "NX", "PX", 30000)
    assert isinstance(nxt, int) and nxt > token
    # In a pipeline too.
    p = r.pipeline(transaction=False)
    p.execute_command("SETFENCE", "py:fence:p", "x", "NX", "PX", 30000)
    p.execute_command("SETFENCE", "py:fence:p", "y", "NX", "PX", 30000)
    got = p.execute()
    assert isinstance(got[0], int) and got[0] > nxt and got[1] is None
    r.connection_pool.disconnect()


@pytest.mark.parametrize("which", ["ioredis-fence", "node-redis-fence"])
def test_fenced_grant_from_node_clients(node_clients, latch, raw, which):
    expected_fenced_grants(run_node_client(node_clients, which, latch.port))
