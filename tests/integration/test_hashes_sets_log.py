"""Hashes and sets in the log: their records are effects (HINCRBY as HSET of
the result, SPOP as SREM, SMOVE as SREM + SADD in one transaction, a STORE
form as DEL + SADD), a kill -9, a rewrite and a restart keep every one of
them (encodings included), and redis-server 7.0 started on latch's log loads
the same data."""

import random
import shutil
import subprocess

import latchtest as lt
from durable import Node, wait_until

BASE = ("--quarantine", "never", "--max-lock-ttl", "0")


def dataset(node):
    """Every key of every database: its type, contents (sorted) and whether
    it has a lease. (Not its encoding: a value a COPY, MOVE or rewrite wrote
    as SADD/HSET records is rebuilt in the encoding those records give, as
    Redis rebuilds it after a rewrite; encodings() looks at them.)"""
    out = {}
    with node.conn() as c:
        for db in range(16):
            c.cmd("SELECT", db)
            for k in c.cmd("KEYS", "*"):
                t = c.cmd("TYPE", k)
                if t == b"hash":
                    v = sorted(lt.pairs_to_dict(c.cmd("HGETALL", k)).items())
                elif t == b"set":
                    v = sorted(c.cmd("SMEMBERS", k))
                else:
                    v = c.cmd("GET", k)
                out[(db, k)] = (t, v, c.cmd("PTTL", k) > 0)
    return out


def encodings(node):
    with node.conn() as c:
        found = set()
        for db in range(16):
            c.cmd("SELECT", db)
            found |= {c.cmd("OBJECT", "ENCODING", k) for k in c.cmd("KEYS", "*")}
        return found


def workload(c, seed):
    rng = random.Random(seed)
    for i in range(1500):
        c.cmd("SELECT", rng.randrange(3))
        h, s = "h%d" % rng.randrange(12), "s%d" % rng.randrange(12)
        op = rng.randrange(16)
        f = "f%d" % rng.randrange(20)
        if op == 0:
            c.cmd("HSET", h, f, "v%d" % i, "g%d" % rng.randrange(5), str(i))
        elif op == 1:
            c.cmd("HINCRBY", h, "n", str(rng.randrange(-5, 10)))
        elif op == 2:
            c.cmd("HINCRBYFLOAT", h, "x", "%.3f" % rng.uniform(-2, 2))
        elif op == 3:
            c.cmd("HDEL", h, f, "n")
        elif op == 4:
            c.cmd("HSET", h, "long%d" % rng.randrange(3), "y" * rng.choice([10, 80]))
        elif op == 5:
            c.cmd("SADD", s, *[str(rng.randrange(600)) for _ in range(rng.randrange(1, 40))])
        elif op == 6:
            c.cmd("SADD", s, "m%d" % rng.randrange(30))
        elif op == 7:
            c.cmd("SREM", s, str(rng.randrange(600)), "m%d" % rng.randrange(30))
        elif op == 8:
            c.cmd("SPOP", s, str(rng.randrange(0, 30)))
        elif op == 9:
            c.cmd("SPOP", s)
        elif op == 10:
            c.cmd("SMOVE", s, "s%d" % rng.randrange(12), str(rng.randrange(600)))
        elif op == 11:
            c.cmd(rng.choice(["SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"]),
                  "s%d" % rng.randrange(12), s, "s%d" % rng.randrange(12))
        elif op == 12:
            c.cmd("PEXPIRE", rng.choice([h, s]), str(rng.randrange(100000, 900000)))
        elif op == 13:
            c.cmd("RENAME", h, "h%d" % rng.randrange(12)) if rng.random() < 0.5 else \
                c.cmd("COPY", s, "s%d" % rng.randrange(12), "REPLACE")
        elif op == 14:
            c.cmd("HSETNX", h, f, "nx")
        else:
            c.cmd("MOVE", rng.choice([h, s]), str(rng.randrange(3)))


def test_hashes_and_sets_survive_a_crash_a_rewrite_and_a_restart(tmp_path):
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always").start()
    with node.conn() as c:
        workload(c, 24)
    before = dataset(node)
    assert {t for t, _, _ in before.values()} == {b"hash", b"set"}
    assert encodings(node) == {b"listpack", b"hashtable", b"intset"}
    node.kill9()
    node.start()
    assert dataset(node) == before
    assert node.cmd("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert wait_until(lambda: node.info("persistence").get("aof_rewrites") == "1", 20)
    node.kill9()
    node.start()
    assert dataset(node) == before
    node.stop()
    p = subprocess.run(["redis-check-aof", node.aof], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=60)
    assert p.returncode == 0 and b"is valid" in p.stdout, p.stdout
    p = subprocess.run([lt.build_dir() + "/tools/latch-check-aof", node.aof],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    assert p.returncode == 0, p.stdout


def test_redis_server_loads_latchs_log_of_hashes_and_sets(tmp_path):
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always").start()
    with node.conn() as c:
        workload(c, 7)
    before = dataset(node)
    node.stop()
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(node.aof, rdir / "latch.aof")
    redis = lt.ServerProcess("redis", lambda port: [
        lt.redis_server_binary(), "--port", str(port), "--save", "", "--appendonly", "yes",
        "--appendfilename", "latch.aof", "--dir", str(rdir)], str(tmp_path)).start()
    # start() returns at the first reply to PING, which may be LOADING.
    def pong():
        with redis.conn() as c:
            return c.cmd("PING") == b"PONG"
    assert wait_until(pong, 60)
    try:
        assert dataset(redis) == before
    finally:
        redis.stop()


def test_records_are_effects(tmp_path):
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always").start()
    with node.conn() as c:
        c.cmd("HINCRBY", "h", "n", "5")
        c.cmd("HINCRBYFLOAT", "h", "x", "0.5")
        c.cmd("HINCRBYFLOAT", "h", "x", "1e1")
        c.cmd("HDEL", "h", "nope")  # changed nothing: no record
        c.cmd("HDEL", "h", "n")
        c.cmd("SADD", "s", "1", "2")
        c.cmd("SADD", "s", "1")  # nothing new: no record
        c.cmd("SMOVE", "s", "t", "2")
        c.cmd("SINTERSTORE", "d", "s", "missing")  # nothing to delete: no record
        c.cmd("SUNIONSTORE", "d", "s", "t")
        popped = c.cmd("SPOP", "d")
    with open(node.aof, "rb") as f:
        log = f.read()
    req = lt.encode
    expected = (req("HSET", "h", "n", "5") + req("HSET", "h", "x", "0.5") +
                req("HSET", "h", "x", "10.5") + req("HDEL", "h", "n") + req("SADD", "s", "1", "2") +
                req("MULTI") + req("SREM", "s", "2") + req("SADD", "t", "2") + req("EXEC") +
                req("SADD", "d", "1", "2") + req("SREM", "d", popped))
    assert log.endswith(expected), log
