"""latch-chaos, the RedLock safety harness, in CI: one short fixed schedule
run twice. With the restart quarantine it must find no violation; with the
quarantine off and appendfsync no the same faults must produce at least one,
which proves the checker can see a violation when there is one."""

import os
import re
import subprocess
import xml.etree.ElementTree as ET

import latchtest as lt

# Seed 8 schedules 7 faults in 10 s, 4 of them amnesia (a majority loses
# power right after a grant); every seed schedules one at least every third
# fault.
RUN = ("--nodes", "5", "--workers", "6", "--duration", "10s", "--seed", "8", "--ttl", "1s",
       "--appendonly", "yes", "--appendfsync", "no")


def chaos(*args, timeout=120):
    argv = [os.path.join(lt.build_dir(), "tools", "latch-chaos"),
            "--server", lt.latch_binary()] + [str(a) for a in args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def report_number(out, name):
    m = re.search(r"^%s: (\d+)" % name, out, re.M)
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
    a = chaos(*RUN, "--schedule-only")
    b = chaos(*RUN, "--schedule-only")
    c = chaos(*RUN[:7], "9", *RUN[8:], "--schedule-only")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    assert a.stdout != c.stdout
    faults = a.stdout.splitlines()
    assert len(faults) >= 5
    assert sum("majority power loss" in f for f in faults) >= 3


def test_with_quarantine_no_lock_is_ever_held_twice(tmp_path):
    svg = tmp_path / "auto.svg"
    p = chaos(*RUN, "--quarantine", "auto", "--timeline", svg)
    out = p.stdout
    assert p.returncode == 0, out + p.stderr
    assert out.splitlines()[-1] == "violations: 0"
    # It was not a quiet run: locks changed hands, faults struck, nodes
    # restarted in quarantine and refused grants.
    assert report_number(out, "acquisitions") >= 5
    assert report_number(out, "faults injected") >= 5
    assert re.search(r"\b[1-9]\d* majority power loss", out)
    assert re.search(r"restart quarantines: [1-9]", out)
    assert report_number(out, "quarantine refusals seen by clients") > 0
    check_timeline(svg, 0)


def test_without_quarantine_the_same_faults_break_mutual_exclusion(tmp_path):
    svg = tmp_path / "never.svg"
    p = chaos(*RUN, "--quarantine", "never", "--timeline", svg)
    out = p.stdout
    assert p.returncode == 1, out + p.stderr
    n = int(re.fullmatch(r"violations: (\d+)", out.splitlines()[-1]).group(1))
    assert n >= 1
    assert len(re.findall(r"^violation \d+: worker \d+ held the lock", out, re.M)) == n
    assert "restart quarantines: 0" in out
    check_timeline(svg, n)


def test_a_harness_error_exits_2(tmp_path):
    p = chaos("--nodes", "0")
    assert p.returncode == 2
    p = subprocess.run([os.path.join(lt.build_dir(), "tools", "latch-chaos"), "--server",
                        str(tmp_path / "missing"), "--duration", "1s"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "harness error" in p.stdout
