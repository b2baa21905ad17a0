// Shared by the lock-library programs in this directory (nothing here is
// part of any library's code path: the programs call each library's public
// API exactly as its README shows).
//
// Usage of every program:  node PROGRAM.js PORT[,PORT,PORT]
// One port: the single-node scenario. Three ports: the RedLock scenario, in
// which the program prints {"step":"kill"} and waits for a line on stdin
// while the test kills the third server. LOCK_DBS=1,2,3 in the environment
// puts the client of each server in that database (default 0).
//
// Each step that passed is printed as one JSON line {"step": name, ...}; the
// program ends with {"step":"done"} and exit status 0, or prints the failure
// and exits with status 1.
'use strict';

const readline = require('readline');

function ports() {
  const arg = process.argv[2];
  if (!arg) throw new Error('usage: node ' + process.argv[1] + ' PORT[,PORT,PORT]');
  return arg.split(',').map((p) => Number(p));
}

function step(name, extra) {
  process.stdout.write(JSON.stringify(Object.assign({ step: name }, extra || {})) + '\n');
}

function check(condition, what) {
  if (!condition) throw new Error('check failed: ' + what);
}

// Resolves to the rejection of `promise`; throws if it fulfilled.
async function rejection(promise, what) {
  let value;
  try {
    value = await promise;
  } catch (e) {
    return e;
  }
  throw new Error(what + ': expected a rejection, got ' + JSON.stringify(value));
}

// The database of each server's client (LOCK_DBS), as numbers.
function dbs() {
  const n = ports().length;
  const list = (process.env.LOCK_DBS || '').split(',').filter((d) => d !== '');
  return Array.from({ length: n }, (_, i) => Number(list[i] || 0));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One ioredis client per port, connected: a dead server makes commands fail
// at once (no offline queue, no retries) while the client keeps reconnecting
// in the background, which is what a RedLock library expects of its clients.
async function ioredisClients(ps) {
  const Redis = require('ioredis');
  const db = dbs();
  const clients = ps.map(
    (port, i) =>
      new Redis({
        port,
        host: '127.0.0.1',
        db: db[i],
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => 200,
      })
  );
  for (const c of clients) c.on('error', () => {});
  await Promise.all(clients.map((c) => new Promise((resolve) => c.once('ready', resolve))));
  return clients;
}

let lines = null;
// Asks the test to kill the last server, and waits until it has.
function killLastServer() {
  if (lines === null) {
    lines = readline.createInterface({ input: process.stdin });
  }
  step('kill');
  return new Promise((resolve) => lines.once('line', () => resolve()));
}

function main(scenario) {
  scenario().then(
    () => {
      step('done');
      process.exit(0);
    },
    (e) => {
      process.stderr.write('FAILED: ' + ((e && e.stack) || e) + '\n');
      process.exit(1);
    }
  );
}

module.exports = {
  ports,
  step,
  check,
  rejection,
  sleep,
  dbs,
  ioredisClients,
  killLastServer,
  main,
};
