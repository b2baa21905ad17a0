// The subscriber modes of the Node.js clients against latch-server: what a
// lock client that waits for a release message does (Redisson's pattern, in
// JavaScript). Prints one JSON object: the messages each subscription got,
// in order, and the values of the calls around them.
//
//   node pubsub.mjs ioredis PORT
//   node pubsub.mjs node-redis PORT
//
// tests/integration/test_pubsub.py checks the values.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const [, , which, portArg] = process.argv;
const port = Number(portArg);
const host = '127.0.0.1';
const out = { messages: [], pmessages: [], expired: [] };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Waits until `cond()` holds, for at most 5 s.
async function until(cond) {
  for (let i = 0; i < 500 && !cond(); ++i) await sleep(10);
}

async function withIoredis() {
  const Redis = require('ioredis');
  const opts = { host, port, lazyConnect: true, maxRetriesPerRequest: 0 };
  const sub = new Redis(opts);
  const pub = new Redis(opts);
  await sub.connect();
  await pub.connect();
  sub.on('message', (channel, message) => out.messages.push([channel, message]));
  sub.on('pmessage', (pattern, channel, message) => out.pmessages.push([pattern, channel, message]));
  out.subscribe = await sub.subscribe('lock:release', 'other');
  out.psubscribe = await sub.psubscribe('lock:*');
  out.publish = await pub.publish('lock:release', 'tok-A');
  out.publish_other = await pub.publish('other', 'x');
  await until(() => out.messages.length >= 2 && out.pmessages.length >= 1);
  out.numsub = await pub.pubsub('NUMSUB', 'lock:release');
  out.unsubscribe = await sub.unsubscribe('other');
  out.publish_after = await pub.publish('other', 'y');
  // A lease running out, announced by a keyspace notification.
  await pub.config('SET', 'notify-keyspace-events', 'Ex');
  const ev = new Redis(opts);
  await ev.connect();
  ev.on('message', (channel, key) => out.expired.push([channel, key]));
  await ev.subscribe('__keyevent@0__:expired');
  await pub.set('lease', 'tok', 'PX', 50);
  await until(() => out.expired.length >= 1);
  await pub.config('SET', 'notify-keyspace-events', '');
  await Promise.all([sub.quit(), pub.quit(), ev.quit()]);
}

async function withNodeRedis() {
  const { createClient } = require('redis');
  const pub = createClient({ socket: { host, port, reconnectStrategy: false } });
  await pub.connect();
  const sub = pub.duplicate();
  await sub.connect();
  await sub.subscribe(['lock:release', 'other'], (message, channel) => out.messages.push([channel, message]));
  await sub.pSubscribe('lock:*', (message, channel) => out.pmessages.push(['lock:*', channel, message]));
  out.publish = await pub.publish('lock:release', 'tok-A');
  out.publish_other = await pub.publish('other', 'x');
  await until(() => out.messages.length >= 2 && out.pmessages.length >= 1);
  out.numsub = await pub.sendCommand(['PUBSUB', 'NUMSUB', 'lock:release']);
  await sub.unsubscribe('other');
  out.publish_after = await pub.publish('other', 'y');
  await pub.configSet('notify-keyspace-events', 'Ex');
  const ev = pub.duplicate();
  await ev.connect();
  await ev.subscribe('__keyevent@0__:expired', (key, channel) => out.expired.push([channel, key]));
  await pub.set('lease', 'tok', { PX: 50 });
  await until(() => out.expired.length >= 1);
  await pub.configSet('notify-keyspace-events', '');
  await Promise.all([sub.quit(), pub.quit(), ev.quit()]);
}

try {
  if (which === 'ioredis') {
    await withIoredis();
  } else {
    await withNodeRedis();
  }
} catch (e) {
  out.fatal = e.stack || String(e);
}
console.log(JSON.stringify(out));
process.exit(0);
