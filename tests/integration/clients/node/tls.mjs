// The Node.js clients over TLS (tls-port), with the test CA and a client
// certificate: a lock taken, read, refused to another token and released.
// Prints one JSON object of the values; tests/integration/test_tls.py checks
// them.
//
//   node tls.mjs ioredis|node-redis PORT CA CERT KEY
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const [, , which, portArg, caPath, certPath, keyPath] = process.argv;
const port = Number(portArg);
const tls = {
  ca: readFileSync(caPath),
  cert: readFileSync(certPath),
  key: readFileSync(keyPath),
  servername: 'localhost',
};
const out = {};

const release = "if redis.call('get', KEYS[1]) == ARGV[1] then " +
  "return redis.call('del', KEYS[1]) else return 0 end";

async function withIoredis() {
  const Redis = require('ioredis');
  const c = new Redis({ host: '127.0.0.1', port, tls, lazyConnect: true, maxRetriesPerRequest: 0 });
  await c.connect();
  out.acquire = await c.set('lock:tls', 'tok-A', 'PX', 30000, 'NX');
  out.again = await c.set('lock:tls', 'tok-B', 'PX', 30000, 'NX');
  out.get = await c.get('lock:tls');
  out.release = await c.eval(release, 1, 'lock:tls', 'tok-A');
  out.big = (await c.echo('x'.repeat(200000))).length;
  await c.quit();
}

async function withNodeRedis() {
  const { createClient } = require('redis');
  const c = createClient({ socket: { host: '127.0.0.1', port, tls: true, ...tls,
    reconnectStrategy: false } });
  c.on('error', () => {});
  await c.connect();
  out.acquire = await c.set('lock:tls', 'tok-A', { PX: 30000, NX: true });
  out.again = await c.set('lock:tls', 'tok-B', { PX: 30000, NX: true });
  out.get = await c.get('lock:tls');
  out.release = await c.eval(release, { keys: ['lock:tls'], arguments: ['tok-A'] });
  out.big = (await c.sendCommand(['ECHO', 'x'.repeat(200000)])).length;
  await c.quit();
}

try {
  await (which === 'ioredis' ? withIoredis() : withNodeRedis());
} catch (e) {
  out.fatal = String(e && e.stack || e);
}
console.log(JSON.stringify(out));
process.exit(0);
