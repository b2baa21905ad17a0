"""Differential family: transactions — MULTI, EXEC, DISCARD, WATCH — against
redis-server 7.0 in RESP2 and RESP3 (differential.py)."""

import pytest

import latchtest as lt

from differential import PROTOS, check_script, switch_proto


SCRIPTS = {
    # Bugs a random differential run found (issue 15).
    "exec_with_arguments_aborts_the_transaction": [
        ("MULTI",),
        ("SET", "k", "1"),
        ("EXEC", "x"),
        ("GET", "k"),
        ("EXEC",),
        ("MULTI",),
        ("SET", "k", "1"),
        ("exec", "a", "b"),
        ("DISCARD",),
        ("MULTI",),
        ("EXEC", "x"),
        ("PING",),
    ],
    "writing_the_empty_key_touches_only_it": [
        ("SET", "k1", "v"),
        ("WATCH", "k1"),
        ("SET", "", "x"),
        ("MULTI",),
        ("PING",),
        ("EXEC",),
        ("WATCH", "k1"),
        ("DEL", ""),
        ("INCR", ""),
        ("APPEND", "", "y"),
        ("MULTI",),
        ("PING",),
        ("EXEC",),
        ("WATCH", ""),
        ("SET", "", "z"),
        ("MULTI",),
        ("PING",),
        ("EXEC",),
    ],
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


def test_watch_sees_writes_from_other_connections_in_its_database_only(pair):
    """A second client writes the watched name in another database (no abort),
    then in the watched one (abort); MOVE into the watched database aborts too."""
    others = [lt.Conn(pair.latch.port), lt.Conn(pair.redis.port)]
    try:
        def both(conns, *args):
            return [c.raw(*args) for c in conns]

        mains = [pair.latch, pair.redis]
        for steps, want in [
                ([("SELECT", "1"), ("SET", "w", "x"), ("SELECT", "0")], b"*1\r\n$-1\r\n"),
                ([("SET", "w", "x")], b"*-1\r\n"),
                ([("SELECT", "2"), ("SET", "w", "moved"), ("MOVE", "w", "0"), ("SELECT", "0")],
                 b"*-1\r\n"),
        ]:
            both(mains, "DEL", "w")
            both(mains, "WATCH", "w")
            for st in steps:
                a, b = both(others, *st)
                assert a == b, st
            both(mains, "MULTI")
            both(mains, "GET", "w")
            got, exp = both(mains, "EXEC")
            assert got == exp == want, steps
    finally:
        for c in others:
            c.close()
