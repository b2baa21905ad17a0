"""Differential family: lists — LPUSH … LPOS, LMOVE, RPOPLPUSH, LMPOP and the
blocking pops (BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH) — against
redis-server 7.0 in RESP2 and RESP3 (differential.py): every command, its
errors and edge cases, byte for byte.

The blocking pops are driven with several connections to each server in
lockstep: a client blocks, another pushes, and the blocked client's reply
(which key, which element, in which order) must be Redis's; timeouts,
CLIENT UNBLOCK and MULTI too."""

import pytest

from differential import (PROTOS, Clients, blocked_id, check_blocking, check_script,
                          switch_proto, wait_blocked)

BIG = "x" * 5000  # larger than a small node, smaller than the packed threshold

SCRIPTS = {
    "push_and_length": [
        ("LPUSH", "l", "a"),
        ("RPUSH", "l", "b", "c"),
        ("LPUSH", "l", "z", "y"),
        ("LLEN", "l"),
        ("LRANGE", "l", "0", "-1"),
        ("LPUSHX", "l", "w"),
        ("RPUSHX", "l", "d", "e"),
        ("LPUSHX", "none", "a"),
        ("RPUSHX", "none", "a", "b"),
        ("EXISTS", "none"),
        ("LLEN", "none"),
        ("LPUSH", "l"),
        ("RPUSHX", "l"),
        ("LLEN", "l", "x"),
        ("TYPE", "l"),
        ("OBJECT", "ENCODING", "l"),
        ("RPUSH", "big", BIG, BIG, "small", BIG),
        ("LLEN", "big"),
        ("OBJECT", "ENCODING", "big"),
        ("LINDEX", "big", "2"),
    ],
    "pop": [
        ("RPUSH", "l", "a", "b", "c", "d", "e", "f", "g"),
        ("LPOP", "l"),
        ("RPOP", "l"),
        ("LPOP", "l", "2"),
        ("RPOP", "l", "2"),
        ("LPOP", "l", "0"),
        ("RPOP", "l", "0"),
        ("LPOP", "l", "10"),
        ("EXISTS", "l"),
        ("LPOP", "l"),
        ("RPOP", "l"),
        ("LPOP", "l", "0"),
        ("LPOP", "l", "1"),
        ("RPOP", "l", "5"),
        ("LPOP", "l", "-1"),
        ("RPOP", "l", "x"),
        ("LPOP", "l", "1", "2"),
        ("LPOP", "l", "9223372036854775807"),
        ("RPOP", "l", "9223372036854775808"),
        ("LPOP",),
        ("RPUSH", "m", "1", "2", "3"),
        ("RPOP", "m", "9223372036854775807"),
    ],
    "index_and_range": [
        ("RPUSH", "l", "a", "b", "c", "d", "e"),
        ("LINDEX", "l", "0"),
        ("LINDEX", "l", "-1"),
        ("LINDEX", "l", "4"),
        ("LINDEX", "l", "5"),
        ("LINDEX", "l", "-6"),
        ("LINDEX", "l", "x"),
        ("LINDEX", "none", "x"),
        ("LINDEX", "none", "0"),
        ("LRANGE", "l", "0", "-1"),
        ("LRANGE", "l", "1", "-2"),
        ("LRANGE", "l", "-3", "-1"),
        ("LRANGE", "l", "3", "1"),
        ("LRANGE", "l", "-100", "100"),
        ("LRANGE", "l", "0", "-6"),
        ("LRANGE", "l", "5", "10"),
        ("LRANGE", "l", "-9223372036854775808", "9223372036854775807"),
        ("LRANGE", "none", "0", "-1"),
        ("LRANGE", "none", "x", "0"),
        ("LRANGE", "l", "0", "x"),
        ("LRANGE", "l", "0"),
    ],
    "set_insert": [
        ("RPUSH", "l", "a", "b", "c"),
        ("LSET", "l", "0", "A"),
        ("LSET", "l", "-1", "C"),
        ("LSET", "l", "3", "x"),
        ("LSET", "l", "-4", "x"),
        ("LSET", "l", "x", "x"),
        ("LSET", "none", "0", "x"),
        ("LSET", "none", "x", "x"),
        ("LSET", "l", "1", BIG),
        ("LRANGE", "l", "0", "-1"),
        ("LINSERT", "l", "BEFORE", "C", "B2"),
        ("LINSERT", "l", "after", "A", "A2"),
        ("LINSERT", "l", "AFTER", "C", "D"),
        ("LINSERT", "l", "BEFORE", "missing", "x"),
        ("LINSERT", "l", "AROUND", "A", "x"),
        ("LINSERT", "none", "BEFORE", "a", "x"),
        ("LINSERT", "none", "AROUND", "a", "x"),
        ("LINSERT", "l", "BEFORE", "A", BIG),
        ("LRANGE", "l", "0", "-1"),
        ("LINSERT", "l", "BEFORE"),
    ],
    "rem_trim": [
        ("RPUSH", "l", "a", "b", "a", "c", "a", "b", "a"),
        ("LREM", "l", "1", "a"),
        ("LRANGE", "l", "0", "-1"),
        ("LREM", "l", "-2", "a"),
        ("LRANGE", "l", "0", "-1"),
        ("LREM", "l", "0", "b"),
        ("LREM", "l", "0", "zz"),
        ("LREM", "l", "x", "a"),
        ("LREM", "none", "0", "a"),
        ("LREM", "l", "0", "a"),
        ("LREM", "l", "0", "c"),
        ("EXISTS", "l"),
        ("RPUSH", "t", "1", "2", "3", "4", "5"),
        ("LTRIM", "t", "1", "-2"),
        ("LRANGE", "t", "0", "-1"),
        ("LTRIM", "t", "0", "100"),
        ("LRANGE", "t", "0", "-1"),
        ("LTRIM", "t", "-1", "-1"),
        ("LRANGE", "t", "0", "-1"),
        ("LTRIM", "t", "2", "1"),
        ("EXISTS", "t"),
        ("LTRIM", "none", "0", "1"),
        ("LTRIM", "t", "x", "1"),
        ("LTRIM", "t", "0", "x"),
    ],
    "lpos": [
        ("RPUSH", "l", "a", "b", "c", "1", "2", "3", "c", "c"),
        ("LPOS", "l", "a"),
        ("LPOS", "l", "c"),
        ("LPOS", "l", "c", "RANK", "1"),
        ("LPOS", "l", "c", "RANK", "2"),
        ("LPOS", "l", "c", "RANK", "4"),
        ("LPOS", "l", "c", "RANK", "-1"),
        ("LPOS", "l", "c", "RANK", "-2"),
        ("LPOS", "l", "c", "RANK", "0"),
        ("LPOS", "l", "c", "COUNT", "0"),
        ("LPOS", "l", "c", "COUNT", "1"),
        ("LPOS", "l", "c", "COUNT", "2"),
        ("LPOS", "l", "c", "COUNT", "100"),
        ("LPOS", "l", "c", "COUNT", "0", "RANK", "2"),
        ("LPOS", "l", "c", "COUNT", "2", "RANK", "-1"),
        ("LPOS", "l", "a", "COUNT", "0", "MAXLEN", "1"),
        ("LPOS", "l", "c", "COUNT", "0", "MAXLEN", "1"),
        ("LPOS", "l", "c", "COUNT", "0", "MAXLEN", "3"),
        ("LPOS", "l", "c", "COUNT", "0", "MAXLEN", "3", "RANK", "-1"),
        ("LPOS", "l", "c", "COUNT", "0", "MAXLEN", "7", "RANK", "2"),
        ("LPOS", "l", "x"),
        ("LPOS", "l", "x", "COUNT", "2"),
        ("LPOS", "none", "x"),
        ("LPOS", "none", "x", "COUNT", "0"),
        ("LPOS", "l", "c", "RANK", "x"),
        ("LPOS", "l", "c", "COUNT", "-1"),
        ("LPOS", "l", "c", "COUNT", "x"),
        ("LPOS", "l", "c", "MAXLEN", "-1"),
        ("LPOS", "l", "c", "MAXLEN", "x"),
        ("LPOS", "l", "c", "RANK"),
        ("LPOS", "l", "c", "BOGUS", "1"),
        ("LPOS", "l", "c", "RANK", "-9223372036854775808"),
        ("LPOS", "l", "c", "RANK", "-9223372036854775808", "COUNT", "2"),
        ("LPOS", "l", "c", "RANK", "9223372036854775807", "COUNT", "0"),
        ("LPOS", "l"),
    ],
    "move": [
        ("RPUSH", "src", "a", "b", "c", "d"),
        ("LMOVE", "src", "dst", "LEFT", "RIGHT"),
        ("LMOVE", "src", "dst", "right", "left"),
        ("LMOVE", "src", "dst", "LEFT", "LEFT"),
        ("LRANGE", "src", "0", "-1"),
        ("LRANGE", "dst", "0", "-1"),
        ("RPOPLPUSH", "src", "dst"),
        ("EXISTS", "src"),
        ("RPOPLPUSH", "src", "dst"),
        ("LMOVE", "src", "dst", "LEFT", "RIGHT"),
        ("LMOVE", "dst", "dst", "LEFT", "RIGHT"),
        ("LMOVE", "dst", "dst", "RIGHT", "LEFT"),
        ("LMOVE", "dst", "dst", "LEFT", "LEFT"),
        ("LRANGE", "dst", "0", "-1"),
        ("LMOVE", "dst", "dst", "UP", "LEFT"),
        ("LMOVE", "dst", "dst", "LEFT", "DOWN"),
        ("LMOVE", "none", "dst", "UP", "LEFT"),
        ("RPUSH", "one", "x"),
        ("EXPIRE", "one", "1000"),
        ("RPOPLPUSH", "one", "one"),
        ("TTL", "one"),
        ("LMOVE", "one", "gone", "LEFT", "LEFT"),
        ("EXISTS", "one"),
        ("LRANGE", "gone", "0", "-1"),
        ("SET", "str", "v"),
        ("LMOVE", "gone", "str", "LEFT", "LEFT"),
        ("LMOVE", "str", "gone", "LEFT", "LEFT"),
        ("RPOPLPUSH", "str", "gone"),
        ("RPOPLPUSH", "none", "str"),
        ("LRANGE", "gone", "0", "-1"),
        ("LMOVE", "a", "b", "LEFT"),
    ],
    "lmpop": [
        ("RPUSH", "l1", "a", "b", "c", "d", "e"),
        ("RPUSH", "l2", "1", "2", "3"),
        ("LMPOP", "2", "l1", "l2", "LEFT"),
        ("LMPOP", "2", "l1", "l2", "RIGHT", "COUNT", "2"),
        ("LMPOP", "2", "none", "l2", "left", "count", "10"),
        ("LMPOP", "1", "l1", "RIGHT", "COUNT", "10"),
        ("LMPOP", "2", "l1", "l2", "LEFT"),
        ("LMPOP", "1", "l1", "LEFT", "COUNT", "0"),
        ("LMPOP", "1", "l1", "LEFT", "COUNT", "-1"),
        ("LMPOP", "1", "l1", "LEFT", "COUNT", "x"),
        ("LMPOP", "1", "l1", "LEFT", "COUNT"),
        ("LMPOP", "1", "l1", "LEFT", "COUNT", "1", "COUNT", "2"),
        ("LMPOP", "1", "l1", "LEFT", "bar"),
        ("LMPOP", "1", "l1", "MIDDLE"),
        ("LMPOP", "2", "l1", "LEFT"),
        ("LMPOP", "0", "l1", "LEFT"),
        ("LMPOP", "-1", "l1", "LEFT"),
        ("LMPOP", "x", "l1", "LEFT"),
        ("LMPOP", "9223372036854775807", "l1", "LEFT"),
        ("LMPOP", "1"),
        ("SET", "s", "v"),
        ("RPUSH", "l3", "z"),
        ("LMPOP", "2", "s", "l3", "LEFT"),
        ("LMPOP", "2", "l3", "s", "LEFT"),
        ("LMPOP", "2", "none", "s", "LEFT"),
    ],
    "blocking_without_waiting": [
        ("RPUSH", "l1", "a", "b", "c"),
        ("BLPOP", "none", "l1", "0"),
        ("BRPOP", "l1", "none", "0"),
        ("BLMPOP", "0", "2", "none", "l1", "LEFT", "COUNT", "5"),
        ("RPUSH", "l1", "a", "b", "c"),
        ("BLMOVE", "l1", "l2", "LEFT", "RIGHT", "0"),
        ("BRPOPLPUSH", "l1", "l2", "0"),
        ("LRANGE", "l2", "0", "-1"),
        ("BLPOP", "l1", "0.01"),
        ("BLPOP", "l1", "-1"),
        ("BLPOP", "l1", "x"),
        ("BLPOP", "l1", "inf"),
        ("BLPOP", "l1", "1e20"),
        ("BLPOP", "l1", "nan"),
        ("BLPOP", "l1", "9223372036854776"),
        ("BLPOP", "l1", "-0.0011"),
        ("BLPOP", "l1", " 1"),
        ("BRPOP", "l1", ""),
        ("BLMOVE", "l1", "l2", "LEFT", "RIGHT", "x"),
        ("BLMOVE", "l1", "l2", "UP", "RIGHT", "x"),
        ("BRPOPLPUSH", "l1", "l2", "-1"),
        ("BLMPOP", "x", "1", "l1", "LEFT"),
        ("BLMPOP", "x", "0", "l1", "LEFT"),
        ("BLMPOP", "x", "1", "l1", "BAD"),
        ("BLMPOP", "0", "1", "l1", "LEFT", "COUNT", "0"),
        ("BLMPOP", "0", "2", "l1", "LEFT"),
        ("SET", "s", "v"),
        ("BLPOP", "s", "0"),
        ("BLPOP", "none", "s", "0"),
        ("BRPOPLPUSH", "s", "l2", "0"),
        ("BRPOPLPUSH", "l2", "s", "0"),
        ("BLMPOP", "0", "1", "s", "LEFT"),
        ("BLPOP", "l1"),
    ],
    "in_multi_nothing_blocks": [
        ("RPUSH", "x", "foo"),
        ("MULTI",),
        ("BLPOP", "x", "0"),
        ("BLPOP", "x", "0"),
        ("BRPOPLPUSH", "x", "y", "0"),
        ("BLMOVE", "x", "y", "LEFT", "LEFT", "0"),
        ("BLMPOP", "0", "1", "x", "LEFT"),
        ("BRPOP", "x", "y", "0"),
        ("EXEC",),
    ],
    "wrongtype": [
        ("SET", "s", "v"),
        ("LPUSH", "s", "a"),
        ("RPUSHX", "s", "a"),
        ("LPOP", "s"),
        ("RPOP", "s", "2"),
        ("LLEN", "s"),
        ("LINDEX", "s", "x"),
        ("LRANGE", "s", "0", "1"),
        ("LRANGE", "s", "x", "1"),
        ("LSET", "s", "x", "v"),
        ("LINSERT", "s", "BEFORE", "a", "b"),
        ("LINSERT", "s", "AROUND", "a", "b"),
        ("LREM", "s", "0", "a"),
        ("LREM", "s", "x", "a"),
        ("LTRIM", "s", "0", "1"),
        ("LPOS", "s", "a"),
        ("LPOS", "s", "a", "RANK", "0"),
        ("RPUSH", "l", "a"),
        ("GET", "l"),
        ("INCR", "l"),
        ("APPEND", "l", "x"),
    ],
    "keys_of_a_list": [
        ("RPUSH", "l", "a", "b", "c"),
        ("PEXPIRE", "l", "100000"),
        ("RENAME", "l", "m"),
        ("LRANGE", "m", "0", "-1"),
        ("TYPE", "m"),
        ("COPY", "m", "c"),
        ("LPUSH", "c", "z"),
        ("LRANGE", "c", "0", "-1"),
        ("LRANGE", "m", "0", "-1"),
        ("COPY", "m", "c", "DB", "2"),
        ("MOVE", "m", "3"),
        ("SELECT", "3"),
        ("LRANGE", "m", "0", "-1"),
        ("TYPE", "m"),
        ("OBJECT", "ENCODING", "m"),
        ("SELECT", "0"),
        ("SCAN", "0", "TYPE", "list"),
        ("DEL", "c"),
        ("EXISTS", "c"),
        ("SET", "l", "now a string"),
        ("RPUSH", "q", "1"),
        ("SET", "q", "v"),
        ("TYPE", "q"),
    ],
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


# ---------------------------------------------------------------- blocking


# Each scenario: the blocking requests (client index, args), then the
# writes of the main connection (each must match), then the reply each
# blocked client must get, in order of the clients.
BLOCKING = {
    "fifo_per_key": (
        [(0, ("BLPOP", "k", "0")), (1, ("BLPOP", "k", "0")), (2, ("BRPOP", "k", "0"))],
        [("RPUSH", "k", "a", "b"), ("RPUSH", "k", "c")],
        [0, 1, 2],
    ),
    "first_key_that_can_serve": (
        [(0, ("BLPOP", "a", "b", "0")), (1, ("BLPOP", "b", "a", "0"))],
        [("MULTI",), ("RPUSH", "b", "1"), ("RPUSH", "a", "2"), ("EXEC",)],
        [0, 1],
    ),
    "variadic_push_serves_in_order": (
        [(0, ("BLPOP", "k", "0")), (1, ("BLMPOP", "0", "1", "k", "RIGHT", "COUNT", "2"))],
        [("LPUSH", "k", "foo", "bar", "baz", "qux"), ("LRANGE", "k", "0", "-1")],
        [0, 1],
    ),
    "blmpop_counts": (
        [(0, ("BLMPOP", "0", "2", "k1", "k2", "LEFT", "COUNT", "1")),
         (1, ("BLMPOP", "0", "2", "k1", "k2", "RIGHT", "COUNT", "10")),
         (2, ("BLMPOP", "0", "2", "k1", "k2", "LEFT", "COUNT", "10"))],
        [("MULTI",), ("LPUSH", "k1", "a", "b", "c", "d", "e"), ("LPUSH", "k2", "1", "2", "3"),
         ("EXEC",)],
        [0, 1, 2],
    ),
    "linked_moves": (
        [(0, ("BLMOVE", "l1", "l2", "RIGHT", "LEFT", "0")),
         (1, ("BLMOVE", "l2", "l3", "LEFT", "RIGHT", "0")),
         (2, ("BLPOP", "l3", "0"))],
        [("RPUSH", "l1", "foo"), ("EXISTS", "l1", "l2", "l3")],
        [0, 1, 2],
    ),
    "circular_moves": (
        [(0, ("BRPOPLPUSH", "l1", "l2", "0")), (1, ("BRPOPLPUSH", "l2", "l1", "0"))],
        [("RPUSH", "l1", "foo"), ("LRANGE", "l1", "0", "-1"), ("EXISTS", "l2")],
        [0, 1],
    ),
    "wrong_destination_is_an_answer": (
        [(0, ("BRPOPLPUSH", "src", "t1", "0")), (1, ("BLMOVE", "src", "t2", "LEFT", "LEFT", "0"))],
        [("SET", "t1", "string"), ("RPUSH", "src", "a", "b"), ("LRANGE", "src", "0", "-1"),
         ("LRANGE", "t2", "0", "-1")],
        [0, 1],
    ),
    "delete_in_multi_does_not_wake": (
        [(0, ("BLPOP", "k", "0"))],
        [("MULTI",), ("LPUSH", "k", "a"), ("DEL", "k"), ("SET", "k", "s"), ("EXEC",),
         ("DEL", "k"), ("LPUSH", "k", "b")],
        [0],
    ),
    "rename_moves_into_place": (
        [(0, ("BLMPOP", "0", "1", "k", "LEFT", "COUNT", "2"))],
        [("LPUSH", "other", "x", "y", "z"), ("RENAME", "other", "k"), ("LRANGE", "k", "0", "-1")],
        [0],
    ),
    "same_key_twice": (
        [(0, ("BLPOP", "a", "b", "b", "a", "0"))],
        [("LPUSH", "b", "x")],
        [0],
    ),
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("name", sorted(BLOCKING))
def test_blocking(pair, latch_server, redis_server, name, proto):
    check_blocking(pair, latch_server, redis_server, proto, name, *BLOCKING[name])


@pytest.mark.parametrize("proto", PROTOS)
def test_blocking_timeouts_and_unblock(pair, latch_server, redis_server, proto):
    switch_proto(pair, proto)
    clients = Clients(latch_server, redis_server, 1, proto)
    try:
        for args in (("BLPOP", "k", "0.05"), ("BLMOVE", "k", "d", "LEFT", "LEFT", "0.05"),
                     ("BRPOPLPUSH", "k", "d", "0.05"), ("BLMPOP", "0.05", "1", "k", "LEFT")):
            clients.send(0, *args)
            got, want = clients.read(0)
            assert got == want, (args, got, want)
        # CLIENT UNBLOCK answers as the timeout would, or with the UNBLOCKED
        # error. (The client ids differ between the servers: each gets its own.)
        blocked = clients.pairs[0]
        for mode in ((), ("TIMEOUT",), ("ERROR",)):
            clients.send(0, "BRPOP", "k", "0")
            wait_blocked(pair, 1)
            answers = {}
            for side in ("latch", "redis"):
                main = getattr(pair, side)
                answers[side] = (main.raw("CLIENT", "UNBLOCK", blocked_id(main), *mode),
                                 getattr(blocked, side).read_n_raw(1))
            assert answers["latch"] == answers["redis"], (mode, answers)
            assert answers["latch"][0] == b":1\r\n"
        for args in (("CLIENT", "UNBLOCK", "x"), ("CLIENT", "UNBLOCK", "1", "NOW"),
                     ("CLIENT", "UNBLOCK", "999999"), ("CLIENT", "UNBLOCK", "1", "TIMEOUT", "x"),
                     ("CLIENT", "UNBLOCK")):
            got, want = pair.both(*args)
            assert got == want, (args, got, want)
        # A client that is not blocked: 0.
        for side in ("latch", "redis"):
            conn = getattr(blocked, side)
            own = conn.cmd("CLIENT", "ID")
            assert getattr(pair, side).raw("CLIENT", "UNBLOCK", str(own)) == b":0\r\n"
    finally:
        clients.close()
