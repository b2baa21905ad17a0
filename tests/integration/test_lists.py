"""Lists on a real server, beyond the replies (test_differential_lists.py has
those): the log keeps every list across kill -9, a rewrite and a restart,
and redis-server 7.0 loads latch's log into the same lists; a served
blocking pop is logged as its effect (LPOP key 1); a blocked pop leaves its
queues when it disconnects; and a blocking pop is a grant — in a restart
quarantine it stays blocked until the quarantine ends, as a SET … WAIT
waiter does."""

import random
import shutil
import subprocess
import time

import latchtest as lt
from durable import Node, wait_until

BASE = ("--appendonly", "yes")


def served(srv):
    """Waits out LOADING: start() returns at the first reply to PING, which
    may be LOADING while a large log replays on a loaded machine."""
    def pong():
        with srv.conn() as c:
            return c.cmd("PING") == b"PONG"
    assert wait_until(pong, 60)


def lists_of(node_or_conn, dbs=1):
    """{(db, key): (elements, has a TTL)} of every list."""
    out = {}
    c = node_or_conn
    for db in range(dbs):
        c.cmd("SELECT", db)
        for k in c.cmd("KEYS", "*"):
            assert c.cmd("TYPE", k) == b"list", k
            out[(db, k)] = (c.cmd("LRANGE", k, 0, -1), c.cmd("PTTL", k) > 0)
    return out


def random_list_writes(c, rng, n):
    elements = ["a", "b", "c", "x" * 300, "12345", ""]
    for i in range(n):
        c.cmd("SELECT", rng.randrange(3))
        k = "l%d" % rng.randrange(8)
        e = rng.choice(elements) + str(rng.randrange(4))
        op = rng.randrange(12)
        if op < 3:
            c.cmd(rng.choice(["LPUSH", "RPUSH"]), k, e, *([e] * rng.randrange(3)))
        elif op == 3:
            c.cmd(rng.choice(["LPOP", "RPOP"]), k, rng.randrange(1, 4))
        elif op == 4:
            c.cmd("LSET", k, rng.randrange(-3, 3), e)
        elif op == 5:
            c.cmd("LINSERT", k, rng.choice(["BEFORE", "AFTER"]), e, "ins%d" % i)
        elif op == 6:
            c.cmd("LREM", k, rng.randrange(-2, 3), e)
        elif op == 7:
            c.cmd("LTRIM", k, rng.randrange(-5, 3), rng.randrange(-3, 6))
        elif op == 8:
            c.cmd("LMOVE", k, "l%d" % rng.randrange(8), rng.choice(["LEFT", "RIGHT"]),
                  rng.choice(["LEFT", "RIGHT"]))
        elif op == 9:
            c.cmd("PEXPIRE", k, 600000)
        elif op == 10:
            c.cmd("LMPOP", 2, k, "l%d" % rng.randrange(8), "LEFT", "COUNT", 2)
        else:
            c.cmd("RPOPLPUSH", k, k)


def test_lists_survive_a_crash_a_rewrite_and_a_restart_and_redis_loads_them(tmp_path):
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always",
                "--list-max-listpack-size", "4").start()
    rng = random.Random(24)
    with node.conn() as c:
        random_list_writes(c, rng, 1500)
        # A long list, written by the rewrite in batches of 64.
        c.cmd("SELECT", 0)
        c.cmd("RPUSH", "long", *["e%d" % i for i in range(1000)])
        before = lists_of(c, 3)
    assert len(before) >= 10, before
    node.kill9()
    node.start()
    with node.conn() as c:
        assert lists_of(c, 3) == before
    assert node.cmd("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert wait_until(lambda: node.info("persistence").get("aof_rewrites") == "1", 20)
    node.kill9()
    node.start()
    with node.conn() as c:
        assert lists_of(c, 3) == before
    node.stop()
    with open(node.aof, "rb") as f:
        log = f.read()
    assert log.count(b"$5\r\nRPUSH\r\n$4\r\nlong\r\n") == 16  # 1000 = 15 x 64 + 40
    p = subprocess.run(["redis-check-aof", node.aof], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    assert p.returncode == 0 and b"is valid" in p.stdout, p.stdout
    # redis-server 7.0 loads latch's log into the same lists.
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(node.aof, rdir / "latch.aof")
    redis = lt.ServerProcess("redis", lambda port: [
        lt.redis_server_binary(), "--port", str(port), "--save", "", "--appendonly", "yes",
        "--appendfilename", "latch.aof", "--dir", str(rdir)], str(tmp_path)).start()
    served(redis)
    try:
        with redis.conn() as c:
            assert lists_of(c, 3) == before
    finally:
        redis.stop()


def test_the_log_of_every_list_write_replays_in_redis(tmp_path):
    """Before any rewrite: the records themselves (LPOP key n, LINSERT,
    a move as MULTI … EXEC…) are commands redis-server replays to the
    same lists."""
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always").start()
    with node.conn() as c:
        random_list_writes(c, random.Random(7), 800)
        before = lists_of(c, 3)
    node.stop()
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(node.aof, rdir / "latch.aof")
    redis = lt.ServerProcess("redis", lambda port: [
        lt.redis_server_binary(), "--port", str(port), "--save", "", "--appendonly", "yes",
        "--appendfilename", "latch.aof", "--dir", str(rdir)], str(tmp_path)).start()
    served(redis)
    try:
        with redis.conn() as c:
            assert lists_of(c, 3) == before
    finally:
        redis.stop()


def records(node):
    """The log's commands, as lists of bytes (annotations left out)."""
    with open(node.aof, "rb") as f:
        data = f.read()
    out, pos = [], 0
    while pos < len(data):
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        value, pos = lt.parse_reply(data, pos)
        out.append(value)
    return out


def test_a_served_blocking_pop_is_logged_as_its_effect(tmp_path):
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always").start()
    with node.conn() as a, node.conn() as b, node.conn() as c:
        a.send(lt.encode("BLPOP", "k1", "k2", "0"))
        b.send(lt.encode("BLMOVE", "src", "k1", "RIGHT", "LEFT", "0"))
        assert wait_until(lambda: node.info("clients")["blocked_clients"] == "2", 5)
        assert c.cmd("RPUSH", "src", "x", "y") == 2
        assert b.read() == b"y"
        assert a.read() == [b"k1", b"y"]
        assert node.info("clients")["blocked_clients"] == "0"
    node.stop()
    recs = [r for r in records(node) if r[0] != b"SELECT"]
    assert recs == [
        [b"RPUSH", b"src", b"x", b"y"],
        [b"MULTI"], [b"RPOP", b"src", b"1"], [b"LPUSH", b"k1", b"y"], [b"EXEC"],
        [b"LPOP", b"k1", b"1"],
    ], recs


def test_a_blocked_pop_that_disconnects_leaves_its_queues(latch_server, latch):
    with latch_server.conn() as gone, latch_server.conn() as stays:
        gone.send(lt.encode("BLPOP", "q", "r", "0"))
        stays.send(lt.encode("BRPOP", "r", "0"))
        assert wait_until(lambda: latch.cmd("INFO", "clients").count(b"blocked_clients:2") == 1, 5)
        gone.close()
        assert wait_until(lambda: latch.cmd("INFO", "clients").count(b"blocked_clients:1") == 1, 5)
        assert latch.cmd("RPUSH", "r", "v") == 1
        assert stays.read() == [b"r", b"v"]
        assert latch.cmd("EXISTS", "r") == 0


def test_in_quarantine_a_blocked_pop_waits_for_its_end(tmp_path):
    # A power loss under everysec: the node restarts quarantined until the
    # horizon (a process crash on the same boot loses nothing and is not
    # quarantined). Handing out list elements is a grant: refused meanwhile.
    n = Node(str(tmp_path), *BASE, "--appendfsync", "everysec",
             "--max-lock-ttl", "1500", "--enable-debug-command", "yes").start()
    with n.conn() as c:
        c.cmd("SELECT", 1)
        assert c.cmd("RPUSH", "k", "x", "y") == 2
    # (everysec: wait for the list's records to be on disk.)
    time.sleep(1.5)
    # Then a lock whose record's fsync has not completed when the power
    # goes (a slow disk): it may have been forgotten.
    assert n.cmd("DEBUG", "FAULT-IO", "log-fsync", 5000) == b"OK"
    assert n.cmd("SET", "lock", "A", "NX", "PX", "1500") == b"OK"
    n.power_loss()
    n.start()
    assert n.info("latch")["quarantine"] == "1"
    with n.conn() as c, n.conn() as w:
        c.cmd("SELECT", 1)
        for refused in (("LPOP", "k"), ("BLPOP", "k", "0"), ("RPUSH", "k", "z"),
                        ("LMOVE", "k", "j", "LEFT", "LEFT")):
            r = c.cmd(*refused)
            assert isinstance(r, lt.RespError) and r.text.startswith(b"QUARANTINE"), (refused, r)
        # A release is never refused.
        assert c.cmd("LREM", "k", "0", "nothing") == 0
        # A pop that blocks in database 0, and the list arriving there by
        # SWAPDB (not a grant): its service is refused, so it keeps waiting.
        t0 = time.monotonic()
        remaining = int(n.info("latch")["quarantine_remaining_ms"]) / 1000.0
        w.send(lt.encode("BLPOP", "k", "0"))
        assert wait_until(lambda: n.info("clients")["blocked_clients"] == "1", 5)
        assert c.cmd("SWAPDB", 0, 1) == b"OK"
        if n.info("latch")["quarantine"] == "1":
            c.cmd("SELECT", 0)
            assert c.cmd("LLEN", "k") == 2
            assert b"flags=b" in c.cmd("CLIENT", "LIST")
        assert w.read(timeout=20) == [b"k", b"x"]
        assert time.monotonic() - t0 >= remaining - 0.05
        assert n.info("latch")["quarantine"] == "0"
    n.stop()
