"""Lock libraries no one here wrote, unchanged, on latch-fixture nodes with
real faults (libs/bench.js; redis-py's Lock inline). Each test shows one
behaviour a user of RedLock cares about:

  * a minority of nodes down or paused: the lock is still taken;
  * a majority lost: it is not;
  * a node whose lease clock runs fast lets a second client in while the
    first still believes it holds the lock, when the library's drift factor
    is too small for that clock: latch-fixture check reports the violation;
  * a dropped reply: the client gets an error, yet the lock is held on the
    node until its TTL runs out.

What each library did is in docs/testbench.md ("What the libraries did").
"""

import json
import os
import subprocess
import sys
import time

import pytest

import latchtest as lt
from test_lock_libraries import LIBS_DIR, node_env  # noqa: F401 (the npm fixture)
from test_fixture import fx


@pytest.fixture
def bench(tmp_path):
    """A fixture directory; torn down at the end."""
    d = str(tmp_path / "bench")
    started = []

    def up(n, *server_options):
        out = json.loads(fx("up", "--node-count", n, "--dir", d, "--json", "--",
                            *server_options).stdout)
        started.append(d)
        return out

    yield d, up
    if started:
        fx("down", "--dir", d, check=False)


def run_js(node_env, scenario, d, extra_env=None, timeout=60):
    env = dict(node_env["env"])
    env["LATCH_NODES"] = \
        ",".join(s["endpoint"] for s in json.loads(fx("status", "--dir", d, "--json").stdout))
    env["LATCH_CLIENT_HISTORY"] = os.path.join(d, "client-history.jsonl")
    env.update(extra_env or {})
    r = subprocess.run([node_env["node"], os.path.join(LIBS_DIR, "bench.js"), scenario],
                       env=env, cwd=LIBS_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])["result"]


@pytest.mark.parametrize("scenario", ["redlock4", "sesamecare", "semaphore"])
def test_minority_down_or_paused_still_locks(scenario, node_env, bench):
    d, up = bench
    up(3)
    fx("kill", 2, "--dir", d)
    down = run_js(node_env, scenario, d)
    assert down["ok"], down
    if scenario != "redlock4":
        # node-redis 3 (redlock 4's client) has no command timeout: a frozen
        # node would hang its lock() forever, so only the crash is shown.
        fx("restart", 2, "--dir", d)
        fx("pause", 1, "--dir", d)
        paused = run_js(node_env, scenario, d)
        fx("resume", 1, "--dir", d)
        assert paused["ok"], paused


@pytest.mark.parametrize("scenario", ["redlock4", "sesamecare", "semaphore"])
def test_majority_lost_does_not_lock(scenario, node_env, bench):
    d, up = bench
    up(3)
    fx("kill", 1, "--dir", d)
    fx("kill", 2, "--dir", d)
    r = run_js(node_env, scenario, d)
    assert not r["ok"], r


def drift_run(node_env, bench, drift_factor):
    d, up = bench
    up(3)
    fx("fault", 0, "CLOCK", "RATE", "4", "--dir", d)  # node 0's lease clock: 4x fast
    fx("fault", 2, "PARTITION", "A", "--dir", d)      # node 2 never hears from client A
    r = run_js(node_env, "sesamecare_drift", d, {"DRIFT_FACTOR": str(drift_factor)})
    fx("down", "--dir", d, "--keep")
    check = fx("check", "--dir", d, "--html", os.path.join(d, "check.html"), check=False)
    return r, check


def test_fast_clock_and_small_drift_factor_let_a_second_client_in(node_env, bench):
    r, check = drift_run(node_env, bench, 0.01)
    assert r["a"]["ok"] and r["b"]["ok"], r  # both were told they hold the lock
    assert check.returncode == 1, check.stdout
    assert "violation 1: key \"bench:drift\": A" in check.stdout
    assert check.stdout.endswith("violations: 1\n")


def test_fast_clock_with_a_large_enough_drift_factor_is_safe(node_env, bench):
    # A drift factor covering a clock 4x fast: A's validity ends before node
    # 0 lets B in (B may still get the lock: A no longer claims it).
    r, check = drift_run(node_env, bench, 0.8)
    assert r["a"]["ok"], r
    assert check.returncode == 0 and check.stdout.endswith("violations: 0\n"), check.stdout


REDIS_PY_DROP = r"""
import json, os, sys, time
import redis
host, port = os.environ["LATCH_NODES"].split(",")[0].split(":")
r = redis.Redis(host=host, port=int(port))
out = {}
lock = r.lock("bench:res", timeout=1.5)
t0 = time.monotonic()
try:
    out["first"] = lock.acquire(blocking=False)
except redis.exceptions.ConnectionError as e:
    out["first"] = "ConnectionError"
out["held_by_nobody_we_know"] = r.get("bench:res") is not None and not lock.owned()
other = r.lock("bench:res", timeout=5, blocking_timeout=3, sleep=0.05)
got = other.acquire()
out["second"] = got
out["waited"] = round(time.monotonic() - t0, 2)
other.release()
print(json.dumps(out))
"""


def test_redis_py_dropped_reply_leaves_the_lock_held_until_its_ttl(bench):
    d, up = bench
    up(1)
    fx("fault", 0, "DROP", "COMMAND", "set", "COUNT", "1", "--dir", d)
    env = dict(os.environ)
    env["LATCH_NODES"] = json.loads(fx("status", "--dir", d, "--json").stdout)[0]["endpoint"]
    r = subprocess.run([sys.executable, "-c", REDIS_PY_DROP], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["first"] == "ConnectionError", out
    assert out["held_by_nobody_we_know"] is True
    assert out["second"] is True and 1.4 <= out["waited"] <= 2.5, out
