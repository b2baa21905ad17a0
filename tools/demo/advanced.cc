// The locks the tutorial ends with (seed 3's V5 and Redisson's advanced
// locks), each built on a hash, a list or a sorted set the way Redisson or
// redis-semaphore builds it, each first shown broken the naive way and then
// holding, on a real server:
//
//   reentrant  a hash counting holds per owner (HINCRBY), Redisson's RLock
//   fair       a list as the queue and a sorted set of waiters' deadlines
//   rwlock     a hash with a "mode" field: readers together, a writer alone
//   semaphore  a sorted set of permits scored by when they were taken
//   pubsub     waiting by pub/sub: subscribe before you try, or miss the
//              release
//
// The scripts are Redisson's (reentrant) or written in the shape of
// Redisson's and redis-semaphore's, shortened where theirs handle what the
// scene does not show (lease renewal, timeouts per reader); each runs as
// one atomic step, which is the whole point.
#include <optional>
#include <string>
#include <vector>

#include "tools/demo/story.h"

namespace latch::demo {
namespace {

// Runs a script and narrates it by name: "EVAL <name> keys... args...".
Reply Eval(Story& s, const std::string& who, Client& c, const std::string& name,
           const std::string& script, const std::vector<std::string>& keys,
           const std::vector<std::string>& args, const std::string& meaning = "") {
  std::vector<std::string> req = {"EVAL", script, std::to_string(keys.size())};
  req.insert(req.end(), keys.begin(), keys.end());
  req.insert(req.end(), args.begin(), args.end());
  Reply r = c.Call(req);
  std::string shown = "EVAL " + name;
  for (const auto& k : keys) shown += " " + k;
  for (const auto& a : args) shown += " " + a;
  s.Say(who, shown + "  ->  " + r.ToString() + (meaning.empty() ? "" : "   (" + meaning + ")"));
  return r;
}

// ---------------------------------------------------------------- reentrant

// Redisson's RLock (RedissonLock.tryLockInnerAsync / unlockInnerAsync): the
// lock is a hash of owner -> holds. Taking it again as its owner counts one
// more hold; each release counts one down and only the last deletes the key
// and publishes the release to the lock's channel.
const char* kReentrantLock =
    "if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) "
    "then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; end; return redis.call('pttl', KEYS[1]);";
const char* kReentrantUnlock =
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; "
    "else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end; "
    "return nil;";

}  // namespace

Verdict Reentrant(const Env& env) {
  return WithServer(env, "reentrant", [](const std::string& host, int port) {
    Story s;
    Client a(host, port), b(host, port);
    a.Call({"DEL", "lock:plain", "lock:re"});
    s.Say("", "a plain SET NX lock, taken again by its holder (a locked method calling another):");
    s.Send("A", a, {"SET", "lock:plain", "A", "NX", "PX", "500"}, "outer call");
    Reply nested = s.Send("A", a, {"SET", "lock:plain", "A", "NX", "PX", "500"},
                          "inner call: refused, A would wait for itself");
    a.Call({"DEL", "lock:plain"});
    s.Say("", "Redisson's reentrant lock, a hash of owner -> holds:");
    const std::vector<std::string> keys = {"lock:re", "redisson_lock__channel:{lock:re}"};
    Eval(s, "A", a, "lock", kReentrantLock, {"lock:re"}, {"30000", "A:1"}, "nil: taken");
    Eval(s, "A", a, "lock", kReentrantLock, {"lock:re"}, {"30000", "A:1"}, "nil: taken again");
    Reply holds = s.Send("A", a, {"HGET", "lock:re", "A:1"}, "two holds");
    Reply b1 = Eval(s, "B", b, "lock", kReentrantLock, {"lock:re"}, {"30000", "B:1"},
                    "refused: the lease's PTTL");
    Reply inner = Eval(s, "A", a, "unlock", kReentrantUnlock, keys, {"0", "30000", "A:1"},
                       "0: one hold left, still A's");
    Reply b2 = Eval(s, "B", b, "lock", kReentrantLock, {"lock:re"}, {"30000", "B:1"}, "refused");
    Reply outer = Eval(s, "A", a, "unlock", kReentrantUnlock, keys, {"0", "30000", "A:1"},
                       "1: the last hold, deleted and published");
    Reply b3 = Eval(s, "B", b, "lock", kReentrantLock, {"lock:re"}, {"30000", "B:1"}, "B's now");
    a.Call({"DEL", "lock:re"});
    bool plain_broken = IsNil(nested);
    bool held = holds.str == "2" && b1.type == Reply::Type::kInteger && IsInt(inner, 0) &&
                b2.type == Reply::Type::kInteger && IsInt(outer, 1) && IsNil(b3);
    if (plain_broken && held) {
      return Verdict{true,
                     "a plain lock refused its own holder; the hash counted A's two holds, "
                     "kept B out until A's last release, then let B in"};
    }
    return Verdict{false, "the reentrant lock did not count holds as it should"};
  });
}

// ---------------------------------------------------------------- fair

namespace {

// In the shape of Redisson's RedissonFairLock: KEYS[1] the lock (a hash, as
// above), KEYS[2] the queue (a list of owners, first come first), KEYS[3] each
// waiter's deadline (a sorted set). A waiter that stops asking (it crashed,
// gave up) passes its deadline and is dropped from the queue, so it cannot
// block the ones behind it. ARGV: lease ms, owner, wait ms, the client's
// clock in ms (Redisson passes its own too).
const char* kFairLock =
    "while true do "
    "  local first = redis.call('lindex', KEYS[2], 0); "
    "  if first == false then break end; "
    "  local deadline = tonumber(redis.call('zscore', KEYS[3], first)); "
    "  if deadline > tonumber(ARGV[4]) then break end; "
    "  redis.call('zrem', KEYS[3], first); redis.call('lpop', KEYS[2]); "
    "end; "
    "if redis.call('exists', KEYS[1]) == 0 and (redis.call('exists', KEYS[2]) == 0 "
    "    or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then "
    "  redis.call('lpop', KEYS[2]); redis.call('zrem', KEYS[3], ARGV[2]); "
    "  redis.call('hset', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); "
    "  return nil; "
    "end; "
    "if redis.call('zscore', KEYS[3], ARGV[2]) == false then "
    "  redis.call('rpush', KEYS[2], ARGV[2]); "
    "end; "
    "redis.call('zadd', KEYS[3], tonumber(ARGV[4]) + tonumber(ARGV[3]), ARGV[2]); "
    "local ttl = redis.call('pttl', KEYS[1]); "
    "if ttl < 0 then return 0 end; "
    "return ttl;";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace

Verdict Fair(const Env& env) {
  return WithServer(env, "fair", [](const std::string& host, int port) {
    Story s;
    Client a(host, port), b(host, port), c(host, port), d(host, port);
    a.Call({"DEL", "lock:unfair", "lock:fair", "lock:fair:queue", "lock:fair:timeouts"});
    s.Say("", "SET NX and retry: whoever retries first after a release wins");
    s.Send("A", a, {"SET", "lock:unfair", "A", "NX", "PX", "5000"}, "A holds it");
    s.Send("B", b, {"SET", "lock:unfair", "B", "NX", "PX", "5000"}, "B asks first, sleeps");
    s.Send("C", c, {"SET", "lock:unfair", "C", "NX", "PX", "5000"}, "C asks later, sleeps");
    s.Send("A", a, {"DEL", "lock:unfair"}, "A releases while B sleeps");
    Reply c_unfair = s.Send("C", c, {"SET", "lock:unfair", "C", "NX", "PX", "5000"},
                            "C wakes first: C has it, ahead of B");
    a.Call({"DEL", "lock:unfair"});

    s.Say("", "a fair lock: a list as the queue, a sorted set of each waiter's deadline");
    const std::vector<std::string> keys = {"lock:fair", "lock:fair:queue", "lock:fair:timeouts"};
    auto ask = [&](const std::string& who, Client& cl, const std::string& wait_ms,
                   const std::string& meaning) {
      return Eval(s, who, cl, "fair-lock", kFairLock, keys,
                  {"30000", who, wait_ms, std::to_string(NowMs())}, meaning);
    };
    s.Say("", "(args: lease ms, owner, wait ms, the client's clock)");
    ask("A", a, "5000", "nil: A holds it");
    ask("B", b, "5000", "queued first");
    ask("D", d, "300", "queued second, then D crashes");
    ask("C", c, "5000", "queued third");
    s.Send("A", a, {"DEL", "lock:fair"}, "A releases");
    Reply c1 = ask("C", c, "5000", "refused: B is first in the queue");
    Reply b1 = ask("B", b, "5000", "nil: B's turn");
    s.Send("B", b, {"DEL", "lock:fair"}, "B releases");
    Reply c2 = ask("C", c, "5000", "refused: D, dead, is first until its deadline");
    s.Wait(320, "D's deadline passes");
    Reply c3 = ask("C", c, "5000", "nil: D dropped from the queue, C's turn");
    Reply queue = s.Send("C", c, {"LRANGE", "lock:fair:queue", "0", "-1"}, "nobody waits");
    a.Call({"DEL", "lock:fair", "lock:fair:queue", "lock:fair:timeouts"});
    bool unfair_shown = IsOk(c_unfair);
    bool fair_held = c1.type == Reply::Type::kInteger && IsNil(b1) &&
                     c2.type == Reply::Type::kInteger && IsNil(c3) && queue.elements.empty();
    if (unfair_shown && fair_held) {
      return Verdict{true,
                     "retrying let C overtake B; the queue gave B its turn first, and a crashed "
                     "waiter held the line up only until its deadline"};
    }
    return Verdict{false, "the fair lock did not serve the queue in order"};
  });
}

// ---------------------------------------------------------------- read-write

namespace {

// In the shape of Redisson's RedissonReadLock / RedissonWriteLock: one hash,
// "mode" = read or write, and a hold count per owner. Readers share the
// lock; a writer takes it only when nobody holds it. Release: one hold less,
// and the key goes when the last holder leaves.
const char* kReadLock =
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if mode == false then redis.call('hset', KEYS[1], 'mode', 'read'); end; "
    "if mode == false or mode == 'read' then "
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); "
    "  return nil; "
    "end; "
    "return redis.call('pttl', KEYS[1]);";
const char* kWriteLock =
    "local mode = redis.call('hget', KEYS[1], 'mode'); "
    "if mode == false then "
    "  redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1); "
    "  redis.call('pexpire', KEYS[1], ARGV[1]); return nil; "
    "end; "
    "if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then "
    "  redis.call('hincrby', KEYS[1], ARGV[2], 1); return nil; "
    "end; "
    "return redis.call('pttl', KEYS[1]);";
const char* kRwUnlock =
    "if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return nil end; "
    "if redis.call('hincrby', KEYS[1], ARGV[1], -1) == 0 then "
    "  redis.call('hdel', KEYS[1], ARGV[1]); "
    "end; "
    "if redis.call('hlen', KEYS[1]) == 1 then redis.call('del', KEYS[1]); return 1 end; "
    "return 0;";

}  // namespace

Verdict ReadWrite(const Env& env) {
  return WithServer(env, "rwlock", [](const std::string& host, int port) {
    Story s;
    Client r1(host, port), r2(host, port), w(host, port);
    r1.Call({"DEL", "rw:readers", "rw:writer", "lock:rw"});
    s.Say("", "two keys and four commands: a reader count and a writer key");
    s.Send("W", w, {"GET", "rw:readers"}, "no readers: W may write");
    s.Send("R1", r1, {"EXISTS", "rw:writer"}, "no writer: R1 may read");
    s.Send("R1", r1, {"INCR", "rw:readers"}, "R1 reads");
    Reply wset = s.Send("W", w, {"SET", "rw:writer", "W", "NX", "PX", "5000"},
                        "W writes: a reader and a writer at once");
    r1.Call({"DEL", "rw:readers", "rw:writer"});

    s.Say("", "one hash, \"mode\" and a hold count per owner, changed by one script at a time:");
    const std::vector<std::string> key = {"lock:rw"};
    Reply a = Eval(s, "R1", r1, "read-lock", kReadLock, key, {"30000", "R1"}, "nil: reading");
    Reply b = Eval(s, "R2", r2, "read-lock", kReadLock, key, {"30000", "R2"}, "nil: reading too");
    Reply w1 = Eval(s, "W", w, "write-lock", kWriteLock, key, {"30000", "W"}, "refused: readers");
    Eval(s, "R1", r1, "unlock", kRwUnlock, key, {"R1"}, "0: R2 still reads");
    Reply w2 = Eval(s, "W", w, "write-lock", kWriteLock, key, {"30000", "W"}, "refused");
    Eval(s, "R2", r2, "unlock", kRwUnlock, key, {"R2"}, "1: the last reader left");
    Reply w3 = Eval(s, "W", w, "write-lock", kWriteLock, key, {"30000", "W"}, "nil: writing");
    Reply r3 = Eval(s, "R1", r1, "read-lock", kReadLock, key, {"30000", "R1"}, "refused: a writer");
    Eval(s, "W", w, "unlock", kRwUnlock, key, {"W"}, "1: released");
    r1.Call({"DEL", "lock:rw"});
    bool race_shown = IsOk(wset);
    bool held = IsNil(a) && IsNil(b) && w1.type == Reply::Type::kInteger &&
                w2.type == Reply::Type::kInteger && IsNil(w3) && r3.type == Reply::Type::kInteger;
    if (race_shown && held) {
      return Verdict{true,
                     "checked with separate commands, a reader slipped in between W's check and "
                     "its write; in one script, readers shared the lock and the writer had it "
                     "alone"};
    }
    return Verdict{false, "the read-write lock let a reader and a writer in together"};
  });
}

// ---------------------------------------------------------------- semaphore

namespace {

// redis-semaphore's acquire (src/semaphore/acquire/lua.ts): permits are
// members of a sorted set scored by when they were taken; a permit older
// than the lease has expired and is removed before counting. Release is a
// plain ZREM. ARGV: limit, identifier, lease ms, the client's clock in ms.
const char* kSemaphoreAcquire =
    "local key = KEYS[1]; local limit = tonumber(ARGV[1]); local id = ARGV[2]; "
    "local lease = tonumber(ARGV[3]); local now = tonumber(ARGV[4]); "
    "redis.call('zremrangebyscore', key, '-inf', now - lease); "
    "if redis.call('zcard', key) < limit then "
    "  redis.call('zadd', key, now, id); redis.call('pexpire', key, lease); return 1; "
    "end; "
    "return 0;";
// ... and its refresh, which a holder sends while it works: the permit's
// score moves to now (and the set's expiry with it) if it still holds one.
const char* kSemaphoreRefresh =
    "local key = KEYS[1]; local id = ARGV[2]; "
    "local lease = tonumber(ARGV[3]); local now = tonumber(ARGV[4]); "
    "redis.call('zremrangebyscore', key, '-inf', now - lease); "
    "if redis.call('zscore', key, id) then "
    "  redis.call('zadd', key, now, id); redis.call('pexpire', key, lease); return 1; "
    "end; "
    "return 0;";

}  // namespace

Verdict Semaphore(const Env& env) {
  return WithServer(env, "semaphore", [](const std::string& host, int port) {
    Story s;
    Client p1(host, port), p2(host, port), p3(host, port), p4(host, port);
    p1.Call({"DEL", "sem:naive", "sem:jobs"});
    s.Say("", "2 permits, counted with ZCARD, then taken with ZADD (two commands):");
    const std::string now = std::to_string(NowMs());
    for (auto* who : {"P1", "P2", "P3"}) {
      Client& c = who[1] == '1' ? p1 : who[1] == '2' ? p2 : p3;
      s.Send(who, c, {"ZCARD", "sem:naive"}, "fewer than 2: go");
    }
    for (auto* who : {"P1", "P2", "P3"}) {
      Client& c = who[1] == '1' ? p1 : who[1] == '2' ? p2 : p3;
      s.Send(who, c, {"ZADD", "sem:naive", now, who});
    }
    Reply naive = s.Send("", p1, {"ZCARD", "sem:naive"}, "holders of 2 permits");
    p1.Call({"DEL", "sem:naive"});

    s.Say("", "redis-semaphore's acquire, one script (args: limit, id, lease ms, clock):");
    auto take = [&](const std::string& who, Client& c, const std::string& lease,
                    const std::string& meaning) {
      return Eval(s, who, c, "acquire", kSemaphoreAcquire, {"sem:jobs"},
                  {"2", who, lease, std::to_string(NowMs())}, meaning);
    };
    Reply a1 = take("P1", p1, "1000", "a permit");
    Reply a2 = take("P2", p2, "1000", "a permit, then P2 crashes and never releases it");
    Reply a3 = take("P3", p3, "1000", "0: both permits taken");
    s.Send("P1", p1, {"ZREM", "sem:jobs", "P1"}, "P1 releases");
    Reply a4 = take("P3", p3, "1000", "1: P1's permit");
    Reply a5 = take("P4", p4, "1000", "0: P2 and P3 hold them");
    s.Wait(500, "P3 works");
    Eval(s, "P3", p3, "refresh", kSemaphoreRefresh, {"sem:jobs"},
         {"2", "P3", "1000", std::to_string(NowMs())}, "1: P3 still holds its permit, renewed");
    s.Wait(520, "P2's permit outlives its lease");
    Reply a6 = take("P4", p4, "1000", "1: P2's expired permit removed, P4's now");
    Reply holders = s.Send("", p1, {"ZRANGE", "sem:jobs", "0", "-1"}, "the holders");
    p1.Call({"DEL", "sem:jobs"});
    bool naive_broken = IsInt(naive, 3);
    bool held = IsInt(a1, 1) && IsInt(a2, 1) && IsInt(a3, 0) && IsInt(a4, 1) && IsInt(a5, 0) &&
                IsInt(a6, 1) && holders.elements.size() == 2;
    if (naive_broken && held) {
      return Verdict{true,
                     "counting then adding let 3 clients take 2 permits; in one script never "
                     "more than 2 held, and a crashed holder's permit came back at its lease's "
                     "end"};
    }
    return Verdict{false, "the semaphore gave out more permits than it has"};
  });
}

// ---------------------------------------------------------------- pub/sub

// How Redisson waits: the release script publishes on the lock's channel
// and a waiter, subscribed to it, tries again when the message comes. The
// order matters: a waiter that tries, fails, and only then subscribes
// misses a release that happens in between, and sleeps until its wait runs
// out. Redisson subscribes first, then tries.
Verdict PubSubWaiting(const Env& env) {
  return WithServer(env, "pubsub", [](const std::string& host, int port) {
    Story s;
    Client a(host, port), b(host, port);
    const std::string channel = "redisson_lock__channel:{lock:ps}";
    const std::vector<std::string> keys = {"lock:ps", channel};
    a.Call({"DEL", "lock:ps"});
    auto wait_for_release = [&](Client& sub, int64_t ms) {
      std::optional<Reply> m = sub.Receive(std::chrono::milliseconds(ms));
      if (m && m->elements.size() == 3 && m->elements[0].str == "message") {
        s.Say("B", "hears \"" + m->elements[2].str + "\" on " + m->elements[1].str);
        return true;
      }
      s.Say("B", "heard nothing in " + std::to_string(ms) + " ms");
      return false;
    };
    auto round = [&](bool subscribe_first) {
      Client sub(host, port);
      Eval(s, "A", a, "lock", kReentrantLock, {"lock:ps"}, {"30000", "A:1"}, "A holds it");
      if (subscribe_first) {
        sub.Send({"SUBSCRIBE", channel});
        sub.Receive(std::chrono::seconds(5));
        s.Say("B", "SUBSCRIBE " + channel + "  ->  subscribed, first");
      }
      Eval(s, "B", b, "lock", kReentrantLock, {"lock:ps"}, {"30000", "B:1"}, "refused");
      if (!subscribe_first) s.Say("B", "is about to subscribe, and is preempted");
      Eval(s, "A", a, "unlock", kReentrantUnlock, keys, {"0", "30000", "A:1"},
           "released, and published");
      if (!subscribe_first) {
        sub.Send({"SUBSCRIBE", channel});
        sub.Receive(std::chrono::seconds(5));
        s.Say("B", "SUBSCRIBE " + channel + "  ->  subscribed, too late");
      }
      bool heard = wait_for_release(sub, 500);
      Reply got = Eval(s, "B", b, "lock", kReentrantLock, {"lock:ps"}, {"30000", "B:1"},
                       heard ? "B's, at once" : "B's, but only after its wait ran out");
      a.Call({"DEL", "lock:ps"});
      return heard && IsNil(got);
    };
    s.Say("", "try, then subscribe:");
    bool late = round(false);
    s.Say("", "subscribe, then try (Redisson's order):");
    bool first = round(true);
    if (!late && first) {
      return Verdict{true,
                     "subscribed after its try, B missed the release published in between and "
                     "waited out its timeout; subscribed first, it heard the release at once"};
    }
    return Verdict{false, late ? "the late subscriber heard a release it should have missed"
                               : "the waiter that subscribed first missed the release"};
  });
}

}  // namespace latch::demo
