"""The ACL check without name comparisons (plain_keys walk,
acl_special) against redis-server 7.0: replies of a restricted user, ACL
DRYRUN, and the ACL LOG objects, for key patterns with %R~/%W~, SET … GET,
SORT … STORE, channels, EVAL keys, subcommands with keys, not_key specs and
variadic commands sent short."""

import pytest

from test_acl import PROTOS, both_same, masked_log, user_pair  # noqa: F401

NAMES = ("rv33", "rv33sel")  # (named after the review that wrote these tests)

CMDS = [
    ("SET", "w1", "v"), ("SET", "w1", "v", "GET"), ("SET", "w1", "v", "get"),
    ("SET", "w1", "v", "EX", "100", "GET"), ("SET", "w1", "v", "GETX"), ("SET", "r1", "v"),
    ("SET", "k1", "v", "GET"), ("GET", "w1"), ("GET", "r1"), ("GETDEL", "r1"), ("GETEX", "r1"),
    ("MSET", "k1", "v", "no"), ("MSET", "k1", "v", "no", "v"), ("MSET", "w1", "v", "k2", "v"),
    ("MGET", "r1", "k1", "w1"), ("DEL", "k1", "w1"), ("DEL", "k1", "no"), ("EXISTS", "r1", "w1"),
    ("OBJECT", "ENCODING", "no"), ("OBJECT", "ENCODING", "r1"), ("OBJECT", "FREQ", "w1"),
    ("MEMORY", "USAGE", "w1"), ("MEMORY", "USAGE", "r1"), ("TYPE", "w1"),
    ("SORT", "k1", "STORE", "r1"), ("SORT", "k1", "STORE", "w1"), ("SORT", "r1", "STORE", "w1"),
    ("SORT_RO", "r1"), ("SORT", "k1", "BY", "no", "STORE", "k2"),
    ("EVAL", "return 1", "1", "no"), ("EVAL", "return 1", "2", "k1", "r1"),
    ("EVAL", "return 1", "0", "no"), ("EVAL_RO", "return 1", "1", "r1"),
    ("PUBLISH", "ch1", "m"), ("PUBLISH", "no", "m"), ("SPUBLISH", "no", "m"),
    ("SPUBLISH", "ch1", "m"),
    ("COPY", "r1", "w1"), ("COPY", "w1", "r1"), ("RENAME", "k1", "w1"), ("RENAME", "r1", "k1"),
    ("LMOVE", "k1", "no", "LEFT", "LEFT"), ("LMOVE", "r1", "w1", "LEFT", "LEFT"),
    ("ZUNIONSTORE", "w1", "1", "r1"), ("ZUNIONSTORE", "r1", "1", "k1"),
    ("ZUNIONSTORE", "k1", "2", "k2", "no"), ("LMPOP", "1", "no", "LEFT"),
    ("LMPOP", "2", "k1", "r1", "LEFT"), ("ZINTERCARD", "1", "r1"),
    ("BITOP", "AND", "w1", "r1"), ("BITOP", "AND", "r1", "k1"),
    ("HSET", "w1", "f", "v"), ("HSET", "r1", "f", "v"), ("HGET", "w1", "f"),
    ("HINCRBYFLOAT", "r1", "f", "1"), ("APPEND", "w1", "x"), ("INCR", "r1"),
    ("EXPIRE", "r1", "10"), ("TTL", "w1"), ("TOUCH", "r1", "w1"), ("UNLINK", "r1"),
    ("WATCH", "no"), ("DUMP", "w1"), ("RESTORE", "r1", "0", "x"), ("GETRANGE", "w1", "0", "1"),
    ("SETRANGE", "r1", "0", "x"), ("LPOS", "w1", "x"), ("LINSERT", "r1", "BEFORE", "a", "b"),
    ("BLMOVE", "k1", "no", "LEFT", "LEFT", "0.01"), ("BRPOPLPUSH", "k1", "no", "0.01"),
    ("BLPOP", "k1", "no", "0.01"), ("SINTERSTORE", "w1", "r1", "no"),
    ("PFCOUNT", "r1", "w1"), ("PFMERGE", "w1", "r1"), ("GEOADD", "r1", "1", "1", "m"),
    ("XADD", "r1", "*", "f", "v"), ("SUBSTR", "w1", "0", "1"),
]


def differ(mismatches, label, result):
    """Notes a (latch, redis) pair of replies that differ, under `label`."""
    got, want = result
    if got != want:
        mismatches.append("%s:\n    latch: %r\n    redis: %r" % (label, got, want))


@pytest.fixture
def rv_pair(pair):
    pair.both("ACL", "DELUSER", *NAMES)
    pair.both("ACL", "LOG", "RESET")
    yield pair
    pair.both("ACL", "DELUSER", *NAMES)


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("name", NAMES)
def test_restricted_user_matches_redis(rv_pair, proto, name):
    if name == "rv33":
        rules = ("on", ">pw", "+@all", "%R~r*", "%W~w*", "~k*", "resetchannels", "&ch*")
    else:
        rules = ("on", ">pw", "+@all", "%R~r*", "resetchannels", "&ch*", "(~k* %W~w* +@all)",
                 "(%RW~no +get +set &no)")
    both_same(rv_pair, "ACL", "SETUSER", name, *rules)
    u = user_pair(rv_pair, name, proto=proto)
    mismatches = []
    compared = 0
    for cmd in CMDS:
        if rv_pair.latch.cmd("COMMAND", "INFO", cmd[0]) == [None]:
            continue  # a command latch does not have
        compared += 1
        differ(mismatches, repr(cmd), u.both(*cmd))
        differ(mismatches, "DRYRUN %r" % (cmd,), rv_pair.both("ACL", "DRYRUN", name, *cmd))
    assert not mismatches, "\n".join(mismatches)
    assert compared >= 65, compared
    got, want = rv_pair.both("ACL", "LOG", "200")
    assert masked_log(got) == masked_log(want)


@pytest.mark.parametrize("proto", PROTOS)
def test_set_get_with_a_nul_needs_read_access(rv_pair, proto):
    """SET's parser reads its options as C strings (UpToNul): "GET\\0x" is
    GET and returns the old value. Redis's setGetKeys reads it the same way
    (arg[3] == '\\0'), so the ACL asks for R as well as W; latch's
    SetReadsOldValue asks for exactly three bytes, so a write-only user
    reads the old value."""
    both_same(rv_pair, "SET", "w1", "secret")
    both_same(rv_pair, "ACL", "SETUSER", "rv33", "on", ">pw", "+@all", "%W~w*")
    u = user_pair(rv_pair, "rv33", proto=proto)
    mismatches = []
    for cmd in [("SET", "w1", "x", "GET\x00"), ("SET", "w1", "y", "get\x00x"),
                ("SET", "w1", "z", "GET")]:
        differ(mismatches, repr(cmd), u.both(*cmd))
        differ(mismatches, "DRYRUN %r" % (cmd,), rv_pair.both("ACL", "DRYRUN", "rv33", *cmd))
        differ(mismatches, "GETKEYSANDFLAGS %r" % (cmd,),
               rv_pair.both("COMMAND", "GETKEYSANDFLAGS", *cmd))
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("proto", PROTOS)
def test_sort_store_with_a_nul_needs_write_access(rv_pair, proto):
    """SORT's parser reads STORE as a C string (IsWord: UpToNul), and so do
    Redis's sortCommand and sortGetKeys (strcasecmp); latch's SortStoreKey
    compares all the bytes, so the ACL never sees the STORE key: a user
    limited to k* overwrites (or deletes) any key."""
    both_same(rv_pair, "SET", "secret", "untouched")
    both_same(rv_pair, "RPUSH", "k1", "3", "1", "2")
    both_same(rv_pair, "ACL", "SETUSER", "rv33", "on", ">pw", "+@all", "~k*")
    u = user_pair(rv_pair, "rv33", proto=proto)
    mismatches = []
    for cmd in [("SORT", "k1", "STORE\x00", "secret"), ("SORT", "k1", "store\x00x", "secret"),
                ("SORT", "k1", "LIMIT\x00", "0", "1", "STORE", "secret"),
                ("SORT", "k1", "STORE", "secret")]:
        differ(mismatches, repr(cmd), u.both(*cmd))
        differ(mismatches, "DRYRUN %r" % (cmd,), rv_pair.both("ACL", "DRYRUN", "rv33", *cmd))
    differ(mismatches, "TYPE secret afterwards", rv_pair.both("TYPE", "secret"))
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("proto", PROTOS)
def test_sort_ro_has_no_store_key(rv_pair, proto):
    """SORT_RO takes no STORE (Redis's sortROGetKeys returns its first key
    only): the ACL must not ask for write access to a word after "STORE";
    the command's own syntax error answers."""
    both_same(rv_pair, "RPUSH", "k1", "3", "1", "2")
    both_same(rv_pair, "ACL", "SETUSER", "rv33", "on", ">pw", "+@all", "~k*")
    u = user_pair(rv_pair, "rv33", proto=proto)
    mismatches = []
    for cmd in [("SORT_RO", "k1", "STORE", "secret"), ("SORT_RO", "k1", "LIMIT", "0", "1",
                                                      "STORE", "other")]:
        differ(mismatches, repr(cmd), u.both(*cmd))
        differ(mismatches, "DRYRUN %r" % (cmd,), rv_pair.both("ACL", "DRYRUN", "rv33", *cmd))
    assert not mismatches, "\n".join(mismatches)
