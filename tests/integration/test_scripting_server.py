"""Scripting on a real latch-server (issue 23): busy scripts (other clients
get -BUSY, SCRIPT KILL, UNKILLABLE after a write, FUNCTION KILL, SHUTDOWN
NOSAVE), and what reaches the log: a script's writes as one unit, function
libraries across a restart and a rewrite."""

import os
import time

import latchtest as lt

BUSY_EVAL = (b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
             b"SHUTDOWN NOSAVE.\r\n")
BUSY_FCALL = (b"-BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
              b"SHUTDOWN NOSAVE.\r\n")


def wait_busy(c, want=BUSY_EVAL):
    seen = []

    def busy():
        seen.append(c.raw("PING"))
        return seen[-1] == want
    assert lt.wait_for(busy, 5.0), seen[-3:]


def test_busy_script_kill_and_unkillable(server_factory):
    srv = server_factory("latch", "--busy-reply-threshold", "50")
    runner, other = srv.conn(), srv.conn()
    # A read-only loop: other clients get -BUSY, SCRIPT KILL stops it.
    runner.send(lt.encode("EVAL", "while true do end", "0"))
    wait_busy(other)
    assert other.raw("GET", "k") == BUSY_EVAL
    assert other.raw("FUNCTION", "KILL") == BUSY_EVAL
    assert other.raw("FUNCTION", "STATS") == BUSY_EVAL
    assert other.raw("SCRIPT", "KILL") == b"+OK\r\n"
    killed = runner.read_raw()
    assert killed.startswith(b"-ERR Script killed by user with SCRIPT KILL..."), killed
    assert other.raw("PING") == b"+PONG\r\n"
    assert other.raw("SCRIPT", "KILL") == b"-NOTBUSY No scripts in execution right now.\r\n"
    # A script that wrote cannot be killed; it finishes on its own.
    runner.send(lt.encode(
        "EVAL", "redis.call('set', 'w', 'v') local t = redis.call('time') "
        "local t0 = t[1] * 1000000 + t[2] "
        "while true do t = redis.call('time') if t[1] * 1000000 + t[2] - t0 > 2000000 then "
        "break end end return 'done'", "0"))
    wait_busy(other)
    unkillable = other.raw("SCRIPT", "KILL")
    assert unkillable.startswith(b"-UNKILLABLE Sorry the script already executed write "
                                 b"commands against the dataset."), unkillable
    assert runner.read_raw(timeout=10) == b"$4\r\ndone\r\n"
    assert other.raw("GET", "w") == b"$1\r\nv\r\n"
    # A function: FUNCTION KILL, not SCRIPT KILL.
    assert other.cmd("FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function("
                     "'spin', function() while true do end end)") == b"spin"
    runner.send(lt.encode("FCALL", "spin", "0"))
    wait_busy(other, BUSY_FCALL)
    assert other.raw("SCRIPT", "KILL") == BUSY_FCALL
    stats = lt.parse_reply(other.raw("FUNCTION", "STATS"))[0]
    assert stats[1][1] == b"spin"
    assert other.raw("FUNCTION", "KILL") == b"+OK\r\n"
    assert runner.read_raw().startswith(b"-ERR Script killed by user")
    assert srv.alive()


def test_shutdown_nosave_stops_a_busy_script(server_factory):
    srv = server_factory("latch", "--busy-reply-threshold", "50")
    runner, other = srv.conn(), srv.conn()
    runner.send(lt.encode("EVAL", "redis.call('set', 'x', 1) while true do end", "0"))
    wait_busy(other)
    assert other.raw("SHUTDOWN") == BUSY_EVAL
    other.send(lt.encode("SHUTDOWN", "NOSAVE"))
    srv.proc.wait(timeout=10)
    assert srv.proc.returncode == 0


def test_writes_of_a_script_are_one_unit_in_the_log_and_libraries_persist(tmp_path):
    workdir = str(tmp_path)
    srv = lt.start_latch(workdir, "--appendonly", "yes", "--appendfsync", "always")
    lib = ("#!lua name=locks\nredis.register_function('release', function(keys, args) "
           "if redis.call('get', keys[1]) == args[1] then return redis.call('del', keys[1]) end "
           "return 0 end)")
    try:
        with srv.conn() as c:
            assert c.cmd("EVAL", "redis.call('set', 'a', '1') redis.call('set', 'b', '2') "
                         "return 1", "0") == 1
            assert c.cmd("FUNCTION", "LOAD", lib) == b"locks"
            assert c.cmd("SET", "held", "tok") == b"OK"
        with open(os.path.join(workdir, "latch-data", "latch.aof"), "rb") as f:
            log = f.read()
        unit = (lt.encode("MULTI") + lt.encode("SET", "a", "1") + lt.encode("SET", "b", "2") +
                lt.encode("EXEC"))
        assert unit in log
        assert lt.encode("FUNCTION", "LOAD", "REPLACE", lib) in log
        assert b"EVAL" not in log
    finally:
        srv.stop()
    # Restart: the keys and the library come back (replay runs no script).
    srv = lt.start_latch(workdir, "--appendonly", "yes")
    try:
        with srv.conn() as c:
            assert c.cmd("MGET", "a", "b") == [b"1", b"2"]
            assert c.cmd("FCALL", "release", "1", "held", "tok") == 1
            # A rewrite keeps the library.
            assert c.cmd("BGREWRITEAOF").startswith(b"Background")
            assert lt.wait_for(lambda: lt.info_fields(c.cmd("INFO", "persistence"))
                               ["aof_rewrite_in_progress"] == "0", 10)
            time.sleep(0.2)
    finally:
        srv.stop()
    srv = lt.start_latch(workdir, "--appendonly", "yes")
    try:
        with srv.conn() as c:
            listed = lt.parse_reply(c.raw("FUNCTION", "LIST"))[0]
            assert len(listed) == 1 and listed[0][1] == b"locks"
    finally:
        srv.stop()


def test_exec_waits_for_a_busy_script_as_in_redis(server_factory):
    """EXEC is not among the commands a busy script lets through (Redis 7.0:
    MULTI, DISCARD and WATCH are allow-busy, EXEC is not): a transaction
    queued before the script may not run in the middle of it — its SET
    would break the script's atomicity, its SCRIPT FLUSH would close the
    running script's Lua state. EXEC is refused as the whole transaction,
    with Redis's texts, and the server goes on."""
    replies = {}
    for kind in ("latch", "redis"):
        srv = server_factory(kind, "--busy-reply-threshold", "50")
        runner, queued, other = srv.conn(), srv.conn(), srv.conn()
        got = [queued.raw("MULTI"), queued.raw("SET", "lk", "x"), queued.raw("SCRIPT", "FLUSH")]
        runner.send(lt.encode("EVAL", "while true do end", "0"))
        wait_busy(other)
        got.append(queued.raw("EXEC"))
        got.append(other.raw("SCRIPT", "KILL"))
        got.append(runner.read_raw().split(b"\r\n")[0][:40])
        got += [queued.raw("EXEC"), queued.raw("GET", "lk"), queued.raw("PING")]
        replies[kind] = got
    assert replies["latch"] == replies["redis"], replies
    assert replies["latch"][3].startswith(b"-EXECABORT Transaction discarded because of: BUSY")
