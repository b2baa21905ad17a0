"""latch-chaos --fence in CI: RedLock's fencing tokens (two steps: grant,
then raise the floor on a majority) keep growing with the order of holds
even when mutual exclusion itself breaks. The run turns the restart
quarantine off under appendfsync no, so amnesia faults let two workers hold
the lock at once (test_chaos.py shows the same); the token order must hold
all the same: every hold that began after another's token was known carries
a larger one. tests/chaos/fencing_test.cc shows the check failing on a
fabricated history."""

import os
import re
import subprocess

import latchtest as lt

RUN = ("--node-count", "5", "--workers", "6", "--duration", "10s", "--seed", "8", "--ttl", "1s",
       "--appendonly", "yes", "--appendfsync", "no", "--quarantine", "never", "--fence")


def test_tokens_keep_their_order_while_mutual_exclusion_breaks():
    argv = [os.path.join(lt.build_dir(), "tools", "latch-chaos"), "--server",
            lt.latch_binary()] + list(RUN)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    out = p.stdout
    lines = out.splitlines()
    assert lines and re.fullmatch(r"violations: \d+", lines[-1]), out + p.stderr
    assert lines[-2] == "token order violations: 0", out
    assert int(lines[-1].split()[1]) >= 1, out  # the holds did overlap
    assert p.returncode == 1, out
    acquisitions = int(re.search(r"^acquisitions: (\d+)", out, re.M).group(1))
    assert acquisitions >= 5, out
    # The check saw every hold's token (a hold without one would be skipped,
    # and a run that lost them all would pass vacuously).
    assert re.search(r"^fenced holds: (\d+) of (\d+)$", out, re.M).groups() == (
        str(acquisitions), str(acquisitions)), out
