"""latch-demo replays the lock evolution against real servers; each step's
verdict is what the story says it must be: the broken steps break, the fixes
hold."""

import os
import re
import subprocess

import latchtest as lt

EXPECTED = {
    "v1": "UNSAFE",
    "v2": "UNSAFE",
    "v3": "UNSAFE",
    "v4": "SAFE",
    "v5": "SAFE",
    "redlock": "UNSAFE",
    "redlock-quarantine": "SAFE",
    "fencing": "SAFE",
    "waiting": "SAFE",
    "reentrant": "SAFE",
    "fair": "SAFE",
    "rwlock": "SAFE",
    "semaphore": "SAFE",
    "pubsub": "SAFE",
}

ADVANCED = ["reentrant", "fair", "rwlock", "semaphore", "pubsub"]


def demo():
    return os.path.join(lt.build_dir(), "tools", "latch-demo")


def verdicts(output):
    found = {}
    for line in output.splitlines():
        if line.startswith("VERDICT "):
            sid, rest = line[len("VERDICT "):].split(": ", 1)
            found[sid] = rest.split(":", 1)[0]
    return found


def test_list_names_every_scenario():
    out = subprocess.run([demo(), "--list"], stdout=subprocess.PIPE, check=True).stdout.decode()
    assert [line.split()[0] for line in out.splitlines()] == list(EXPECTED)


def test_all_scenarios_reach_their_verdicts():
    p = subprocess.run([demo(), "--server", lt.latch_binary(), "all"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    out = p.stdout.decode()
    assert verdicts(out) == EXPECTED, out
    assert p.returncode == 0, out
    # The narration shows the moment safety broke or held.
    assert "A finishes and deletes B's lock!" in out
    assert "DELIFEQ lock:v4 token-A  ->  (integer) 0" in out
    assert "(error) QUARANTINE" in out
    # Fencing: the stale write taken without tokens, refused with them.
    assert 'A writes "A\'s stale order"  ->  accepted' in out
    assert re.search(r'A writes "A\'s stale order" with token (\d+)  ->  refused: token \1 < ', out)
    # Waiting: the queue served the clients in the order they asked.
    assert "order of turns 0,1,2,3,4,5,6,7 (asked 0..7)" in out
    # The advanced locks: each naive version broken, each script holding.
    assert "HGET lock:re A:1  ->  \"2\"" in out
    assert "C wakes first: C has it, ahead of B" in out
    assert "ZCARD sem:naive  ->  (integer) 3" in out
    assert 'ZRANGE sem:jobs 0 -1  ->  ["P3", "P4"]' in out
    assert "heard nothing in 500 ms" in out and 'hears "0" on redisson_lock__channel' in out


def test_a_scenario_against_a_running_server(server_factory):
    srv = server_factory("latch", "--quarantine", "never")
    p = subprocess.run([demo(), "--host", "127.0.0.1", "--port", str(srv.port), "v3"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = p.stdout.decode()
    assert p.returncode == 0, out
    assert verdicts(out) == {"v3": "UNSAFE"}
    with srv.conn() as c:
        assert c.cmd("EXISTS", "lock:v3") == 0  # the demo cleans up after itself


def test_the_advanced_locks_behave_the_same_on_redis_server(server_factory):
    """The scripts of the advanced scenes are Redis's Lua as Redisson and
    redis-semaphore write it: on redis-server they reach the same verdicts,
    through the same steps (each scene checks every reply it narrates)."""
    for kind in ("redis", "latch"):
        srv = server_factory(kind)
        p = subprocess.run([demo(), "--host", "127.0.0.1", "--port", str(srv.port)] + ADVANCED,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        out = p.stdout.decode()
        assert p.returncode == 0, kind + "\n" + out
        assert verdicts(out) == {k: "SAFE" for k in ADVANCED}, kind + "\n" + out
