"""Attacks on the safety promises that found latch behaving as promised (see
test_attacks.py for those that broke it, now fixed): kept as regression
tests."""

import os
import time

import latchtest as lt
from durable import Node, quarantined, wait_until

DEBUG = ("--enable-debug-command", "yes")
INT64_MAX = 9223372036854775807


def test_weakening_appendfsync_with_a_working_state_record_quarantines(tmp_path):
    # Break 1 without the state-write fault: the record says fsync-always no
    # before the pipelined grant's reply leaves.
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    assert node.cmd("SET", "warm", "w", "NX", "PX", 120000) == b"OK"
    c = node.conn()
    c.send(lt.encode("SET", "lock", "A", "NX", "PX", 60000) +
           lt.encode("CONFIG", "SET", "appendfsync", "no"))
    assert c.read(timeout=5) == b"OK" and c.read(timeout=5) == b"OK"
    c.close()
    node.power_loss()
    node.start()
    q, remaining, info = quarantined(node)
    assert q and remaining > 50000, info
    node.stop()


def test_a_version_1_state_record_is_treated_as_damaged(tmp_path):
    # Upgrade from 1cc9311: its latch.state is "latch-state 1". Safe, but
    # without quarantine-ms / max-lock-ttl the node waits for an operator.
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
    node.stop()
    with open(os.path.join(node.data, "latch.state"), "w") as f:
        f.write("latch-state 1\nstatus clean\n")
    node.start()
    q, remaining, info = quarantined(node)
    assert q and remaining == -1 and "damaged" in info["quarantine_reason"], info
    node.stop()


def test_empty_state_and_leftover_tmp_quarantine(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "everysec", "--quarantine-ms", 30000,
                *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
    node.stop()
    open(os.path.join(node.data, "latch.state"), "w").close()
    with open(os.path.join(node.data, "latch.state.tmp"), "w") as f:
        f.write("garbage")
    node.start()
    q, remaining, info = quarantined(node)
    assert q and remaining > 20000, info
    node.stop()


def test_bgrewriteaof_first_in_multi_then_grants_keeps_everything(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    with node.conn() as c:
        assert c.cmd("SET", "before", "x", "PX", 600000) == b"OK"
        assert c.cmd("MULTI") == b"OK"
        for cmd in (("BGREWRITEAOF",), ("SET", "l1", "A", "NX", "PX", 600000),
                    ("SET", "l2", "A", "NX", "PX", 600000)):
            assert c.cmd(*cmd) == b"QUEUED"
        r = c.cmd("EXEC")
        assert r[1] == b"OK" and r[2] == b"OK", r
    assert wait_until(lambda: node.info("persistence")["aof_rewrite_in_progress"] == "0", 10)
    node.kill9()
    node.start()
    assert [node.cmd("GET", k) for k in ("before", "l1", "l2")] == [b"x", b"A", b"A"]
    assert not quarantined(node)[0]
    node.stop()


def test_pipelined_grants_behind_a_failed_log_write_are_not_acknowledged(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "everysec", *DEBUG).start()
    with node.conn() as admin:
        assert admin.cmd("DEBUG", "FAULT-IO", "log-write", "EIO") == b"OK"
    c = node.conn()
    c.send(lt.encode("SET", "lock", "A", "NX", "PX", 60000) + lt.encode("GET", "lock") +
           lt.encode("PING"))
    try:
        got = c.read_raw(timeout=1.0)
    except TimeoutError:
        got = b""
    assert got == b"", got
    c.close()
    node.power_loss()
    node.start()
    assert node.cmd("GET", "lock") is None
    node.stop()


def test_far_future_pexpireat_then_another_clock_quarantines_without_overflow(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "everysec", *DEBUG).start()
    assert node.cmd("SET", "lock", "A") == b"OK"
    assert node.cmd("PEXPIREAT", "lock", INT64_MAX) == 1
    node.stop()
    node.start("--debug-clock-id", "elsewhere")
    q, remaining, info = quarantined(node)
    assert q and remaining > 10 ** 15, info
    node.stop()


def test_crash_during_quarantine_then_wall_step_and_clock_change_keeps_it(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "no", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
    node.power_loss()
    node.start()
    assert quarantined(node)[0]
    node.kill9()
    node.start("--debug-clock-id", "other", "--debug-wall-offset-ms", 7200 * 1000)
    q, remaining, info = quarantined(node)
    assert q and remaining > 50000, info
    assert node.cmd("SET", "lock", "B", "NX", "PX", 1000) != b"OK"
    node.stop()
