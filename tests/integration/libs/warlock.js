// npm node-redis-warlock 1.0.2 with a node-redis 3 client, as its README
// shows: lock, a second locker refused, optimistic retries, touch (extend),
// unlock, expiry. Its scripts (parityDel, parityRelock) are not known
// scripts: latch runs them in Lua (EVALSHA, SCRIPT LOAD on NOSCRIPT).
'use strict';

const { promisify } = require('util');
const redis = require('redis3'); // node-redis 3.1.2 (an npm alias, see package.json)
const Warlock = require('node-redis-warlock');
const { ports, step, check, sleep, dbs, main } = require('./harness');

main(async () => {
  const [port] = ports();
  const client = redis.createClient(port, '127.0.0.1', { db: dbs()[0], retry_strategy: () => 200 });
  client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
  const get = promisify(client.get).bind(client);
  const pttl = promisify(client.pttl).bind(client);
  const warlock = Warlock(client);
  const lock = (key, ttl) =>
    new Promise((resolve, reject) =>
      warlock.lock(key, ttl, (err, unlock, id) => (err ? reject(err) : resolve({ unlock, id })))
    );
  const optimistic = (key, ttl, attempts, wait) =>
    new Promise((resolve) =>
      warlock.optimistic(key, ttl, attempts, wait, (err, unlock) => resolve({ err, unlock }))
    );

  const held = await lock('res', 2000);
  check(typeof held.unlock === 'function', 'acquired');
  check((await get('res:lock')) === held.id, 'value is the lock id');
  step('acquired');

  const second = await lock('res', 2000);
  check(second.unlock === false, 'second locker refused');
  const tried = await optimistic('res', 2000, 3, 20);
  check(tried.err && /unable to obtain lock/.test(tried.err.message), 'optimistic gives up');
  step('blocked');

  // touch: parityRelock (SET … PX ttl XX when the id matches).
  const touched = await warlock.touch('res', held.id, 10000);
  check(touched === 'OK', 'touched: ' + touched);
  check((await pttl('res:lock')) > 5000, 'extended ttl');
  check((await warlock.touch('res', 'not-the-id', 10000)) === 0, 'touch by a stranger');
  step('extended');

  // unlock: parityDel, only by the holder.
  const strangerUnlock = await new Promise((resolve, reject) =>
    warlock.unlock('res', 'not-the-id', (err, r) => (err ? reject(err) : resolve(r)))
  );
  check(strangerUnlock === 0, 'a stranger cannot unlock');
  const unlocked = await new Promise((resolve, reject) =>
    held.unlock((err, r) => (err ? reject(err) : resolve(r)))
  );
  check(unlocked === 1, 'unlocked: ' + unlocked);
  check((await get('res:lock')) === null, 'released');
  step('released');

  const again = await optimistic('res', 300, 3, 20);
  check(!again.err && typeof again.unlock === 'function', 'reacquired');
  step('reacquired');

  // Expiry: the lease runs out; the old holder's unlock must not delete the
  // next holder's lock.
  await sleep(450);
  const next = await lock('res', 3000);
  check(typeof next.unlock === 'function', 'acquired after expiry');
  const late = await new Promise((resolve, reject) =>
    again.unlock((err, r) => (err ? reject(err) : resolve(r)))
  );
  check(late === 0, 'late unlock deletes nothing');
  check((await get('res:lock')) === next.id, 'next holder keeps it');
  step('expired');
  client.quit();
});
