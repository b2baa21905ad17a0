#!/usr/bin/python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/).

The seeds are the requests and logs the tests use: the protocol error cases
of tests/integration/test_protocol_abuse.py, the lock recipes of the
differential tests, and log records like those in test_aof.py, each prefixed
with the flags byte(s) the target expects. The output is committed; run this
again (from anywhere) after changing the cases, then commit the result.
"""

import hashlib
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.dont_write_bytecode = True

from latchtest import encode  # noqa: E402
import test_protocol_abuse as abuse  # noqa: E402


def write(target, seeds):
    d = os.path.join(HERE, "corpus", target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for data in seeds:
        # libFuzzer names corpus files by their SHA-1, so do the same.
        with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
    print("%s: %d seeds" % (target, len(seeds)))


def small(data):
    return len(data) <= 4096


# Requests a client sends: protocol errors, pipelines, inline lines.
streams = [data for _, data, _ in abuse.PROTOCOL_ERRORS if small(data)]
streams += [data for _, data, _ in abuse.UNAUTH_CASES]
streams += [
    encode("SET", "lock", "token", "NX", "PX", "30000"),
    encode("GET", "k") + b"PING\r\n" + b"*0\r\n" + b"\n" + b"ECHO 'x y'\n" + encode("PING"),
    b"*2\r\n$4\r\nECHO\r\n$7\r\n\r\n\0\r*\n$\r\n",
    b'SET k "a b\\x41" \'c d\'\r\n',
    b"*-1\r\n  \t \r\n",
    encode(*(["EXISTS"] + ["k"] * 11)),
]

# Sessions for the command layer: the lock recipes and the error paths.
sessions = [
    encode("SET", "lock", "tok", "NX", "PX", "30000") + encode("GET", "lock")
    + encode("PTTL", "lock") + encode("DELIFEQ", "lock", "tok") + encode("EXISTS", "lock"),
    encode("SET", "lock", "tok", "NX", "EX", "10") + encode("SET", "lock", "tok", "IFEQ", "tok",
                                                             "PX", "30000")
    + encode("DELEX", "lock", "IFEQ", "tok") + encode("DIGEST", "lock"),
    encode("SET", "k", "v", "PX", "100") + encode("FUZZ.ADVANCE", "50") + encode("GET", "k")
    + encode("FUZZ.ADVANCE", "51") + encode("GET", "k") + encode("FUZZ.EXPIRE"),
    encode("SET", "k", "v") + encode("PEXPIRE", "k", "1000", "GT") + encode("EXPIRE", "k", "5",
                                                                           "NX")
    + encode("PEXPIREAT", "k", "1") + encode("TTL", "k") + encode("PERSIST", "k"),
    encode("SET", "k", "v", "EXAT", "1700000001") + encode("FUZZ.STEPWALL", "-5000")
    + encode("PEXPIRETIME", "k") + encode("EXPIRETIME", "k"),
    encode("HELLO", "3") + encode("SET", "a", "1") + encode("GET", "a") + encode("CLIENT", "INFO")
    + encode("COMMAND", "INFO", "set") + encode("CONFIG", "GET", "max*"),
    encode("FOO", "a", "b") + encode("GET") + encode("SET", "k", "v", "NX", "XX")
    + encode("CONFIG", "SET", "maxclients", "0") + encode("SELECT", "1")
    + encode("HELLO", "4"),
    encode("SET", "k", "v", "GET") + encode("SETNX", "k", "w") + encode("SETEX", "k", "0", "v")
    + encode("PSETEX", "k", "10", "v") + encode("DEL", "k", "k"),
    encode("EVAL", "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', "
           "KEYS[1]) else return 0 end", "1", "lock", "tok")
    + encode("SCRIPT", "LOAD", "return 1") + encode("EVALSHA", "0" * 40, "0"),
    encode("CLIENT", "SETNAME", "x") + encode("CLIENT", "LIST") + encode("INFO")
    + encode("DBSIZE") + encode("TIME") + encode("FLUSHALL") + encode("COMMAND", "COUNT"),
    encode("MONITOR") + encode("SET", "k", "v") + encode("QUIT") + encode("PING"),
    encode("SELECT", "3") + encode("SET", "k", "3", "PX", "5000") + encode("MOVE", "k", "0")
    + encode("SWAPDB", "0", "3") + encode("MULTI") + encode("SET", "a", "3") + encode("SELECT", "1")
    + encode("SET", "a", "1") + encode("FLUSHDB") + encode("EXEC") + encode("DBSIZE")
    + encode("SELECT", "16") + encode("SWAPDB", "0", "16") + encode("MOVE", "a", "1"),
    b"PING\r\nECHO \"hello\\x00world\"\r\nSET k v\r\n",
    # Sorted sets: both encodings, the options, ranges, pops, the algebra.
    encode("ZADD", "z", "1", "a", "2.5", "b", "-inf", "c") + encode("ZADD", "z", "GT", "CH", "0", "a")
    + encode("ZINCRBY", "z", "inf", "a") + encode("ZADD", "z", "INCR", "-inf", "a")
    + encode("ZRANGE", "z", "(1", "+inf", "BYSCORE", "REV", "LIMIT", "0", "2", "WITHSCORES")
    + encode("ZRANGEBYLEX", "z", "[a", "(c") + encode("ZPOPMIN", "z", "2") + encode("HELLO", "3")
    + encode("ZPOPMAX", "z", "1") + encode("ZMPOP", "2", "x", "z", "MIN", "COUNT", "5"),
    encode("CONFIG", "SET", "zset-max-listpack-entries", "2") + encode("ZADD", "s", "1", "a",
                                                                        "2", "b", "3", "c")
    + encode("ZUNIONSTORE", "u", "2", "s", "z", "WEIGHTS", "2", "0", "AGGREGATE", "MAX")
    + encode("ZRANGESTORE", "d", "s", "0", "-1") + encode("ZSCAN", "s", "0", "COUNT", "1")
    + encode("ZREMRANGEBYSCORE", "s", "-inf", "(2") + encode("ZRANDMEMBER", "s", "-5",
                                                             "WITHSCORES")
    + encode("ZINTERCARD", "2", "s", "u", "LIMIT", "1") + encode("ZDIFF", "2", "u", "s"),
]
# The known lock scripts (tests/unit/known_scripts_test.cc), by SHA1, with the
# arguments their libraries send: a lock, a release, an extension.
known_shas = [
    "e5a322e2634ef59a516e8ea150cb085afafee684", "0f0f23b9048b36752b5be114f357ba083449f908",
    "ce46f80993d5dac20dd066eb301a4e37994bdbed", "1b77b94aa78451d55dfa97e18819bfbfc596cb5b",
    "820e9778d2b6733e9ed771e4be90ae73a95a6f3b", "df51f6837dcfe303d334e6abea9aeae192bab216",
    "7157921a7cc7cfba979acf6d63f073151df17d12", "594683e49a64ebaf975caf5f8079a1d097c438f1",
    "fd83166fb3d7235e3ace652b700c9e217c1adc1f", "e218d686a8f90368e5cd45074f06ce766cad9987",
    "c000e088bd4aca36ab429d3b7a16fc736f4cb6f1", "514d8d1b08387624661da2a9098d3949b633eb3a",
    "994908155dadb1bed08a5af6dee7fedf956c4826", "c3f8721cbb97f72bc19e972846bd7aaf91901658",
    "a4e8783852e6b949f9ef3a97212805108459a890", "1cac51482acf5858da00f6d685d68f886cd6b6b2",
]
for sha in known_shas:
    sessions.append(
        encode("SET", "lock", "tok", "PX", "30000")
        + encode("EVALSHA", sha, "1", "lock", "tok", "30000")
        + encode("EVALSHA", sha, "2", "lock", "other", "tok", "30000", "1")
        + encode("FUZZ.ADVANCE", "40000") + encode("EVALSHA", sha, "1", "lock", "tok"))
# Every runtime setting, then what depends on it.
sessions.append(
    encode("CONFIG", "SET", "hz", "50", "timeout", "10", "maxclients", "5")
    + encode("CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 512kb 5")
    + encode("CONFIG", "SET", "max-lock-ttl", "1000") + encode("SET", "l", "t", "PX", "5000")
    + encode("CONFIG", "SET", "quarantine", "always", "quarantine-ms", "100")
    + encode("CONFIG", "SET", "requirepass", "pw", "loglevel", "warning")
    + encode("CONFIG", "SET", "proto-max-bulk-len", "1mb") + encode("CONFIG", "GET", "*")
    + encode("CONFIG", "RESETSTAT") + encode("INFO", "all"))
sessions.append(
    encode("WATCH", "lock") + encode("MULTI") + encode("SET", "lock", "t", "NX", "PX", "100")
    + encode("GET", "lock") + encode("EXEC") + encode("MULTI") + encode("SET", "x", "1")
    + encode("NOSUCH") + encode("EXEC") + encode("MULTI") + encode("DISCARD") + encode("UNWATCH")
    + encode("MULTI") + encode("MULTI") + encode("WATCH", "k") + encode("EXEC"))
sessions.append(
    encode("CLIENT", "KILL", "127.0.0.1:1") + encode("CLIENT", "KILL", "ID", "1", "SKIPME", "no")
    + encode("CLIENT", "NO-EVICT", "on") + encode("CLIENT", "SETINFO", "LIB-NAME", "x")
    + encode("COMMAND", "DOCS", "set") + encode("COMMAND", "LIST") + encode("SHUTDOWN", "NOSAVE")
    + encode("PING"))
commands = [b"\x00" + s for s in sessions]
# With requirepass "pw": NOAUTH, WRONGPASS, AUTH and HELLO AUTH.
commands += [
    b"\x01" + encode("GET", "k") + encode("AUTH", "nope") + encode("AUTH", "default", "pw")
    + encode("GET", "k"),
    b"\x01" + encode("HELLO", "3", "AUTH", "default", "pw", "SETNAME", "me") + encode("PING"),
    b"\x01" + encode(*(["EXISTS"] + ["k"] * 11)),
    b"\x03" + encode("SET", "k", "v", "PX", "999999999") + encode("AUTH", "pw")
    + encode("SET", "k", "v", "PX", "999999999"),
]

# Log files: the records latch writes, then truncated and damaged variants.
records = [
    encode("SELECT", "0"),
    encode("SET", "lock", "tok"),
    encode("SET", "lock", "tok", "PXAT", "1700000030000"),
    encode("SET", "old", "x", "PXAT", "1600000000000"),
    encode("PEXPIREAT", "lock", "1800000000000"),
    encode("PERSIST", "lock"),
    encode("DEL", "old", "lock"),
    encode("SET", "b\r\n\0", "v\r\n"),
    encode("PEXPIREAT", "b\r\n\0", "1"),
    encode("FLUSHALL"),
]
log = b"".join(records)
# Transactions: applied at their EXEC; an unfinished one is cut off.
tx = encode("MULTI") + encode("SET", "t", "1") + encode("DEL", "lock") + encode("EXEC")
logs = [log, log[:-7], log + b"*2\r\n$3\r\nDEL\r\n$1", log.replace(b"PXAT", b"PXAX", 1),
        encode("SET", "k") + log, b"SET k v\r\n", encode("SELECT", "1"), b"*1\r\n$3\r\nDEL\n\n",
        log + tx, log + tx[:-14], tx + encode("EXEC"), encode("MULTI") + tx]
# Databases: keys in several, FLUSHDB and SWAPDB, a transaction across two,
# and a SELECT past the 16 databases (refused at its unit).
dbs = (encode("SELECT", "3") + encode("SET", "a", "3") + encode("SELECT", "15")
       + encode("SET", "a", "15") + encode("SWAPDB", "3", "15") + encode("SELECT", "0")
       + encode("MULTI") + encode("SET", "b", "0") + encode("SELECT", "7") + encode("SET", "b", "7")
       + encode("EXEC") + encode("FLUSHDB"))
logs += [dbs, dbs + encode("SELECT", "16") + encode("SET", "x", "y"),
         dbs + encode("SWAPDB", "0", "99"), encode("MULTI") + encode("SELECT", "2147483647")
         + encode("EXEC") + log[:-3]]
# Sorted sets: ZADD and ZREM, a bad score, a ZADD on a string (skipped).
logs += [encode("ZADD", "z", "1", "a", "inf", "b", "-0", "c") + encode("ZREM", "z", "a", "x")
         + encode("SET", "s", "v") + encode("ZADD", "s", "1", "a") + encode("ZREM", "z", "b", "c"),
         encode("ZADD", "z", "nan", "a"), encode("ZADD", "z", "1")]
# Annotations: clock relations (ours and a foreign boot's), a Redis 7
# timestamp line, fencing tokens before a SET and inside a transaction.
pxat = encode("SET", "lock", "tok", "PXAT", "1700000030000")
logs += [
    b"#latch-clock fuzz-clock 5000000 1700000000000\r\n" + pxat + b"#TS:1700000000\r\n"
    + encode("PEXPIREAT", "lock", "1700000060000")
    + b"#latch-clock other-boot 10 1700000001000\r\n"
    + encode("SET", "x", "y", "PXAT", "1700000031000"),
    b"#latch-clock fuzz-clock 5000000 1700000000000\r\n#latch-fence 42\r\n" + pxat
    + encode("MULTI") + b"#latch-fence 43\r\n" + encode("SET", "l2", "t", "PXAT", "1700000030000")
    + encode("DEL", "lock") + encode("EXEC"),
]
aof = [b"\x01" + l for l in logs] + [b"\x00" + log[:-3]] + [b"\x00" + l for l in logs[-2:]]

# Lines for the splitter: quoting and escapes.
lines = [
    b'SET "key with space" \'it\\\'s\' "a\\x41\\x62\\n\\t\\r\\"\\\\" \'\\n\' "\\xFf" "" "\\q"',
    b'RPUSH l a"b c"', b'ECHO "abc', b"ECHO 'a'b", b"  GET\tk  ", b'SET k "a\\x00b"',
    b"bind 127.0.0.1 -::1", b'client-output-buffer-limit normal 0 0 0',
]

# Inputs that once crashed a target, kept as seeds so every run replays them.
# A request whose next bulk header has not arrived yet: the one-pass length
# parser read one byte past the input.
streams.append(b"*9\r\n$2\r\n\x00XtM")
commands.append(b"\x01*9\r\n$2\r\n\x00XtM")

write("fuzz_request_parser", [b"\x00\x07" + s for s in streams]
      + [b"\x01\x03" + s for s in streams[:8]] + [b"\x02\x11" + log, b"\x0c\x00" + streams[0]])
write("fuzz_commands", commands)
write("fuzz_aof", aof)
write("fuzz_split_args", lines)
