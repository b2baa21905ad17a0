"""Differential family: the server's introspection — INFO, COMMAND INFO and
DOCS, SLOWLOG, LATENCY, MEMORY USAGE, WAIT — against redis-server 7.0 in
RESP2 and RESP3 (differential.py). Where latch differs on purpose (INFO's
fields, COMMAND's latch-only commands, memory figures) its documented reply
is asserted instead."""

import re
import time

import pytest

import latchtest as lt

from differential import LLONG_MAX, PROTOS, check_script, switch_proto


SCRIPTS = {
    "memory_usage_errors": [
        ("MEMORY", "USAGE", "missing"),
        ("MEMORY", "USAGE", "missing", "SAMPLES", "5"),
        ("MEMORY", "USAGE", "missing", "SAMPLES"),
        ("MEMORY", "USAGE", "missing", "SAMPLES", "-1"),
        ("MEMORY", "USAGE", "missing", "SAMPLES", "abc"),
        ("MEMORY", "USAGE", "missing", "FOO", "1"),
        ("MEMORY", "USAGE", "missing", "samples", "0", "SAMPLES"),
        ("MEMORY", "HELP"),
        ("MEMORY", "FOO"),
        ("MEMORY", "PURGE"),
    ],
    "slowlog_and_latency_errors": [
        ("SLOWLOG", "GET", "abc"),
        ("SLOWLOG", "GET", "-2"),
        ("SLOWLOG", "GET", "1.5"),
        ("SLOWLOG", "GET", "1", "2"),
        ("slowlog", "get", "1", "2"),
        ("SLOWLOG", "HELP"),
        ("SLOWLOG", "FOO"),
        ("LATENCY", "LATEST"),
        ("LATENCY", "HISTORY", "command"),
        ("LATENCY", "HISTORY", "nosuchevent"),
        ("LATENCY", "RESET", "nosuchevent"),
        ("LATENCY", "GRAPH", "command"),
        ("LATENCY", "GRAPH", b"no\x00such"),
        ("LATENCY", "HISTOGRAM", "nosuchcommand"),
        ("LATENCY", "HELP"),
        ("LATENCY", "FOO"),
        ("CONFIG", "GET", "slowlog-log-slower-than"),
        ("CONFIG", "GET", "slowlog-max-len"),
        ("CONFIG", "GET", "latency-monitor-threshold"),
        ("CONFIG", "GET", "latency-tracking"),
        ("CONFIG", "GET", "latency-tracking-info-percentiles"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "-2"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "abc"),
        ("CONFIG", "SET", "slowlog-max-len", "-1"),
        ("CONFIG", "SET", "latency-monitor-threshold", "-1"),
        ("CONFIG", "SET", "latency-tracking", "maybe"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "abc"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "101"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "50 -1"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "50.0 99.90 0.5 100"),
        ("CONFIG", "GET", "latency-tracking-info-percentiles"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", ""),
        ("CONFIG", "GET", "latency-tracking-info-percentiles"),
        ("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9"),
        ("CONFIG", "SET", "slowlog-max-len", "64", "latency-monitor-threshold", "0"),
        ("CONFIG", "GET", "slowlog-max-len"),
        ("CONFIG", "SET", "slowlog-max-len", "128"),
    ],
    "wait": [
        ("WAIT", "0", "0"),
        ("WAIT", "5", "100"),  # Redis waits the 100 ms; latch does not
        ("WAIT", "-1", "0"),
        ("WAIT", "0", LLONG_MAX),
        ("WAIT", "a", "0"),
        ("WAIT", "1.5", "0"),
        ("WAIT", "0", "a"),
        ("WAIT", "0", "1.5"),
        ("WAIT", "0", "-1"),
        ("WAIT", "a", "-1"),
        ("SET", "k", "v"),
        ("WAIT", "0", "0"),
        ("MULTI",),
        ("WAIT", "1", "0"),
        ("EXEC",),
    ],
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


@pytest.mark.parametrize("proto", PROTOS)
def test_command_info_unknown_name_is_null(pair, proto):
    switch_proto(pair, proto)
    check_script(pair, [("COMMAND", "INFO", "nosuchcommand")])


@pytest.mark.parametrize("proto", PROTOS)
def test_info(pair, proto):
    switch_proto(pair, proto)
    c = pair.latch
    raw = c.raw("INFO")
    # a bulk string in RESP2, a verbatim "txt" string in RESP3, as Redis sends
    assert raw[:1] == (b"=" if proto == 3 else b"$")
    _, want = pair.both("INFO", "server")
    assert want[:1] == raw[:1]
    fields = lt.info_fields(c.cmd("INFO"))
    assert fields["redis_version"] == "8.4.0"
    assert fields["redis_mode"] == "standalone"
    assert int(fields["tcp_port"]) == c.port
    assert fields["role"] == "master"
    text = c.cmd("INFO", "keyspace").decode()
    assert text.startswith("# Keyspace\r\n")
    assert "db0:" not in text
    # the db0 line has exactly Redis's format
    check_script(pair, [("SET", "a", "1"), ("SET", "b", "2")])
    lines = []
    for conn in (pair.latch, pair.redis):
        info = conn.cmd("INFO", "keyspace").decode()
        lines.append([l for l in info.split("\r\n") if l.startswith("db0:")])
    assert lines[0] == lines[1] == ["db0:keys=2,expires=0,avg_ttl=0"]
    # one section only when asked for one
    server_only = c.cmd("INFO", "server").decode()
    assert server_only.startswith("# Server\r\n") and "# Keyspace" not in server_only
    assert "# Stats" in c.cmd("INFO", "stats").decode()
    assert c.cmd("INFO", "nosuchsection") == b""


def test_info_keyspace_lists_every_database_with_keys(pair):
    """One line per database that has keys, in order, in Redis's format; the
    keys and expires counts must match exactly. avg_ttl is an estimate Redis
    refreshes from its expiry cycle's samples: latch computes it exactly, so
    only its range is checked."""
    steps = [("SET", "a", "1"), ("SELECT", "3"), ("SET", "a", "1"),
             ("SET", "b", "1", "PX", "60000"), ("SELECT", "15"), ("SET", "c", "1", "EX", "100"),
             ("SELECT", "0")]
    check_script(pair, steps)
    time.sleep(0.3)  # let Redis's expiry cycle sample the TTLs
    parsed = []
    for conn in (pair.latch, pair.redis):
        info = conn.cmd("INFO", "keyspace").decode()
        rows = [l for l in info.split("\r\n") if l.startswith("db")]
        parsed.append([re.match(r"(db\d+):keys=(\d+),expires=(\d+),avg_ttl=(\d+)$", r).groups()
                       for r in rows])
    got, want = parsed
    assert [r[:3] for r in got] == [r[:3] for r in want] == [
        ("db0", "1", "0"), ("db3", "2", "1"), ("db15", "1", "1")]
    assert got[0][3] == "0"
    assert 59000 <= int(got[1][3]) <= 60000
    assert 99000 <= int(got[2][3]) <= 100000
    # A database emptied by SWAPDB or FLUSHDB leaves the list.
    check_script(pair, [("SWAPDB", "3", "4"), ("SELECT", "15"), ("FLUSHDB",), ("SELECT", "0")])
    for conn in (pair.latch, pair.redis):
        rows = [l.split(":")[0] for l in conn.cmd("INFO", "keyspace").decode().split("\r\n")
                if l.startswith("db")]
        assert rows == ["db0", "db4"]


@pytest.mark.parametrize("proto", PROTOS)
def test_command_introspection(pair, proto):
    switch_proto(pair, proto)
    c = pair.latch
    everything = c.cmd("COMMAND")
    names = sorted(entry[0] for entry in everything)
    assert c.cmd("COMMAND", "COUNT") == len(everything)
    for required in (b"set", b"get", b"del", b"delifeq", b"delex", b"digest", b"pexpire",
                     b"hello", b"command", b"config", b"client"):
        assert required in names
    info = c.cmd("COMMAND", "INFO", "get", "DELIFEQ")
    assert [i[0] for i in info] == [b"get", b"delifeq"]
    assert info[0][1] == 2 and info[1][1] == 3
    assert info[0][3:6] == [1, 1, 1]  # first key, last key, step
    docs = lt.pairs_to_dict(c.cmd("COMMAND", "DOCS", "delifeq"))
    args = docs[b"delifeq"]
    args = lt.pairs_to_dict(args)[b"arguments"]
    assert [lt.pairs_to_dict(a)[b"name"] for a in args] == [b"key", b"value"]
    # Shared commands have Redis's arity and key positions
    for name in ("set", "get", "del", "exists", "pexpire", "ttl", "persist", "echo"):
        got = c.cmd("COMMAND", "INFO", name)[0]
        want = pair.redis.cmd("COMMAND", "INFO", name)[0]
        assert got[1] == want[1], name
        assert got[3:6] == want[3:6], name


@pytest.mark.parametrize("proto", PROTOS)
def test_slowlog_entries(pair, proto):
    """With slowlog-log-slower-than 0 every command is logged: the entries
    (arguments, truncation, redaction, client name, order, GET's count) are
    Redis's; ids, times and durations are the server's own."""
    switch_proto(pair, proto)
    steps = [
        ("CONFIG", "SET", "slowlog-log-slower-than", "0"),
        ("SLOWLOG", "RESET"),
        ("CLIENT", "SETNAME", "slow-client"),
        ("SET", "k", "x" * 200),
        ("DEL",) + tuple("k%d" % i for i in range(40)),
        ("AUTH", "secret"),
        ("AUTH", "someone", "secret"),
        ("HELLO", str(proto), "AUTH", "default", "secret"),
        ("CONFIG", "SET", "requirepass", ""),
        ("MULTI",),
        ("SET", "t", "1"),
        ("INCR", "t"),
        ("EXEC",),
        ("GET", b"bin\x00\r\n"),
        ("CLIENT", "SETNAME", ""),
        ("PING",),
    ]
    for step in steps:
        pair.both(*step)
    entries = []
    for conn in (pair.latch, pair.redis):
        log = conn.cmd("SLOWLOG", "GET", "-1")
        length = conn.cmd("SLOWLOG", "LEN")
        assert conn.cmd("CONFIG", "SET", "slowlog-log-slower-than", "10000") == b"OK"
        ids = [e[0] for e in log]
        assert ids == sorted(ids, reverse=True) and len(set(ids)) == len(ids)
        for e in log:
            assert isinstance(e[1], int) and e[1] > 1700000000 and e[2] >= 0
            assert e[4].startswith(b"127.0.0.1:")
        entries.append(([(e[3], e[5]) for e in log], length))
        assert len(conn.cmd("SLOWLOG", "GET")) == min(10, length)
        assert len(conn.cmd("SLOWLOG", "GET", "3")) == 3
        assert conn.cmd("SLOWLOG", "GET", "0") == []
    assert entries[0] == entries[1]
    check_script(pair, [("SLOWLOG", "RESET"), ("SLOWLOG", "LEN"), ("SLOWLOG", "GET")])


def test_slowlog_max_len_and_threshold(pair):
    check_script(pair, [
        ("CONFIG", "SET", "slowlog-log-slower-than", "0"),
        ("CONFIG", "SET", "slowlog-max-len", "3"),
        ("SLOWLOG", "RESET"),
        ("PING",), ("PING",), ("PING",), ("PING",), ("PING",),
        ("SLOWLOG", "LEN"),
        ("CONFIG", "SET", "slowlog-max-len", "1"),
        ("SLOWLOG", "LEN"),  # trimmed only when the next command is logged
        ("SLOWLOG", "LEN"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "-1"),
        ("SLOWLOG", "RESET"),
        ("PING",),
        ("SLOWLOG", "LEN"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "100000000"),
        ("PING",),
        ("SLOWLOG", "LEN"),
        ("CONFIG", "SET", "slowlog-log-slower-than", "10000", "slowlog-max-len", "128"),
    ])


@pytest.mark.parametrize("proto", PROTOS)
def test_latency_histogram_and_latencystats(pair, proto):
    """LATENCY HISTOGRAM and INFO latencystats have Redis's shapes: the calls
    counted alike, cumulative counts at power-of-two microseconds (1, 2, 4, 8,
    16, 33, 66…), percentiles with three decimals."""
    switch_proto(pair, proto)
    check_script(pair, [("CONFIG", "RESETSTAT",)] + [("SET", "k%d" % i, "v") for i in range(25)]
                 + [("CONFIG", "GET", "hz"), ("CLIENT", "GETNAME")])
    valid_buckets = {1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113, 4227, 8454, 16908,
                     33816, 67633, 135266, 270532, 541064}
    for args in (("LATENCY", "HISTOGRAM", "set"), ("LATENCY", "HISTOGRAM", "config"),
                 ("LATENCY", "HISTOGRAM", "set", "nosuch", "client|getname")):
        got, want = (lt.pairs_to_dict(c.cmd(*args)) for c in (pair.latch, pair.redis))
        assert sorted(got) == sorted(want), args
        for name in got:
            g, w = lt.pairs_to_dict(got[name]), lt.pairs_to_dict(want[name])
            assert list(g) == list(w) == [b"calls", b"histogram_usec"]
            assert g[b"calls"] == w[b"calls"], name
            buckets = lt.pairs_to_dict(g[b"histogram_usec"])
            assert buckets and set(buckets) <= valid_buckets, buckets
            counts = [buckets[b] for b in sorted(buckets)]
            assert counts == sorted(counts) and counts[-1] == g[b"calls"]
    for conn in (pair.latch, pair.redis):
        text = conn.cmd("INFO", "latencystats").decode()
        line = [l for l in text.split("\r\n") if l.startswith("latency_percentiles_usec_set:")]
        assert len(line) == 1, text
        assert re.fullmatch(r"latency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},"
                            r"p99\.9=\d+\.\d{3}", line[0]), line


@pytest.mark.parametrize("proto", PROTOS)
def test_info_commandstats_and_errorstats(pair, proto):
    """After the same commands, the counters of INFO commandstats (calls,
    rejected and failed calls) and errorstats are Redis's."""
    switch_proto(pair, proto)
    steps = [
        ("CONFIG", "RESETSTAT"),
        ("SET", "k", "v"), ("SET", "k", "v", "NX", "XX"), ("GET", "k"), ("GET",),
        ("INCR", "k"), ("FOO",), ("OBJECT", "ENCODING"), ("OBJECT",), ("OBJECT", "FOO"),
        ("MULTI",), ("SET", "a"), ("EXEC",), ("SELECT", "x"), ("HELLO", "9"),
        ("CLIENT", "KILL", "TYPE", "wrong_type"), ("EXPIRE", "k", "10", "BAD"),
        ("OBJECT", "FREQ", "k"), ("LATENCY", "GRAPH", "none"),
    ]
    for step in steps:
        pair.both(*step)
    stats = []
    for conn in (pair.latch, pair.redis):
        fields = lt.info_fields(conn.cmd("INFO", "commandstats", "errorstats", "stats"))
        cmd = {}
        for k, v in fields.items():
            if k.startswith("cmdstat_") and k != "cmdstat_info":
                kv = dict(x.split("=") for x in v.split(","))
                assert re.fullmatch(r"\d+\.\d\d", kv["usec_per_call"])
                cmd[k] = (kv["calls"], kv["rejected_calls"], kv["failed_calls"])
        errors = {k: v for k, v in fields.items() if k.startswith("errorstat_")}
        stats.append((cmd, errors, fields["total_error_replies"]))
    assert stats[0] == stats[1]


def test_info_sections_and_replication_fields(pair):
    """INFO everything has Redis's sections (latch adds its own "Latch");
    the replication section is a master's without replicas, field by field."""
    headers = []
    for conn in (pair.latch, pair.redis):
        text = conn.cmd("INFO", "everything").decode()
        headers.append([l for l in text.split("\r\n") if l.startswith("# ")])
    assert [h for h in headers[0] if h != "# Latch"] == headers[1]
    assert "# Latch" in headers[0]
    for section in ("default", "all"):
        a, b = (set(l for l in c.cmd("INFO", section).decode().split("\r\n") if l.startswith("#"))
                for c in (pair.latch, pair.redis))
        assert a - {"# Latch"} == b, section
    repl = [lt.info_fields(c.cmd("INFO", "replication")) for c in (pair.latch, pair.redis)]
    assert list(repl[0]) == list(repl[1])
    for k in repl[1]:
        if k != "master_replid":
            assert repl[0][k] == repl[1][k], k
    assert re.fullmatch(r"[0-9a-f]{40}", repl[0]["master_replid"])
    stats = [lt.info_fields(c.cmd("INFO", "stats")) for c in (pair.latch, pair.redis)]
    for k in ("total_error_replies", "unexpected_error_replies", "total_reads_processed",
              "total_writes_processed", "instantaneous_input_kbps", "instantaneous_output_kbps",
              "pubsub_channels", "pubsub_patterns", "evicted_keys", "keyspace_hits"):
        assert k in stats[0] and k in stats[1], k
    cluster = [lt.info_fields(c.cmd("INFO", "cluster")) for c in (pair.latch, pair.redis)]
    assert cluster[0] == cluster[1] == {"cluster_enabled": "0"}


def _docs_as_dict(d):
    """A RESP3 COMMAND DOCS entry as nested dicts, without the fields latch
    leaves out (Redis's history and deprecation notes)."""
    skip = {b"history", b"doc_flags", b"deprecated_since", b"replaced_by"}
    if isinstance(d, lt.OrderedMap):
        return {k: _docs_as_dict(v) for k, v in d.pairs if k not in skip}
    if isinstance(d, list):
        return [_docs_as_dict(x) for x in d]
    return d


def test_new_commands_docs_and_info_match_redis(pair):
    """COMMAND INFO (arity, flags, key positions, ACL categories) and COMMAND
    DOCS (summary, since, group, complexity, arguments) of this issue's
    commands are Redis 7.0's."""
    switch_proto(pair, 3)
    names = ["incr", "decr", "incrby", "decrby", "incrbyfloat", "mget", "mset", "msetnx",
             "getdel", "getex", "getset", "append", "strlen", "getrange", "substr", "setrange",
             "unlink", "touch", "randomkey", "keys", "scan", "type", "object", "memory",
             "slowlog", "latency", "wait", "exec"]
    for name in names:
        got, want = (c.cmd("COMMAND", "INFO", name)[0] for c in (pair.latch, pair.redis))
        assert got[1] == want[1], (name, "arity")
        assert sorted(got[2]) == sorted(want[2]), (name, "flags")
        assert got[3:6] == want[3:6], (name, "keys")
        assert sorted(got[6]) == sorted(want[6]), (name, "acl")
        for g, w in zip(sorted(got[9]), sorted(want[9])):
            assert g[0] == w[0] and g[1] == w[1], (g[0], w[0], "arity")
            assert sorted(g[2]) == sorted(w[2]), (g[0], "flags")
            assert sorted(g[6]) == sorted(w[6]), (g[0], "acl")
        assert len(got[9]) == len(want[9]), name
        got_docs, want_docs = (_docs_as_dict(c.cmd("COMMAND", "DOCS", name)) for c in
                               (pair.latch, pair.redis))
        assert got_docs == want_docs, name
    subs = [_docs_as_dict(c.cmd("COMMAND", "DOCS", "client"))[b"client"][b"subcommands"]
            for c in (pair.latch, pair.redis)]
    assert subs[0][b"client|reply"] == subs[1][b"client|reply"]


def test_wait_does_not_wait_for_replicas_that_do_not_exist(pair):
    """Redis 7.0 makes WAIT 1 <timeout> wait the whole timeout (forever for
    0) since no replica will ever acknowledge; latch answers the same 0 at
    once."""
    start = time.monotonic()
    assert pair.latch.raw("WAIT", "1", "0") == b":0\r\n"
    assert pair.latch.raw("WAIT", "3", "5000") == b":0\r\n"
    assert time.monotonic() - start < 1.0
    start = time.monotonic()
    assert pair.redis.raw("WAIT", "1", "300") == b":0\r\n"
    assert time.monotonic() - start >= 0.29


def test_memory_usage_is_latchs_real_allocation(pair):
    """MEMORY USAGE: what the key costs latch (its entry, as malloc sized
    it, and its slots in the table and the TTL index), which grows with the
    key and the value as Redis's does."""
    c = pair.latch
    for key, value in (("k", "v"), ("k" * 100, "v"), ("k", "v" * 1000), ("k", "v" * 100000)):
        assert c.cmd("SET", key, value) == b"OK"
        usage = c.cmd("MEMORY", "USAGE", key)
        assert isinstance(usage, int)
        # header (32) + key + value + the bucket pointer, rounded by malloc
        assert 32 + len(key) + len(value) + 8 <= usage <= 32 + len(key) + len(value) + 8 + 64
        assert c.cmd("MEMORY", "USAGE", key, "SAMPLES", "0") == usage
        redis_usage = pair.redis.cmd("SET", key, value) and \
            pair.redis.cmd("MEMORY", "USAGE", key)
        assert isinstance(redis_usage, int) and redis_usage >= len(key) + len(value)
    # A lease costs its slot in the TTL index: the same entry measured with
    # and without one (two keys could get chunks of different sizes from
    # malloc, whose free lists earlier tests decide).
    assert c.cmd("SET", "t", "v" * 100, "EX", "100") == b"OK"
    with_ttl = c.cmd("MEMORY", "USAGE", "t")
    assert c.cmd("PERSIST", "t") == 1
    assert c.cmd("MEMORY", "USAGE", "t") == with_ttl - 8
    stats = lt.pairs_to_dict(c.cmd("MEMORY", "STATS"))
    for k in (b"peak.allocated", b"total.allocated", b"startup.allocated", b"keys.count",
              b"dataset.bytes", b"overhead.total", b"fragmentation"):
        assert k in stats, k
    assert stats[b"keys.count"] == c.cmd("DBSIZE")
    assert stats[b"total.allocated"] <= stats[b"peak.allocated"]
    doctor = c.cmd("MEMORY", "DOCTOR")
    assert isinstance(doctor, bytes) and doctor
    assert c.cmd("MEMORY", "MALLOC-STATS").startswith(b"<malloc")  # glibc's malloc_info
