"""The blocking sorted-set pops on a real server, beyond the replies
(test_differential_zset_pops.py has those): a served BZPOPMIN/BZMPOP is
logged as its effect (ZREM key member …), which redis-server 7.0 replays to
the same sorted sets; a blocked pop leaves its queues when it disconnects;
and a blocking pop is a grant — in a restart quarantine it is refused when
sent, and one already blocked stays blocked until the quarantine ends, as
the list pops and SET … WAIT waiters do."""

import shutil
import time

import latchtest as lt
from durable import Node, wait_until

BASE = ("--appendonly", "yes")


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


def zsets_of(c):
    return {k: c.cmd("ZRANGE", k, 0, -1, "WITHSCORES") for k in sorted(c.cmd("KEYS", "*"))}


def test_a_served_blocking_pop_is_logged_as_its_effect(tmp_path):
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always").start()
    with node.conn() as a, node.conn() as b, node.conn() as c, node.conn() as d:
        a.send(lt.encode("BZPOPMIN", "z1", "z2", "0"))
        b.send(lt.encode("BZMPOP", "0", "2", "z2", "z1", "MAX", "COUNT", "2"))
        d.send(lt.encode("BZPOPMAX", "z3", "0"))
        assert wait_until(lambda: node.info("clients")["blocked_clients"] == "3", 5)
        assert c.cmd("ZADD", "z2", "1", "a", "2", "b", "3", "c", "4", "d") == 4
        assert a.read() == [b"z2", b"a", b"1"]
        assert b.read() == [b"z2", [[b"d", b"4"], [b"c", b"3"]]]
        assert node.info("clients")["blocked_clients"] == "1"
        # Popped at once, without waiting: logged the same way.
        assert c.cmd("BZPOPMIN", "z2", "0") == [b"z2", b"b", b"2"]
        assert c.cmd("ZADD", "z3", "1.5", "x", "2.5", "y") == 2
        assert d.read() == [b"z3", b"y", b"2.5"]
        before = zsets_of(c)
    node.stop()
    recs = [r for r in records(node) if r[0] != b"SELECT"]
    assert recs == [
        [b"ZADD", b"z2", b"1", b"a", b"2", b"b", b"3", b"c", b"4", b"d"],
        [b"ZREM", b"z2", b"a"],
        [b"ZREM", b"z2", b"d", b"c"],
        [b"ZREM", b"z2", b"b"],
        [b"ZADD", b"z3", b"1.5", b"x", b"2.5", b"y"],
        [b"ZREM", b"z3", b"y"],
    ], recs
    # redis-server 7.0 replays the log to the same sorted sets.
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(node.aof, rdir / "latch.aof")
    redis = lt.ServerProcess("redis", lambda port: [
        lt.redis_server_binary(), "--port", str(port), "--save", "", "--appendonly", "yes",
        "--appendfilename", "latch.aof", "--dir", str(rdir)], str(tmp_path)).start()
    try:
        with redis.conn() as c:
            assert zsets_of(c) == before == {b"z3": [b"x", b"1.5"]}
    finally:
        redis.stop()


def test_a_blocked_pop_that_disconnects_leaves_its_queues(latch_server, latch):
    with latch_server.conn() as gone, latch_server.conn() as stays:
        gone.send(lt.encode("BZPOPMIN", "q", "r", "0"))
        stays.send(lt.encode("BZMPOP", "0", "1", "r", "MAX"))
        assert wait_until(lambda: latch.cmd("INFO", "clients").count(b"blocked_clients:2") == 1, 5)
        gone.close()
        assert wait_until(lambda: latch.cmd("INFO", "clients").count(b"blocked_clients:1") == 1, 5)
        assert latch.cmd("ZADD", "r", "1", "v") == 1
        assert stays.read() == [b"r", [[b"v", b"1"]]]
        assert latch.cmd("EXISTS", "r") == 0


def test_in_quarantine_a_blocked_pop_waits_for_its_end(tmp_path):
    # A power loss under everysec: the node restarts quarantined until the
    # horizon (a process crash on the same boot loses nothing and is not
    # quarantined). Handing out sorted-set members is a grant: refused
    # meanwhile.
    n = Node(str(tmp_path), *BASE, "--appendfsync", "everysec",
             "--max-lock-ttl", "1500", "--enable-debug-command", "yes").start()
    with n.conn() as c:
        c.cmd("SELECT", 1)
        assert c.cmd("ZADD", "k", "1", "x", "2", "y") == 2
    # (everysec: wait for the sorted set's records to be on disk.)
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
        for refused in (("ZPOPMIN", "k"), ("BZPOPMIN", "k", "0"), ("BZPOPMAX", "k", "0"),
                        ("BZMPOP", "0", "1", "k", "MIN"), ("ZADD", "k", "3", "z")):
            r = c.cmd(*refused)
            assert isinstance(r, lt.RespError) and r.text.startswith(b"QUARANTINE"), (refused, r)
        # A release is never refused.
        assert c.cmd("ZREM", "k", "nothing") == 0
        # A pop that blocks in database 0, and the sorted set arriving there
        # by SWAPDB (not a grant): its service is refused, so it keeps
        # waiting — visible as blocked, the sorted set untouched.
        t0 = time.monotonic()
        remaining = int(n.info("latch")["quarantine_remaining_ms"]) / 1000.0
        w.send(lt.encode("BZPOPMIN", "k", "0"))
        assert wait_until(lambda: n.info("clients")["blocked_clients"] == "1", 5)
        assert c.cmd("SWAPDB", 0, 1) == b"OK"
        if n.info("latch")["quarantine"] == "1":
            c.cmd("SELECT", 0)
            assert c.cmd("ZCARD", "k") == 2
            assert b"flags=b" in c.cmd("CLIENT", "LIST")
        assert w.read(timeout=20) == [b"k", b"x", b"1"]
        assert time.monotonic() - t0 >= remaining - 0.05
        assert n.info("latch")["quarantine"] == "0"
        c.cmd("SELECT", 0)
        assert c.cmd("ZRANGE", "k", 0, -1) == [b"y"]
    n.stop()
