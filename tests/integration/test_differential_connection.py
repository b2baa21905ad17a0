"""Differential family: the connection and the protocol — PING, ECHO, SELECT,
HELLO, AUTH, unknown commands and subcommands, wrong arities, inline and
pipelined requests, NUL bytes in requests — against redis-server 7.0 in RESP2
and RESP3 (differential.py). HELLO's reply differs on purpose (latch names
itself): it is asserted as documented."""

import pytest

import latchtest as lt
from latchtest import encode

from differential import PROTOS, Raw, assert_hello_equivalent, check_script, switch_proto


SCRIPTS = {
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


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


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


def test_hello_option_words_are_c_strings(pair):
    got, want = pair.both("HELLO", "2", b"setname\x00junk", "named")
    assert_hello_equivalent(got, want, 2)
    check_script(pair, [("CLIENT", "GETNAME"), ("HELLO", "2", b"AUTH\x00", "default")])


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
