"""Fencing tokens (SET ... FENCE) on a real server: a token never repeats or
goes back, whatever happens to the node in between — kill -9, a power loss
with a torn log tail, a rewrite of the log, FLUSHALL — and a replayed key
gets its token back. Then latch-redlock --fence: the token reaches the
command as LATCH_FENCE and grows from one holder to the next."""

import os
import re
import subprocess

import durable
import latchtest as lt

REDLOCK = lambda: os.path.join(lt.build_dir(), "tools", "latch-redlock")


node = durable.fencing_node
grant = durable.fenced_grant


def test_tokens_grow_through_kill9_and_a_replayed_key_keeps_its_token(tmp_path):
    n = node(tmp_path, "--appendfsync", "everysec")
    seen = [grant(n, "lock:%d" % i, "holder-%d" % i) for i in range(5)]
    assert seen == sorted(seen) and len(set(seen)) == 5
    for _ in range(3):
        n.kill9()
        n.start()
        # The keys came back from the log with their tokens.
        for i, t in enumerate(seen[:5]):
            assert n.cmd("FENCE", "lock:%d" % i) == t
        t = grant(n, "after-%d" % len(seen), "x")
        assert t > max(seen), (t, seen)
        seen.append(t)
    n.stop()


def test_a_power_loss_with_a_torn_tail_never_gives_a_token_twice(tmp_path):
    # appendfsync no: the power loss takes every record the kernel had not
    # written back, tokens included; the counter's reservation, fsynced in
    # latch.state before any of them was issued, does not go back.
    n = node(tmp_path, "--appendfsync", "no")
    issued = [grant(n, "k%d" % i, "v") for i in range(20)]
    n.power_loss()
    # The machine died while writing: half of a fenced SET at the end.
    with open(n.aof, "ab") as f:
        f.write(b"#latch-fence 999999\r\n*5\r\n$3\r\nSET\r\n$4\r\nlo")
    n.start()
    assert "short read" in n.log_text()  # the torn tail was cut at load
    # Whatever the log kept, the counter is ahead of every token issued.
    t = grant(n, "new", "v")
    assert t > max(issued), (t, issued)
    # The torn annotation was cut with its record: a key written now
    # without FENCE has no token, now and after a replay.
    assert n.cmd("SET", "plain", "v") == b"OK"
    assert n.cmd("FENCE", "plain") is None
    n.kill9()
    n.start()
    assert n.cmd("FENCE", "plain") is None
    assert n.cmd("FENCE", "new") == t
    assert grant(n, "newer", "v") > t
    n.stop()


def test_a_rewrite_keeps_the_tokens_and_flushall_keeps_the_counter(tmp_path):
    n = node(tmp_path, "--appendfsync", "everysec")
    a = grant(n, "a", "A")
    b = grant(n, "b", "B", "MIN", "5000")
    assert b == 5000
    assert n.cmd("SET", "c", "C") == b"OK"
    assert n.cmd("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert durable.wait_until(lambda: n.info("persistence").get("aof_rewrites") == "1", 20)
    assert durable.wait_until(
        lambda: n.info("persistence").get("aof_rewrite_in_progress") == "0", 20)
    with open(n.aof, "rb") as f:
        log = f.read()
    assert b"#latch-fence 5000\r\n*5\r\n$3\r\nSET\r\n$1\r\nb\r\n" in log
    n.stop()
    n.start()
    assert n.cmd("FENCE", "a") == a
    assert n.cmd("FENCE", "b") == 5000
    assert n.cmd("FENCE", "c") is None
    assert n.cmd("FLUSHALL") == b"OK"
    assert grant(n, "a", "A2") > 5000
    n.stop()


def run_redlock(nodes, *args):
    argv = [REDLOCK(), "--nodes", ",".join("127.0.0.1:%d" % x.port for x in nodes)] + list(args)
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def test_latch_redlock_fence_gives_the_command_a_growing_token(server_factory):
    nodes = [server_factory("latch") for _ in range(3)]
    # Uneven counters, as after other keys' grants: node 2 far ahead.
    with nodes[2].conn() as c:
        assert c.cmd("SET", "other", "x", "FENCE", "MIN", "1000") == 1000
    tokens = []
    for _ in range(3):
        p = run_redlock(nodes, "--key", "job", "--ttl", "5s", "--fence", "--",
                        "sh", "-c", 'echo "token=$LATCH_FENCE"')
        assert p.returncode == 0, p.stderr
        m = re.fullmatch(r"token=(\d+)\n", p.stdout)
        assert m, p.stdout
        tokens.append(int(m.group(1)))
    assert tokens == sorted(tokens) and len(set(tokens)) == 3, tokens
    assert tokens[0] > 1000  # the maximum the majority gave
    # After the first hold every node's counter was raised to its token (the
    # floor), so the next holder's majority sees more whichever nodes it is.
    p = run_redlock(nodes, "acquire", "--key", "script", "--ttl", "5s", "--fence")
    assert p.returncode == 0, p.stderr
    token, validity, fence = p.stdout.split()
    assert int(fence) > tokens[-1]
    # Without --fence nothing changes: no LATCH_FENCE in the environment.
    p = run_redlock(nodes, "--key", "job", "--ttl", "5s", "--", "sh", "-c",
                    'echo "[${LATCH_FENCE-unset}]"')
    assert p.returncode == 0 and p.stdout == "[unset]\n", (p.stdout, p.stderr)


def test_a_crash_before_the_background_reservation_never_repeats_a_token(tmp_path):
    """The first token of a run is reserved synchronously, before it is
    given out: a kill -9 right after it, with no background step in
    between, still finds the next run above it."""
    n = node(tmp_path, "--appendfsync", "everysec")
    for round_ in range(3):
        with n.conn() as c:
            first = c.cmd("SET", "k%d" % round_, "v", "NX", "PX", 60000, "FENCE")
            # The next tokens of the block, then the crash at once.
            more = [c.cmd("SET", "k%d:%d" % (round_, i), "v", "NX", "PX", 60000, "FENCE")
                    for i in range(50)]
        assert isinstance(first, int) and more == sorted(more) and more[0] > first
        n.kill9()
        n.start()
        after = grant(n, "after%d" % round_, "v")
        assert after > more[-1], (after, more[-1])
    n.stop()
