"""Real Redis clients against latch: redis-cli one-shot commands (compared
with redis-server's output), an interactive redis-cli session in tmux
(argument hints come from latch's COMMAND DOCS), redis-cli --pipe mass
insertion, and redis-benchmark.
"""

import os
import re
import shutil
import subprocess
import time

import pytest

from latchtest import encode

REDIS_CLI = shutil.which("redis-cli")
REDIS_BENCHMARK = shutil.which("redis-benchmark")
TMUX = shutil.which("tmux")

pytestmark = pytest.mark.skipif(REDIS_CLI is None, reason="redis-cli (redis-tools) not installed")


def cli_env():
    env = dict(os.environ)
    # no history file, no ~/.redisclirc: the session is the same on every machine
    env["REDISCLI_HISTFILE"] = "/dev/null"
    env["REDISCLI_RCFILE"] = "/dev/null"
    env.pop("REDISCLI_AUTH", None)
    return env


def cli(port, *args, input=None, timeout=30):
    p = subprocess.run([REDIS_CLI, "-p", str(port)] + list(args), input=input,
                       capture_output=True, timeout=timeout, env=cli_env())
    return p.returncode, p.stdout, p.stderr


# Each case runs in order on both servers; the printed output must be equal.
ONE_SHOT = [
    ["SET", "k", "v"],
    ["GET", "k"],
    ["GET", "missing"],
    ["SET", "k", "v2", "NX"],
    ["SET", "k", "v2", "XX", "GET"],
    ["SET", "k", "v", "EX", "0"],
    ["SET", "k", "v", "NX", "XX"],
    ["SET", "nl", "a\nb\"c"],
    ["GET", "nl"],
    ["SET", "utf", "caf\u00e9"],
    ["GET", "utf"],
    ["SETNX", "k", "x"],
    ["EXISTS", "k", "k", "missing"],
    ["EXPIRE", "k", "100000"],
    ["TTL", "k"],
    ["EXPIRE", "k", "10", "FOO"],
    ["EXPIRE", "k", "10", "NX", "XX"],
    ["PERSIST", "k"],
    ["TTL", "missing"],
    ["DEL", "k", "nl", "missing"],
    ["DBSIZE"],
    ["PING"],
    ["PING", "hello world"],
    ["ECHO", ""],
    ["FOO", "bar"],
    ["GET"],
    ["CONFIG", "GET", "timeout"],
    ["CONFIG", "GET", "maxclients"],
    ["CONFIG", "SET", "nosuch", "1"],
    ["CLIENT", "GETNAME"],
    ["HELLO", "4"],
    ["SELECT", "0"],
    ["FLUSHALL"],
    ["DBSIZE"],
]


@pytest.fixture(scope="module")
def servers(latch_server, redis_server):
    return latch_server, redis_server


@pytest.mark.parametrize("mode", [[], ["--no-raw"], ["-3", "--no-raw"]],
                         ids=["raw", "formatted", "resp3"])
def test_one_shot_commands_print_like_redis(servers, mode):
    latch, redis = servers
    for srv in servers:
        assert cli(srv.port, "FLUSHALL") == (0, b"OK\n", b"")
    diffs = []
    for args in ONE_SHOT:
        got = cli(latch.port, *(mode + args))
        want = cli(redis.port, *(mode + args))
        if got != want:
            diffs.append("%r:\n   latch %r\n   redis %r" % (args, got, want))
    assert not diffs, "\n".join(diffs)


def test_one_shot_latch_only_commands(latch_server):
    port = latch_server.port
    # redis-cli -n selects a database before the command.
    assert cli(port, "-n", "3", "SET", "where", "three") == (0, b"OK\n", b"")
    assert cli(port, "-n", "3", "GET", "where") == (0, b"three\n", b"")
    assert cli(port, "--no-raw", "GET", "where") == (0, b"(nil)\n", b"")
    # Past the 16 databases redis-cli reports the SELECT error and stays in 0.
    assert cli(port, "-n", "16", "GET", "where") == \
        (0, b"\n", b"SELECT 16 failed: ERR DB index is out of range\n")
    assert cli(port, "--no-raw", "SET", "lock", "tok", "NX", "PX", "30000") == (0, b"OK\n", b"")
    assert cli(port, "--no-raw", "SET", "lock", "tok2", "IFEQ", "nope") == (0, b"(nil)\n", b"")
    assert cli(port, "SET", "d", "hello") == (0, b"OK\n", b"")
    assert cli(port, "--no-raw", "DIGEST", "d") == (0, b'"9555e8555c62dcfd"\n', b"")
    assert cli(port, "--no-raw", "DIGEST", "nokey") == (0, b"(nil)\n", b"")
    assert cli(port, "--no-raw", "DELIFEQ", "lock", "nope") == (0, b"(integer) 0\n", b"")
    assert cli(port, "--no-raw", "DELIFEQ", "lock", "tok") == (0, b"(integer) 1\n", b"")
    assert cli(port, "--no-raw", "DELEX", "lock") == (0, b"(integer) 0\n", b"")
    assert cli(port, "--no-raw", "EVAL", "return 1", "0") == (0, b"(integer) 1\n", b"")


def test_cli_reads_arguments_from_stdin(latch_server):
    # -x: the last argument comes from stdin, binary-safe
    value = b"line1\nline2\x00end"
    assert cli(latch_server.port, "-x", "SET", "fromstdin", input=value) == (0, b"OK\n", b"")
    with latch_server.conn() as c:
        assert c.cmd("GET", "fromstdin") == value
        c.cmd("DEL", "fromstdin")


# ---------------------------------------------------------------- interactive, in tmux


class Tmux(object):
    """A tmux server of our own (its own socket), killed at the end."""

    def __init__(self, tmpdir):
        self.socket = os.path.join(str(tmpdir), "tmux.sock")
        self.env = cli_env()
        self.env.setdefault("TERM", "xterm-256color")
        self.env.pop("TMUX", None)

    def run(self, *args):
        return subprocess.run([TMUX, "-S", self.socket] + list(args), capture_output=True,
                              text=True, env=self.env, timeout=10)

    def start(self, command):
        r = self.run("new-session", "-d", "-s", "cli", "-x", "300", "-y", "50", command)
        assert r.returncode == 0, r.stderr

    def keys(self, text):
        assert self.run("send-keys", "-t", "cli", "-l", text).returncode == 0

    def key(self, name):
        assert self.run("send-keys", "-t", "cli", name).returncode == 0

    def screen(self):
        return self.run("capture-pane", "-p", "-t", "cli").stdout

    def wait_screen(self, predicate, timeout=5):
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if predicate(text) or time.monotonic() > deadline:
                return text
            time.sleep(0.05)

    def kill(self):
        self.run("kill-server")


@pytest.fixture
def tmux(tmp_path):
    if TMUX is None:
        pytest.skip("tmux is not installed: the interactive redis-cli test needs a terminal")
    t = Tmux(tmp_path)
    yield t
    t.kill()


def last_prompt_line(screen, prompt):
    lines = [l for l in screen.splitlines() if l.startswith(prompt.rstrip())]
    return lines[-1].rstrip() if lines else ""


def open_cli(tmux, port):
    prompt = "127.0.0.1:%d> " % port
    tmux.start("%s -p %d" % (REDIS_CLI, port))
    # capture-pane drops trailing blanks: look for the prompt without its space
    screen = tmux.wait_screen(lambda s: prompt.rstrip() in s)
    assert prompt.rstrip() in screen, screen
    return prompt


def hint_for(tmux, prompt, typed, timeout=2.0):
    """Types `typed` on an empty line; returns what redis-cli shows after it
    (the grey hint), or "" if no hint appears."""
    tmux.key("C-u")
    tmux.wait_screen(lambda s: last_prompt_line(s, prompt) == prompt.rstrip())
    assert typed.endswith(" ")
    tmux.keys(typed)
    # The hint follows the typed space; a half-typed line cannot match this.
    full = prompt + typed

    def shown(screen):
        line = last_prompt_line(screen, prompt)
        return line.startswith(full) and len(line) > len(full)

    screen = tmux.wait_screen(shown, timeout)
    line = last_prompt_line(screen, prompt)
    if not shown(screen):
        assert line == full.rstrip(), (line, screen)
        return ""
    return line[len(full):]


def test_interactive_hints_come_from_command_docs(latch_server, tmux):
    prompt = open_cli(tmux, latch_server.port)
    # redis-cli 7.0 knows nothing of DELIFEQ or DELEX: these hints can only
    # come from latch's COMMAND DOCS reply.
    assert hint_for(tmux, prompt, "DELIFEQ ") == "key value"
    assert hint_for(tmux, prompt, "DELIFEQ k ") == "value"
    assert hint_for(tmux, prompt, "DELEX ") == \
        "key [IFEQ ifeq-value|IFNE ifne-value|IFDEQ ifdeq-digest|IFDNE ifdne-digest]"
    assert hint_for(tmux, prompt, "DIGEST ") == "key"
    # SET's hint is latch's own, with the compare-and-set conditions, the
    # fencing token and the wait in the key's queue
    assert hint_for(tmux, prompt, "SET k v ") == (
        "[NX|XX|IFEQ ifeq-value|IFNE ifne-value|IFDEQ ifdeq-digest|IFDNE ifdne-digest] [GET] "
        "[EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL] "
        "[FENCE [MIN min]] [WAIT timeout]")
    assert hint_for(tmux, prompt, "LOCKINFO ") == "key"
    assert hint_for(tmux, prompt, "FENCE ") == "key"
    assert hint_for(tmux, prompt, "SET k ").startswith("value [NX|XX|IFEQ ifeq-value|")

    # and commands run: acquire, then release with the native command
    tmux.key("C-u")
    tmux.keys("SET lock:cli tok NX PX 60000")
    tmux.key("Enter")
    screen = tmux.wait_screen(lambda s: s.rstrip().endswith("OK\n" + prompt.rstrip()))
    assert screen.rstrip().endswith("OK\n" + prompt.rstrip()), screen
    tmux.keys("DELIFEQ lock:cli tok")
    tmux.key("Enter")
    screen = tmux.wait_screen(lambda s: "(integer) 1" in s)
    assert "(integer) 1\n" + prompt.rstrip() in screen, screen
    with latch_server.conn() as c:
        assert c.cmd("EXISTS", "lock:cli") == 0


SHARED_HINTS = ["GET ", "DEL ", "DEL k ", "EXISTS ", "SETNX ", "EXPIRE ", "EXPIRE k 10 ",
                "PEXPIREAT k ", "TTL ", "PERSIST ", "ECHO ", "PING ", "SELECT ", "AUTH ",
                "HELLO ", "FLUSHALL ", "CONFIG GET ", "CONFIG SET ", "CLIENT SETNAME "]


def test_interactive_hints_match_redis_for_shared_commands(latch_server, redis_server, tmp_path):
    if TMUX is None:
        pytest.skip("tmux is not installed: the interactive redis-cli test needs a terminal")
    hints = {}
    for srv in (latch_server, redis_server):
        t = Tmux(tmp_path / srv.name)
        os.makedirs(str(tmp_path / srv.name), exist_ok=True)
        try:
            prompt = open_cli(t, srv.port)
            hints[srv.name] = [hint_for(t, prompt, typed) for typed in SHARED_HINTS]
        finally:
            t.kill()
    assert all(hints["redis"]), hints["redis"]
    diffs = ["%r: latch %r, redis %r" % (typed, a, b)
             for typed, a, b in zip(SHARED_HINTS, hints["latch"], hints["redis"]) if a != b]
    assert not diffs, "\n".join(diffs)


# ---------------------------------------------------------------- mass insertion and benchmark


def test_pipe_mass_insertion(latch_server, tmp_path):
    n = 100000
    data = b"".join(encode("SET", "mass:%d" % i, "value:%d" % i) for i in range(n))
    with latch_server.conn() as c:
        assert c.cmd("FLUSHALL") == b"OK"
    rc, out, err = cli(latch_server.port, "--pipe", input=data, timeout=120)
    assert rc == 0, (out, err)
    summary = out.decode().strip().splitlines()[-1]
    assert summary == "errors: 0, replies: %d" % n, out
    with latch_server.conn() as c:
        assert c.cmd("DBSIZE") == n
        assert c.cmd("GET", "mass:0") == b"value:0"
        assert c.cmd("GET", "mass:%d" % (n - 1)) == b"value:%d" % (n - 1)
        assert c.cmd("FLUSHALL") == b"OK"


def test_pipe_counts_errors(latch_server):
    data = encode("SET", "a", "1") + encode("SET", "a") + encode("FOO") + encode("GET", "a")
    rc, out, err = cli(latch_server.port, "--pipe", input=data)
    assert out.decode().strip().splitlines()[-1] == "errors: 2, replies: 4", out


def benchmark(port, *args, timeout=120):
    p = subprocess.run([REDIS_BENCHMARK, "-p", str(port)] + list(args), capture_output=True,
                       timeout=timeout, env=cli_env())
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def final_lines(out):
    """redis-benchmark -q rewrites its progress line with \\r; keep the finals."""
    return [chunk.strip() for line in out.split("\n") for chunk in [line.split("\r")[-1]]
            if chunk.strip()]


@pytest.mark.skipif(REDIS_BENCHMARK is None, reason="redis-benchmark not installed")
def test_benchmark_set_get(latch_server):
    rc, out, err = benchmark(latch_server.port, "-t", "set,get", "-n", "20000", "-q")
    assert rc == 0, (out, err)
    lines = final_lines(out)
    assert [l.split(":")[0] for l in lines] == ["SET", "GET"], out
    for l in lines:
        assert re.match(r"^(SET|GET): [0-9.]+ requests per second", l), l
    # no warning about CONFIG GET save/appendonly, no error reply
    assert "error" not in (out + err).lower() and "warning" not in (out + err).lower(), (out, err)
    with latch_server.conn() as c:
        assert len(c.cmd("GET", "key:__rand_int__")) == 3  # -d 3, the default


@pytest.mark.skipif(REDIS_BENCHMARK is None, reason="redis-benchmark not installed")
def test_benchmark_ping_inline_and_pipelined(latch_server):
    rc, out, err = benchmark(latch_server.port, "-t", "ping_inline", "-n", "20000", "-q")
    assert rc == 0, (out, err)
    lines = final_lines(out)
    assert len(lines) == 1 and re.match(r"^PING_INLINE: [0-9.]+ requests per second", lines[0]), out
    assert "error" not in (out + err).lower(), (out, err)
    rc, out, err = benchmark(latch_server.port, "-t", "ping,set", "-n", "20000", "-P", "16", "-c", "8",
                             "-q")
    assert rc == 0, (out, err)
    names = [l.split(":")[0] for l in final_lines(out)]
    assert names == ["PING_INLINE", "PING_MBULK", "SET"], out
    assert "error" not in (out + err).lower(), (out, err)


@pytest.mark.skipif(REDIS_BENCHMARK is None, reason="redis-benchmark not installed")
def test_benchmark_default_run_completes_as_with_redis(latch_server, redis_server):
    """redis-benchmark with no -t runs its whole default list (strings,
    lists, sets, hashes, sorted sets, LRANGE, MSET): the same tests complete
    on latch as on redis-server, without an error reply."""
    runs = []
    for srv in (latch_server, redis_server):
        rc, out, err = benchmark(srv.port, "-n", "2000", "-c", "10", "-q", timeout=300)
        assert rc == 0, (out, err)
        assert "error" not in (out + err).lower(), (out, err)
        names = [l.split(":")[0] for l in final_lines(out)]
        for l in final_lines(out):
            assert re.match(r"^[A-Z_0-9]+( \([A-Za-z0-9 ]+\))?: [0-9.]+ requests per second", l), l
        runs.append(names)
    assert runs[0] == runs[1]
    assert {"LPUSH", "LPOP", "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN", "MSET (10 keys)"} <= \
        set(runs[0]), runs[0]
    assert any(n.startswith("LRANGE_600") for n in runs[0]), runs[0]
