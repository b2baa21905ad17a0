// The RedLock libraries, unchanged, on latch-fixture nodes with real faults
// (tests/integration/test_bench_libraries.py sets the faults up; this
// program only uses each library as its README shows and reports what it
// did). Usage:  node bench.js SCENARIO   with LATCH_NODES set (and
// LATCH_CLIENT_HISTORY: the client history the checker reads).
//
// Prints one JSON line {"result": …} and exits 0; a crash exits 1.
'use strict';

const fs = require('fs');

const nodes = (process.env.LATCH_NODES || '').split(',').map((hp) => {
  const [host, port] = hp.split(':');
  return { host, port: Number(port) };
});
const historyPath = process.env.LATCH_CLIENT_HISTORY;

// The client history (docs/testbench.md): what each client believed.
function record(client, ev, fields) {
  if (!historyPath) return;
  const line = Object.assign({ t: Date.now(), client, ev }, fields || {});
  fs.appendFileSync(historyPath, JSON.stringify(line) + '\n');
}

function ioredis(name, options) {
  const Redis = require('ioredis');
  const clients = nodes.map(
    (n) =>
      new Redis(
        Object.assign(
          {
            host: n.host,
            port: n.port,
            connectionName: name,
            enableOfflineQueue: false,
            maxRetriesPerRequest: 0,
            retryStrategy: () => 200,
            lazyConnect: false,
          },
          options || {}
        )
      )
  );
  for (const c of clients) c.on('error', () => {});
  return clients;
}

// Resolves once each client is ready or has failed to connect for `ms`.
function settle(clients, ms) {
  return Promise.all(
    clients.map(
      (c) =>
        new Promise((resolve) => {
          if (c.status === 'ready') return resolve();
          c.once('ready', resolve);
          setTimeout(resolve, ms);
        })
    )
  );
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function timed(f) {
  const t0 = Date.now();
  try {
    const value = await f();
    return { ok: true, ms: Date.now() - t0, value };
  } catch (e) {
    return { ok: false, ms: Date.now() - t0, error: String((e && e.name) || e) + ': ' + String((e && e.message) || '') };
  }
}

const scenarios = {
  // npm redlock 4.2.0 with node-redis 3 clients (its README's setup).
  async redlock4() {
    const redis = require('redis3');
    const Redlock = require('redlock');
    const clients = nodes.map((n) =>
      redis.createClient(n.port, n.host, { enable_offline_queue: false, retry_strategy: () => 200 })
    );
    for (const c of clients) c.on('error', () => {});
    await sleep(300);
    const redlock = new Redlock(clients, { retryCount: 2, retryDelay: 100 });
    redlock.on('clientError', () => {});
    const r = await timed(async () => {
      const lock = await redlock.lock('bench:res', 2000);
      record('redlock4', 'acquired', { key: 'bench:res', token: lock.value, until: lock.expiration });
      await lock.unlock().catch(() => {});
      record('redlock4', 'release', { key: 'bench:res', token: lock.value });
      return lock.value;
    });
    for (const c of clients) c.end(false);
    return r;
  },

  // @sesamecare-oss/redlock 1.4.0 with ioredis: acquire once.
  async sesamecare() {
    const { Redlock } = require('@sesamecare-oss/redlock');
    const clients = ioredis('S', { commandTimeout: 300 });
    await settle(clients, 500);
    const redlock = new Redlock(clients, { retryCount: 0 });
    redlock.on('error', () => {});
    const r = await timed(async () => {
      const lock = await redlock.acquire(['bench:res'], 2000);
      await lock.release().catch(() => {});
      return lock.value;
    });
    for (const c of clients) c.disconnect();
    return r;
  },

  // The drift scenario: client A (named "A": the test partitions node 2 from
  // it) acquires with the library's default drift factor (0.01); 700 ms
  // later client B acquires. Both record what the library told them.
  async sesamecare_drift() {
    const { Redlock } = require('@sesamecare-oss/redlock');
    const a = ioredis('A', { commandTimeout: 300 });
    const b = ioredis('B', { commandTimeout: 300 });
    await settle(a.concat(b), 500);
    const driftFactor = Number(process.env.DRIFT_FACTOR || '0.01');
    const la = new Redlock(a, { retryCount: 0, driftFactor });
    const lb = new Redlock(b, { retryCount: 0, driftFactor });
    la.on('error', () => {});
    lb.on('error', () => {});
    const out = {};
    record('A', 'acquire', { key: 'bench:drift' });
    out.a = await timed(async () => {
      const lock = await la.acquire(['bench:drift'], 2000);
      record('A', 'acquired', { key: 'bench:drift', token: lock.value, until: lock.expiration });
      return { token: lock.value, validity_ms: lock.expiration - Date.now() };
    });
    await sleep(700);
    record('B', 'acquire', { key: 'bench:drift' });
    out.b = await timed(async () => {
      const lock = await lb.acquire(['bench:drift'], 2000);
      record('B', 'acquired', { key: 'bench:drift', token: lock.value, until: lock.expiration });
      return { token: lock.value };
    });
    await sleep(300);
    for (const c of a.concat(b)) c.disconnect();
    return out;
  },

  // redis-semaphore 5.8.0 RedlockMutex with ioredis (a command timeout, so
  // a frozen node counts as a vote against instead of hanging the client).
  async semaphore() {
    const { RedlockMutex } = require('redis-semaphore');
    const clients = ioredis('M', { commandTimeout: 300 });
    await settle(clients, 500);
    const mutex = new RedlockMutex(clients, 'bench:res', {
      lockTimeout: 2000,
      acquireTimeout: 1500,
      retryInterval: 100,
      refreshInterval: 0,
    });
    const r = await timed(async () => {
      await mutex.acquire();
      await mutex.release().catch(() => {});
      return mutex.identifier;
    });
    for (const c of clients) c.disconnect();
    return r;
  },
};

const name = process.argv[2];
if (!scenarios[name]) {
  process.stderr.write('unknown scenario ' + name + '\n');
  process.exit(2);
}
scenarios[name]().then(
  (result) => {
    process.stdout.write(JSON.stringify({ result }) + '\n');
    process.exit(0);
  },
  (e) => {
    process.stderr.write('FAILED: ' + ((e && e.stack) || e) + '\n');
    process.exit(1);
  }
);
