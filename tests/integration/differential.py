"""The differential harness: the same requests go to Debian's redis-server
7.0 and to latch (the `pair` fixture of conftest.py), and the raw replies
must be identical, byte for byte, in RESP2 and again after HELLO 3.

Each command family has its own test_differential_<family>.py holding its
scripts: lists of requests, each a tuple of arguments (or Raw bytes), run
from FLUSHALL on fresh connections by check_script.
"""

import latchtest as lt
from latchtest import encode


class Raw(object):
    """A step that sends raw bytes and expects `replies` replies."""

    def __init__(self, data, replies=1):
        self.data = data
        self.replies = replies

    def __repr__(self):
        return "Raw(%r)" % (self.data[:80],)


def run_script(pair, steps):
    """Sends every step to both servers; returns the list of mismatches."""
    mismatches = []
    for i, step in enumerate(steps):
        if isinstance(step, Raw):
            data, n = step.data, step.replies
        else:
            data, n = encode(*step), 1
        got, want = pair.send_raw(data, n)
        if got != want:
            mismatches.append("step %d %r:\n    latch: %r\n    redis: %r" % (i, step, got, want))
    return mismatches


def check_script(pair, steps):
    mismatches = run_script(pair, steps)
    assert not mismatches, "latch and redis-server differ:\n" + "\n".join(mismatches)


def switch_proto(pair, proto):
    """HELLO <proto> on both; checks the replies match apart from version and id."""
    if proto == 2:
        return
    got, want = pair.both("HELLO", str(proto))
    assert_hello_equivalent(got, want, proto)


def assert_hello_equivalent(latch_raw, redis_raw, proto):
    """HELLO replies agree except for `version` (latch reports 8.4.0) and `id`."""
    lv = lt.pairs_to_dict(lt.parse_reply(latch_raw)[0])
    rv = lt.pairs_to_dict(lt.parse_reply(redis_raw)[0])
    # Same shape on the wire: a map in RESP3, a flat array in RESP2.
    assert latch_raw[:3] == redis_raw[:3], (latch_raw, redis_raw)
    assert list(lv.keys()) == list(rv.keys())
    for k in lv:
        if k in (b"version", b"id"):
            continue
        assert lv[k] == rv[k], (k, lv[k], rv[k])
    assert lv[b"proto"] == proto
    version = tuple(int(x) for x in lv[b"version"].split(b"."))
    # Lock libraries (Spring's RedisLockRegistry) only use DELEX/SET IFEQ when
    # the server says it is at least Redis 8.4.
    assert version >= (8, 4, 0), lv[b"version"]


PROTOS = [2, 3]
