"""redis-cli's inspection modes against latch: what someone types to see what
a lock server holds and how it is doing.

  --scan --pattern 'lock:*'   SCAN with MATCH, cursor to cursor
  --bigkeys / --memkeys       SCAN, TYPE, STRLEN or MEMORY USAGE per key
  --stat                      INFO every second
  --latency                   PING in a loop

Each runs against a latch-server holding a known keyspace; the output must
be what redis-cli prints for Redis with the same keys (and for --bigkeys the
same summary redis-server gives). The continuous modes run on a
pseudo-terminal, as a person would run them, for a few seconds, then are
interrupted.
"""

import os
import pty
import re
import select
import shutil
import signal
import subprocess
import time

import pytest

import latchtest as lt
from latchtest import encode

REDIS_CLI = shutil.which("redis-cli")

pytestmark = pytest.mark.skipif(REDIS_CLI is None, reason="redis-cli (redis-tools) not installed")

LOCKS = 120
SESSIONS = 40


def cli_env():
    env = dict(os.environ)
    env["REDISCLI_HISTFILE"] = "/dev/null"
    env["REDISCLI_RCFILE"] = "/dev/null"
    env.pop("REDISCLI_AUTH", None)
    return env


def cli(port, *args, timeout=60):
    p = subprocess.run([REDIS_CLI, "-p", str(port)] + list(args), capture_output=True,
                       timeout=timeout, env=cli_env())
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def cli_on_tty(port, *args, seconds):
    """Runs redis-cli on a pseudo-terminal for `seconds`, then interrupts it
    (Ctrl-C) as a person would; returns everything it printed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([REDIS_CLI, "-p", str(port)] + list(args), stdin=slave,
                            stdout=slave, stderr=slave, env=cli_env(), close_fds=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    out += os.read(master, 65536)
                except OSError:
                    break
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        while True:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return out.decode("utf-8", "replace")


def fill(port):
    """Locks with leases, plain keys, and one large value: a lock server's
    keyspace."""
    with lt.Conn(port) as c:
        assert c.cmd("FLUSHALL") == b"OK"
        data = b"".join(encode("SET", "lock:order:%d" % i, "token-%032d" % i, "PX", "600000")
                        for i in range(LOCKS))
        data += b"".join(encode("SET", "session:%d" % i, "s" * (i + 1)) for i in range(SESSIONS))
        data += encode("SET", "big:report", "r" * 50000)
        data += encode("INCRBY", "fencing:counter", "41")
        c.send(data)
        c.read_n_raw(LOCKS + SESSIONS + 2)


@pytest.fixture(scope="module")
def servers(latch_server, redis_server):
    for srv in (latch_server, redis_server):
        fill(srv.port)
    return latch_server, redis_server


def test_scan_with_pattern_lists_the_locks(servers):
    latch, redis = servers
    rc, out, err = cli(latch.port, "--scan", "--pattern", "lock:*")
    assert rc == 0 and err == ""
    keys = out.split()
    assert sorted(keys) == sorted("lock:order:%d" % i for i in range(LOCKS))
    assert len(keys) == len(set(keys))
    # The same set as redis-cli gets from Redis (in another order).
    assert sorted(cli(redis.port, "--scan", "--pattern", "lock:*")[1].split()) == sorted(keys)
    # Every key (redis-cli's default SCAN asks for 10 at a time).
    rc, out, _ = cli(latch.port, "--scan")
    assert rc == 0 and len(out.split()) == LOCKS + SESSIONS + 2
    rc, out, _ = cli(latch.port, "--scan", "--pattern", "nothing:*")
    assert rc == 0 and out == ""


def summary(out):
    """--bigkeys/--memkeys output from the summary on, without the progress
    lines (they name keys in the order the scan met them)."""
    return out[out.index("-------- summary -------"):]


def test_bigkeys(servers):
    latch, redis = servers
    rc, out, err = cli(latch.port, "--bigkeys")
    assert rc == 0, err
    assert "Biggest string found '\"big:report\"' has 50000 bytes" in out
    assert "Sampled %d keys in the keyspace!" % (LOCKS + SESSIONS + 2) in out
    assert "%d strings with" % (LOCKS + SESSIONS + 2) in out
    assert "0 hashs with 0 fields" in out
    # Same keyspace, same summary as Redis's.
    assert summary(out) == summary(cli(redis.port, "--bigkeys")[1])


def test_memkeys(servers):
    latch, redis = servers
    rc, out, err = cli(latch.port, "--memkeys")
    assert rc == 0, err
    m = re.search(r"Biggest string found '\"big:report\"' has (\d+) bytes", out)
    assert m, out
    # MEMORY USAGE: the 50,000-byte value, its key and latch's header.
    assert 50000 + len("big:report") + 32 <= int(m.group(1)) <= 50000 + 200
    assert "Sampled %d keys in the keyspace!" % (LOCKS + SESSIONS + 2) in out
    total = re.search(r"(\d+) strings with (\d+) bytes", out)
    assert total and int(total.group(1)) == LOCKS + SESSIONS + 2
    with lt.Conn(latch.port) as c:
        usage = sum(c.cmd("MEMORY", "USAGE", k) for k in c.cmd("KEYS", "*"))
    assert int(total.group(2)) == usage


def test_stat(servers):
    latch, _ = servers
    out = cli_on_tty(latch.port, "--stat", "-i", "0.5", seconds=3)
    assert "------- data ------" in out and "keys" in out and "requests" in out
    rows = [l.split() for l in out.splitlines() if re.match(r"^\d+\s+[\d.]+[BKMG]\s+\d+\s", l)]
    assert len(rows) >= 3, out
    keys, mem, clients, blocked = rows[-1][:4]
    assert int(keys) == LOCKS + SESSIONS + 2  # db0:keys from INFO keyspace
    assert re.fullmatch(r"[\d.]+[BKMG]", mem) and mem != "0B"  # used_memory, human
    assert int(clients) >= 1 and int(blocked) == 0
    # The request counter moves: redis-cli's own INFO calls are requests.
    counts = [int(r[4]) for r in rows]
    assert counts == sorted(counts) and counts[-1] > counts[0]


def test_latency(servers):
    latch, _ = servers
    out = cli_on_tty(latch.port, "--latency", seconds=2.5)
    samples = re.findall(r"min: (\d+), max: (\d+), avg: ([\d.]+) \((\d+) samples\)", out)
    assert samples, out
    low, high, avg, n = samples[-1]
    assert int(n) >= 50  # a PING every 10 ms
    assert int(low) <= float(avg) <= int(high) < 1000
    # --latency-history prints one line per interval.
    out = cli_on_tty(latch.port, "--latency-history", "-i", "1", seconds=3.5)
    lines = re.findall(r"min: \d+, max: \d+, avg: [\d.]+ \(\d+ samples\) -- [\d.]+ seconds range",
                       out)
    assert len(lines) >= 2, out
