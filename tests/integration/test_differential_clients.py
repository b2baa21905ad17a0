"""Differential family: CLIENT — SETNAME/GETNAME, LIST and INFO, SETINFO,
REPLY OFF/ON/SKIP, KILL and its filters — against redis-server 7.0 in RESP2
and RESP3 (differential.py). CLIENT LIST differs on purpose in some fields:
those are asserted as documented."""

import time

import pytest

import latchtest as lt
from latchtest import encode

from differential import PROTOS, check_script, switch_proto


SCRIPTS = {
    "client_name": [
        ("CLIENT", "GETNAME"),
        ("CLIENT", "SETNAME"),
        ("CLIENT", "SETNAME", "a", "b"),
        ("CLIENT", "SETNAME", "a b"),
        ("CLIENT", "SETNAME", "a\nb"),
        ("CLIENT", "SETNAME", "caf\xe9"),
        ("CLIENT", "GETNAME"),
        ("CLIENT", "SETNAME", "myname"),
        ("CLIENT", "GETNAME"),
        ("CLIENT", "GETNAME", "x"),
        ("CLIENT", "SETNAME", "bad name"),
        ("CLIENT", "GETNAME"),
        ("CLIENT", "SETNAME", ""),
        ("CLIENT", "GETNAME"),
        ("CLIENT", "setname", "lower"),
        ("client", "getname"),
        ("CLIENT", "ID", "x"),
        ("CLIENT", "INFO", "x"),
        ("CLIENT", "NO-EVICT", "maybe"),
        ("CLIENT", "NO-EVICT", "on"),
        ("CLIENT", "NO-EVICT", "OFF"),
        ("CLIENT", "KILL"),
        ("CLIENT", "KILL", "1.2.3.4:5"),
        ("CLIENT", "KILL", "a\r\nb"),
        ("CLIENT", "KILL", "ID", "abc"),
        ("CLIENT", "KILL", "ID", "0"),
        ("CLIENT", "KILL", "ID"),
        ("CLIENT", "KILL", "FOO", "bar"),
        ("CLIENT", "KILL", "ID", "999999", "SKIPME", "maybe"),
        ("CLIENT", "KILL", "ID", "999999"),
        ("CLIENT", "LIST", "TYPE", "foo"),
        ("CLIENT", "LIST", "TYPE", "a\r\nb"),
        ("CLIENT", "LIST", "ID", "abc"),
        ("CLIENT", "LIST", "FOO"),
        ("CLIENT", "LIST", "TYPE", "pubsub"),
    ],
    "client_kill_filters": [
        ("CLIENT", "KILL", "ID", "abc"),
        ("CLIENT", "KILL", "ID", "abc", "SKIPME"),
        ("CLIENT", "KILL", "ID", "5", "SKIPME"),
        ("CLIENT", "KILL", "ID", "-5"),
        ("CLIENT", "KILL", "ID", "0"),
        ("CLIENT", "KILL", "ID", "99999999999999999999"),
        ("CLIENT", "KILL", "ID", "999999"),
        ("CLIENT", "KILL", "USER", "nobody"),
        ("CLIENT", "KILL", "USER", b"default\x00"),
        ("CLIENT", "KILL", "USER", "default", "ID", "999999"),
        ("CLIENT", "KILL", "USER", "default", "SKIPME", "yes", "ID", "999999"),
        ("CLIENT", "KILL", "TYPE", "normal", "ID", "999999"),
        ("CLIENT", "KILL", "TYPE", "master"),
        ("CLIENT", "KILL", "TYPE", "replica"),
        ("CLIENT", "KILL", "TYPE", "slave"),
        ("CLIENT", "KILL", "TYPE", "pubsub"),
        ("CLIENT", "KILL", "TYPE", "PubSub", "SKIPME", "no"),
        ("CLIENT", "KILL", "TYPE", "wrong_type"),
        ("CLIENT", "KILL", "TYPE", b"wrong\x00type"),
        ("CLIENT", "KILL", "TYPE", b"normal\x00x", "ID", "999999"),
        ("CLIENT", "KILL", b"type\x00", "normal", "ID", "999999"),
        ("CLIENT", "KILL", "TYPE", "wrong_type", "ID", "abc"),
        ("CLIENT", "KILL", "ID", "abc", "TYPE", "wrong_type"),
        ("CLIENT", "KILL", "ADDR", "1.2.3.4:5"),
        ("CLIENT", "KILL", "LADDR", "1.2.3.4:5", "SKIPME", "no"),
        ("CLIENT", "KILL", "SKIPME", "no", "ID", "999999"),
        ("CLIENT", "KILL", "SKIPME", "maybe"),
        ("CLIENT", "KILL", "SKIPME", b"no\x00x", "ID", "999999"),
        ("CLIENT", "KILL", "1.2.3.4:5"),
        ("CLIENT", "KILL", "a", "b", "c"),
        ("CLIENT", "KILL", "ID", "1", "FOO"),
        ("CLIENT", "KILL", "FOO", "bar", "ID", "abc"),
        ("CLIENT", "LIST", "TYPE", "wrong_type"),
        ("CLIENT", "LIST", "TYPE", b"wrong\x00type"),
        ("CLIENT", "LIST", "TYPE", "master"),
        ("CLIENT", "REPLY", "foo"),
        ("CLIENT", "REPLY", b"on\x00x"),
        ("CLIENT", "REPLY", "On"),
        ("CLIENT", "NO-EVICT", b"on\x00x"),
    ],
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


def test_client_list_and_info(pair):
    c = pair.latch
    my_id = c.cmd("CLIENT", "ID")
    assert c.cmd("CLIENT", "SETNAME", "lister") == b"OK"
    other = lt.Conn(c.port)
    try:
        other_id = other.cmd("CLIENT", "ID")
        listing = c.cmd("CLIENT", "LIST").decode()
        lines = [l for l in listing.split("\n") if l]
        ids = [int(l.split(" ")[0][3:]) for l in lines]
        assert my_id in ids and other_id in ids
        mine = [l for l in lines if l.startswith("id=%d " % my_id)][0]
        fields = dict(kv.split("=", 1) for kv in mine.split(" "))
        assert fields["name"] == "lister"
        assert fields["addr"].startswith("127.0.0.1:")
        assert fields["laddr"] == "127.0.0.1:%d" % c.port
        only_other = c.cmd("CLIENT", "LIST", "ID", str(other_id)).decode()
        assert only_other.startswith("id=%d " % other_id) and only_other.count("\n") == 1
        info = c.cmd("CLIENT", "INFO").decode()
        assert info.startswith("id=%d " % my_id) and info.endswith("\n")
    finally:
        other.close()


def test_client_setinfo(latch):
    """CLIENT SETINFO (Redis 7.2) is what ioredis and node-redis send on connect."""
    assert latch.raw("CLIENT", "SETINFO", "LIB-NAME", "ioredis") == b"+OK\r\n"
    assert latch.raw("CLIENT", "SETINFO", "lib-ver", "5.0.0") == b"+OK\r\n"
    info = latch.cmd("CLIENT", "INFO").decode()
    assert "lib-name=ioredis" in info and "lib-ver=5.0.0" in info
    assert latch.raw("CLIENT", "SETINFO", "foo", "bar") == b"-ERR Unrecognized option 'foo'\r\n"
    assert latch.raw("CLIENT", "SETINFO", "LIB-NAME") == \
        b"-ERR wrong number of arguments for 'client|setinfo' command\r\n"


@pytest.mark.parametrize("proto", PROTOS)
def test_client_reply_off_on_skip(pair, proto):
    """CLIENT REPLY: the replies suppressed are exactly Redis's, pipelined."""
    switch_proto(pair, proto)
    sequences = [
        [("CLIENT", "REPLY", "OFF"), ("SET", "a", "1"), ("GET", "a"), ("FOO",),
         ("GET",), ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "ON"), ("GET", "a")],
        [("CLIENT", "REPLY", "SKIP"), ("GET", "a"), ("GET", "a")],
        [("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "SKIP"), ("GET", "a"), ("PING",)],
        [("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "ON"), ("PING",)],
        [("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "OFF"), ("PING",),
         ("CLIENT", "REPLY", "ON")],
        [("CLIENT", "REPLY", "OFF"), ("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "ON"),
         ("PING",)],
        [("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY"), ("PING",)],
        [("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "foo"), ("PING",)],
        [("CLIENT", "REPLY", "OFF"), ("MULTI",), ("SET", "x", "1"), ("INCR", "x"),
         ("EXEC",), ("CLIENT", "REPLY", "ON"), ("GET", "x")],
        [("CLIENT", "REPLY", "SKIP"), ("MULTI",), ("SET", "y", "1"), ("EXEC",), ("GET", "y")],
        [("CLIENT", "REPLY", "OFF"), ("SUBSCRIBE",), ("CLIENT", "REPLY", "ON")],
    ]
    for steps in sequences:
        # Each sequence ends with an ECHO whose reply marks the end.
        data = b"".join(encode(*s) for s in steps) + encode("ECHO", "end")
        got, want = [], []
        for conn, out in ((pair.latch, got), (pair.redis, want)):
            conn.send(data)
            while True:
                raw = conn.read_raw()
                out.append(raw)
                if raw == b"$3\r\nend\r\n":
                    break
        assert got == want, steps


def test_client_list_has_redis_fields(pair):
    """CLIENT LIST's fields, in Redis 7.0's order (latch adds Redis 7.2's
    lib-name and lib-ver at the end), and the flags and counts that follow a
    client's state."""
    lines = [c.cmd("CLIENT", "INFO").decode().strip() for c in (pair.latch, pair.redis)]
    names = [[kv.split("=", 1)[0] for kv in line.split(" ")] for line in lines]
    assert names[0][:len(names[1])] == names[1]
    assert names[0][len(names[1]):] == ["lib-name", "lib-ver"]

    def fields_of(conn, client_id):
        line = conn.cmd("CLIENT", "LIST", "ID", str(client_id)).decode().strip()
        return dict(kv.split("=", 1) for kv in line.split(" "))

    for conn in (pair.latch, pair.redis):
        me = dict(kv.split("=", 1) for kv in conn.cmd("CLIENT", "INFO").decode().split())
        assert me["flags"] == "N" and me["multi"] == "-1" and me["cmd"] == "client|info"
        assert int(me["argv-mem"]) > 0 and int(me["rbs"]) >= 0 and int(me["rbp"]) >= 0
        other = lt.Conn(conn.port)
        try:
            other_id = other.cmd("CLIENT", "ID")
            assert other.cmd("WATCH", "w") == b"OK"
            assert conn.cmd("SET", "w", "changed") == b"OK"
            assert other.cmd("MULTI") == b"OK"
            assert other.cmd("SET", "a", "1") == b"QUEUED"
            assert other.cmd("SET", "b", "2") == b"QUEUED"
            f = fields_of(conn, other_id)
            assert f["flags"] == "xd", (conn.port, f["flags"])  # in MULTI, watched key changed
            # A doomed transaction keeps nothing queued.
            assert f["multi"] == "0" and f["multi-mem"] == "0"
            assert f["argv-mem"] == "0"  # not executing a command
            assert other.cmd("DISCARD") == b"OK"
            assert other.cmd("MULTI") == b"OK"
            assert other.cmd("SET", "a", "1") == b"QUEUED"
            assert other.cmd("SET", "b", "2") == b"QUEUED"
            f = fields_of(conn, other_id)
            assert f["flags"] == "x" and f["multi"] == "2" and int(f["multi-mem"]) > 0
            assert other.cmd("DISCARD") == b"OK"
            assert conn.cmd("CLIENT", "NO-EVICT", "on") == b"OK"
            assert "e" in fields_of(conn, me["id"])["flags"]
            assert conn.cmd("CLIENT", "NO-EVICT", "off") == b"OK"
        finally:
            other.close()


def test_client_kill_filters_kill_what_redis_kills(pair):
    """CLIENT KILL with each filter closes the connection it names, on both,
    and leaves the caller alone unless SKIPME no (or the old form) says so."""
    for kind in ("ID", "ADDR", "LADDR+ID", "USER+ID", "TYPE+ID"):
        replies = []
        for conn in (pair.latch, pair.redis):
            victim = lt.Conn(conn.port)
            try:
                info = dict(kv.split("=", 1) for kv in
                            victim.cmd("CLIENT", "INFO").decode().split())
                args = {"ID": ["ID", info["id"]], "ADDR": ["ADDR", info["addr"]],
                        "LADDR+ID": ["LADDR", info["laddr"], "ID", info["id"]],
                        "USER+ID": ["USER", "default", "ID", info["id"]],
                        "TYPE+ID": ["TYPE", "normal", "ID", info["id"]]}[kind]
                killed = conn.cmd("CLIENT", "KILL", *args)
                closed = victim.read_until_close(timeout=2)
                replies.append((killed, closed, conn.cmd("PING")))
            finally:
                victim.close()
        assert replies[0] == replies[1] == (1, b"", b"PONG"), (kind, replies)
    for conn in (pair.latch, pair.redis):
        # The old form may kill the caller: after its +OK.
        me = lt.Conn(conn.port)
        addr = dict(kv.split("=", 1) for kv in me.cmd("CLIENT", "INFO").decode().split())["addr"]
        me.send(encode("CLIENT", "KILL", addr))
        assert me.read_until_close(timeout=2) == b"+OK\r\n"
        me.close()
        # SKIPME no (new form): the count, then the close.
        me = lt.Conn(conn.port)
        my_id = me.cmd("CLIENT", "ID")
        me.send(encode("CLIENT", "KILL", "ID", str(my_id), "SKIPME", "no"))
        assert me.read_until_close(timeout=2) == b":1\r\n"
        me.close()


def test_client_kill_maxage(latch):
    """MAXAGE (Redis 7.4; 7.0 answers a syntax error): only clients connected
    at least that many seconds."""
    young = lt.Conn(latch.port)
    try:
        assert young.cmd("PING") == b"PONG"
        assert latch.cmd("CLIENT", "KILL", "MAXAGE", "3600", "SKIPME", "yes") == 0
        assert young.cmd("PING") == b"PONG"
        time.sleep(1.1)
        assert latch.cmd("CLIENT", "KILL", "MAXAGE", "1", "SKIPME", "yes") >= 1
        assert young.read_until_close(timeout=2) == b""
        assert latch.raw("CLIENT", "KILL", "MAXAGE", "abc") == \
            b"-ERR value is not an integer or out of range\r\n"
    finally:
        young.close()
