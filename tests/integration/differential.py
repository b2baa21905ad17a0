"""The differential harness: the same requests go to Debian's redis-server
7.0 and to latch (the `pair` fixture of conftest.py), and the raw replies
must be identical, byte for byte, in RESP2 and again after HELLO 3.

Each command family has its own test_differential_<family>.py holding its
scripts: lists of requests, each a tuple of arguments (or Raw bytes), run
from FLUSHALL on fresh connections by check_script.
"""

import time

import latchtest as lt
from latchtest import encode


class Raw(object):
    """A step that sends raw bytes and expects `replies` replies."""

    def __init__(self, data, replies=1):
        self.data = data
        self.replies = replies

    def __repr__(self):
        return "Raw(%r)" % (self.data[:80],)


class Unordered(object):
    """A step whose reply lists elements in an order that depends on hashing
    (a hashtable's order is latch's own, not redis-server's): the two replies
    must have the same shape (RESP type bytes of every aggregate) and the
    same elements, compared sorted. With pairs=True a flat list is read as
    (field, value) pairs and the pairs are sorted (HGETALL in RESP2,
    HRANDFIELD … WITHVALUES)."""

    def __init__(self, *args, **kw):
        self.args = args
        self.pairs = kw.get("pairs", False)

    def __repr__(self):
        return "Unordered%r" % (self.args,)

    def canon(self, raw):
        value, end = lt.parse_reply(raw)
        assert end == len(raw), raw
        return (_shape(raw), _sorted(value, self.pairs))


def _shape(raw):
    """The type byte of the reply and, for an aggregate, of its elements'
    aggregates: what must match exactly even when the order may not."""
    return bytes(raw[:1])


def _sorted(value, pairs):
    if isinstance(value, lt.OrderedMap):
        return sorted((repr(k), repr(_sorted(v, False))) for k, v in value.pairs)
    if isinstance(value, list):
        items = [_sorted(v, False) for v in value]
        if pairs and all(not isinstance(v, list) for v in items):
            items = [tuple(items[i:i + 2]) for i in range(0, len(items), 2)]
        return sorted(items, key=repr)
    return value


def run_script(pair, steps):
    """Sends every step to both servers; returns the list of mismatches."""
    mismatches = []
    for i, step in enumerate(steps):
        if isinstance(step, Raw):
            data, n = step.data, step.replies
        elif isinstance(step, Unordered):
            data, n = encode(*step.args), 1
        else:
            data, n = encode(*step), 1
        got, want = pair.send_raw(data, n)
        if isinstance(step, Unordered):
            if step.canon(got) != step.canon(want):
                mismatches.append("step %d %r (unordered):\n    latch: %r\n    redis: %r" %
                                  (i, step, got, want))
        elif got != want:
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

# The largest integer Redis takes (LLONG_MAX): the edge of every integer
# argument's range (SET EX, EXPIRE, WAIT's timeout…).
LLONG_MAX = "9223372036854775807"


# ---------------------------------------------------------------- blocking commands
# Several connections to each server in lockstep: a client blocks, another
# writes, and the blocked client's reply must be Redis's.


class Clients(object):
    """n more connections to each server (a Pair each), in lockstep."""

    def __init__(self, latch_server, redis_server, n, proto):
        self.pairs = [lt.Pair(latch_server.port, redis_server.port) for _ in range(n)]
        for p in self.pairs:
            switch_proto(p, proto)

    def send(self, i, *args):
        """Sends without reading (the client blocks)."""
        data = encode(*args)
        self.pairs[i].latch.send(data)
        self.pairs[i].redis.send(data)

    def read(self, i):
        p = self.pairs[i]
        return p.latch.read_n_raw(1), p.redis.read_n_raw(1)

    def close(self):
        for p in self.pairs:
            p.close()


def blocked_clients(conn):
    return lt.info_fields(conn.cmd("INFO", "clients"))["blocked_clients"]


def wait_blocked(pair, n):
    """Until both servers report n blocked clients."""
    deadline = time.time() + 5
    got = None
    while time.time() < deadline:
        got = (blocked_clients(pair.latch), blocked_clients(pair.redis))
        if got == (str(n), str(n)):
            return
        time.sleep(0.01)
    raise AssertionError("blocked_clients never reached %d: %r" % (n, got))


def blocked_id(conn):
    """The id of the one client CLIENT LIST shows blocked (flags=b)."""
    listing = conn.cmd("CLIENT", "LIST")
    lines = [l for l in listing.decode().splitlines() if " flags=b " in l]
    assert len(lines) == 1, listing
    return lines[0].split()[0][len("id="):]


def check_blocking(pair, latch_server, redis_server, proto, name, blockers, writes, order):
    """A blocking scenario: the blocking requests (client index, args), each
    sent once the one before has blocked on both servers; then the writes of
    the main connection (each reply must match); then the reply each blocked
    client gets, read in `order` (client indexes); at the end nobody waits."""
    switch_proto(pair, proto)
    clients = Clients(latch_server, redis_server, 1 + max(i for i, _ in blockers), proto)
    try:
        for n, (i, args) in enumerate(blockers, 1):
            clients.send(i, *args)
            wait_blocked(pair, n)
        for w in writes:
            got, want = pair.both(*w)
            assert got == want, (name, w, got, want)
        for i in order:
            got, want = clients.read(i)
            assert got == want, (name, i, got, want)
        wait_blocked(pair, 0)
    finally:
        clients.close()
