"""latch-redlock, the distributed flock(1): runs against real latch-server
nodes on free ports. Mutual exclusion between concurrent runs, lock loss
stopping the command, and every documented exit status."""

import os
import re
import signal
import subprocess
import threading
import time

import pytest

import latchtest as lt

# The exit statuses documented in `latch-redlock --help`.
EXIT_NOT_HELD = 1
EXIT_USAGE = 64
EXIT_UNREACHABLE = 69
EXIT_NOT_ACQUIRED = 75
EXIT_LOST = 76
EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127

# A fresh data directory with appendonly yes starts without a restart
# quarantine (appendonly no would quarantine, rightly, on every start).
# A lease cap (off by default) so the tool's handling of the nodes' error is tested.
NODE_ARGS = ("--appendonly", "yes", "--max-lock-ttl", "60000")


def binary():
    return os.path.join(lt.build_dir(), "tools", "latch-redlock")


def node_list(servers):
    return ",".join("127.0.0.1:%d" % s.port for s in servers)


def redlock(*args, timeout=60, env=None):
    return subprocess.run([binary()] + [str(a) for a in args], capture_output=True,
                          timeout=timeout, text=True, env=env)


@pytest.fixture(scope="module")
def nodes(tmp_path_factory):
    started = [lt.start_latch(str(tmp_path_factory.mktemp("redlock-node")), *NODE_ARGS)
               for _ in range(3)]
    yield started
    for s in started:
        s.stop()


@pytest.fixture
def key(request):
    # One key per test: the module's nodes are shared.
    return "cli:" + request.node.name


@pytest.fixture
def own_nodes(server_factory):
    """Three nodes of this test's own, for tests that pause or wipe them."""
    started = [server_factory("latch", *NODE_ARGS) for _ in range(3)]
    yield started
    for s in started:
        if s.alive():
            s.proc.send_signal(signal.SIGCONT)


def test_help_documents_the_exit_statuses():
    p = redlock("--help")
    assert p.returncode == 0
    for code in ("64", "69", "70", "75", "76", "126", "127"):
        assert re.search(r"^\s+%s\s" % code, p.stdout, re.M), code
    assert "COMMAND's own status" in p.stdout


@pytest.mark.parametrize("args,message", [
    (("--key", "k", "--ttl", "1s", "--", "true"), "--nodes is required"),
    (("--nodes", "127.0.0.1:1", "--ttl", "1s", "--", "true"), "--key is required"),
    (("--nodes", "127.0.0.1:1", "--key", "k", "--", "true"), "--ttl is required"),
    (("--nodes", "127.0.0.1:1", "--key", "k", "--ttl", "soon", "--", "true"), "is not a duration"),
    (("--nodes", "127.0.0.1", "--key", "k", "--ttl", "1s", "--", "true"), "HOST:PORT"),
    (("--nodes", "127.0.0.1:1", "--key", "k", "--ttl", "1s"), "no COMMAND"),
    (("--nodes", "127.0.0.1:1", "--key", "k", "--bogus", "1", "--", "true"), "unknown option"),
    (("release", "--nodes", "127.0.0.1:1", "--key", "k"), "--token"),
])
def test_usage_errors_exit_64(args, message):
    p = redlock(*args)
    assert p.returncode == EXIT_USAGE, p.stderr
    assert message in p.stderr
    assert "Usage:" in p.stderr


def test_the_commands_own_status_is_passed_on(nodes, key):
    p = redlock("--nodes", node_list(nodes), "--key", key, "--ttl", "5s", "--",
                "sh", "-c", "echo hello; exit 7")
    assert p.returncode == 7, p.stderr
    assert p.stdout == "hello\n"
    p = redlock("--nodes", node_list(nodes), "--key", key, "--ttl", "5s", "--",
                "sh", "-c", "kill -KILL $$")
    assert p.returncode == 128 + 9
    # Released after each run: the key is free again.
    assert redlock("status", "--nodes", node_list(nodes), "--key", key).returncode == EXIT_NOT_HELD


def test_concurrent_runs_never_overlap(nodes, key, tmp_path):
    """Six runs at once, each a read-modify-write of a counter and an
    append of start/end lines: with the lock held they serialize."""
    log = tmp_path / "log"
    counter = tmp_path / "counter"
    counter.write_text("0\n")
    section = ('echo "start $$" >> {log}; n=$(cat {c}); sleep 0.15; '
               'echo $((n + 1)) > {c}; echo "end $$" >> {log}').format(log=log, c=counter)
    procs = [subprocess.Popen([binary(), "--nodes", node_list(nodes), "--key", key,
                               "--ttl", "2s", "--wait", "30s", "--", "sh", "-c", section],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert counter.read_text() == "6\n"
    lines = log.read_text().split("\n")[:-1]
    assert len(lines) == 12
    for i in range(0, 12, 2):
        start, end = lines[i].split(), lines[i + 1].split()
        assert start[0] == "start" and end[0] == "end" and start[1] == end[1], lines


def test_the_watchdog_keeps_the_lock_past_its_ttl(nodes, key, tmp_path):
    """The command runs for 2.5 TTLs; the lock stays held all along."""
    marker = tmp_path / "running"
    proc = subprocess.Popen([binary(), "--nodes", node_list(nodes), "--key", key, "--ttl", "1s",
                             "--", "sh", "-c", "touch %s; sleep 2.5" % marker],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert lt.wait_for(marker.exists, 10)
    time.sleep(1.5)  # past the first TTL
    p = redlock("--nodes", node_list(nodes), "--key", key, "--ttl", "1s", "--", "true")
    assert p.returncode == EXIT_NOT_ACQUIRED, p.stderr
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def test_busy_lock_exits_75_without_running_the_command(nodes, key, tmp_path):
    held = redlock("acquire", "--nodes", node_list(nodes), "--key", key, "--ttl", "10s")
    assert held.returncode == 0, held.stderr
    token = held.stdout.split()[0]
    ran = tmp_path / "ran"
    start = time.monotonic()
    p = redlock("--nodes", node_list(nodes), "--key", key, "--ttl", "1s", "--wait", "0.4s",
                "--", "touch", str(ran))
    took = time.monotonic() - start
    assert p.returncode == EXIT_NOT_ACQUIRED, p.stderr
    assert "not acquired within 400 ms" in p.stderr
    assert 0.4 <= took < 5
    assert not ran.exists()
    assert redlock("release", "--nodes", node_list(nodes), "--key", key,
                   "--token", token).returncode == 0


def test_unreachable_nodes_exit_69(key, tmp_path):
    dead = ",".join("127.0.0.1:%d" % lt.free_port() for _ in range(3))
    ran = tmp_path / "ran"
    p = redlock("--nodes", dead, "--key", key, "--ttl", "1s", "--", "touch", str(ran))
    assert p.returncode == EXIT_UNREACHABLE
    assert "nodes unreachable" in p.stderr and "Connection refused" in p.stderr
    assert not ran.exists()


def test_one_node_down_of_three_still_runs(nodes, key):
    listed = node_list(nodes[:2]) + ",127.0.0.1:%d" % lt.free_port()
    p = redlock("--verbose", "--nodes", listed, "--key", key, "--ttl", "2s", "--", "true")
    assert p.returncode == 0, p.stderr
    assert re.search(r"2 of 3 yes \(quorum 2\)", p.stderr)


def test_ttl_over_the_nodes_cap_exits_69_with_their_error(nodes, key):
    p = redlock("--nodes", node_list(nodes), "--key", key, "--ttl", "10m", "--", "true")
    assert p.returncode == EXIT_UNREACHABLE
    assert "exceeds max-lock-ttl" in p.stderr


def test_command_not_found_127_not_executable_126(nodes, key, tmp_path):
    p = redlock("--nodes", node_list(nodes), "--key", key, "--ttl", "2s", "--",
                str(tmp_path / "no-such-program"))
    assert p.returncode == EXIT_NOT_FOUND
    assert "cannot run" in p.stderr
    plain = tmp_path / "plain.txt"
    plain.write_text("not a program\n")
    p = redlock("--nodes", node_list(nodes), "--key", key, "--ttl", "2s", "--", str(plain))
    assert p.returncode == EXIT_CANNOT_EXECUTE
    # The lock was released in both cases.
    assert redlock("status", "--nodes", node_list(nodes), "--key", key).returncode == EXIT_NOT_HELD


def test_lock_loss_stops_the_command_with_sigterm_and_exits_76(own_nodes, key, tmp_path):
    """A majority stops answering (SIGSTOP): renewals time out, and the
    command gets SIGTERM early enough to be gone before the validity ends."""
    out = tmp_path / "out"
    script = 'trap "echo TERM >> {o}; exit 0" TERM; echo started >> {o}; ' \
             'while :; do sleep 0.05; done'.format(o=out)
    start = time.monotonic()
    # A sanitized build on a loaded machine renews slowly: give it a longer lease.
    ttl = "3s" if os.environ.get("LATCH_SANITIZED") else "1s"
    proc = subprocess.Popen([binary(), "--nodes", node_list(own_nodes), "--key", key,
                             "--ttl", ttl, "--", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert lt.wait_for(lambda: out.exists() and "started" in out.read_text(), 10)
    own_nodes[0].proc.send_signal(signal.SIGSTOP)
    own_nodes[1].proc.send_signal(signal.SIGSTOP)
    try:
        _, err = proc.communicate(timeout=20)
    finally:
        own_nodes[0].proc.send_signal(signal.SIGCONT)
        own_nodes[1].proc.send_signal(signal.SIGCONT)
    assert proc.returncode == EXIT_LOST, err
    assert "lost" in err and "validity ends in" in err
    assert out.read_text() == "started\nTERM\n"
    assert time.monotonic() - start < 15


def test_a_command_that_ignores_sigterm_gets_sigkill(own_nodes, key, tmp_path):
    """The key disappears from a majority (as after nodes forgot it): the
    next renewal says so, SIGTERM is ignored, SIGKILL follows the grace."""
    out = tmp_path / "out"
    script = "trap '' TERM; echo started > %s; sleep 30" % out
    proc = subprocess.Popen([binary(), "--nodes", node_list(own_nodes), "--key", key,
                             "--ttl", "3s", "--kill-after", "0.5s", "--", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert lt.wait_for(out.exists, 10)
    start = time.monotonic()
    for n in own_nodes[:2]:
        with n.conn() as c:
            assert c.cmd("FLUSHALL") == b"OK"
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == EXIT_LOST, err
    assert "not (or no longer) ours" in err
    assert "SIGKILL" in err
    # The first renewal comes at ttl/3 = 1 s; then 0.5 s of grace.
    assert time.monotonic() - start < 5


def test_signals_to_latch_redlock_reach_the_command(nodes, key, tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([binary(), "--nodes", node_list(nodes), "--key", key, "--ttl", "2s",
                             "--", "sh", "-c", "echo started > %s; exec sleep 30" % out],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert lt.wait_for(out.exists, 10)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    assert proc.returncode == 128 + signal.SIGTERM
    assert redlock("status", "--nodes", node_list(nodes), "--key", key).returncode == EXIT_NOT_HELD


def test_acquire_status_release_for_scripts(nodes, key):
    p = redlock("acquire", "--nodes", node_list(nodes), "--key", key, "--ttl", "20s")
    assert p.returncode == 0, p.stderr
    token, validity = p.stdout.split()
    assert re.fullmatch(r"[0-9a-f]{32}", token)
    assert 19000 < int(validity) <= 20000

    st = redlock("status", "--nodes", node_list(nodes), "--key", key)
    assert st.returncode == 0, st.stdout
    rows = [line for line in st.stdout.splitlines() if line.startswith("127.0.0.1:")]
    assert len(rows) == 3
    for row in rows:
        assert token in row
        assert 0 < int(re.search(r"pttl\s+(\d+) ms", row).group(1)) <= 20000
    assert "held by %s on 3 of 3 nodes" % token in st.stdout

    # Someone else cannot take it, nor release it with the wrong token.
    assert redlock("acquire", "--nodes", node_list(nodes), "--key", key,
                   "--ttl", "1s").returncode == EXIT_NOT_ACQUIRED
    wrong = redlock("release", "--nodes", node_list(nodes), "--key", key, "--token", "0" * 32)
    assert wrong.returncode == EXIT_LOST

    rel = redlock("release", "--nodes", node_list(nodes), "--key", key, "--token", token)
    assert rel.returncode == 0, rel.stderr
    assert "released on 3 of 3 nodes" in rel.stdout
    again = redlock("release", "--nodes", node_list(nodes), "--key", key, "--token", token)
    assert again.returncode == EXIT_LOST
    assert "not held by a majority" in again.stderr
    st = redlock("status", "--nodes", node_list(nodes), "--key", key)
    assert st.returncode == EXIT_NOT_HELD
    assert st.stdout.count("(no key)") == 3


def test_status_with_a_majority_down_exits_69(nodes, key):
    listed = node_list(nodes[:1]) + ",127.0.0.1:%d,127.0.0.1:%d" % (lt.free_port(),
                                                                   lt.free_port())
    st = redlock("status", "--nodes", listed, "--key", key)
    assert st.returncode == EXIT_UNREACHABLE
    assert st.stdout.count("unreachable") == 2


def test_verbose_shows_every_nodes_answer_and_timing(nodes, key):
    p = redlock("-v", "--nodes", node_list(nodes), "--key", key, "--ttl", "2s", "--", "true")
    assert p.returncode == 0, p.stderr
    for s in nodes:
        assert re.search(r"127\.0\.0\.1:%d\s+yes\s+OK\s+[\d.]+ ms" % s.port, p.stderr), p.stderr
        assert re.search(r"127\.0\.0\.1:%d\s+yes\s+\(integer\) 1\s+[\d.]+ ms" % s.port, p.stderr)
    assert re.search(r'acquire "%s" attempt 1: 3 of 3 yes \(quorum 2\) in [\d.]+ ms, validity'
                     % re.escape(key), p.stderr)


def test_password_is_sent_with_auth(server_factory, key):
    secured = [server_factory("latch", *NODE_ARGS, "--requirepass", "s3cret") for _ in range(3)]
    p = redlock("--nodes", node_list(secured), "--key", key, "--ttl", "2s",
                "--password", "s3cret", "--", "true")
    assert p.returncode == 0, p.stderr
    env = dict(os.environ, LATCH_PASSWORD="s3cret")
    p = redlock("--nodes", node_list(secured), "--key", key, "--ttl", "2s", "--", "true",
                env=env)
    assert p.returncode == 0, p.stderr
    p = redlock("--nodes", node_list(secured), "--key", key, "--ttl", "2s", "--", "true")
    assert p.returncode == EXIT_UNREACHABLE
    assert "NOAUTH" in p.stderr


def test_quarantined_nodes_make_it_busy_not_unreachable(server_factory, key):
    q = [server_factory("latch", *NODE_ARGS, "--quarantine", "always", "--quarantine-ms", "60000")
         for _ in range(3)]
    p = redlock("--nodes", node_list(q), "--key", key, "--ttl", "2s", "--", "true")
    assert p.returncode == EXIT_NOT_ACQUIRED
    assert "3 in restart quarantine" in p.stderr


# A command that will not stop by itself: it ignores SIGTERM (the ignore is
# inherited by anything it starts), writes its pid, then a heartbeat (the
# monotonic clock, which every process shares) every 20 ms until killed.
STUBBORN = r"""
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    with open(sys.argv[2], "a") as f:
        f.write("%.6f\n" % time.monotonic())
    time.sleep(0.02)
"""


def heartbeats(path):
    return [float(x) for x in path.read_text().split()]


def watch_death(pid):
    """Notes the moment `pid` stops running (a zombie has stopped), polling
    /proc every 5 ms from a thread; returns (thread, dict with "at")."""
    seen = {}

    def run():
        while True:
            try:
                with open("/proc/%d/stat" % pid) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                state = "gone"
            if state in ("Z", "X", "gone"):
                seen["at"] = time.monotonic()
                return
            time.sleep(0.005)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, seen


@pytest.mark.parametrize("fault", ["pause", "kill"])
def test_a_command_ignoring_sigterm_is_dead_before_the_lease_ends(own_nodes, key, tmp_path,
                                                                  fault):
    """Issue 14, item 10. Renewals fail (a majority paused or killed) and the
    command ignores SIGTERM: it must be dead (SIGKILL included) before the
    lock's validity ends, not --kill-after (3 s by default) later, when the
    next holder may already be working."""
    pidfile, beats = tmp_path / "pid", tmp_path / "beats"
    ttl = 4.0
    proc = subprocess.Popen([binary(), "--nodes", node_list(own_nodes), "--key", key,
                             "--ttl", "%gs" % ttl, "--", "/usr/bin/python3", "-c", STUBBORN,
                             str(pidfile), str(beats)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert lt.wait_for(pidfile.exists, 10)
    child = int(pidfile.read_text())
    watcher, death = watch_death(child)
    # Every grant or renewal the client can count on was made before this
    # moment, so the lock's validity ends before fault_at + ttl.
    fault_at = time.monotonic()
    for n in own_nodes[:2]:
        if fault == "pause":
            n.pause()
        else:
            n.kill()
    validity_bound = fault_at + ttl
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        for n in own_nodes[:2]:
            if n.alive():
                n.resume()
    assert proc.returncode == EXIT_LOST, err
    assert "SIGTERM" in err and "SIGKILL" in err, err
    # The command is gone, and it was gone before the validity ended: it
    # stopped running (became a zombie) and wrote its last heartbeat before.
    watcher.join(timeout=10)
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    assert death["at"] < validity_bound, (death["at"] - validity_bound, err)
    assert heartbeats(beats)[-1] < validity_bound, err
    # It was stopped late in the lease, not at once: renewals had their chance.
    assert heartbeats(beats)[-1] > fault_at + ttl / 3, err


def test_a_command_that_exits_after_the_lease_ended_is_a_loss(nodes, key, tmp_path):
    """latch-redlock itself is frozen (SIGSTOP, as a VM pause or a debugger
    would) while the command finishes its work after the lease ran out: the
    lock could not be renewed meanwhile, so the command's work was not
    protected to its end. That must not look like success."""
    started, done = tmp_path / "started", tmp_path / "done"
    ttl = 1.0
    proc = subprocess.Popen([binary(), "--nodes", node_list(nodes), "--key", key,
                             "--ttl", "%gs" % ttl, "--", "sh", "-c",
                             "touch %s; sleep %g; touch %s" % (started, ttl * 1.5, done)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Freeze it as soon as it has acquired and the command runs: the status
    # shows the lock held, and the command has begun (frozen between the two,
    # latch-redlock would never start it: on a loaded machine, CI's, it was).
    assert lt.wait_for(lambda: redlock("status", "--nodes", node_list(nodes), "--key",
                                       key).returncode == 0, 10)
    assert lt.wait_for(started.exists, 10)
    proc.send_signal(signal.SIGSTOP)
    try:
        assert lt.wait_for(done.exists, 10)  # the command finished, after the lease
        time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGCONT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == EXIT_LOST, err
    assert "lost" in err and "after" in err, err
    assert redlock("status", "--nodes", node_list(nodes), "--key", key).returncode == EXIT_NOT_HELD


def test_the_lock_is_held_while_anything_of_the_commands_group_runs(nodes, key, tmp_path):
    """`sh -c 'work &'`: sh exits at once, its background job goes on in the
    same process group. The lock is held (and renewed past its TTL) until
    that job is gone too, as flock(1) holds its lock while any process keeps
    the inherited fd; then released."""
    done = tmp_path / "done"
    script = "(sleep 2.5; echo finished > %s) >/dev/null 2>&1 &" % done
    start = time.monotonic()
    proc = subprocess.Popen([binary(), "--verbose", "--nodes", node_list(nodes), "--key", key,
                             "--ttl", "1s", "--", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)  # sh is long gone; the job runs on, past the 1 s TTL
    assert proc.poll() is None, proc.communicate()
    assert not done.exists()
    assert redlock("status", "--nodes", node_list(nodes), "--key", key).returncode == 0
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert done.read_text() == "finished\n"  # released only after the job ended
    assert time.monotonic() - start >= 2.4
    assert "the lock is held until the processes it started in its group are gone" in err
    assert redlock("status", "--nodes", node_list(nodes), "--key", key).returncode == EXIT_NOT_HELD


def test_a_group_left_running_at_the_leases_end_is_killed(own_nodes, key, tmp_path):
    """The same background job, but the lock is lost meanwhile: the whole
    group is stopped before the validity ends, as COMMAND itself would be."""
    out = tmp_path / "out"
    script = "(trap 'echo TERM >> %s; exit 0' TERM; echo started >> %s; " \
             "while :; do sleep 0.05; done) >/dev/null 2>&1 &" % (out, out)
    proc = subprocess.Popen([binary(), "--nodes", node_list(own_nodes), "--key", key,
                             "--ttl", "3s", "--kill-after", "0.5s", "--", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert lt.wait_for(lambda: out.exists() and "started" in out.read_text(), 10)
    time.sleep(0.3)
    assert proc.poll() is None
    for n in own_nodes[:2]:
        with n.conn() as c:
            assert c.cmd("FLUSHALL") == b"OK"
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == EXIT_LOST, err
    assert out.read_text() == "started\nTERM\n"
