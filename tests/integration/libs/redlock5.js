// npm redlock 5.0.0-beta.2 (npm's next major of the redlock latch already
// knows) with ioredis clients, as its README shows: acquire, a second
// acquirer refused, extend, release, expiry, several resources, using().
// Its scripts are not known scripts: latch runs them in Lua (EVALSHA, EVAL
// on NOSCRIPT).
'use strict';

const Redlock = require('redlock5').default;
const { ports, step, check, rejection, sleep, ioredisClients, main } = require('./harness');

main(async () => {
  const clients = await ioredisClients(ports());
  const c = clients[0];
  const redlock = new Redlock(clients, { retryCount: 0, driftFactor: 0.01 });
  const other = new Redlock(clients, { retryCount: 2, retryDelay: 20 });
  redlock.on('error', () => {});
  other.on('error', () => {});

  let lock = await redlock.acquire(['locks:res'], 2000);
  check((await c.get('locks:res')) === lock.value, 'held');
  step('acquired');

  await rejection(other.acquire(['locks:res'], 2000), 'second acquire');
  step('blocked');

  lock = await lock.extend(10000);
  check((await c.pttl('locks:res')) > 5000, 'extended');
  step('extended');

  await lock.release();
  check((await c.get('locks:res')) === null, 'released');
  step('released');

  const short = await other.acquire(['locks:res'], 300);
  step('reacquired');
  await sleep(450);
  const next = await redlock.acquire(['locks:res'], 3000);
  await rejection(short.release(), 'late release');
  check((await c.get('locks:res')) === next.value, 'next holder keeps it');
  await next.release();
  step('expired');

  const multi = await redlock.acquire(['locks:a', 'locks:b'], 2000);
  check((await c.get('locks:a')) === multi.value && (await c.get('locks:b')) === multi.value,
        'both held');
  await rejection(other.acquire(['locks:b', 'locks:c'], 2000), 'overlapping acquire');
  check((await c.get('locks:c')) === null, 'nothing half taken');
  await multi.release();
  step('multi');

  let ran = false;
  await redlock.using(['locks:u'], 1000, async () => {
    ran = (await c.get('locks:u')) !== null;
  });
  check(ran && (await c.get('locks:u')) === null, 'using');
  step('using');
  for (const cl of clients) cl.disconnect();
});
