"""latch-chaos, the RedLock safety harness, in CI: short fixed schedules.

With the restart quarantine, a run with every kind of fault of the wider
model (clean restarts, restarts during a quarantine, disk errors, slow disks,
wall-clock steps, boot-id changes, rewrites inside MULTI, fsync policy and
quarantine mode changing across restarts) must find no violation and lose no
acknowledged write. With the quarantine off and appendfsync no, amnesia must
produce violations: the checker can see one when there is one. A lost log must
be reported as lost acknowledged writes: the write tracker can fail too; a
crash while fsyncs are slow must lose nothing acknowledged. The
tracker's rule itself is unit-tested on fabricated histories in
tests/chaos/chaos_test.cc."""

import os
import re
import stat
import subprocess
import xml.etree.ElementTree as ET

import pytest

import latchtest as lt

# Seed 8 schedules 7 faults in 10 s (the original five kinds), 4 of them
# amnesia (a majority loses power right after a grant); every seed schedules
# one at least every third fault.
CLASSIC = ("--node-count", "5", "--workers", "6", "--duration", "10s", "--seed", "8", "--ttl", "1s",
           "--appendonly", "yes", "--appendfsync", "no", "--faults", "classic")

# Seed 1622 schedules, in 15 s, every new kind of fault at least once (two
# clean restarts, a restart during quarantine after an amnesia, a boot-id
# change, a wall-clock step, a disk error ended by kill -9 right after a grant,
# a slow disk ended by a power loss), four amnesias, and rewrites inside
# MULTI; each restart draws a new fsync policy and quarantine mode.
NEW_KINDS = ["clean restart", "restart during quarantine", "disk error", "slow disk",
             "wall-clock step", "boot-id change", "majority power loss after a grant"]
WIDE = ("--node-count", "5", "--workers", "6", "--duration", "15s", "--seed", "1622", "--ttl", "1s",
        "--faults", "amnesia,clean,requarantine,disk-error,slow-disk,wall-step,boot-id",
        "--vary-appendfsync", "always,everysec,no", "--vary-quarantine", "auto,always")


def chaos(*args, server=None, timeout=120):
    argv = [os.path.join(lt.build_dir(), "tools", "latch-chaos"),
            "--server", server or lt.latch_binary()] + [str(a) for a in args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def report_number(out, name):
    m = re.search(r"^%s: (\d+)" % re.escape(name), out, re.M)
    assert m, "no '%s' in the report:\n%s" % (name, out)
    return int(m.group(1))


def check_timeline(path, violations):
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = ["".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")]
    for lane in ["worker 0", "worker 5", "node 0", "node 4"]:
        assert lane in texts
    red = [r for r in root.iter("{http://www.w3.org/2000/svg}rect")
           if r.get("fill") == "#e53935" and r.find("{http://www.w3.org/2000/svg}title") is not None]
    assert len(red) == 2 * violations  # each violation marks both holders


def test_the_schedule_depends_only_on_the_seed():
    a = chaos(*WIDE, "--print-schedule")
    b = chaos(*WIDE, "--print-schedule")
    c = chaos(*WIDE[:7], "1623", *WIDE[8:], "--print-schedule")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    assert a.stdout != c.stdout
    faults = [l for l in a.stdout.splitlines() if l.startswith("fault ")]
    for kind in NEW_KINDS:
        assert any(kind in f for f in faults), kind
    assert any("appendfsync always" in f for f in faults)
    assert any("quarantine always quarantine-ms" in f for f in faults)
    assert any("wall offset" in f for f in faults)
    assert any(re.search(r"disk error .* kill -9 within \d+ ms after a grant", f) for f in faults)
    assert re.search(r"^rewrite at \d+ ms on node \d \(inside MULTI\)$", a.stdout, re.M)
    # The original model draws the schedules it always drew.
    classic = chaos(*CLASSIC, "--print-schedule").stdout.splitlines()
    assert len([f for f in classic if f.startswith("fault ")]) == 7
    assert sum("majority power loss" in f for f in classic) >= 3


def test_every_fault_kind_with_quarantine_keeps_locks_and_acknowledged_writes(tmp_path):
    svg = tmp_path / "wide.svg"
    p = chaos(*WIDE, "--timeline", svg)
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    assert out.splitlines()[-1] == "violations: 0"
    assert re.search(r"^acknowledged writes lost: 0 \(allowed: \d+\)$", out, re.M), out
    # Every kind struck, none was skipped, and the run was not quiet: locks
    # changed hands, nodes restarted in quarantine and refused grants, and
    # thousands of acknowledged writes were read back after the restarts.
    injected = re.search(r"^faults injected: (\d+) \((.*)\)$", out, re.M)
    assert injected and int(injected.group(1)) >= 8, out
    for kind in NEW_KINDS:
        assert kind in injected.group(2), kind
    assert "faults skipped: 0" in out
    assert ("server knobs: DEBUG FAULT-IO yes, --debug-wall-offset-ms yes, "
            "--debug-clock-id yes") in out
    assert report_number(out, "acquisitions") >= 5
    assert re.search(r"restart quarantines: [1-9]", out)
    assert re.search(r"configuration changes at restart: [1-9]", out)
    assert report_number(out, "acknowledged writes") >= 1000
    assert re.search(r"\d+ checks read back [1-9]\d* writes", out)
    assert re.search(r"^rewrites: [1-9]\d* started \([1-9]\d* transactions with BGREWRITEAOF",
                     out, re.M), out
    assert "nodes whose log would not load: 0 repaired with latch-check-aof --fix, 0 left down" in out
    assert re.search(r"node exits on their own: \d+ after a failed fsync under appendfsync always "
                     r"\(by design\), 0 others", out), out
    assert "locks lengthened at replay: 0" in out
    check_timeline(svg, 0)


def test_without_quarantine_amnesia_breaks_mutual_exclusion(tmp_path):
    svg = tmp_path / "never.svg"
    p = chaos(*CLASSIC, "--quarantine", "never", "--timeline", svg)
    out = p.stdout
    assert p.returncode == 1, out + p.stderr
    n = int(re.fullmatch(r"violations: (\d+)", out.splitlines()[-1]).group(1))
    assert n >= 1
    assert len(re.findall(r"^violation \d+: worker \d+ held the lock", out, re.M)) == n
    # Each is put down to the nodes that granted both locks, every one of
    # them restarted into never since the first grant (the workers record
    # which nodes granted each hold).
    assert len(re.findall(r"granted by both: nodes? \d+(,\d+)*, each restarted into quarantine "
                          r"never since the first grant$", out, re.M)) == n, out
    assert re.search(r"^violations explained by quarantine never .*: %d; others: 0$" % n, out,
                     re.M), out
    assert "restart quarantines: 0" in out
    # appendfsync no loses writes at a power loss, as allowed; none otherwise.
    assert re.search(r"^acknowledged writes lost: 0 \(allowed: [1-9]\d*\)$", out, re.M), out
    check_timeline(svg, n)


@pytest.mark.skipif(bool(os.environ.get("LATCH_SANITIZED")),
                    reason="the slow-fsync library is preloaded into the servers; a sanitizer "
                           "build wants its own runtime first")
def test_a_crash_while_fsyncs_are_slow_loses_no_acknowledged_write():
    # Seed 3: every fsync of nodes 0 and 1 takes 760 ms longer (a library
    # preloaded into the servers), and after 1.2 s both are killed while
    # their fsyncs wait. Under everysec a reply leaves only once its write is
    # in the file, so the crash loses nothing acknowledged.
    p = chaos("--node-count", "3", "--workers", "2", "--duration", "6s", "--seed", "3",
              "--faults", "slow-fsync", "--appendfsync", "everysec", "--ack-rate", "200")
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    assert re.search(r"^faults injected: 1 \(1 slow fsync \(preloaded\)\)$", out, re.M), out
    assert re.search(r"^acknowledged writes lost: 0 \(allowed: 0\)$", out, re.M), out
    assert report_number(out, "acknowledged writes") >= 500
    assert re.search(r"node restarts: 2,", out), out
    assert out.splitlines()[-1] == "violations: 0"


def test_a_lost_log_is_reported_as_lost_acknowledged_writes():
    # kill -9, the log deleted, a start: the node's acknowledged writes are
    # gone, and the run must say so and fail (with no violation: the other
    # nodes still hold every lock, and the node quarantines).
    p = chaos("--node-count", "3", "--workers", "2", "--duration", "4s", "--seed", "1",
              "--faults", "log-lost", "--ack-rate", "200")
    out = p.stdout
    assert p.returncode == 1, out + p.stderr
    lost = re.search(r"^acknowledged writes lost: (\d+) \(allowed: 0\)$", out, re.M)
    assert lost and int(lost.group(1)) >= 50, out
    assert re.search(r"^  lost by fault: \d+ log lost$", out, re.M), out
    assert re.search(r"^  lost: node 0, after its restart \(kill -9 and log deleted\): \d+ "
                     r"acknowledged writes lost \(ack:0:1, ack:0:2", out, re.M), out
    assert out.splitlines()[-1] == "violations: 0"


def test_faults_the_server_cannot_take_are_skipped(tmp_path):
    # A server that refuses the clock options, as a build older than them
    # does: those faults are skipped with a note; the others still run.
    wrapper = tmp_path / "old-latch-server"
    wrapper.write_text(
        "#!/bin/sh\n"
        "for a in \"$@\"; do case \"$a\" in --debug-wall-offset-ms|--debug-clock-id)\n"
        "  echo \"Bad directive or wrong number of arguments: $a\" >&2; exit 1;; esac; done\n"
        "exec %s \"$@\"\n" % lt.latch_binary())
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    p = chaos("--node-count", "3", "--workers", "2", "--duration", "5s", "--seed", "1",
              "--faults", "wall-step,boot-id,crash", server=str(wrapper))
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    assert ("server knobs: DEBUG FAULT-IO yes, --debug-wall-offset-ms no, "
            "--debug-clock-id no") in out
    assert re.search(r"^faults skipped: [1-9]\d* \(.*boot-id change.*\), the server lacks the "
                     r"knobs \(.*boot-id change needs --debug-clock-id", out, re.M), out
    assert re.search(r"^faults injected: [1-9]\d* \(\d+ kill -9\)$", out, re.M), out
    assert out.splitlines()[-1] == "violations: 0"


def test_a_harness_error_exits_2_and_a_usage_error_64(tmp_path):
    p = chaos("--node-count", "0")
    assert p.returncode == 64
    p = chaos("--faults", "crash,meteor")
    assert p.returncode == 64
    assert "unknown fault kind 'meteor'" in p.stderr
    p = subprocess.run([os.path.join(lt.build_dir(), "tools", "latch-chaos"), "--server",
                        str(tmp_path / "missing"), "--duration", "1s"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "harness error" in p.stdout
