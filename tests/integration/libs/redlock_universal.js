// npm redlock-universal 0.8.5 with ioredis clients (IoredisAdapter), as its
// README shows: createLock on one server (createRedlock on three, one killed
// while the lock is held): acquire, a second acquirer refused, extend,
// release, expiry, using() with auto-extension, inspect, and
// LockManager.acquireBatch.
//
// Scripts exercised (SCRIPT LOAD, then EVALSHA): DELETE_IF_MATCH,
// EXTEND_IF_MATCH, ATOMIC_EXTEND, BATCH_ACQUIRE, INSPECT.
'use strict';

const {
  createLock,
  createRedlock,
  IoredisAdapter,
  LockManager,
} = require('redlock-universal');
const {
  ports,
  step,
  check,
  rejection,
  sleep,
  ioredisClients,
  killLastServer,
  main,
} = require('./harness');

main(async () => {
  const ps = ports();
  const clients = await ioredisClients(ps);
  const adapters = clients.map((c) => new IoredisAdapter(c));
  let killed = false;
  const live = () => (killed ? [0, 1] : ps.map((_, i) => i));
  const make = (key, ttl, extra) =>
    ps.length === 1
      ? createLock(Object.assign({ adapter: adapters[0], key, ttl, retryAttempts: 0 }, extra))
      : createRedlock(Object.assign({ adapters, key, ttl, retryAttempts: 0, quorum: 2 }, extra));

  const lock = make('res', 3000);
  const handle = await lock.acquire();
  for (const i of live()) check((await clients[i].get('res')) === handle.value, 'value');
  step('acquired');

  const contender = make('res', 3000);
  await rejection(contender.acquire(), 'second acquire');
  step('blocked');

  if (ps.length === 3) {
    await killLastServer();
    killed = true;
    step('killed');
  }

  check((await lock.extend(handle, 8000)) === true, 'extend');
  for (const i of live()) {
    const t = await clients[i].pttl('res');
    check(t > 7000 && t <= 8000, 'extended ttl ' + t);
  }
  step('extended');
  await rejection(contender.acquire(), 'acquire after extend');
  step('blocked-after-extend');

  // inspect (the README's "lock inspection"): {value, ttl}.
  const seen = await adapters[0].inspect('res');
  check(seen && seen.value === handle.value && seen.ttl > 7000, 'inspect ' + JSON.stringify(seen));
  step('inspected');

  check((await lock.release(handle)) === true, 'release');
  for (const i of live()) check((await clients[i].get('res')) === null, 'released');
  check((await adapters[0].inspect('res')) === null, 'inspect after release');
  step('released');
  const short = make('res', 300);
  const shortHandle = await short.acquire();
  step('reacquired');

  // Expiry: the second holder's release after its lease ran out deletes
  // nothing (the value is the new holder's), and its extend fails.
  await sleep(500);
  const third = make('res', 3000);
  const thirdHandle = await third.acquire();
  check((await short.release(shortHandle)) === false, 'release of an expired lock');
  check((await short.extend(shortHandle, 1000)) === false, 'extend of an expired lock');
  for (const i of live()) check((await clients[i].get('res')) === thirdHandle.value, 'kept');
  check((await third.release(thirdHandle)) === true, 'release third');
  step('expired');

  // using(): runs longer than the TTL; auto-extension keeps the lock.
  const auto = make('auto', 3000);
  await auto.using(async (signal) => {
    await sleep(4500);
    check(!signal.aborted, 'using() lost the lock: ' + (signal.error || ''));
    for (const i of live()) check((await clients[i].pttl('auto')) > 0, 'auto-extended');
  });
  for (const i of live()) check((await clients[i].get('auto')) === null, 'using() released');
  step('using');

  if (ps.length === 1) {
    // Batch acquisition, all or nothing (the batch script).
    const manager = new LockManager({ nodes: [adapters[0]], defaultTTL: 3000 });
    const handles = await manager.acquireBatch(['b1', 'b2']);
    check(handles.length === 2, 'batch handles');
    check((await clients[0].pttl('b2')) > 2000, 'batch ttl');
    await rejection(manager.acquireBatch(['b2', 'b3']), 'overlapping batch');
    check((await clients[0].get('b3')) === null, 'no partial batch');
    const released = await manager.releaseBatch(handles);
    check(released.every((r) => r === true), 'batch release ' + JSON.stringify(released));
    check((await clients[0].exists('b1', 'b2')) === 0, 'batch released');
    step('batch');
  }

  for (const c of clients) c.disconnect();
});
