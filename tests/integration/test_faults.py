"""FAULT, the test bench's fault injection (server/faults.h): each fault's
effect, measured against a real node, plus the switch that keeps it off
and the history file (server/history.h).
"""

import json
import os
import socket
import time

import pytest

import latchtest as lt

FAULTY = ("--enable-fault-injection", "yes")


@pytest.fixture
def node(server_factory):
    srv = server_factory("latch", *FAULTY)
    yield srv


def test_refused_unless_enabled(server_factory):
    srv = server_factory("latch")
    with srv.conn() as c:
        for args in (("CLOCK", "RATE", "2"), ("DELAY", "10"), ("LIST",), ("CLEAR",)):
            r = c.cmd("FAULT", *args)
            assert isinstance(r, lt.RespError) and b"enable-fault-injection yes" in r.text, r
        # It is a start-up option only.
        r = c.cmd("CONFIG", "SET", "enable-fault-injection", "yes")
        assert isinstance(r, lt.RespError)
        assert c.cmd("CONFIG", "GET", "enable-fault-injection") == [b"enable-fault-injection", b"no"]
        # HELP works anyway, and COMMAND DOCS describes the family.
        assert any(b"CLOCK RATE" in line for line in c.cmd("FAULT", "HELP"))
        docs = lt.pairs_to_dict(c.cmd("COMMAND", "DOCS", "fault")[1])
        subs = lt.pairs_to_dict(docs[b"subcommands"])
        assert set(subs) >= {b"fault|clock", b"fault|delay", b"fault|drop", b"fault|partition",
                             b"fault|list", b"fault|clear", b"fault|wallclock"}
        assert "faults_active" not in lt.info_fields(c.cmd("INFO"))


def test_clock_rate_2_ends_a_2s_lease_after_about_1s(node):
    with node.conn() as c:
        assert c.cmd("FAULT", "CLOCK", "RATE", "2") == b"OK"
        t0 = time.monotonic()
        assert c.cmd("SET", "lock", "tok", "PX", "2000", "NX") == b"OK"
        assert lt.wait_for(lambda: c.cmd("EXISTS", "lock") == 0, 3.0, 0.01)
        gone = time.monotonic() - t0
        assert 0.9 <= gone <= 1.3, gone
        # PTTL counts on the node's clock: it falls twice as fast.
        c.cmd("SET", "k", "v", "PX", "10000")
        p1 = c.cmd("PTTL", "k")
        time.sleep(0.5)
        fell = p1 - c.cmd("PTTL", "k")
        assert 850 <= fell <= 1300, fell
        info = lt.info_fields(c.cmd("INFO", "faults"))
        assert info["fault_clock_rate"] == "2" and info["fault_clock_warped"] == "1"
        assert c.cmd("FAULT", "CLEAR") == b"OK"
        assert lt.info_fields(c.cmd("INFO", "faults"))["fault_clock_rate"] == "1"


def test_clock_jump_expires_leases_without_waiting(node):
    with node.conn() as c:
        c.cmd("SET", "short", "a", "PX", "5000")
        c.cmd("SET", "long", "b", "PX", "60000")
        t0 = time.monotonic()
        assert c.cmd("FAULT", "CLOCK", "JUMP", "10000") == b"OK"
        assert c.cmd("EXISTS", "short") == 0
        assert 49000 <= c.cmd("PTTL", "long") <= 50000
        assert time.monotonic() - t0 < 0.5
        r = c.cmd("FAULT", "CLOCK", "JUMP", "-1")
        assert isinstance(r, lt.RespError) and b"only jumps forward" in r.text
        assert lt.info_fields(c.cmd("INFO", "faults"))["fault_clock_jumped_ms"] == "10000"


def test_wallclock_offset_shifts_time_and_exat_not_px(node):
    with node.conn() as c:
        real = time.time()
        assert c.cmd("FAULT", "WALLCLOCK", "OFFSET", "100000") == b"OK"
        secs = int(c.cmd("TIME")[0])
        assert 99 <= secs - real <= 102
        # A PX lease does not notice the wall clock.
        c.cmd("SET", "px", "v", "PX", "5000")
        assert 4800 <= c.cmd("PTTL", "px") <= 5000
        # PXAT is read on the node's (shifted) wall clock: a real "now + 5 s"
        # is 95 s in its past, its own "now + 5 s" is 5 s ahead.
        now_ms = int(real * 1000)
        c.cmd("SET", "real", "v", "PXAT", str(now_ms + 5000))
        assert c.cmd("EXISTS", "real") == 0
        c.cmd("SET", "shifted", "v", "PXAT", str(now_ms + 100000 + 5000))
        assert 4000 <= c.cmd("PTTL", "shifted") <= 5000
        c.cmd("SET", "exat", "v", "EXAT", str(secs + 5))
        assert 3000 <= c.cmd("PTTL", "exat") <= 5000
        assert c.cmd("FAULT", "CLEAR") == b"OK"
        assert abs(int(c.cmd("TIME")[0]) - time.time()) <= 1


def test_delay_300_reply_arrives_no_sooner_than_300ms(node):
    with node.conn() as c, node.conn() as other:
        fid = c.cmd("FAULT", "DELAY", "300", "COMMAND", "set")
        assert isinstance(fid, int)
        t0 = time.monotonic()
        assert c.cmd("SET", "k", "v") == b"OK"
        took = time.monotonic() - t0
        assert 0.3 <= took < 0.6, took
        # Other commands are not delayed; the write itself happened at once.
        t0 = time.monotonic()
        assert other.cmd("GET", "k") == b"v"
        assert time.monotonic() - t0 < 0.2
        # Pipelined: a reply after a delayed one waits behind it, in order.
        c.send(lt.encode("SET", "a", "1") + lt.encode("GET", "a"))
        t0 = time.monotonic()
        assert c.read() == b"OK" and c.read() == b"1"
        assert time.monotonic() - t0 >= 0.29
        assert any(b"kind=delay ms=300" in line for line in c.cmd("FAULT", "LIST"))
        assert c.cmd("FAULT", "CLEAR", str(fid)) == b"OK"
        t0 = time.monotonic()
        c.cmd("SET", "k", "v")
        assert time.monotonic() - t0 < 0.2


def test_delay_by_client_name_and_count(node):
    with node.conn() as c, node.conn() as slow:
        assert slow.cmd("CLIENT", "SETNAME", "slowpoke") == b"OK"
        c.cmd("FAULT", "DELAY", "250", "CLIENT", "slowpoke", "COUNT", "1")
        t0 = time.monotonic()
        slow.cmd("PING")
        assert time.monotonic() - t0 >= 0.25
        t0 = time.monotonic()
        c.cmd("PING")
        slow.cmd("PING")  # the one hit was used up
        assert time.monotonic() - t0 < 0.2
        assert c.cmd("FAULT", "LIST") == []


def test_drop_runs_the_command_closes_without_reply(node):
    with node.conn() as c:
        c.cmd("FAULT", "DROP", "COMMAND", "set", "COUNT", "1")
    with node.conn() as victim:
        victim.send(lt.encode("SET", "lock", "tok", "NX", "PX", "5000"))
        assert victim.read_until_close(timeout=3) == b""
    with node.conn() as c:
        # The lock was taken all the same: the client cannot know it has it.
        assert c.cmd("GET", "lock") == b"tok"
        assert 3000 < c.cmd("PTTL", "lock") <= 5000
        info = lt.info_fields(c.cmd("INFO", "faults"))
        assert info["fault_hits"] == "1" and info["faults_active"] == "0"


def test_drop_probability_is_partial(node):
    with node.conn() as c:
        c.cmd("FAULT", "DROP", "COMMAND", "set", "PROBABILITY", "0.5")
    dropped = 0
    for i in range(40):
        with node.conn() as x:
            x.send(lt.encode("SET", "n%d" % i, "v"))
            try:
                x.read(timeout=2)
            except ConnectionError:
                dropped += 1
    assert 5 <= dropped <= 35, dropped
    with node.conn() as c:
        assert c.cmd("EXISTS", *["n%d" % i for i in range(40)]) == 40  # every one ran


def test_partition_refuses_that_client(node):
    with node.conn() as ctl, node.conn() as a, node.conn() as b:
        assert a.cmd("CLIENT", "SETNAME", "alice") == b"OK"
        assert b.cmd("CLIENT", "SETNAME", "bob") == b"OK"
        assert isinstance(ctl.cmd("FAULT", "PARTITION", "alice"), int)
        # alice's open connection is closed; bob is untouched.
        assert a.read_until_close(timeout=3) == b""
        assert b.cmd("PING") == b"PONG"
        # A new connection that names itself alice is closed at once.
        with node.conn() as again:
            again.send(lt.encode("CLIENT", "SETNAME", "alice") + lt.encode("SET", "x", "1"))
            assert again.read_until_close(timeout=3) == b""
        assert ctl.cmd("EXISTS", "x") == 0
        assert ctl.cmd("FAULT", "CLEAR") == b"OK"
        with node.conn() as again:
            assert again.cmd("CLIENT", "SETNAME", "alice") == b"OK"
            assert again.cmd("PING") == b"PONG"


def test_partition_stall_holds_requests_until_cleared(node):
    with node.conn() as ctl, node.conn() as a:
        assert a.cmd("CLIENT", "SETNAME", "carol") == b"OK"
        ctl.cmd("FAULT", "PARTITION", "carol", "STALL")
        a.send(lt.encode("SET", "stalled", "1"))
        with pytest.raises(TimeoutError):
            a.read(timeout=0.4)
        assert ctl.cmd("EXISTS", "stalled") == 0  # not even read
        ctl.cmd("FAULT", "CLEAR")
        assert a.read(timeout=3) == b"OK"
        assert ctl.cmd("GET", "stalled") == b"1"


def test_faults_are_logged_and_restart_clears_them(tmp_path):
    workdir = str(tmp_path)
    srv = lt.start_latch(workdir, "--appendonly", "yes", "--quarantine", "auto", *FAULTY)
    with srv.conn() as c:
        c.cmd("SET", "lease", "v", "PX", "1500")
        c.cmd("FAULT", "CLOCK", "RATE", "0.5")
        c.cmd("FAULT", "DELAY", "50")
    assert "FAULT CLOCK RATE 0.5" in srv.log_text()
    srv.stop()
    # Faults live in memory: the next run has none. The warped run's times
    # name another clock, so the restart does not trust them: quarantined
    # until the horizon rather than serving a lease that a slow clock kept.
    srv = lt.start_latch(workdir, "--appendonly", "yes", "--quarantine", "auto", *FAULTY)
    try:
        with srv.conn() as c:
            assert c.cmd("FAULT", "LIST") == []
            info = lt.info_fields(c.cmd("INFO", "latch"))
            assert info["quarantine"] == "1", info
            assert "clock" in info["quarantine_reason"], info["quarantine_reason"]
    finally:
        srv.stop()


def test_history_records_grants_renewals_releases_expiries(tmp_path, server_factory):
    srv = server_factory("latch", *FAULTY, "--history-file", "history.jsonl")
    with srv.conn() as c:
        c.cmd("SET", "k", "tokA", "NX", "PX", "5000")
        c.cmd("PEXPIRE", "k", "8000")
        c.cmd("DELIFEQ", "k", "tokA")
        c.cmd("SET", "e", "tokB", "PX", "50")
        time.sleep(0.2)
        assert c.cmd("GET", "e") is None
        c.cmd("FAULT", "CLOCK", "JUMP", "1")
    path = os.path.join(srv.workdir, "latch-data", "history.jsonl")
    lines = [json.loads(line) for line in open(path)]
    evs = [(d["ev"], d.get("key"), d.get("value")) for d in lines]
    assert evs[0][0] == "start"
    assert ("grant", "k", "tokA") in evs and ("renew", "k", "tokA") in evs
    assert ("release", "k", "tokA") in evs and ("expire", "e", "tokB") in evs
    grant = next(d for d in lines if d["ev"] == "grant" and d["key"] == "k")
    renew = next(d for d in lines if d["ev"] == "renew")
    assert 4900 <= grant["ttl_ms"] <= 5000 and 7900 <= renew["ttl_ms"] <= 8000
    assert lines[-1]["ev"] == "fault" and lines[-1]["fault"] == "CLOCK JUMP 1"
    assert abs(grant["t"] / 1000 - time.time()) < 30
    assert all(d["node"] == "127.0.0.1:%d" % srv.port for d in lines)
