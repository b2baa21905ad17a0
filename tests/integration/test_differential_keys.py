"""Differential family: commands on keys of any type — RENAME, RENAMENX, COPY,
MOVE, TYPE, OBJECT ENCODING — and WRONGTYPE from the string commands, against
redis-server 7.0 in RESP2 and RESP3 (differential.py).

The collection types' own families extend the scripts here with their values
(a hash renamed, a list copied to another database…)."""

import time

import pytest

import latchtest as lt
from latchtest import encode

from differential import LLONG_MAX, PROTOS, Unordered, check_script, switch_proto

SCRIPTS = {
    "rename": [
        ("SET", "a", "1"),
        ("RENAME", "a", "b"),
        ("GET", "a"),
        ("GET", "b"),
        ("RENAME", "missing", "x"),
        ("RENAME", "b", "b"),
        ("GET", "b"),
        ("SET", "c", "3", "PX", "100000"),
        ("RENAME", "c", "b"),
        ("GET", "b"),
        ("PTTL", "c"),
        ("EXISTS", "c"),
        ("RENAME", "b"),
        ("RENAME", "b", "x", "y"),
    ],
    "rename_keeps_the_lease": [
        ("SET", "k", "v", "EX", "1000"),
        ("RENAME", "k", "j"),
        ("TTL", "j"),
        ("SET", "p", "v"),
        ("SET", "q", "w", "EX", "1000"),
        ("RENAME", "p", "q"),
        ("TTL", "q"),
        ("GET", "q"),
    ],
    "renamenx": [
        ("SET", "a", "1"),
        ("SET", "b", "2"),
        ("RENAMENX", "a", "b"),
        ("GET", "a"),
        ("RENAMENX", "a", "c"),
        ("GET", "c"),
        ("RENAMENX", "c", "c"),
        ("RENAMENX", "missing", "d"),
    ],
    "copy": [
        ("SET", "a", "1", "EX", "1000"),
        ("COPY", "a", "b"),
        ("GET", "b"),
        ("TTL", "b"),
        ("COPY", "a", "b"),
        ("SET", "a", "2"),
        ("COPY", "a", "b", "REPLACE"),
        ("GET", "b"),
        ("TTL", "b"),
        ("COPY", "a", "a"),
        ("COPY", "missing", "z"),
        ("COPY", "a", "c", "DB", "3"),
        ("SELECT", "3"),
        ("GET", "c"),
        ("SELECT", "0"),
        ("COPY", "a", "a", "DB", "3"),
        ("COPY", "a", "a", "DB", "3", "REPLACE"),
        ("COPY", "a", "a", "DB", "0"),
        ("COPY", "a", "c", "DB", "99"),
        ("COPY", "a", "c", "DB", "x"),
        ("COPY", "a", "c", "DB"),
        ("COPY", "a", "c", "BOGUS"),
        ("COPY", "a", "c", "replace", "db", "2"),
    ],
    "move": [
        ("SET", "a", "1", "EX", "1000"),
        ("MOVE", "a", "2"),
        ("EXISTS", "a"),
        ("SELECT", "2"),
        ("TTL", "a"),
        ("SET", "b", "x"),
        ("SELECT", "0"),
        ("SET", "b", "y"),
        ("MOVE", "b", "2"),
        ("GET", "b"),
        ("MOVE", "missing", "2"),
        ("MOVE", "b", "0"),
        ("MOVE", "b", "16"),
    ],
    "lists_renamed_copied_moved": [
        ("RPUSH", "l", "a", "b", "c"),
        ("PEXPIRE", "l", "100000"),
        ("TYPE", "l"),
        ("OBJECT", "ENCODING", "l"),
        ("RENAME", "l", "m"),
        ("LRANGE", "m", "0", "-1"),
        ("SET", "s", "v"),
        ("RENAMENX", "m", "s"),
        ("COPY", "m", "n"),
        ("RPUSH", "n", "d"),
        ("LRANGE", "m", "0", "-1"),
        ("LRANGE", "n", "0", "-1"),
        ("COPY", "n", "s", "REPLACE"),
        ("TYPE", "s"),
        ("COPY", "m", "m2", "DB", "2"),
        ("MOVE", "m", "3"),
        ("SELECT", "3"),
        ("LRANGE", "m", "0", "-1"),
        ("OBJECT", "ENCODING", "m"),
        ("SELECT", "2"),
        ("LRANGE", "m2", "0", "-1"),
        ("SELECT", "0"),
        ("DEL", "s"),
        ("SCAN", "0", "TYPE", "list", "COUNT", "100"),  # (one key: no hash order)
        ("TYPE", "m"),
    ],
    "type_and_encoding_of_strings": [
        ("SET", "i", "12345"),
        ("SET", "s", "hello"),
        ("SET", "long", "x" * 50),
        ("TYPE", "i"),
        ("TYPE", "missing"),
        ("OBJECT", "ENCODING", "i"),
        ("OBJECT", "ENCODING", "s"),
        ("OBJECT", "ENCODING", "long"),
        ("OBJECT", "ENCODING", "missing"),
        ("DEL", "s", "long"),
        ("SCAN", "0", "TYPE", "string", "COUNT", "100"),
        ("SCAN", "0", "TYPE", "hash"),
    ],
    # The collection types (issue 24): renamed, copied and moved with their
    # leases; TYPE, OBJECT ENCODING and SCAN TYPE name them.
    "hashes": [
        ("HSET", "h", "f", "v", "g", "w"),
        ("EXPIRE", "h", "1000"),
        ("RENAME", "h", "h2"),
        ("HGETALL", "h2"),
        ("TTL", "h2"),
        ("COPY", "h2", "h3"),
        ("HGETALL", "h3"),
        ("TTL", "h3"),
        ("HSET", "h3", "x", "y"),
        ("HLEN", "h2"),
        ("MOVE", "h3", "4"),
        ("SELECT", "4"),
        ("HGETALL", "h3"),
        ("TYPE", "h3"),
        ("SELECT", "0"),
        ("SCAN", "0", "TYPE", "hash"),
        ("DEL", "h2"),
        ("EXISTS", "h2"),
        ("HSET", "big", "f", "x" * 70),
        ("COPY", "big", "big2"),
        ("OBJECT", "ENCODING", "big2"),
        ("HGET", "big2", "f"),
    ],
    "sets": [
        ("SADD", "s", "1", "2", "a"),
        ("PEXPIRE", "s", "100000"),
        ("RENAME", "s", "s2"),
        ("SCARD", "s2"),
        ("COPY", "s2", "s3"),
        ("SCARD", "s3"),
        ("SREM", "s3", "1"),
        ("SCARD", "s2"),
        ("MOVE", "s3", "2"),
        ("SELECT", "2"),
        ("TYPE", "s3"),
        ("SISMEMBER", "s3", "a"),
        ("SELECT", "0"),
        ("SADD", "i", "1", "2"),
        ("COPY", "i", "i2"),
        ("OBJECT", "ENCODING", "i2"),
        ("SMEMBERS", "i2"),
        # Several keys: the keyspace's order is latch's own.
        Unordered("SCAN", "0", "TYPE", "set", "COUNT", "100"),
    ],
    "sorted_sets": [
        ("ZADD", "z", "1", "a", "2", "b"),
        ("ZADD", "big", "1", "x" * 80),
        ("TYPE", "z"),
        ("OBJECT", "ENCODING", "z"),
        ("OBJECT", "ENCODING", "big"),
        ("RENAME", "z", "z2"),
        ("ZRANGE", "z2", "0", "-1", "WITHSCORES"),
        ("RENAMENX", "z2", "big"),
        ("EXPIRE", "z2", "1000"),
        ("COPY", "z2", "z3"),
        ("TTL", "z3"),
        ("ZADD", "z3", "3", "c"),
        ("ZCARD", "z2"),
        ("COPY", "big", "z3", "REPLACE"),
        ("OBJECT", "ENCODING", "z3"),
        ("COPY", "z2", "z4", "DB", "2"),
        ("MOVE", "big", "2"),
        ("SELECT", "2"),
        ("ZRANGE", "z4", "0", "-1", "WITHSCORES"),
        ("TTL", "z4"),
        ("OBJECT", "ENCODING", "big"),
        ("SELECT", "0"),
        ("GET", "z2"),
        ("SET", "z2", "string"),
        ("TYPE", "z2"),
        ("SCAN", "0", "TYPE", "zset", "COUNT", "100"),
        ("DEL", "z3"),
        ("EXISTS", "z3"),
    ],
}


SCRIPTS.update({
    "databases": [
        # Each of the 16 databases is its own keyspace.
        ("SET", "k", "zero"),
        ("SELECT", "1"),
        ("GET", "k"),
        ("SET", "k", "one", "PXAT", "4102444800123"),  # an absolute time: PEXPIRETIME is exact
        ("SET", "only1", "x"),
        ("DBSIZE",),
        ("SELECT", "15"),
        ("SET", "k", "fifteen"),
        ("KEYS", "*"),
        ("SCAN", "0"),
        ("RANDOMKEY",),
        ("SELECT", "14"),
        ("KEYS", "*"),
        ("SCAN", "0", "MATCH", "*"),
        ("RANDOMKEY",),
        ("SELECT", "15"),
        ("SELECT", "16"),
        ("SELECT", "2147483647"),
        ("SELECT", "-2147483648"),
        ("GET", "k"),
        ("SELECT", "0"),
        ("GET", "k"),
        ("DBSIZE",),
        # MOVE: to a database without the key, with it, to itself, out of range.
        ("MOVE", "k", "2"),
        ("GET", "k"),
        ("SET", "k", "zero-again"),
        ("MOVE", "k", "2"),
        ("MOVE", "k", "0"),
        ("MOVE", "nokey", "3"),
        ("MOVE", "k", "16"),
        ("MOVE", "k", "-1"),
        ("MOVE", "k", "x"),
        ("MOVE", "k"),
        ("SELECT", "2"),
        ("GET", "k"),
        # MOVE keeps the TTL.
        ("SELECT", "1"),
        ("MOVE", "k", "3"),
        ("SELECT", "3"),
        ("GET", "k"),
        ("PEXPIRETIME", "k"),
        ("EXPIRE", "k", "100", "GT"),
        # SWAPDB: the keys change places, the connections stay.
        ("SWAPDB", "3", "15"),
        ("GET", "k"),
        ("SELECT", "15"),
        ("GET", "k"),
        ("SWAPDB", "15", "15"),
        ("SWAPDB", "0", "16"),
        ("SWAPDB", "16", "0"),
        ("SWAPDB", "-1", "0"),
        ("SWAPDB", "x", "0"),
        ("SWAPDB", "0", "y"),
        ("SWAPDB", "0"),
        ("DBSIZE",),
        # FLUSHDB empties one database only; FLUSHALL every one.
        ("FLUSHDB",),
        ("DBSIZE",),
        ("FLUSHDB", "ASYNC"),
        ("FLUSHDB", "SYNC"),
        ("FLUSHDB", "NOW"),
        ("SELECT", "1"),
        ("DBSIZE",),
        ("FLUSHALL",),
        ("DBSIZE",),
        ("SELECT", "2"),
        ("DBSIZE",),
        # A transaction that selects: the SELECT applies inside it and after.
        ("MULTI",),
        ("SET", "t", "2"),
        ("SELECT", "4"),
        ("SET", "t", "4"),
        ("SELECT", "99"),
        ("EXEC",),
        ("GET", "t"),
        ("SELECT", "2"),
        ("GET", "t"),
        ("MULTI",),
        ("SWAPDB", "2", "4"),
        ("MOVE", "t", "5"),
        ("EXEC",),
        ("GET", "t"),
        ("SELECT", "5"),
        ("GET", "t"),
        # WATCH is per database: a write to the same name elsewhere does not
        # abort; SWAPDB and FLUSHDB of the watched database do.
        ("SELECT", "0"),
        ("SET", "w", "0"),
        ("WATCH", "w"),
        ("SELECT", "1"),
        ("SET", "w", "1"),
        ("SELECT", "0"),
        ("MULTI",),
        ("GET", "w"),
        ("EXEC",),
        ("WATCH", "w"),
        ("SWAPDB", "0", "1"),
        ("MULTI",),
        ("GET", "w"),
        ("EXEC",),
        ("WATCH", "w"),
        ("SWAPDB", "6", "7"),
        ("MULTI",),
        ("GET", "w"),
        ("EXEC",),
        ("WATCH", "w"),
        ("SELECT", "1"),
        ("FLUSHDB",),
        ("SELECT", "0"),
        ("MULTI",),
        ("GET", "w"),
        ("EXEC",),
        ("WATCH", "w"),
        ("FLUSHDB",),
        ("MULTI",),
        ("GET", "w"),
        ("EXEC",),
    ],
    "dbsize_flush": [
        ("DBSIZE",),
        ("SET", "a", "1"),
        ("SET", "b", "2", "EX", "1000"),
        ("DBSIZE",),
        ("DBSIZE", "x"),
        ("FLUSHALL", "foo"),
        ("FLUSHALL", "sync", "async"),
        ("FLUSHDB", "bar"),
        ("FLUSHDB", "a", "b"),
        ("DBSIZE",),
        ("FLUSHDB",),
        ("DBSIZE",),
        ("SET", "a", "1"),
        ("FLUSHALL", "ASYNC"),
        ("DBSIZE",),
        ("SET", "a", "1"),
        ("FLUSHALL", "sync"),
        ("DBSIZE",),
        ("SET", "a", "1"),
        ("FLUSHDB", "Async"),
        ("DBSIZE",),
        ("SET", "a", "1"),
        ("FLUSHDB", "SYNC"),
        ("GET", "a"),
    ],
    "unlink_touch_randomkey_type": [
        ("RANDOMKEY",),
        ("TYPE", "missing"),
        ("SET", "a", "1"),
        ("RANDOMKEY",),
        ("TYPE", "a"),
        ("SET", "b", "2"),
        ("TOUCH", "a", "b", "c", "a"),
        ("TOUCH", "missing"),
        ("UNLINK", "a", "missing", "a"),
        ("UNLINK", "a"),
        ("EXISTS", "a", "b"),
        ("RANDOMKEY",),
        ("UNLINK", "b"),
        ("RANDOMKEY",),
        ("DBSIZE",),
    ],
    "object": [
        ("OBJECT", "ENCODING", "missing"),
        ("OBJECT", "REFCOUNT", "missing"),
        ("OBJECT", "FREQ", "missing"),
        ("OBJECT", "IDLETIME", "missing"),
        ("OBJECT", "HELP"),
        ("object", "help"),
        ("OBJECT", "FOO"),
        ("OBJECT", "FOO", "k"),
        ("OBJECT", "ENCODING", "k", "extra"),
        ("SET", "k", "v"),
        ("OBJECT", "FREQ", "k"),
    ] + [step for v in [
        "0", "1", "9999", "10000", "-1", "123456", "-9223372036854775808", LLONG_MAX,
        "9223372036854775808", "12345678901234567890", "01", "-0", "+1", "1.0", " 1", "1 ",
        "0x10", "", "x", "x" * 44, "x" * 45, "y" * 1000, b"\x00" * 3,
    ] for step in (("SET", "e", v), ("OBJECT", "ENCODING", "e"), ("OBJECT", "REFCOUNT", "e"))] + [
        # what made the value matters, as in Redis
        ("SET", "c", "5"),
        ("APPEND", "c", "1"),
        ("OBJECT", "ENCODING", "c"),
        ("SET", "c", "5"),
        ("APPEND", "c", ""),
        ("OBJECT", "ENCODING", "c"),
        ("DEL", "c"),
        ("APPEND", "c", "12"),
        ("OBJECT", "ENCODING", "c"),
        ("SETRANGE", "c", "0", "3"),
        ("OBJECT", "ENCODING", "c"),
        ("SETRANGE", "d", "1", "x"),
        ("OBJECT", "ENCODING", "d"),
        ("SET", "c", "5"),
        ("SETRANGE", "c", "0", ""),
        ("OBJECT", "ENCODING", "c"),
        ("INCRBYFLOAT", "f", "1"),
        ("OBJECT", "ENCODING", "f"),
        ("OBJECT", "REFCOUNT", "f"),
        ("INCRBYFLOAT", "f", "1e100"),
        ("OBJECT", "ENCODING", "f"),
        ("INCR", "i"),
        ("OBJECT", "ENCODING", "i"),
        ("OBJECT", "REFCOUNT", "i"),
        ("INCRBY", "i", "100000"),
        ("OBJECT", "ENCODING", "i"),
        ("OBJECT", "REFCOUNT", "i"),
        ("SET", "i", "x" * 50),
        ("GETEX", "i", "EX", "100"),
        ("OBJECT", "ENCODING", "i"),
        ("MSET", "m", "7", "n", "abc"),
        ("OBJECT", "ENCODING", "m"),
        ("OBJECT", "ENCODING", "n"),
        ("GETSET", "m", "70000"),
        ("OBJECT", "ENCODING", "m"),
        ("OBJECT", "REFCOUNT", "m"),
        ("SETNX", "o", "12"),
        ("OBJECT", "ENCODING", "o"),
        ("SETEX", "o", "100", "abc"),
        ("OBJECT", "ENCODING", "o"),
    ],
    "type_and_scan_errors": [
        ("SET", "a", "1"),
        ("SCAN", " 0"),
        ("SCAN", "0 "),
        ("SCAN", "abc"),
        ("SCAN", "1.5"),
        ("SCAN", "0x10"),
        ("SCAN", "18446744073709551616"),
        ("SCAN", "-18446744073709551616"),
        ("SCAN", "0", "COUNT", "0"),
        ("SCAN", "0", "COUNT", "-1"),
        ("SCAN", "0", "COUNT", "abc"),
        ("SCAN", "0", "COUNT", "1.5"),
        ("SCAN", "0", "COUNT"),
        ("SCAN", "0", "MATCH"),
        ("SCAN", "0", "TYPE"),
        ("SCAN", "0", "FOO", "bar"),
        ("SCAN", "0", "MATCH", "*", "FOO"),
        ("SCAN", "0", "COUNT", "abc", "FOO"),
        ("SCAN", "0", "FOO", "bar", "COUNT", "abc"),
        # one key: every walk returns it, whatever the cursor's spelling
        ("SCAN", "0"),
        ("SCAN", ""),
        ("SCAN", "+0"),
        ("SCAN", "-0"),
        ("SCAN", b"0\x00junk"),
        ("SCAN", "0", "MATCH", "a"),
        ("SCAN", "0", "MATCH", "b*"),
        ("SCAN", "0", "match", "[a-c]", "count", "100"),
        ("SCAN", "0", "TYPE", "string"),
        ("SCAN", "0", "TYPE", "STRING"),
        ("SCAN", "0", "TYPE", "list"),
        ("SCAN", "0", "TYPE", "nosuchtype"),
        ("SCAN", "0", "TYPE", b"string\x00x"),
        ("SCAN", "0", b"count\x00x", "5"),
        ("SCAN", "0", "COUNT", "10", "COUNT", "20", "MATCH", "x", "MATCH", "a"),
        ("KEYS", "a"),
        ("KEYS", "b"),
        ("KEYS", "[a]"),
        ("KEYS", "*"),
        ("TYPE", "a"),
        ("TYPE", "missing"),
        ("DEL", "a"),
        ("SCAN", "0"),
        ("KEYS", "*"),
    ],
})


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


#
# Where the two servers legitimately differ in order (KEYS and SCAN walk
# hash tables with different hash functions; SCAN's cursors are positions in
# those tables), the sets of keys are compared, not their order; where they
# differ in values that depend on the machine (timings, memory, ids), the
# shapes are.


def scan_all(conn, *options, max_calls=100000):
    """Every key a complete SCAN returns, and how many calls it took."""
    keys, cursor, calls = [], b"0", 0
    while True:
        reply = conn.cmd("SCAN", cursor, *options)
        assert isinstance(reply, list) and len(reply) == 2, reply
        cursor, batch = reply
        keys.extend(batch)
        calls += 1
        if cursor == b"0" or calls >= max_calls:
            return keys, calls


def populate(pair, n, prefix="key:"):
    """n keys of three kinds on both servers, pipelined."""
    data = b"".join(
        encode("SET", "%s%d" % (prefix if i % 3 else "lock:", i), "v%d" % i)
        for i in range(n))
    pair.send_raw(data, n)


@pytest.mark.parametrize("proto", PROTOS)
def test_keys_returns_the_same_set(pair, proto):
    switch_proto(pair, proto)
    populate(pair, 300)
    check_script(pair, [("SET", b"bin\x00\r\n", "v"), ("SET", "a*b", "v"), ("SET", "a?b", "v")])
    for pattern in ("*", "lock:*", "key:1*", "*[13]", "key:?", "a\\*b", "a?b", "nomatch*",
                    b"bin\x00*", "*\r\n", "[a-z]*"):
        got, want = pair.both("KEYS", pattern)
        got_keys, want_keys = lt.parse_reply(got)[0], lt.parse_reply(want)[0]
        assert sorted(got_keys) == sorted(want_keys), pattern
        assert len(got_keys) == len(set(got_keys)), pattern


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("options", [
    (), ("COUNT", "1"), ("COUNT", "7"), ("COUNT", "1000"), ("MATCH", "lock:*"),
    ("MATCH", "key:1?"), ("MATCH", "lock:*", "COUNT", "3"), ("TYPE", "string"),
    ("TYPE", "STRING", "COUNT", "50"), ("TYPE", "hash"), ("TYPE", "none"),
    ("MATCH", "*5", "TYPE", "string", "COUNT", "20"), ("MATCH", "nothing*"),
], ids=lambda o: "-".join(o) or "plain")
def test_scan_returns_the_same_set(pair, proto, options):
    """A complete SCAN returns the same keys on both (in another order: the
    tables differ), each once when nothing changes during the walk, and
    COUNT bounds each call's work as Redis's does."""
    switch_proto(pair, proto)
    populate(pair, 500)
    got, got_calls = scan_all(pair.latch, *options)
    want, want_calls = scan_all(pair.redis, *options)
    assert sorted(got) == sorted(want)
    assert len(got) == len(set(got)), "a key was returned twice on a stable table"
    count = int(options[options.index("COUNT") + 1]) if "COUNT" in options else 10
    if not options or options == ("COUNT", count):
        # Without filters each call returns about COUNT keys, as Redis's.
        assert got_calls >= 500 // (count * 10 + 1)


def test_scan_over_a_keyspace_that_rehashes_while_scanned(pair):
    """SCAN's guarantee: a key present for the whole walk is returned at
    least once, while keys are added (the table doubles several times) and
    then removed (it halves again) between the calls. Checked on both."""
    stable = ["stable:%d" % i for i in range(200)]
    pair.send_raw(b"".join(encode("SET", k, "v") for k in stable), len(stable))
    for conn in (pair.latch, pair.redis):
        seen, cursor, calls, added = set(), b"0", 0, 0
        while True:
            cursor, batch = conn.cmd("SCAN", cursor, "COUNT", "5")
            seen.update(batch)
            calls += 1
            # Grow to 20,000 keys, then shrink back, while the walk goes on.
            if added < 20000:
                conn.send(b"".join(encode("SET", "churn:%d" % (added + j), "v")
                                   for j in range(400)))
                conn.read_n_raw(400)
                added += 400
            elif conn.cmd("DBSIZE") > 300:
                victims = ["churn:%d" % j for j in range(added - 400, added)]
                conn.cmd("DEL", *victims)
                added -= 400
            if cursor == b"0":
                break
            assert calls < 100000
        missing = [k for k in stable if k.encode() not in seen]
        assert not missing, "%s: %d stable keys never returned" % (conn.port, len(missing))
        assert calls > 50  # the walk really spanned the resizes


def test_scan_and_keys_skip_expired_keys(pair):
    check_script(pair, [("SET", "live", "v"), ("SET", "gone", "v", "PX", "1")])
    time.sleep(0.05)
    for conn in (pair.latch, pair.redis):
        assert conn.cmd("KEYS", "*") == [b"live"]
        assert scan_all(conn)[0] == [b"live"]
        assert scan_all(conn, "TYPE", "string")[0] == [b"live"]


def test_object_idletime_counts_per_key(pair):
    """OBJECT IDLETIME: seconds since the key was last read or written,
    per key. (Redis shares the objects of the integers 0-9999 between keys,
    so for those it reports the shared object's idle time.)"""
    c = pair.latch
    assert c.cmd("SET", "k", "5") == b"OK"
    assert c.cmd("SET", "j", "abc") == b"OK"
    assert c.cmd("OBJECT", "IDLETIME", "k") in (0, 1)
    time.sleep(2.1)
    assert c.cmd("OBJECT", "IDLETIME", "k") >= 2
    # TYPE, TTL, EXISTS, OBJECT and SCAN do not count as accesses; GET does
    for probe in (("TYPE", "k"), ("TTL", "k"), ("EXISTS", "k"), ("OBJECT", "ENCODING", "k"),
                  ("SCAN", "0", "TYPE", "string")):
        c.cmd(*probe)
    assert c.cmd("OBJECT", "IDLETIME", "k") >= 2
    assert c.cmd("GET", "k") == b"5"
    assert c.cmd("OBJECT", "IDLETIME", "k") in (0, 1)
    assert c.cmd("TOUCH", "j") == 1
    assert c.cmd("OBJECT", "IDLETIME", "j") in (0, 1)
    assert pair.redis.cmd("SET", "r", "abc") == b"OK"
    assert pair.redis.cmd("OBJECT", "IDLETIME", "r") in (0, 1)
