"""MULTI/EXEC/DISCARD/WATCH: byte-for-byte with redis-server, and the log
keeps a transaction all-or-nothing across a crash."""

import os

import latchtest as lt
from durable import Node


SCRIPTS = [
    # Errors outside and inside a transaction.
    [("EXEC",), ("DISCARD",), ("UNWATCH",), ("MULTI",), ("MULTI",), ("SET", "a", "1"),
     ("NOSUCH",), ("EXEC",)],
    [("MULTI",), ("SET", "a", "1"), ("SET", "a"), ("EXEC",), ("GET", "a")],
    # A transaction runs all its commands and answers with one array.
    [("MULTI",), ("SET", "a", "1", "PX", 50000), ("GET", "a"), ("DEL", "a", "b"),
     ("SET", "b", "x"), ("EXISTS", "a", "b"), ("EXEC",), ("GET", "b")],
    [("MULTI",), ("SET", "k", "v"), ("DISCARD",), ("GET", "k"), ("EXEC",)],
    # Runtime errors inside EXEC do not stop the other commands.
    [("MULTI",), ("SET", "k", "v"), ("EXPIRE", "k", "abc"), ("GET", "k"), ("EXEC",)],
    [("MULTI",), ("EXEC",)],
    [("MULTI",), ("WATCH", "x"), ("PING",), ("EXEC",)],
    # WATCH by the same client: its own change aborts the EXEC.
    [("WATCH", "w"), ("SET", "w", "1"), ("MULTI",), ("GET", "w"), ("EXEC",)],
    [("WATCH", "w"), ("MULTI",), ("GET", "w"), ("EXEC",)],
    [("WATCH", "w"), ("UNWATCH",), ("SET", "w", "2"), ("MULTI",), ("GET", "w"), ("EXEC",)],
    [("WATCH", "w"), ("FLUSHALL",), ("MULTI",), ("PING",), ("EXEC",)],
]


def test_transactions_match_redis(pair):
    for script in SCRIPTS:
        assert pair.both("FLUSHALL") == (b"+OK\r\n", b"+OK\r\n")
        data = b"".join(lt.encode(*cmd) for cmd in script)
        got = pair.send_raw(data, nreplies=len(script))
        assert got[0] == got[1], (script, got)


def test_transactions_match_redis_in_resp3(pair):
    assert pair.both("HELLO", "3")[0].startswith(b"%")
    for script in SCRIPTS[2:5] + SCRIPTS[7:9]:
        pair.both("FLUSHALL")
        data = b"".join(lt.encode(*cmd) for cmd in script)
        got = pair.send_raw(data, nreplies=len(script))
        assert got[0] == got[1], (script, got)


def test_watch_sees_another_clients_write_and_an_expiry(latch_server):
    with latch_server.conn() as a, latch_server.conn() as b:
        assert a.cmd("SET", "lock", "tok", "PX", 100000) == b"OK"
        assert a.cmd("WATCH", "lock") == b"OK"
        assert b.cmd("SET", "lock", "other") == b"OK"
        assert a.cmd("MULTI") == b"OK"
        assert a.cmd("DEL", "lock") == b"QUEUED"
        assert a.cmd("EXEC") is None          # aborted: someone changed the key
        assert b.cmd("GET", "lock") == b"other"
        # A watched key whose TTL runs out counts as changed.
        assert a.cmd("SET", "lease", "tok", "PX", 50) == b"OK"
        assert a.cmd("WATCH", "lease") == b"OK"
        import time
        time.sleep(0.1)
        assert a.cmd("MULTI") == b"OK"
        assert a.cmd("SET", "lease", "again") == b"QUEUED"
        assert a.cmd("EXEC") is None
        assert a.cmd("GET", "lease") is None


def test_a_transaction_cut_by_a_crash_is_replayed_all_or_nothing(tmp_path):
    node = Node(str(tmp_path), "--quarantine", "never").start()
    with node.conn() as c:
        assert c.cmd("SET", "before", "1") == b"OK"
        c.send(b"".join(lt.encode(*cmd) for cmd in [("MULTI",), ("SET", "t1", "x"),
                                                      ("SET", "t2", "y"), ("EXEC",)]))
        assert c.read() == b"OK" and c.read() == b"QUEUED" and c.read() == b"QUEUED"
        assert c.read() == [b"OK", b"OK"]
    node.stop()
    with open(node.aof, "rb") as f:
        data = f.read()
    exec_at = data.rindex(lt.encode("EXEC"))
    multi_at = data.rindex(lt.encode("MULTI"))
    # Cut inside the transaction (after its first SET): nothing of it applies.
    for cut in (exec_at, exec_at - 5, multi_at + len(lt.encode("MULTI")) + 10):
        with open(node.aof, "wb") as f:
            f.write(data[:cut])
        node.start()
        with node.conn() as c:
            assert c.cmd("GET", "before") == b"1"
            assert c.cmd("EXISTS", "t1", "t2") == 0, cut
        node.stop()
        assert os.path.getsize(node.aof) == multi_at  # cut back to before MULTI
        with open(node.aof, "wb") as f:
            f.write(data)
    node.start()
    assert node.cmd("EXISTS", "t1", "t2") == 2
    node.stop()


def test_exec_with_an_argument_outside_a_transaction_is_an_execabort_as_redis(pair):
    """Redis answers a refused EXEC with EXECABORT whether or not a MULTI
    is open (and discards the watched keys): `EXEC x` outside a transaction
    too."""
    for script in ([("EXEC", "x"), ("EXEC",)],
                   [("WATCH", "w"), ("EXEC", "x"), ("SET", "w", "1"), ("MULTI",), ("EXEC",)],
                   [("MULTI",), ("SET", "a", "1"), ("EXEC", "x"), ("EXEC",), ("GET", "a")]):
        assert pair.both("FLUSHALL") == (b"+OK\r\n", b"+OK\r\n")
        data = b"".join(lt.encode(*cmd) for cmd in script)
        got = pair.send_raw(data, nreplies=len(script))
        assert got[0] == got[1], (script, got)
        assert b"-EXECABORT Transaction discarded because of: wrong number of arguments for " \
               b"'exec' command\r\n" in got[0], got
