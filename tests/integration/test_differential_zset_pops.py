"""Differential family: the blocking sorted-set pops — BZPOPMIN, BZPOPMAX and
BZMPOP — against redis-server 7.0 in RESP2 and RESP3 (differential.py):
their replies when something is there, their errors (Redis's timeout texts,
BZMPOP's arguments, WRONGTYPE), COMMAND INFO/DOCS/GETKEYS, and what they
answer inside MULTI and from a script, where nothing blocks.

Then the blocking itself, with several connections to each server in
lockstep (differential.check_blocking): a client blocks, another writes,
and each blocked client's reply (which key, which members, in which order)
must be Redis's; timeouts and CLIENT UNBLOCK too. test_zset_pops.py has the
log, the disconnects and the restart quarantine."""

import pytest

import latchtest as lt
from differential import (PROTOS, Clients, blocked_id, check_blocking, check_script,
                          switch_proto, wait_blocked)

POPS = ("bzpopmin", "bzpopmax", "bzmpop")

SCRIPTS = {
    # Arity, flags (write, noscript, blocking, fast, movablekeys), key
    # positions and key specs, ACL categories; which arguments are keys.
    "command_info": [("COMMAND", "INFO") + POPS] + [
        ("COMMAND", "DOCS", "bzmpop"),
        ("COMMAND", "GETKEYS", "bzpopmin", "a", "b", "0"),
        ("COMMAND", "GETKEYS", "bzpopmax", "a", "0"),
        ("COMMAND", "GETKEYS", "bzmpop", "0", "2", "a", "b", "MIN", "COUNT", "3"),
        ("COMMAND", "GETKEYS", "bzmpop", "0", "3", "a", "b", "MIN"),
        ("COMMAND", "GETKEYS", "bzmpop", "0", "0", "a", "MIN"),
        ("COMMAND", "GETKEYS", "bzpopmin", "a"),
        ("COMMAND", "GETKEYSANDFLAGS", "bzmpop", "0", "2", "a", "b", "MAX"),
        ("COMMAND", "GETKEYSANDFLAGS", "bzpopmax", "a", "b", "1"),
    ],
    # COMMAND GETKEYS follows the key specs, as Redis 7.0 does: the counted
    # keys (keynum) of the other families too, and its errors.
    "getkeys_by_key_specs": [
        ("COMMAND", "INFO", "lmpop", "blmpop", "blpop", "brpop"),
        ("COMMAND", "GETKEYS", "zunionstore", "d", "2", "a", "b"),
        ("COMMAND", "GETKEYS", "zunionstore", "d", "3", "a", "b"),
        ("COMMAND", "GETKEYS", "zinterstore", "d", "0", "a"),
        ("COMMAND", "GETKEYSANDFLAGS", "zdiffstore", "d", "2", "a", "b"),
        ("COMMAND", "GETKEYS", "zunion", "2", "a", "b", "WEIGHTS", "1", "2"),
        ("COMMAND", "GETKEYS", "zdiff", "-1", "a"),
        ("COMMAND", "GETKEYS", "zmpop", "1", "a", "min"),
        ("COMMAND", "GETKEYS", "zmpop", "2", "a", "min"),
        ("COMMAND", "GETKEYS", "zmpop", "x", "a", "min"),
        ("COMMAND", "GETKEYS", "lmpop", "2", "a", "b", "left"),
        ("COMMAND", "GETKEYSANDFLAGS", "blmpop", "0", "1", "a", "left"),
        ("COMMAND", "GETKEYS", "zrangestore", "d", "s", "0", "1"),
        ("COMMAND", "GETKEYS", "blpop", "a", "b", "0"),
        ("COMMAND", "GETKEYS", "blpop", "a"),
        ("COMMAND", "GETKEYS", "mget", "a", "b", "c"),
        ("COMMAND", "GETKEYS", "mset", "a", "1", "b", "2"),
        ("COMMAND", "GETKEYS", "del", "a"),
        ("COMMAND", "GETKEYSANDFLAGS", "set", "a", "b", "GET"),
        ("COMMAND", "GETKEYS", "ping"),
    ],
    "immediate": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f", "7", "g"),
        ("BZPOPMIN", "z", "0"),
        ("BZPOPMAX", "z", "0"),
        ("BZPOPMIN", "none", "z", "1"),
        ("BZPOPMAX", "none", "z", "none", "0.5"),
        ("BZMPOP", "0", "1", "z", "MIN"),
        ("BZMPOP", "0", "2", "none", "z", "max", "count", "10"),
        ("EXISTS", "z"),
        ("ZADD", "z1", "0", "a", "1", "b", "2", "c"),
        ("ZADD", "z2", "3", "d", "4", "e", "5", "f"),
        ("BZPOPMIN", "z1", "z2", "5"),
        ("BZPOPMAX", "z2", "z1", "5"),
        ("BZMPOP", "5", "2", "z1", "z2", "MIN", "COUNT", "1"),
        ("BZMPOP", "5", "2", "z2", "z1", "MAX", "COUNT", "2"),
        ("ZCARD", "z1"),
        ("ZCARD", "z2"),
        # Scores as doubles: a bulk string in RESP2, `,` in RESP3.
        ("ZADD", "s", "inf", "pinf", "-inf", "ninf", "1.5", "x", "-0.25", "y", "1e20", "big",
         "3.0000000000000004", "odd"),
        ("BZPOPMIN", "s", "0"),
        ("BZPOPMAX", "s", "0"),
        ("BZMPOP", "0", "1", "s", "MIN", "COUNT", "100"),
        # Big sorted sets (a skiplist) pop the same.
        ("ZADD", "big") + tuple(a for i in range(200) for a in (str(i * 0.5), "m%03d" % i)),
        ("OBJECT", "ENCODING", "big"),
        ("BZPOPMAX", "big", "0"),
        ("BZMPOP", "0", "1", "big", "MIN", "COUNT", "3"),
        ("ZCARD", "big"),
    ],
    "timeouts": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"),
        ("BZPOPMIN", "z", "-1"),
        ("BZPOPMIN", "z", "x"),
        ("BZPOPMIN", "z", ""),
        ("BZPOPMIN", "z", " 1"),
        ("BZPOPMAX", "z", "inf"),
        ("BZPOPMAX", "z", "-inf"),
        ("BZPOPMAX", "z", "1e20"),
        ("BZPOPMAX", "z", "nan"),
        ("BZPOPMAX", "z", "9223372036854776"),
        ("BZPOPMIN", "z", "-0.0011"),
        ("BZPOPMIN", "z", "-0.0001"),
        ("BZPOPMIN", "z", "0x10"),
        ("BZMPOP", "x", "1", "z", "MIN"),
        ("BZMPOP", "-1", "1", "z", "MIN"),
        ("BZMPOP", "1e400", "1", "z", "MIN"),
        ("BZMPOP", "inf", "1", "z", "MIN"),
        # BZPOPMIN reads its timeout first; BZMPOP its other arguments.
        ("SET", "s", "v"),
        ("BZPOPMIN", "s", "x"),
        ("BZMPOP", "x", "0", "s", "MIN"),
        ("BZMPOP", "x", "1", "s", "BAD"),
        ("BZMPOP", "x", "1", "s", "MIN", "COUNT", "0"),
        ("BZMPOP", "x", "1", "s", "MIN"),
        ("ZCARD", "z"),
    ],
    "bzmpop_arguments": [
        ("BZMPOP",),
        ("BZMPOP", "0", "1"),
        ("BZMPOP", "0", "1", "z"),
        ("BZMPOP", "1", "0", "z", "MIN"),
        ("BZMPOP", "1", "a", "z", "MIN"),
        ("BZMPOP", "1", "-1", "z", "MAX"),
        ("BZMPOP", "1", "9223372036854775807", "z", "MIN"),
        ("BZMPOP", "1", "9223372036854775808", "z", "MIN"),
        ("BZMPOP", "1", "1", "z", "bad_where"),
        ("BZMPOP", "1", "1", "z", "MIN", "bar_arg"),
        ("BZMPOP", "1", "1", "z", "MAX", "MIN"),
        ("BZMPOP", "1", "1", "z", "COUNT"),
        ("BZMPOP", "1", "1", "z", "MIN", "COUNT"),
        ("BZMPOP", "1", "1", "z", "MIN", "COUNT", "1", "COUNT", "2"),
        ("BZMPOP", "1", "2", "z", "z2", "bad_arg"),
        ("BZMPOP", "1", "2", "z", "MIN"),
        ("BZMPOP", "1", "1", "z", "MIN", "COUNT", "0"),
        ("BZMPOP", "1", "1", "z", "MAX", "COUNT", "a"),
        ("BZMPOP", "1", "1", "z", "MIN", "COUNT", "-1"),
        ("BZMPOP", "1", "2", "z", "z2", "MAX", "COUNT", "-1"),
        ("BZMPOP", "1", "1", "z", "MIN", "COUNT", "9223372036854775808"),
        ("ZADD", "z", "1", "a", "2", "b"),
        ("BZMPOP", "1", "1", "z", "min", "count", "9223372036854775807"),
        ("BZPOPMIN",),
        ("BZPOPMIN", "z"),
        ("BZPOPMAX", "z"),
    ],
    "wrongtype": [
        ("SET", "foo", "bar"),
        ("BZPOPMIN", "foo", "1"),
        ("BZPOPMAX", "foo", "1"),
        ("BZMPOP", "1", "1", "foo", "MIN"),
        ("BZMPOP", "1", "1", "foo", "MAX"),
        ("BZMPOP", "1", "1", "foo", "MIN", "COUNT", "10"),
        ("BZPOPMIN", "none", "foo", "0"),
        ("ZADD", "z", "1", "a"),
        # A sorted set before the string: popped, the string never looked at.
        ("BZPOPMIN", "z", "foo", "0"),
        ("BZMPOP", "1", "2", "none", "foo", "MIN"),
        ("BZMPOP", "1", "2", "foo", "none", "MAX", "COUNT", "1"),
        ("RPUSH", "l", "x"),
        ("BZPOPMAX", "l", "0"),
        ("BZMPOP", "0", "1", "l", "MIN"),
        ("ZADD", "z", "1", "a"),
        ("BLPOP", "z", "0"),
    ],
    # Nothing blocks inside MULTI: the timeout's answer, at once.
    "in_multi_nothing_blocks": [
        ("ZADD", "z", "1", "a"),
        ("MULTI",),
        ("BZPOPMIN", "z", "0"),
        ("BZPOPMIN", "z", "0"),
        ("BZPOPMAX", "z", "none", "0"),
        ("BZMPOP", "0", "1", "z", "MIN"),
        ("ZADD", "z", "2", "b", "3", "c"),
        ("BZMPOP", "0", "2", "none", "z", "MAX", "COUNT", "5"),
        ("BZPOPMIN", "z", "x"),
        ("EXEC",),
        ("EXISTS", "z"),
    ],
    # From a script: BZPOPMIN and BZPOPMAX are refused (noscript); BZMPOP
    # answers at once, as a timeout would.
    "from_scripts": [
        ("ZADD", "z", "1", "a", "2", "b", "3", "c"),
        ("EVAL", "return redis.call('bzmpop', 0, 1, KEYS[1], 'MIN')", "1", "z"),
        ("EVAL", "return redis.call('bzmpop', 0, 2, 'none', KEYS[1], 'MAX', 'COUNT', 5)", "1",
         "z"),
        ("EVAL", "return redis.call('bzmpop', 0, 1, KEYS[1], 'MIN')", "1", "z"),
        ("EVAL", "return redis.pcall('bzmpop', 0, 1, KEYS[1], 'MIN') == false", "1", "z"),
        ("EVAL", "return redis.pcall('bzmpop', 'x', 1, KEYS[1], 'MIN')", "1", "z"),
        ("EVAL", "redis.setresp(3); return redis.call('bzmpop', 0, 1, KEYS[1], 'MIN')", "1",
         "z"),
        ("ZADD", "z", "1.5", "a"),
        ("EVAL", "redis.setresp(3); return redis.call('bzmpop', 0, 1, KEYS[1], 'MIN')", "1",
         "z"),
        ("EVAL", "return redis.pcall('bzpopmin', KEYS[1], 0)", "1", "z"),
        ("EVAL", "return redis.pcall('bzpopmax', KEYS[1], 0)", "1", "z"),
        ("ZCARD", "z"),
    ],
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


def _docs(reply):
    """COMMAND DOCS as nested dicts, without Redis's history (latch keeps none)."""
    if isinstance(reply, lt.OrderedMap):
        return {k: _docs(v) for k, v in reply.pairs if k != b"history"}
    if isinstance(reply, list):
        return [_docs(x) for x in reply]
    return reply


def test_docs_match_redis_but_history(pair):
    switch_proto(pair, 3)
    for name in ("bzpopmin", "bzpopmax"):
        got, want = (_docs(c.cmd("COMMAND", "DOCS", name)) for c in (pair.latch, pair.redis))
        assert got == want, name


# ---------------------------------------------------------------- blocking

# Each scenario: the blocking requests (client index, args), then the
# writes of the main connection (each must match), then the reply each
# blocked client must get, in order of the clients.
BLOCKING = {
    "fifo_per_key": (
        [(0, ("BZPOPMIN", "z", "0")), (1, ("BZPOPMIN", "z", "0")), (2, ("BZPOPMAX", "z", "0")),
         (3, ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "2"))],
        [("ZADD", "z", "1", "a", "2", "b"), ("ZADD", "z", "3", "c"), ("ZADD", "z", "4", "d"),
         ("ZRANGE", "z", "0", "-1", "WITHSCORES")],
        [0, 1, 2, 3],
    ),
    "first_key_that_can_serve": (
        [(0, ("BZPOPMIN", "a", "b", "0")), (1, ("BZPOPMAX", "b", "a", "0")),
         (2, ("BZMPOP", "0", "2", "b", "a", "MIN"))],
        [("MULTI",), ("ZADD", "b", "1", "x"), ("ZADD", "a", "2", "y", "3", "z"), ("EXEC",)],
        [0, 1, 2],
    ),
    "bzmpop_with_multiple_blocked_clients": (
        [(0, ("BZMPOP", "0", "2", "k1", "k2", "MIN", "COUNT", "1")),
         (1, ("BZMPOP", "0", "2", "k1", "k2", "MAX", "COUNT", "10")),
         (2, ("BZMPOP", "0", "2", "k1", "k2", "MIN", "COUNT", "10")),
         (3, ("BZMPOP", "0", "2", "k1", "k2", "MAX", "COUNT", "1"))],
        [("MULTI",), ("ZADD", "k1", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"),
         ("ZADD", "k2", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"), ("EXEC",),
         ("ZADD", "k2", "1", "a", "2", "b", "3", "c")],
        [0, 1, 2, 3],
    ),
    "variadic_zadd": (
        [(0, ("BZPOPMIN", "z", "0")), (1, ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "1"))],
        [("ZADD", "z", "-1", "foo", "1", "bar", "2", "baz"), ("ZRANGE", "z", "0", "-1")],
        [0, 1],
    ),
    "multi_is_isolated": (
        [(0, ("BZPOPMIN", "z", "0")), (1, ("BZMPOP", "0", "1", "z", "MAX", "COUNT", "1"))],
        [("MULTI",), ("ZADD", "z", "0", "a"), ("ZADD", "z", "1", "b"), ("ZADD", "z", "2", "c"),
         ("EXEC",), ("ZRANGE", "z", "0", "-1")],
        [0, 1],
    ),
    "zadd_del_in_multi_does_not_wake": (
        [(0, ("BZPOPMIN", "z", "0")), (1, ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "1"))],
        [("MULTI",), ("ZADD", "z", "0", "foo"), ("DEL", "z"), ("EXEC",),
         ("MULTI",), ("ZADD", "z", "0", "foo"), ("DEL", "z"), ("SET", "z", "foo"), ("EXEC",),
         ("DEL", "z"), ("ZADD", "z", "1", "bar", "2", "baz")],
        [0, 1],
    ),
    "same_key_twice": (
        [(0, ("BZPOPMIN", "z1", "z2", "z2", "z1", "0")),
         (1, ("BZMPOP", "0", "4", "z1", "z2", "z2", "z1", "MAX"))],
        [("ZADD", "z2", "1", "b"), ("ZADD", "z1", "0", "a")],
        [0, 1],
    ),
    "non_key_arguments_do_not_wake": (
        [(0, ("BZMPOP", "0", "1", "myzset", "MIN", "COUNT", "10")),
         (1, ("BZMPOP", "0", "2", "myzset2", "myzset3", "MAX", "COUNT", "10"))],
        [("ZADD", "0", "100", "timeout_value"), ("ZADD", "1", "200", "numkeys_value"),
         ("ZADD", "min", "300", "min_token"), ("ZADD", "max", "400", "max_token"),
         ("ZADD", "count", "500", "count_token"), ("ZADD", "10", "600", "count_value"),
         ("ZADD", "myzset", "1", "zset"), ("ZADD", "myzset3", "1", "zset3")],
        [0, 1],
    ),
    "a_list_and_a_sorted_set_waiter_on_one_key": (
        [(0, ("BLPOP", "k", "0")), (1, ("BZPOPMIN", "k", "0")), (2, ("BRPOP", "k", "0"))],
        [("ZADD", "k", "1", "m"), ("RPUSH", "k", "x", "y")],
        [1, 0, 2],
    ),
    "stored_and_renamed_into_place": (
        [(0, ("BZPOPMAX", "dst", "0")), (1, ("BZMPOP", "0", "1", "ren", "MIN", "COUNT", "5"))],
        [("ZADD", "src", "1", "a", "2", "b"), ("ZUNIONSTORE", "dst", "1", "src"),
         ("ZRANGESTORE", "tmp", "src", "0", "-1"), ("RENAME", "tmp", "ren"),
         ("EXISTS", "dst", "ren", "tmp")],
        [0, 1],
    ),
    "scores_as_doubles": (
        [(0, ("BZPOPMIN", "z", "0")), (1, ("BZPOPMAX", "z", "0")),
         (2, ("BZMPOP", "0", "1", "z", "MIN", "COUNT", "5"))],
        [("ZADD", "z", "-inf", "n", "inf", "p", "1.5", "x", "-0.125", "y", "1e100", "g")],
        [0, 1, 2],
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
        for args in (("BZPOPMIN", "z", "0.05"), ("BZPOPMAX", "y", "z", "0.01"),
                     ("BZMPOP", "0.05", "1", "z", "MIN"),
                     ("BZMPOP", "0.02", "2", "y", "z", "MAX", "COUNT", "3")):
            clients.send(0, *args)
            got, want = clients.read(0)
            assert got == want, (args, got, want)
        # CLIENT UNBLOCK answers as the timeout would, or with the UNBLOCKED
        # error. (The client ids differ between the servers: each gets its own.)
        blocked = clients.pairs[0]
        for mode, args in (((), ("BZPOPMIN", "z", "0")), (("TIMEOUT",), ("BZPOPMAX", "z", "0")),
                           (("ERROR",), ("BZMPOP", "0", "1", "z", "MIN")),
                           (("ERROR",), ("BZPOPMIN", "z", "100"))):
            clients.send(0, *args)
            wait_blocked(pair, 1)
            answers = {}
            for side in ("latch", "redis"):
                main = getattr(pair, side)
                answers[side] = (main.raw("CLIENT", "UNBLOCK", blocked_id(main), *mode),
                                 getattr(blocked, side).read_n_raw(1))
            assert answers["latch"] == answers["redis"], (mode, answers)
            assert answers["latch"][0] == b":1\r\n"
        wait_blocked(pair, 0)
        # Unblocked, the client left its queue: a ZADD now stays.
        got, want = pair.both("ZADD", "z", "1", "a")
        assert got == want == b":1\r\n"
        got, want = pair.both("ZCARD", "z")
        assert got == want == b":1\r\n"
    finally:
        clients.close()
