"""Malformed and hostile input: every protocol error gets Redis's exact error
reply, then the server closes that connection, and other clients are not
disturbed. Also: requests cut into 1-byte sends, a huge pipeline in one
send, and clients that vanish mid-request.
"""

import socket
import threading
import time

import pytest

import latchtest as lt
from latchtest import encode

E_MBULK = b"-ERR Protocol error: invalid multibulk length\r\n"
E_BULK = b"-ERR Protocol error: invalid bulk length\r\n"
E_QUOTES = b"-ERR Protocol error: unbalanced quotes in request\r\n"
E_INLINE = b"-ERR Protocol error: too big inline request\r\n"
E_MBULK_STR = b"-ERR Protocol error: too big mbulk count string\r\n"
E_BULK_STR = b"-ERR Protocol error: too big bulk count string\r\n"


def expected_dollar(ch):
    return b"-ERR Protocol error: expected '$', got '" + ch + b"'\r\n"


# (input, everything the server must send before closing)
PROTOCOL_ERRORS = [
    ("mbulk_not_a_number", b"*abc\r\n", E_MBULK),
    ("mbulk_empty", b"*\r\n", E_MBULK),
    ("mbulk_leading_zero", b"*01\r\n", E_MBULK),
    ("mbulk_space", b"* 1\r\n", E_MBULK),
    ("mbulk_trailing_space", b"*1 \r\n", E_MBULK),
    ("mbulk_over_int_max", b"*3000000000\r\n", E_MBULK),
    ("mbulk_huge", b"*99999999999999999999\r\n", E_MBULK),
    ("bulk_not_a_number", b"*1\r\n$abc\r\n", E_BULK),
    ("bulk_empty", b"*1\r\n$\r\n", E_BULK),
    ("bulk_leading_zero", b"*1\r\n$01\r\n", E_BULK),
    ("bulk_negative_one", b"*1\r\n$-1\r\n", E_BULK),
    ("bulk_negative", b"*1\r\n$-2\r\n", E_BULK),
    ("bulk_over_default_max", b"*1\r\n$536870913\r\n", E_BULK),
    ("bulk_over_4g", b"*1\r\n$5000000000\r\n", E_BULK),
    ("expected_dollar_word", b"*1\r\nfoo\r\n", expected_dollar(b"f")),
    ("expected_dollar_int", b"*2\r\n$4\r\nPING\r\n:1\r\n", expected_dollar(b":")),
    # the CR in the echoed byte becomes a space: error lines never hold CR/LF
    ("expected_dollar_empty_line", b"*1\r\n\r\n", expected_dollar(b" ")),
    ("expected_dollar_star", b"*2\r\n*1\r\n", expected_dollar(b"*")),
    ("unbalanced_double", b'ECHO "abc\r\n', E_QUOTES),
    ("unbalanced_single", b"ECHO 'abc\r\n", E_QUOTES),
    ("quote_then_char_double", b'ECHO "a"b\r\n', E_QUOTES),
    ("quote_then_char_single", b"ECHO 'a'b\r\n", E_QUOTES),
    ("too_big_inline", b"A" * 70000, E_INLINE),
    ("too_big_inline_spaces", b"SET k " + b"v" * 66000, E_INLINE),
    ("too_big_mbulk_count", b"*" + b"1" * 70000, E_MBULK_STR),
    ("too_big_bulk_count", b"*1\r\n$" + b"1" * 70000, E_BULK_STR),
    # errors after good requests: the good ones are answered first
    ("after_good_request", encode("PING") + b"*1\r\n$abc\r\n", b"+PONG\r\n" + E_BULK),
    ("after_good_pipeline", encode("SET", "k", "v") + encode("GET", "k") + b"*x\r\n",
     b"+OK\r\n$1\r\nv\r\n" + E_MBULK),
    ("inline_then_bad", b"PING\r\nECHO \"x\r\n", b"+PONG\r\n" + E_QUOTES),
    # and nothing after the error is executed
    ("nothing_after_error", b"*1\r\n$x\r\n" + encode("SET", "after", "1"), E_BULK),
]


def _ids(cases):
    return [c[0] for c in cases]


@pytest.fixture(scope="module")
def latch_server(tmp_path_factory):
    srv = lt.start_latch(str(tmp_path_factory.mktemp("latch")), *lt.FRESH_ARGS)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    srv = lt.start_redis(str(tmp_path_factory.mktemp("redis")))
    yield srv
    srv.stop()


def _abuse(port, data):
    with lt.Conn(port, timeout=5) as c:
        c.send(data)
        return c.read_until_close(5)


@pytest.mark.parametrize("name,data,expected", PROTOCOL_ERRORS, ids=_ids(PROTOCOL_ERRORS))
def test_protocol_error_reply_then_close(latch_server, name, data, expected):
    bystander = latch_server.conn()
    try:
        assert bystander.cmd("PING") == b"PONG"
        # read_until_close returns only once the server closed the socket
        assert _abuse(latch_server.port, data) == expected
        # the other client never noticed
        assert bystander.cmd("SET", "bystander", name) == b"OK"
        assert bystander.cmd("GET", "bystander") == name.encode()
        assert bystander.cmd("EXISTS", "after") == 0
    finally:
        bystander.close()


@pytest.mark.parametrize("name,data,expected", PROTOCOL_ERRORS, ids=_ids(PROTOCOL_ERRORS))
def test_protocol_error_matches_redis(latch_server, redis_server, name, data, expected):
    got = _abuse(latch_server.port, data)
    want = _abuse(redis_server.port, data)
    assert got == want


def test_incomplete_requests_wait_for_more(latch_server, redis_server):
    """A length at exactly the limit, or a request cut short, is not an error:
    both servers keep waiting for the rest."""
    conns = []
    try:
        for data in (b"*1\r\n$536870912\r\n", b"*2\r\n$3\r\nGET\r\n", b"*1\r\n$4\r\nPI",
                     b"A" * 60000, b"*1\r", b"*1\r\n$4\r"):
            for srv in (latch_server, redis_server):
                c = lt.Conn(srv.port, timeout=5)
                conns.append((srv.name, data, c))
                c.send(data)
        time.sleep(0.3)
        for name, data, c in conns:
            # nothing sent back, and still open
            c.sock.settimeout(0.02)
            with pytest.raises(socket.timeout):
                got = c.sock.recv(100)
                pytest.fail("%s answered %r to %r" % (name, got, data[:40]))
    finally:
        for _, _, c in conns:
            c.close()
    # finishing a cut request works
    with latch_server.conn() as c:
        c.send(b"*1\r\n$4\r\nPI")
        time.sleep(0.05)
        c.send(b"NG\r\n")
        assert c.read_raw() == b"+PONG\r\n"


def test_long_inline_with_newline_is_accepted(latch_server):
    with latch_server.conn() as c:
        c.send(b"ECHO " + b"x" * 60000 + b"\r\n")
        assert c.read() == b"x" * 60000


@pytest.fixture(scope="module")
def small_bulk_servers(tmp_path_factory):
    latch = lt.start_latch(str(tmp_path_factory.mktemp("latch1mb")), *lt.FRESH_ARGS,
                           "--proto-max-bulk-len", "1mb")
    redis = lt.start_redis(str(tmp_path_factory.mktemp("redis1mb")), "--proto-max-bulk-len", "1mb")
    yield latch, redis
    latch.stop()
    redis.stop()


def test_bulk_over_configured_proto_max_bulk_len(small_bulk_servers):
    latch, redis = small_bulk_servers
    with latch.conn() as c:
        assert c.cmd("CONFIG", "GET", "proto-max-bulk-len") == [b"proto-max-bulk-len", b"1048576"]
    for data in (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n", b"*1\r\n$2000000\r\n"):
        got = _abuse(latch.port, data)
        assert got == E_BULK
        assert got == _abuse(redis.port, data)
    # exactly the limit is fine, value intact
    value = bytes(range(256)) * 4096
    assert len(value) == 1048576
    with latch.conn() as c:
        assert c.raw("SET", "big", value) == b"+OK\r\n"
        assert c.cmd("GET", "big") == value


def test_proto_max_bulk_len_changed_at_runtime(server_factory):
    latch = server_factory("latch")
    with latch.conn() as c:
        assert c.cmd("CONFIG", "SET", "proto-max-bulk-len", "1mb") == b"OK"
    assert _abuse(latch.port, b"*1\r\n$1048577\r\n") == E_BULK
    with latch.conn() as c:
        assert c.cmd("CONFIG", "SET", "proto-max-bulk-len", "2mb") == b"OK"
        assert c.raw("SET", "k", "x" * 1048577) == b"+OK\r\n"


@pytest.fixture(scope="module")
def password_servers(tmp_path_factory):
    latch = lt.start_latch(str(tmp_path_factory.mktemp("latchpw")), *lt.FRESH_ARGS,
                           "--requirepass", "s3cret")
    redis = lt.start_redis(str(tmp_path_factory.mktemp("redispw")), "--requirepass", "s3cret")
    yield latch, redis
    latch.stop()
    redis.stop()


UNAUTH_CASES = [
    ("11_elements", b"*11\r\n", b"-ERR Protocol error: unauthenticated multibulk length\r\n"),
    ("bulk_16k_plus_1", b"*1\r\n$16385\r\n", b"-ERR Protocol error: unauthenticated bulk length\r\n"),
    ("bulk_in_pair", b"*2\r\n$4\r\nAUTH\r\n$17000\r\n",
     b"-ERR Protocol error: unauthenticated bulk length\r\n"),
]


@pytest.mark.parametrize("name,data,expected", UNAUTH_CASES, ids=_ids(UNAUTH_CASES))
def test_unauthenticated_request_limits(password_servers, name, data, expected):
    """Before AUTH only small requests are accepted (10 elements, 16 KiB
    bulks). Redis 7.0's words are "unauthenticated multibulk/bulk length"."""
    latch, redis = password_servers
    got = _abuse(latch.port, data)
    assert got == _abuse(redis.port, data)
    assert got == expected


def test_unauthenticated_limits_lift_after_auth(password_servers):
    latch, redis = password_servers
    for srv in (latch, redis):
        with srv.conn() as c:
            # within the limits, before AUTH: a normal NOAUTH error, connection stays
            assert c.raw("SET", "k", "x" * 16384) == b"-NOAUTH Authentication required.\r\n"
            assert c.raw(*(["EXISTS"] + ["k"] * 9)) == b"-NOAUTH Authentication required.\r\n"
            assert c.raw("AUTH", "s3cret") == b"+OK\r\n"
            assert c.raw(*(["EXISTS"] + ["k"] * 20)) == b":0\r\n"
            assert c.raw("SET", "k", "x" * 20000) == b"+OK\r\n"


def test_max_clients(server_factory):
    latch = server_factory("latch", "--maxclients", "2")
    redis = server_factory("redis", "--maxclients", "2")
    for srv in (latch, redis):
        a, b = srv.conn(), srv.conn()
        try:
            assert a.cmd("PING") == b"PONG" and b.cmd("PING") == b"PONG"
            with srv.conn() as c:
                assert c.read_until_close(5) == b"-ERR max number of clients reached\r\n"
            assert a.cmd("PING") == b"PONG"
            b.close()
            # a slot is free again once b is gone
            ok = lt.wait_for(lambda: _try_ping(srv.port), 3)
            assert ok, srv.name
        finally:
            a.close()
            b.close()


def _try_ping(port):
    try:
        with lt.Conn(port, timeout=2) as c:
            return c.cmd("PING") == b"PONG"
    except (ConnectionError, OSError, TimeoutError):
        return False


# ---------------------------------------------------------------- fragmentation and pipelines


def test_one_byte_per_send(latch_server):
    """Every possible split point, including inside "\\r\\n", must resume."""
    stream = (encode("SET", "frag", b"a\r\nb") + encode("GET", "frag") + b"PING\r\n"
              + encode("DEL", "frag") + b"ECHO \"x y\"\n" + encode("PING", "z"))
    expected = b"+OK\r\n$4\r\na\r\nb\r\n+PONG\r\n:1\r\n$3\r\nx y\r\n$1\r\nz\r\n"
    with latch_server.conn() as c:
        for i in range(len(stream)):
            c.send(stream[i:i + 1])
            if i % 3 == 0:
                time.sleep(0.001)  # let each piece arrive on its own
        assert c.read_n_raw(6) == expected


def test_split_at_every_offset(latch_server):
    """A request sent in two pieces, for every possible cut."""
    req = encode("SET", "cut", "v\r\n", "PX", "30000") + encode("GET", "cut")
    with latch_server.conn() as c:
        for cut in range(1, len(req)):
            c.send(req[:cut])
            time.sleep(0.0005)
            c.send(req[cut:])
            assert c.read_n_raw(2) == b"+OK\r\n$3\r\nv\r\n\r\n", cut


def test_huge_pipeline_in_one_send(latch_server):
    """50,000 requests in one send, while replies are read concurrently: the
    server must neither drop nor reorder anything."""
    n = 25000
    parts = []
    for i in range(n):
        parts.append(encode("SET", "p:%d" % i, "v%d" % i))
        parts.append(encode("GET", "p:%d" % i))
    data = b"".join(parts)
    with latch_server.conn(timeout=60) as c:
        sender = threading.Thread(target=c.sock.sendall, args=(data,))
        sender.start()
        raw = c.read_n_raw(2 * n, timeout=60)
        sender.join()
        replies = lt.split_replies(raw)
        assert len(replies) == 2 * n
        for i in range(0, n, 1):
            assert replies[2 * i] == b"+OK\r\n"
            v = b"v%d" % i
            assert replies[2 * i + 1] == b"$%d\r\n%s\r\n" % (len(v), v)
        assert c.cmd("EXISTS", "p:0", "p:%d" % (n - 1)) == 2
        c.cmd("FLUSHALL")


def test_pipeline_client_that_never_reads(latch_server):
    """A client that pipelines a lot and never reads its replies must not stop
    the server from serving others."""
    hog = socket.create_connection((lt.HOST, latch_server.port))
    hog.setblocking(False)
    chunk = encode("ECHO", "x" * 1000) * 200
    sent = 0
    deadline = time.monotonic() + 2
    try:
        while time.monotonic() < deadline and sent < 50 * 1024 * 1024:
            try:
                sent += hog.send(chunk)
            except BlockingIOError:
                break
        with latch_server.conn() as c:
            t0 = time.monotonic()
            for _ in range(20):
                assert c.cmd("PING") == b"PONG"
            assert time.monotonic() - t0 < 2
    finally:
        hog.close()
    with latch_server.conn() as c:
        assert c.cmd("PING") == b"PONG"


# ---------------------------------------------------------------- vanishing clients


def test_disconnect_mid_request_does_not_disturb_others(latch_server):
    other = latch_server.conn()
    try:
        assert other.cmd("SET", "stable", "1") == b"OK"
        partials = [
            b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$100\r\nabc",
            b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n",
            b"*3\r\n$3\r\nSE",
            b"*3\r",
            b"SET half inline-no-newline",
        ]
        for data in partials:
            s = socket.create_connection((lt.HOST, latch_server.port))
            s.sendall(data)
            time.sleep(0.02)
            s.close()
            assert other.cmd("GET", "stable") == b"1"
        # a reset (RST) instead of a FIN
        s = socket.create_connection((lt.HOST, latch_server.port))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.sendall(b"*2\r\n$3\r\nGET\r\n$6\r\nsta")
        s.close()
        # and a client that leaves with a large reply still being written
        s = socket.create_connection((lt.HOST, latch_server.port))
        s.sendall(encode("SET", "big", "x" * 2000000) + encode("GET", "big") * 20)
        time.sleep(0.05)
        s.close()
        assert other.cmd("EXISTS", "half") == 0
        assert other.cmd("GET", "stable") == b"1"
        assert other.cmd("DEL", "big") == 1
        assert other.cmd("PING") == b"PONG"
    finally:
        other.close()
    assert latch_server.alive(), latch_server.log_text()


def test_abuse_while_another_client_works(latch_server):
    """A steady client keeps getting correct answers while other connections
    send garbage, cut requests and protocol errors in parallel."""
    stop = threading.Event()
    errors = []

    def worker():
        try:
            with latch_server.conn() as c:
                i = 0
                while not stop.is_set():
                    assert c.cmd("SET", "w", str(i)) == b"OK"
                    assert c.cmd("GET", "w") == str(i).encode()
                    i += 1
        except Exception as e:  # reported below
            errors.append(e)

    t = threading.Thread(target=worker)
    t.start()
    try:
        for _ in range(3):
            for _, data, expected in PROTOCOL_ERRORS[:22]:
                assert _abuse(latch_server.port, data) == expected
    finally:
        stop.set()
        t.join(10)
    assert not errors, errors
    assert latch_server.alive()


def test_quit_closes_after_reply(latch_server):
    with latch_server.conn() as c:
        c.send(encode("QUIT") + encode("SET", "afterquit", "1"))
        assert c.read_until_close(5) == b"+OK\r\n"
    with latch_server.conn() as c:
        assert c.cmd("EXISTS", "afterquit") == 0
