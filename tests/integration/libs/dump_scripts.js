// Prints, as one JSON array, the Lua script texts the npm lock libraries
// send, each taken from the library itself at run time (not copied):
//   [{"library": ..., "name": ..., "text": ..., "sha1": <the library's own sha1>}]
// where the library computes one; the test compares them with latch's table
// and uses the texts to load the scripts into redis-server.
'use strict';

const crypto = require('crypto');

const sha1 = (text) => crypto.createHash('sha1').update(text).digest('hex');

async function main() {
  const out = [];

  // redlock 4.2.0: the instance keeps {value, hash} for each script.
  const Redlock = require('redlock');
  const rl = new Redlock([{}]);
  for (const name of ['lockScript', 'unlockScript', 'extendScript']) {
    out.push({ library: 'redlock', name, text: rl.scripts[name].value, sha1: rl.scripts[name].hash });
  }

  // @sesamecare-oss/redlock 1.4.0: the texts it gives ioredis's defineCommand.
  const scripts = require('@sesamecare-oss/redlock/build/scripts.js');
  scripts.ensureCommands({
    defineCommand(name, definition) {
      out.push({ library: '@sesamecare-oss/redlock', name, text: definition.lua, sha1: sha1(definition.lua) });
    },
  });

  // redis-semaphore 5.8.0: a client that answers NOSCRIPT to EVALSHA gets
  // the text through EVAL.
  const semaphore = [
    ['delIfEqualLua', require('redis-semaphore/lib/mutex/release.js').delIfEqualLua, ['k', 'v']],
    ['expireIfEqualLua', require('redis-semaphore/lib/mutex/refresh.js').expireIfEqualLua, ['k', 'v', 1]],
  ];
  for (const [name, evalFn, args] of semaphore) {
    let sent = null;
    let text = null;
    await evalFn(
      {
        options: {},
        evalsha: async (sha) => {
          sent = sha;
          throw new Error('NOSCRIPT No matching script. Please use EVAL.');
        },
        eval: async (script) => {
          text = script;
          return 0;
        },
      },
      args
    );
    out.push({ library: 'redis-semaphore', name, text, sha1: sent });
  }

  // redlock-universal 0.8.5: IoredisAdapter loads each script with SCRIPT
  // LOAD before its first EVALSHA.
  const { IoredisAdapter } = require('redlock-universal');
  const loaded = [];
  const adapter = new IoredisAdapter({
    status: 'ready',
    script: async (subcommand, text) => {
      loaded.push(text);
      return sha1(text);
    },
    evalsha: async () => 0,
  });
  const calls = [
    ['delIfMatch', () => adapter.delIfMatch('k', 'v')],
    ['extendIfMatch', () => adapter.extendIfMatch('k', 'v', 1000)],
    ['atomicExtend', () => adapter.atomicExtend('k', 'v', 100, 1000)],
    ['batchSetNX', () => adapter.batchSetNX(['a', 'b'], ['v1', 'v2'], 1000)],
    ['inspect', () => adapter.inspect('k')],
  ];
  for (const [name, call] of calls) {
    const before = loaded.length;
    try {
      await call();
    } catch (e) {
      // The fake EVALSHA reply is not a valid result for every method.
    }
    if (loaded.length !== before + 1) throw new Error(name + ': expected one SCRIPT LOAD');
    out.push({ library: 'redlock-universal', name, text: loaded[before], sha1: null });
  }

  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(String((e && e.stack) || e) + '\n');
  process.exit(1);
});
