// npm @sesamecare-oss/redlock 1.4.0 with ioredis clients, as its README
// shows: acquire, a second acquirer refused, extend, release, expiry,
// several resources at once, and using() with automatic extension; with
// three servers, one killed while the lock is held.
//
// Scripts exercised: ACQUIRE_SCRIPT, EXTEND_SCRIPT, RELEASE_SCRIPT (ioredis
// defineCommand: EVALSHA, then EVAL on NOSCRIPT).
'use strict';

const { Redlock, ExecutionError } = require('@sesamecare-oss/redlock');
const {
  ports,
  step,
  check,
  rejection,
  sleep,
  dbs,
  ioredisClients,
  killLastServer,
  main,
} = require('./harness');

main(async () => {
  const ps = ports();
  const clients = await ioredisClients(ps);
  let killed = false;
  const live = () => (killed ? [0, 1] : ps.map((_, i) => i));

  // The library's `db` setting: its scripts SELECT it (the clients are in
  // it too, so the checks below read the same keys).
  const db = dbs()[0];
  const redlock = new Redlock(clients, { retryCount: 0, db });
  const other = new Redlock(clients, { retryCount: 0, db });
  // The README: listen for errors (a refused vote is emitted as one).
  redlock.on('error', () => {});
  other.on('error', () => {});

  let lock = await redlock.acquire(['res'], 3000);
  for (const i of live()) {
    check((await clients[i].get('res')) === lock.value, 'value on server ' + i);
    const t = await clients[i].pttl('res');
    check(t > 2000 && t <= 3000, 'ttl ' + t);
  }
  step('acquired');

  let e = await rejection(other.acquire(['res'], 3000), 'second acquire');
  check(e instanceof ExecutionError, 'ExecutionError, got ' + e);
  step('blocked');

  if (ps.length === 3) {
    await killLastServer();
    killed = true;
    step('killed');
  }

  lock = await lock.extend(8000);
  for (const i of live()) {
    const t = await clients[i].pttl('res');
    check(t > 7000 && t <= 8000, 'extended ttl ' + t);
  }
  step('extended');
  e = await rejection(other.acquire(['res'], 3000), 'acquire after extend');
  check(e instanceof ExecutionError, 'still refused');
  step('blocked-after-extend');

  await lock.release();
  for (const i of live()) check((await clients[i].get('res')) === null, 'released');
  step('released');
  const second = await other.acquire(['res'], 300);
  step('reacquired');

  await sleep(500);
  const third = await redlock.acquire(['res'], 3000);
  // Releasing the expired lock touches nothing: no server holds its value.
  e = await rejection(second.release(), 'release of an expired lock');
  check(e instanceof ExecutionError, 'ExecutionError on an expired release');
  for (const i of live()) check((await clients[i].get('res')) === third.value, 'not stolen');
  e = await rejection(second.extend(1000), 'extend of an expired lock');
  await third.release();
  step('expired');

  const multi = await redlock.acquire(['a', 'b'], 3000);
  e = await rejection(other.acquire(['b', 'c'], 3000), 'overlapping acquire');
  check(e instanceof ExecutionError, 'overlap refused');
  for (const i of live()) check((await clients[i].get('c')) === null, 'no partial lock');
  const multi2 = await multi.extend(6000);
  for (const i of live()) check((await clients[i].pttl('a')) > 5000, 'multi extend');
  await multi2.release();
  for (const i of live()) check((await clients[i].exists('a', 'b')) === 0, 'multi release');
  step('multi');

  // using(): the routine runs past the lock's duration; the automatic
  // extension (the extend script) keeps it held throughout.
  await redlock.using(['auto'], 1000, { automaticExtensionThreshold: 400 }, async (signal) => {
    await sleep(2000);
    check(!signal.aborted, 'using() lost its lock: ' + (signal.error || ''));
    for (const i of live()) check((await clients[i].pttl('auto')) > 0, 'auto-extended');
  });
  for (const i of live()) check((await clients[i].get('auto')) === null, 'using() released');
  step('using');

  for (const c of clients) c.disconnect();
});
