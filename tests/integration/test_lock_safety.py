"""Lock safety under real operations: the ways a node could grant a lock that
another client may still hold, or lose an acknowledged write (issue 14). Each
test is one scenario an operator can walk into; each failed on 1cc9311.

A node is a real latch-server with a data directory, killed, power-cut,
stopped and restarted between steps (durable.Node). Faults come from the
server's test switches (--enable-debug-command): DEBUG POWERLOSS, DEBUG
FAULT-IO (disk errors and slow disks), DEBUG WALLCLOCK and the start-up
options --debug-wall-offset-ms and --debug-clock-id (a clock step, another
boot or host)."""

import os
import shutil
import subprocess
import threading
import time

import pytest

import latchtest as lt
from durable import Node, is_quarantine_error, quarantined, wait_until

DEBUG = ("--enable-debug-command", "yes")


def crashed_everysec_node(tmp_path, *args, ttl=60000):
    """A node that granted `lock` to A (PX ttl) under everysec and then lost
    power: it restarts quarantined."""
    node = Node(str(tmp_path), "--appendfsync", "everysec", *DEBUG, *args).start()
    # A slow disk: the grant's fsync has not completed when the power goes.
    assert node.cmd("DEBUG", "FAULT-IO", "log-fsync", 5000) == b"OK"
    assert node.cmd("SET", "lock", "A", "NX", "PX", ttl) == b"OK"
    node.power_loss()
    node.start()
    q, remaining, info = quarantined(node)
    assert q, info
    return node, remaining


# ---------------------------------------------------------------- 1. laundering


def test_a_clean_restart_does_not_end_a_quarantine(tmp_path):
    node, before = crashed_everysec_node(tmp_path)
    # An upgrade, or systemctl restart, during the quarantine.
    node.stop()
    node.start()
    q, after, info = quarantined(node)
    assert q, info
    assert "still in progress" in info["quarantine_reason"], info
    # The same end as before (the record carries it), give or take the restart.
    assert before - 5000 < after <= before, (before, after)
    assert is_quarantine_error(node.cmd("SET", "other", "B", "NX", "PX", 60000))
    node.stop()


def test_a_crash_of_an_always_run_during_a_quarantine_does_not_end_it(tmp_path):
    node, before = crashed_everysec_node(tmp_path)
    node.stop()
    # The operator switches to appendfsync always, then the process dies.
    node.args += ["--appendfsync", "always"]
    node.start()
    assert quarantined(node)[0]
    node.kill9()
    node.start()
    q, after, info = quarantined(node)
    assert q and after > before - 5000, info
    assert is_quarantine_error(node.cmd("SET", "other", "B", "NX", "PX", 60000))
    node.stop()


def test_a_restart_under_quarantine_never_does_not_end_the_quarantine_for_good(tmp_path):
    node, before = crashed_everysec_node(tmp_path)
    node.stop()
    # An operator restarts the node with the quarantine off for a while…
    node.start("--quarantine", "never")
    assert not quarantined(node)[0]
    node.stop()
    # …and back in the default mode, the forgotten leases are still waited out.
    node.start()
    q, after, info = quarantined(node)
    assert q and after > before - 10000, info
    node.stop()


# ---------------------------------------------------------------- 2. failed log write


def test_a_write_the_log_could_not_take_is_neither_acknowledged_nor_recorded_clean(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "everysec", *DEBUG).start()
    assert node.cmd("SET", "warm", "x") == b"OK"
    with node.conn() as admin:
        assert admin.cmd("DEBUG", "FAULT-IO", "log-write", "ENOSPC") == b"OK"
    c = node.conn()
    c.send(lt.encode("SET", "lock", "A", "NX", "PX", 60000))
    # The disk is full: the reply waits for the log instead of saying OK.
    with pytest.raises(TimeoutError):
        c.read(timeout=1.0)
    assert node.info("persistence")["aof_last_write_status"] == "err"
    # SIGTERM now: the lock's record never reached the log, so the run must
    # not be recorded as a clean shutdown.
    node.srv.stop()
    c.close()
    node.start()
    q, remaining, info = quarantined(node)
    assert q and remaining > 50000, info
    assert is_quarantine_error(node.cmd("SET", "other", "B", "NX", "PX", 60000))
    node.stop()


# ---------------------------------------------------------------- 3. state record


def test_a_state_record_that_cannot_be_written_refuses_grants(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "everysec", *DEBUG).start()
    assert node.cmd("SET", "warm", "x") == b"OK"
    node.stop()  # latch.state: status clean, no lease outstanding
    # The record can no longer be replaced (its temporary file cannot be
    # created: a directory is in the way; root ignores permissions).
    tmp = os.path.join(node.data, "latch.state.tmp")
    os.mkdir(tmp)
    node.start()
    r = node.cmd("SET", "lock", "A", "NX", "PX", 60000)
    assert isinstance(r, lt.RespError) and r.text.startswith(b"MISCONF"), r
    assert node.info("latch")["state_record_status"] == "err"
    # Reads and releases still work.
    assert node.cmd("GET", "warm") == b"x"
    assert node.cmd("DEL", "warm") == 1
    # A power loss now must not find the old "clean" record trusted with a
    # lock granted since: none was.
    node.power_loss()
    os.rmdir(tmp)
    node.start()
    assert node.cmd("GET", "lock") is None
    # Once the record can be written again, grants resume (the cron retries).
    os.mkdir(tmp)
    with node.conn() as c:
        assert c.cmd("DEBUG", "FAULT-IO", "state-write", "EIO") == b"OK"
        r = c.cmd("SET", "lock2", "A", "NX", "PX", 3600000)  # past the horizon: a record write
        assert isinstance(r, lt.RespError) and r.text.startswith(b"MISCONF"), r
        assert c.cmd("DEBUG", "FAULT-IO", "OFF") == b"OK"
    os.rmdir(tmp)
    assert wait_until(lambda: node.cmd("SET", "lock2", "A", "NX", "PX", 3600000) == b"OK", 5)
    assert node.info("latch")["state_record_status"] == "ok"
    node.stop()


# ---------------------------------------------------------------- 4. wall-clock steps


@pytest.mark.parametrize("step_ms", [3600 * 1000, -3600 * 1000])
def test_a_wall_clock_step_before_a_replay_keeps_lock_lifetimes(tmp_path, step_ms):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
    t0 = time.monotonic()
    node.kill9()
    # The wall clock moved while the node was down.
    node.start("--debug-wall-offset-ms", step_ms)
    assert not quarantined(node)[0]
    elapsed = (time.monotonic() - t0) * 1000
    assert node.cmd("GET", "lock") == b"A"  # a forward step did not drop it
    pttl = node.cmd("PTTL", "lock")
    assert 60000 - elapsed - 1000 <= pttl <= 60000, (pttl, elapsed)  # nor lengthen it
    assert node.cmd("SET", "lock", "B", "NX", "PX", 60000) is None
    node.stop()


# ---------------------------------------------------------------- 5. another clock


def test_a_restart_on_another_clock_assumes_no_time_has_passed(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "everysec", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
    node.stop()
    # The volume is attached to another host (or the node rebooted, or runs
    # in another time namespace): its boot clock says nothing of elapsed time.
    node.start("--debug-clock-id", "another-host")
    q, remaining, info = quarantined(node)
    assert q and 50000 < remaining <= 60000 + 30000, info
    assert "another clock" in info["quarantine_reason"]
    assert is_quarantine_error(node.cmd("SET", "other", "B", "NX", "PX", 60000))
    # The lock itself is back, and lives no longer than the quarantine.
    assert node.cmd("GET", "lock") == b"A"
    assert node.cmd("PTTL", "lock") <= remaining + 1000
    node.stop()


# ---------------------------------------------------------------- 6. no cap


def test_without_a_ttl_cap_a_long_lease_is_still_waited_out(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "everysec", "--max-lock-ttl", 0, *DEBUG).start()
    assert node.cmd("DEBUG", "FAULT-IO", "log-fsync", 5000) == b"OK"  # not synced in time
    assert node.cmd("SET", "lock", "A", "NX", "PX", 100000) == b"OK"
    node.power_loss()
    node.start()
    q, remaining, info = quarantined(node)
    # The whole lease, whatever max-lock-ttl says (plus the horizon's margin).
    assert q and 90000 < remaining <= 100000 + 11000, info
    node.stop()


def test_setting_a_cap_does_not_shorten_the_wait_for_longer_leases(tmp_path):
    # No cap at first (the default), a long lease, then a cap: the lease
    # granted before the cap is still that long.
    node = Node(str(tmp_path), "--appendfsync", "everysec", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 100000) == b"OK"
    assert node.cmd("CONFIG", "SET", "max-lock-ttl", 1000) == b"OK"
    # A grant under the cap whose fsync has not completed at the power loss:
    # the lease granted before the cap is still at risk with it (the
    # background has not lowered the bound yet).
    assert node.cmd("DEBUG", "FAULT-IO", "log-fsync", 5000) == b"OK"
    assert node.cmd("SET", "other", "B", "NX", "PX", 1000) == b"OK"
    node.power_loss()
    node.start()
    q, remaining, info = quarantined(node)
    assert q and remaining > 90000, info
    node.stop()


# ---------------------------------------------------------------- 7. rewrite in MULTI


def test_bgrewriteaof_inside_multi_keeps_the_log_whole(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    with node.conn() as c:
        assert c.cmd("MULTI") == b"OK"
        assert c.cmd("SET", "a", "1") == b"QUEUED"
        assert c.cmd("BGREWRITEAOF") == b"QUEUED"
        assert c.cmd("SET", "lock", "A", "PX", 60000) == b"QUEUED"
        replies = c.cmd("EXEC")
        assert replies[0] == b"OK" and replies[2] == b"OK", replies
        assert wait_until(
            lambda: node.info("persistence")["aof_rewrite_in_progress"] == "0" and
            node.info("persistence")["aof_rewrites"] == "1", 10)
        assert c.cmd("SET", "b", "2") == b"OK"
    node.kill9()
    r = subprocess.run([os.path.join(lt.build_dir(), "tools", "latch-check-aof"), node.aof],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(["redis-check-aof", node.aof], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    node.start()
    assert node.cmd("GET", "a") == b"1"
    assert node.cmd("GET", "lock") == b"A"
    assert node.cmd("GET", "b") == b"2"
    node.stop()


# ---------------------------------------------------------------- 8. everysec writes


def test_everysec_acknowledges_only_what_the_log_file_has(tmp_path):
    """A process crash loses nothing acknowledged, with any policy: replies
    wait for write(), even while a slow background fsync postpones it."""
    node = Node(str(tmp_path), "--appendfsync", "everysec", *DEBUG).start()
    with node.conn() as c:
        assert c.cmd("DEBUG", "FAULT-IO", "log-fsync", 400) == b"OK"  # a slow disk
    acked = [[] for _ in range(4)]
    stop = threading.Event()

    def writer(i):
        c = node.conn()
        n = 0
        try:
            while not stop.is_set():
                # Pipelined: 20 writes in flight, their replies read after.
                keys = ["w%d:%d" % (i, n + j) for j in range(20)]
                c.send(b"".join(lt.encode("SET", k, "x" * 200) for k in keys))
                for k in keys:
                    if c.read(timeout=10) == b"OK":
                        acked[i].append(k)
                n += 20
        except (OSError, TimeoutError, lt.Incomplete, ConnectionError):
            pass

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    time.sleep(2.5)
    node.kill9()
    stop.set()
    for t in threads:
        t.join(timeout=15)
    total = sum(len(a) for a in acked)
    assert total > 100, total
    node.start()
    assert wait_until(lambda: node.info("persistence")["loading"] == "0", 60)
    with node.conn() as c:
        for keys in acked:
            for k in keys:
                assert c.cmd("EXISTS", k) == 1, "acknowledged %s lost (of %d)" % (k, total)
    node.stop()


# ---------------------------------------------------------------- 9. fsync errors


def test_an_fsync_error_under_always_stops_the_server_before_any_reply(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    assert node.cmd("SET", "before", "x") == b"OK"
    with node.conn() as c:
        assert c.cmd("DEBUG", "FAULT-IO", "log-fsync", "EIO") == b"OK"
        c.send(lt.encode("SET", "lock", "A", "NX", "PX", 60000))
        # No OK: the server exits instead of acknowledging a write that may
        # not be on disk (after a failed fsync, Linux may report the next
        # one as successful although the pages were dropped).
        assert c.read_until_close(timeout=10) == b""
    node.srv.proc.wait(timeout=10)
    assert node.srv.proc.returncode == 1
    assert "fsync failed" in node.log_text()
    node.srv.stop()
    node.start()
    assert node.cmd("GET", "before") == b"x"
    node.stop()


def test_an_fsync_error_under_everysec_taints_the_run(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "everysec", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
    with node.conn() as c:
        assert c.cmd("DEBUG", "FAULT-IO", "log-fsync", "EIO") == b"OK"
        assert c.cmd("SET", "more", "x") == b"OK"
        assert wait_until(lambda: node.info("persistence")["aof_last_write_status"] == "err", 5)
        assert c.cmd("DEBUG", "FAULT-IO", "OFF") == b"OK"
    # The retry succeeds, but what the failed fsync covered is not known to
    # be on disk: the run is not recorded clean, the next start quarantines.
    assert wait_until(lambda: node.info("persistence")["aof_last_write_status"] == "ok", 5)
    node.stop()
    node.start()
    q, remaining, info = quarantined(node)
    assert q and remaining > 50000, info
    node.stop()


# ---------------------------------------------------------------- renewals


@pytest.mark.parametrize("stop", ["clean", "kill9"])
def test_a_lock_renewed_with_pexpire_survives_a_restart_after_its_first_ttl(tmp_path, stop):
    """Found by the Store's replay property test: the log held SET … PXAT t1
    then PEXPIREAT … t2; a replay after t1 dropped the key at the SET and the
    PEXPIREAT found nothing, so a lock its holder had renewed (the way
    redis-semaphore, redis-py's Lock and redlock-universal extend) was gone
    after a restart, and granted to the next client."""
    node = Node(str(tmp_path), "--appendfsync", "always").start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 1000) == b"OK"
    assert node.cmd("PEXPIRE", "lock", 60000) == 1
    time.sleep(1.3)  # past the first TTL
    if stop == "clean":
        node.stop()
    else:
        node.kill9()
    node.start()
    assert node.cmd("GET", "lock") == b"A"
    assert node.cmd("PTTL", "lock") > 50000
    assert node.cmd("SET", "lock", "B", "NX", "PX", 60000) is None
    node.stop()


# ---------------------------------------------------------------- always, machine crash


def test_under_always_a_machine_crash_loses_nothing_acknowledged(tmp_path):
    """The reply to a grant leaves only after its fsync, even a slow one: a
    power loss right after the OK keeps the lock (an OK sent before the
    fsync completed would find the lock gone)."""
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    assert node.cmd("SET", "warm", "x") == b"OK"
    with node.conn() as c:
        assert c.cmd("DEBUG", "FAULT-IO", "log-fsync", 500) == b"OK"  # slow but successful
        t0 = time.monotonic()
        assert c.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
        assert time.monotonic() - t0 >= 0.45  # the OK waited for the fsync
    node.power_loss()  # at once: only what completed fsyncs covered survives
    node.start()
    assert node.cmd("GET", "lock") == b"A"
    assert node.cmd("SET", "lock", "B", "NX", "PX", 60000) is None
    assert node.info("latch")["quarantine"] == "0"  # always, same boot: nothing lost
    node.stop()
