// npm redis-semaphore 5.8.0's counting semaphores with an ioredis client,
// as its README shows: Semaphore (one permit per holder) and MultiSemaphore
// (several permits per holder), on one server. Each keeps its permits in a
// sorted set `semaphore:<key>`: one member per permit, scored with the time
// it was taken or last refreshed. Acquiring runs a Lua script that drops
// the expired permits (ZREMRANGEBYSCORE key -inf now-lockTimeout), counts
// the rest (ZCARD) and adds its own (ZADD) with a PEXPIRE of the key;
// refreshing re-ZADDs them if still present (ZSCORE); releasing is a plain
// ZREM (Semaphore) or a script that ZREMs every permit (MultiSemaphore).
//
// Steps: acquire up to the limit, contention (one more is refused),
// refresh (held past several lock timeouts), release (a waiter gets in),
// expiry of a crashed holder's permit (never refreshed nor released), for
// each of the two.
'use strict';

const { Semaphore, MultiSemaphore } = require('redis-semaphore');
const { ports, step, check, sleep, ioredisClients, main } = require('./harness');

main(async () => {
  const [client] = await ioredisClients(ports());
  const lost = [];
  const options = {
    lockTimeout: 1000,
    acquireTimeout: 300,
    retryInterval: 20,
    refreshInterval: 200,
    onLockLost: (err) => lost.push(err),
  };
  const members = async (key) => client.zrange(key, 0, -1);

  // ---- Semaphore: limit 2
  const key = 'semaphore:sem';
  const a = new Semaphore(client, 'sem', 2, options);
  const b = new Semaphore(client, 'sem', 2, options);
  await a.acquire();
  await b.acquire();
  check((await client.zcard(key)) === 2, 'two permits');
  check((await client.zscore(key, a.identifier)) !== null, 'a holds a permit');
  const pttl = await client.pttl(key);
  check(pttl > 0 && pttl <= 1000, 'the set expires with the lock timeout: ' + pttl);
  step('acquired');

  const c = new Semaphore(client, 'sem', 2, { lockTimeout: 1000, acquireTimeout: 200, retryInterval: 20 });
  check((await c.tryAcquire()) === false, 'a third holder is refused');
  check((await client.zcard(key)) === 2, 'still two permits');
  step('contention');

  // Held for 2.5 lock timeouts: only the refresh script keeps the permits.
  const before = Number(await client.zscore(key, a.identifier));
  await sleep(2500);
  check(lost.length === 0, 'permit lost: ' + lost);
  const after = Number(await client.zscore(key, a.identifier));
  check(after > before, 'the refresh moved the score on: ' + before + ' -> ' + after);
  check((await c.tryAcquire()) === false, 'still refused');
  step('refreshed');

  await a.release();
  check((await client.zscore(key, a.identifier)) === null, 'released permit gone');
  check((await c.tryAcquire()) === true, 'the waiter gets the freed permit');
  check((await client.zcard(key)) === 2, 'two permits again');
  step('released');
  await b.release();
  await c.release();
  check((await client.exists(key)) === 0, 'the last release removes the set');

  // A holder that crashes: never refreshed, never released. Its permit
  // expires after lockTimeout and the next acquire drops it.
  const crashed = new Semaphore(client, 'sem', 1, { lockTimeout: 300, refreshInterval: 0 });
  await crashed.acquire();
  const next = new Semaphore(client, 'sem', 1, { lockTimeout: 1000, acquireTimeout: 100, retryInterval: 20, refreshInterval: 0 });
  check((await next.tryAcquire()) === false, 'the crashed holder still counts');
  await sleep(500);
  check((await next.tryAcquire()) === true, 'the expired permit is dropped');
  check(JSON.stringify(await members(key)) === JSON.stringify([next.identifier]), 'only the new holder');
  await next.release();
  step('expired');

  // ---- MultiSemaphore: limit 5, permits taken three and two at a time
  const mkey = 'semaphore:multi';
  const m1 = new MultiSemaphore(client, 'multi', 5, 3, options);
  await m1.acquire();
  const held = await members(mkey);
  check(held.length === 3 && held.every((m) => m.startsWith(m1.identifier + '_')), 'three permits');
  step('multi-acquired');

  const m2 = new MultiSemaphore(client, 'multi', 5, 3, { lockTimeout: 1000, acquireTimeout: 200, retryInterval: 20 });
  check((await m2.tryAcquire()) === false, 'three more do not fit');
  const m3 = new MultiSemaphore(client, 'multi', 5, 2, options);
  check((await m3.tryAcquire()) === true, 'two more fit');
  check((await client.zcard(mkey)) === 5, 'five permits');
  step('multi-contention');

  await sleep(2500);
  check(lost.length === 0, 'multi permit lost: ' + lost);
  check((await client.zcard(mkey)) === 5, 'all five kept by the refreshes');
  step('multi-refreshed');

  await m1.release();
  const rest = await members(mkey);
  check(rest.length === 2 && rest.every((m) => m.startsWith(m3.identifier + '_')), 'm1 released its three');
  check((await m2.tryAcquire()) === true, 'now three fit');
  step('multi-released');
  await m2.release();
  await m3.release();
  check((await client.exists(mkey)) === 0, 'empty');

  const mcrashed = new MultiSemaphore(client, 'multi', 3, 3, { lockTimeout: 300, refreshInterval: 0 });
  await mcrashed.acquire();
  const mnext = new MultiSemaphore(client, 'multi', 3, 2, { lockTimeout: 1000, acquireTimeout: 100, retryInterval: 20, refreshInterval: 0 });
  check((await mnext.tryAcquire()) === false, 'the crashed holder still counts');
  await sleep(500);
  check((await mnext.tryAcquire()) === true, 'its expired permits are dropped');
  check((await client.zcard(mkey)) === 2, 'only the new holder');
  await mnext.release();
  step('multi-expired');
  client.disconnect();
});
