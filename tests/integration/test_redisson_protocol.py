"""Redisson's lock protocol against latch and redis-server, side by side.

Redisson itself (the Java client) cannot run here: its jars come only from
Maven Central, which neither this machine nor CI reaches (Debian packages
and the npm registry are the only registries; Debian ships no Redisson nor
any other Java Redis client). So this test drives, with raw RESP from
Python, the data model and the command sequence Redisson's objects use, in
scripts written for this test (Redisson's own texts are not copied):

  * RLock: a hash {owner: hold count} with a PEXPIRE lease; acquire returns
    nil or the holder's PTTL; the watchdog's renewal is an owner-checked
    PEXPIRE; the last release DELs and PUBLISHes on the lock's channel,
    where a blocked waiter SUBSCRIBEd before it tried.
  * RFairLock: a waiters' list and a sorted set of their deadlines; a
    release publishes on <channel>:<head owner> (the waiter PSUBSCRIBEs
    here) and only the head may take the lock.
  * RReadWriteLock: a hash with a 'mode' field; readers share, a writer
    excludes.
  * RSemaphore and RCountDownLatch: a counter set once, DECRBY/INCRBY, a
    PUBLISH on release and when the count reaches zero.

Each scenario runs against latch and redis-server, in RESP2 and RESP3: every
reply's bytes (a remaining time reduced to "within the lease") must equal
redis-server's, and the lock semantics are asserted on what was seen.
"""

import time

import pytest

import latchtest as lt

ACQUIRE = """
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
return redis.call('pttl', KEYS[1])"""

RELEASE = """
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
local left = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if left > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
return 1"""

RENEW = """
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], ARGV[1])
  return 1
end
return 0"""

# KEYS: lock, queue, deadlines. ARGV: lease, owner, wait, now.
FAIR_ACQUIRE = """
while true do
  local head = redis.call('lindex', KEYS[2], 0)
  if not head then break end
  if tonumber(redis.call('zscore', KEYS[3], head)) > tonumber(ARGV[4]) then break end
  redis.call('zrem', KEYS[3], head)
  redis.call('lpop', KEYS[2])
end
if redis.call('exists', KEYS[1]) == 0 and
   (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
  redis.call('lpop', KEYS[2])
  redis.call('zrem', KEYS[3], ARGV[2])
  for _, w in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
    redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), w)
  end
  redis.call('hset', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
local mine = redis.call('zscore', KEYS[3], ARGV[2])
if mine then return mine - tonumber(ARGV[3]) - tonumber(ARGV[4]) end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last then ttl = tonumber(redis.call('zscore', KEYS[3], last)) - tonumber(ARGV[4])
else ttl = redis.call('pttl', KEYS[1]) end
if redis.call('zadd', KEYS[3], ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]), ARGV[2]) == 1 then
  redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl"""

# KEYS: lock, queue, deadlines, channel. ARGV: message, lease, owner.
FAIR_RELEASE = """
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then return nil end
if redis.call('hincrby', KEYS[1], ARGV[3], -1) > 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 0
end
redis.call('del', KEYS[1])
local head = redis.call('lindex', KEYS[2], 0)
if head then redis.call('publish', KEYS[4] .. ':' .. head, ARGV[1]) end
return 1"""

# KEYS: lock. ARGV: lease, owner.
READ_ACQUIRE = """
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false or mode == 'read' then
  redis.call('hset', KEYS[1], 'mode', 'read')
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), ARGV[1]))
  return nil
end
return redis.call('pttl', KEYS[1])"""

WRITE_ACQUIRE = """
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
  redis.call('pexpire', KEYS[1], ARGV[1])
  return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  return nil
end
return redis.call('pttl', KEYS[1])"""

# KEYS: lock, channel. ARGV: message, owner.
RW_RELEASE = """
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then return nil end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) <= 0 then redis.call('hdel', KEYS[1], ARGV[2]) end
if redis.call('hlen', KEYS[1]) == 1 then
  redis.call('del', KEYS[1])
  redis.call('publish', KEYS[2], ARGV[1])
  return 1
end
return 0"""

SET_ONCE = """
if redis.call('exists', KEYS[1]) == 1 then return 0 end
redis.call('set', KEYS[1], ARGV[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1"""

TAKE = """
local have = tonumber(redis.call('get', KEYS[1]) or '0')
if have >= tonumber(ARGV[1]) then redis.call('decrby', KEYS[1], ARGV[1]) return 1 end
return 0"""

GIVE = """
local now = redis.call('incrby', KEYS[1], ARGV[1])
redis.call('publish', KEYS[2], now)"""

COUNT_DOWN = """
local left = redis.call('decr', KEYS[1])
if left <= 0 then redis.call('del', KEYS[1]) end
if left == 0 then redis.call('publish', KEYS[2], ARGV[1]) end
return left"""

LEASE = 3000


class Client(object):
    """One connection, RESP2 or (after HELLO 3, as Redisson's protocol
    setting RESP3 does) RESP3. Every reply's raw bytes are recorded in
    `seen`, a remaining time as 'ttl' when within (0, limit]."""

    def __init__(self, port, seen, proto):
        self.conn = lt.Conn(port)
        self.seen = seen
        if proto == 3:
            self.conn.send(lt.encode("HELLO", "3"))
            self.conn.read_raw()  # the server's description: differs by design

    def _reply(self, ttl_limit=None):
        raw = self.conn.read_raw(timeout=5)
        reply = lt.parse_reply(raw)[0]
        if ttl_limit is not None and isinstance(reply, int) and 0 < reply <= ttl_limit:
            self.seen.append("ttl")
        else:
            self.seen.append(raw)
        return reply

    def eval(self, script, keys, *argv, ttl_limit=None):
        self.conn.send(lt.encode("EVAL", script, len(keys), *keys, *argv))
        return self._reply(ttl_limit)

    def cmd(self, *args):
        self.conn.send(lt.encode(*args))
        return self._reply()

    def message(self):
        return self._reply()


def rlock(port, proto):
    seen = []
    a, b, sub = (Client(port, seen, proto) for _ in range(3))
    lock, channel = "{L}", "redisson_lock__channel:{L}"
    obs = {}
    obs["first"] = a.eval(ACQUIRE, [lock], LEASE, "a:1")
    obs["reentered"] = a.eval(ACQUIRE, [lock], LEASE, "a:1")
    obs["holds"] = a.cmd("HGET", lock, "a:1")
    obs["other_refused"] = b.eval(ACQUIRE, [lock], LEASE, "b:1", ttl_limit=LEASE) is not None
    # The waiter subscribes first, then tries: a release cannot slip between.
    sub.cmd("SUBSCRIBE", channel)
    # The watchdog renews at a third of the lease; past the lease the lock stands.
    for _ in range(4):
        time.sleep(LEASE / 3000.0)
        a.eval(RENEW, [lock], LEASE, "a:1")
    obs["held_past_lease"] = a.cmd("EXISTS", lock)
    obs["stranger_renew"] = b.eval(RENEW, [lock], LEASE, "b:1")
    obs["stranger_release"] = b.eval(RELEASE, [lock, channel], "0", LEASE, "b:1", "publish")
    obs["release_1"] = a.eval(RELEASE, [lock, channel], "0", LEASE, "a:1", "publish")
    obs["still_locked"] = a.cmd("EXISTS", lock)
    obs["release_2"] = a.eval(RELEASE, [lock, channel], "0", LEASE, "a:1", "publish")
    obs["woken_by"] = sub.message()
    obs["waiter_takes"] = b.eval(ACQUIRE, [lock], LEASE, "b:1")
    # A lease given explicitly (tryLock with leaseTime) ends without a renewal.
    obs["leased"] = a.eval(ACQUIRE, ["{L2}"], 300, "a:1")
    time.sleep(0.6)
    obs["lease_ended"] = a.cmd("EXISTS", "{L2}")
    return obs, seen


def fair(port, proto):
    seen = []
    clients = {n: Client(port, seen, proto) for n in ("a", "b", "c", "d")}
    sub = Client(port, seen, proto)
    keys = ["{F}", "redisson_lock_queue:{F}", "redisson_lock_timeout:{F}"]
    channel = "redisson_lock__channel:{F}"
    sub.cmd("PSUBSCRIBE", channel + ":*")

    def now():
        return int(time.time() * 1000)

    obs = {"first": clients["a"].eval(FAIR_ACQUIRE, keys, 30000, "a", 5000, now())}
    for n in ("b", "c", "d"):
        clients[n].eval(FAIR_ACQUIRE, keys, 30000, n, 5000, now(), ttl_limit=60000)
    obs["queue"] = clients["a"].cmd("LRANGE", keys[1], 0, -1)
    order, served, holder = [], set(), "a"
    for _ in range(3):
        clients[holder].eval(FAIR_RELEASE, keys + [channel], "0", 30000, holder)
        woken = sub.message()[2].decode().rsplit(":", 1)[1]
        # Every waiter retries (as each wakes on its own timer): only the head wins.
        winners = [n for n in ("b", "c", "d") if n not in served
                   and clients[n].eval(FAIR_ACQUIRE, keys, 30000, n, 5000, now(),
                                       ttl_limit=60000) is None]
        order.append((woken, winners))
        served.add(woken)
        holder = woken
    obs["order"] = order
    obs["left"] = clients["a"].cmd("EXISTS", keys[1], keys[2])
    return obs, seen


def rwlock(port, proto):
    seen = []
    r1, r2, w = (Client(port, seen, proto) for _ in range(3))
    keys, channel = ["{RW}"], "redisson_rwlock:{RW}"
    obs = {"reader_1": r1.eval(READ_ACQUIRE, keys, LEASE, "r1"),
           "reader_2": r2.eval(READ_ACQUIRE, keys, LEASE, "r2")}
    obs["writer_refused"] = w.eval(WRITE_ACQUIRE, keys, LEASE, "w", ttl_limit=LEASE) is not None
    obs["release_r1"] = r1.eval(RW_RELEASE, keys + [channel], "0", "r1")
    obs["writer_still_refused"] = w.eval(WRITE_ACQUIRE, keys, LEASE, "w",
                                         ttl_limit=LEASE) is not None
    obs["release_r2"] = r2.eval(RW_RELEASE, keys + [channel], "0", "r2")
    obs["writer"] = w.eval(WRITE_ACQUIRE, keys, LEASE, "w")
    obs["reader_refused"] = r1.eval(READ_ACQUIRE, keys, LEASE, "r1", ttl_limit=LEASE) is not None
    obs["writer_reenters"] = w.eval(WRITE_ACQUIRE, keys, LEASE, "w")
    return obs, seen


def semaphore_and_latch(port, proto):
    seen = []
    a, b, sub = (Client(port, seen, proto) for _ in range(3))
    sem, sem_ch = "{sem}", "redisson_sc:{sem}"
    sub.cmd("SUBSCRIBE", sem_ch)
    obs = {"set": a.eval(SET_ONCE, [sem, sem_ch], 2),
           "set_again": a.eval(SET_ONCE, [sem, sem_ch], 5)}
    obs["set_note"] = sub.message()
    obs["take_2"] = a.eval(TAKE, [sem], 2)
    obs["take_more"] = b.eval(TAKE, [sem], 1)
    a.eval(GIVE, [sem, sem_ch], 1)
    obs["give_note"] = sub.message()
    obs["take_after_give"] = b.eval(TAKE, [sem], 1)
    obs["permits"] = a.cmd("GET", sem)
    cdl, cdl_ch = "{cdl}", "redisson_countdownlatch__channel__{cdl}"
    sub.cmd("SUBSCRIBE", cdl_ch)
    obs["count_set"] = a.eval(SET_ONCE, [cdl, cdl_ch], 2)
    obs["count_note"] = sub.message()
    obs["downs"] = [a.eval(COUNT_DOWN, [cdl, cdl_ch], "0"), b.eval(COUNT_DOWN, [cdl, cdl_ch], "0")]
    obs["open_note"] = sub.message()
    obs["gone"] = a.cmd("EXISTS", cdl)
    return obs, seen


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def both(request, server_factory):
    return server_factory("latch"), server_factory("redis"), request.param


def run_both(both, scenario):
    latch, redis, proto = both
    got_latch, seen_latch = scenario(latch.port, proto)
    got_redis, seen_redis = scenario(redis.port, proto)
    # Every reply the scenario saw, in order, byte for byte, is redis-server's.
    assert seen_latch == seen_redis
    assert got_latch == got_redis
    return got_latch


def test_rlock_reentrancy_watchdog_and_waking_the_waiter(both):
    got = run_both(both, rlock)
    assert got["first"] is None and got["reentered"] is None and got["holds"] == b"2"
    assert got["other_refused"]
    assert got["held_past_lease"] == 1
    assert got["stranger_renew"] == 0 and got["stranger_release"] is None
    assert got["release_1"] == 0 and got["still_locked"] == 1 and got["release_2"] == 1
    assert got["woken_by"] == [b"message", b"redisson_lock__channel:{L}", b"0"]
    assert got["waiter_takes"] is None
    assert got["leased"] is None and got["lease_ended"] == 0


def test_fair_lock_serves_waiters_in_arrival_order(both):
    got = run_both(both, fair)
    assert got["first"] is None
    assert got["queue"] == [b"b", b"c", b"d"]
    assert got["order"] == [("b", ["b"]), ("c", ["c"]), ("d", ["d"])]
    assert got["left"] == 0


def test_read_write_lock_shares_readers_and_excludes_the_writer(both):
    got = run_both(both, rwlock)
    assert got["reader_1"] is None and got["reader_2"] is None
    assert got["writer_refused"] and got["writer_still_refused"]
    assert got["release_r1"] == 0 and got["release_r2"] == 1
    assert got["writer"] is None and got["reader_refused"] and got["writer_reenters"] is None


def test_semaphore_permits_and_count_down_latch(both):
    got = run_both(both, semaphore_and_latch)
    assert got["set"] == 1 and got["set_again"] == 0
    assert got["set_note"] == [b"message", b"redisson_sc:{sem}", b"2"]
    assert got["take_2"] == 1 and got["take_more"] == 0
    assert got["give_note"] == [b"message", b"redisson_sc:{sem}", b"1"]
    assert got["take_after_give"] == 1 and got["permits"] == b"0"
    assert got["count_set"] == 1
    assert got["downs"] == [1, 0]
    assert got["open_note"] == [b"message", b"redisson_countdownlatch__channel__{cdl}", b"0"]
    assert got["gone"] == 0
