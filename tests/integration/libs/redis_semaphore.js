// npm redis-semaphore 5.8.0 with ioredis clients, as its README shows:
// Mutex on one server (RedlockMutex on three, one killed while the lock is
// held): acquire, a second acquirer refused, refresh (automatic, and the
// acquiredExternally path), release, expiry.
//
// Scripts exercised: delIfEqualLua (release), expireIfEqualLua (refresh).
// Acquiring is a plain SET NX PX.
'use strict';

const { Mutex, RedlockMutex } = require('redis-semaphore');
const { ports, step, check, sleep, ioredisClients, killLastServer, main } = require('./harness');

main(async () => {
  const ps = ports();
  const clients = await ioredisClients(ps);
  let killed = false;
  const live = () => (killed ? [0, 1] : ps.map((_, i) => i));
  const make = (key, options) =>
    ps.length === 1 ? new Mutex(clients[0], key, options) : new RedlockMutex(clients, key, options);

  let lost = null;
  const options = {
    lockTimeout: 1000,
    acquireTimeout: 300,
    retryInterval: 20,
    refreshInterval: 200,
    onLockLost: (err) => {
      lost = err;
    },
  };
  const mutex = make('res', options);
  await mutex.acquire();
  for (const i of live()) check((await clients[i].get('mutex:res')) === mutex.identifier, 'value');
  step('acquired');

  const contender = make('res', { lockTimeout: 1000, acquireTimeout: 300, retryInterval: 20 });
  check((await contender.tryAcquire()) === false, 'second acquire refused');
  step('blocked');

  if (ps.length === 3) {
    await killLastServer();
    killed = true;
    step('killed');
  }

  // Held for 2.5 lock timeouts: only the refresh script keeps it alive.
  await sleep(2500);
  check(lost === null, 'lock lost: ' + lost);
  for (const i of live()) {
    check((await clients[i].get('mutex:res')) === mutex.identifier, 'still held');
    const t = await clients[i].pttl('mutex:res');
    check(t > 0 && t <= 1000, 'refreshed ttl ' + t);
  }
  check((await contender.tryAcquire()) === false, 'still refused');
  step('extended');

  // acquiredExternally: "acquiring" with a known identifier is a refresh.
  const adopted = make('res', { identifier: mutex.identifier, acquiredExternally: true,
                                lockTimeout: 5000, refreshInterval: 0 });
  check((await adopted.tryAcquire()) === true, 'refresh with the right identifier');
  for (const i of live()) check((await clients[i].pttl('mutex:res')) > 4000, 'refresh to 5000');
  const stranger = make('res', { identifier: 'not-the-owner', acquiredExternally: true,
                                 acquireTimeout: 100, refreshInterval: 0 });
  check((await stranger.tryAcquire()) === false, 'refresh with a wrong identifier');
  step('refreshed');

  await mutex.release();
  for (const i of live()) check((await clients[i].get('mutex:res')) === null, 'released');
  step('released');
  check((await contender.tryAcquire()) === true, 'acquired after release');
  step('reacquired');
  await contender.release();

  // Expiry: no refresh, the lease runs out; releasing it afterwards must not
  // delete the new holder's lock.
  const shortLived = make('res', { lockTimeout: 300, refreshInterval: 0, acquireTimeout: 300 });
  await shortLived.acquire();
  await sleep(500);
  const next = make('res', { lockTimeout: 3000, acquireTimeout: 300, retryInterval: 20 });
  check((await next.tryAcquire()) === true, 'acquired after expiry');
  await shortLived.release();
  for (const i of live()) check((await clients[i].get('mutex:res')) === next.identifier, 'kept');
  await next.release();
  step('expired');

  for (const c of clients) c.disconnect();
});
