"""Differential family: pub/sub and keyspace notifications against
redis-server 7.0, in RESP2 and RESP3.

A script here drives several connections to each server in lockstep: each
step is (connection, request, replies expected) — the bytes every
connection receives must be identical on both servers, which checks message
order, subscription counts, and push frames mixed with ordinary replies.
Steps whose replies Redis gives in hash order (UNSUBSCRIBE of several
channels at once, PUBSUB CHANNELS) are written so that only one name is in
play, or compare decoded and sorted where noted.
"""

import pytest

import latchtest as lt
from latchtest import encode

PROTOS = [2, 3]


class Clients(object):
    """n connections to latch and n to redis-server, in the same protocol."""

    def __init__(self, latch_port, redis_port, n, proto):
        self.latch = [lt.Conn(latch_port) for _ in range(n)]
        self.redis = [lt.Conn(redis_port) for _ in range(n)]
        if proto == 3:
            for c in self.latch + self.redis:
                c.send(encode("HELLO", "3"))
                c.read_raw()

    def step(self, i, args, replies=1):
        """Sends args on connection i of both; returns (latch, redis) raw replies."""
        self.latch[i].send(encode(*args))
        self.redis[i].send(encode(*args))
        if replies == 0:
            return b"", b""
        return self.latch[i].read_n_raw(replies), self.redis[i].read_n_raw(replies)

    def read(self, i, replies=1):
        return self.latch[i].read_n_raw(replies), self.redis[i].read_n_raw(replies)

    def close(self):
        for c in self.latch + self.redis:
            c.close()


@pytest.fixture
def clients(latch_server, redis_server):
    made = []

    def make(n, proto):
        c = Clients(latch_server.port, redis_server.port, n, proto)
        for args in (("FLUSHALL",), ("CONFIG", "SET", "notify-keyspace-events", "")):
            c.step(0, args)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


# (connection, request, replies) — or (connection, "read", replies): read
# what was pushed to that connection since.
SCRIPTS = {
    "subscribe_publish_unsubscribe": [
        (0, ("SUBSCRIBE", "a"), 1),
        (0, ("SUBSCRIBE", "b", "a"), 2),
        (1, ("PUBLISH", "a", "hello"), 1),
        (0, "read", 1),
        (1, ("PUBLISH", "b", ""), 1),
        (0, "read", 1),
        (1, ("PUBLISH", "nobody", "x"), 1),
        (0, ("UNSUBSCRIBE", "a"), 1),
        (0, ("UNSUBSCRIBE", "a"), 1),
        (1, ("PUBLISH", "a", "gone"), 1),
        (0, ("UNSUBSCRIBE",), 1),
        (0, ("UNSUBSCRIBE",), 1),
        (0, ("PING",), 1),
    ],
    "patterns": [
        (0, ("PSUBSCRIBE", "lock:*", "job:?"), 2),
        (0, ("PSUBSCRIBE", "lock:*"), 1),
        (1, ("PUBLISH", "lock:a", "released"), 1),
        (0, "read", 1),
        (1, ("PUBLISH", "job:1", "x"), 1),
        (0, "read", 1),
        (1, ("PUBLISH", "job:12", "x"), 1),
        (1, ("PUBSUB", "NUMPAT"), 1),
        (0, ("PUNSUBSCRIBE", "job:?"), 1),
        (0, ("PUNSUBSCRIBE",), 1),
        (0, ("PUNSUBSCRIBE",), 1),
        (1, ("PUBSUB", "NUMPAT"), 1),
    ],
    "channel_and_pattern_both_deliver": [
        (0, ("SUBSCRIBE", "lock:x"), 1),
        (0, ("PSUBSCRIBE", "lock:*"), 1),
        (2, ("SUBSCRIBE", "lock:x"), 1),
        (1, ("PUBLISH", "lock:x", "m"), 1),
        (0, "read", 2),
        (2, "read", 1),
        (1, ("PUBSUB", "NUMSUB", "lock:x", "none"), 1),
        (1, ("PUBSUB", "CHANNELS", "lock:*"), 1),
        (1, ("PUBSUB", "CHANNELS", "nomatch*"), 1),
    ],
    "shard_channels": [
        (0, ("SSUBSCRIBE", "s1"), 1),
        (0, ("PSUBSCRIBE", "s*"), 1),
        (1, ("SPUBLISH", "s1", "m"), 1),
        (0, "read", 1),
        (1, ("PUBLISH", "s1", "m"), 1),
        (0, "read", 1),
        (1, ("PUBSUB", "SHARDNUMSUB", "s1", "s2"), 1),
        (1, ("PUBSUB", "SHARDCHANNELS"), 1),
        (0, ("SUNSUBSCRIBE", "s1"), 1),
        (0, ("SUNSUBSCRIBE",), 1),
        (1, ("PUBSUB", "SHARDCHANNELS"), 1),
    ],
    "errors_and_introspection": [
        (0, ("PUBLISH", "a"), 1),
        (0, ("SUBSCRIBE",), 1),
        (0, ("PSUBSCRIBE",), 1),
        (0, ("SSUBSCRIBE",), 1),
        (0, ("PUBSUB",), 1),
        (0, ("PUBSUB", "NUMPAT", "x"), 1),
        (0, ("PUBSUB", "CHANNELS", "a", "b"), 1),
        (0, ("PUBSUB", "FOO"), 1),
        (0, ("PUBSUB", "HELP"), 1),
        (0, ("PUBSUB", "NUMSUB"), 1),
    ],
    # RESET is allowed in RESP2's subscribed mode and ends every
    # subscription silently (clearClientConnectionState), in either protocol.
    "reset_leaves_subscribed_mode": [
        (0, ("SUBSCRIBE", "a"), 1),
        (0, ("PSUBSCRIBE", "p*"), 1),
        (0, ("SSUBSCRIBE", "s"), 1),
        (0, ("RESET",), 1),
        (1, ("PUBLISH", "a", "m"), 1),
        (1, ("PUBLISH", "pa", "m"), 1),
        (1, ("SPUBLISH", "s", "m"), 1),
        (1, ("PUBSUB", "NUMSUB", "a"), 1),
        (1, ("PUBSUB", "NUMPAT"), 1),
        (1, ("PUBSUB", "SHARDNUMSUB", "s"), 1),
        (0, ("PING",), 1),
        (0, ("GET", "x"), 1),
        (0, ("SUBSCRIBE", "b"), 1),
        (0, ("RESET",), 1),
        (1, ("PUBSUB", "NUMSUB", "b"), 1),
    ],
    "publisher_subscribed_to_itself": [
        (0, ("SUBSCRIBE", "me"), 1),
        (0, ("PUBLISH", "me", "x"), "resp3-only"),
    ],
    "subscribe_inside_multi": [
        (0, ("MULTI",), 1),
        (0, ("SUBSCRIBE", "x"), 1),
        (0, ("PUBLISH", "x", "y"), 1),
        (0, ("EXEC",), 2),  # the array holds the subscribe frame and the message; then PUBLISH
        (0, ("UNSUBSCRIBE",), 1),
    ],
    "client_reply_off_keeps_messages": [
        (0, ("CLIENT", "REPLY", "OFF"), 0),
        (0, ("SUBSCRIBE", "c"), 1),
        (1, ("PUBLISH", "c", "hello"), 1),
        (0, "read", 1),
        (0, ("UNSUBSCRIBE", "c"), 1),
        (0, ("CLIENT", "REPLY", "ON"), 1),
    ],
    "keyspace_notifications_strings_and_keys": [
        (1, ("CONFIG", "SET", "notify-keyspace-events", "KEA"), 1),
        (0, ("PSUBSCRIBE", "__key*__:*"), 1),
        (1, ("SET", "lock", "t", "PX", "100000"), 1),
        (0, "read", 4),
        (1, ("SET", "lock", "t2", "XX"), 1),
        (0, "read", 2),
        (1, ("PEXPIRE", "lock", "50000"), 1),
        (0, "read", 2),
        (1, ("PERSIST", "lock"), 1),
        (0, "read", 2),
        (1, ("INCR", "n"), 1),
        (0, "read", 2),
        (1, ("APPEND", "n", "0"), 1),
        (0, "read", 2),
        (1, ("SETRANGE", "n", "0", "9"), 1),
        (0, "read", 2),
        (1, ("INCRBYFLOAT", "n", "1.5"), 1),
        (0, "read", 2),
        (1, ("RENAME", "n", "m"), 1),
        (0, "read", 4),
        (1, ("COPY", "m", "c"), 1),
        (0, "read", 2),
        (1, ("MOVE", "c", "1"), 1),
        (0, "read", 4),
        (1, ("GETDEL", "m"), 1),
        (0, "read", 2),
        (1, ("MSET", "a", "1", "b", "2"), 1),
        (0, "read", 4),
        (1, ("GETSET", "a", "3"), 1),
        (0, "read", 2),
        (1, ("DEL", "a", "b", "missing"), 1),
        (0, "read", 4),
        (1, ("SET", "e", "1"), 1),
        (0, "read", 2),
        (1, ("EXPIRE", "e", "-1"), 1),
        (0, "read", 2),
        (1, ("GETEX", "lock", "PX", "100000"), 1),
        (0, "read", 2),
        (1, ("GETEX", "lock", "PERSIST"), 1),
        (0, "read", 2),
        (1, ("SETNX", "lock", "x"), 1),
        (1, ("SETNX", "other", "x"), 1),
        (0, "read", 2),
        (1, ("SET", "gone", "v", "PXAT", "1"), 1),
        (0, "read", 4),
    ],
    "keyspace_notifications_classes": [
        (1, ("CONFIG", "SET", "notify-keyspace-events", "E$"), 1),
        (0, ("PSUBSCRIBE", "__key*__:*"), 1),
        (1, ("SET", "k", "v", "EX", "100"), 1),
        (0, "read", 1),
        (1, ("DEL", "k"), 1),
        (1, ("CONFIG", "SET", "notify-keyspace-events", "Kg"), 1),
        (1, ("SET", "k", "v"), 1),
        (1, ("DEL", "k"), 1),
        (0, "read", 1),
        (1, ("CONFIG", "SET", "notify-keyspace-events", "Em"), 1),
        (1, ("GET", "missing"), 1),
        (0, "read", 1),
        (1, ("CONFIG", "SET", "notify-keyspace-events", "En"), 1),
        (1, ("SET", "fresh", "1"), 1),
        (0, "read", 1),
        (1, ("SET", "fresh", "2"), 1),
        (1, ("CONFIG", "GET", "notify-keyspace-events"), 1),
        (1, ("CONFIG", "SET", "notify-keyspace-events", "zq"), 1),
    ],
}


def run(clients, steps, proto):
    mismatches = []
    for n, (i, what, replies) in enumerate(steps):
        if replies == "resp3-only":
            # In RESP3 a publisher subscribed to its own channel gets the
            # message before PUBLISH's reply; in RESP2 it could not publish.
            replies = 2 if proto == 3 else 1
        if what == "read":
            got, want = clients.read(i, replies)
        else:
            got, want = clients.step(i, what, replies)
        if got != want:
            mismatches.append("step %d %r on conn %d:\n    latch: %r\n    redis: %r" %
                              (n, what, i, got, want))
    assert not mismatches, "latch and redis-server differ:\n" + "\n".join(mismatches)


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(clients, script, proto):
    run(clients(3, proto), SCRIPTS[script], proto)


def test_resp2_subscribed_mode_allows_only_the_subscribe_family(clients):
    c = clients(2, 2)
    steps = [
        (0, ("SUBSCRIBE", "a"), 1),
        (0, ("GET", "x"), 1),
        (0, ("SET", "x", "y"), 1),
        (0, ("PING",), 1),
        (0, ("PING", "hi"), 1),
        (0, ("PUBSUB", "NUMSUB", "a"), 1),
        (0, ("UNSUBSCRIBE",), 1),
        (0, ("GET", "x"), 1),
    ]
    run(c, steps, 2)


def test_resp3_mixes_pushes_and_replies(clients):
    c = clients(2, 3)
    steps = [
        (0, ("SUBSCRIBE", "a"), 1),
        (0, ("SET", "x", "y"), 1),
        (1, ("PUBLISH", "a", "m"), 1),
        (0, ("GET", "x"), 2),  # the message, then GET's reply
        (0, ("PING",), 1),
    ]
    run(c, steps, 3)


def test_client_list_shows_subscriptions(latch_server):
    sub = latch_server.conn()
    try:
        sub.send(encode("SUBSCRIBE", "a", "b"))
        sub.read_n_raw(2)
        sub.send(encode("PSUBSCRIBE", "p*"))
        sub.read_raw()
        sub.send(encode("SSUBSCRIBE", "s"))
        sub.read_raw()
        with latch_server.conn() as admin:
            listing = admin.cmd("CLIENT", "LIST", "TYPE", "pubsub").decode()
            assert listing.count("\n") == 1, listing
            assert " flags=P " in listing and " sub=2 psub=1 ssub=1 " in listing, listing
            assert admin.cmd("CLIENT", "LIST", "TYPE", "normal").decode().count("flags=P") == 0
            info = admin.cmd("INFO", "stats").decode()
            assert "pubsub_channels:2\r\n" in info
            assert "pubsub_patterns:1\r\n" in info
            assert "pubsubshard_channels:1\r\n" in info
            assert admin.cmd("CLIENT", "KILL", "TYPE", "pubsub") == 1
            assert admin.cmd("PUBSUB", "NUMSUB", "a") == [b"a", 0]
            info = admin.cmd("INFO", "stats").decode()
            assert "pubsub_channels:0\r\n" in info
    finally:
        sub.close()
