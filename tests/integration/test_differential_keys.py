"""Differential family: commands on keys of any type — RENAME, RENAMENX, COPY,
MOVE, TYPE, OBJECT ENCODING — and WRONGTYPE from the string commands, against
redis-server 7.0 in RESP2 and RESP3 (differential.py).

The collection types' own families extend the scripts here with their values
(a hash renamed, a list copied to another database…)."""

import pytest

from differential import PROTOS, check_script, switch_proto

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
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])
