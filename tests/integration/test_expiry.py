"""Expiry: keys with a TTL disappear by themselves (active expiry, run by the
server's cron at hz 10) and are never visible once expired (lazy expiry).
No test here touches an expiring key while waiting for the active cycle:
only DBSIZE and INFO, which do not look keys up.
"""

import time

import pytest

import latchtest as lt
from latchtest import encode


@pytest.fixture
def server(server_factory):
    return server_factory("latch")


def stats(conn):
    return lt.info_fields(conn.cmd("INFO", "stats"))


def keyspace_line(conn):
    text = conn.cmd("INFO", "keyspace").decode()
    assert text.startswith("# Keyspace\r\n")
    return [l for l in text.split("\r\n") if l.startswith("db0:")]


def test_single_key_expires_without_being_touched(server):
    with server.conn() as c:
        assert c.cmd("CONFIG", "GET", "hz") == [b"hz", b"10"]
        before = int(stats(c)["expired_keys"])
        t0 = time.monotonic()
        assert c.raw("SET", "k", "v", "PX", "100") == b"+OK\r\n"
        assert c.cmd("DBSIZE") == 1
        line = keyspace_line(c)
        assert len(line) == 1 and line[0].startswith("db0:keys=1,expires=1,"), line
        gone = lt.wait_for(lambda: c.cmd("DBSIZE") == 0 and keyspace_line(c) == [], 1.5,
                           interval=0.01)
        elapsed = time.monotonic() - t0
        assert gone, "DBSIZE still %r after %.2fs" % (c.cmd("DBSIZE"), elapsed)
        # not before the TTL, and within ~1 s of it
        assert 0.1 <= elapsed < 1.1, elapsed
        assert int(stats(c)["expired_keys"]) == before + 1


def test_expired_key_is_invisible_before_the_cycle_runs(server):
    """With the cron at 1 Hz, a key 150 ms past its TTL is still in memory,
    but no command may see it."""
    with server.conn() as c:
        assert c.cmd("CONFIG", "SET", "hz", "1") == b"OK"
        try:
            for key in ("a", "b", "c", "d", "e", "f", "g"):
                assert c.raw("SET", key, "v", "PX", "100") == b"+OK\r\n"
            time.sleep(0.15)
            assert c.raw("GET", "a") == b"$-1\r\n"
            assert c.raw("EXISTS", "b", "b") == b":0\r\n"
            assert c.raw("TTL", "c") == b":-2\r\n"
            assert c.raw("PTTL", "d") == b":-2\r\n"
            assert c.raw("SET", "e", "new", "NX") == b"+OK\r\n"
            assert c.raw("SET", "f", "new", "XX") == b"$-1\r\n"
            assert c.raw("DELIFEQ", "g", "v") == b":0\r\n"
            assert c.raw("DEL", "a", "b", "c", "d", "f", "g") == b":0\r\n"
            assert c.cmd("GET", "e") == b"new"
        finally:
            c.cmd("CONFIG", "SET", "hz", "10")


def test_get_after_ttl_returns_nil(server):
    with server.conn() as c:
        assert c.raw("SET", "k", "v", "PX", "100") == b"+OK\r\n"
        assert c.raw("GET", "k") == b"$1\r\nv\r\n"
        time.sleep(0.15)
        assert c.raw("GET", "k") == b"$-1\r\n"
        assert c.raw("SET", "k", "v", "EX", "1") == b"+OK\r\n"
        assert c.cmd("TTL", "k") == 1
        c.cmd("HELLO", "3")
        assert c.raw("PEXPIRE", "k", "50") == b":1\r\n"
        time.sleep(0.08)
        assert c.raw("GET", "k") == b"_\r\n"


def test_many_keys_reclaimed_without_clients(server):
    """20,000 keys with PX 50 are all reclaimed by the active cycle within a
    few seconds; keys without a TTL stay."""
    n = 20000
    with server.conn(timeout=30) as c:
        before = int(stats(c)["expired_keys"])
        c.send(b"".join(encode("SET", "keep:%d" % i, "v") for i in range(100)))
        assert c.read_n_raw(100) == b"+OK\r\n" * 100
        data = b"".join(encode("SET", "tmp:%d" % i, "v", "PX", "50") for i in range(n))
        c.send(data)
        assert c.read_n_raw(n) == b"+OK\r\n" * n
        t0 = time.monotonic()
        done = lt.wait_for(lambda: c.cmd("DBSIZE") == 100, 5, interval=0.05)
        elapsed = time.monotonic() - t0
        assert done, "DBSIZE %r after %.1fs" % (c.cmd("DBSIZE"), elapsed)
        assert int(stats(c)["expired_keys"]) - before == n
        assert keyspace_line(c) == ["db0:keys=100,expires=0,avg_ttl=0"]
        assert c.cmd("EXISTS", "keep:0", "keep:99", "tmp:0", "tmp:19999") == 2
        assert c.cmd("FLUSHALL") == b"OK"
        assert c.cmd("DBSIZE") == 0


def test_the_cycle_reclaims_keys_in_every_database(server):
    """Keys with a short TTL in databases 0, 7 and 15 all go without being
    touched; the cycle visits every database, not just the selected one."""
    with server.conn(timeout=30) as c:
        before = int(stats(c)["expired_keys"])
        for db in (0, 7, 15):
            c.cmd("SELECT", db)
            c.send(b"".join(encode("SET", "tmp:%d" % i, "v", "PX", "50") for i in range(2000)))
            assert c.read_n_raw(2000) == b"+OK\r\n" * 2000
            c.cmd("SET", "keep", "v")
        c.cmd("SELECT", 3)  # the connection waits in a database without keys

        def rows():
            text = c.cmd("INFO", "keyspace").decode()
            return [l for l in text.split("\r\n") if l.startswith("db")]

        assert lt.wait_for(lambda: int(stats(c)["expired_keys"]) - before == 6000, 5,
                           interval=0.05), rows()
        assert rows() == ["db%d:keys=1,expires=0,avg_ttl=0" % db for db in (0, 7, 15)]


@pytest.mark.parametrize("kind", ["latch", "redis"])
def test_expired_keys_reclaimed_among_long_ttl_keys(server_factory, kind):
    """Short-lived keys are reclaimed promptly even when many long-lived keys
    (held locks) also have a TTL. redis-server runs the same test as the
    reference: its cycle walks every key with a TTL, so it leaves no
    stragglers behind."""
    srv = server_factory(kind)
    n, held = 20000, 500
    with srv.conn(timeout=30) as c:
        c.send(b"".join(encode("SET", "held:%d" % i, "v", "PX", "50000") for i in range(held)))
        assert c.read_n_raw(held) == b"+OK\r\n" * held
        c.send(b"".join(encode("SET", "tmp:%d" % i, "v", "PX", "50") for i in range(n)))
        assert c.read_n_raw(n) == b"+OK\r\n" * n
        t0 = time.monotonic()
        done = lt.wait_for(lambda: c.cmd("DBSIZE") == held, 3, interval=0.05)
        assert done, "%s: DBSIZE still %r after %.1fs (expected %d)" % (
            kind, c.cmd("DBSIZE"), time.monotonic() - t0, held)
        assert int(stats(c)["expired_keys"]) == n


def test_expire_and_persist_change_what_the_cycle_removes(server):
    with server.conn() as c:
        c.send(b"".join(encode("SET", "k%d" % i, "v") for i in range(100)))
        c.read_n_raw(100)
        # give half of them a short TTL, then take it back from a quarter
        c.send(b"".join(encode("PEXPIRE", "k%d" % i, "100") for i in range(50)))
        assert c.read_n_raw(50) == b":1\r\n" * 50
        c.send(b"".join(encode("PERSIST", "k%d" % i) for i in range(25)))
        assert c.read_n_raw(25) == b":1\r\n" * 25
        assert lt.wait_for(lambda: c.cmd("DBSIZE") == 75, 2), c.cmd("DBSIZE")
        time.sleep(0.3)
        assert c.cmd("DBSIZE") == 75
        assert c.cmd("EXISTS", *["k%d" % i for i in range(25)]) == 25
        assert c.cmd("EXISTS", *["k%d" % i for i in range(25, 50)]) == 0


def test_lock_expires_and_can_be_reacquired(server):
    """The reason a lock has a TTL: a holder that dies frees it by itself."""
    with server.conn() as a, server.conn() as b:
        assert a.raw("SET", "lock", "A", "NX", "PX", "150") == b"+OK\r\n"
        assert b.raw("SET", "lock", "B", "NX", "PX", "150") == b"$-1\r\n"
        # A "dies" (stops renewing); B keeps trying
        t0 = time.monotonic()
        got = lt.wait_for(lambda: b.raw("SET", "lock", "B", "NX", "PX", "5000") == b"+OK\r\n",
                          2, interval=0.01)
        assert got
        assert time.monotonic() - t0 >= 0.1
        # A's late release must not free B's lock
        assert a.raw("DELIFEQ", "lock", "A") == b":0\r\n"
        assert b.cmd("GET", "lock") == b"B"
