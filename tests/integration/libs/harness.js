// Shared by the lock-library programs in this directory (nothing here is
// part of any library's code path: the programs call each library's public
// API exactly as its README shows).
//
// Usage of every program:  node PROGRAM.js PORT[,PORT,PORT]
// One port: the single-node scenario. Three ports: the RedLock scenario, in
// which the program prints {"step":"kill"} and waits for a line on stdin
// while the test kills the third server.
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

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

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

module.exports = { ports, step, check, rejection, sleep, killLastServer, main };
