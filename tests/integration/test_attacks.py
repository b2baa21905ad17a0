"""Attacks on the safety promises (README "Durability" and "Lock safety",
server/lease_policy.h), from an adversarial review of the redesigned lease
policy: each test is a way a node granted a held lock, revived an ended one
or lost an acknowledged write, and asserts the promised behaviour. Every one
failed on the code the review attacked and passes since its fix (the BREAK
comments say what was wrong). test_attacks_held.py has the attempts that
found nothing.
"""

import os
import subprocess
import time

import pytest

import latchtest as lt
from durable import Node, is_quarantine_error, quarantined, wait_until

DEBUG = ("--enable-debug-command", "yes")
INT64_MAX = 9223372036854775807


def read_state(node):
    with open(os.path.join(node.data, "latch.state")) as f:
        return f.read()


# ------------------------------------------------------------------------------
# BREAK 1: CONFIG SET appendfsync always -> no while the state record cannot be
# written. OnConfigChange ignores the failed WriteNow: CONFIG SET answers OK,
# the writer stops fsyncing, but latch.state still says "fsync-always yes". A
# grant pipelined just before the CONFIG SET (same loop iteration) is then
# acknowledged after write() only; a power loss loses it and the restart sees
# "crashed, but always throughout" -> no quarantine -> a second holder.
# ------------------------------------------------------------------------------


def test_weakening_appendfsync_while_the_state_record_fails_is_not_trusted(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    # A first grant moves the durable horizon well ahead (PX 120 s + margin),
    # so the next, shorter grant needs no record write of its own.
    assert node.cmd("SET", "warm", "w", "NX", "PX", 120000) == b"OK"
    with node.conn() as admin:
        # The disk refuses the state record (EIO, a full disk for the tmp file…).
        assert admin.cmd("DEBUG", "FAULT-IO", "state-write", "EIO") == b"OK"
    c = node.conn()
    # One packet: the grant, then the operator's (or a config tool's) switch.
    c.send(lt.encode("SET", "lock", "A", "NX", "PX", 60000) +
           lt.encode("CONFIG", "SET", "appendfsync", "no"))
    r1 = c.read(timeout=5)
    r2 = c.read(timeout=5)
    assert r1 == b"OK"  # client A holds the lock on this node
    # The switch cannot be recorded, so it does not happen (it was accepted,
    # unrecorded, before the fix).
    assert isinstance(r2, lt.RespError) and b"latch.state" in r2.text, r2
    c.close()
    assert node.cmd("CONFIG", "GET", "appendfsync") == [b"appendfsync", b"always"]
    assert "fsync-always yes" in read_state(node), read_state(node)
    node.power_loss()  # the machine loses power: the unsynced tail is gone
    node.start()       # the operator's config file still says always
    got_b = node.cmd("SET", "lock", "B", "NX", "PX", 60000)
    lock = node.cmd("GET", "lock")
    node.stop()
    # Promise: A's acknowledged lock was on disk (always held), so B is refused.
    assert lock == b"A" and got_b is None, (lock, got_b)


# ------------------------------------------------------------------------------
# BREAK 2: integer overflow in the quarantine end. Begin() computes
# `now + *prev->ttl_cap` and `now + quarantine_ms` without saturation. With
# a (huge) max-lock-ttl the bound wraps negative: an everysec crash restarts
# without quarantine.
# ------------------------------------------------------------------------------


def test_a_huge_max_lock_ttl_does_not_cancel_the_quarantine(tmp_path):
    # appendfsync no: the power loss really loses A's record (under everysec
    # the first background fsync starts at once and usually saves it).
    node = Node(str(tmp_path), "--appendfsync", "no", "--max-lock-ttl", INT64_MAX,
                *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
    node.power_loss()
    node.start()
    q, remaining, info = quarantined(node)
    got_b = node.cmd("SET", "lock", "B", "NX", "PX", 60000)
    node.stop()
    assert q and got_b != b"OK", ("B was granted the lock A still holds", got_b, info)


def test_a_huge_quarantine_ms_does_not_cancel_the_quarantine(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "no", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
    node.power_loss()
    # latch.state lost (or damaged): the fallback duration applies. The
    # operator asked for "practically forever".
    os.unlink(os.path.join(node.data, "latch.state"))
    node.start("--quarantine-ms", INT64_MAX)
    q, remaining, info = quarantined(node)
    got_b = node.cmd("SET", "lock", "B", "NX", "PX", 60000)
    node.stop()
    assert q and got_b != b"OK", ("B was granted the lock A still holds", got_b, info)


def test_quarantine_always_with_a_huge_quarantine_ms_quarantines(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "everysec", "--quarantine", "always",
                "--quarantine-ms", INT64_MAX, *DEBUG).start()
    q, remaining, info = quarantined(node)
    node.stop()
    assert q, info


# ------------------------------------------------------------------------------
# BREAK 3: the documented repair path. A log damaged in its middle stops the
# start with "repair it with: latch-check-aof --fix". --fix cuts everything
# after the damage, acknowledged leases included, and leaves latch.state
# saying "clean" (or "always throughout"): the next start trusts the log and
# does not quarantine.
# ------------------------------------------------------------------------------


def test_repairing_the_log_with_check_aof_fix_quarantines(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    assert node.cmd("SET", "before", "x") == b"OK"
    size_before = os.path.getsize(node.aof)
    assert node.cmd("SET", "after", "y") == b"OK"
    assert node.cmd("SET", "lock", "A", "NX", "PX", 120000) == b"OK"
    node.stop()  # clean
    # A damaged sector in the middle of the log (one byte of the 'after' record).
    with open(node.aof, "r+b") as f:
        f.seek(size_before)
        f.write(b"?")
    rc, out = node.run_to_exit()
    assert rc != 0 and "latch-check-aof --fix" in out, out
    tool = os.path.join(lt.build_dir(), "tools", "latch-check-aof")
    if not os.path.exists(tool):
        tool = os.path.join(lt.build_dir(), "latch-check-aof")
    p = subprocess.run([tool, "--fix", "--yes", node.aof], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    assert p.returncode == 0, p.stdout
    node.start()
    q, remaining, info = quarantined(node)
    got_b = node.cmd("SET", "lock", "B", "NX", "PX", 60000)
    node.stop()
    assert q and got_b != b"OK", ("no quarantine after a repair that dropped acknowledged "
                                  "leases; B was granted the lock A holds", got_b, info)


# ------------------------------------------------------------------------------
# BREAK 4 (claim 5): a replayed lease outlives the horizon. When the previous
# record carries no horizon (every lease it knew had ended), foreign_bound is
# 0 and Deadline() does not clamp: a lease written on another clock is
# converted with today's wall clock, unbounded.
# ------------------------------------------------------------------------------


def test_no_replayed_lease_outlives_the_horizon_on_another_clock(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 1500) == b"OK"
    node.stop()  # clean; the log holds SET lock A PXAT t (never a DEL)
    # Wait out the lease and the recorded horizon (PX + margin of >= 1 s).
    time.sleep(4)
    node.start()  # same clock: the lease has ended, replay drops it
    assert node.cmd("GET", "lock") is None
    node.stop()   # this run granted nothing: its record says "horizon none"
    assert "horizon none" in read_state(node), read_state(node)
    # Reboot (another clock) with the wall clock an hour behind.
    node.start("--debug-clock-id", "after-reboot", "--debug-wall-offset-ms", -3600 * 1000)
    q, remaining, info = quarantined(node)
    value, pttl = node.cmd("GET", "lock"), node.cmd("PTTL", "lock")
    node.stop()
    # Promise: no replayed lease outlives the horizon (none is alive).
    assert value is None, ("an ended lease came back", value, pttl, info)


# ------------------------------------------------------------------------------
# BREAK 5: "until an operator ends it" is recorded as forgotten-until INT64_MAX;
# on another clock Translate() computes now + (INT64_MAX - written_at), which
# overflows whenever the new clock reads more than the old one did (another
# host with a longer uptime, a time namespace, --debug-clock-id here): the
# quarantine in progress silently ends.
# ------------------------------------------------------------------------------


def test_an_operator_ended_quarantine_survives_a_move_to_another_clock(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "no", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 120000) == b"OK"
    node.power_loss()  # A's record is lost with the page cache
    # …and latch.state with it (or it is damaged): no record says for how long.
    os.unlink(os.path.join(node.data, "latch.state"))
    node.start()
    q, remaining, info = quarantined(node)
    assert q and remaining == -1, info  # until an operator ends it
    node.stop()
    assert "forgotten-until 9223372036854775807" in read_state(node), read_state(node)
    # The volume is attached to another host (another boot clock).
    node.start("--debug-clock-id", "another-host")
    q, remaining, info = quarantined(node)
    got_b = node.cmd("SET", "lock", "B", "NX", "PX", 60000)
    node.stop()
    assert q and got_b != b"OK", ("the quarantine in progress ended by itself on another "
                                  "clock; B was granted A's lock", got_b, info)


# ------------------------------------------------------------------------------
# BREAK 6: damage inside the LAST record of a cleanly shut-down log (one digit
# of a bulk length) looks like a torn tail: the reader waits for bytes that
# never come, Replay::Truncated() cuts the file there (destroying the
# acknowledged record) and, since latch.state says "clean", the start does not
# quarantine. A clean shutdown can never leave a torn tail, so this is
# corruption, which the README says stops the start.
# ------------------------------------------------------------------------------


def test_a_damaged_last_record_after_a_clean_shutdown_is_not_taken_for_a_torn_tail(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 120000) == b"OK"
    node.stop()  # clean, fully synced
    with open(node.aof, "rb") as f:
        data = f.read()
    # The last record is SET lock A PXAT <13 digits>: "$13\r\n" -> "$93\r\n".
    at = data.rfind(b"$13\r\n")
    assert at > 0, data
    damaged = data[:at] + b"$93\r\n" + data[at + 5:]
    with open(node.aof, "wb") as f:
        f.write(damaged)
    rc_out = None
    try:
        node.start()
    except Exception as e:  # refusing to start would be the promised behaviour
        rc_out = str(e)
    if rc_out is not None:
        return
    q, remaining, info = quarantined(node)
    got_b = node.cmd("SET", "lock", "B", "NX", "PX", 60000)
    log = node.log_text()
    node.stop()
    assert q and got_b != b"OK", ("damage in a clean log was cut off as a torn tail, no "
                                  "quarantine; B was granted A's lock", got_b, info,
                                  [l for l in log.splitlines() if "short read" in l])


# Variant of BREAK 3 (same root cause: latch.state vouches for "the log" without
# identifying it): the log replaced by an older copy (a restored backup, a
# volume snapshot of the data file only) after a clean stop.
def test_an_older_copy_of_the_log_is_not_trusted_as_the_previous_runs_log(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    assert node.cmd("SET", "config", "x") == b"OK"
    node.stop()
    with open(node.aof, "rb") as f:
        backup = f.read()  # the nightly backup of the log
    node.start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 120000) == b"OK"
    node.stop()  # clean
    with open(node.aof, "wb") as f:
        f.write(backup)  # restored
    node.start()
    q, remaining, info = quarantined(node)
    got_b = node.cmd("SET", "lock", "B", "NX", "PX", 60000)
    node.stop()
    assert q and got_b != b"OK", ("an older log was trusted as complete; B was granted "
                                  "A's lock", got_b, info)


# ------------------------------------------------------------------------------
# DOC MISMATCH (not a safety break): README says `quarantine always`
# quarantines every start "until the horizon when one is known"; after a clean
# stop Begin() only applies quarantine-ms (the horizon counts only when `lost`).
# ------------------------------------------------------------------------------


def test_doc_quarantine_always_waits_for_a_known_horizon(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", "--quarantine", "always",
                "--quarantine-ms", 1000, *DEBUG).start()
    assert wait_until(lambda: not quarantined(node)[0], 5)
    assert node.cmd("SET", "lock", "A", "NX", "PX", 60000) == b"OK"
    node.stop()
    node.start()
    q, remaining, info = quarantined(node)
    node.stop()
    assert q and remaining > 30000, info


# ------------------------------------------------------------------------------
# FINDING (atomicity, low severity): a known script's writes are logged as
# separate records, not bracketed by MULTI/EXEC (Redis wraps a script's effects
# in MULTI/EXEC in its AOF). A log torn between them (power loss mid-write)
# replays half the script: redlock-universal's batch acquire leaves k1 locked
# and k2 free, although the script is documented as one atomic command.
# ------------------------------------------------------------------------------


def test_a_torn_log_never_replays_half_a_script(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", *DEBUG).start()
    for text in lt.known_script_texts():
        node.cmd("SCRIPT", "LOAD", text)
    size0 = os.path.getsize(node.aof)
    r = node.cmd("EVALSHA", "514d8d1b08387624661da2a9098d3949b633eb3a", 2, "k1", "k2",
                 "tokA", "tokA", 120000)
    assert r == [1, 2], r
    node.stop()
    with open(node.aof, "rb") as f:
        data = f.read()
    # Tear the tail inside the script's second record, as a power loss mid-write can.
    second = data.index(b"*5\r\n", data.index(b"k1", size0))
    with open(node.aof, "wb") as f:
        f.write(data[:second + 10])
    node.start()
    k1, k2 = node.cmd("GET", "k1"), node.cmd("GET", "k2")
    node.stop()
    assert (k1 is None) == (k2 is None), ("half a script replayed", k1, k2)


# ------------------------------------------------------------------------------
# BREAK 7: a run that starts without a trustworthy record (latch.state missing
# or damaged: the documented quarantine-ms fallback) replays live leases from
# the log, but its own record never covers them: carried_horizon_ comes only
# from the previous record, and Start() writes "horizon none". After a reboot
# (another clock) the next run clamps every replayed lease to that (missing)
# horizon / the short fallback, drops A's lock after quarantine-ms and grants
# it to B while A's lease has minutes left.
# ------------------------------------------------------------------------------


def test_leases_replayed_without_a_record_are_covered_by_the_next_record(tmp_path):
    node = Node(str(tmp_path), "--appendfsync", "always", "--quarantine-ms", 2000,
                *DEBUG).start()
    assert node.cmd("SET", "lock", "A", "NX", "PX", 600000) == b"OK"  # 10 minutes
    node.stop()
    os.unlink(os.path.join(node.data, "latch.state"))  # lost (or damaged)
    node.start()
    assert node.cmd("GET", "lock") == b"A"  # the log still knows A's lock exactly
    assert node.cmd("PTTL", "lock") > 590000
    node.stop()
    state = read_state(node)
    node.start("--debug-clock-id", "after-reboot")
    q, remaining, info = quarantined(node)
    pttl = node.cmd("PTTL", "lock")
    got_b = node.cmd("SET", "lock", "B", "NX", "PX", 60000)
    holder = node.cmd("GET", "lock")
    node.stop()
    # The run that replayed A's lock without a record put it under its own
    # horizon, and on another clock the replay keeps it for the whole lease,
    # as if no time had passed since that run's last record (it used to wait
    # only quarantine-ms, drop A's lock and grant it to B). Since issue 22
    # the node need not refuse other grants for it: the lease reached the
    # disk, so a reboot could not take it.
    assert "horizon none" not in state, state
    assert pttl > 590000, (pttl, q, remaining, info, state)
    assert got_b is None and holder == b"A", got_b
