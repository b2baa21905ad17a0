"""SET key value NX ... WAIT timeout-ms on a real server: clients queue for a
held key and get it in the order they asked, the moment it is released, it
expires or the waiter ahead disconnects; a timeout answers nil; MULTI does not
wait; the restart quarantine holds a waiter back until it ends. Timing
assertions have generous margins (CI machines are shared, and ASan slows the
server down)."""

import os
import time

import durable
import latchtest as lt


def parked(conn, *args):
    """Sends a request that is expected to park: nothing comes back yet."""
    conn.send(lt.encode(*args))


def no_reply(conn, within=0.15):
    try:
        r = conn.read(timeout=within)
    except TimeoutError:
        return True
    raise AssertionError("unexpected reply %r" % (r,))


def wait_for_waiters(c, key, n):
    assert lt.wait_for(lambda: lt.pairs_to_dict(c.cmd("LOCKINFO", key))[b"waiters"] == n, 5), \
        c.cmd("LOCKINFO", key)


def test_fifty_waiters_get_the_key_in_the_order_they_asked(latch_server, latch):
    latch.cmd("SET", "lock", "first", "NX", "PX", "10000")
    waiters = []
    try:
        for i in range(50):
            c = latch_server.conn()
            parked(c, "SET", "lock", "w%d" % i, "NX", "PX", "10000", "WAIT", "20000")
            wait_for_waiters(latch, "lock", i + 1)  # queued in this order
            waiters.append(c)
        info = lt.info_fields(latch.cmd("INFO"))
        assert int(info["blocked_clients"]) >= 50
        assert info["lock_waiters"] == "50" and info["lock_wait_keys"] == "1"
        flags = [l for l in latch.cmd("CLIENT", "LIST").decode().splitlines() if "cmd=set" in l]
        assert len(flags) == 50 and all(" flags=b " in l for l in flags), flags[:2]
        holder, token = latch, "first"
        for i, c in enumerate(waiters):
            start = time.monotonic()
            assert holder.cmd("DELIFEQ", "lock", token) == 1
            assert c.read() == b"OK"  # granted at the release, not at a poll
            assert time.monotonic() - start < 2.0
            holder, token = c, "w%d" % i
            assert latch.cmd("GET", "lock") == token.encode()
        assert latch.cmd("LOCKINFO", "lock")[-1] == 0
    finally:
        for c in waiters:
            c.close()


def test_a_competing_set_nx_right_after_the_release_finds_the_key_held(latch_server, latch):
    latch.cmd("SET", "lock", "A", "NX", "PX", "10000")
    w = latch_server.conn()
    parked(w, "SET", "lock", "B", "NX", "PX", "10000", "WAIT", "0", "FENCE")
    wait_for_waiters(latch, "lock", 1)
    # The release and a SET NX in one pipeline: the waiter was granted in
    # between, before the SET NX was even read.
    latch.send(lt.encode("DEL", "lock") + lt.encode("SET", "lock", "C", "NX", "PX", "1000"))
    assert latch.read() == 1
    assert latch.read() is None
    token = w.read()
    assert isinstance(token, int) and token > 0
    assert latch.cmd("FENCE", "lock") == token
    assert lt.pairs_to_dict(latch.cmd("LOCKINFO", "lock"))[b"holder"] == b"B"
    w.close()


def test_an_expiry_hands_the_key_over_on_time(latch_server, latch):
    w = latch_server.conn()
    t0 = time.monotonic()
    latch.cmd("SET", "lock", "A", "NX", "PX", "400")
    parked(w, "SET", "lock", "B", "NX", "PX", "2000", "WAIT", "10000")
    assert w.read(timeout=5) == b"OK"
    waited = time.monotonic() - t0
    # Not before A's lease ended, and by a timer at its end rather than at
    # the expiry cycle's next sample (a generous margin for a loaded CI).
    assert 0.38 <= waited < 0.9, waited
    pttl = latch.cmd("PTTL", "lock")
    assert 1500 < pttl <= 2000, pttl  # counted from the grant
    w.close()


def test_a_waiter_that_disconnects_leaves_the_queue(latch_server, latch):
    latch.cmd("SET", "lock", "A", "NX", "PX", "10000")
    first, second = latch_server.conn(), latch_server.conn()
    parked(first, "SET", "lock", "B", "NX", "PX", "10000", "WAIT", "0")
    wait_for_waiters(latch, "lock", 1)
    parked(second, "SET", "lock", "C", "NX", "PX", "10000", "WAIT", "0")
    wait_for_waiters(latch, "lock", 2)
    first.close()
    wait_for_waiters(latch, "lock", 1)
    assert latch.cmd("DELIFEQ", "lock", "A") == 1
    assert second.read() == b"OK"
    assert latch.cmd("GET", "lock") == b"C"
    # A holder that disconnects keeps its lock until it is released or
    # expires: the lease, not the connection, is the lock.
    second.close()
    assert latch.cmd("GET", "lock") == b"C"


def test_a_timeout_answers_nil_and_multi_does_not_wait(latch_server, latch):
    latch.cmd("SET", "lock", "A", "NX", "PX", "10000")
    w = latch_server.conn()
    t0 = time.monotonic()
    parked(w, "SET", "lock", "B", "NX", "PX", "1000", "WAIT", "300")
    assert w.read(timeout=5) is None
    assert time.monotonic() - t0 >= 0.29
    assert w.cmd("PING") == b"PONG"  # the connection goes on
    assert latch.cmd("MULTI") == b"OK"
    assert latch.cmd("SET", "lock", "C", "NX", "WAIT", "0") == b"QUEUED"
    assert latch.cmd("EXEC") == [None]
    assert int(lt.info_fields(latch.cmd("INFO", "latch"))["lock_wait_timeouts"]) >= 1
    w.close()


def test_a_known_release_script_hands_the_key_over(latch_server, latch):
    path = os.path.join(lt.source_dir(), "server", "scripting", "scripts",
                        "python3-redis-4.3.4", "lock-release.lua")
    with open(path, "rb") as f:
        release = f.read()
    latch.cmd("SET", "lock", "A", "NX", "PX", "10000")
    w = latch_server.conn()
    parked(w, "SET", "lock", "B", "NX", "PX", "10000", "WAIT", "0")
    wait_for_waiters(latch, "lock", 1)
    assert latch.cmd("EVAL", release, "1", "lock", "A") == 1
    assert w.read() == b"OK"
    w.close()


def test_lockinfo_in_resp2_and_resp3(latch_server, latch):
    latch.cmd("SET", "lock", "tok", "NX", "PX", "5000", "FENCE")
    w = latch_server.conn()
    parked(w, "SET", "lock", "B", "NX", "WAIT", "0")
    wait_for_waiters(latch, "lock", 1)
    flat = latch.cmd("LOCKINFO", "lock")
    assert flat[:4] == [b"holder", b"tok", b"token", latch.cmd("FENCE", "lock")]
    assert flat[4] == b"pttl" and 0 < flat[5] <= 5000 and flat[6:] == [b"waiters", 1]
    with latch_server.conn() as c3:
        c3.cmd("HELLO", "3")
        m = c3.cmd("LOCKINFO", "lock")
        assert isinstance(m, lt.OrderedMap)
        assert m.keys() == [b"holder", b"token", b"pttl", b"waiters"]
        assert m[b"waiters"] == 1
        assert c3.raw("LOCKINFO", "nothing") == (
            b"%4\r\n$6\r\nholder\r\n_\r\n$5\r\ntoken\r\n_\r\n$4\r\npttl\r\n:-2\r\n"
            b"$7\r\nwaiters\r\n:0\r\n")
    w.close()


def test_during_a_restart_quarantine_a_waiter_waits_for_its_end(tmp_path):
    # A power loss under everysec before the grant's fsync: the node
    # restarts quarantined until the at-risk horizon.
    n = durable.Node(str(tmp_path), "--appendonly", "yes", "--appendfsync", "everysec",
                     "--max-lock-ttl", "1500", "--enable-debug-command", "yes").start()
    assert n.cmd("DEBUG", "FAULT-IO", "log-fsync", "5000") == b"OK"
    assert n.cmd("SET", "lock", "A", "NX", "PX", "1500") == b"OK"
    n.power_loss()
    n.start()
    info = n.info("latch")
    assert info["quarantine"] == "1", info
    with n.conn() as c:
        # A free key: refused at once, as any grant in quarantine.
        r = c.cmd("SET", "free", "B", "NX", "PX", "1000", "WAIT", "5000")
        assert isinstance(r, lt.RespError) and r.text.startswith(b"QUARANTINE")
        # A held key (a blind write is served in quarantine).
        assert c.cmd("SET", "lock", "A", "PX", "300") == b"OK"
        # A held key: the client waits; when the lock expires the grant is
        # still refused, so it keeps waiting — until the quarantine ends.
        t0 = time.monotonic()
        remaining = int(n.info("latch")["quarantine_remaining_ms"]) / 1000.0
        parked(c, "SET", "lock", "B", "NX", "PX", "1000", "WAIT", "20000")
        assert c.read(timeout=20) == b"OK"
        assert time.monotonic() - t0 >= remaining - 0.05
        assert n.info("latch")["quarantine"] == "0"
    n.stop()


def test_a_release_earlier_in_the_same_multi_does_not_take_the_key_from_a_waiter(latch_server,
                                                                                 latch):
    """MULTI; DEL lock; SET lock X NX; EXEC with a client queued for the
    lock: the key is not free for the transaction's SET NX in the instant
    between the DEL and the handoff. EXEC answers [1, nil] and the waiter
    gets the key."""
    assert latch.cmd("SET", "lock", "A", "NX", "PX", "10000") == b"OK"
    w = latch_server.conn()
    try:
        parked(w, "SET", "lock", "W", "NX", "PX", "10000", "WAIT", "10000")
        wait_for_waiters(latch, "lock", 1)
        with latch_server.conn() as c:
            assert c.cmd("MULTI") == b"OK"
            assert c.cmd("DEL", "lock") == b"QUEUED"
            assert c.cmd("SET", "lock", "X", "NX") == b"QUEUED"
            assert c.cmd("EXEC") == [1, None]
        assert w.read(timeout=5) == b"OK"
        assert latch.cmd("GET", "lock") == b"W"
        assert 0 < latch.cmd("PTTL", "lock") <= 10000
    finally:
        w.close()


def test_a_huge_ttl_handed_over_later_stays_a_valid_lease(tmp_path):
    """SET k v NX PX <huge> WAIT: the TTL counts from the handoff, later than
    the request it was checked against. The deadline's conversion is
    bounded: the log does not get a negative PXAT (the lease survives a
    replay), PEXPIRETIME stays in the future, and PEXPIRE … GT cannot
    shorten the lease. (Run this under UBSan too: the unbounded sum was a
    signed overflow.)"""
    n = durable.Node(str(tmp_path), "--appendonly", "yes", "--quarantine", "never").start()
    latch = n.conn()
    assert latch.cmd("SET", "big", "A", "NX", "PX", "300") == b"OK"
    secs, usecs = latch.cmd("TIME")
    now_ms = int(secs) * 1000 + int(usecs) // 1000
    huge = 2**63 - 1 - now_ms - 50  # valid when asked: now + huge still fits
    w = n.conn()
    try:
        parked(w, "SET", "big", "W", "NX", "PX", str(huge), "WAIT", "10000")
        wait_for_waiters(latch, "big", 1)
        assert w.read(timeout=5) == b"OK"  # handed over ~300 ms later
    finally:
        w.close()
    assert latch.cmd("GET", "big") == b"W"
    expire_at = latch.cmd("PEXPIRETIME", "big")
    assert expire_at > now_ms + 10**12, expire_at
    assert latch.cmd("PTTL", "big") > 10**12
    assert latch.cmd("PEXPIRE", "big", 1000, "GT") == 0  # not a shorter lease
    assert latch.cmd("PTTL", "big") > 10**12
    latch.close()
    n.kill9()
    n.start()
    assert n.cmd("GET", "big") == b"W"  # the log's PXAT is a future time
    assert n.cmd("PTTL", "big") > 10**12
    n.stop()


STEAL = """
if not redis.call('get', KEYS[1]) then
  return redis.call('set', KEYS[1], ARGV[1], 'PX', 60000)
end
return false"""


def test_an_expiry_goes_to_the_waiter_before_a_request_read_in_the_same_step(tmp_path):
    """A request read in the loop step in which a waited lease ends (here,
    behind a slow command in the same batch: DEBUG SLEEP) must find the key
    already handed to the first waiter, not free: a GET-then-SET script, an
    INCR or SET … GET would otherwise take it from the queue. The lock timer
    alone fires only at the start of the next step."""
    srv = lt.start_latch(str(tmp_path), "--enable-debug-command", "yes")
    try:
        for attempt in range(3):
            with srv.conn() as holder, srv.conn() as waiter, srv.conn() as blocker, \
                    srv.conn() as slow, srv.conn() as thief:
                key = "lock:%d" % attempt
                assert holder.cmd("SET", key, "holder", "PX", "400") == b"OK"
                parked(waiter, "SET", key, "waiter", "NX", "PX", "60000", "WAIT", "5000")
                wait_for_waiters(holder, key, 1)
                # The loop is busy for 150 ms; meanwhile a slow command and
                # the thief's script arrive, to be read in one batch: the
                # slow one runs past the lease's end, then the script.
                blocker.send(lt.encode("DEBUG", "SLEEP", "0.15"))
                time.sleep(0.05)
                slow.send(lt.encode("DEBUG", "SLEEP", "0.5"))
                time.sleep(0.02)
                thief.send(lt.encode("EVAL", STEAL, "1", key, "thief"))
                assert blocker.read(timeout=10) == b"OK"
                assert slow.read(timeout=10) == b"OK"
                assert thief.read(timeout=10) is None
                assert waiter.read(timeout=10) == b"OK"
                assert holder.cmd("GET", key) == b"waiter"
    finally:
        srv.stop()


def test_a_pop_cannot_create_a_released_key_that_a_lock_waiter_waits_for(latch_server, latch):
    """The holder releases its lock in the same script that pushes to a list
    a BLMOVE client waits on, with the lock's key as the destination: the
    lock goes to its first waiter; the move finds the key holding a string
    (WRONGTYPE), as it would for any held lock."""
    with latch_server.conn() as holder, latch_server.conn() as waiter, \
            latch_server.conn() as mover:
        assert holder.cmd("SET", "L", "holder", "PX", "60000") == b"OK"
        parked(waiter, "SET", "L", "waiter", "NX", "PX", "60000", "WAIT", "5000")
        wait_for_waiters(holder, "L", 1)
        parked(mover, "BLMOVE", "jobs", "L", "LEFT", "LEFT", "5")
        assert lt.wait_for(
            lambda: b"blocked_clients:2" in holder.cmd("INFO", "clients"), 5)
        script = ("redis.call('LPUSH', 'jobs', 'x'); "
                  "return redis.call('DELIFEQ', KEYS[1], ARGV[1])")
        assert holder.cmd("EVAL", script, "1", "L", "holder") == 1
        assert waiter.read(timeout=5) == b"OK"
        r = mover.read(timeout=5)
        assert isinstance(r, lt.RespError) and r.text.startswith(b"WRONGTYPE"), r
        assert holder.cmd("GET", "L") == b"waiter"
        assert holder.cmd("LRANGE", "jobs", "0", "-1") == [b"x"]
        # The same in a transaction.
        assert holder.cmd("SET", "M", "holder", "PX", "60000") == b"OK"
        parked(waiter, "SET", "M", "waiter", "NX", "PX", "60000", "WAIT", "5000")
        wait_for_waiters(holder, "M", 1)
        parked(mover, "BRPOPLPUSH", "jobs2", "M", "5")
        assert lt.wait_for(
            lambda: b"blocked_clients:2" in holder.cmd("INFO", "clients"), 5)
        holder.send(lt.encode("MULTI") + lt.encode("LPUSH", "jobs2", "y") +
                    lt.encode("DEL", "M") + lt.encode("EXEC"))
        assert holder.read() == b"OK" and holder.read() == b"QUEUED"
        assert holder.read() == b"QUEUED" and holder.read() == [1, 1]
        assert waiter.read(timeout=5) == b"OK"
        r = mover.read(timeout=5)
        assert isinstance(r, lt.RespError) and r.text.startswith(b"WRONGTYPE"), r
        assert holder.cmd("GET", "M") == b"waiter"
