"""latch's own side of issue 15's commands: what only a real server with real
time and a real log can show.

  * WAITAOF answers from the log's fsync state under each appendfsync
    policy, parks the client until the fsync covers its writes (or the
    timeout passes), and lets its pipelined requests go on afterwards.
  * SLOWLOG and LATENCY record commands that really were slow, and nothing
    when switched off; command timing stops when no one uses it.
  * INFO errorstats counts protocol errors and latch's own error codes.

The byte-for-byte comparisons with Redis are in test_differential_server.py.
"""

import os
import re
import time

import pytest

import latchtest as lt
from latchtest import encode


def fields(conn, *sections):
    return lt.info_fields(conn.cmd("INFO", *sections))


# ---------------------------------------------------------------- WAITAOF


def test_waitaof_under_appendfsync_always_answers_at_once(server_factory):
    srv = server_factory("latch", "--appendonly", "yes", "--appendfsync", "always")
    with srv.conn() as c:
        # A client that wrote nothing has nothing to wait for.
        assert c.cmd("WAITAOF", "1", "0", "0") == [1, 0]
        assert c.cmd("SET", "lock", "t", "NX", "PX", "30000") == b"OK"
        start = time.monotonic()
        assert c.cmd("WAITAOF", "1", "0", "0") == [1, 0]
        assert c.cmd("WAITAOF", "0", "0", "0") == [1, 0]
        assert time.monotonic() - start < 0.5


def test_waitaof_under_everysec_waits_for_the_background_fsync(server_factory):
    srv = server_factory("latch", "--appendonly", "yes", "--appendfsync", "everysec")
    with srv.conn() as c:
        for i in range(3):
            assert c.cmd("INCR", "fence") == i + 1
            start = time.monotonic()
            # Without a timeout: answered once the once-a-second fsync covers
            # the INCR, not before it ran, and well within two seconds.
            assert c.cmd("WAITAOF", "1", "0", "0") == [1, 0]
            assert time.monotonic() - start < 2.5
        # Asking with numlocal 0 does not wait for the disk.
        assert c.cmd("INCR", "fence") == 4
        assert c.cmd("WAITAOF", "0", "0", "0")[1] == 0


def test_waitaof_under_appendfsync_no_times_out(server_factory):
    """appendfsync no never fsyncs: the truthful answer is 0, at the timeout."""
    srv = server_factory("latch", "--appendonly", "yes", "--appendfsync", "no")
    with srv.conn() as c:
        assert c.cmd("SET", "k", "v") == b"OK"
        start = time.monotonic()
        assert c.cmd("WAITAOF", "1", "0", "300") == [0, 0]
        elapsed = time.monotonic() - start
        assert 0.29 <= elapsed < 2.0
        assert c.cmd("WAITAOF", "0", "0", "0") == [0, 0]


def test_waitaof_for_replicas_waits_out_its_timeout(server_factory):
    """No replica ever acknowledges: numreplicas > 0 waits for the timeout
    (as Redis does without replicas), and still says whether the local fsync
    happened."""
    srv = server_factory("latch", "--appendonly", "yes", "--appendfsync", "always")
    with srv.conn() as c:
        assert c.cmd("SET", "k", "v") == b"OK"
        start = time.monotonic()
        assert c.cmd("WAITAOF", "1", "1", "250") == [1, 0]
        assert 0.24 <= time.monotonic() - start < 2.0
        # Inside MULTI nothing may block: the answer is at once.
        assert c.cmd("MULTI") == b"OK"
        assert c.cmd("WAITAOF", "1", "2", "0") == b"QUEUED"
        start = time.monotonic()
        assert c.cmd("EXEC") == [[1, 0]]
        assert time.monotonic() - start < 0.5


def test_a_parked_client_goes_on_with_its_pipeline(server_factory):
    srv = server_factory("latch", "--appendonly", "yes", "--appendfsync", "no")
    with srv.conn() as c, srv.conn() as other:
        c.send(encode("SET", "k", "1") + encode("WAITAOF", "1", "0", "400") +
               encode("INCR", "k") + encode("GET", "k") + encode("PING"))
        time.sleep(0.15)
        # Parked: INFO and CLIENT LIST say so, and others are served.
        assert fields(other, "clients")["blocked_clients"] == "1"
        listing = other.cmd("CLIENT", "LIST").decode()
        assert re.search(r" flags=b .*cmd=waitaof ", listing), listing
        assert other.cmd("GET", "k") == b"1"  # the INCR has not run yet
        replies = [c.read() for _ in range(5)]
        assert replies == [b"OK", [0, 0], 2, b"2", b"PONG"]
        assert fields(other, "clients")["blocked_clients"] == "0"


def test_a_parked_client_that_disconnects_is_forgotten(server_factory):
    srv = server_factory("latch", "--appendonly", "yes", "--appendfsync", "no")
    c = srv.conn()
    c.send(encode("SET", "k", "1") + encode("WAITAOF", "1", "0", "0"))
    assert c.read() == b"OK"
    with srv.conn() as other:
        assert lt.wait_for(lambda: fields(other, "clients")["blocked_clients"] == "1", 2)
        c.close()
        assert lt.wait_for(lambda: fields(other, "clients")["blocked_clients"] == "0", 2)
        assert other.cmd("PING") == b"PONG"
    assert srv.alive()


def test_waitaof_with_client_reply_off_answers_nothing(server_factory):
    srv = server_factory("latch", "--appendonly", "yes", "--appendfsync", "no")
    with srv.conn() as c:
        c.send(encode("CLIENT", "REPLY", "OFF") + encode("SET", "k", "1") +
               encode("WAITAOF", "1", "0", "200") + encode("CLIENT", "REPLY", "ON") +
               encode("PING"))
        assert c.read() == b"OK"  # CLIENT REPLY ON's
        assert c.read() == b"PONG"


def test_waitaof_without_the_log(latch):
    # appendonly no (the fixture): Redis 7.2's error for numlocal, and 0.
    assert latch.raw("WAITAOF", "1", "0", "0") == \
        b"-ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.\r\n"
    assert latch.cmd("WAITAOF", "0", "0", "0") == [0, 0]
    start = time.monotonic()
    assert latch.cmd("WAITAOF", "0", "1", "150") == [0, 0]
    assert time.monotonic() - start >= 0.14


@pytest.mark.parametrize("args,error", [
    (("2", "0", "0"), "ERR value is out of range, value must between 0 and 1"),
    (("-1", "0", "0"), "ERR value is out of range, value must between 0 and 1"),
    (("a", "0", "0"), "ERR value is not an integer or out of range"),
    (("0", "-1", "0"), "ERR value is out of range, must be positive"),
    (("0", "a", "0"), "ERR value is out of range, must be positive"),
    (("0", "0", "-1"), "ERR timeout is negative"),
    (("0", "0", "a"), "ERR timeout is not an integer or out of range"),
    (("0", "0", "9223372036854775807"), "ERR timeout is out of range"),
    (("0", "0"), "ERR wrong number of arguments for 'waitaof' command"),
])
def test_waitaof_errors(latch, args, error):
    """Redis 7.2's WAITAOF errors (Redis 7.0 has no WAITAOF to compare with)."""
    assert latch.raw("WAITAOF", *args) == b"-" + error.encode() + b"\r\n"


# ---------------------------------------------------------------- SLOWLOG, LATENCY


@pytest.fixture
def debug_latch(server_factory):
    return server_factory("latch", "--enable-debug-command", "yes")


def test_slowlog_records_what_was_slow(debug_latch):
    with debug_latch.conn() as c:
        assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "50000") == b"OK"
        assert c.cmd("SLOWLOG", "RESET") == b"OK"
        assert c.cmd("CLIENT", "SETNAME", "sleeper") == b"OK"
        assert c.cmd("PING") == b"PONG"
        assert c.cmd("DEBUG", "SLEEP", "0.12") == b"OK"
        assert c.cmd("SLOWLOG", "LEN") == 1
        [entry] = c.cmd("SLOWLOG", "GET")
        assert entry[3] == [b"DEBUG", b"SLEEP", b"0.12"]
        assert 120000 <= entry[2] < 2000000
        assert abs(entry[1] - time.time()) < 5
        assert entry[5] == b"sleeper"
        # Inside EXEC each command is its own entry; EXEC is never one.
        assert c.cmd("MULTI") == b"OK"
        assert c.cmd("DEBUG", "SLEEP", "0.06") == b"QUEUED"
        assert c.cmd("EXEC") == [b"OK"]
        log = c.cmd("SLOWLOG", "GET")
        assert [e[3][0] for e in log] == [b"DEBUG", b"DEBUG"]
        # Off: nothing more.
        assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "-1") == b"OK"
        assert c.cmd("DEBUG", "SLEEP", "0.06") == b"OK"
        assert c.cmd("SLOWLOG", "LEN") == 2


def test_latency_monitor_records_spikes(debug_latch):
    with debug_latch.conn() as c:
        assert c.cmd("LATENCY", "LATEST") == []
        assert b"disabled" in c.cmd("LATENCY", "DOCTOR")
        assert c.cmd("CONFIG", "SET", "latency-monitor-threshold", "50") == b"OK"
        assert b"No latency spike" in c.cmd("LATENCY", "DOCTOR")
        assert c.cmd("DEBUG", "SLEEP", "0.1") == b"OK"
        [[event, when, latest, worst]] = c.cmd("LATENCY", "LATEST")
        assert event == b"command"
        assert abs(when - time.time()) < 5 and 100 <= latest <= worst < 2000
        history = c.cmd("LATENCY", "HISTORY", "command")
        assert history == [[when, latest]]
        time.sleep(1.05)
        assert c.cmd("DEBUG", "SLEEP", "0.06") == b"OK"  # a second sample, a second later
        history = c.cmd("LATENCY", "HISTORY", "command")
        assert len(history) == 2 and history[1][0] > history[0][0] and history[1][1] >= 60
        graph = c.cmd("LATENCY", "GRAPH", "command").decode()
        assert graph.startswith("command - high %d ms, low " % max(h[1] for h in history))
        assert "-" * 80 in graph and "#" in graph
        doctor = c.cmd("LATENCY", "DOCTOR").decode()
        assert "1. command: 2 latency spikes" in doctor and "SLOWLOG" in doctor
        # A fast command's spike is its own event class.
        assert c.cmd("CONFIG", "SET", "latency-monitor-threshold", "1") == b"OK"
        assert c.cmd("LATENCY", "RESET", "command", "nosuch") == 1
        assert c.cmd("LATENCY", "LATEST") == [] or all(
            e[0] != b"command" for e in c.cmd("LATENCY", "LATEST"))
        assert c.cmd("LATENCY", "RESET") >= 0
        assert c.cmd("CONFIG", "SET", "latency-monitor-threshold", "0") == b"OK"


def test_expiry_cycles_that_take_long_are_latency_events(server_factory):
    """Many leases ending at once make the active expiry cycle work for a
    while: the latency monitor's "expire-cycle" event."""
    srv = server_factory("latch")
    with srv.conn() as c:
        assert c.cmd("CONFIG", "SET", "latency-monitor-threshold", "1") == b"OK"
        n = 200000
        batch = 20000
        for start in range(0, n, batch):
            c.send(b"".join(encode("SET", "lease:%d" % i, "t", "PX", "300")
                            for i in range(start, start + batch)))
            c.read_n_raw(batch, timeout=30)
        events = lt.wait_for(lambda: [e[0] for e in c.cmd("LATENCY", "LATEST")], 10)
        assert lt.wait_for(lambda: c.cmd("DBSIZE") == 0, 20)
        events = [e[0] for e in c.cmd("LATENCY", "LATEST")]
        assert b"expire-cycle" in events, events


def test_timing_stops_when_nothing_uses_it(debug_latch):
    """With the slow log, the latency monitor and latency-tracking all off,
    commands are not timed (no clock read): commandstats counts calls but
    no time, and no histogram grows."""
    with debug_latch.conn() as c:
        assert c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "-1",
                     "latency-monitor-threshold", "0", "latency-tracking", "no") == b"OK"
        assert c.cmd("CONFIG", "RESETSTAT") == b"OK"
        assert c.cmd("DEBUG", "SLEEP", "0.05") == b"OK"
        stat = fields(c, "commandstats")["cmdstat_debug"]
        assert stat.startswith("calls=1,usec=0,usec_per_call=0.00,"), stat
        assert c.cmd("LATENCY", "HISTOGRAM", "debug") == []
        assert "latency_percentiles_usec_debug" not in fields(c, "latencystats")
        # One consumer back on: timed again.
        assert c.cmd("CONFIG", "SET", "latency-tracking", "yes") == b"OK"
        assert c.cmd("DEBUG", "SLEEP", "0.05") == b"OK"
        stat = dict(kv.split("=") for kv in fields(c, "commandstats")["cmdstat_debug"].split(","))
        assert stat["calls"] == "2" and int(stat["usec"]) >= 50000
        hist = lt.pairs_to_dict(c.cmd("LATENCY", "HISTOGRAM", "debug"))
        assert lt.pairs_to_dict(hist[b"debug"])[b"calls"] == 1
        p50 = fields(c, "latencystats")["latency_percentiles_usec_debug"]
        assert float(re.match(r"p50=([\d.]+)", p50).group(1)) >= 50000


# ---------------------------------------------------------------- errorstats


def test_errorstats_count_each_code(server_factory):
    srv = server_factory("latch", "--requirepass", "pw")
    with srv.conn() as c:
        # (The start-up check's PING was answered NOAUTH: start counting now.)
        assert c.cmd("AUTH", "pw") == b"OK"
        assert c.cmd("CONFIG", "RESETSTAT") == b"OK"
        with srv.conn() as newcomer:
            assert newcomer.raw("GET", "k") == b"-NOAUTH Authentication required.\r\n"
            assert newcomer.raw("AUTH", "bad").startswith(b"-WRONGPASS")
        assert c.raw("EVALSHA", "a" * 40, "0").startswith(b"-NOSCRIPT")
        assert c.raw("SET", "k", "v", "NX", "XX") == b"-ERR syntax error\r\n"
        assert c.raw("HELLO", "4").startswith(b"-NOPROTO")
        # A protocol error is counted too (its connection then closes).
        with srv.conn() as bad:
            assert bad.cmd("AUTH", "pw") == b"OK"
            bad.send(b"*1\r\n$x\r\n")
            assert bad.read_until_close().startswith(b"-ERR Protocol error")
        f = fields(c, "errorstats", "stats")
        assert f["errorstat_NOAUTH"] == "count=1"
        assert f["errorstat_WRONGPASS"] == "count=1"
        assert f["errorstat_NOSCRIPT"] == "count=1"
        assert f["errorstat_NOPROTO"] == "count=1"
        assert f["errorstat_ERR"] == "count=2"
        assert f["total_error_replies"] == "6"
        cmd = fields(c, "commandstats")
        assert "rejected_calls=1" in cmd["cmdstat_get"]  # the NOAUTH
        assert "failed_calls=1" in cmd["cmdstat_set"]
        assert c.cmd("CONFIG", "RESETSTAT") == b"OK"
        assert not any(k.startswith("errorstat_") for k in fields(c, "errorstats"))


# ---------------------------------------------------------------- memory


@pytest.mark.skipif(bool(os.environ.get("LATCH_SANITIZED")),
                    reason="under a sanitizer's allocator used_memory is an estimate "
                    "(server/used_memory.h): the buffers this test is about are not in it; "
                    "the default build's pass runs it")
def test_a_large_write_does_not_keep_its_size_allocated(server_factory):
    # (Review 34: the log writer's batch kept the capacity of the largest
    # batch it ever held, and the replay's reader the size of the largest
    # record: a 100 MB SET, deleted, left ~100 MB in used_memory for good,
    # and maxmemory then refused writes to an empty database.)
    srv = server_factory("latch", "--appendonly", "yes")
    value = "x" * (64 << 20)
    with srv.conn(timeout=30) as c:
        before = int(fields(c, "memory")["used_memory"])
        assert c.cmd("SET", "big", value) == b"OK"
        assert c.cmd("DEL", "big") == 1
        assert int(fields(c, "memory")["used_memory"]) - before < 8 << 20
        assert c.cmd("SET", "big", value) == b"OK"
    # Replayed at the next start: the reader's buffer goes with the replay.
    srv.stop()
    srv.start()
    with srv.conn(timeout=30) as c:
        assert c.cmd("DEL", "big") == 1
        assert int(fields(c, "memory")["used_memory"]) < 16 << 20
