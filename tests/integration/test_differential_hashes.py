"""Differential family: the hash commands (HSET … HSCAN) against
redis-server 7.0, byte for byte in RESP2 and RESP3 (differential.py).

A listpack hash keeps insertion order in latch as in Redis, so its replies
are compared exactly; a hashtable's order depends on the hash function, so
replies that list one are compared sorted (Unordered, with a comment)."""

import pytest

from differential import PROTOS, Unordered, check_script, switch_proto

BIG = "x" * 70  # longer than hash-max-listpack-value (64): a hashtable

SCRIPTS = {
    "hset_hget_basics": [
        ("HSET", "h", "f1", "v1"),
        ("HSET", "h", "f1", "v1b", "f2", "v2", "f3", "3"),
        ("HGET", "h", "f1"),
        ("HGET", "h", "nope"),
        ("HGET", "missing", "f"),
        ("HMGET", "h", "f1", "nope", "f3"),
        ("HMGET", "missing", "a", "b"),
        ("HGETALL", "h"),
        ("HGETALL", "missing"),
        ("HKEYS", "h"),
        ("HVALS", "h"),
        ("HKEYS", "missing"),
        ("HVALS", "missing"),
        ("HLEN", "h"),
        ("HLEN", "missing"),
        ("HSTRLEN", "h", "f1"),
        ("HSTRLEN", "h", "f3"),
        ("HSTRLEN", "h", "nope"),
        ("HSTRLEN", "missing", "f"),
        ("HEXISTS", "h", "f2"),
        ("HEXISTS", "h", "nope"),
        ("HEXISTS", "missing", "f"),
        ("TYPE", "h"),
        ("OBJECT", "ENCODING", "h"),
        ("HSET", "h", "", ""),
        ("HGET", "h", ""),
        ("HSET", "bin", "a\x00b", "c\r\nd"),
        ("HGETALL", "bin"),
    ],
    "hset_arity_and_hmset": [
        ("HSET", "h"),
        ("HSET", "h", "f"),
        ("HSET", "h", "f", "v", "g"),
        ("HMSET", "h", "f", "v", "g"),
        ("HMSET", "h", "f", "v", "g", "w"),
        ("HMSET", "h"),
        ("HGETALL", "h"),
        ("HSETNX", "h", "f", "other"),
        ("HSETNX", "h", "new", "x"),
        ("HSETNX", "fresh", "a", "b"),
        ("HSETNX", "h", "f"),
        ("HGETALL", "h"),
        ("HGET", "h"),
        ("HMGET", "h"),
        ("HGETALL",),
        ("HLEN", "h", "x"),
        ("HEXISTS", "h"),
        ("HSTRLEN", "h"),
    ],
    "hdel": [
        ("HSET", "h", "a", "1", "b", "2", "c", "3"),
        ("HDEL", "h", "a"),
        ("HDEL", "h", "a"),
        ("HDEL", "h", "nope", "b", "b"),
        ("HDEL", "missing", "a"),
        ("EXISTS", "h"),
        ("HDEL", "h", "c", "zzz"),
        ("EXISTS", "h"),
        ("HDEL", "h"),
    ],
    "wrongtype": [
        ("SET", "s", "v"),
        ("HSET", "s", "f", "v"),
        ("HSETNX", "s", "f", "v"),
        ("HMSET", "s", "f", "v"),
        ("HGET", "s", "f"),
        ("HMGET", "s", "f"),
        ("HGETALL", "s"),
        ("HKEYS", "s"),
        ("HVALS", "s"),
        ("HLEN", "s"),
        ("HSTRLEN", "s", "f"),
        ("HEXISTS", "s", "f"),
        ("HDEL", "s", "f"),
        ("HINCRBY", "s", "f", "1"),
        ("HINCRBYFLOAT", "s", "f", "1"),
        ("HRANDFIELD", "s"),
        ("HRANDFIELD", "s", "3"),
        ("HSCAN", "s", "0"),
        ("HSET", "h", "f", "v"),
        ("GET", "h"),
        ("INCR", "h"),
        ("APPEND", "h", "x"),
        ("SADD", "h", "m"),
    ],
    "hincrby": [
        ("HINCRBY", "h", "n", "5"),
        ("HINCRBY", "h", "n", "-12"),
        ("HGET", "h", "n"),
        ("HINCRBY", "h", "n", "x"),
        ("HINCRBY", "h", "n", "1.5"),
        ("HINCRBY", "h", "n", ""),
        ("HSET", "h", "s", "abc", "sp", " 1", "big", "9223372036854775807", "neg",
         "-9223372036854775808", "lead", "01"),
        ("HINCRBY", "h", "s", "1"),
        ("HINCRBY", "h", "sp", "1"),
        ("HINCRBY", "h", "lead", "1"),
        ("HINCRBY", "h", "big", "1"),
        ("HINCRBY", "h", "big", "0"),
        ("HINCRBY", "h", "neg", "-1"),
        ("HINCRBY", "h", "neg", "9223372036854775807"),
        ("HINCRBY", "h", "x", "9223372036854775808"),
        ("HINCRBY", "fresh", "f", "-3"),
        ("HGETALL", "h"),
        ("HGETALL", "fresh"),
        ("HINCRBY", "h", "n"),
    ],
    "hincrbyfloat": [
        ("HINCRBYFLOAT", "h", "f", "10.5"),
        ("HINCRBYFLOAT", "h", "f", "0.1"),
        ("HINCRBYFLOAT", "h", "f", "-5"),
        ("HINCRBYFLOAT", "h", "f", "1e3"),
        ("HINCRBYFLOAT", "h", "f", "0x10"),
        ("HINCRBYFLOAT", "h", "f", "3.0e-2"),
        ("HINCRBYFLOAT", "h", "f", "abc"),
        ("HINCRBYFLOAT", "h", "f", ""),
        ("HINCRBYFLOAT", "h", "f", "inf"),
        ("HINCRBYFLOAT", "h", "f", "-inf"),
        ("HINCRBYFLOAT", "h", "f", "nan"),
        ("HINCRBYFLOAT", "h", "f", " 1"),
        ("HINCRBYFLOAT", "h", "g", "1.23456789012345678"),
        ("HSET", "h", "s", "abc", "n", "5"),
        ("HINCRBYFLOAT", "h", "s", "1"),
        ("HINCRBYFLOAT", "h", "n", "1.5"),
        ("HINCRBYFLOAT", "h", "n", "-6.5"),
        ("HSET", "h", "huge", "1e308"),
        ("HINCRBYFLOAT", "h", "huge", "1e308"),
        ("HINCRBYFLOAT", "h", "huge", "-1e308"),
        ("OBJECT", "ENCODING", "h"),
        Unordered("HGETALL", "h", pairs=True),  # "huge" made it a hashtable
        ("HINCRBYFLOAT", "h", "f"),
    ],
    "hrandfield_deterministic_cases": [
        # Redis's CASE 2 (count >= size) returns the whole hash in its own
        # order: a listpack's, which is insertion order, compared exactly.
        ("HSET", "h", "a", "1", "b", "2", "c", "3"),
        ("HRANDFIELD", "h", "3"),
        ("HRANDFIELD", "h", "10", "WITHVALUES"),
        ("HRANDFIELD", "h", "10", "withvalues"),
        ("HRANDFIELD", "h", "0"),
        ("HRANDFIELD", "h", "0", "WITHVALUES"),
        ("HRANDFIELD", "missing"),
        ("HRANDFIELD", "missing", "5"),
        ("HRANDFIELD", "missing", "-5", "WITHVALUES"),
        ("HRANDFIELD", "h", "x"),
        ("HRANDFIELD", "h", "1", "WITHVALUE"),
        ("HRANDFIELD", "h", "1", "WITHVALUES", "x"),
        ("HRANDFIELD", "h", "-9223372036854775808"),
        ("HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"),
        ("HRANDFIELD", "h", "4611686018427387904", "WITHVALUES"),
        ("HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"),
        ("HRANDFIELD", "h", "-9223372036854775808", "WITHVALUES"),
        ("HRANDFIELD", "h", "9223372036854775808"),
        ("HRANDFIELD",),
        ("HSET", "one", "only", "v"),
        ("HRANDFIELD", "one"),
        ("HRANDFIELD", "one", "-3"),
        ("HRANDFIELD", "one", "-3", "WITHVALUES"),
        ("HRANDFIELD", "one", "1", "WITHVALUES"),
    ],
    "hscan_listpack": [
        ("HSET", "h", "a", "1", "b", "2", "ab", "3", "c", "4"),
        ("HSCAN", "h", "0"),
        ("HSCAN", "h", "0", "MATCH", "a*"),
        ("HSCAN", "h", "0", "match", "*", "count", "1"),
        ("HSCAN", "h", "0", "COUNT", "0"),
        ("HSCAN", "h", "0", "COUNT", "x"),
        ("HSCAN", "h", "0", "TYPE", "string"),
        ("HSCAN", "h", "0", "MATCH"),
        ("HSCAN", "h", "x"),
        ("HSCAN", "h", "-1"),
        ("HSCAN", "h", " 1"),
        ("HSCAN", "h", "18446744073709551616"),
        ("HSCAN", "missing", "0", "BOGUS"),
        ("HSCAN", "missing", "x"),
        ("HSCAN", "h", "7"),
    ],
    "hashtable_encoding": [
        ("HSET", "h", "small", "v"),
        ("OBJECT", "ENCODING", "h"),
        ("HSET", "h", "big", BIG),
        ("OBJECT", "ENCODING", "h"),
        ("HDEL", "h", "big"),
        ("OBJECT", "ENCODING", "h"),
        ("HSET", "k", BIG, "v"),
        ("OBJECT", "ENCODING", "k"),
        ("HSET", "j", "a", "1"),
        ("HINCRBYFLOAT", "j", "a", "0.000000000000000000000000000000000000000000000000000001"),
        ("OBJECT", "ENCODING", "j"),
        ("HGET", "j", "a"),
        ("HSTRLEN", "h", "small"),
        Unordered("HGETALL", "h", pairs=True),  # a hashtable's order is its own
        Unordered("HKEYS", "k"),
        Unordered("HVALS", "k"),
        ("HRANDFIELD", "k", "5", "WITHVALUES"),
        ("HLEN", "h"),
    ],
    "encoding_settings": [
        ("CONFIG", "SET", "hash-max-listpack-entries", "2"),
        ("HSET", "h", "a", "1", "b", "2"),
        ("OBJECT", "ENCODING", "h"),
        ("HSET", "h", "c", "3"),
        ("OBJECT", "ENCODING", "h"),
        ("CONFIG", "SET", "hash-max-ziplist-entries", "512"),
        ("CONFIG", "SET", "hash-max-listpack-value", "3"),
        ("HSET", "v", "a", "123"),
        ("OBJECT", "ENCODING", "v"),
        ("HSETNX", "v", "b", "1234"),
        ("OBJECT", "ENCODING", "v"),
        ("HSET", "w", "a", "1"),
        ("HINCRBY", "w", "a", "1000"),
        ("OBJECT", "ENCODING", "w"),
        ("CONFIG", "SET", "hash-max-ziplist-value", "64"),
        # The entry limit is checked after an update too (hashTypeSet): a
        # hash over a lowered limit converts on the next HSET or HINCRBY of
        # a field it has.
        ("CONFIG", "SET", "hash-max-listpack-entries", "128"),
        ("HSET", "x", "a", "1", "b", "2", "c", "3"),
        ("HSET", "y", "a", "1", "b", "2", "c", "3"),
        ("CONFIG", "SET", "hash-max-listpack-entries", "2"),
        ("OBJECT", "ENCODING", "x"),
        ("HINCRBY", "x", "a", "1"),
        ("OBJECT", "ENCODING", "x"),
        ("HSET", "y", "a", "5"),
        ("OBJECT", "ENCODING", "y"),
        ("CONFIG", "SET", "hash-max-listpack-entries", "128"),
    ],
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


def _full_scan(conn, cmd, key, *opts):
    """Every element a complete HSCAN/SSCAN walk returns, and the calls."""
    cursor, seen, calls = b"0", [], 0
    while True:
        reply = conn.cmd(cmd, key, cursor, *opts)
        cursor, items = reply[0], reply[1]
        seen.extend(items)
        calls += 1
        if cursor == b"0":
            return seen, calls


@pytest.mark.parametrize("proto", PROTOS)
def test_hscan_of_a_hashtable_returns_every_pair(pair, proto):
    # A hashtable's cursor and its steps are latch's own (another hash
    # function): what must agree is what a whole walk returns.
    switch_proto(pair, proto)
    for c in (pair.latch, pair.redis):
        for i in range(0, 1000, 100):
            args = []
            for j in range(i, i + 100):
                args += ["field:%d" % j, "value:%d" % j]
            c.cmd("HSET", "h", *args)
    for opts in ((), ("COUNT", "7"), ("MATCH", "field:1*"), ("MATCH", "*9", "COUNT", "1000")):
        got, calls = _full_scan(pair.latch, "HSCAN", "h", *opts)
        want, _ = _full_scan(pair.redis, "HSCAN", "h", *opts)
        got_pairs = {got[i]: got[i + 1] for i in range(0, len(got), 2)}
        want_pairs = {want[i]: want[i + 1] for i in range(0, len(want), 2)}
        assert got_pairs == want_pairs, opts
        if not opts:
            assert calls > 10, "COUNT 10 walks in steps"


def test_hrandfield_draws_from_the_hash(latch):
    # Random replies cannot be compared with Redis's: their shape and their
    # members can, in each of Redis's cases.
    for key, n, big in (("small", 20, False), ("large", 600, True)):
        args = []
        for i in range(n):
            args += ["f%d" % i, ("v%d" % i) + ("x" * 70 if big else "")]
        latch.cmd("HSET", key, *args)
        fields = set(latch.cmd("HKEYS", key))
        for count in (1, 5, n // 2, n - 1):
            got = latch.cmd("HRANDFIELD", key, str(count))
            assert len(got) == count and len(set(got)) == count and set(got) <= fields
            flat = latch.cmd("HRANDFIELD", key, str(count), "WITHVALUES")
            assert len(flat) == 2 * count
            for f, v in zip(flat[::2], flat[1::2]):
                assert latch.cmd("HGET", key, f) == v
        rep = latch.cmd("HRANDFIELD", key, "-1000")
        assert len(rep) == 1000 and set(rep) <= fields
        assert len(set(rep)) > 1
        assert latch.cmd("HRANDFIELD", key) in fields
