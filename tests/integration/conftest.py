"""Fixtures: a latch-server and a redis-server per test module, fresh
connections per test, and a factory for servers with custom arguments."""

import shutil
import sys

# Keep the source tree clean: no __pycache__ next to the tests.
sys.dont_write_bytecode = True

import pytest

import latchtest as lt

# Arguments for latch in the differential fixtures: none. latch's defaults
# are what a Redis user expects (no cap on lease length; a data directory
# never used starts without quarantine), and the differential tests prove it
# by running latch with them.
COMPAT_ARGS = ()


@pytest.fixture(scope="module")
def latch_server(tmp_path_factory):
    srv = lt.start_latch(str(tmp_path_factory.mktemp("latch")), *COMPAT_ARGS)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server (Debian package redis-server) is not installed")
    srv = lt.start_redis(str(tmp_path_factory.mktemp("redis")))
    yield srv
    srv.stop()


@pytest.fixture
def server_factory(tmp_path_factory):
    """Starts extra servers with custom arguments; all are killed at teardown.
    latch gets FRESH_ARGS first (no restart quarantine); `extra` may override."""
    started = []

    def make(kind="latch", *extra):
        workdir = str(tmp_path_factory.mktemp(kind))
        if kind == "latch":
            srv = lt.start_latch(workdir, *(lt.FRESH_ARGS + tuple(extra)))
        else:
            srv = lt.start_redis(workdir, *extra)
        started.append(srv)
        return srv

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def pair(latch_server, redis_server):
    """A connection to each server, after FLUSHALL on both."""
    p = lt.Pair(latch_server.port, redis_server.port)
    assert p.both("FLUSHALL") == (b"+OK\r\n", b"+OK\r\n")
    yield p
    p.close()
    assert latch_server.alive(), "latch-server died:\n" + latch_server.log_text()


@pytest.fixture
def latch(latch_server):
    """One fresh raw connection to the module's latch-server, after FLUSHALL."""
    c = latch_server.conn()
    assert c.cmd("FLUSHALL") == b"OK"
    yield c
    c.close()
    assert latch_server.alive(), "latch-server died:\n" + latch_server.log_text()
