"""ACL users (server/acl): the same ACL SETUSER rules given to redis-server
7.0 and to latch, then commands sent as each user; raw RESP bytes compared,
RESP2 and RESP3. ACL LOG is compared with its volatile fields masked
(age-seconds; client-info, where latch reports Redis 7.2's fields).

Commands Redis 7.0 does not have (DELIFEQ, DELEX, LOCKINFO, FENCE,
SET … IFEQ) are checked against latch alone: a user limited to
`~lock:app1:*` must not reach another application's lock by any path —
a command, MULTI, EVAL's declared keys, or a redis.call inside a script.
Cases ported from Redis's tests/unit/acl.tcl are marked (acl.tcl).
"""

import os
import re
import subprocess

import pytest

import latchtest as lt
from latchtest import encode

PROTOS = (2, 3)

USERS = ("app1", "nobody", "reader", "writer", "sel", "chan", "fa", "psuser", "tmp", "newbie",
         "hashed", "u1", "dr")


@pytest.fixture
def acl_pair(pair):
    """The pair, with only the default user and an empty ACL LOG on both."""
    assert pair.both("ACL", "DELUSER", *USERS)[0].startswith(b":")
    pair.both("ACL", "LOG", "RESET")
    yield pair
    pair.both("ACL", "DELUSER", *USERS)


def both_same(pair, *args):
    got, want = pair.both(*args)
    assert got == want, "%r:\n  latch: %r\n  redis: %r" % (args, got, want)
    return got


def setuser(pair, name, *rules):
    return both_same(pair, "ACL", "SETUSER", name, *rules)


def user_pair(pair, name, password="pw", proto=2):
    """Fresh connections to both servers, logged in as `name`."""
    p = lt.Pair(pair.latch.sock.getpeername()[1], pair.redis.sock.getpeername()[1])
    assert p.both("AUTH", name, password) == (b"+OK\r\n", b"+OK\r\n")
    if proto == 3:
        got, want = p.both("HELLO", "3")
        assert got[:1] == want[:1] == b"%"
    return p


def masked_log(raw):
    """ACL LOG's reply with age-seconds and client-info replaced by their
    shape (client-info must name the user and the command)."""
    text = raw.decode()
    text = re.sub(r"(age-seconds\r\n)(\$\d+\r\n[0-9.e+-]+|,[0-9.e+-]+)\r\n", r"\1AGE\r\n", text)

    def client(m):
        info = m.group(2)
        assert re.search(r"\buser=\S+", info) and re.search(r"\bcmd=\S+", info), info
        fields = dict(f.split("=", 1) for f in info.split(" ") if "=" in f)
        return m.group(1) + "CLIENT user=%s cmd=%s db=%s\r\n" % (fields["user"], fields["cmd"],
                                                                fields["db"])

    return re.sub(r"(client-info\r\n)\$\d+\r\n([^\r]*)\r\n", client, text)


# ------------------------------------------------------------- describe


@pytest.mark.parametrize("proto", PROTOS)
def test_setuser_list_and_getuser_as_redis(acl_pair, proto):
    p = acl_pair
    if proto == 3:
        p.both("HELLO", "3")
    rules = {
        "app1": ("on", ">pw", "~lock:app1:*", "+@all", "-@dangerous"),
        "reader": ("on", "nopass", "%R~*", "+@read", "&news"),
        "writer": ("on", "#" + "a" * 64, "%W~w:*", "%R~r:*", "%RW~rw:*", "-@all", "+@write"),
        "sel": ("on", "nopass", "~a:*", "+@string", "(~b:* +@hash)", "(%R~c:* +@list)"),
        "chan": ("on", "nopass", "resetchannels", "&ch:*", "&x", "+@pubsub", "allkeys"),
        "newbie": (),
        "fa": ("on", "nopass", "+@all", "allkeys", "allchannels"),
    }
    for name, r in rules.items():
        setuser(p, name, *r)
    both_same(p, "ACL", "LIST")
    both_same(p, "ACL", "USERS")
    for name in list(rules) + ["default", "missing"]:
        both_same(p, "ACL", "GETUSER", name)
    # Rules applied over existing ones, and reset (acl.tcl).
    setuser(p, "app1", "resetkeys", "~lock:app1:*", "~lock:app1:*", "%R~shared:*", "nopass")
    both_same(p, "ACL", "GETUSER", "app1")
    setuser(p, "app1", "reset")
    both_same(p, "ACL", "GETUSER", "app1")
    setuser(p, "sel", "clearselectors", "resetpass", "off")
    both_same(p, "ACL", "LIST")


def test_setuser_errors_as_redis(acl_pair):
    p = acl_pair
    for rules in (("nosuchrule",), ("+nosuchcommand",), ("+@nosuchcat",), ("#abc",),
                  ("!" + "z" * 64,), ("<notapassword",), ("allkeys", "~foo"),
                  ("allchannels", "&foo"), ("+config|get|x",), ("+select|",),
                  ("(~a +get",), ("(~a", "+get"), ("%X~a",), ("%~a",), ("on", "+get", "bad")):
        both_same(p, "ACL", "SETUSER", "tmp", *rules)
        # All or nothing: a failed SETUSER creates nothing.
        both_same(p, "ACL", "GETUSER", "tmp")
    both_same(p, "ACL", "SETUSER", "bad user")
    both_same(p, "ACL", "DELUSER", "default")
    both_same(p, "ACL", "DELUSER", "nosuch", "other")
    both_same(p, "ACL", "CAT")
    both_same(p, "ACL", "CAT", "nosuch")
    both_same(p, "ACL", "GENPASS", "0")
    both_same(p, "ACL", "GENPASS", "5000")
    both_same(p, "ACL", "GENPASS", "x")
    both_same(p, "ACL", "LOG", "x")
    both_same(p, "ACL", "SAVE")
    both_same(p, "ACL", "LOAD")
    both_same(p, "ACL", "HELP")
    both_same(p, "ACL", "NOSUCH")
    for bits, n in (("", 64), ("1", 1), ("5", 2), ("128", 32)):
        got = p.latch.cmd(*(("ACL", "GENPASS") + ((bits,) if bits else ())))
        assert re.fullmatch(rb"[0-9a-f]{%d}" % n, got), got


# --------------------------------------------------------------- checks


@pytest.mark.parametrize("proto", PROTOS)
def test_user_allowed_nothing_gets_noperm_for_every_command(acl_pair, latch_server, proto):
    """Every command latch has, sent by a user allowed nothing: the same
    NOPERM as redis-server (latch's own commands: the same text), and the
    same ACL LOG."""
    p = acl_pair
    setuser(p, "nobody", "on", ">pw", "-@all", "resetkeys", "resetchannels")
    names = [n.decode() for n in p.latch.cmd("COMMAND", "LIST")]
    redis_info = p.redis.cmd("COMMAND", "INFO", *names)
    in_redis = set(n for n, i in zip(names, redis_info) if i is not None)
    # Always allowed (one must be able to log in), or ends the connection.
    skip = {"auth", "hello", "quit", "reset"}
    info = {}
    for entry in p.latch.cmd("COMMAND", "INFO", *[n for n in names if "|" not in n]):
        info[entry[0].decode()] = entry
    u = user_pair(p, "nobody", proto=proto)
    latch_only = []
    try:
        compared = 0
        for name in sorted(names):
            if name in skip or (name in info and info[name][9]):
                continue  # (a container: its subcommands are checked)
            parts = name.split("|")
            arity = info[parts[0]][1] if len(parts) == 1 else None
            if arity is None:
                sub = [s for s in info[parts[0]][9] if s[0].decode() == name]
                arity = sub[0][1]
            argc = abs(arity)
            args = [x.upper() for x in parts] + ["k%d" % i for i in range(argc - len(parts))]
            if name not in in_redis:
                latch_only.append((name, args))
                continue
            got, want = u.both(*args)
            assert got == want, "%r:\n  latch: %r\n  redis: %r" % (args, got, want)
            compared += 1
        assert compared > 100
        # The log: the same entries, newest first, both cut at 128.
        got, want = p.both("ACL", "LOG", "200")
        assert masked_log(got) == masked_log(want)
        # latch's own commands: the same refusal, in Redis's words.
        for name, args in latch_only:
            u.latch.send(encode(*args))
            assert u.latch.read_raw() == (
                b"-NOPERM this user has no permissions to run the '%s' command\r\n" %
                name.encode()), args
    finally:
        u.close()
    assert latch_server.alive()


@pytest.mark.parametrize("proto", PROTOS)
def test_key_patterns_read_and_write(acl_pair, proto):
    p = acl_pair
    setuser(p, "app1", "on", ">pw", "~lock:app1:*", "%R~shared:*", "+@all", "-@dangerous")
    admin = p
    for k in ("lock:app1:a", "lock:app2:a", "shared:x"):
        both_same(admin, "SET", k, "holder")
    u = user_pair(p, "app1", proto=proto)
    try:
        for step in (
            ("SET", "lock:app1:b", "me", "NX", "PX", "30000"),
            ("SET", "lock:app2:b", "me", "NX", "PX", "30000"),
            ("GET", "lock:app1:a"),
            ("GET", "lock:app2:a"),
            ("GET", "shared:x"),
            ("SET", "shared:x", "v"),
            ("SET", "lock:app2:a", "v", "GET"),
            ("DEL", "lock:app1:b", "lock:app2:a"),
            ("UNLINK", "lock:app2:a"),
            ("PEXPIRE", "lock:app2:a", "100000"),
            ("PEXPIRE", "lock:app1:a", "100000"),
            ("PTTL", "lock:app2:a"),
            ("MOVE", "lock:app2:a", "1"),
            ("RENAME", "lock:app1:a", "lock:app2:z"),
            ("MGET", "lock:app1:a", "shared:x"),
            ("MGET", "lock:app1:a", "nope"),
            ("EXISTS", "lock:app2:a"),
            ("FLUSHALL",),
            ("SWAPDB", "0", "1"),
            ("KEYS", "*"),
            ("EVAL", "return redis.call('get', KEYS[1])", "1", "lock:app2:a"),
            ("EVAL", "return redis.call('get', KEYS[1])", "1", "lock:app1:a"),
            ("EVAL", "return redis.call('del', 'lock:app2:a')", "0"),
            ("EVAL", "return redis.pcall('del', 'lock:app2:a')", "0"),
            ("EVAL", "return redis.call('flushall')", "0"),
            ("ACL", "WHOAMI"),
            ("ACL", "LIST"),
            ("DEBUG", "SLEEP", "0"),
        ):
            got, want = u.both(*step)
            assert got == want, "%r:\n  latch: %r\n  redis: %r" % (step, got, want)
        # MULTI: a refused command dooms the transaction (EXECABORT).
        for step in (("MULTI",), ("SET", "lock:app1:c", "x"), ("DEL", "lock:app2:a"), ("EXEC",),
                     ("GET", "lock:app1:c")):
            got, want = u.both(*step)
            assert got == want, "%r:\n  latch: %r\n  redis: %r" % (step, got, want)
        # Rights taken away between MULTI and EXEC (execCommand's check).
        for step in (("MULTI",), ("SET", "lock:app1:c", "x"), ("GET", "lock:app1:a")):
            got, want = u.both(*step)
            assert got == want, "%r:\n  latch: %r\n  redis: %r" % (step, got, want)
        setuser(p, "app1", "-get")
        got, want = u.both("EXEC")
        assert got == want, (got, want)
        assert b"ACLs rules changed" in got
        # Every refusal so far, logged alike (context toplevel, multi, lua).
        got, want = p.both("ACL", "LOG", "50")
        assert masked_log(got) == masked_log(want)
        assert "lua" in masked_log(got) and "multi" in masked_log(got)
        # latch's lock commands, latch alone: another application's lock
        # cannot be read, released, renewed, fenced or taken over.
        key_err = b"-NOPERM this user has no permissions to access one of the keys used as " \
                  b"arguments\r\n"
        setuser(p, "app1", "+get")
        for step in (("DELIFEQ", "lock:app2:a", "holder"), ("DELEX", "lock:app2:a"),
                     ("DELEX", "lock:app2:a", "IFEQ", "holder"), ("LOCKINFO", "lock:app2:a"),
                     ("FENCE", "lock:app2:a"), ("DIGEST", "lock:app2:a"),
                     ("SET", "lock:app2:a", "me", "IFEQ", "holder"),
                     ("SETFENCE", "lock:app2:a", "me"),
                     ("SET", "lock:app2:w", "me", "NX", "PX", "1000", "WAIT", "10"),
                     ("EVAL", "return redis.call('delifeq', KEYS[1], 'holder')", "1",
                      "lock:app2:a")):
            assert u.latch.raw(*step) == key_err, step
        assert u.latch.raw("EVAL", "return redis.call('delifeq', 'lock:app2:a', 'holder')",
                           "0").startswith(b"-ERR The user executing the script can't access")
        assert u.latch.raw("DELIFEQ", "lock:app1:a", "holder") == b":1\r\n"
        assert u.latch.raw("FAULT", "LIST").startswith(b"-NOPERM this user has no permissions "
                                                       b"to run the 'fault")
        assert admin.latch.raw("GET", "lock:app2:a") == b"$6\r\nholder\r\n"
    finally:
        u.close()


def _key_specs(conn, name):
    """COMMAND INFO's key specs of `name` (element 9 of its entry), without
    Redis's free-text "notes" (latch has none)."""
    specs = []
    for spec in conn.cmd("COMMAND", "INFO", name)[0][8]:
        pairs = [(spec[i], spec[i + 1]) for i in range(0, len(spec), 2)]
        specs.append([x for k, v in pairs if k != b"notes" for x in (k, v)])
    return specs


def test_every_shared_commands_key_specs_are_redis(latch_server, redis_server):
    """The ACL check finds a command's keys, and the access each needs, from
    its key specs: every command latch shares with Redis has Redis's (a
    source read and a destination written are two specs, not one)."""
    with latch_server.conn() as lc, redis_server.conn() as rc:
        shared = sorted(set(lc.cmd("COMMAND", "LIST")) & set(rc.cmd("COMMAND", "LIST")))
        assert len(shared) > 200
        wrong = [n for n in shared if _key_specs(lc, n) != _key_specs(rc, n)]
        assert not wrong, wrong


@pytest.mark.parametrize("proto", PROTOS)
def test_keys_only_named_by_a_source_a_count_or_sort(acl_pair, proto):
    """What an adversarial review found open (each checked against Redis):
    SINTERCARD's counted keys, SORT's GET/BY patterns and STORE key, and the
    read and write sides of COPY, S*STORE, SMISMEMBER and HKEYS for users
    who may read everything but write only their own keys, or the other way
    round."""
    p = acl_pair
    setuser(p, "app1", "on", ">pw", "~lock:app1:*", "+@all")
    setuser(p, "reader", "on", ">pw", "%R~*", "%W~lock:app1:*", "+@all", "-@dangerous")
    setuser(p, "writer", "on", ">pw", "%W~*", "%R~lock:app1:*", "+@all", "-@dangerous")
    for step in (("SADD", "lock:app2:set", "s1", "s2"), ("SADD", "lock:app1:s", "s1"),
                 ("SET", "lock:app2:x", "token-2"), ("SET", "lock:app1:a", "mine"),
                 ("RPUSH", "lock:app1:l", "x"), ("HSET", "lock:app2:h", "f", "v")):
        both_same(p, *step)
    cases = {
        "app1": (("SINTERCARD", "1", "lock:app2:set"),
                 ("SINTERCARD", "2", "lock:app1:s", "lock:app2:set"),
                 ("SINTERCARD", "1", "lock:app1:s"),
                 ("EVAL", "return redis.call('sintercard', '1', 'lock:app2:x')", "0"),
                 ("SORT", "lock:app1:l", "BY", "nosort", "GET", "lock:app2:*"),
                 ("SORT", "lock:app1:l", "BY", "lock:app2:*"),
                 ("SORT", "lock:app1:l", "BY", "nosort"),
                 ("SORT", "lock:app1:l", "ALPHA", "STORE", "lock:app2:x"),
                 ("SORT", "lock:app1:l", "ALPHA", "STORE", "lock:app1:sorted"),
                 ("SORT_RO", "lock:app1:l", "GET", "#"),
                 ("EVAL", "return redis.call('sort', 'lock:app1:l', 'GET', 'lock:app2:*')", "0"),
                 ("ACL", "DRYRUN", "app1", "SINTERCARD", "1", "lock:app2:x")),
        "reader": (("COPY", "lock:app1:a", "lock:app2:x", "REPLACE"),
                   ("COPY", "lock:app2:x", "lock:app1:b"),
                   ("RENAME", "lock:app1:a", "lock:app2:y"),
                   ("SMOVE", "lock:app1:s", "lock:app2:set", "s1"),
                   ("SUNIONSTORE", "lock:app2:set", "lock:app1:s"),
                   ("SUNIONSTORE", "lock:app1:d", "lock:app2:set")),
        "writer": (("SUNIONSTORE", "lock:app1:d", "lock:app2:set"),
                   ("SINTERSTORE", "lock:app1:d", "lock:app2:set"),
                   ("SDIFFSTORE", "lock:app1:d", "lock:app2:set"),
                   ("SMISMEMBER", "lock:app2:set", "s1"),
                   ("HKEYS", "lock:app2:h"),
                   ("COPY", "lock:app2:x", "lock:app1:c"),
                   ("LMOVE", "lock:app2:list", "lock:app1:l", "LEFT", "LEFT")),
    }
    for name, steps in cases.items():
        u = user_pair(p, name, proto=proto)
        try:
            for step in steps:
                got, want = u.both(*step)
                assert got == want, "%s %r:\n  latch: %r\n  redis: %r" % (name, step, got, want)
        finally:
            u.close()
    assert both_same(p, "GET", "lock:app2:x") == b"$7\r\ntoken-2\r\n"
    got, want = p.both("ACL", "LOG", "50")
    assert masked_log(got) == masked_log(want)
    # latch's own read commands, for the user who may not read lock:app2:*.
    u = user_pair(p, "writer", proto=proto)
    try:
        key_err = b"-NOPERM this user has no permissions to access one of the keys used as " \
                  b"arguments\r\n"
        for step in (("LOCKINFO", "lock:app2:x"), ("FENCE", "lock:app2:x")):
            assert u.latch.raw(*step) == key_err, step
    finally:
        u.close()


@pytest.mark.parametrize("proto", PROTOS)
def test_acl_log_entries_as_redis(acl_pair, proto):
    p = acl_pair
    setuser(p, "u1", "on", ">pw", "~a*", "+get", "+set", "+multi", "+exec", "+eval", "&c1")
    u = user_pair(p, "u1", proto=proto)
    try:
        for step in (("GET", "b"), ("GET", "b"), ("DEL", "a"), ("MULTI",), ("GET", "zz"),
                     ("EXEC",), ("EVAL", "return redis.call('get','zz')", "0"),
                     ("EVAL", "return redis.call('get',KEYS[1])", "1", "zz"),
                     ("PUBLISH", "c2", "m"), ("AUTH", "u1", "wrong"), ("AUTH", "nouser", "x")):
            got, want = u.both(*step)
            assert got == want, "%r:\n  latch: %r\n  redis: %r" % (step, got, want)
    finally:
        u.close()
    for args in (("ACL", "LOG"), ("ACL", "LOG", "2"), ("ACL", "LOG", "0"), ("ACL", "LOG", "-1")):
        got, want = p.both(*args)
        assert masked_log(got) == masked_log(want), (args, got, want)
    both_same(p, "ACL", "LOG", "RESET")
    both_same(p, "ACL", "LOG")


def test_channels_and_literal_patterns(acl_pair):
    p = acl_pair
    setuser(p, "chan", "on", ">pw", "resetchannels", "&news:*", "&exact", "+@all")
    u = user_pair(p, "chan")
    try:
        for step in (("PUBLISH", "news:1", "m"), ("PUBLISH", "other", "m"),
                     ("PUBLISH", "exact", "m"), ("SPUBLISH", "other", "m")):
            got, want = u.both(*step)
            assert got == want, (step, got, want)
        for step in (("PSUBSCRIBE", "news:*"), ("PSUBSCRIBE", "news:1*"),
                     ("SUBSCRIBE", "news:2", "bad"), ("SUBSCRIBE", "news:3")):
            got, want = u.both(*step)
            assert got == want, (step, got, want)
        # Rights narrowed: a subscriber to what it may no longer use is
        # disconnected (acl.tcl).
        setuser(p, "chan", "&exact")
        both_same(p, "PUBLISH", "exact", "still-here")
        setuser(p, "chan", "resetchannels", "&exact")
        got, want = u.latch.read_until_close(2.0), u.redis.read_until_close(2.0)
        assert got == want, (got, want)
    finally:
        u.close()


def test_dryrun_whoami_and_auth(acl_pair):
    p = acl_pair
    setuser(p, "dr", "on", ">pw", ">pw2", "~k*", "+get", "&c*", "+publish", "+client|info",
            "+acl|whoami")
    for args in (("dr", "get", "k1"), ("dr", "get", "x"), ("dr", "set", "k", "v"),
                 ("dr", "publish", "c1", "m"), ("dr", "publish", "d", "m"), ("nouser", "get", "k"),
                 ("dr", "nocmd", "k"), ("dr", "get"), ("dr", "config", "get", "x")):
        both_same(p, "ACL", "DRYRUN", *args)
    both_same(p, "ACL", "WHOAMI")
    both_same(p, "AUTH", "dr", "nope")
    both_same(p, "AUTH", "onlypassword")
    for pw in ("pw", "pw2"):
        u = user_pair(p, "dr", pw)
        got, want = u.both("ACL", "WHOAMI")
        assert got == want
        got, want = u.both("CLIENT", "INFO")
        assert b"user=dr " in got and b"user=dr " in want
        u.close()
    # HELLO … AUTH (acl.tcl).
    got, want = lt.send_both(p.latch.sock.getpeername()[1], p.redis.sock.getpeername()[1],
                             encode("HELLO", "2", "AUTH", "dr", "bad"))
    assert got == want
    setuser(p, "dr", "<pw", "off")
    both_same(p, "AUTH", "dr", "pw2")
    both_same(p, "ACL", "SETUSER", "dr", "<pw")


def test_deleted_user_loses_its_connections(acl_pair, latch_server):
    p = acl_pair
    setuser(p, "tmp", "on", ">pw", "+@all", "~*")
    c = latch_server.conn()
    assert c.cmd("AUTH", "tmp", "pw") == b"OK"
    assert p.latch.cmd("ACL", "DELUSER", "tmp") == 1
    assert c.read_until_close(2.0) == b""
    c.close()


def test_requirepass_is_the_default_users_password(server_factory):
    srv = server_factory("latch", "--requirepass", "s3cret")
    c = srv.conn()
    assert c.raw("GET", "x") == b"-NOAUTH Authentication required.\r\n"
    assert c.cmd("AUTH", "default", "s3cret") == b"OK"
    lst = c.cmd("ACL", "LIST")
    import hashlib
    assert lst == [b"user default on #%s ~* &* +@all" %
                   hashlib.sha256(b"s3cret").hexdigest().encode()]
    assert c.cmd("CONFIG", "SET", "requirepass", "") == b"OK"
    assert c.cmd("ACL", "LIST") == [b"user default on nopass ~* &* +@all"]
    c.close()


# --------------------------------------------------- config and aclfile


def test_aclfile_load_save_round_trip(server_factory, tmp_path):
    path = tmp_path / "users.acl"
    path.write_text("user default on nopass ~* &* +@all\n"
                    "user app1 on #%s ~lock:app1:* resetchannels -@all +set +get\n" % ("b" * 64))
    srv = server_factory("latch", "--aclfile", str(path))
    c = srv.conn()
    assert c.cmd("ACL", "USERS") == [b"app1", b"default"]
    assert c.cmd("ACL", "SETUSER", "app2", "on", "nopass", "~lock:app2:*", "+@string") == b"OK"
    assert c.cmd("ACL", "SAVE") == b"OK"
    saved = path.read_text()
    assert "user app2 on nopass ~lock:app2:* resetchannels -@all +@string" in saved
    assert c.cmd("ACL", "DELUSER", "app2") == 1
    assert c.cmd("ACL", "LOAD") == b"OK"
    assert c.cmd("ACL", "USERS") == [b"app1", b"app2", b"default"]
    assert c.cmd("ACL", "LIST") == [l.encode() for l in saved.strip().split("\n")]
    path.write_text("user default on nopass ~* &* +@all\nuser x on +nosuch\n")
    err = c.raw("ACL", "LOAD")
    assert err.startswith(b"-ERR %s:2: Error in applying operation '+nosuch'" % str(path).encode())
    assert c.cmd("ACL", "USERS") == [b"app1", b"app2", b"default"]
    c.close()


def _start_fails(tmp_path, *args):
    binary = lt.latch_binary()
    # (A config file comes first, as for redis-server.)
    r = subprocess.run([binary] + list(args) + ["--port", str(lt.free_port()), "--dir",
                                                str(tmp_path)],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    return r.stdout + r.stderr


def test_config_user_lines_and_their_errors(server_factory, tmp_path):
    conf = tmp_path / "latch.conf"
    conf.write_text("user app1 on >pw ~lock:app1:* +@all -@dangerous\n")
    binary = lt.latch_binary()
    srv = lt.ServerProcess("latch", lambda port: [binary, str(conf), "--port", str(port), "--dir",
                                                  str(tmp_path)], str(tmp_path)).start()
    try:
        c = srv.conn()
        assert c.cmd("AUTH", "app1", "pw") == b"OK"
        assert c.raw("SET", "lock:app2:x", "v").startswith(b"-NOPERM")
        assert c.cmd("SET", "lock:app1:x", "v") == b"OK"
        # CONFIG REWRITE writes every user back, as ACL LIST shows it.
        c.close()
        c = srv.conn()
        assert c.cmd("ACL", "SETUSER", "app2", "on", "nopass", "~lock:app2:*") == b"OK"
        assert c.cmd("CONFIG", "REWRITE") == b"OK"
        text = conf.read_text()
        import hashlib
        assert ("user app1 on #%s ~lock:app1:* resetchannels +@all -@dangerous\n" %
                hashlib.sha256(b"pw").hexdigest()) in text, text
        assert "user app2 on nopass ~lock:app2:* resetchannels -@all\n" in text, text
        assert "user default on nopass ~* &* +@all\n" in text, text
        c.close()
    finally:
        srv.stop()
    conf.write_text("port 0\nuser app1 on +nosuch\n")
    out = _start_fails(tmp_path, str(conf))
    assert "line 2" in out and "Error in user declaration 'app1'" in out, out
    acl = tmp_path / "u.acl"
    acl.write_text("user a on\n")
    conf.write_text("user app1 on\naclfile %s\n" % acl)
    out = _start_fails(tmp_path, str(conf))
    assert "but not both" in out, out
    acl.write_text("user a on\nnonsense\n")
    out = _start_fails(tmp_path, "--aclfile", str(acl))
    assert "%s:2 should start with user keyword" % acl in out, out


# ----------------------------------------------------------- a real lock


def test_redis_py_lock_as_a_restricted_user(latch_server):
    redis = pytest.importorskip("redis")
    admin = latch_server.conn()
    admin.cmd("ACL", "DELUSER", "app1")
    assert admin.cmd("ACL", "SETUSER", "app1", "on", ">pw", "~lock:app1:*", "+@all",
                     "-@dangerous") == b"OK"
    try:
        r = redis.Redis(port=latch_server.port, username="app1", password="pw")
        lock = r.lock("lock:app1:job", timeout=10, blocking_timeout=1)
        assert lock.acquire()
        assert lock.extend(5)
        lock.release()
        other = r.lock("lock:app2:job", timeout=10, blocking_timeout=1)
        with pytest.raises(redis.exceptions.NoPermissionError):
            other.acquire()
        r.close()
    finally:
        admin.cmd("ACL", "DELUSER", "app1")
        admin.close()


def test_client_kill_user(acl_pair):
    p = acl_pair
    setuser(p, "tmp", "on", ">pw", "+@all", "~*")
    u = user_pair(p, "tmp")
    try:
        both_same(p, "CLIENT", "KILL", "USER", "tmp")
        both_same(p, "CLIENT", "KILL", "USER", "nosuch")
        assert u.latch.read_until_close(2.0) == u.redis.read_until_close(2.0) == b""
    finally:
        u.close()
