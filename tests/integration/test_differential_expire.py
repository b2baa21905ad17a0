"""Differential family: expiry — EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT and their
NX/XX/GT/LT conditions, TTL, PTTL, PERSIST, EXPIRETIME, deadlines in the past
— against redis-server 7.0 in RESP2 and RESP3 (differential.py), including
replies that depend on the exact time (PXAT read back, large relative TTLs)."""

import time

import pytest

from differential import LLONG_MAX, PROTOS, check_script, switch_proto


SCRIPTS = {
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
        ("EXPIRE", "k", LLONG_MAX),
        ("EXPIRE", "k", "9223372036854775"),
        ("EXPIRE", "k", "-9223372036854775808"),
        ("PEXPIRE", "k", LLONG_MAX),
        ("EXPIREAT", "k", LLONG_MAX),
        ("PEXPIREAT", "k", LLONG_MAX),
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
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


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
