"""Differential tests: the same requests go to Debian's redis-server 7.0 and
to latch, and the raw replies must be identical, byte for byte.

Each script starts from FLUSHALL on fresh connections. Scripts run in RESP2
and again after HELLO 3 (RESP3), where nulls are `_` and CONFIG GET is a map.
Where latch deliberately differs from Redis 7.0 (SELECT 1, HELLO's version,
INFO, COMMAND, CLIENT LIST) the reply is not compared; latch's documented
reply is asserted instead. Commands Redis 7.0 does not have (DELIFEQ, DELEX,
DIGEST, SET IFEQ/IFNE/IFDEQ/IFDNE) are checked against their documented
behaviour (Valkey 9 / Redis 8.4).
"""

import ctypes
import ctypes.util
import time

import pytest

import latchtest as lt
from latchtest import encode


class Raw(object):
    """A step that sends raw bytes and expects `replies` replies."""

    def __init__(self, data, replies=1):
        self.data = data
        self.replies = replies

    def __repr__(self):
        return "Raw(%r)" % (self.data[:80],)


def run_script(pair, steps):
    """Sends every step to both servers; returns the list of mismatches."""
    mismatches = []
    for i, step in enumerate(steps):
        if isinstance(step, Raw):
            data, n = step.data, step.replies
        else:
            data, n = encode(*step), 1
        got, want = pair.send_raw(data, n)
        if got != want:
            mismatches.append("step %d %r:\n    latch: %r\n    redis: %r" % (i, step, got, want))
    return mismatches


def check_script(pair, steps):
    mismatches = run_script(pair, steps)
    assert not mismatches, "latch and redis-server differ:\n" + "\n".join(mismatches)


def switch_proto(pair, proto):
    """HELLO <proto> on both; checks the replies match apart from version and id."""
    if proto == 2:
        return
    got, want = pair.both("HELLO", str(proto))
    assert_hello_equivalent(got, want, proto)


def assert_hello_equivalent(latch_raw, redis_raw, proto):
    """HELLO replies agree except for `version` (latch reports 8.4.0) and `id`."""
    lv = lt.pairs_to_dict(lt.parse_reply(latch_raw)[0])
    rv = lt.pairs_to_dict(lt.parse_reply(redis_raw)[0])
    # Same shape on the wire: a map in RESP3, a flat array in RESP2.
    assert latch_raw[:3] == redis_raw[:3], (latch_raw, redis_raw)
    assert list(lv.keys()) == list(rv.keys())
    for k in lv:
        if k in (b"version", b"id"):
            continue
        assert lv[k] == rv[k], (k, lv[k], rv[k])
    assert lv[b"proto"] == proto
    version = tuple(int(x) for x in lv[b"version"].split(b"."))
    # Lock libraries (Spring's RedisLockRegistry) only use DELEX/SET IFEQ when
    # the server says it is at least Redis 8.4.
    assert version >= (8, 4, 0), lv[b"version"]


PROTOS = [2, 3]

# ---------------------------------------------------------------- scripts

BIG = "9223372036854775807"

SCRIPTS = {
    "set_options_any_order_and_case": [
        ("SET", "k", "v"),
        ("SET", "k", "v", "NX"),
        ("SET", "k", "v2", "XX"),
        ("GET", "k"),
        ("SET", "k", "v3", "xx", "GET"),
        ("SET", "k", "v4", "get", "Xx"),
        ("SET", "k", "v5", "GeT", "nX"),
        ("SET", "fresh", "v", "nx", "get"),
        ("SET", "fresh2", "v", "XX", "GET"),
        ("GET", "fresh2"),
        ("SET", "k", "v", "EX", "100", "NX"),
        ("SET", "k", "v", "ex", "100", "xx"),
        ("TTL", "k"),
        ("SET", "k", "v", "GET", "EX", "100000", "XX"),
        ("TTL", "k"),
        ("SET", "k", "v", "px", "100000000", "get"),
        ("TTL", "k"),
        ("SET", "k", "v"),
        ("TTL", "k"),
        ("SET", "k", "v", "EXAT", "4102444800"),
        ("EXPIRETIME", "k"),
        ("SET", "k", "v", "PXAT", "4102444800000"),
        ("EXPIRETIME", "k"),
        ("SET", "k", "v", "eXaT", "4102444801", "gEt"),
        ("EXPIRETIME", "k"),
    ],
    "set_repeated_identical_options": [
        ("SET", "k", "v", "NX", "NX"),
        ("SET", "k", "v", "XX", "xx", "XX"),
        ("SET", "k", "v", "GET", "GET"),
        ("SET", "k", "v", "KEEPTTL", "KEEPTTL"),
        ("SET", "k", "v", "EX", "10", "EX", "200000"),
        ("TTL", "k"),
        ("SET", "k", "v", "PX", "10", "px", "300000000"),
        ("TTL", "k"),
        ("SET", "k", "v", "EXAT", "4102444800", "EXAT", "4102444900"),
        ("EXPIRETIME", "k"),
    ],
    "set_syntax_errors": [
        ("SET", "k", "v", "NX", "XX"),
        ("SET", "k", "v", "xx", "nx"),
        ("SET", "k", "v", "EX", "10", "PX", "100"),
        ("SET", "k", "v", "PX", "100", "EX", "10"),
        ("SET", "k", "v", "EX", "10", "EXAT", "4102444800"),
        ("SET", "k", "v", "PXAT", "4102444800000", "EXAT", "4102444800"),
        ("SET", "k", "v", "EX", "10", "KEEPTTL"),
        ("SET", "k", "v", "KEEPTTL", "EX", "10"),
        ("SET", "k", "v", "KEEPTTL", "PXAT", "4102444800000"),
        ("SET", "k", "v", "EX"),
        ("SET", "k", "v", "PX"),
        ("SET", "k", "v", "EXAT"),
        ("SET", "k", "v", "NX", "EX"),
        ("SET", "k", "v", "FOO"),
        ("SET", "k", "v", "NX", "FOO"),
        ("SET", "k", "v", "EX", "abc", "XY"),
        ("SET", "k", "v", "EX", "10", "FOO"),
        ("SET", "k", "v", "ex10"),
        ("SET", "k", "v", ""),
        ("EXISTS", "k"),
    ],
    "set_bad_integers_and_expiries": [
        ("SET", "k", "v", "EX", "abc"),
        ("SET", "k", "v", "EX", "1.5"),
        ("SET", "k", "v", "EX", "01"),
        ("SET", "k", "v", "EX", "+5"),
        ("SET", "k", "v", "EX", " 5"),
        ("SET", "k", "v", "EX", "5 "),
        ("SET", "k", "v", "EX", ""),
        ("SET", "k", "v", "EX", "-0"),
        ("SET", "k", "v", "PX", "99999999999999999999"),
        ("SET", "k", "v", "EX", "0"),
        ("SET", "k", "v", "PX", "0"),
        ("SET", "k", "v", "EXAT", "0"),
        ("SET", "k", "v", "PXAT", "0"),
        ("SET", "k", "v", "EX", "-1"),
        ("SET", "k", "v", "PX", "-100"),
        ("SET", "k", "v", "EXAT", "-1"),
        ("SET", "k", "v", "PXAT", "-1"),
        ("SET", "k", "v", "EX", "-9223372036854775808"),
        ("EXISTS", "k"),
    ],
    "set_expiry_overflow": [
        ("SET", "k", "v", "EX", BIG),
        ("SET", "k", "v", "EX", "9223372036854776"),
        ("SET", "k", "v", "EX", "9223372036854775"),
        ("SET", "k", "v", "EX", "9223372036854775000"),
        ("SET", "k", "v", "PX", BIG),
        ("SET", "k", "v", "PX", "9223372036854775000"),
        ("SET", "k", "v", "EXAT", BIG),
        ("SET", "k", "v", "EXAT", "9223372036854775"),
        ("SET", "k", "v", "PXAT", BIG),
        ("SET", "k", "v", "EX", "9223372036854775808"),
        ("EXISTS", "k"),
    ],
    "set_get_and_keepttl": [
        ("SET", "k", "v1", "GET"),
        ("SET", "k", "v2", "GET"),
        ("SET", "k", "v3", "EX", "100000", "GET"),
        ("TTL", "k"),
        ("SET", "k", "v4", "KEEPTTL"),
        ("TTL", "k"),
        ("GET", "k"),
        ("SET", "k", "v5", "KEEPTTL", "GET"),
        ("TTL", "k"),
        ("SET", "k", "v6"),
        ("TTL", "k"),
        ("SET", "nottl", "v", "KEEPTTL"),
        ("TTL", "nottl"),
        ("SET", "k", "v", "NX", "GET"),
        ("SET", "k", "v", "XX", "GET", "KEEPTTL"),
        ("SET", "missing", "v", "XX", "GET"),
        ("EXISTS", "missing"),
    ],
    "set_absolute_time_in_the_past": [
        ("SET", "k", "v"),
        ("SET", "k", "v2", "PXAT", "1"),
        ("GET", "k"),
        ("EXISTS", "k"),
        ("SET", "k", "v"),
        ("SET", "k", "v2", "EXAT", "1", "GET"),
        ("GET", "k"),
        ("SET", "never", "v", "EXAT", "1"),
        ("EXISTS", "never"),
        ("DBSIZE",),
    ],
    "setnx_get_del_exists": [
        ("SETNX", "k", "v"),
        ("SETNX", "k", "other"),
        ("GET", "k"),
        ("GET", "missing"),
        ("SET", "k2", "v"),
        ("SET", "k3", "v"),
        ("EXISTS", "k", "k", "k", "missing", "k2"),
        ("EXISTS", "missing", "missing"),
        ("DEL", "k", "k", "missing", "k2"),
        ("DEL", "k", "k2"),
        ("EXISTS", "k", "k2", "k3"),
        ("DBSIZE",),
        ("SET", "k", "v", "EX", "100000"),
        ("SETNX", "k", "v"),
        ("TTL", "k"),
        ("DEL", "k3", "k"),
        ("DBSIZE",),
    ],
    "expire_conditions": [
        ("SET", "k", "v"),
        ("EXPIRE", "k", "100000", "XX"),
        ("TTL", "k"),
        ("EXPIRE", "k", "100000", "GT"),
        ("TTL", "k"),
        ("EXPIRE", "k", "100000", "LT"),
        ("TTL", "k"),
        ("EXPIRE", "k", "200000", "NX"),
        ("TTL", "k"),
        ("EXPIRE", "k", "300000", "nx"),
        ("EXPIRE", "k", "300000", "xx"),
        ("TTL", "k"),
        ("EXPIRE", "k", "100000", "gt"),
        ("EXPIRE", "k", "400000", "gt"),
        ("TTL", "k"),
        ("EXPIRE", "k", "500000", "lt"),
        ("EXPIRE", "k", "350000", "Lt"),
        ("TTL", "k"),
        ("EXPIRE", "k", "340000", "XX", "GT"),
        ("EXPIRE", "k", "360000", "XX", "GT"),
        ("EXPIRE", "k", "340000", "xx", "lt"),
        ("TTL", "k"),
        ("EXPIRE", "k", "100", "NX", "NX"),
        ("PEXPIRE", "k", "300000000", "GT"),
        ("TTL", "k"),
        ("EXPIREAT", "k", "4102444800", "GT"),
        ("EXPIRETIME", "k"),
        ("PEXPIREAT", "k", "4102444700000", "LT"),
        ("EXPIRETIME", "k"),
        ("PEXPIREAT", "k", "4102444900000", "LT"),
        ("EXPIRETIME", "k"),
        ("PERSIST", "k"),
        ("EXPIRE", "k", "100", "XX"),
        ("EXPIRE", "k", "100", "GT"),
        ("TTL", "k"),
        ("EXPIRE", "missing", "100"),
        ("EXPIRE", "missing", "100", "NX"),
        ("PEXPIRE", "missing", "100", "XX"),
        ("EXPIREAT", "missing", "4102444800"),
        ("PEXPIREAT", "missing", "4102444800000", "GT"),
    ],
    "expire_errors": [
        ("SET", "k", "v"),
        ("EXPIRE", "k", "100", "FOO"),
        ("PEXPIRE", "k", "100", "nx", "bar"),
        ("EXPIREAT", "k", "100", "KEEPTTL"),
        ("PEXPIREAT", "k", "100", ""),
        ("EXPIRE", "k", "100", "NX", "XX"),
        ("EXPIRE", "k", "100", "NX", "GT"),
        ("EXPIRE", "k", "100", "lt", "nx"),
        ("EXPIRE", "k", "100", "GT", "LT"),
        ("PEXPIRE", "k", "100", "lt", "gt"),
        ("PEXPIRE", "k", "100", "XX", "GT", "LT"),
        ("EXPIRE", "k", "abc"),
        ("EXPIRE", "k", "1.5"),
        ("EXPIRE", "k", ""),
        ("EXPIRE", "k", "abc", "FOO"),
        ("EXPIRE", "missing", "abc"),
        ("EXPIRE", "missing", "100", "FOO"),
        ("EXPIRE", "k", BIG),
        ("EXPIRE", "k", "9223372036854775"),
        ("EXPIRE", "k", "-9223372036854775808"),
        ("PEXPIRE", "k", BIG),
        ("EXPIREAT", "k", BIG),
        ("PEXPIREAT", "k", BIG),
        ("EXPIRE", "k", "99999999999999999999"),
        ("TTL", "k"),
        ("EXISTS", "k"),
    ],
    "expire_in_the_past_deletes": [
        ("SET", "k", "v"),
        ("EXPIRE", "k", "0"),
        ("EXISTS", "k"),
        ("SET", "k", "v"),
        ("EXPIRE", "k", "-10"),
        ("GET", "k"),
        ("SET", "k", "v"),
        ("PEXPIRE", "k", "-1"),
        ("TTL", "k"),
        ("SET", "k", "v"),
        ("EXPIREAT", "k", "1000"),
        ("PTTL", "k"),
        ("SET", "k", "v"),
        ("PEXPIREAT", "k", "1"),
        ("EXISTS", "k"),
        ("SET", "k", "v", "EX", "100000"),
        ("EXPIRE", "k", "-1", "GT"),
        ("EXISTS", "k"),
        ("EXPIRE", "k", "-1", "LT"),
        ("EXISTS", "k"),
        ("SET", "k", "v"),
        ("EXPIRE", "k", "-1", "XX"),
        ("EXISTS", "k"),
        ("EXPIRE", "k", "-1", "NX"),
        ("EXISTS", "k"),
        ("SET", "k", "v"),
        ("EXPIRE", "k", "-1", "LT"),
        ("EXISTS", "k"),
        ("DBSIZE",),
    ],
    "ttl_pttl_persist_expiretime": [
        ("TTL", "missing"),
        ("PTTL", "missing"),
        ("EXPIRETIME", "missing"),
        ("PEXPIRETIME", "missing"),
        ("PERSIST", "missing"),
        ("SET", "k", "v"),
        ("TTL", "k"),
        ("PTTL", "k"),
        ("EXPIRETIME", "k"),
        ("PEXPIRETIME", "k"),
        ("PERSIST", "k"),
        ("EXPIRE", "k", "100000"),
        ("TTL", "k"),
        ("PERSIST", "k"),
        ("PERSIST", "k"),
        ("TTL", "k"),
        ("PTTL", "k"),
        ("EXPIREAT", "k", "4102444800"),
        ("EXPIRETIME", "k"),
        ("SET", "k", "v", "EX", "86400"),
        ("TTL", "k"),
    ],
    "binary_and_empty_values": [
        ("SET", "bin", b"a\x00b\r\nc\nd\r"),
        ("GET", "bin"),
        ("SET", b"k\x00\r\n", b"\xff\xfe\x00"),
        ("GET", b"k\x00\r\n"),
        ("EXISTS", b"k\x00\r\n", b"k\x00"),
        ("SET", "empty", ""),
        ("GET", "empty"),
        ("SET", "", "emptykey"),
        ("GET", ""),
        ("EXISTS", "", "empty", "bin"),
        ("SET", "bin", b"\r\n", "GET"),
        ("SET", "nl", b"\n"),
        ("GET", "nl"),
        ("SETNX", b"\x00", b"\x00"),
        ("GET", b"\x00"),
        ("DEL", "", "empty", "bin", "nope", b"\x00"),
        ("ECHO", b"\x00\r\n"),
        ("ECHO", ""),
        ("PING", b"a\r\nb"),
        ("SET", "big", "x" * 100000),
        ("GET", "big"),
        ("DBSIZE",),
    ],
    "ping_echo_select": [
        ("PING",),
        ("ping",),
        ("PING", "hello"),
        ("PING", ""),
        ("PING", "a", "b"),
        ("ECHO", "hi"),
        ("ECHO",),
        ("ECHO", "a", "b"),
        ("SELECT", "0"),
        ("SELECT", "x"),
        ("SELECT", "-1"),
        ("SELECT", "1.5"),
        ("SELECT", "99999999999999999999"),
        ("SELECT",),
        ("SELECT", "0", "1"),
        ("TIME", "x"),
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
    "unknown_commands": [
        ("FOO",),
        ("FOO", "a", "b"),
        ("foo", "a b", "c"),
        ("FooBar", "x"),
        ("FOO", "a\r\nb", "c\nd", "e\rf"),
        ("FOO\r\nBAR", "x"),
        ("FOO", "x" * 200),
        ("FOO", "x" * 127, "y"),
        ("FOO", "x" * 126, "yyy"),
        ("FOO", "x" * 125, "yyy"),
        ("FOO", "a" * 100, "b" * 100, "c"),
        ("FOO", "a" * 50, "b" * 50, "c" * 50),
        ("FOO",) + ("a",) * 100,
        ("x" * 130,),
        ("x" * 300, "y"),
        ("",),
        ("", "x"),
        ("GETT", "k"),
        ("SETT", "k", "v", "NX"),
    ],
    "unknown_subcommands": [
        ("CONFIG", "FOO"),
        ("CONFIG", "foo", "bar"),
        ("CONFIG", "x" * 200),
        ("CONFIG", "a\r\nb"),
        ("CONFIG", ""),
        ("CLIENT", "FOO"),
        ("CLIENT", "foo", "bar"),
        ("CLIENT", "a\nb"),
        ("CLIENT", "x" * 300),
        ("COMMAND", "FOO"),
        ("COMMAND", "foo", "bar"),
    ],
    "hello_errors": [
        ("HELLO", "4"),
        ("HELLO", "1"),
        ("HELLO", "0"),
        ("HELLO", "-1"),
        ("HELLO", "99999999999999999999"),
        ("HELLO", "abc"),
        ("HELLO", "3.0"),
        ("HELLO", ""),
        ("HELLO", "2", "FOO"),
        ("HELLO", "3", "x\r\ny"),
        ("HELLO", "2", "AUTH"),
        ("HELLO", "2", "AUTH", "a"),
        ("HELLO", "2", "SETNAME"),
        ("HELLO", "2", "setname"),
        ("HELLO", "3", "SETNAME"),
        ("HELLO", "2", "SETNAME", "a b"),
        ("HELLO", "2", "SETNAME", "a\nb"),
        ("HELLO", "2", "AUTH", "default"),
        ("HELLO", "2", "AUTH", "nosuchuser", "pw"),
        ("HELLO", "4", "AUTH", "default", "x"),
        ("CLIENT", "GETNAME"),
    ],
    "auth_without_password": [
        ("AUTH", "foo"),
        ("AUTH", "default", "foo"),
        ("AUTH", "someone", "foo"),
        ("AUTH", "a", "b", "c"),
        ("AUTH",),
        ("PING",),
    ],
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
    "config_set_errors": [
        ("CONFIG", "SET", "foo", "bar"),
        ("CONFIG", "SET", "x" * 300, "1"),
        ("CONFIG", "SET", "a\r\nb", "1"),
        ("CONFIG", "SET", "timeout", "abc"),
        ("CONFIG", "SET", "timeout", "-1"),
        ("CONFIG", "SET", "timeout", "99999999999"),
        ("CONFIG", "SET", "timeout", "10k"),
        ("CONFIG", "SET", "timeout", "a\r\nb"),
        ("CONFIG", "SET", "maxclients", "abc"),
        ("CONFIG", "SET", "tcp-keepalive", "-1"),
        ("CONFIG", "SET", "tcp-keepalive", "abc"),
        ("CONFIG", "SET", "protected-mode", "maybe"),
        ("CONFIG", "SET", "appendfsync", "sometimes"),
        ("CONFIG", "SET", "loglevel", "loud"),
        ("CONFIG", "SET", "proto-max-bulk-len", "abc"),
        ("CONFIG", "SET", "client-query-buffer-limit", "1"),
        ("CONFIG", "SET", "auto-aof-rewrite-min-size", "abc"),
        ("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0"),
        ("CONFIG", "SET", "client-output-buffer-limit", "foo 0 0 0"),
        ("CONFIG", "SET", "client-output-buffer-limit", "normal a 0 0"),
        # immutable in both
        ("CONFIG", "SET", "databases", "2"),
        ("CONFIG", "SET", "tcp-backlog", "10"),
        ("CONFIG", "SET", "appendfilename", "x.aof"),
        ("CONFIG", "SET", "enable-debug-command", "yes"),
        # duplicates and mixtures
        ("CONFIG", "SET", "timeout", "0", "timeout", "1"),
        ("CONFIG", "SET", "TIMEOUT", "0", "timeout", "1"),
        ("CONFIG", "SET", "timeout", "abc", "hz", "10"),
        ("CONFIG", "SET", "hz", "10", "timeout", "abc"),
        ("CONFIG", "SET", "foo", "1", "timeout", "abc"),
        ("CONFIG", "SET", "timeout", "abc", "foo", "1"),
        # nothing of a failed CONFIG SET is applied
        ("CONFIG", "SET", "timeout", "7", "maxclients", "abc"),
        ("CONFIG", "GET", "timeout"),
        ("CONFIG", "SET", "hz", "7", "databases", "3"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "SET",),
        ("CONFIG", "SET", "timeout"),
        ("CONFIG", "GET",),
    ],
    "config_set_then_get": [
        ("CONFIG", "SET", "timeout", "5"),
        ("CONFIG", "GET", "timeout"),
        ("CONFIG", "SET", "timeout", "0"),
        ("CONFIG", "SET", "hz", "20", "tcp-keepalive", "60"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "GET", "tcp-keepalive"),
        ("CONFIG", "SET", "hz", "10", "tcp-keepalive", "300"),
        ("CONFIG", "SET", "proto-max-bulk-len", "2mb"),
        ("CONFIG", "GET", "proto-max-bulk-len"),
        ("CONFIG", "SET", "proto-max-bulk-len", "512mb"),
        ("CONFIG", "GET", "proto-max-bulk-len"),
        ("CONFIG", "SET", "appendfsync", "ALWAYS"),
        ("CONFIG", "GET", "appendfsync"),
        ("CONFIG", "SET", "appendfsync", "everysec"),
        ("CONFIG", "SET", "loglevel", "WARNING"),
        ("CONFIG", "GET", "loglevel"),
        ("CONFIG", "SET", "loglevel", "notice"),
        ("CONFIG", "SET", "protected-mode", "NO"),
        ("CONFIG", "GET", "protected-mode"),
        ("CONFIG", "SET", "protected-mode", "yes"),
        ("CONFIG", "SET", "client-query-buffer-limit", "2mb"),
        ("CONFIG", "GET", "client-query-buffer-limit"),
        ("CONFIG", "SET", "client-query-buffer-limit", "1gb"),
        ("CONFIG", "SET", "auto-aof-rewrite-min-size", "1gb"),
        ("CONFIG", "GET", "auto-aof-rewrite-min-size"),
        ("CONFIG", "SET", "auto-aof-rewrite-min-size", "64mb"),
        ("CONFIG", "SET", "save", "900 1"),
        ("CONFIG", "GET", "save"),
        ("CONFIG", "SET", "save", ""),
        ("CONFIG", "GET", "save"),
        ("CONFIG", "SET", "maxclients", "10000"),
        ("CONFIG", "SET", "requirepass", ""),
        ("CONFIG", "SET", "timeout", "0", "hz", "10"),
    ],
    "config_get_shared_params": [
        ("CONFIG", "GET", "timeout"),
        ("CONFIG", "GET", "maxclients"),
        ("CONFIG", "GET", "proto-max-bulk-len"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "GET", "appendfsync"),
        ("CONFIG", "GET", "appendonly"),
        ("CONFIG", "GET", "save"),
        ("CONFIG", "GET", "tcp-keepalive"),
        ("CONFIG", "GET", "tcp-backlog"),
        ("CONFIG", "GET", "protected-mode"),
        ("CONFIG", "GET", "client-query-buffer-limit"),
        ("CONFIG", "GET", "loglevel"),
        ("CONFIG", "GET", "requirepass"),
        ("CONFIG", "GET", "aof-load-truncated"),
        ("CONFIG", "GET", "auto-aof-rewrite-percentage"),
        ("CONFIG", "GET", "auto-aof-rewrite-min-size"),
        ("CONFIG", "GET", "enable-debug-command"),
        ("CONFIG", "GET", "nosuchparam"),
        ("CONFIG", "GET", "nosuch*"),
        ("CONFIG", "GET", "time*"),
        ("CONFIG", "GET", "hz*"),
        ("CONFIG", "GET", "proto*"),
        ("CONFIG", "GET", "maxclient?"),
        ("CONFIG", "GET", "*keepalive"),
        ("CONFIG", "GET", "tcp-keepaliv[a-e]"),
        ("CONFIG", "GET", "timeout", "timeout"),
    ],
    "inline_requests": [
        Raw(b"PING\r\n"),
        Raw(b"PING\n"),
        Raw(b"ping hello\r\n"),
        Raw(b"SET ik iv\r\n"),
        Raw(b"GET ik\r\n"),
        Raw(b"ECHO \"a b\"\r\n"),
        Raw(b"ECHO 'a b'\r\n"),
        Raw(b"ECHO \"\\x41\\n\\r\\t\\\\\"\r\n"),
        Raw(b"ECHO 'it\\'s'\r\n"),
        Raw(b"ECHO \"\"\r\n"),
        Raw(b"\r\n\r\n\nPING\r\n"),
        Raw(b"   PING   \r\n"),
        Raw(b"\tECHO\tx\r\n"),
        Raw(b"SET  k2   \"v 2\"  \r\nGET k2\r\n", 2),
        Raw(b"FOO bar\r\n"),
        Raw(b"GET\r\n"),
        Raw(b"SET k\r\n"),
        Raw(b"set k v ex 0\r\n"),
        Raw(b"EXISTS ik ik k2\r\n"),
        Raw(b"*0\r\nPING\r\n"),
        Raw(b"*-1\r\nPING\r\n"),
        Raw(b"PING\r\n*1\r\n$4\r\nPING\r\nPING x\n", 3),
    ],
    "pipelined_requests": [
        Raw(b"".join([
            encode("SET", "p1", "a"),
            encode("SET", "p2", "b", "NX"),
            encode("SET", "p1", "c", "NX"),
            encode("GET", "p1"),
            encode("FOO", "x"),
            encode("GET",),
            encode("SET", "p3", "v", "EX", "0"),
            encode("EXPIRE", "p1", "100000"),
            encode("TTL", "p1"),
            encode("DEL", "p1", "p2", "p3"),
            encode("EXISTS", "p1", "p2"),
            b"PING\r\n",
            encode("ECHO", b"\r\n"),
            encode("DBSIZE"),
        ]), 14),
        Raw(b"".join(encode("SET", "k%d" % i, "v%d" % i) for i in range(500))
            + b"".join(encode("GET", "k%d" % i) for i in range(0, 520, 3)), 500 + 174),
        ("DBSIZE",),
    ],
}

ARITY_CASES = []


def _arity_cases():
    # (command words, Redis arity). Wrong counts are generated around it.
    table = [
        (("SET",), -3), (("SETNX",), 3), (("GET",), 2), (("DEL",), -2), (("EXISTS",), -2),
        (("EXPIRE",), -3), (("PEXPIRE",), -3), (("EXPIREAT",), -3), (("PEXPIREAT",), -3),
        (("TTL",), 2), (("PTTL",), 2), (("EXPIRETIME",), 2), (("PEXPIRETIME",), 2),
        (("PERSIST",), 2), (("ECHO",), 2), (("SELECT",), 2), (("DBSIZE",), 1),
        (("TIME",), 1), (("AUTH",), -2), (("CONFIG",), -2), (("CLIENT",), -2),
        (("CONFIG", "GET"), -3), (("CONFIG", "SET"), -4), (("CONFIG", "RESETSTAT"), 2),
        (("CONFIG", "HELP"), 2), (("CLIENT", "ID"), 2), (("CLIENT", "SETNAME"), 3),
        (("CLIENT", "GETNAME"), 2), (("CLIENT", "INFO"), 2), (("CLIENT", "KILL"), -3),
        (("CLIENT", "NO-EVICT"), 3), (("CLIENT", "HELP"), 2), (("COMMAND", "COUNT"), 2),
        (("COMMAND", "HELP"), 2),
    ]
    cases = []
    for words, arity in table:
        if arity > 0:
            counts = [arity - 1, arity + 1, arity + 3]
        else:
            counts = [-arity - 1]
        for n in counts:
            if n < len(words):
                continue
            args = list(words) + ["a%d" % i for i in range(n - len(words))]
            cases.append(tuple(args))
            # lower case names get the same (lower case) error
            cases.append(tuple(w.lower() for w in words) + tuple(args[len(words):]))
    return cases


SCRIPTS["wrong_arity"] = _arity_cases()


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


# ---------------------------------------------------------------- exact-time replies


@pytest.mark.parametrize("proto", PROTOS)
def test_pexpiretime_returns_the_pxat_deadline_exactly(pair, proto):
    """PEXPIRETIME/EXPIRETIME give back exactly the absolute deadline set with
    PXAT/PEXPIREAT (EXPIRETIME rounds ms to the nearest second). Repeated, since
    an error of one millisecond depends on the sub-millisecond phase."""
    switch_proto(pair, proto)
    base = 4102444800000
    steps = []
    for i in range(25):
        t = base + 500 + i * 37
        steps += [
            ("SET", "k", "v", "PXAT", str(t)),
            ("PEXPIRETIME", "k"),
            ("EXPIRETIME", "k"),
            ("PEXPIREAT", "k", str(t + 1)),
            ("PEXPIRETIME", "k"),
            ("EXPIREAT", "k", str(t // 1000 + 1)),
            ("PEXPIRETIME", "k"),
        ]
    mismatches = []
    for step in steps:
        got, want = pair.both(*step)
        if got != want:
            mismatches.append("%r: latch %r, redis %r" % (step, got, want))
        time.sleep(0.0007)
    assert not mismatches, "\n".join(mismatches[:10])


@pytest.mark.parametrize("proto", PROTOS)
def test_gt_lt_against_the_same_absolute_deadline(pair, proto):
    """PEXPIREAT k T GT (or LT) when k already expires exactly at T sets
    nothing: T is neither greater nor less than itself. Repeated, since an
    error of one millisecond depends on the sub-millisecond phase."""
    switch_proto(pair, proto)
    mismatches = []
    for i in range(25):
        t = str(4102444800000 + i * 13)
        for step in (("SET", "k", "v", "PXAT", t), ("PEXPIREAT", "k", t, "GT"),
                     ("PEXPIREAT", "k", t, "LT"), ("PEXPIREAT", "k", t),
                     ("PEXPIREAT", "k", t, "GT"), ("PEXPIREAT", "k", t, "LT")):
            got, want = pair.both(*step)
            if got != want:
                mismatches.append("%r: latch %r, redis %r" % (step, got, want))
        time.sleep(0.0007)
    assert not mismatches, "\n".join(mismatches[:10])


def test_large_relative_ttls_are_identical(pair):
    """Large EX/PX values: TTL in seconds is deterministic and must agree."""
    check_script(pair, [
        ("SET", "a", "v", "EX", "3000000"),
        ("SET", "b", "v", "PX", "3000000000"),
        ("SET", "c", "v"),
        ("PEXPIRE", "c", "123456789"),
        ("SET", "d", "v"),
        ("EXPIRE", "d", "98765"),
        ("TTL", "a"), ("TTL", "b"), ("TTL", "c"), ("TTL", "d"),
    ])
    # and PTTL is within a second of the requested value
    pttl = pair.latch.cmd("PTTL", "b")
    assert 3000000000 - 1000 < pttl <= 3000000000


# ---------------------------------------------------------------- byte-level details


def test_unknown_command_args_stop_at_nul(pair):
    """Redis formats argument echoes with C strings: an embedded NUL ends the
    echoed argument."""
    check_script(pair, [
        ("FOO", b"a\x00b", "c"),
        ("CONFIG", b"a\x00b"),
        ("SET", "k", "v"),
        ("EXPIRE", "k", "10", b"F\x00O"),
        ("HELLO", "3", b"x\x00y"),
        ("CONFIG", "SET", b"a\x00b", "1"),
    ])


@pytest.mark.parametrize("proto", PROTOS)
def test_command_info_unknown_name_is_null(pair, proto):
    switch_proto(pair, proto)
    check_script(pair, [("COMMAND", "INFO", "nosuchcommand")])


def test_config_get_exact_name_echoes_name_as_given(pair):
    check_script(pair, [("CONFIG", "GET", "TIMEOUT"), ("CONFIG", "GET", "MaxClients")])


def test_config_set_odd_argument_count_is_syntax_error(pair):
    check_script(pair, [
        ("CONFIG", "SET", "timeout", "0", "hz"),
        ("CONFIG", "SET", "timeout", "0", "hz", "10", "maxclients"),
    ])


def test_config_set_range_errors(pair):
    """The bounds named in range errors are Redis's."""
    check_script(pair, [
        ("CONFIG", "SET", "maxclients", "0"),
        ("CONFIG", "SET", "proto-max-bulk-len", "1"),
        ("CONFIG", "SET", "proto-max-bulk-len", "1kb"),
    ])


def test_config_set_hz_out_of_range_is_clamped(pair):
    check_script(pair, [
        ("CONFIG", "SET", "hz", "0"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "SET", "hz", "501"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "SET", "hz", "10"),
    ])


def test_config_set_save_is_validated(pair):
    check_script(pair, [
        ("CONFIG", "SET", "save", "abc"),
        ("CONFIG", "SET", "save", "900"),
        ("CONFIG", "SET", "save", "900 1 300"),
        ("CONFIG", "GET", "save"),
        ("CONFIG", "SET", "save", ""),
    ])


def test_hello_without_auth_when_password_required(server_factory):
    latch = server_factory("latch", "--requirepass", "pw")
    redis = server_factory("redis", "--requirepass", "pw")
    p = lt.Pair(latch.port, redis.port)
    try:
        check_script(p, [
            ("GET", "k"),
            ("PING",),
            ("CLIENT", "SETNAME", "x"),
            ("HELLO", "2", "AUTH", "default", "bad"),
            ("AUTH", "bad"),
            ("AUTH", "default", "bad"),
            ("AUTH", "nosuchuser", "pw"),
            ("HELLO", "3"),
            ("AUTH", "pw"),
            ("GET", "k"),
            ("AUTH", "default", "pw"),
        ])
    finally:
        p.close()


# ---------------------------------------------------------------- where latch differs on purpose


def test_select_nonzero_db(pair):
    got, want = pair.both("SELECT", "1")
    assert want == b"+OK\r\n"
    assert got == b"-ERR DB index is out of range\r\n"
    # the connection is unaffected
    assert pair.latch.raw("SELECT", "0") == b"+OK\r\n"
    assert pair.latch.raw("SET", "k", "v") == b"+OK\r\n"


@pytest.mark.parametrize("proto", PROTOS)
def test_hello_reply(pair, proto):
    got, want = pair.both("HELLO", str(proto))
    assert_hello_equivalent(got, want, proto)
    reply = lt.pairs_to_dict(lt.parse_reply(got)[0])
    assert reply[b"id"] == pair.latch.cmd("CLIENT", "ID")
    assert reply[b"server"] == b"redis"
    # HELLO with no version keeps the protocol and answers the same way
    got, want = pair.both("HELLO")
    assert_hello_equivalent(got, want, proto)
    got, want = pair.both("HELLO", str(proto), "SETNAME", "conn1")
    assert_hello_equivalent(got, want, proto)
    check_script(pair, [("CLIENT", "GETNAME")])


def test_hello_switches_protocol_both_ways(pair):
    check_script(pair, [("GET", "missing"), ("CONFIG", "GET", "timeout")])
    switch_proto(pair, 3)
    check_script(pair, [("GET", "missing"), ("CONFIG", "GET", "timeout")])
    assert pair.latch.raw("GET", "missing") == b"_\r\n"
    got, want = pair.both("HELLO", "2")
    assert_hello_equivalent(got, want, 2)
    assert pair.latch.raw("GET", "missing") == b"$-1\r\n"


@pytest.mark.parametrize("proto", PROTOS)
def test_info(pair, proto):
    switch_proto(pair, proto)
    c = pair.latch
    raw = c.raw("INFO")
    # a bulk string in RESP2, a verbatim "txt" string in RESP3, as Redis sends
    assert raw[:1] == (b"=" if proto == 3 else b"$")
    _, want = pair.both("INFO", "server")
    assert want[:1] == raw[:1]
    fields = lt.info_fields(c.cmd("INFO"))
    assert fields["redis_version"] == "8.4.0"
    assert fields["redis_mode"] == "standalone"
    assert int(fields["tcp_port"]) == c.port
    assert fields["role"] == "master"
    text = c.cmd("INFO", "keyspace").decode()
    assert text.startswith("# Keyspace\r\n")
    assert "db0:" not in text
    # the db0 line has exactly Redis's format
    check_script(pair, [("SET", "a", "1"), ("SET", "b", "2")])
    lines = []
    for conn in (pair.latch, pair.redis):
        info = conn.cmd("INFO", "keyspace").decode()
        lines.append([l for l in info.split("\r\n") if l.startswith("db0:")])
    assert lines[0] == lines[1] == ["db0:keys=2,expires=0,avg_ttl=0"]
    # one section only when asked for one
    server_only = c.cmd("INFO", "server").decode()
    assert server_only.startswith("# Server\r\n") and "# Keyspace" not in server_only
    assert "# Stats" in c.cmd("INFO", "stats").decode()
    assert c.cmd("INFO", "nosuchsection") == b""


@pytest.mark.parametrize("proto", PROTOS)
def test_command_introspection(pair, proto):
    switch_proto(pair, proto)
    c = pair.latch
    everything = c.cmd("COMMAND")
    names = sorted(entry[0] for entry in everything)
    assert c.cmd("COMMAND", "COUNT") == len(everything)
    for required in (b"set", b"get", b"del", b"delifeq", b"delex", b"digest", b"pexpire",
                     b"hello", b"command", b"config", b"client"):
        assert required in names
    info = c.cmd("COMMAND", "INFO", "get", "DELIFEQ")
    assert [i[0] for i in info] == [b"get", b"delifeq"]
    assert info[0][1] == 2 and info[1][1] == 3
    assert info[0][3:6] == [1, 1, 1]  # first key, last key, step
    docs = lt.pairs_to_dict(c.cmd("COMMAND", "DOCS", "delifeq"))
    args = docs[b"delifeq"]
    args = lt.pairs_to_dict(args)[b"arguments"]
    assert [lt.pairs_to_dict(a)[b"name"] for a in args] == [b"key", b"value"]
    # Shared commands have Redis's arity and key positions
    for name in ("set", "get", "del", "exists", "pexpire", "ttl", "persist", "echo"):
        got = c.cmd("COMMAND", "INFO", name)[0]
        want = pair.redis.cmd("COMMAND", "INFO", name)[0]
        assert got[1] == want[1], name
        assert got[3:6] == want[3:6], name


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


def test_config_set_port_is_immutable(latch, latch_server):
    # Redis 7.0 re-binds on CONFIG SET port; latch keeps its port fixed.
    assert latch.raw("CONFIG", "SET", "port", "1") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'port') - "
        b"can't set immutable config\r\n")
    assert lt.pairs_to_dict(latch.cmd("CONFIG", "GET", "port")) == {
        b"port": str(latch_server.port).encode()}


def test_scripting_names_the_native_commands(latch):
    # An unknown digest is Redis's NOSCRIPT (clients then fall back to EVAL).
    assert latch.raw("EVALSHA", "a" * 40, "1", "k") == (
        b"-NOSCRIPT No matching script. Please use EVAL.\r\n")
    for cmd in (("EVAL", "return 1", "0"),
                ("SCRIPT", "LOAD", "return 1"), ("FCALL", "f", "0")):
        reply = latch.cmd(*cmd)
        assert isinstance(reply, lt.RespError), cmd
        assert reply.text.startswith(b"ERR ")
        assert b"DELIFEQ" in reply.text and b"IFEQ" in reply.text
    assert latch.raw("EVAL") == b"-ERR wrong number of arguments for 'eval' command\r\n"


# ---------------------------------------------------------------- commands Redis 7.0 lacks

KNOWN_DIGESTS = {
    b"": b"2d06800538d394c2",
    b"hello": b"9555e8555c62dcfd",
    b"123": b"404a763b3f4c8c9a",
    b"Hello world": b"b6acb9d84a38ff74",
    b"v8": b"0cc76dbb41381419",  # a leading zero: always 16 digits
}


def _xxh3_64():
    """libxxhash's XXH3_64bits through ctypes, or None."""
    name = ctypes.util.find_library("xxhash")
    if not name:
        return None
    try:
        lib = ctypes.CDLL(name)
        f = lib.XXH3_64bits
    except (OSError, AttributeError):
        return None
    f.restype = ctypes.c_uint64
    f.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lambda data: b"%016x" % f(data, len(data))


@pytest.mark.parametrize("proto", PROTOS)
def test_delifeq(latch, proto):
    switch_latch_proto(latch, proto)
    null = b"_\r\n" if proto == 3 else b"$-1\r\n"
    assert latch.raw("SET", "lock", "tok1", "NX", "PX", "30000") == b"+OK\r\n"
    assert latch.raw("DELIFEQ", "lock", "other") == b":0\r\n"
    assert latch.raw("GET", "lock") == b"$4\r\ntok1\r\n"
    assert latch.raw("DELIFEQ", "lock", "TOK1") == b":0\r\n"   # exact bytes
    assert latch.raw("DELIFEQ", "lock", "tok") == b":0\r\n"    # not a prefix
    assert latch.raw("DELIFEQ", "lock", "tok1") == b":1\r\n"
    assert latch.raw("GET", "lock") == null
    assert latch.raw("DELIFEQ", "lock", "tok1") == b":0\r\n"
    assert latch.raw("DELIFEQ", "missing", "x") == b":0\r\n"
    assert latch.raw("SET", "bin", b"a\x00\r\n") == b"+OK\r\n"
    assert latch.raw("DELIFEQ", "bin", b"a\x00") == b":0\r\n"
    assert latch.raw("DELIFEQ", "bin", b"a\x00\r\n") == b":1\r\n"
    assert latch.raw("SET", "n", "123") == b"+OK\r\n"
    assert latch.raw("DELIFEQ", "n", "123") == b":1\r\n"
    assert latch.raw("SET", "e", "") == b"+OK\r\n"
    assert latch.raw("DELIFEQ", "e", "") == b":1\r\n"
    assert latch.raw("delifeq", "e", "") == b":0\r\n"
    for bad in (("DELIFEQ",), ("DELIFEQ", "k"), ("DELIFEQ", "k", "a", "b")):
        assert latch.raw(*bad) == b"-ERR wrong number of arguments for 'delifeq' command\r\n"
    # an expired lock is gone for DELIFEQ too
    assert latch.raw("SET", "short", "t", "PX", "30") == b"+OK\r\n"
    time.sleep(0.06)
    assert latch.raw("DELIFEQ", "short", "t") == b":0\r\n"


def switch_latch_proto(conn, proto):
    if proto == 3:
        reply = conn.cmd("HELLO", "3")
        assert reply[b"proto"] == 3


@pytest.mark.parametrize("proto", PROTOS)
def test_delex(latch, proto):
    switch_latch_proto(latch, proto)
    arity = b"-ERR wrong number of arguments for 'delex' command\r\n"
    assert latch.raw("SET", "k", "tok") == b"+OK\r\n"
    # no condition: a one-key DEL
    assert latch.raw("DELEX", "k") == b":1\r\n"
    assert latch.raw("DELEX", "k") == b":0\r\n"
    # arity is checked before the key is looked up
    for bad in (("DELEX",), ("DELEX", "k", "IFEQ"), ("DELEX", "k", "IFEQ", "a", "b"),
                ("DELEX", "missing", "IFEQ"), ("DELEX", "k", "a", "b", "c", "d")):
        assert latch.raw(*bad) == arity, bad
    # a missing key answers 0 before the condition is examined
    assert latch.raw("DELEX", "missing", "FOO", "x") == b":0\r\n"
    assert latch.raw("DELEX", "missing", "IFDEQ", "123") == b":0\r\n"
    assert latch.raw("DELEX", "missing", "IFEQ", "x") == b":0\r\n"
    assert latch.raw("DELEX", "missing", "IFNE", "x") == b":0\r\n"
    assert latch.raw("SET", "k", "tok") == b"+OK\r\n"
    assert latch.raw("DELEX", "k", "FOO", "x") == \
        b"-ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE\r\n"
    assert latch.raw("DELEX", "k", "IFEQ", "nope") == b":0\r\n"
    assert latch.raw("DELEX", "k", "IFNE", "tok") == b":0\r\n"
    assert latch.raw("EXISTS", "k") == b":1\r\n"
    assert latch.raw("DELEX", "k", "ifeq", "tok") == b":1\r\n"
    assert latch.raw("SET", "k", "tok") == b"+OK\r\n"
    assert latch.raw("DELEX", "k", "IfNe", "other") == b":1\r\n"
    # digests: exactly 16 characters, compared case-insensitively, not checked for hex
    assert latch.raw("SET", "k", "hello") == b"+OK\r\n"
    for bad in ("123", "9555e8555c62dcf", "9555e8555c62dcfdd", ""):
        assert latch.raw("DELEX", "k", "IFDEQ", bad) == \
            b"-ERR must be exactly 16 hexadecimal characters\r\n", bad
        assert latch.raw("DELEX", "k", "IFDNE", bad) == \
            b"-ERR must be exactly 16 hexadecimal characters\r\n", bad
    assert latch.raw("DELEX", "k", "IFDEQ", "z" * 16) == b":0\r\n"
    assert latch.raw("DELEX", "k", "IFDNE", "9555e8555c62dcfd") == b":0\r\n"
    assert latch.raw("DELEX", "k", "IFDEQ", "9555E8555C62DCFD") == b":1\r\n"
    assert latch.raw("SET", "k", "hello") == b"+OK\r\n"
    assert latch.raw("DELEX", "k", "IFDNE", "z" * 16) == b":1\r\n"
    assert latch.raw("EXISTS", "k") == b":0\r\n"


@pytest.mark.parametrize("proto", PROTOS)
def test_digest(latch, proto):
    switch_latch_proto(latch, proto)
    null = b"_\r\n" if proto == 3 else b"$-1\r\n"
    assert latch.raw("DIGEST", "missing") == null
    for value, digest in KNOWN_DIGESTS.items():
        assert latch.raw("SET", "k", value) == b"+OK\r\n"
        assert latch.raw("DIGEST", "k") == b"$16\r\n" + digest + b"\r\n", value
        # the digest DIGEST prints is the one IFDEQ accepts
        assert latch.raw("SET", "k", value + b"!", "IFDEQ", digest, "GET") == \
            b"$%d\r\n%s\r\n" % (len(value), value)
        assert latch.raw("GET", "k") == b"$%d\r\n%s!\r\n" % (len(value) + 1, value)
    assert latch.raw("DIGEST") == b"-ERR wrong number of arguments for 'digest' command\r\n"
    assert latch.raw("DIGEST", "a", "b") == \
        b"-ERR wrong number of arguments for 'digest' command\r\n"


def test_digest_matches_xxh3_64_and_ifdeq(latch):
    """DIGEST is XXH3-64 (seed 0) as 16 lower-case hex digits, for any bytes;
    and whatever DIGEST prints is exactly what IFDEQ/IFDNE match."""
    xxh3 = _xxh3_64()
    values = [b"", b"a", b"\x00", b"\r\n", b"x" * 1000, bytes(range(256)),
              b"lock-token-8d6f0c11", b"\xff" * 17, b"123456789012345678901"]
    for i in range(40):
        values.append(("value-%d-" % i).encode() * (i + 1))
    for v in values:
        assert latch.raw("SET", "k", v) == b"+OK\r\n"
        digest = latch.cmd("DIGEST", "k")
        assert len(digest) == 16 and digest == digest.lower()
        int(digest, 16)
        if xxh3 is not None:
            assert digest == xxh3(v), v
        assert latch.raw("SET", "k", v, "IFDNE", digest) == b"$-1\r\n"
        assert latch.raw("SET", "k", v, "IFDEQ", digest.upper()) == b"+OK\r\n"
        assert latch.raw("DELEX", "k", "IFDNE", digest) == b":0\r\n"
        assert latch.raw("DELEX", "k", "IFDEQ", digest) == b":1\r\n"
    if xxh3 is None:
        pytest.skip("libxxhash not found: checked DIGEST against IFDEQ and known vectors only")


@pytest.mark.parametrize("proto", PROTOS)
def test_set_ifeq_ifne(latch, proto):
    switch_latch_proto(latch, proto)
    null = b"_\r\n" if proto == 3 else b"$-1\r\n"
    # missing key: IFEQ fails and creates nothing, IFNE creates
    assert latch.raw("SET", "k", "v", "IFEQ", "a") == null
    assert latch.raw("EXISTS", "k") == b":0\r\n"
    assert latch.raw("SET", "k", "v", "IFEQ", "a", "GET") == null
    assert latch.raw("EXISTS", "k") == b":0\r\n"
    assert latch.raw("SET", "k", "v1", "IFNE", "a") == b"+OK\r\n"
    assert latch.raw("GET", "k") == b"$2\r\nv1\r\n"
    assert latch.raw("SET", "k2", "x", "IFNE", "a", "GET") == null
    assert latch.raw("GET", "k2") == b"$1\r\nx\r\n"
    # present: condition false leaves value and TTL alone
    assert latch.raw("SET", "k", "tok", "PX", "300000") == b"+OK\r\n"
    assert latch.raw("SET", "k", "stolen", "IFEQ", "other", "PX", "1") == null
    assert latch.raw("SET", "k", "stolen", "IFEQ", "other", "GET") == b"$3\r\ntok\r\n"
    assert latch.raw("SET", "k", "stolen", "IFNE", "tok") == null
    assert latch.raw("GET", "k") == b"$3\r\ntok\r\n"
    assert 290000 < latch.cmd("PTTL", "k") <= 300000
    # renew: the lock recipe
    assert latch.raw("SET", "k", "tok", "IFEQ", "tok", "PX", "600000") == b"+OK\r\n"
    assert 590000 < latch.cmd("PTTL", "k") <= 600000
    # without an expiry a successful SET clears the TTL; KEEPTTL keeps it
    assert latch.raw("SET", "k", "tok", "ifeq", "tok", "KEEPTTL") == b"+OK\r\n"
    assert latch.cmd("PTTL", "k") > 0
    assert latch.raw("SET", "k", "tok2", "IfEq", "tok", "GET") == b"$3\r\ntok\r\n"
    assert latch.cmd("PTTL", "k") == -1
    assert latch.raw("SET", "k", "tok3", "IFNE", "zzz", "EX", "100") == b"+OK\r\n"
    assert latch.cmd("TTL", "k") == 100
    # an elapsed PXAT with a true condition deletes the key and says OK
    assert latch.raw("SET", "k", "gone", "IFEQ", "tok3", "PXAT", "1") == b"+OK\r\n"
    assert latch.raw("EXISTS", "k") == b":0\r\n"
    # binary-exact comparison
    assert latch.raw("SET", "b", b"a\x00b") == b"+OK\r\n"
    assert latch.raw("SET", "b", "x", "IFEQ", "a") == null
    assert latch.raw("SET", "b", "x", "IFEQ", b"a\x00b") == b"+OK\r\n"


def test_set_if_conditions_syntax(latch):
    syntax = b"-ERR syntax error\r\n"
    assert latch.raw("SET", "k", "v") == b"+OK\r\n"
    for bad in (
        ("SET", "k", "v", "IFEQ"),
        ("SET", "k", "v", "IFNE"),
        ("SET", "k", "v", "IFDEQ"),
        ("SET", "k", "v", "IFEQ", "a", "NX"),
        ("SET", "k", "v", "NX", "IFEQ", "a"),
        ("SET", "k", "v", "IFEQ", "a", "XX"),
        ("SET", "k", "v", "xx", "ifne", "a"),
        ("SET", "k", "v", "IFDEQ", "0" * 16, "NX"),
        ("SET", "k", "v", "IFEQ", "a", "IFEQ", "a"),
        ("SET", "k", "v", "IFEQ", "a", "IFNE", "b"),
        ("SET", "k", "v", "IFDEQ", "0" * 16, "IFDNE", "0" * 16),
        ("SET", "k", "v", "IFEQ", "v", "EX", "100", "KEEPTTL"),
        ("SET", "k", "v", "IFEQ", "v", "EX", "100", "PX", "100"),
        ("SET", "k", "v", "IFEQ", "v", "GET", "FOO"),
    ):
        assert latch.raw(*bad) == syntax, bad
    assert latch.raw("GET", "k") == b"$1\r\nv\r\n"
    # expiry values are still validated
    assert latch.raw("SET", "k", "v", "IFEQ", "v", "EX", "0") == \
        b"-ERR invalid expire time in 'set' command\r\n"
    assert latch.raw("SET", "k", "v", "IFEQ", "v", "EX", "x") == \
        b"-ERR value is not an integer or out of range\r\n"


def test_set_ifdeq_ifdne(latch):
    digest_error = b"-ERR must be exactly 16 hexadecimal characters\r\n"
    # missing key: the digest is not validated; IFDEQ fails, IFDNE creates
    assert latch.raw("SET", "m", "v", "IFDEQ", "1234567890") == b"$-1\r\n"
    assert latch.raw("EXISTS", "m") == b":0\r\n"
    assert latch.raw("SET", "m", "v", "IFDNE", "1234567890") == b"+OK\r\n"
    assert latch.raw("GET", "m") == b"$1\r\nv\r\n"
    # present: the digest must have 16 characters, even with GET (one reply only)
    assert latch.raw("SET", "k", "hello") == b"+OK\r\n"
    assert latch.raw("SET", "k", "x", "IFDEQ", "123") == digest_error
    assert latch.raw("SET", "k", "x", "IFDNE", "9555e8555c62dcfdd", "GET") == digest_error
    assert latch.raw("PING") == b"+PONG\r\n"  # nothing extra was queued
    assert latch.raw("SET", "k", "x", "IFDEQ", "0000000000000000") == b"$-1\r\n"
    assert latch.raw("SET", "k", "x", "IFDNE", "9555e8555c62dcfd") == b"$-1\r\n"
    assert latch.raw("GET", "k") == b"$5\r\nhello\r\n"
    assert latch.raw("SET", "k", "x", "IFDEQ", "9555E8555c62dcfd", "GET") == b"$5\r\nhello\r\n"
    assert latch.raw("GET", "k") == b"$1\r\nx\r\n"
    assert latch.raw("SET", "k", "y", "IFDNE", "zzzzzzzzzzzzzzzz") == b"+OK\r\n"
    assert latch.raw("GET", "k") == b"$1\r\ny\r\n"


def test_lock_recipe_in_resp3(latch):
    """The README's recipe: acquire, fail to acquire, renew, release."""
    switch_latch_proto(latch, 3)
    assert latch.raw("SET", "lock:orders", "tokA", "NX", "PX", "30000") == b"+OK\r\n"
    assert latch.raw("SET", "lock:orders", "tokB", "NX", "PX", "30000") == b"_\r\n"
    assert latch.raw("SET", "lock:orders", "tokB", "IFEQ", "tokB", "PX", "30000") == b"_\r\n"
    assert latch.raw("SET", "lock:orders", "tokA", "IFEQ", "tokA", "PX", "30000") == b"+OK\r\n"
    assert latch.raw("DELIFEQ", "lock:orders", "tokB") == b":0\r\n"
    assert latch.raw("DELEX", "lock:orders", "IFEQ", "tokA") == b":1\r\n"
    assert latch.raw("SET", "lock:orders", "tokB", "NX", "PX", "30000") == b"+OK\r\n"
