"""The known release scripts' fast path (scripting/runner.h, ScriptRun's
Direct calls) against redis-server 7.0 running the same texts in Lua.

The release scripts (redis-semaphore's delIfEqualLua, redlock-universal's
DELETE_IF_MATCH, python3-redis's LUA_RELEASE_SCRIPT, redlock 4.2.0's
unlockScript) carry out their GET and DEL themselves when the gate would
pass them unchanged, and through the gate otherwise. Each test here fails
if the fast path skips something the gate does: the commands' statistics,
keyspace hits and misses, keyspace notifications, MONITOR's lines, a user's
ACL rights, the read-only rule of EVALSHA_RO, the WRONGTYPE error."""

import hashlib
import os
import re

import pytest

import latchtest as lt

TOKEN = "3f6c2a9e-8b1d-4e57-a0c4-9d2e7f5b1c86"
SCRIPTS = os.path.join(lt.source_dir(), "server", "scripting", "scripts")


def text(path):
    with open(os.path.join(SCRIPTS, path), "rb") as f:
        return f.read()


SEMAPHORE = text("redis-semaphore-5.8.0/mutex-release.lua")
UNIVERSAL = text("redlock-universal-0.8.5/delete-if-match.lua")
PYREDIS = text("python3-redis-4.3.4/lock-release.lua")
REDLOCK = text("redlock-4.2.0/unlock.lua")
RELEASES = [("semaphore", SEMAPHORE), ("universal", UNIVERSAL), ("pyredis", PYREDIS)]


def sha(t):
    return hashlib.sha1(t).hexdigest()


def load(pair):
    for t in (SEMAPHORE, UNIVERSAL, PYREDIS, REDLOCK):
        assert pair.both("SCRIPT", "LOAD", t)[0] == pair.both("SCRIPT", "LOAD", t)[1]


def release_sequence(pair, script):
    """A held lock, another holder's lock, a missing key: each released."""
    replies = []
    pair.both("SET", "lock:a", TOKEN, "PX", "60000")
    pair.both("SET", "lock:b", "someone-else", "PX", "60000")
    for key in ("lock:a", "lock:b", "lock:missing", "lock:a"):
        replies.append(pair.both("EVALSHA", sha(script), "1", key, TOKEN))
    replies.append(pair.both("EXISTS", "lock:a", "lock:b"))
    return replies


def read_until(conn, is_last):
    """The pushes `conn` receives, up to and including the one is_last()
    accepts (the marker each test sends after what it looks at)."""
    got = []
    while not got or not is_last(got[-1]):
        got.append(conn.read())
    return got


def stats_of(conn):
    """cmdstat_get/del/evalsha calls and the keyspace hits and misses."""
    info = conn.cmd("INFO", "all").decode()
    out = {}
    for name in ("get", "del", "evalsha"):
        m = re.search(r"^cmdstat_%s:calls=(\d+),.*rejected_calls=(\d+),failed_calls=(\d+)" % name,
                      info, re.M)
        out[name] = m.groups() if m else None
    for field in ("keyspace_hits", "keyspace_misses"):
        out[field] = re.search(r"^%s:(\d+)" % field, info, re.M).group(1)
    return out


@pytest.mark.parametrize("name,script", RELEASES, ids=[n for n, _ in RELEASES])
def test_replies_and_statistics_as_redis(pair, name, script):
    load(pair)
    pair.both("CONFIG", "RESETSTAT")
    for got, want in release_sequence(pair, script):
        assert got == want
    assert stats_of(pair.latch) == stats_of(pair.redis)
    got = stats_of(pair.latch)
    assert got["get"][0] == "4" and got["del"][0] == "1"  # (the fast path counts its calls)


def test_redlock_unlock_many_keys_as_redis(pair):
    load(pair)
    pair.both("CONFIG", "RESETSTAT")
    pair.both("SET", "r1", TOKEN)
    pair.both("SET", "r2", "other")
    pair.both("SET", "r3", TOKEN)
    got, want = pair.both("EVALSHA", sha(REDLOCK), "4", "r1", "r2", "r3", "r4", TOKEN)
    assert got == want == b":2\r\n"
    assert pair.both("EXISTS", "r1", "r2", "r3") == (b":1\r\n", b":1\r\n")
    assert stats_of(pair.latch) == stats_of(pair.redis)


def notifications(port, script):
    """The keyspace events one release sequence publishes, in order."""
    sub = lt.Conn(port)
    try:
        sub.cmd("PSUBSCRIBE", "__keyevent@0__:*")
        c = lt.Conn(port)
        c.cmd("CONFIG", "SET", "notify-keyspace-events", "KEAm")
        c.cmd("SET", "n1", TOKEN)
        c.cmd("EVALSHA", sha(script), "1", "n1", TOKEN)  # released: del
        c.cmd("EVALSHA", sha(script), "1", "n2", TOKEN)  # missing: keymiss
        c.cmd("PUBLISH", "__keyevent@0__:end", "x")
        c.cmd("CONFIG", "SET", "notify-keyspace-events", "")
        c.close()
        return [(m[2], m[3]) for m in read_until(sub, lambda m: m[2].endswith(b":end"))]
    finally:
        sub.close()


@pytest.mark.parametrize("name,script", RELEASES, ids=[n for n, _ in RELEASES])
def test_keyspace_notifications_as_redis(pair, latch_server, redis_server, name, script):
    load(pair)
    got = notifications(latch_server.port, script)
    assert got == notifications(redis_server.port, script)
    assert (b"__keyevent@0__:del", b"n1") in got and (b"__keyevent@0__:keymiss", b"n2") in got


def monitor_lines(port, script):
    """What MONITOR shows of a release: the EVALSHA, then the script's calls
    from "lua" (timestamps and client addresses dropped)."""
    mon = lt.Conn(port)
    try:
        assert mon.cmd("MONITOR") == b"OK"
        c = lt.Conn(port)
        c.cmd("SET", "m1", TOKEN)
        c.cmd("EVALSHA", sha(script), "1", "m1", TOKEN)
        c.cmd("ECHO", "end")
        c.close()
        lines = read_until(mon, lambda line: line.endswith(b'"end"'))
        return [re.sub(r"^[0-9.]+ \[0 [^\]]*\] ", "", line.decode()) for line in lines]
    finally:
        mon.close()


@pytest.mark.parametrize("name,script", RELEASES, ids=[n for n, _ in RELEASES])
def test_monitor_sees_the_scripts_calls(pair, latch_server, redis_server, name, script):
    load(pair)
    got = monitor_lines(latch_server.port, script)
    assert got == monitor_lines(redis_server.port, script)
    assert any(line.startswith('"get"') or line.startswith('"GET"') for line in got)


@pytest.mark.parametrize("name,script", RELEASES, ids=[n for n, _ in RELEASES])
def test_a_user_without_del_is_refused_as_in_lua(pair, name, script):
    load(pair)
    try:
        pair.both("ACL", "SETUSER", "nodel", "on", "nopass", "~*", "&*", "+@all", "-del")
        pair.both("SET", "u1", TOKEN)
        assert pair.both("AUTH", "nodel", "x") == (b"+OK\r\n", b"+OK\r\n")
        got, want = pair.both("EVALSHA", sha(script), "1", "u1", TOKEN)
        assert got == want and got.startswith(b"-ERR The user executing the script")
        assert pair.both("AUTH", "default", "x")[0] == pair.both("AUTH", "default", "x")[1]
        assert pair.both("EXISTS", "u1") == (b":1\r\n", b":1\r\n")
    finally:
        pair.both("ACL", "DELUSER", "nodel")


@pytest.mark.parametrize("name,script", RELEASES, ids=[n for n, _ in RELEASES])
def test_read_only_evalsha_refuses_the_del_as_in_lua(pair, name, script):
    load(pair)
    pair.both("SET", "ro1", TOKEN)
    got, want = pair.both("EVALSHA_RO", sha(script), "1", "ro1", TOKEN)
    assert got == want and b"Write commands are not allowed from read-only scripts" in got
    assert pair.both("EXISTS", "ro1") == (b":1\r\n", b":1\r\n")
    # A key that does not hold the token: the GET alone, allowed.
    assert pair.both("EVALSHA_RO", sha(script), "1", "ro-missing", TOKEN) == (b":0\r\n", b":0\r\n")


@pytest.mark.parametrize("name,script", RELEASES, ids=[n for n, _ in RELEASES])
def test_wrong_type_is_the_gets_error_as_in_lua(pair, name, script):
    load(pair)
    pair.both("HSET", "h1", "f", "v")
    got, want = pair.both("EVALSHA", sha(script), "1", "h1", TOKEN)
    assert got == want and got.startswith(b"-WRONGTYPE")
    assert pair.both("TYPE", "h1") == (b"+hash\r\n", b"+hash\r\n")


def test_exists_counts_hits_and_misses_as_redis(pair, latch_server, redis_server):
    # (Found by the statistics test above: EXISTS is a read in Redis, with
    # LOOKUP_NOTOUCH only — it counts keyspace hits and misses and publishes
    # "keymiss".)
    pair.both("SET", "e1", "v")
    pair.both("CONFIG", "RESETSTAT")
    assert pair.both("EXISTS", "e1", "e2", "e1") == (b":2\r\n", b":2\r\n")
    assert stats_of(pair.latch) == stats_of(pair.redis)
    assert stats_of(pair.latch)["keyspace_misses"] == "1"


def test_known_scripts_native_switches_to_lua(latch):
    # `known-scripts-native no` (README, "The known lock scripts"): the same
    # texts run in Lua instead — same replies, counted as Lua runs.
    latch.cmd("SCRIPT", "LOAD", SEMAPHORE)

    def runs():
        info = lt.info_fields(latch.cmd("INFO", "all"))
        return int(info["known_script_calls"]), int(info["lua_script_calls"])

    try:
        for native in ("yes", "no"):
            assert latch.cmd("CONFIG", "SET", "known-scripts-native", native) == b"OK"
            assert latch.cmd("CONFIG", "GET", "known-scripts-native") == \
                [b"known-scripts-native", native.encode()]
            latch.cmd("SET", "k1", TOKEN)
            known, lua = runs()
            assert latch.cmd("EVALSHA", sha(SEMAPHORE), "1", "k1", TOKEN) == 1
            assert latch.cmd("EVALSHA", sha(SEMAPHORE), "1", "k1", TOKEN) == 0
            assert runs() == ((known + 2, lua) if native == "yes" else (known, lua + 2))
    finally:
        latch.cmd("CONFIG", "SET", "known-scripts-native", "yes")


READS = [
    ("TYPE", "s"), ("TYPE", "nx"), ("TTL", "s"), ("TTL", "nx"), ("PTTL", "nx"),
    ("EXPIRETIME", "nx"), ("PEXPIRETIME", "h"), ("OBJECT", "ENCODING", "nx"),
    ("OBJECT", "REFCOUNT", "s"), ("OBJECT", "ENCODING", "s"), ("SET", "nx2", "v", "GET"),
    ("SET", "s", "v", "GET"), ("SET", "h", "v", "GET"), ("COPY", "nx", "b"), ("COPY", "s", "c"),
    ("EXISTS", "s", "nx"),
]


@pytest.mark.parametrize("cmd", READS, ids=[" ".join(c) for c in READS])
def test_reads_count_hits_misses_and_keymiss_as_redis(pair, latch_server, redis_server, cmd):
    # (Review 34: TYPE, the TTL family, OBJECT, SET … GET and COPY read the
    # key as Redis's lookupKeyRead* does — counted, "keymiss" for a missing
    # key except OBJECT's — and the known scripts that call PTTL inherit it.)
    try:
        got = []
        for port, conn in ((latch_server.port, pair.latch), (redis_server.port, pair.redis)):
            sub = lt.Conn(port)
            sub.cmd("SUBSCRIBE", "__keyevent@0__:keymiss")
            conn.cmd("SET", "s", "v", "EX", "100")
            conn.cmd("HSET", "h", "f", "v")
            conn.cmd("CONFIG", "SET", "notify-keyspace-events", "Em")
            conn.cmd("CONFIG", "RESETSTAT")
            reply = conn.raw(*cmd)
            stats = stats_of(conn)
            conn.cmd("CONFIG", "SET", "notify-keyspace-events", "")
            conn.cmd("PUBLISH", "__keyevent@0__:keymiss", "end")
            events = [m[2] for m in read_until(sub, lambda m: m[2] == b"end")][:-1]
            sub.close()
            got.append((reply, stats["keyspace_hits"], stats["keyspace_misses"], events))
        assert got[0] == got[1]
    finally:
        pair.both("CONFIG", "SET", "notify-keyspace-events", "")
