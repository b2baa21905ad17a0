"""latch-fixture (tools/fixture/): up, status, faults, kill --lose-unsynced,
down, run with a scripted and a seeded schedule, and check with its HTML
page, which headless Chromium (Debian's chromium) must load without an
error and show the violation it was given.

The violation is made for real: client A takes the lock on nodes 0 and 1
(node 2 refuses A: FAULT PARTITION), node 0's lease clock runs 4 times too
fast (FAULT CLOCK RATE 4), so node 0 lets B in long before A's validity
ends, and node 2 gives B its majority. A drift factor large enough for that
clock would have cut A's validity short: then there is no violation.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

import latchtest as lt


def fixture_bin():
    return os.path.join(lt.build_dir(), "tools", "latch-fixture")


def fx(*args, check=True, env=None, timeout=60):
    r = subprocess.run([fixture_bin()] + [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout, env=env)
    if check and r.returncode != 0:
        raise AssertionError("latch-fixture %s: status %d\n%s\n%s" % (
            " ".join(map(str, args)), r.returncode, r.stdout, r.stderr))
    return r


@pytest.fixture
def fixture_dir(tmp_path):
    d = str(tmp_path / "fx")
    yield d
    if os.path.exists(os.path.join(d, "fixture.jsonl")):
        fx("down", "--dir", d, check=False)


def status(d):
    return json.loads(fx("status", "--dir", d, "--json").stdout)


def test_up_status_faults_down(fixture_dir):
    out = json.loads(fx("up", "--node-count", 3, "--dir", fixture_dir, "--json").stdout)
    ports = [n["port"] for n in out["nodes"]]
    assert len(set(ports)) == 3
    assert out["LATCH_NODES"] == ",".join("127.0.0.1:%d" % p for p in ports)
    text = fx("status", "--dir", fixture_dir).stdout
    assert text.count("up=yes") == 3 and "quarantined=no" in text
    # The nodes outlive `up` and serve; each has fault injection on.
    with lt.Conn(ports[1]) as c:
        assert c.cmd("SET", "k", "v") == b"OK"
        assert c.cmd("FAULT", "LIST") == []
    assert fx("fault", 2, "DELAY", "10", "--dir", fixture_dir).stdout == "node 2: 1\n"
    s = status(fixture_dir)
    assert s[1]["keys"] == 1 and s[0]["keys"] == 0
    assert s[2]["last_fault"].startswith("id=1 kind=delay")
    # pause / resume.
    fx("pause", 0, "--dir", fixture_dir)
    assert status(fixture_dir)[0]["paused"] is True
    with pytest.raises(TimeoutError):
        lt.Conn(ports[0], timeout=0.3).cmd("PING")
    fx("resume", 0, "--dir", fixture_dir)
    with lt.Conn(ports[0]) as c:
        assert c.cmd("PING") == b"PONG"
    # A second `up` in the same directory is refused while nodes run.
    r = fx("up", "--node-count", 1, "--dir", fixture_dir, check=False)
    assert r.returncode == 2 and "already up" in r.stderr
    pids = [n["pid"] for n in out["nodes"]]
    fx("down", "--dir", fixture_dir)
    assert not os.path.exists(os.path.join(fixture_dir, "fixture.jsonl"))
    for p in pids:
        assert lt.wait_for(lambda p=p: not os.path.exists("/proc/%d" % p) or
                           open("/proc/%d/stat" % p).read().split(") ")[1][0] == "Z", 5), p


def test_kill_lose_unsynced_restarts_quarantined(fixture_dir):
    fx("up", "--node-count", 2, "--dir", fixture_dir)
    port = status(fixture_dir)[0]["endpoint"].split(":")[1]
    with lt.Conn(int(port)) as c:
        # A slow disk: the lock's fsync has not completed at the power loss
        # (a power loss that finds every byte synced loses nothing).
        assert c.cmd("DEBUG", "FAULT-IO", "log-fsync", "5000") == b"OK"
        assert c.cmd("SET", "lock", "tok", "PX", "3000", "NX") == b"OK"
    fx("kill", 0, "--lose-unsynced", "--dir", fixture_dir)
    s = status(fixture_dir)
    assert s[0]["up"] is False and s[1]["up"] is True
    fx("restart", 0, "--dir", fixture_dir)
    s = status(fixture_dir)
    assert s[0]["up"] is True and s[0]["quarantined"] == "yes", s
    with lt.Conn(int(port)) as c:
        r = c.cmd("SET", "other", "tok", "NX", "PX", "1000")
        assert isinstance(r, lt.RespError) and r.text.startswith(b"QUARANTINE"), r
    # A plain clean stop and restart comes back serving.
    fx("stop", 1, "--dir", fixture_dir)
    fx("restart", 1, "--dir", fixture_dir)
    assert status(fixture_dir)[1]["quarantined"] == "no"
    marks = open(os.path.join(fixture_dir, "fixture-history.jsonl")).read()
    assert "power loss" in marks and "restart" in marks and "stop" in marks


RUN_PROBE = r"""
import os, socket, sys, time, json
nodes = os.environ["LATCH_NODES"].split(",")
assert len(nodes) == 3, nodes
def ping(hp, timeout=0.2):
    h, p = hp.split(":")
    s = socket.create_connection((h, int(p)), timeout=timeout)
    s.sendall(b"*1\r\n$4\r\nPING\r\n")
    try:
        return s.recv(100)
    except socket.timeout:
        return b"silent"
    finally:
        s.close()
# The schedule pauses node 1 at 0.3 s for 0.8 s: watch it go silent and
# come back, whatever this machine's load does to our timing.
seen = []
deadline = time.monotonic() + 4
while time.monotonic() < deadline:
    r = ping(nodes[1])
    if not seen or seen[-1] != r:
        seen.append(r)
    if len(seen) >= 2 and seen[-1] == b"+PONG\r\n":
        break
    time.sleep(0.02)
assert ping(nodes[0]) == b"+PONG\r\n"
hist = open(os.path.join(os.environ["LATCH_FIXTURE_DIR"], "fixture-history.jsonl")).read()
print(json.dumps({"seen": [x.decode() for x in seen], "marks": hist.count("pause")}))
sys.exit(7)
"""


def test_run_applies_the_schedule_and_returns_the_status(tmp_path):
    schedule = tmp_path / "schedule.txt"
    schedule.write_text("# pause node 1 for 800 ms\n300 pause 1 800\n100 fault * CLOCK RATE 2\n")
    d = str(tmp_path / "run")
    r = fx("run", "--node-count", 3, "--dir", d, "--schedule", str(schedule), "--",
           sys.executable, "-c", RUN_PROBE, check=False)
    assert r.returncode == 7, r.stderr
    probe = json.loads(r.stdout.strip().splitlines()[-1])
    assert probe == {"seen": ["+PONG\r\n", "silent", "+PONG\r\n"], "marks": 1}, probe
    # Torn down, histories kept for check; every node recorded the fault.
    assert not any(s["up"] for s in status(d))
    for i in range(3):
        h = open(os.path.join(d, "node-%d" % i, "history.jsonl")).read()
        assert '"fault":"CLOCK RATE 2"' in h
    assert fx("check", "--dir", d).stdout.endswith("violations: 0\n")


def test_seeded_schedule_is_replayable(tmp_path):
    a = fx("run", "--node-count", 5, "--seed", 42, "--duration", "8s", "--print-schedule").stdout
    b = fx("run", "--node-count", 5, "--seed", 42, "--duration", "8s", "--print-schedule").stdout
    c = fx("run", "--node-count", 5, "--seed", 43, "--duration", "8s", "--print-schedule").stdout
    assert a == b and a != c
    actions = [line for line in a.splitlines() if line and not line.startswith("#")]
    assert len(actions) >= 4
    # The printed schedule is a valid schedule file: replaying it applies the
    # same actions (a run of a command that does nothing but wait a little).
    f = tmp_path / "replay.txt"
    f.write_text(a)
    first = [line for line in actions if int(line.split()[0]) < 1500]
    r = fx("run", "--node-count", 5, "--schedule", str(f), "--", "sleep", "1.5", check=False)
    assert r.returncode == 0, r.stderr
    applied = [line.split(": ", 2)[-1] for line in r.stderr.splitlines()
               if " s: " in line and "skipped" not in line]
    assert applied[:len(first)] == first


# ---------------------------------------------------------------- check and its page


def redlock_acquire(name, ports, key, token, ttl, drift_factor):
    """A textbook RedLock acquire by a named client: SET NX PX on every node,
    a majority in less than the TTL; validity = TTL - elapsed - drift."""
    start = time.time()
    granted = []
    for i, p in enumerate(ports):
        try:
            with lt.Conn(p, timeout=1) as c:
                if c.cmd("CLIENT", "SETNAME", name) != b"OK":
                    continue
                if c.cmd("SET", key, token, "NX", "PX", str(ttl)) == b"OK":
                    granted.append(i)
        except (OSError, ConnectionError, TimeoutError):
            pass
    elapsed = (time.time() - start) * 1000
    validity = ttl - elapsed - (ttl * drift_factor + 2)
    if len(granted) >= len(ports) // 2 + 1 and validity > 0:
        return granted, validity, start
    return None, 0, start


def make_drift_history(d, drift_factor):
    """Runs the fast-clock scenario on a fresh fixture; returns the client
    history path."""
    out = json.loads(fx("up", "--node-count", 3, "--dir", d, "--json").stdout)
    try:
        ports = [n["port"] for n in out["nodes"]]
        fx("fault", 0, "CLOCK", "RATE", "4", "--dir", d)
        fx("fault", 2, "PARTITION", "A", "--dir", d)
        events = []
        granted, validity, t = redlock_acquire("A", ports, "res", "tokA", 2000, drift_factor)
        assert granted == [0, 1], granted
        events.append({"t": t * 1000, "client": "A", "ev": "acquire", "key": "res"})
        events.append({"t": time.time() * 1000, "client": "A", "ev": "acquired", "key": "res",
                       "token": "tokA", "validity_ms": validity})
        time.sleep(0.7)  # node 0 expired A's 2 s lease after 0.5 s
        granted, validity, t = redlock_acquire("B", ports, "res", "tokB", 2000, 0.01)
        assert granted == [0, 2], granted
        events.append({"t": time.time() * 1000, "client": "B", "ev": "acquired", "key": "res",
                       "token": "tokB", "validity_ms": validity})
        time.sleep(0.2)
        path = os.path.join(d, "client-history.jsonl")
        with open(path, "w") as f:
            for e in events:
                f.write(json.dumps(e) + "\n")
    finally:
        # The nodes run detached: stop them even when the scenario failed.
        fx("down", "--dir", d, "--keep")
    return path


def test_check_reports_the_fast_clock_violation(tmp_path):
    d = str(tmp_path / "drift")
    make_drift_history(d, drift_factor=0.01)
    page = str(tmp_path / "page.html")
    r = fx("check", "--dir", d, "--html", page, check=False)
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines[-2].startswith("page: ") and lines[-1] == "violations: 1"
    v = next(line for line in lines if line.startswith("violation 1:"))
    assert 'key "res": A (token tokA) and B (token tokB)' in v
    # Nodes by the index latch-fixture's commands take, then their addresses.
    assert re.search(r"first's token was live on nodes 0,1 \(127\.0\.0\.1:\d+,127\.0\.0\.1:\d+\), "
                     r"the second's on nodes 0,2 \(", v), v
    html = open(page).read()
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html
    dom = chromium_dom(tmp_path, page)
    body = re.search(r"<body[^>]*>", dom).group(0)
    # No script error, picture = list, and the violation scrolled into view.
    assert 'data-rendered="ok"' in body and 'data-violation-in-view="yes"' in body, body
    # The node lanes in the CLI's order, named by index; a first start is
    # not a restart (no R), the two faults are marked (F).
    lanes = re.findall(r">node (\d) \(127\.0\.0\.1:\d+\)</text>", dom)
    assert lanes == ["0", "1", "2"], lanes
    assert dom.count('class="mark" x=') == 2 and ">R</text>" not in dom
    assert 'id="violation-1"' in dom and "A and B both held" in dom
    assert "1 violation drawn, 1 listed" in dom
    png = chromium_screenshot(tmp_path, page)
    assert os.path.getsize(png) > 10000


def test_check_no_violation_with_a_large_enough_drift_factor(tmp_path):
    # The same faults, but A budgets for a clock 4x fast (drift factor 0.8):
    # its validity ends before node 0 lets B in.
    d = str(tmp_path / "drift")
    make_drift_history(d, drift_factor=0.8)
    r = fx("check", "--dir", d, check=False)
    assert r.returncode == 0 and r.stdout.endswith("violations: 0\n"), r.stdout


def test_check_reads_nodes_only_and_refuses_bad_lines(tmp_path):
    good = tmp_path / "n.jsonl"
    good.write_text(
        '{"t":1000,"node":"a","ev":"grant","key":"k","value":"x","ttl_ms":1000}\n'
        '{"t":1000,"node":"b","ev":"grant","key":"k","value":"x","ttl_ms":1000}\n'
        '{"t":1200,"node":"a","ev":"expire","key":"k","value":"x"}\n'
        '{"t":1300,"node":"a","ev":"grant","key":"k","value":"y","ttl_ms":1000}\n'
        '{"t":1300,"node":"c","ev":"grant","key":"k","value":"y","ttl_ms":1000}\n')
    r = fx("check", str(good), check=False)
    # Without clients, tokens x and y each held a majority over [1300, 2000).
    assert r.returncode == 1 and "from 0.300 s to 1.000 s (700 ms)" in r.stdout, r.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"t":1,"node":"a","ev":"grant","key":{"nested":1}}\n')
    r = fx("check", str(bad), check=False)
    assert r.returncode == 2 and "bad.jsonl:1:" in r.stderr and "nested" in r.stderr


def test_a_release_logged_after_the_nodes_released_is_named(tmp_path):
    """The client-history rule (docs/testbench.md): "release" is logged
    before the release requests. Logged after them, the end of the claim is
    unsupported, and the report says why."""
    nodes = tmp_path / "nodes.jsonl"
    nodes.write_text("".join(
        '{"t":%d,"node":"n%d","ev":"%s","key":"k","value":"T"%s}\n' % (t, n, ev, ttl)
        for n in range(3) for t, ev, ttl in ((1000, "grant", ',"ttl_ms":5000'),
                                             (2000, "release", ""))))
    late = tmp_path / "late.jsonl"
    late.write_text('{"t":1001,"client":"A","ev":"acquired","key":"k","token":"T",'
                    '"validity_ms":4000}\n'
                    '{"t":2050,"client":"A","ev":"release","key":"k","token":"T"}\n')
    r = fx("check", str(nodes), "--client-history", str(late), check=False)
    assert r.returncode == 0, r.stdout
    assert "unsupported claims: 1" in r.stdout
    assert "(its release reached the nodes first)" in r.stdout
    assert 'log "release" before the first release request' in r.stdout
    # Logged first, as the rule says: nothing unsupported.
    early = tmp_path / "early.jsonl"
    early.write_text('{"t":1001,"client":"A","ev":"acquired","key":"k","token":"T",'
                     '"validity_ms":4000}\n'
                     '{"t":1999,"client":"A","ev":"release","key":"k","token":"T"}\n')
    r = fx("check", str(nodes), "--client-history", str(early), check=False)
    assert "unsupported claims: 0" in r.stdout and "note:" not in r.stdout, r.stdout


def chromium():
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("Debian's chromium is required for the page check (tools/dev/deps.sh test)")
    return path


def chromium_args(tmp_path):
    profile = tmp_path / "chromium-profile"
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--user-data-dir=%s" % profile]


def chromium_dom(tmp_path, page):
    r = subprocess.run(chromium_args(tmp_path) + ["--dump-dom", "file://" + page],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=90)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def chromium_screenshot(tmp_path, page):
    png = str(tmp_path / "page.png")
    r = subprocess.run(chromium_args(tmp_path) + ["--screenshot=%s" % png,
                                                  "--window-size=1600,900", "file://" + page],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=90)
    assert r.returncode == 0 and os.path.exists(png), r.stderr[-2000:]
    return png


def test_latch_chaos_draws_the_same_page(tmp_path):
    """latch-chaos --html writes its run through the same page code."""
    page = str(tmp_path / "chaos.html")
    r = subprocess.run([os.path.join(lt.build_dir(), "tools", "latch-chaos"), "--node-count", "3",
                        "--workers", "2", "--duration", "2s", "--seed", "3", "--html", page],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert r.returncode == 0 and "violations: 0" in r.stdout, r.stdout
    html = open(page).read()
    assert '<rect class="hold"' in html and "worker 1" in html and "node 2" in html
    assert '<div id="verdict" class="good">0 violations</div>' in html
