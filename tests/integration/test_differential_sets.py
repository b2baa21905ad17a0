"""Differential family: the set commands (SADD … SSCAN, SINTER/SUNION/SDIFF
and their STORE forms, SINTERCARD) against redis-server 7.0, byte for byte
in RESP2 and RESP3 (differential.py).

An intset lists its members ascending in latch as in Redis, so replies that
list one are compared exactly (SMEMBERS, SINTER walking an intset, SUNION
and SDIFF of integers, which Redis builds as a new intset); a hashtable's
order depends on the hash function, so replies that list one are compared
sorted (Unordered, with a comment)."""

import pytest

from differential import PROTOS, Unordered, check_script, switch_proto

SCRIPTS = {
    "sadd_srem_basics_intset": [
        ("SADD", "s", "17"),
        ("OBJECT", "ENCODING", "s"),
        ("SADD", "s", "16", "16", "-3", "100000", "5000000000"),
        ("SADD", "s", "16"),
        ("SCARD", "s"),
        ("SMEMBERS", "s"),  # an intset: ascending, exactly as Redis
        ("SISMEMBER", "s", "16"),
        ("SISMEMBER", "s", "016"),
        ("SISMEMBER", "s", "18"),
        ("SISMEMBER", "s", "x"),
        ("SMISMEMBER", "s", "16", "18", "-3", "x"),
        ("SMISMEMBER", "missing", "a", "b"),
        ("SMISMEMBER", "s"),
        ("SREM", "s", "16", "x", "999"),
        ("SREM", "s", "-3"),
        ("SMEMBERS", "s"),
        ("OBJECT", "ENCODING", "s"),
        ("SREM", "s", "17", "100000", "5000000000", "1"),
        ("EXISTS", "s"),
        ("SREM", "missing", "a"),
        ("SMEMBERS", "missing"),
        ("SCARD", "missing"),
        ("SISMEMBER", "missing", "a"),
    ],
    "sadd_hashtable": [
        ("SADD", "s", "foo"),
        ("OBJECT", "ENCODING", "s"),
        ("SADD", "s", "bar", "foo", ""),
        ("SCARD", "s"),
        Unordered("SMEMBERS", "s"),  # a hashtable's order is its own
        ("SADD", "i", "1", "2", "3"),
        ("OBJECT", "ENCODING", "i"),
        ("SADD", "i", "a"),
        ("OBJECT", "ENCODING", "i"),
        ("SADD", "j", "213244124402402314402033402"),
        ("OBJECT", "ENCODING", "j"),
        ("SADD", "k", "9223372036854775807", "-9223372036854775808"),
        ("OBJECT", "ENCODING", "k"),
        ("SMEMBERS", "k"),
        ("SADD", "k", "9223372036854775808"),
        ("OBJECT", "ENCODING", "k"),
        ("SADD", "z", "01", "+1", " 1", "1 ", "0x1", "-0"),
        ("OBJECT", "ENCODING", "z"),
        ("SCARD", "z"),
        ("SREM", "i", "a", "1", "2", "3"),
        ("SADD", "i", "4"),
        ("OBJECT", "ENCODING", "i"),
        ("SADD", "s"),
        ("SREM", "s"),
        ("SCARD", "s", "x"),
        ("SMEMBERS",),
    ],
    "intset_limit": [
        ("CONFIG", "SET", "set-max-intset-entries", "3"),
        ("SADD", "s", "1", "2", "3"),
        ("OBJECT", "ENCODING", "s"),
        ("SADD", "s", "4"),
        ("OBJECT", "ENCODING", "s"),
        ("SADD", "t", "1", "2", "3", "4"),
        ("OBJECT", "ENCODING", "t"),
        ("SUNIONSTORE", "u", "s"),
        ("OBJECT", "ENCODING", "u"),
        ("SINTERSTORE", "v", "s", "t"),
        ("OBJECT", "ENCODING", "v"),
        ("CONFIG", "SET", "set-max-intset-entries", "512"),
        ("SUNIONSTORE", "w", "s"),
        ("OBJECT", "ENCODING", "w"),
        ("SMEMBERS", "w"),
    ],
    "wrongtype": [
        ("SET", "str", "v"),
        ("SADD", "str", "m"),
        ("SREM", "str", "m"),
        ("SISMEMBER", "str", "m"),
        ("SMISMEMBER", "str", "m"),
        ("SMEMBERS", "str"),
        ("SCARD", "str"),
        ("SPOP", "str"),
        ("SPOP", "str", "2"),
        ("SRANDMEMBER", "str"),
        ("SRANDMEMBER", "str", "2"),
        ("SSCAN", "str", "0"),
        ("SADD", "s", "a"),
        ("SINTER", "s", "str"),
        ("SINTER", "missing", "str"),
        ("SUNION", "s", "str"),
        ("SDIFF", "missing", "str"),
        ("SINTERSTORE", "d", "s", "str"),
        ("SUNIONSTORE", "d", "str"),
        ("SDIFFSTORE", "d", "s", "str"),
        ("SINTERCARD", "2", "s", "str"),
        ("SMOVE", "str", "s", "a"),
        ("SMOVE", "s", "str", "a"),
        ("SMOVE", "missing", "str", "a"),
        ("EXISTS", "d"),
        ("GET", "s"),
        ("HSET", "s", "f", "v"),
    ],
    "spop_and_srandmember_deterministic_cases": [
        ("SADD", "s", "3", "1", "2"),
        ("SRANDMEMBER", "s", "3"),  # the whole intset, ascending
        ("SRANDMEMBER", "s", "100"),
        ("SRANDMEMBER", "s", "0"),
        ("SRANDMEMBER", "missing"),
        ("SRANDMEMBER", "missing", "5"),
        ("SRANDMEMBER", "missing", "-5"),
        ("SRANDMEMBER", "s", "x"),
        ("SRANDMEMBER", "s", "1", "2"),
        ("SRANDMEMBER", "s", "-9223372036854775808"),
        ("SRANDMEMBER", "s", "9223372036854775808"),
        ("SADD", "one", "only"),
        ("SRANDMEMBER", "one"),
        ("SRANDMEMBER", "one", "-3"),
        ("SRANDMEMBER", "one", "1"),
        ("SPOP", "missing"),
        ("SPOP", "missing", "3"),
        ("SPOP", "missing", "0"),
        ("SPOP", "s", "-1"),
        ("SPOP", "s", "x"),
        ("SPOP", "s", "1", "2"),
        ("SPOP", "s", "0"),
        ("SPOP", "s", "3"),  # the whole set (a union of it: ascending), then gone
        ("EXISTS", "s"),
        ("SPOP", "one"),
        ("EXISTS", "one"),
        ("SADD", "t", "a", "b"),
        Unordered("SPOP", "t", "10"),  # a hashtable, all of it
        ("EXISTS", "t"),
        ("SADD", "u", "x"),
        ("EXPIRE", "u", "1000"),
        ("SPOP", "u", "1"),
        ("EXISTS", "u"),
    ],
    "smove": [
        ("SADD", "a", "1", "2", "x"),
        ("SADD", "b", "3"),
        ("SMOVE", "a", "b", "1"),
        ("SMOVE", "a", "b", "1"),
        ("SMOVE", "a", "b", "nope"),
        ("SMOVE", "a", "fresh", "2"),
        ("SMEMBERS", "fresh"),
        ("OBJECT", "ENCODING", "fresh"),
        ("SMOVE", "a", "a", "x"),
        ("SMOVE", "a", "a", "nope"),
        ("SMOVE", "missing", "b", "1"),
        ("SMOVE", "a", "b", "x"),
        ("EXISTS", "a"),
        Unordered("SMEMBERS", "b"),  # "x" made it a hashtable
        ("OBJECT", "ENCODING", "b"),
        ("SMOVE", "b", "c"),
    ],
    "sinter_sunion_sdiff": [
        ("SADD", "i1", "1", "2", "3", "4", "5"),
        ("SADD", "i2", "3", "4", "5", "6"),
        ("SADD", "i3", "5", "4", "7"),
        ("SINTER", "i1", "i2"),
        ("SINTER", "i1", "i2", "i3"),
        ("SINTER", "i1", "missing"),
        ("SINTER", "missing"),
        ("SINTER", "i1"),
        ("SINTER", "i1", "i1"),
        ("SUNION", "i1", "i2", "i3"),
        ("SUNION", "i1", "missing"),
        ("SUNION", "missing"),
        ("SDIFF", "i1", "i2"),
        ("SDIFF", "i1", "i2", "i3"),
        ("SDIFF", "i1", "i1"),
        ("SDIFF", "i1", "missing"),
        ("SDIFF", "missing", "i1"),
        ("SDIFF", "i3", "i1", "i2"),
        ("SADD", "h1", "a", "b", "c", "1"),
        ("SADD", "h2", "b", "c", "d", "2"),
        Unordered("SINTER", "h1", "h2"),  # hashtables: their own order
        Unordered("SUNION", "h1", "h2", "i1"),
        Unordered("SDIFF", "h1", "h2"),
        ("SINTER", "h1", "i1"),
        ("SDIFF", "i1", "h1", "h2"),
        ("SINTER",),
        ("SUNION",),
        ("SDIFF",),
    ],
    "store_forms": [
        ("SADD", "i1", "1", "2", "3", "4"),
        ("SADD", "i2", "3", "4", "5"),
        ("SINTERSTORE", "d", "i1", "i2"),
        ("SMEMBERS", "d"),
        ("OBJECT", "ENCODING", "d"),
        ("SUNIONSTORE", "d", "i1", "i2"),
        ("SMEMBERS", "d"),
        ("SDIFFSTORE", "d", "i1", "i2"),
        ("SMEMBERS", "d"),
        ("SET", "str", "x", "EX", "100"),
        ("SINTERSTORE", "str", "i1", "i2"),
        ("TYPE", "str"),
        ("TTL", "str"),
        ("SINTERSTORE", "str", "i1", "missing"),
        ("EXISTS", "str"),
        ("SINTERSTORE", "nothing", "i1", "missing"),
        ("EXISTS", "nothing"),
        ("SUNIONSTORE", "e", "missing"),
        ("EXISTS", "e"),
        ("SDIFFSTORE", "d", "i1", "i1"),
        ("EXISTS", "d"),
        ("SUNIONSTORE", "i1", "i1", "i2"),  # the destination is a source
        ("SMEMBERS", "i1"),
        ("SDIFFSTORE", "i2", "i1", "i2"),
        ("SMEMBERS", "i2"),
        ("SADD", "h", "a", "b", "3"),
        ("SINTERSTORE", "d", "h", "i1"),
        ("OBJECT", "ENCODING", "d"),
        ("SMEMBERS", "d"),
        ("SUNIONSTORE", "d", "h", "i1"),
        ("OBJECT", "ENCODING", "d"),
        ("SCARD", "d"),
        ("SINTERSTORE", "d"),
        ("SUNIONSTORE", "d"),
    ],
    "sintercard": [
        ("SADD", "a", "1", "2", "3", "4", "x"),
        ("SADD", "b", "2", "3", "4", "x", "y"),
        ("SINTERCARD", "2", "a", "b"),
        ("SINTERCARD", "2", "a", "b", "LIMIT", "2"),
        ("SINTERCARD", "2", "a", "b", "limit", "0"),
        ("SINTERCARD", "2", "a", "b", "LIMIT", "100"),
        ("SINTERCARD", "1", "a"),
        ("SINTERCARD", "2", "a", "missing"),
        ("SINTERCARD", "0", "a"),
        ("SINTERCARD", "-1", "a"),
        ("SINTERCARD", "x", "a"),
        ("SINTERCARD", "3", "a", "b"),
        ("SINTERCARD", "2", "a", "b", "LIMIT"),
        ("SINTERCARD", "2", "a", "b", "LIMIT", "-1"),
        ("SINTERCARD", "2", "a", "b", "LIMIT", "x"),
        ("SINTERCARD", "2", "a", "b", "BOGUS", "1"),
        ("SINTERCARD", "1", "a", "b"),
        ("SINTERCARD", "1"),
    ],
    "sscan_intset": [
        ("SADD", "s", "5", "1", "10", "11", "111"),
        ("SSCAN", "s", "0"),
        ("SSCAN", "s", "0", "MATCH", "1*"),
        ("SSCAN", "s", "0", "COUNT", "1"),
        ("SSCAN", "s", "0", "COUNT", "0"),
        ("SSCAN", "s", "0", "TYPE", "set"),
        ("SSCAN", "s", "abc"),
        ("SSCAN", "missing", "0", "NOPE"),
        ("SSCAN", "s"),
    ],
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


def _full_scan(conn, key, *opts):
    cursor, seen = b"0", []
    while True:
        cursor, items = conn.cmd("SSCAN", key, cursor, *opts)
        seen.extend(items)
        if cursor == b"0":
            return seen


@pytest.mark.parametrize("proto", PROTOS)
def test_sscan_of_a_hashtable_returns_every_member(pair, proto):
    switch_proto(pair, proto)
    members = ["m%d" % i for i in range(1500)]
    for c in (pair.latch, pair.redis):
        for i in range(0, len(members), 500):
            c.cmd("SADD", "s", *members[i:i + 500])
    for opts in ((), ("COUNT", "3"), ("MATCH", "m1*", "COUNT", "50")):
        got = _full_scan(pair.latch, "s", *opts)
        want = _full_scan(pair.redis, "s", *opts)
        assert set(got) == set(want), opts


def test_random_members_and_pops(latch):
    # Random replies cannot be compared with Redis's: their shape and their
    # members can, in each of Redis's cases, and SPOP removes what it gives.
    for key, members in (("ints", [str(i) for i in range(200)]),
                         ("strs", ["m%d" % i for i in range(800)])):
        latch.cmd("SADD", key, *members)
        for count in (1, 7, len(members) // 2, len(members) - 1):
            got = latch.cmd("SRANDMEMBER", key, str(count))
            assert len(got) == count and len(set(got)) == count
            assert set(x.decode() for x in got) <= set(members)
        rep = latch.cmd("SRANDMEMBER", key, "-2000")
        assert len(rep) == 2000 and len(set(rep)) > 1
        left = set(members)
        for count in (1, 3, len(members) // 10, len(members) // 2):
            popped = latch.cmd("SPOP", key, str(count))
            assert len(popped) == count
            popped = set(x.decode() for x in popped)
            assert popped <= left
            left -= popped
            assert latch.cmd("SCARD", key) == len(left)
        # Most of what is left (Redis's third case: the set is rebuilt from
        # what stays).
        popped = set(x.decode() for x in latch.cmd("SPOP", key, str(len(left) - 2)))
        left -= popped
        assert set(x.decode() for x in latch.cmd("SMEMBERS", key)) == left
        assert latch.cmd("SPOP", key).decode() in left
