"""Differential tests: the same requests go to Debian's redis-server 7.0 and
to latch, and the raw replies must be identical, byte for byte.

Each script starts from FLUSHALL on fresh connections. Scripts run in RESP2
and again after HELLO 3 (RESP3), where nulls are `_` and CONFIG GET is a map.
Where latch deliberately differs from Redis 7.0 (HELLO's version,
INFO, COMMAND, CLIENT LIST) the reply is not compared; latch's documented
reply is asserted instead. Commands Redis 7.0 does not have (DELIFEQ, DELEX,
DIGEST, SET IFEQ/IFNE/IFDEQ/IFDNE) are checked against their documented
behaviour (Valkey 9 / Redis 8.4).
"""

import ctypes
import ctypes.util
import re
import time

import pytest

import latchtest as lt
from latchtest import encode


from differential import (PROTOS, Raw, assert_hello_equivalent, check_script, run_script,
                          switch_proto)


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
        # issue 15
        (("INCR",), 2), (("DECR",), 2), (("INCRBY",), 3), (("DECRBY",), 3),
        (("INCRBYFLOAT",), 3), (("MGET",), -2), (("MSET",), -3), (("MSETNX",), -3),
        (("GETDEL",), 2), (("GETEX",), -2), (("GETSET",), 3), (("APPEND",), 3),
        (("STRLEN",), 2), (("GETRANGE",), 4), (("SUBSTR",), 4), (("SETRANGE",), 4),
        (("UNLINK",), -2), (("TOUCH",), -2), (("RANDOMKEY",), 1), (("KEYS",), 2),
        (("SCAN",), -2), (("TYPE",), 2), (("WAIT",), 3), (("OBJECT",), -2),
        (("OBJECT", "ENCODING"), 3), (("OBJECT", "FREQ"), 3), (("OBJECT", "IDLETIME"), 3),
        (("OBJECT", "REFCOUNT"), 3), (("OBJECT", "HELP"), 2), (("MEMORY",), -2),
        (("MEMORY", "USAGE"), -3), (("MEMORY", "DOCTOR"), 2), (("MEMORY", "STATS"), 2),
        (("MEMORY", "PURGE"), 2), (("MEMORY", "MALLOC-STATS"), 2), (("MEMORY", "HELP"), 2),
        (("SLOWLOG",), -2), (("SLOWLOG", "LEN"), 2), (("SLOWLOG", "RESET"), 2),
        (("SLOWLOG", "HELP"), 2), (("LATENCY",), -2), (("LATENCY", "LATEST"), 2),
        (("LATENCY", "HISTORY"), 3), (("LATENCY", "GRAPH"), 3), (("LATENCY", "DOCTOR"), 2),
        (("LATENCY", "HELP"), 2), (("CLIENT", "REPLY"), 3),
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

# ---------------------------------------------------------------- issue 15: the string family

SCRIPTS.update({
    "incr_decr": [
        ("INCR", "n"),
        ("INCR", "n"),
        ("DECR", "n"),
        ("DECR", "missing"),
        ("INCRBY", "n", "100"),
        ("INCRBY", "n", "-250"),
        ("DECRBY", "n", "7"),
        ("DECRBY", "n", "-7"),
        ("GET", "n"),
        ("INCRBY", "n", "abc"),
        ("INCRBY", "n", "1.5"),
        ("INCRBY", "n", ""),
        ("INCRBY", "n", "01"),
        ("INCRBY", "n", " 1"),
        ("INCRBY", "n", "99999999999999999999"),
        ("DECRBY", "n", "x"),
        ("SET", "s", "abc"),
        ("INCR", "s"),
        ("DECR", "s"),
        ("INCRBY", "s", "1"),
        ("SET", "s", " 5"),
        ("INCR", "s"),
        ("SET", "s", "5 "),
        ("INCR", "s"),
        ("SET", "s", "-0"),
        ("INCR", "s"),
        ("SET", "s", "1.0"),
        ("INCR", "s"),
        ("SET", "s", ""),
        ("INCR", "s"),
        ("SET", "s", "123456789012345678901"),
        ("INCR", "s"),
        # overflow at both ends
        ("SET", "big", BIG),
        ("INCR", "big"),
        ("INCRBY", "big", "1"),
        ("INCRBY", "big", "0"),
        ("DECRBY", "big", "-1"),
        ("INCRBY", "big", "-" + BIG),
        ("GET", "big"),
        ("SET", "small", "-9223372036854775808"),
        ("DECR", "small"),
        ("INCRBY", "small", "-1"),
        ("DECRBY", "small", "1"),
        ("INCR", "small"),
        ("GET", "small"),
        ("DECRBY", "x", "-9223372036854775808"),
        ("DECRBY", "x", "9223372036854775807"),
        ("INCRBY", "y", "-9223372036854775808"),
        ("DECR", "y"),
        ("EXISTS", "x"),
        # the key keeps its TTL (a rate limiter's window)
        ("SET", "rl", "1", "EX", "1000"),
        ("INCR", "rl"),
        ("INCRBY", "rl", "5"),
        ("TTL", "rl"),
        ("GET", "rl"),
        ("SET", "rl", "1", "EXAT", "4102444800"),
        ("DECR", "rl"),
        ("EXPIRETIME", "rl"),
    ],
    "incrbyfloat": [
        ("INCRBYFLOAT", "f", "1"),
        ("INCRBYFLOAT", "f", "0.1"),
        ("INCRBYFLOAT", "f", "0.2"),
        ("INCRBYFLOAT", "f", "-1.3"),
        ("GET", "f"),
        ("INCRBYFLOAT", "f", "1e3"),
        ("INCRBYFLOAT", "f", "1.5e-3"),
        ("INCRBYFLOAT", "f", "-1E2"),
        ("INCRBYFLOAT", "f", "0x10"),
        ("INCRBYFLOAT", "f", "0X1p-2"),
        ("INCRBYFLOAT", "f", "+2"),
        ("INCRBYFLOAT", "f", ".5"),
        ("INCRBYFLOAT", "f", "5."),
        ("INCRBYFLOAT", "g", "1e300"),
        ("INCRBYFLOAT", "g2", "-1e300"),
        ("INCRBYFLOAT", "g3", "1.7976931348623157e308"),
        ("INCRBYFLOAT", "g4", "1e4000"),
        ("INCRBYFLOAT", "g5", "3.0e-5"),
        ("INCRBYFLOAT", "g6", "5e-400"),
        ("INCRBYFLOAT", "g7", "0.1"),
        ("INCRBYFLOAT", "g7", "0.2"),
        ("INCRBYFLOAT", "g8", "10.5"),
        ("INCRBYFLOAT", "g8", "-10.5"),
        ("INCRBYFLOAT", "g9", "-0.0"),
        ("INCRBYFLOAT", "g9", "-0.0"),
        ("INCRBYFLOAT", "g10", "1234567890.123456789"),
        ("INCRBYFLOAT", "g11", "3"),
        ("INCRBYFLOAT", "g11", "9007199254740993"),
        ("INCRBYFLOAT", "g12", "-123.456e10"),
        # not numbers, and the inf/nan rules
        ("INCRBYFLOAT", "e", "abc"),
        ("INCRBYFLOAT", "e", ""),
        ("INCRBYFLOAT", "e", " 1"),
        ("INCRBYFLOAT", "e", "1 "),
        ("INCRBYFLOAT", "e", "1,5"),
        ("INCRBYFLOAT", "e", "nan"),
        ("INCRBYFLOAT", "e", "NaN"),
        ("INCRBYFLOAT", "e", "-nan"),
        ("INCRBYFLOAT", "e", "inf"),
        ("INCRBYFLOAT", "e", "-inf"),
        ("INCRBYFLOAT", "e", "infinity"),
        ("INCRBYFLOAT", "e", "+Infinity"),
        ("INCRBYFLOAT", "e", "1e5000"),
        ("INCRBYFLOAT", "e", "-1e5000"),
        ("INCRBYFLOAT", "e", "1e-5000"),
        ("INCRBYFLOAT", "e", b"1\x002"),
        ("INCRBYFLOAT", "e", "1" * 5200),
        ("EXISTS", "e"),
        ("SET", "big", "1e4932"),
        ("INCRBYFLOAT", "big", "1e4932"),
        ("SET", "s", "abc"),
        ("INCRBYFLOAT", "s", "1"),
        ("INCRBYFLOAT", "s", "abc"),
        ("SET", "s", "inf"),
        ("INCRBYFLOAT", "s", "1"),
        ("SET", "s", "10"),
        ("INCRBYFLOAT", "s", "-inf"),
        ("SET", "s", " 10"),
        ("INCRBYFLOAT", "s", "1"),
        ("SET", "s", "0x1A"),
        ("INCRBYFLOAT", "s", "0"),
        ("SET", "s", "7"),
        ("INCRBYFLOAT", "s", "0"),
        ("GET", "s"),
        # the key keeps its TTL
        ("SET", "t", "1.5", "EX", "1000"),
        ("INCRBYFLOAT", "t", "1"),
        ("TTL", "t"),
        ("GET", "t"),
    ],
    "mget_mset_msetnx": [
        ("MSET", "a", "1", "b", "2", "c", ""),
        ("MGET", "a", "b", "c", "missing", "a"),
        ("MSET", "a", "1", "b"),
        ("MSET", "a"),
        ("MSETNX", "a", "9", "d", "4"),
        ("MGET", "a", "d"),
        ("MSETNX", "d", "4", "e", "5"),
        ("MSETNX", "d"),
        ("MSETNX", "f", "1", "g"),
        ("MGET", "d", "e"),
        ("MSETNX", "x", "1", "x", "2"),
        ("GET", "x"),
        ("MSET", "a", "1", "a", "2", "a", "3"),
        ("GET", "a"),
        # MSET removes TTLs; MSETNX on an expired key is allowed
        ("SET", "t", "v", "EX", "1000"),
        ("MSET", "t", "w"),
        ("TTL", "t"),
        ("MSET", b"bin\x00key", b"v\r\n", "", "empty-key"),
        ("MGET", b"bin\x00key", "", b"bin"),
        ("DBSIZE",),
    ],
    "getdel_getex_getset": [
        ("SET", "k", "v"),
        ("GETDEL", "k"),
        ("GETDEL", "k"),
        ("EXISTS", "k"),
        ("GETDEL", "missing"),
        ("SET", "k", "v", "EX", "1000"),
        ("GETEX", "k"),
        ("TTL", "k"),
        ("GETEX", "k", "PERSIST"),
        ("TTL", "k"),
        ("GETEX", "k", "PERSIST"),
        ("GETEX", "k", "EX", "200"),
        ("TTL", "k"),
        ("GETEX", "k", "PX", "300000"),
        ("TTL", "k"),
        ("GETEX", "k", "EXAT", "4102444800"),
        ("EXPIRETIME", "k"),
        ("GETEX", "k", "PXAT", "4102444900000"),
        ("PEXPIRETIME", "k"),
        ("GETEX", "k", "ex", "100", "EX", "150"),
        ("TTL", "k"),
        ("GETEX", "k", "persist", "PERSIST"),
        ("TTL", "k"),
        # wrong options: the syntax first, the key next, the time last
        ("GETEX", "k", "EX"),
        ("GETEX", "k", "PERSIST", "EX", "10"),
        ("GETEX", "k", "EX", "10", "PERSIST"),
        ("GETEX", "k", "EX", "10", "PX", "10"),
        ("GETEX", "k", "EXAT", "10", "PXAT", "10"),
        ("GETEX", "k", "KEEPTTL"),
        ("GETEX", "k", "NX"),
        ("GETEX", "k", "XX"),
        ("GETEX", "k", "GET"),
        ("GETEX", "k", "FOO"),
        ("GETEX", "missing", "EX", "abc"),
        ("GETEX", "missing", "EX", "0"),
        ("GETEX", "missing", "FOO"),
        ("GETEX", "k", "EX", "abc"),
        ("GETEX", "k", "EX", "0"),
        ("GETEX", "k", "PX", "-1"),
        ("GETEX", "k", "EXAT", "0"),
        ("GETEX", "k", "EX", BIG),
        ("GETEX", "k", "EX", "9223372036854775"),
        ("GETEX", "k", "PX", BIG),
        ("GETEX", "k", "EX", "1.5"),
        ("TTL", "k"),
        # an absolute time already past deletes the key, after returning it
        ("GETEX", "k", "PXAT", "1"),
        ("EXISTS", "k"),
        ("SET", "k", "v"),
        ("GETEX", "k", "EXAT", "1000"),
        ("GET", "k"),
        # GETSET
        ("GETSET", "g", "1"),
        ("GETSET", "g", "2"),
        ("GET", "g"),
        ("SET", "g", "v", "EX", "1000"),
        ("GETSET", "g", "w"),
        ("TTL", "g"),
    ],
    "append_strlen_getrange_setrange": [
        ("APPEND", "a", "hello"),
        ("APPEND", "a", " world"),
        ("GET", "a"),
        ("STRLEN", "a"),
        ("STRLEN", "missing"),
        ("APPEND", "e", ""),
        ("EXISTS", "e"),
        ("STRLEN", "e"),
        ("APPEND", "a", ""),
        ("APPEND", "bin", b"\x00\r\n"),
        ("APPEND", "bin", b"\xff"),
        ("GET", "bin"),
        ("SET", "t", "x", "EX", "1000"),
        ("APPEND", "t", "y"),
        ("TTL", "t"),
        ("GETRANGE", "a", "0", "4"),
        ("GETRANGE", "a", "-5", "-1"),
        ("GETRANGE", "a", "6", "100"),
        ("GETRANGE", "a", "100", "200"),
        ("GETRANGE", "a", "5", "2"),
        ("GETRANGE", "a", "-1", "-5"),
        ("GETRANGE", "a", "-100", "2"),
        ("GETRANGE", "a", "0", "-100"),
        ("GETRANGE", "a", "-100", "-100"),
        ("GETRANGE", "a", "0", "0"),
        ("GETRANGE", "a", "0", "-1"),
        ("GETRANGE", "a", BIG, BIG),
        ("GETRANGE", "a", "-9223372036854775808", "9223372036854775807"),
        ("GETRANGE", "missing", "0", "-1"),
        ("GETRANGE", "a", "x", "1"),
        ("GETRANGE", "a", "1", "x"),
        ("GETRANGE", "missing", "x", "1"),
        ("GETRANGE", "e", "0", "-1"),
        ("SUBSTR", "a", "0", "4"),
        ("SUBSTR", "a", "-3", "-1"),
        ("SETRANGE", "a", "6", "WORLD"),
        ("GET", "a"),
        ("SETRANGE", "a", "14", "!"),
        ("GET", "a"),
        ("SETRANGE", "a", "0", ""),
        ("SETRANGE", "new", "3", "abc"),
        ("GET", "new"),
        ("SETRANGE", "none", "5", ""),
        ("EXISTS", "none"),
        ("SETRANGE", "a", "-1", "x"),
        ("SETRANGE", "a", "abc", "x"),
        ("SETRANGE", "a", "1.5", "x"),
        ("SETRANGE", "missing", "-1", ""),
        # the 512 MB limit (proto-max-bulk-len), without allocating it
        ("SETRANGE", "huge", "536870912", "x"),
        ("SETRANGE", "huge", "536870911", "xy"),
        ("SETRANGE", "huge", BIG, "x"),
        ("EXISTS", "huge"),
        ("SET", "t", "x", "EX", "1000"),
        ("SETRANGE", "t", "2", "y"),
        ("TTL", "t"),
        ("GET", "t"),
    ],
    "append_limit_follows_proto_max_bulk_len": [
        ("CONFIG", "SET", "proto-max-bulk-len", "1mb"),
        ("SET", "k", "x" * 600000),
        ("APPEND", "k", "y" * 448576),
        ("APPEND", "k", "z" * 100001),
        ("STRLEN", "k"),
        ("APPEND", "k", "z"),
        ("SETRANGE", "k", "1048575", "a"),
        ("SETRANGE", "k", "1048575", "ab"),
        ("SETRANGE", "k2", "1048576", "a"),
        ("STRLEN", "k"),
        ("CONFIG", "SET", "proto-max-bulk-len", "512mb"),
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
        "0", "1", "9999", "10000", "-1", "123456", "-9223372036854775808", BIG,
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
    "memory_usage_errors": [
        ("MEMORY", "USAGE", "missing"),
        ("MEMORY", "USAGE", "missing", "SAMPLES", "5"),
        ("MEMORY", "USAGE", "missing", "SAMPLES"),
        ("MEMORY", "USAGE", "missing", "SAMPLES", "-1"),
        ("MEMORY", "USAGE", "missing", "SAMPLES", "abc"),
        ("MEMORY", "USAGE", "missing", "FOO", "1"),
        ("MEMORY", "USAGE", "missing", "samples", "0", "SAMPLES"),
        ("MEMORY", "HELP"),
        ("MEMORY", "FOO"),
        ("MEMORY", "PURGE"),
    ],
    "slowlog_and_latency_errors": [
        ("SLOWLOG", "GET", "abc"),
        ("SLOWLOG", "GET", "-2"),
        ("SLOWLOG", "GET", "1.5"),
        ("SLOWLOG", "GET", "1", "2"),
        ("slowlog", "get", "1", "2"),
        ("SLOWLOG", "HELP"),
        ("SLOWLOG", "FOO"),
        ("LATENCY", "LATEST"),
        ("LATENCY", "HISTORY", "command"),
        ("LATENCY", "HISTORY", "nosuchevent"),
        ("LATENCY", "RESET", "nosuchevent"),
        ("LATENCY", "GRAPH", "command"),
        ("LATENCY", "GRAPH", b"no\x00such"),
        ("LATENCY", "HISTOGRAM", "nosuchcommand"),
        ("LATENCY", "HELP"),
        ("LATENCY", "FOO"),
        ("CONFIG", "GET", "slowlog-log-slower-than"),
        ("CONFIG", "GET", "slowlog-max-len"),
        ("CONFIG", "GET", "latency-monitor-threshold"),
        ("CONFIG", "GET", "latency-tracking"),
        ("CONFIG", "GET", "latency-tracking-info-percentiles"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "-2"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "abc"),
        ("CONFIG", "SET", "slowlog-max-len", "-1"),
        ("CONFIG", "SET", "latency-monitor-threshold", "-1"),
        ("CONFIG", "SET", "latency-tracking", "maybe"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "abc"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "101"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "50 -1"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "50.0 99.90 0.5 100"),
        ("CONFIG", "GET", "latency-tracking-info-percentiles"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", ""),
        ("CONFIG", "GET", "latency-tracking-info-percentiles"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9"),
        ("CONFIG", "SET", "slowlog-max-len", "64", "latency-monitor-threshold", "0"),
        ("CONFIG", "GET", "slowlog-max-len"),
        ("CONFIG", "SET", "slowlog-max-len", "128"),
    ],
    "wait": [
        ("WAIT", "0", "0"),
        ("WAIT", "5", "100"),  # Redis waits the 100 ms; latch does not
        ("WAIT", "-1", "0"),
        ("WAIT", "0", BIG),
        ("WAIT", "a", "0"),
        ("WAIT", "1.5", "0"),
        ("WAIT", "0", "a"),
        ("WAIT", "0", "1.5"),
        ("WAIT", "0", "-1"),
        ("WAIT", "a", "-1"),
        ("SET", "k", "v"),
        ("WAIT", "0", "0"),
        ("MULTI",),
        ("WAIT", "1", "0"),
        ("EXEC",),
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
    "past_pxat_on_a_missing_key_is_a_write": [
        ("WATCH", "k1"),
        ("SET", "k1", "v", "PXAT", "1"),
        ("MULTI",),
        ("PING",),
        ("EXEC",),
        ("WATCH", "k2"),
        ("SET", "k2", "v", "EXAT", "1", "NX"),
        ("MULTI",),
        ("PING",),
        ("EXEC",),
        ("WATCH", "k3"),
        ("GETEX", "k3", "PXAT", "1"),
        ("MULTI",),
        ("PING",),
        ("EXEC",),
    ],
    "option_words_are_c_strings": [
        ("SET", "k", "v", b"NX\x00"),
        ("SET", "k", "v2", b"xx\x00junk"),
        ("GET", "k"),
        ("SET", "k", "v", b"EX\x00", "100"),
        ("TTL", "k"),
        ("SET", "k", "v", b"PX\x00abc", "100000"),
        ("TTL", "k"),
        ("SET", "k", "v", b"KEEPTTL\x00"),
        ("TTL", "k"),
        ("SET", "k", "v", b"GET\x00"),
        ("SET", "k", "v", b"N\x00X"),
        ("EXPIRE", "k", "100", b"nx\x00"),
        ("EXPIRE", "k", "100", b"xx\x00abc"),
        ("EXPIRE", "k", "200", b"GT\x00"),
        ("TTL", "k"),
        ("EXPIRE", "k", "100", b"L\x00T"),
        ("GETEX", "k", b"PERSIST\x00"),
        ("TTL", "k"),
        ("GETEX", "k", b"EX\x00x", "10"),
        ("TTL", "k"),
        ("FLUSHALL", b"ASYNC\x00"),
        ("SCAN", "0", b"MATCH\x00", "k*"),
        ("CLIENT", "KILL", b"SKIPME\x00", b"YES\x00", "ID", "999999"),
        ("SCRIPT", "FLUSH", b"ASYNC\x00x"),
    ],
    # latch's defaults are Redis's: no cap on lease length, no quarantine on a
    # data directory never used (the fixture runs latch with its defaults).
    "defaults_are_redis_defaults": [
        ("SET", "session", "x", "EX", "3600"),
        ("TTL", "session"),
        ("SET", "forever", "x", "EX", "315360000"),
        ("TTL", "forever"),
        ("EXPIRE", "session", "86400"),
        ("TTL", "session"),
        ("SET", "lock", "t", "NX", "PX", "30000"),
        ("INCR", "counter"),
        ("GETEX", "session", "PERSIST"),
        ("TTL", "session"),
    ],
})


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


def test_info_keyspace_lists_every_database_with_keys(pair):
    """One line per database that has keys, in order, in Redis's format; the
    keys and expires counts must match exactly. avg_ttl is an estimate Redis
    refreshes from its expiry cycle's samples: latch computes it exactly, so
    only its range is checked."""
    steps = [("SET", "a", "1"), ("SELECT", "3"), ("SET", "a", "1"),
             ("SET", "b", "1", "PX", "60000"), ("SELECT", "15"), ("SET", "c", "1", "EX", "100"),
             ("SELECT", "0")]
    check_script(pair, steps)
    time.sleep(0.3)  # let Redis's expiry cycle sample the TTLs
    parsed = []
    for conn in (pair.latch, pair.redis):
        info = conn.cmd("INFO", "keyspace").decode()
        rows = [l for l in info.split("\r\n") if l.startswith("db")]
        parsed.append([re.match(r"(db\d+):keys=(\d+),expires=(\d+),avg_ttl=(\d+)$", r).groups()
                       for r in rows])
    got, want = parsed
    assert [r[:3] for r in got] == [r[:3] for r in want] == [
        ("db0", "1", "0"), ("db3", "2", "1"), ("db15", "1", "1")]
    assert got[0][3] == "0"
    assert 59000 <= int(got[1][3]) <= 60000
    assert 99000 <= int(got[2][3]) <= 100000
    # A database emptied by SWAPDB or FLUSHDB leaves the list.
    check_script(pair, [("SWAPDB", "3", "4"), ("SELECT", "15"), ("FLUSHDB",), ("SELECT", "0")])
    for conn in (pair.latch, pair.redis):
        rows = [l.split(":")[0] for l in conn.cmd("INFO", "keyspace").decode().split("\r\n")
                if l.startswith("db")]
        assert rows == ["db0", "db4"]


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


# ---------------------------------------------------------------- issue 15: beyond byte-for-byte scripts
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


@pytest.mark.parametrize("proto", PROTOS)
def test_slowlog_entries(pair, proto):
    """With slowlog-log-slower-than 0 every command is logged: the entries
    (arguments, truncation, redaction, client name, order, GET's count) are
    Redis's; ids, times and durations are the server's own."""
    switch_proto(pair, proto)
    steps = [
        ("CONFIG", "SET", "slowlog-log-slower-than", "0"),
        ("SLOWLOG", "RESET"),
        ("CLIENT", "SETNAME", "slow-client"),
        ("SET", "k", "x" * 200),
        ("DEL",) + tuple("k%d" % i for i in range(40)),
        ("AUTH", "secret"),
        ("AUTH", "someone", "secret"),
        ("HELLO", str(proto), "AUTH", "default", "secret"),
        ("CONFIG", "SET", "requirepass", ""),
        ("MULTI",),
        ("SET", "t", "1"),
        ("INCR", "t"),
        ("EXEC",),
        ("GET", b"bin\x00\r\n"),
        ("CLIENT", "SETNAME", ""),
        ("PING",),
    ]
    for step in steps:
        pair.both(*step)
    entries = []
    for conn in (pair.latch, pair.redis):
        log = conn.cmd("SLOWLOG", "GET", "-1")
        length = conn.cmd("SLOWLOG", "LEN")
        assert conn.cmd("CONFIG", "SET", "slowlog-log-slower-than", "10000") == b"OK"
        ids = [e[0] for e in log]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
        for e in log:
            assert isinstance(e[1], int) and e[1] > 1700000000 and e[2] >= 0
            assert e[4].startswith(b"127.0.0.1:")
        entries.append(([(e[3], e[5]) for e in log], length))
        assert len(conn.cmd("SLOWLOG", "GET")) == min(10, length)
        assert len(conn.cmd("SLOWLOG", "GET", "3")) == 3
        assert conn.cmd("SLOWLOG", "GET", "0") == []
    assert entries[0] == entries[1]
    check_script(pair, [("SLOWLOG", "RESET"), ("SLOWLOG", "LEN"), ("SLOWLOG", "GET")])


def test_slowlog_max_len_and_threshold(pair):
    check_script(pair, [
        ("CONFIG", "SET", "slowlog-log-slower-than", "0"),
        ("CONFIG", "SET", "slowlog-max-len", "3"),
        ("SLOWLOG", "RESET"),
        ("PING",), ("PING",), ("PING",), ("PING",), ("PING",),
        ("SLOWLOG", "LEN"),
        ("CONFIG", "SET", "slowlog-max-len", "1"),
        ("SLOWLOG", "LEN"),  # trimmed only when the next command is logged
        ("SLOWLOG", "LEN"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "-1"),
        ("SLOWLOG", "RESET"),
        ("PING",),
        ("SLOWLOG", "LEN"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "100000000"),
        ("PING",),
        ("SLOWLOG", "LEN"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "10000", "slowlog-max-len", "128"),
    ])


@pytest.mark.parametrize("proto", PROTOS)
def test_latency_histogram_and_latencystats(pair, proto):
    """LATENCY HISTOGRAM and INFO latencystats have Redis's shapes: the calls
    counted alike, cumulative counts at power-of-two microseconds (1, 2, 4, 8,
    16, 33, 66…), percentiles with three decimals."""
    switch_proto(pair, proto)
    check_script(pair, [("CONFIG", "RESETSTAT",)] + [("SET", "k%d" % i, "v") for i in range(25)]
                 + [("CONFIG", "GET", "hz"), ("CLIENT", "GETNAME")])
    valid_buckets = {1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908,
                     33816, 67633, 135266, 270532, 541064}
    for args in (("LATENCY", "HISTOGRAM", "set"), ("LATENCY", "HISTOGRAM", "config"),
                 ("LATENCY", "HISTOGRAM", "set", "nosuch", "client|getname")):
        got, want = (lt.pairs_to_dict(c.cmd(*args)) for c in (pair.latch, pair.redis))
        assert sorted(got) == sorted(want), args
        for name in got:
            g, w = lt.pairs_to_dict(got[name]), lt.pairs_to_dict(want[name])
            assert list(g) == list(w) == [b"calls", b"histogram_usec"]
            assert g[b"calls"] == w[b"calls"], name
            buckets = lt.pairs_to_dict(g[b"histogram_usec"])
            assert buckets and set(buckets) <= valid_buckets, buckets
            counts = [buckets[b] for b in sorted(buckets)]
            assert counts == sorted(counts) and counts[-1] == g[b"calls"]
    for conn in (pair.latch, pair.redis):
        text = conn.cmd("INFO", "latencystats").decode()
        line = [l for l in text.split("\r\n") if l.startswith("latency_percentiles_usec_set:")]
        assert len(line) == 1, text
        assert re.fullmatch(r"latency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},"
                            r"p99\.9=\d+\.\d{3}", line[0]), line


@pytest.mark.parametrize("proto", PROTOS)
def test_info_commandstats_and_errorstats(pair, proto):
    """After the same commands, the counters of INFO commandstats (calls,
    rejected and failed calls) and errorstats are Redis's."""
    switch_proto(pair, proto)
    steps = [
        ("CONFIG", "RESETSTAT"),
        ("SET", "k", "v"), ("SET", "k", "v", "NX", "XX"), ("GET", "k"), ("GET",),
        ("INCR", "k"), ("FOO",), ("OBJECT", "ENCODING"), ("OBJECT",), ("OBJECT", "FOO"),
        ("MULTI",), ("SET", "a"), ("EXEC",), ("SELECT", "x"), ("HELLO", "9"),
        ("CLIENT", "KILL", "TYPE", "wrong_type"), ("EXPIRE", "k", "10", "BAD"),
        ("OBJECT", "FREQ", "k"), ("LATENCY", "GRAPH", "none"),
    ]
    for step in steps:
        pair.both(*step)
    stats = []
    for conn in (pair.latch, pair.redis):
        fields = lt.info_fields(conn.cmd("INFO", "commandstats", "errorstats", "stats"))
        cmd = {}
        for k, v in fields.items():
            if k.startswith("cmdstat_") and k != "cmdstat_info":
                kv = dict(x.split("=") for x in v.split(","))
                assert re.fullmatch(r"\d+\.\d\d", kv["usec_per_call"])
                cmd[k] = (kv["calls"], kv["rejected_calls"], kv["failed_calls"])
        errors = {k: v for k, v in fields.items() if k.startswith("errorstat_")}
        stats.append((cmd, errors, fields["total_error_replies"]))
    assert stats[0] == stats[1]


def test_info_sections_and_replication_fields(pair):
    """INFO everything has Redis's sections (latch adds its own "Latch");
    the replication section is a master's without replicas, field by field."""
    headers = []
    for conn in (pair.latch, pair.redis):
        text = conn.cmd("INFO", "everything").decode()
        headers.append([l for l in text.split("\r\n") if l.startswith("# ")])
    assert [h for h in headers[0] if h != "# Latch"] == headers[1]
    assert "# Latch" in headers[0]
    for section in ("default", "all"):
        a, b = (set(l for l in c.cmd("INFO", section).decode().split("\r\n") if l.startswith("#"))
                for c in (pair.latch, pair.redis))
        assert a - {"# Latch"} == b, section
    repl = [lt.info_fields(c.cmd("INFO", "replication")) for c in (pair.latch, pair.redis)]
    assert list(repl[0]) == list(repl[1])
    for k in repl[1]:
        if k != "master_replid":
            assert repl[0][k] == repl[1][k], k
    assert re.fullmatch(r"[0-9a-f]{40}", repl[0]["master_replid"])
    stats = [lt.info_fields(c.cmd("INFO", "stats")) for c in (pair.latch, pair.redis)]
    for k in ("total_error_replies", "unexpected_error_replies", "total_reads_processed",
              "total_writes_processed", "instantaneous_input_kbps", "instantaneous_output_kbps",
              "pubsub_channels", "pubsub_patterns", "evicted_keys", "keyspace_hits"):
        assert k in stats[0] and k in stats[1], k
    cluster = [lt.info_fields(c.cmd("INFO", "cluster")) for c in (pair.latch, pair.redis)]
    assert cluster[0] == cluster[1] == {"cluster_enabled": "0"}


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


def _docs_as_dict(d):
    """A RESP3 COMMAND DOCS entry as nested dicts, without the fields latch
    leaves out (Redis's history and deprecation notes)."""
    skip = {b"history", b"doc_flags", b"deprecated_since", b"replaced_by"}
    if isinstance(d, lt.OrderedMap):
        return {k: _docs_as_dict(v) for k, v in d.pairs if k not in skip}
    if isinstance(d, list):
        return [_docs_as_dict(x) for x in d]
    return d


def test_new_commands_docs_and_info_match_redis(pair):
    """COMMAND INFO (arity, flags, key positions, ACL categories) and COMMAND
    DOCS (summary, since, group, complexity, arguments) of this issue's
    commands are Redis 7.0's."""
    switch_proto(pair, 3)
    names = ["incr", "decr", "incrby", "decrby", "incrbyfloat", "mget", "mset", "msetnx",
             "getdel", "getex", "getset", "append", "strlen", "getrange", "substr", "setrange",
             "unlink", "touch", "randomkey", "keys", "scan", "type", "object", "memory",
             "slowlog", "latency", "wait", "exec"]
    for name in names:
        got, want = (c.cmd("COMMAND", "INFO", name)[0] for c in (pair.latch, pair.redis))
        assert got[1] == want[1], (name, "arity")
        assert sorted(got[2]) == sorted(want[2]), (name, "flags")
        assert got[3:6] == want[3:6], (name, "keys")
        assert sorted(got[6]) == sorted(want[6]), (name, "acl")
        for g, w in zip(sorted(got[9]), sorted(want[9])):
            assert g[0] == w[0] and g[1] == w[1], (g[0], w[0], "arity")
            assert sorted(g[2]) == sorted(w[2]), (g[0], "flags")
            assert sorted(g[6]) == sorted(w[6]), (g[0], "acl")
        assert len(got[9]) == len(want[9]), name
        got_docs, want_docs = (_docs_as_dict(c.cmd("COMMAND", "DOCS", name)) for c in
                               (pair.latch, pair.redis))
        assert got_docs == want_docs, name
    subs = [_docs_as_dict(c.cmd("COMMAND", "DOCS", "client"))[b"client"][b"subcommands"]
            for c in (pair.latch, pair.redis)]
    assert subs[0][b"client|reply"] == subs[1][b"client|reply"]


# ---------------------------------------------------------------- where latch differs on purpose (issue 15)


def test_hello_option_words_are_c_strings(pair):
    got, want = pair.both("HELLO", "2", b"setname\x00junk", "named")
    assert_hello_equivalent(got, want, 2)
    check_script(pair, [("CLIENT", "GETNAME"), ("HELLO", "2", b"AUTH\x00", "default")])


def test_wait_does_not_wait_for_replicas_that_do_not_exist(pair):
    """Redis 7.0 makes WAIT 1 <timeout> wait the whole timeout (forever for
    0) since no replica will ever acknowledge; latch answers the same 0 at
    once."""
    start = time.monotonic()
    assert pair.latch.raw("WAIT", "1", "0") == b":0\r\n"
    assert pair.latch.raw("WAIT", "3", "5000") == b":0\r\n"
    assert time.monotonic() - start < 1.0
    start = time.monotonic()
    assert pair.redis.raw("WAIT", "1", "300") == b":0\r\n"
    assert time.monotonic() - start >= 0.29


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


def test_memory_usage_is_latchs_real_allocation(pair):
    """MEMORY USAGE: what the key costs latch (its entry, as malloc sized
    it, and its slots in the table and the TTL index), which grows with the
    key and the value as Redis's does."""
    c = pair.latch
    for key, value in (("k", "v"), ("k" * 100, "v"), ("k", "v" * 1000), ("k", "v" * 100000)):
        assert c.cmd("SET", key, value) == b"OK"
        usage = c.cmd("MEMORY", "USAGE", key)
        assert isinstance(usage, int)
        # header (32) + key + value + the bucket pointer, rounded by malloc
        assert 32 + len(key) + len(value) + 8 <= usage <= 32 + len(key) + len(value) + 8 + 64
        assert c.cmd("MEMORY", "USAGE", key, "SAMPLES", "0") == usage
        redis_usage = pair.redis.cmd("SET", key, value) and \
            pair.redis.cmd("MEMORY", "USAGE", key)
        assert isinstance(redis_usage, int) and redis_usage >= len(key) + len(value)
    # A lease costs its slot in the TTL index: the same entry measured with
    # and without one (two keys could get chunks of different sizes from
    # malloc, whose free lists earlier tests decide).
    assert c.cmd("SET", "t", "v" * 100, "EX", "100") == b"OK"
    with_ttl = c.cmd("MEMORY", "USAGE", "t")
    assert c.cmd("PERSIST", "t") == 1
    assert c.cmd("MEMORY", "USAGE", "t") == with_ttl - 8
    stats = lt.pairs_to_dict(c.cmd("MEMORY", "STATS"))
    for k in (b"peak.allocated", b"total.allocated", b"startup.allocated", b"keys.count",
              b"dataset.bytes", b"overhead.total", b"fragmentation"):
        assert k in stats, k
    assert stats[b"keys.count"] == c.cmd("DBSIZE")
    assert stats[b"total.allocated"] <= stats[b"peak.allocated"]
    doctor = c.cmd("MEMORY", "DOCTOR")
    assert isinstance(doctor, bytes) and doctor
    assert c.cmd("MEMORY", "MALLOC-STATS").startswith(b"<malloc")  # glibc's malloc_info


def test_nul_inside_an_inline_request_or_header(pair):
    """Redis 7.0 looks for a line's end with C string functions, so a NUL
    byte before it makes Redis wait for more (an inline request up to 64 KB,
    then a protocol error); latch reads the whole line, and an inline
    request's words end at the NUL (as sdssplitargs ends them). README:
    "Compatibility"."""
    c = pair.latch
    assert c.raw("PING") == b"+PONG\r\n"
    c.send(b"ECHO ab\x00cd\r\n")
    assert c.read_raw() == b"$2\r\nab\r\n"
    c.send(b"PING\x00 junk\r\n")
    assert c.read_raw() == b"+PONG\r\n"
    with lt.Conn(pair.redis.port, timeout=0.5) as r:
        r.send(b"PING\x00 junk\r\n")
        with pytest.raises(TimeoutError):
            r.read_raw()
    # A NUL in a `*` header is not a number: latch answers a protocol error.
    with lt.Conn(c.port) as l2:
        l2.send(b"*1\x00\r\n$4\r\nPING\r\n")
        assert l2.read_until_close().startswith(b"-ERR Protocol error")
