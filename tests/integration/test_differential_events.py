"""Differential family: the keyspace events of the collection commands
(hashes, sets, sorted sets, lists, SORT … STORE, the blocking pops served
later) against redis-server 7.0, in RESP2 and RESP3.

Each server gets three connections: a subscriber (`PSUBSCRIBE __key*__:*`),
a writer, and a client that blocks. After every step the subscriber sends
PING and reads up to its reply: what came before it is every notification
the step caused, and those bytes — event names, classes, keys, order —
must be identical on both servers, as must the step's reply. The class
settings (`notify-keyspace-events`) vary per script: KEA sees everything,
the narrower ones check that each event is sent in its own class.
"""

import pytest

import latchtest as lt
from latchtest import encode

PROTOS = [2, 3]


class Any(object):
    """A step whose reply is random (SPOP, SRANDMEMBER): only its events are
    compared."""

    def __init__(self, *args):
        self.args = args


class Block(object):
    """A step sent on the blocking connection, not read: a wait that a later
    step serves."""

    def __init__(self, *args):
        self.args = args


class Unblocked(object):
    """Reads (and compares) the blocked connection's reply."""


class Side(object):
    """The connections of one server."""

    def __init__(self, port, proto):
        self.sub, self.writer, self.blocker = (lt.Conn(port) for _ in range(3))
        for c in (self.sub, self.writer, self.blocker):
            if proto == 3:
                c.send(encode("HELLO", "3"))
                c.read_raw()
        self.writer.send(encode("FLUSHALL"))
        assert self.writer.read_raw() == b"+OK\r\n"
        self.sub.send(encode("PSUBSCRIBE", "__key*__:*"))
        self.sub.read_raw()
        self.pong = (b"+PONG\r\n" if proto == 3 else encode("pong", ""))

    def events(self):
        """The notifications pushed since the last call, up to a PING's reply."""
        self.sub.send(encode("PING"))
        got = []
        while True:
            frame = self.sub.read_raw()
            if frame == self.pong:
                return got
            got.append(frame)

    def close(self):
        for c in (self.sub, self.writer, self.blocker):
            c.close()


def run(latch_port, redis_port, classes, steps, proto):
    sides = [Side(latch_port, proto), Side(redis_port, proto)]
    mismatches = []
    try:
        for side in sides:
            side.writer.send(encode("CONFIG", "SET", "notify-keyspace-events", classes))
            assert side.writer.read_raw() == b"+OK\r\n"
        for n, step in enumerate(steps):
            replies = []
            for side in sides:
                if isinstance(step, Block):
                    side.blocker.send(encode(*step.args))
                    replies.append(None)
                elif isinstance(step, Unblocked):
                    replies.append(side.blocker.read_raw())
                else:
                    args = step.args if isinstance(step, Any) else step
                    side.writer.send(encode(*args))
                    reply = side.writer.read_raw()
                    replies.append(None if isinstance(step, Any) else reply)
            if replies[0] != replies[1]:
                mismatches.append("step %d %r reply:\n    latch: %r\n    redis: %r" %
                                  (n, getattr(step, "args", step), replies[0], replies[1]))
            got, want = sides[0].events(), sides[1].events()
            if got != want:
                mismatches.append("step %d %r events:\n    latch: %r\n    redis: %r" %
                                  (n, getattr(step, "args", step), got, want))
    finally:
        for side in sides:
            side.close()
    assert not mismatches, "latch and redis-server differ:\n" + "\n".join(mismatches)


HASHES = [
    ("HSET", "h", "a", "1", "b", "2"),
    ("HSET", "h", "a", "1"),  # nothing added: still "hset"
    ("HMSET", "h", "c", "3"),
    ("HSETNX", "h", "a", "x"),  # there already: no event
    ("HSETNX", "h", "d", "4"),
    ("HINCRBY", "h", "n", "5"),
    ("HINCRBY", "h", "a", "x"),  # an error: no event
    ("HINCRBYFLOAT", "h", "f", "1.5"),
    ("HDEL", "h", "missing"),  # nothing removed: no event
    ("HDEL", "h", "a", "b", "c"),
    ("HGET", "h", "d"),
    ("HGET", "nohash", "x"),  # a miss ("m" is not in A)
    ("HDEL", "h", "d", "n", "f"),  # the last fields: hdel, then del
    ("HSET", "h2", "x", "1"),
    ("EXPIRE", "h2", "100"),
    ("RENAME", "h2", "h3"),
    ("COPY", "h3", "h4"),
    ("MOVE", "h4", "1"),
    ("DEL", "h3"),
]

SETS = [
    ("SADD", "s", "a", "b", "c"),
    ("SADD", "s", "a"),  # nothing added: no event
    ("SREM", "s", "zz"),
    ("SREM", "s", "a"),
    ("SMOVE", "s", "d", "b"),  # srem on the source, new + sadd on the destination
    ("SADD", "d", "c"),
    ("SMOVE", "s", "d", "c"),  # the source empties (del); c is in d already (no sadd)
    ("SMOVE", "s", "d", "c"),  # no source: nothing
    ("SADD", "x", "1", "2", "3"),
    ("SINTERSTORE", "i", "x", "d"),  # empty result, no destination: nothing
    ("SUNIONSTORE", "u", "x", "d"),
    ("SUNIONSTORE", "u", "x"),  # an existing destination: no "new"
    ("SDIFFSTORE", "df", "x", "d"),
    ("SINTERSTORE", "i", "x", "x"),
    ("SINTERSTORE", "i", "x", "nothing"),  # empty: the destination goes (del)
    ("SDIFFSTORE", "u", "x", "x"),  # empty: del
    ("SET", "str", "v"),
    ("SUNIONSTORE", "str", "x"),  # a string overwritten
    ("SPOP", "missing"),
    Any("SPOP", "x"),
    ("SADD", "p", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"),
    Any("SPOP", "p", "1"),  # one by one
    Any("SPOP", "p", "8"),  # most of it: rebuilt from what stays, no "new"
    ("SPOP", "p", "0"),
    Any("SPOP", "p", "5"),  # all of it: spop, del
    ("SADD", "q", "only"),
    ("SPOP", "q"),  # the last member: spop, del
    Any("SRANDMEMBER", "x"),
]

ZSETS = [
    ("ZADD", "z", "1", "a", "2", "b", "3", "c"),
    ("ZADD", "z", "1", "a"),  # no change: no event
    ("ZADD", "z", "XX", "5", "zz"),
    ("ZADD", "z", "NX", "9", "a"),
    ("ZADD", "z", "CH", "7", "a"),
    ("ZADD", "z", "INCR", "1", "b"),  # zincr
    ("ZINCRBY", "z", "2", "d"),
    ("ZADD", "z", "x", "a"),  # an error: nothing
    ("ZADD", "nz", "XX", "1", "a"),  # no key: nothing
    ("ZREM", "z", "nope"),
    ("ZREM", "z", "a"),
    ("ZADD", "w", "1", "x", "2", "y", "3", "z"),
    ("ZUNIONSTORE", "zu", "2", "z", "w"),
    ("ZUNIONSTORE", "zu", "1", "w"),  # overwritten: no "new"
    ("ZINTERSTORE", "zi", "2", "z", "w"),  # empty, no destination: nothing
    ("ZINTERSTORE", "zu", "2", "z", "w"),  # empty: del
    ("ZDIFFSTORE", "zd", "2", "z", "w"),
    ("ZRANGESTORE", "zr", "w", "0", "1"),
    ("ZRANGESTORE", "zr", "w", "10", "20"),  # empty: del
    ("ZREMRANGEBYRANK", "w", "0", "0"),
    ("ZREMRANGEBYSCORE", "w", "2", "2"),
    ("ZREMRANGEBYSCORE", "w", "100", "200"),  # nothing removed
    ("ZADD", "lex", "0", "a", "0", "b", "0", "c"),
    ("ZREMRANGEBYLEX", "lex", "[a", "[b"),
    ("ZREMRANGEBYLEX", "lex", "-", "+"),  # the last: del
    ("ZPOPMIN", "z"),
    ("ZPOPMAX", "z", "1"),
    ("ZPOPMIN", "z", "0"),  # nothing
    ("ZPOPMIN", "missing"),
    ("ZADD", "m", "1", "a", "2", "b"),
    ("ZMPOP", "2", "missing", "m", "MAX", "COUNT", "5"),  # zpopmax, del
    ("ZPOPMAX", "w", "10"),
    ("ZPOPMIN", "z", "10"),
]

LISTS = [
    ("LPUSH", "l", "a", "b"),
    ("RPUSH", "l", "c"),
    ("LPUSHX", "l", "x"),
    ("RPUSHX", "nolist", "x"),  # no key: nothing
    ("LSET", "l", "0", "y"),
    ("LSET", "l", "99", "y"),  # an error: nothing
    ("LINSERT", "l", "BEFORE", "c", "i"),
    ("LINSERT", "l", "AFTER", "nope", "i"),  # no pivot: nothing
    ("LREM", "l", "0", "nope"),
    ("LREM", "l", "0", "i"),
    ("LTRIM", "l", "0", "-1"),  # keeps all: "ltrim" all the same
    ("LTRIM", "l", "0", "2"),
    ("LPOP", "l"),
    ("RPOP", "l", "1"),
    ("LPOP", "l", "0"),
    ("LMOVE", "l", "l2", "LEFT", "RIGHT"),  # new + rpush on l2, lpop on l, del l
    ("RPUSH", "l", "1", "2", "3"),
    ("RPOPLPUSH", "l", "l2"),
    ("LMOVE", "l2", "l2", "LEFT", "RIGHT"),  # one list: push then pop
    ("LMOVE", "missing", "l2", "LEFT", "LEFT"),
    ("LMPOP", "2", "missing", "l", "LEFT", "COUNT", "10"),  # lpop, del
    ("RPUSH", "t", "1", "2"),
    ("LTRIM", "t", "5", "10"),  # ltrim, del
    ("RPUSH", "r", "x", "x"),
    ("LREM", "r", "0", "x"),  # lrem, del
    ("RPUSH", "b", "1"),
    ("BLPOP", "b", "0"),  # served now: lpop, del
    ("RPUSH", "srt", "3", "1", "2"),
    ("DEL", "l2", "srt"),
]

SORTS = [
    ("SADD", "s", "3", "1", "2"),
    ("SORT", "s", "STORE", "dst"),  # new, sortstore
    ("SORT", "s", "STORE", "dst"),  # overwritten: no "new"
    ("SORT", "s", "LIMIT", "5", "5", "STORE", "dst"),  # empty: del
    ("SORT", "s", "LIMIT", "5", "5", "STORE", "dst"),  # nothing to delete
    ("SORT", "missing", "STORE", "dst"),
    ("SET", "str", "v"),
    ("SORT", "s", "DESC", "STORE", "str"),
    ("LRANGE", "str", "0", "-1"),
]

BLOCKING = [
    Block("BLPOP", "q1", "q2", "0"),
    ("RPUSH", "q2", "a", "b"),  # rpush; then the served pop: lpop
    Unblocked(),
    Block("BRPOP", "q3", "0"),
    ("LPUSH", "q3", "only"),  # lpush; served: rpop, del
    Unblocked(),
    Block("BLMOVE", "src", "dst", "RIGHT", "LEFT", "0"),
    ("RPUSH", "src", "x"),  # rpush; served: new + lpush on dst, rpop, del on src
    Unblocked(),
    Block("BRPOPLPUSH", "src", "dst", "0"),
    ("RPUSH", "src", "y", "z"),
    Unblocked(),
    Block("BLMPOP", "0", "1", "m", "LEFT", "COUNT", "5"),
    ("RPUSH", "m", "1", "2"),  # served: lpop, del
    Unblocked(),
    ("DEL", "src", "dst", "q2"),
]

# The same writes from a transaction and a script: the events come out
# with the effects, in order, whatever path the command came by.
WRAPPED = [
    ("MULTI",),
    ("RPUSH", "l", "a", "b"),
    ("HSET", "h", "f", "v"),
    ("LPOP", "l", "2"),
    ("EXEC",),
    ("EVAL", "redis.call('SADD', KEYS[1], 'x'); redis.call('ZADD', KEYS[2], 1, 'm');"
     " redis.call('SREM', KEYS[1], 'x'); return redis.call('ZPOPMIN', KEYS[2])", "2", "s", "z"),
    ("EVAL", "return redis.call('HDEL', KEYS[1], 'f')", "1", "h"),
]

SCRIPTS = {
    "multi_and_eval": WRAPPED,
    "hashes": HASHES,
    "sets": SETS,
    "zsets": ZSETS,
    "lists": LISTS,
    "sort_store": SORTS,
    "blocking_pops": BLOCKING,
}

# Every script under KEA, and under the narrower settings that isolate one
# class (and K or E alone): events of other classes must not leak through;
# KEAn puts the "new" events among the others, where their order shows.
CLASSES = ["KEA", "KEAn", "Kh", "Es", "Ez", "El", "Eg", "KEn", "KElg"]


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("classes", CLASSES)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_events(latch_server, redis_server, script, classes, proto):
    run(latch_server.port, redis_server.port, classes, SCRIPTS[script], proto)
