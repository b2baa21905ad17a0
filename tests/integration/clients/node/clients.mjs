// Drives one real Node.js Redis client against a latch-server and prints
// what each call returned, as one JSON object on stdout:
//
//   node clients.mjs ioredis PORT
//   node clients.mjs node-redis PORT
//   node clients.mjs ioredis-fence PORT      (SETFENCE, the fenced grant)
//   node clients.mjs node-redis-fence PORT
//
// It asserts nothing itself: tests/integration/test_clients.py checks the
// values, and the bytes each library sent (through a recording proxy).
// A call that fails records {"error": message} instead of a value, so an
// unexpected failure shows up as a mismatch with its message.
//
// The file is copied next to the node_modules the test installs (ES module
// imports resolve from the script's own folder).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const [, , which, portArg] = process.argv;
const port = Number(portArg);
const host = '127.0.0.1';
const out = { events: [] };

// Runs one call; records its value or its error message under `name`.
async function step(name, fn) {
  try {
    const v = await fn();
    out[name] = v === undefined ? null : v;
  } catch (e) {
    out[name] = { error: e.message };
  }
}

// The same operations for both libraries, through `ops`, a table of the
// library-specific spellings.
async function lockRecipe(ops, k) {
  await step('del_setup', () => ops.del(k));
  await step('set_nx_px', () => ops.setNxPx(k, 'tok-A', 30000));
  await step('set_nx_px_held', () => ops.setNxPx(k, 'tok-B', 30000));
  await step('get', () => ops.get(k));
  await step('pttl', () => ops.pttl(k));
  await step('set_ifeq_renew', () => ops.setIfEq(k, 'tok-A', 'tok-A', 50000));
  await step('pttl_renewed', () => ops.pttl(k));
  await step('set_ifeq_not_owner', () => ops.setIfEq(k, 'tok-B', 'tok-B', 50000));
  await step('pexpire', () => ops.pexpire(k, 20000));
  await step('pttl_after_pexpire', () => ops.pttl(k));
  await step('delifeq_not_owner', () => ops.raw(['DELIFEQ', k, 'tok-B']));
  await step('delifeq_owner', () => ops.raw(['DELIFEQ', k, 'tok-A']));
  await step('get_released', () => ops.get(k));
  await step('pttl_missing', () => ops.pttl(k));
  // DELEX and DIGEST through the libraries' own methods.
  await step('set_px', () => ops.setPx(k, 'tok-C', 30000));
  await step('digest', () => ops.digest(k));
  await step('digest_missing', () => ops.digest(k + ':missing'));
  const digest = out.digest;
  await step('delex_ifne_same', () => ops.delex(k, 'IFNE', 'tok-C'));
  await step('delex_ifdne_same', () => ops.delex(k, 'IFDNE', digest));
  await step('delex_ifeq_other', () => ops.delex(k, 'IFEQ', 'tok-D'));
  await step('delex_ifeq', () => ops.delex(k, 'IFEQ', 'tok-C'));
  await step('set_px_again', () => ops.setPx(k, 'tok-C', 30000));
  await step('delex_ifdeq', () => ops.delex(k, 'IFDEQ', digest));
  await step('set_px_third', () => ops.setPx(k, 'tok-E', 30000));
  await step('delex_ifdne_other', () => ops.delex(k, 'IFDNE', digest));
  await step('set_px_fourth', () => ops.setPx(k, 'tok-F', 30000));
  await step('delex_plain', () => ops.delex(k));
  await step('delex_plain_missing', () => ops.delex(k));
  // An unknown script: refused with a pointer to the native commands.
  await step('eval_unknown', () => ops.raw(['EVAL', 'return 1', '0']));
  // A TTL over max-lock-ttl (60000 ms by default).
  await step('set_over_cap', () => ops.setNxPx(k, 'tok-G', 120000));
}

async function runIoredis() {
  const Redis = require('ioredis');
  out.version = require('ioredis/package.json').version;
  const r = new Redis({
    host, port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null,
  });
  r.on('error', (e) => out.events.push('error: ' + e.message));
  r.on('ready', () => out.events.push('ready'));
  await r.connect();
  out.status_after_connect = r.status;
  const ops = {
    del: (k) => r.del(k),
    setNxPx: (k, v, ms) => r.set(k, v, 'PX', ms, 'NX'),
    setPx: (k, v, ms) => r.set(k, v, 'PX', ms),
    setIfEq: (k, v, match, ms) => r.set(k, v, 'IFEQ', match, 'PX', ms),
    get: (k) => r.get(k),
    pttl: (k) => r.pttl(k),
    pexpire: (k, ms) => r.pexpire(k, ms),
    raw: (argv) => r.call(...argv),
    digest: (k) => r.digest(k),
    delex: (k, cond, v) => (cond ? r.delex(k, cond, v) : r.delex(k)),
  };
  await lockRecipe(ops, 'io:lock');

  // An explicit pipeline: one write, replies in order.
  await step('pipeline', async () => {
    const res = await r.pipeline()
      .set('io:p', 'p1', 'PX', 30000, 'NX')
      .set('io:p', 'p2', 'PX', 30000, 'NX')
      .get('io:p')
      .call('DELIFEQ', 'io:p', 'p2')
      .pexpire('io:p', 10000)
      .call('DELIFEQ', 'io:p', 'p1')
      .get('io:p')
      .exec();
    return res.map(([err, v]) => (err ? { error: err.message } : v));
  });
  // A MULTI/EXEC transaction.
  await step('multi_exec', () => r.multi().set('io:m', '1').get('io:m').exec());
  await step('client_info', () => r.client('INFO'));
  await step('info_server', () => r.info('server'));
  await step('quit', () => r.quit());
}

async function runNodeRedis() {
  const { createClient } = require('redis');
  out.version = require('redis/package.json').version;
  out.client_version = require('@redis/client/package.json').version;
  const c = createClient({ socket: { host, port, reconnectStrategy: false } });
  c.on('error', (e) => out.events.push('error: ' + e.message));
  c.on('ready', () => out.events.push('ready'));
  await c.connect();
  out.is_ready = c.isReady;
  const ops = {
    del: (k) => c.del(k),
    setNxPx: (k, v, ms) => c.set(k, v, { condition: 'NX', expiration: { type: 'PX', value: ms } }),
    setPx: (k, v, ms) => c.set(k, v, { expiration: { type: 'PX', value: ms } }),
    setIfEq: (k, v, match, ms) =>
      c.set(k, v, { condition: 'IFEQ', matchValue: match, expiration: { type: 'PX', value: ms } }),
    get: (k) => c.get(k),
    pttl: (k) => c.pTTL(k),
    pexpire: (k, ms) => c.pExpire(k, ms),
    raw: (argv) => c.sendCommand(argv),
    digest: (k) => c.digest(k),
    delex: (k, cond, v) => (cond ? c.delEx(k, { condition: cond, matchValue: v }) : c.delEx(k)),
  };
  await lockRecipe(ops, 'nr:lock');

  // SET ... IFDEQ digest, node-redis's other conditional SET.
  await step('set_ifdeq', async () => {
    await c.set('nr:d', 'v1', { expiration: { type: 'PX', value: 30000 } });
    const d = await c.digest('nr:d');
    return c.set('nr:d', 'v2', { condition: 'IFDEQ', matchValue: d });
  });
  await step('get_after_ifdeq', () => c.get('nr:d'));

  // A pipeline without MULTI (execAsPipeline), and node-redis's implicit
  // pipelining of commands issued in the same tick.
  await step('pipeline', () => c.multi()
    .set('nr:p', 'p1', { condition: 'NX', expiration: { type: 'PX', value: 30000 } })
    .set('nr:p', 'p2', { condition: 'NX', expiration: { type: 'PX', value: 30000 } })
    .get('nr:p')
    .addCommand(['DELIFEQ', 'nr:p', 'p2'])
    .pExpire('nr:p', 10000)
    .addCommand(['DELIFEQ', 'nr:p', 'p1'])
    .get('nr:p')
    .execAsPipeline());
  await step('auto_pipeline', () => Promise.all([
    c.set('nr:a', 'a1', { condition: 'NX', expiration: { type: 'PX', value: 30000 } }),
    c.set('nr:a', 'a2', { condition: 'NX', expiration: { type: 'PX', value: 30000 } }),
    c.get('nr:a'),
    c.delEx('nr:a', { condition: 'IFEQ', matchValue: 'a1' }),
    c.exists('nr:a'),
  ]));
  // A MULTI/EXEC transaction.
  await step('multi_exec', () => c.multi().set('nr:m', '1').get('nr:m').exec());
  await step('hello', () => c.hello());
  await step('client_info', () => c.sendCommand(['CLIENT', 'INFO']));
  await step('info_server', () => c.info('server'));
  await step('quit', () => c.quit());

  // CLIENT MAINT_NOTIFICATIONS is Redis Enterprise's: with the default
  // ('auto') its error is ignored; 'disabled' does not send it; 'enabled'
  // makes it a condition of connecting. One connection each, in this order.
  for (const mode of ['disabled', 'enabled']) {
    await step('maint_' + mode, async () => {
      const m = createClient({
        socket: { host, port, reconnectStrategy: false }, maintNotifications: mode,
      });
      m.on('error', () => {});
      await m.connect();
      const pong = await m.ping();
      await m.quit();
      return pong;
    });
  }
}

// Fenced grants (SETFENCE, latch's own command): each library passes the
// reply through untouched — the token, an integer, or null — where a
// spelling as SET … FENCE may meet a library's idea of what SET returns.
async function fencedGrants(raw, k) {
  await step('fence_del', () => raw(['DEL', k]));
  await step('fence_grant', () => raw(['SETFENCE', k, 'tok-A', 'NX', 'PX', '30000']));
  await step('fence_held', () => raw(['SETFENCE', k, 'tok-B', 'NX', 'PX', '30000']));
  await step('fence_renew', () => raw(['SETFENCE', k, 'tok-A', 'IFEQ', 'tok-A', 'PX', '30000']));
  await step('fence_of_key', () => raw(['FENCE', k]));
  await step('fence_release', () => raw(['DELIFEQ', k, 'tok-A']));
  await step('fence_next', () => raw(['SETFENCE', k, 'tok-B', 'NX', 'PX', '30000']));
  await step('fence_min', () =>
    raw(['SETFENCE', k, 'tok-B', 'IFEQ', 'tok-B', 'PX', '30000', 'MIN', '1000000']));
  await step('fence_bad', () => raw(['SETFENCE', k, 'tok-B', 'GET']));
}

async function runIoredisFence() {
  const Redis = require('ioredis');
  const r = new Redis({
    host, port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null,
  });
  await r.connect();
  await fencedGrants((argv) => r.call(...argv), 'io:fence');
  await r.quit();
}

async function runNodeRedisFence() {
  const { createClient } = require('redis');
  const c = createClient({ socket: { host, port, reconnectStrategy: false } });
  c.on('error', () => {});
  await c.connect();
  await fencedGrants((argv) => c.sendCommand(argv), 'nr:fence');
  await c.quit();
}

const runners = {
  ioredis: runIoredis,
  'node-redis': runNodeRedis,
  'ioredis-fence': runIoredisFence,
  'node-redis-fence': runNodeRedisFence,
};
if (!runners[which] || !Number.isInteger(port)) {
  console.error('usage: node clients.mjs ioredis|node-redis|ioredis-fence|node-redis-fence PORT');
  process.exit(2);
}
try {
  await runners[which]();
} catch (e) {
  out.fatal = e.stack || e.message;
}
process.stdout.write(JSON.stringify(out) + '\n');
