// simple-redis-mutex 3.0.0, unchanged, against one server: a lock that waits
// by pub/sub (a second connection subscribes before every attempt; the
// release script publishes a JSON message naming the key). Five clients take
// the lock three times each, 30 ms per turn; the library's own polling is
// set to 10 s, so a waiter that missed the release messages could not keep
// up (failAfter 8 s turns that into an error). Prints one JSON object:
//
//   node simple_mutex.mjs PORT
//
// tests/integration/test_pubsub.py checks the values.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { createClient } = require('redis');
const { lock, tryLock } = require('simple-redis-mutex');

const port = Number(process.argv[2]);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const out = {};

try {
  const clients = await Promise.all(
    Array.from({ length: 5 }, () => createClient({ socket: { host: '127.0.0.1', port } }).connect()),
  );
  let inside = 0;
  let lastRelease = null;
  const waits = [];
  const tokens = [];
  out.overlaps = 0;
  out.turns = 0;
  await Promise.all(
    clients.map(async (c) => {
      for (let k = 0; k < 3; ++k) {
        const release = await lock(c, 'job', { timeout: 5000, pollingInterval: 10000, failAfter: 8000 });
        if (lastRelease != null) waits.push(Date.now() - lastRelease);
        if (++inside > 1) out.overlaps++;
        out.turns++;
        tokens.push(release.fencingToken);
        await sleep(30);
        --inside;
        lastRelease = Date.now();
        await release();
      }
    }),
  );
  out.max_handoff_ms = Math.max(...waits);
  out.tokens_increase = tokens.every((t, i) => i === 0 || t > tokens[i - 1]);
  // tryLock: refused while held, granted once released.
  const [a, releaseA] = await tryLock(clients[0], 'solo');
  const [b] = await tryLock(clients[1], 'solo');
  await releaseA();
  const [c, releaseC] = await tryLock(clients[1], 'solo');
  await releaseC();
  out.try = [a, b, c];
  out.left = await clients[0].keys('@simple-redis-mutex:lock-*');
} catch (e) {
  out.fatal = String(e && e.stack ? e.stack : e);
}
console.log(JSON.stringify(out));
process.exit(0);  // the library's subscriber connection would keep the process alive
