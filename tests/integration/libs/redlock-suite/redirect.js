// Preloaded (node -r) into node-redlock 4.2.0's own test suite, which
// connects every client to Redis's default address, 127.0.0.1:6379: sends
// those connections to the server under test instead (REDLOCK_SUITE_PORT),
// so the suite runs unchanged against a server on a free port. Nothing else
// is touched.
'use strict';
const net = require('net');

const target = Number(process.env.REDLOCK_SUITE_PORT);
if (!Number.isInteger(target) || target <= 0) {
  throw new Error('REDLOCK_SUITE_PORT must name the port of the server under test');
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  // net.connect / createConnection hand over [options, callback] (already
  // normalised) or (options | port, …) when called directly.
  let opts = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (opts !== null && typeof opts === 'object') {
    if (Number(opts.port) === 6379) opts.port = target;
  } else if (Number(args[0]) === 6379) {
    args[0] = target;
  }
  return connect.apply(this, args);
};
