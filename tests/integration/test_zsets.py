"""Sorted sets beyond the replies (test_differential_zsets.py has those): the
log keeps them through kill -9, a rewrite and a restart, in both encodings;
the log is one that redis-check-aof accepts and redis-server 7.0 loads into
the same data; writes are logged as their effects (ZADD, ZREM, DEL); and the
restart quarantine refuses the writes that add or hand out members while it
lets the releases through."""

import os
import random
import shutil
import subprocess

import latchtest as lt
from durable import Node, wait_until

BASE = ("--quarantine", "never", "--max-lock-ttl", "0")


def zsnapshot(conn_of, dbs=(0, 1)):
    """{(db, key): (members with scores, encoding, has a TTL)} of every zset."""
    out = {}
    with conn_of() as c:
        # A restarted node answers LOADING while its log replays (long on a
        # loaded machine, or under the sanitizers): wait it out.
        assert wait_until(lambda: c.cmd("PING") == b"PONG", 60)
        for db in dbs:
            c.cmd("SELECT", db)
            for k in c.cmd("KEYS", "*"):
                assert c.cmd("TYPE", k) == b"zset", k
                out[(db, k)] = (c.cmd("ZRANGE", k, "0", "-1", "WITHSCORES"),
                                c.cmd("OBJECT", "ENCODING", k), c.cmd("PTTL", k) > 0)
    return out


def workload(c, rng, n):
    scores = ["1", "2.5", "-inf", "inf", "0.1", "1e300", "-7", "3"]
    for i in range(n):
        c.cmd("SELECT", rng.randrange(2))
        k = "z%d" % rng.randrange(12)
        m = "m%d" % rng.randrange(40) if rng.random() < 0.97 else "x" * 70 + str(i)
        op = rng.random()
        if op < 0.45:
            c.cmd("ZADD", k, rng.choice(scores), m, rng.choice(scores), "m%d" % rng.randrange(40))
        elif op < 0.5:
            c.cmd("ZINCRBY", k, rng.choice(scores), m)
        elif op < 0.6:
            c.cmd("ZREM", k, m, "m%d" % rng.randrange(40))
        elif op < 0.65:
            c.cmd("ZPOPMIN", k, rng.randrange(3))
        elif op < 0.7:
            c.cmd("ZREMRANGEBYSCORE", k, "-inf", rng.choice(scores))
        elif op < 0.75:
            c.cmd("ZUNIONSTORE", "z%d" % rng.randrange(12), "2", k, "z%d" % rng.randrange(12),
                  "WEIGHTS", "2", "0.5")
        elif op < 0.8:
            c.cmd("ZRANGESTORE", "z%d" % rng.randrange(12), k, "1", "-1")
        elif op < 0.85:
            c.cmd("PEXPIRE", k, 600000)
        elif op < 0.9:
            c.cmd("ZADD", k, "INCR", rng.choice(scores), m)
        else:
            # Past zset-max-listpack-entries: a skiplist.
            args = ["ZADD", k]
            for j in range(rng.randrange(100, 200)):
                args += [str(rng.randrange(1000)), "big%d" % j]
            c.cmd(*args)


def test_zsets_survive_a_crash_a_rewrite_a_restart_and_load_in_redis(tmp_path):
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always").start()
    rng = random.Random(24)
    with node.conn() as c:
        workload(c, rng, 1500)
    before = zsnapshot(node.conn)
    encodings = {enc for _, enc, _ in before.values()}
    assert encodings == {b"listpack", b"skiplist"}, encodings
    node.kill9()
    node.start()
    assert zsnapshot(node.conn) == before
    assert node.cmd("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert wait_until(lambda: node.info("persistence").get("aof_rewrites") == "1", 20)
    with open(node.aof, "rb") as f:
        rewritten = f.read()
    assert b"ZINCRBY" not in rewritten and b"ZUNIONSTORE" not in rewritten
    node.kill9()
    node.start()
    assert zsnapshot(node.conn) == before
    # More writes after the rewrite, then a clean stop.
    with node.conn() as c:
        workload(c, rng, 300)
    before = zsnapshot(node.conn)
    node.stop()
    node.start()
    assert zsnapshot(node.conn) == before
    node.stop()
    p = subprocess.run(["redis-check-aof", node.aof], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 0 and b"is valid" in p.stdout, p.stdout
    # redis-server 7.0 loads latch's log into the same sorted sets.
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(node.aof, rdir / "latch.aof")
    redis = lt.ServerProcess("redis", lambda port: [
        lt.redis_server_binary(), "--port", str(port), "--save", "", "--appendonly", "yes",
        "--appendfilename", "latch.aof", "--dir", str(rdir)], str(tmp_path)).start()
    try:
        assert zsnapshot(redis.conn) == before
    finally:
        redis.stop()


def test_writes_are_logged_as_their_effects(tmp_path):
    node = Node(str(tmp_path), *BASE).start()
    with node.conn() as c:
        assert c.cmd("ZADD", "z", "1", "a", "2", "b", "3", "c") == 3
        assert c.cmd("ZINCRBY", "z", "0.5", "a") == b"1.5"
        assert c.cmd("ZADD", "z", "NX", "9", "a") == 0  # changes nothing: no record
        assert c.cmd("ZPOPMAX", "z") == [b"c", b"3"]
        assert c.cmd("ZREMRANGEBYSCORE", "z", "-inf", "1.5") == 1
        assert c.cmd("ZADD", "src", "5", "x", "6", "y") == 2
        assert c.cmd("ZUNIONSTORE", "dst", "2", "z", "src", "WEIGHTS", "1", "2") == 3
        assert c.cmd("ZRANGESTORE", "dst", "src", "10", "20", "BYSCORE") == 0
    node.stop()
    with open(node.aof, "rb") as f:
        log = f.read()
    req = lambda *a: lt.encode(*a)
    for record in (req("ZADD", "z", "1", "a", "2", "b", "3", "c"),
                   req("ZADD", "z", "1.5", "a"), req("ZREM", "z", "c"), req("ZREM", "z", "a"),
                   req("ZADD", "dst", "2", "b", "10", "x", "12", "y"),
                   req("DEL", "dst")):
        assert record in log, (record, log)
    for word in (b"ZINCRBY", b"ZPOPMAX", b"ZREMRANGEBYSCORE", b"ZUNIONSTORE", b"ZRANGESTORE"):
        assert word not in log
    assert log.count(b"\r\nZADD\r\n") == 4


def test_quarantine_refuses_grants_and_lets_releases_through(tmp_path):
    """A semaphore's permit is a ZADD: after an unsafe restart the node must
    not hand one out (it may have forgotten permits held elsewhere), as it
    refuses SET; removing permits (ZREM, ZREMRANGEBYSCORE) stays allowed."""
    workdir = str(tmp_path)
    srv = lt.start_latch(workdir, "--appendonly", "yes")
    with srv.conn() as c:
        assert c.cmd("ZADD", "sem", "1", "a", "2", "b", "3", "c") == 3
        assert c.cmd("ZADD", "other", "1", "x") == 1
    srv.stop()
    srv = lt.start_latch(workdir, "--appendonly", "yes", "--quarantine", "always",
                         "--quarantine-ms", "60000")
    try:
        with srv.conn() as c:
            for args in (("ZADD", "sem", "4", "d"), ("ZADD", "new", "1", "a"),
                         ("ZINCRBY", "sem", "1", "a"), ("ZPOPMIN", "sem"),
                         ("ZMPOP", "1", "sem", "MAX"),
                         ("ZUNIONSTORE", "u", "2", "sem", "other"),
                         ("ZRANGESTORE", "u", "sem", "0", "-1")):
                r = c.cmd(*args)
                assert isinstance(r, lt.RespError) and r.text.startswith(b"QUARANTINE "), (args, r)
            assert c.cmd("ZCARD", "sem") == 3 and c.cmd("EXISTS", "new", "u") == 0
            # Writes that change nothing are not grants.
            assert c.cmd("ZADD", "sem", "NX", "9", "a") == 0
            assert c.cmd("ZADD", "sem", "1", "a") == 0
            # Releases.
            assert c.cmd("ZREM", "sem", "a") == 1
            assert c.cmd("ZREMRANGEBYSCORE", "sem", "-inf", "2") == 1
            assert c.cmd("ZREMRANGEBYRANK", "sem", "0", "-1") == 1
            assert c.cmd("ZUNIONSTORE", "other", "1", "missing") == 0  # deletes: a release
            assert c.cmd("EXISTS", "sem", "other") == 0
    finally:
        srv.stop()
