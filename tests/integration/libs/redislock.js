// npm redislock 1.3.0 with a node-redis 3 client, as its README shows:
// acquire, a second lock refused (and retried), extend, release, expiry.
// Its scripts (delifequal, pexpireifequal, through redis-evalsha: EVALSHA,
// then EVAL on NOSCRIPT) run in latch's Lua.
'use strict';

const { promisify } = require('util');
const redis = require('redis3'); // node-redis 3.1.2 (an npm alias, see package.json)
const redislock = require('redislock');
const { ports, step, check, rejection, sleep, dbs, main } = require('./harness');

main(async () => {
  const [port] = ports();
  const client = redis.createClient(port, '127.0.0.1', { db: dbs()[0], retry_strategy: () => 200 });
  client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
  const get = promisify(client.get).bind(client);
  const pttl = promisify(client.pttl).bind(client);

  const lock = redislock.createLock(client, { timeout: 2000, retries: 0, delay: 20 });
  await lock.acquire('app:lock');
  check((await get('app:lock')) !== null, 'held');
  step('acquired');

  const other = redislock.createLock(client, { timeout: 2000, retries: 3, delay: 20 });
  const refused = await rejection(other.acquire('app:lock'), 'second acquire');
  check(refused instanceof redislock.LockAcquisitionError, 'LockAcquisitionError');
  step('blocked');

  await lock.extend(10000);
  check((await pttl('app:lock')) > 5000, 'extended');
  step('extended');

  await lock.release();
  check((await get('app:lock')) === null, 'released');
  step('released');

  const short = redislock.createLock(client, { timeout: 300, retries: 0 });
  await other.acquire('app:lock').catch(() => {});
  if (other._locked) await other.release();
  await short.acquire('app:lock');
  step('reacquired');

  // Expiry: releasing after the lease ran out is an error, and deletes
  // nothing of the next holder's.
  await sleep(450);
  const next = redislock.createLock(client, { timeout: 3000, retries: 0 });
  await next.acquire('app:lock');
  const late = await rejection(short.release(), 'late release');
  check(late instanceof redislock.LockReleaseError, 'LockReleaseError: ' + late);
  const lateExtend = redislock.createLock(client, { timeout: 300, retries: 0 });
  check((await get('app:lock')) !== null, 'next holder keeps it');
  step('expired');
  await next.release();
  void lateExtend;
  client.quit();
});
