// npm redlock 4.2.0 with node-redis 3 clients, as its README shows: lock,
// a second locker refused, extend, unlock, expiry, several resources at
// once; with three servers, one killed while the lock is held.
//
// Scripts exercised: lockScript, unlockScript, extendScript (EVALSHA, and
// EVAL if the server answered NOSCRIPT).
'use strict';

const { promisify } = require('util');
const redis = require('redis3'); // node-redis 3.1.2 (an npm alias, see package.json)
const Redlock = require('redlock');
const { ports, step, check, rejection, sleep, dbs, killLastServer, main } = require('./harness');

main(async () => {
  const ps = ports();
  // No offline queue: a command to a dead server fails at once instead of
  // waiting for it to come back (RedLock counts it as a vote against).
  const db = dbs();
  const clients = ps.map((port, i) =>
    redis.createClient(port, '127.0.0.1', {
      db: db[i],
      enable_offline_queue: false,
      retry_strategy: () => 200,
    })
  );
  for (const c of clients) c.on('error', () => {});
  await Promise.all(clients.map((c) => new Promise((resolve) => c.once('ready', resolve))));
  const get = clients.map((c) => promisify(c.get).bind(c));
  const pttl = clients.map((c) => promisify(c.pttl).bind(c));
  const live = () => (ps.length === 3 && killed ? [0, 1] : ps.map((_, i) => i));
  let killed = false;

  const redlock = new Redlock(clients, { retryCount: 0, driftFactor: 0.01 });
  const other = new Redlock(clients, { retryCount: 0 });
  redlock.on('clientError', () => {});
  other.on('clientError', () => {});

  // Acquire: the lock is on every server, with its TTL.
  const lock = await redlock.lock('locks:res', 3000);
  for (const i of live()) {
    check((await get[i]('locks:res')) === lock.value, 'value on server ' + i);
    const t = await pttl[i]('locks:res');
    check(t > 2000 && t <= 3000, 'ttl on server ' + i + ': ' + t);
  }
  step('acquired', { value: lock.value });

  // A second locker is refused while it is held.
  let e = await rejection(other.lock('locks:res', 3000), 'second lock');
  check(e.name === 'LockError', 'LockError, got ' + e);
  step('blocked');

  if (ps.length === 3) {
    await killLastServer();
    killed = true;
    step('killed');
  }

  // Extend: a new TTL on (a majority of) the servers.
  const extended = await lock.extend(8000);
  for (const i of live()) {
    const t = await pttl[i]('locks:res');
    check(t > 7000 && t <= 8000, 'extended ttl on server ' + i + ': ' + t);
  }
  step('extended');
  e = await rejection(other.lock('locks:res', 3000), 'lock after extend');
  check(e.name === 'LockError', 'still refused');
  step('blocked-after-extend');

  // Unlock: gone from every server; the other locker gets it now.
  await extended.unlock();
  for (const i of live()) check((await get[i]('locks:res')) === null, 'released on ' + i);
  step('released');
  const second = await other.lock('locks:res', 300);
  step('reacquired');

  // Expiry: the lease ends by itself; the first holder's unlock then fails
  // (the value is someone else's) and leaves the new holder's lock alone.
  await sleep(500);
  const third = await redlock.lock('locks:res', 3000);
  e = await rejection(second.unlock(), 'unlock of an expired lock');
  check(e.name === 'LockError', 'LockError on unlocking an expired lock');
  for (const i of live()) check((await get[i]('locks:res')) === third.value, 'not stolen');
  await third.unlock();
  step('expired');

  // Several resources at once (the scripts' multi-key path).
  const multi = await redlock.lock(['locks:a', 'locks:b'], 3000);
  e = await rejection(other.lock(['locks:b', 'locks:c'], 3000), 'overlapping multi-lock');
  check(e.name === 'LockError', 'overlap refused');
  for (const i of live()) check((await get[i]('locks:c')) === null, 'partial lock rolled back');
  const multi2 = await multi.extend(6000);
  for (const i of live()) check((await pttl[i]('locks:b')) > 5000, 'multi extend');
  await multi2.unlock();
  for (const i of live()) {
    check((await get[i]('locks:a')) === null && (await get[i]('locks:b')) === null, 'multi unlock');
  }
  step('multi');

  for (const c of clients) c.quit();
});
