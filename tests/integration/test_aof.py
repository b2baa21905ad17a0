"""The append-only log: replay equality, crash durability under appendfsync
always, truncated tails, corruption and its repair, rewrite under load, a full
disk, and LOADING during replay. Every test runs the real latch-server."""

import os
import random
import re
import shutil
import subprocess
import threading
import time

import pytest

import latchtest as lt
from durable import Node, wait_until

# The lock-safety features are not under test here.
BASE = ("--quarantine", "never", "--max-lock-ttl", "0")


def check_aof_tool():
    return os.path.join(lt.build_dir(), "tools", "latch-check-aof")


def redis_check_aof(path):
    p = subprocess.run(["redis-check-aof", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=60)
    return p.returncode, p.stdout.decode()


def snapshot(node, keys):
    """{key: (value, pttl)} for the keys that exist."""
    out = {}
    with node.conn() as c:
        for k in keys:
            v = c.cmd("GET", k)
            if v is not None:
                out[k] = (v, c.cmd("PTTL", k))
    return out


def test_replay_gives_the_same_dataset(tmp_path):
    node = Node(str(tmp_path), *BASE).start()
    rng = random.Random(7)
    keys = ["k%d" % i for i in range(300)]
    with node.conn() as c:
        for _ in range(3000):
            k = rng.choice(keys)
            op = rng.random()
            if op < 0.35:
                c.cmd("SET", k, "v%d" % rng.randrange(10**6))
            elif op < 0.6:
                c.cmd("SET", k, b"\x00bin\r\n%d" % rng.randrange(1000), "PX",
                      rng.randrange(20000, 60000))
            elif op < 0.7:
                c.cmd("DEL", k)
            elif op < 0.8:
                c.cmd("PEXPIRE", k, rng.randrange(20000, 60000))
            elif op < 0.85:
                c.cmd("PERSIST", k)
            elif op < 0.9:
                c.cmd("SET", k, "nx", "NX", "EX", 50)
            elif op < 0.95:
                c.cmd("DELIFEQ", k, "nx")
            else:
                c.cmd("SET", k, "ifeq", "IFEQ", "nx", "PX", 40000)
        # Keys that expire before the restart must not come back.
        for i in range(50):
            c.cmd("SET", "short%d" % i, "x", "PX", 50)
        dbsize = c.cmd("DBSIZE")
    # The time that passes between a key's two PTTLs is at most from the
    # start of the first snapshot to the end of the second (each snapshot
    # takes a while on a loaded machine: 600 requests).
    t0 = time.monotonic()
    before = snapshot(node, keys)
    time.sleep(0.1)
    node.stop()
    node.start()
    wait_until(lambda: node.cmd("PING") == b"PONG", 60)  # LOADING over
    after = snapshot(node, keys)
    downtime_ms = (time.monotonic() - t0) * 1000
    assert sorted(after) == sorted(before)
    for k, (v, pttl) in before.items():
        v2, pttl2 = after[k]
        assert v2 == v, k
        if pttl == -1:
            assert pttl2 == -1, k
        else:
            # The deadline is the same instant: only the time between has passed.
            assert pttl - downtime_ms - 50 <= pttl2 <= pttl, (k, pttl, pttl2, downtime_ms)
    assert node.cmd("EXISTS", *["short%d" % i for i in range(50)]) == 0
    assert node.cmd("DBSIZE") == len(before)
    assert dbsize >= len(before)
    rc, out = redis_check_aof(node.aof)
    assert rc == 0 and "is valid" in out, out
    node.stop()


def test_log_records_effects_not_requests(tmp_path):
    node = Node(str(tmp_path), *BASE).start()
    with node.conn() as c:
        assert c.cmd("SET", "a", "1", "PX", 60000) == b"OK"
        assert c.cmd("SET", "a", "2", "NX") is None          # changed nothing: not logged
        assert c.cmd("SET", "a", "3", "GET") == b"1"          # logged as a plain SET
        assert c.cmd("DELIFEQ", "a", "nope") == 0             # not logged
        assert c.cmd("PEXPIRE", "a", 30000) == 1              # logged as PEXPIREAT
        assert c.cmd("SET", "gone", "x", "PX", 30) == b"OK"
    time.sleep(0.3)                                           # active expiry logs a DEL
    node.stop()
    with open(node.aof, "rb") as f:
        data = f.read()
    text = data.replace(b"\r\n", b" ")
    assert b"PXAT" in text and b" PX " not in text
    assert text.count(b"$3 SET ") == 3          # SET a 1 PXAT, SET a 3, SET gone x PXAT
    assert b"$1 2 " not in text                 # the failed NX
    assert b"GET" not in text
    assert b"PEXPIREAT" in text
    assert b"DELIFEQ" not in text
    assert text.endswith(b"$3 DEL $4 gone ")


def acked_writer(port, prefix, stop, acked, errors):
    """Writes prefix:N = N sequentially, recording every acknowledged key."""
    try:
        c = lt.Conn(port, timeout=5)
        i = 0
        while not stop.is_set():
            key = "%s:%d" % (prefix, i)
            c.send(lt.encode("SET", key, str(i)))
            r = c.read()
            if r == b"OK":
                acked.append(key)
            i += 1
    except (OSError, ConnectionError, lt.Incomplete, ValueError):
        pass  # the server was killed mid-request: that write was not acknowledged
    except Exception as e:  # pragma: no cover - a real failure
        errors.append(e)


@pytest.mark.parametrize("cycles", [20])
def test_kill9_under_load_loses_no_acknowledged_write(tmp_path, cycles):
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always")
    rng = random.Random(11)
    all_acked = []
    for cycle in range(cycles):
        node.start()
        # start() returns at the first reply to PING, which is LOADING while
        # the log replays (long, on a loaded machine): a GET then would be
        # LOADING, not a lost write.
        assert wait_until(lambda: node.cmd("PING") == b"PONG", 60)
        # Everything acknowledged in earlier cycles survived this restart.
        if all_acked:
            with node.conn() as c:
                sample = all_acked if len(all_acked) < 2000 else rng.sample(all_acked, 2000)
                for k in sample:
                    assert c.cmd("GET", k) == k.rsplit(":", 1)[1].encode(), (cycle, k)
        stop = threading.Event()
        acked, errors = [], []
        writers = [threading.Thread(target=acked_writer,
                                    args=(node.port, "c%dw%d" % (cycle, w), stop, acked, errors))
                   for w in range(4)]
        for t in writers:
            t.start()
        time.sleep(rng.uniform(0.05, 0.3))
        node.kill9()
        stop.set()
        for t in writers:
            t.join(timeout=10)
        assert not errors, errors
        all_acked.extend(acked)
    node.start()
    assert wait_until(lambda: node.cmd("PING") == b"PONG", 60)
    with node.conn() as c:
        missing = [k for k in all_acked if c.cmd("GET", k) != k.rsplit(":", 1)[1].encode()]
    assert not missing, "%d acknowledged writes lost, e.g. %s" % (len(missing), missing[:5])
    assert len(all_acked) > cycles * 10
    node.stop()


def make_log(tmp_path, n=20):
    """A clean log with n SETs; returns (node, data, the offsets where the
    SETs start). Annotation lines and the SELECT 0 before the first SET are
    skipped."""
    node = Node(str(tmp_path), *BASE).start()
    with node.conn() as c:
        for i in range(n):
            assert c.cmd("SET", "key%d" % i, "value-%d" % i) == b"OK"
    node.stop()
    with open(node.aof, "rb") as f:
        data = f.read()
    starts, pos = [], 0
    while pos < len(data):
        if data[pos:pos + 1] == b"#":  # an annotation line (the log's id, clock marks)
            pos = data.index(b"\n", pos) + 1
            continue
        record, end = lt.parse_reply(data, pos)
        if record[0] == b"SET":
            starts.append(pos)
        pos = end
    assert len(starts) == n
    return node, data, starts


def test_truncated_tail_is_cut_at_every_offset(tmp_path):
    node, data, starts = make_log(tmp_path)
    last = starts[-1]
    assert len(data) - last > 20
    for cut in range(last + 1, len(data)):
        with open(node.aof, "wb") as f:
            f.write(data[:cut])
        node.start()
        with node.conn() as c:
            assert c.cmd("DBSIZE") == 19, cut
            assert c.cmd("GET", "key18") == b"value-18"
            assert c.cmd("GET", "key19") is None
        assert "short read" in node.log_text() and "offset %d" % last in node.log_text()
        node.stop()
        # The incomplete record was cut off the file, so appends stay valid.
        assert os.path.getsize(node.aof) == last
    # With aof-load-truncated no, latch refuses to start and says why.
    with open(node.aof, "wb") as f:
        f.write(data[:len(data) - 3])
    rc, out = node.run_to_exit("--aof-load-truncated", "no")
    assert rc != 0
    assert "incomplete record at offset %d" % last in out
    assert "latch-check-aof --fix" in out


def test_corruption_in_the_middle_refuses_to_start_then_check_aof_fixes(tmp_path):
    node, data, starts = make_log(tmp_path)
    bad = starts[10]
    corrupted = data[:bad + 1] + b"X" + data[bad + 2:]   # "*3" becomes "*X"
    with open(node.aof, "wb") as f:
        f.write(corrupted)
    rc, out = node.run_to_exit()
    assert rc != 0
    assert "latch.aof" in out and "offset %d" % bad in out
    assert "invalid multibulk length" in out
    assert "latch-check-aof --fix latch.aof" in out
    # The file is untouched by the failed start.
    with open(node.aof, "rb") as f:
        assert f.read() == corrupted

    tool = check_aof_tool()
    p = subprocess.run([tool, node.aof], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert p.returncode == 1 and b"ok_up_to=%d" % bad in p.stdout, p.stdout
    p = subprocess.run([tool, "--fix", node.aof], input=b"n\n", stdout=subprocess.PIPE)
    assert p.returncode == 1 and b"Aborted" in p.stdout
    p = subprocess.run([tool, "--fix", "--yes", node.aof], stdout=subprocess.PIPE)
    assert p.returncode == 0, p.stdout
    backups = [f for f in os.listdir(node.data) if f.startswith("latch.aof.bak-")]
    assert backups
    with open(os.path.join(node.data, backups[0]), "rb") as f:
        assert f.read() == corrupted
    assert os.path.getsize(node.aof) == bad
    node.start()
    assert node.cmd("DBSIZE") == 10
    node.stop()
    rc, out = redis_check_aof(node.aof)
    assert rc == 0, out


def test_rewrite_under_load_keeps_every_write_and_shrinks(tmp_path):
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always").start()
    with node.conn() as c:
        # Many overwrites of few keys: a long log for a small live set.
        for i in range(3000):
            c.cmd("SET", "hot%d" % (i % 50), "v%d" % i)
    size_before = os.path.getsize(node.aof)
    stop = threading.Event()
    acked, errors = [], []
    writers = [threading.Thread(target=acked_writer, args=(node.port, "w%d" % w, stop, acked,
                                                           errors)) for w in range(3)]
    for t in writers:
        t.start()
    time.sleep(0.2)
    assert node.cmd("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert wait_until(lambda: node.info("persistence").get("aof_rewrites") == "1", 20)
    time.sleep(0.2)
    stop.set()
    for t in writers:
        t.join(timeout=10)
    assert not errors
    info = node.info("persistence")
    assert info["aof_last_bgrewrite_status"] == "ok"
    node.stop()
    rc, out = redis_check_aof(node.aof)
    assert rc == 0 and "is valid" in out, out
    # The log shrank to about the live set (plus what arrived after the rewrite).
    live = 50 + len(acked)
    assert os.path.getsize(node.aof) < size_before + live * 60
    node.start()
    with node.conn() as c:
        missing = [k for k in acked if c.cmd("GET", k) != k.rsplit(":", 1)[1].encode()]
        assert not missing, (missing, sorted(acked)[:3])
        assert c.cmd("DBSIZE") == live
        assert c.cmd("GET", "hot49") == b"v2999"
        for k in acked:
            assert c.cmd("GET", k) == k.rsplit(":", 1)[1].encode(), k
    node.stop()


@pytest.mark.parametrize("policy", ["everysec", "always"])
def test_full_disk_refuses_writes_serves_reads_and_recovers(tmp_path, policy):
    if shutil.which("prlimit") is None:
        pytest.fail("prlimit (util-linux) is needed to limit the log's size")
    node = Node(str(tmp_path), *BASE, "--appendfsync", policy,
                wrapper=["prlimit", "--fsize=20000:unlimited", "--"]).start()
    c = node.conn()
    assert c.cmd("SET", "keep", "me") == b"OK"
    big = "x" * 1000
    replies = []
    held = False
    for i in range(40):
        c.send(lt.encode("SET", "big%d" % i, big))
        try:
            replies.append(c.read(timeout=1.5))
        except TimeoutError:
            # Under every policy, a write whose record could not be written
            # is not answered: the reply waits for the log.
            held = True
            break
    assert held, replies
    # Past the limit: write commands are refused, reads still work. (Under
    # everysec the write may first wait behind a running fsync, up to 2 s.)
    assert wait_until(lambda: node.info("persistence")["aof_last_write_status"] == "err", 5)
    with node.conn() as c2:
        r = c2.cmd("SET", "after", "full")
        assert isinstance(r, lt.RespError) and r.text.startswith(b"MISCONF"), r
        assert c2.cmd("GET", "keep") == b"me"
        assert node.info("persistence")["aof_last_write_status"] == "err"
    # Nothing was acknowledged that is not in the log.
    assert all(r == b"OK" for r in replies), replies
    # Space returns: the cron retries and writes are accepted again.
    subprocess.run(["prlimit", "--pid", str(node.srv.proc.pid), "--fsize=unlimited"], check=True)
    assert wait_until(lambda: node.cmd("SET", "after", "space") == b"OK", 5)
    # The write that was held while the log failed is answered now.
    r = c.read(timeout=5)
    assert r == b"OK", r
    c.close()
    assert node.info("persistence")["aof_last_write_status"] == "ok"
    node.stop()
    node.wrapper = []
    node.start()
    with node.conn() as c3:
        assert c3.cmd("GET", "keep") == b"me"
        assert c3.cmd("GET", "after") == b"space"
    node.stop()
    rc, out = redis_check_aof(node.aof)
    assert rc == 0, out


def test_clients_get_loading_during_replay(tmp_path):
    # The replay must outlast start() and a new connection: 600,000 keys
    # take a few tenths of a second, which a loaded machine (ctest -j2) can
    # spend before the client is in; then the same with a log 4 times longer.
    for keys in (600000, 2400000):
        node = Node(str(tmp_path / str(keys)), *BASE)
        at = int(time.time() * 1000) + 600000
        with open(node.aof, "wb") as f:
            chunk = []
            for i in range(keys):
                chunk.append(lt.encode("SET", "lock:%d" % i, "t" * 36, "PXAT", at))
                if len(chunk) == 50000:
                    f.write(b"".join(chunk))
                    chunk = []
            f.write(b"".join(chunk))
        node.start()
        # start() returns at the first answer to PING; while loading that is
        # LOADING. PING and INFO go out in one write, so the server reads and
        # answers both between two slices of the replay.
        with node.conn() as c:
            c.send(lt.encode("PING") + lt.encode("INFO", "persistence"))
            first = c.read()
            info = lt.info_fields(c.read())
        if first == b"PONG" and keys != 2400000:
            node.stop()  # loaded before the client came: again, longer
            continue
        break
    assert isinstance(first, lt.RespError) and first.text.startswith(b"LOADING"), first
    assert info["loading"] == "1" and int(info["loading_total_bytes"]) > 0
    assert wait_until(lambda: node.cmd("PING") == b"PONG", 60)
    assert node.cmd("DBSIZE") == keys
    log = node.log_text()
    assert "DB loaded from append only file: %d keys loaded, 0 keys already expired" % keys in log
    node.stop()


def db_snapshot(node, dbs=16):
    """{(db, key): (value, has_ttl)} for every key of every database."""
    out = {}
    with node.conn() as c:
        for db in range(dbs):
            c.cmd("SELECT", db)
            for k in c.cmd("KEYS", "*"):
                out[(db, k)] = (c.cmd("GET", k), c.cmd("PTTL", k) > 0)
    return out


def test_databases_survive_a_crash_a_rewrite_and_a_restart(tmp_path):
    """Keys in databases 0-15 come back in their own databases after kill -9
    (every record is preceded by the SELECT of its database), after a rewrite
    (the snapshot SELECTs each database that has keys), and the log stays one
    that redis-check-aof accepts and redis-server itself loads."""
    node = Node(str(tmp_path), *BASE, "--appendfsync", "always").start()
    rng = random.Random(18)
    with node.conn() as c, node.conn() as other:
        for i in range(600):
            db = rng.randrange(16)
            c.cmd("SELECT", db)
            k = "k%d" % rng.randrange(40)
            op = rng.random()
            if op < 0.6:
                c.cmd("SET", k, "v%d.%d" % (db, i), "PX", 600000) if op < 0.3 else \
                    c.cmd("SET", k, "v%d.%d" % (db, i))
            elif op < 0.7:
                c.cmd("MOVE", k, rng.randrange(16))
            elif op < 0.75:
                c.cmd("SWAPDB", db, rng.randrange(16))
            elif op < 0.77:
                c.cmd("FLUSHDB")
            elif op < 0.85:
                # A transaction across databases, from another connection.
                other.cmd("MULTI")
                other.cmd("SELECT", rng.randrange(16))
                other.cmd("SET", k, "tx%d" % i)
                other.cmd("SELECT", rng.randrange(16))
                other.cmd("DEL", k)
                other.cmd("SELECT", 0)
                other.cmd("EXEC")
            else:
                c.cmd("DEL", k)
    before = db_snapshot(node)
    assert len({db for db, _ in before}) >= 10, before
    node.kill9()
    node.start()
    assert db_snapshot(node) == before
    assert node.cmd("BGREWRITEAOF") == b"Background append only file rewriting started"
    assert wait_until(lambda: node.info("persistence").get("aof_rewrites") == "1", 20)
    node.kill9()
    node.start()
    assert db_snapshot(node) == before
    node.stop()
    rc, out = redis_check_aof(node.aof)
    assert rc == 0 and "is valid" in out, out
    p = subprocess.run([check_aof_tool(), node.aof], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    assert p.returncode == 0, p.stdout
    # redis-server 7.0 loads latch's log as an old-style AOF: the same keys in
    # the same databases.
    rdir = tmp_path / "redis"
    rdir.mkdir()
    shutil.copy(node.aof, rdir / "latch.aof")
    redis = lt.ServerProcess("redis", lambda port: [
        lt.redis_server_binary(), "--port", str(port), "--save", "", "--appendonly", "yes",
        "--appendfilename", "latch.aof", "--dir", str(rdir)], str(tmp_path)).start()
    try:
        loaded = {}
        with redis.conn() as c:
            for db in range(16):
                c.cmd("SELECT", db)
                for k in c.cmd("KEYS", "*"):
                    loaded[(db, k)] = (c.cmd("GET", k), c.cmd("PTTL", k) > 0)
        assert loaded == before
    finally:
        redis.stop()


def test_a_log_with_more_databases_than_configured_is_refused(tmp_path):
    """Started with fewer databases than its log uses, latch refuses to start,
    names the offset and the setting, and leaves the file as it was."""
    node = Node(str(tmp_path), *BASE).start()
    with node.conn() as c:
        c.cmd("SET", "a", "0")
        c.cmd("SELECT", 9)
        c.cmd("SET", "b", "9")
    node.stop()
    size = os.path.getsize(node.aof)
    rc, out = node.run_to_exit("--databases", "4")
    assert rc != 0
    assert "SELECT 9, but this server has 4 databases" in out, out
    assert re.search(r"at offset \d+", out), out
    assert os.path.getsize(node.aof) == size
    node.start("--databases", "10")
    with node.conn() as c:
        c.cmd("SELECT", 9)
        assert c.cmd("GET", "b") == b"9"
    node.stop()


def test_a_tail_torn_inside_a_database_switch(tmp_path):
    """The log ends with a switch to database 3 and a SET there; cut at every
    offset inside them, the restart keeps database 0 whole, has nothing in 3,
    and the next writes (to 0, then 3) are logged under their own SELECTs:
    the SELECT that was cut off is not assumed to be in force."""
    node = Node(str(tmp_path), *BASE).start()
    with node.conn() as c:
        for i in range(5):
            c.cmd("SET", "zero%d" % i, "v")
        c.cmd("SELECT", 3)
        c.cmd("SET", "three", "v")
    node.stop()
    with open(node.aof, "rb") as f:
        data = f.read()
    switch = data.rindex(lt.encode("SELECT", "3"))
    for cut in range(switch + 1, len(data)):
        with open(node.aof, "wb") as f:
            f.write(data[:cut])
        node.start()
        with node.conn() as c:
            assert c.cmd("DBSIZE") == 5, cut
            c.cmd("SELECT", 3)
            assert c.cmd("DBSIZE") == 0, cut
            assert c.cmd("SET", "after", "3") == b"OK"
            c.cmd("SELECT", 0)
            assert c.cmd("SET", "after", "0") == b"OK"
        node.stop()
        node.start()
        with node.conn() as c:
            assert c.cmd("GET", "after") == b"0", cut
            c.cmd("SELECT", 3)
            assert c.cmd("GET", "after") == b"3", cut
            assert c.cmd("DBSIZE") == 1, cut
        node.stop()
        rc, out = redis_check_aof(node.aof)
        assert rc == 0, out


def test_a_rewrite_child_dies_with_its_server_and_leaves_nothing_behind(tmp_path):
    """kill -9 of the server while a rewrite runs: its child dies too (it
    does not go on writing a snapshot nobody will use), it never held the
    data directory's lock (the restart is not refused), and its temporary
    file is removed at the next start."""
    from durable import Node
    node = Node(str(tmp_path), "--enable-debug-command", "yes", "--quarantine", "never").start()
    with node.conn() as c:
        for i in range(100):
            assert c.cmd("SET", "k%d" % i, "v") == b"OK"
        # Log writes take 30 s each, the rewrite child's too (it inherits the
        # fault): it is still running at the kill. (Nothing else writes.)
        assert c.cmd("DEBUG", "FAULT-IO", "log-write", 30000) == b"OK"
        assert c.cmd("BGREWRITEAOF") == b"Background append only file rewriting started"
    m = re.search(r"rewriting started by pid (\d+)", node.log_text())
    assert m, node.log_text()
    child = int(m.group(1))
    assert lt.wait_for(lambda: any(f.startswith("temp-rewriteaof-bg-")
                                   for f in os.listdir(node.data)), 5)
    os.kill(child, 0)  # alive
    node.kill9()

    def gone():
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        # A zombie until init reaps it is gone too.
        with open("/proc/%d/stat" % child) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    assert lt.wait_for(gone, 5), "the rewrite child outlived its server"
    node.start()  # not refused by a latch.lock the child held
    assert node.cmd("GET", "k99") == b"v"
    assert not any(f.startswith("temp-rewriteaof-bg-") for f in os.listdir(node.data)), \
        os.listdir(node.data)
    assert "left by a rewrite that did not finish" in node.log_text()
    node.stop()
