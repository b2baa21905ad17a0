"""The commands Redis 7.0 lacks — DELIFEQ, DELEX, DIGEST, SET IFEQ/IFNE/
IFDEQ/IFDNE — checked against their documented behaviour (Valkey 9 / Redis
8.4) in RESP2 and RESP3, with the lock recipe they make possible."""

import ctypes
import ctypes.util
import time

import pytest


from differential import PROTOS


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
