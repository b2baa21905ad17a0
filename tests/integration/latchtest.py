"""Helpers for latch's integration tests: real servers on free ports, and a
raw-socket RESP client that returns replies as the exact bytes received.

Only the standard library is used. Servers:

  * latch:  $LATCH_BUILD_DIR/latch-server --port P --dir D --appendonly no ...
  * redis:  Debian's redis-server --port P --save '' --appendonly no ...

Both are started on a port found by binding port 0, waited for until they
answer PING, and killed at teardown.
"""

import atexit
import os
import shutil
import shlex
import signal
import socket
import subprocess
import tempfile
import time

HOST = "127.0.0.1"
START_TIMEOUT = 10.0
REPLY_TIMEOUT = 10.0


# ---------------------------------------------------------------- paths


def build_dir():
    d = os.environ.get("LATCH_BUILD_DIR")
    if not d:
        raise RuntimeError("LATCH_BUILD_DIR is not set (the cmake build directory)")
    return d


def source_dir():
    return os.environ.get(
        "LATCH_SOURCE_DIR",
        os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))


def latch_binary():
    return os.path.join(build_dir(), "latch-server")


def redis_server_binary():
    return shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port():
    """A TCP port that was free a moment ago (bind port 0, read it, close)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind((HOST, 0))
        return s.getsockname()[1]
    finally:
        s.close()


# ---------------------------------------------------------------- RESP


class Incomplete(Exception):
    """The buffer does not hold a whole reply yet."""


class RespError(object):
    """A decoded error reply ('-' or '!'); compares equal to its text."""

    def __init__(self, text):
        self.text = text

    def __eq__(self, other):
        if isinstance(other, RespError):
            return self.text == other.text
        if isinstance(other, (bytes, str)):
            t = other.encode() if isinstance(other, str) else other
            return self.text == t
        return NotImplemented

    def __repr__(self):
        return "RespError(%r)" % (self.text,)


class Verbatim(bytes):
    """A RESP3 verbatim string ('='): the text without the format prefix."""
    fmt = b"txt"


def _line(buf, pos):
    end = buf.find(b"\r\n", pos)
    if end < 0:
        raise Incomplete()
    return buf[pos:end], end + 2


def parse_reply(buf, pos=0):
    """Parses one RESP2/RESP3 reply starting at buf[pos].

    Returns (value, end). Raises Incomplete when more bytes are needed.
    Values: bytes for simple/bulk strings, int, None for nulls, list for
    arrays/sets/pushes, dict (as a list of pairs kept in order, wrapped in a
    dict subclass) for maps, RespError for errors, float for doubles, bool.
    """
    if pos >= len(buf):
        raise Incomplete()
    t = buf[pos:pos + 1]
    line, nxt = _line(buf, pos + 1)
    if t == b"+":
        return bytes(line), nxt
    if t == b"-":
        return RespError(bytes(line)), nxt
    if t == b":":
        return int(line), nxt
    if t == b"_":
        return None, nxt
    if t == b"#":
        return line == b"t", nxt
    if t == b",":
        return float(line), nxt
    if t == b"(":
        return int(line), nxt
    if t in (b"$", b"!", b"="):
        n = int(line)
        if n < 0:
            return None, nxt
        if len(buf) < nxt + n + 2:
            raise Incomplete()
        data = bytes(buf[nxt:nxt + n])
        if buf[nxt + n:nxt + n + 2] != b"\r\n":
            raise ValueError("bulk not terminated by CRLF at %d: %r" % (nxt + n, buf[nxt:nxt + n + 2]))
        if t == b"!":
            return RespError(data), nxt + n + 2
        if t == b"=":
            v = Verbatim(data[4:])
            v.fmt = data[:3]
            return v, nxt + n + 2
        return data, nxt + n + 2
    if t in (b"*", b"~", b">"):
        n = int(line)
        if n < 0:
            return None, nxt
        out = []
        for _ in range(n):
            v, nxt = parse_reply(buf, nxt)
            out.append(v)
        return out, nxt
    if t in (b"%", b"|"):
        n = int(line)
        out = OrderedMap()
        for _ in range(n):
            k, nxt = parse_reply(buf, nxt)
            v, nxt = parse_reply(buf, nxt)
            out.pairs.append((k, v))
        return out, nxt
    raise ValueError("unknown RESP type byte %r at %d in %r" % (t, pos, bytes(buf[pos:pos + 80])))


class OrderedMap(object):
    """A RESP3 map as the ordered list of its (key, value) pairs."""

    def __init__(self):
        self.pairs = []

    def get(self, key, default=None):
        for k, v in self.pairs:
            if k == key:
                return v
        return default

    def __getitem__(self, key):
        for k, v in self.pairs:
            if k == key:
                return v
        raise KeyError(key)

    def keys(self):
        return [k for k, _ in self.pairs]

    def __len__(self):
        return len(self.pairs)

    def __repr__(self):
        return "OrderedMap(%r)" % (self.pairs,)


def pairs_to_dict(flat):
    """A RESP2 flat [k1, v1, k2, v2, ...] array (or an OrderedMap) as a dict."""
    if isinstance(flat, OrderedMap):
        return dict(flat.pairs)
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def _b(x):
    if isinstance(x, bytes):
        return x
    if isinstance(x, bytearray):
        return bytes(x)
    if isinstance(x, str):
        return x.encode("utf-8", "surrogateescape")
    if isinstance(x, int):
        return str(x).encode()
    raise TypeError("cannot encode %r" % (x,))


def encode(*args):
    """A multibulk request of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = _b(a)
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def count_replies(data):
    """How many whole replies `data` holds (raises if it ends mid-reply)."""
    pos, n = 0, 0
    while pos < len(data):
        _, pos = parse_reply(data, pos)
        n += 1
    return n


def split_replies(data):
    """The raw bytes of each reply in `data`."""
    out, pos = [], 0
    while pos < len(data):
        _, end = parse_reply(data, pos)
        out.append(bytes(data[pos:end]))
        pos = end
    return out


class Conn(object):
    """One client connection speaking raw RESP."""

    def __init__(self, port, host=HOST, timeout=REPLY_TIMEOUT):
        self.port = port
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.timeout = timeout

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        self.sock.sendall(_b(data))

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no complete reply within %.1fs; have %r" %
                               (self.timeout, bytes(self.buf[:300])))
        self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            raise TimeoutError("no complete reply within %.1fs; have %r" %
                               (self.timeout, bytes(self.buf[:300])))
        if not chunk:
            raise ConnectionError("connection closed by server; have %r" % (bytes(self.buf[:300]),))
        self.buf += chunk

    def read_raw(self, timeout=None):
        """Reads exactly one reply; returns its raw bytes."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            try:
                _, end = parse_reply(self.buf, 0)
                raw = bytes(self.buf[:end])
                del self.buf[:end]
                return raw
            except Incomplete:
                self._fill(deadline)

    def read_n_raw(self, n, timeout=None):
        """Reads exactly n replies; returns their concatenated raw bytes."""
        deadline = time.monotonic() + (timeout or self.timeout)
        pos, got = 0, 0
        while got < n:
            try:
                _, pos = parse_reply(self.buf, pos)
                got += 1
            except Incomplete:
                self._fill(deadline)
        raw = bytes(self.buf[:pos])
        del self.buf[:pos]
        return raw

    def read(self, timeout=None):
        """Reads exactly one reply, decoded."""
        return parse_reply(self.read_raw(timeout), 0)[0]

    def raw(self, *args):
        """Sends one multibulk request and returns the raw reply bytes."""
        self.send(encode(*args))
        return self.read_raw()

    def cmd(self, *args):
        """Sends one multibulk request and returns the decoded reply."""
        self.send(encode(*args))
        return self.read()

    def read_until_close(self, timeout=None):
        """Everything the server sends until it closes the connection.

        Raises TimeoutError if the connection is still open after `timeout`.
        """
        deadline = time.monotonic() + (timeout or self.timeout)
        data = bytes(self.buf)
        self.buf.clear()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("server did not close the connection; got %r" % (data[:300],))
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk


# ---------------------------------------------------------------- servers

# Every server still running; killed when the interpreter exits, so an
# interrupted run leaves no process behind.
_running = set()


@atexit.register
def _kill_leftovers():
    for srv in list(_running):
        if srv.proc is not None and srv.proc.poll() is None:
            srv.proc.kill()


class ServerProcess(object):
    """A server binary running on a free port until stop().

    The one way the Python tests start servers (latch and redis-server alike;
    durable.Node restarts latch through it too). `argv_for_port(port)` gives
    the command line for a port; `env` the environment (None: inherited).
    start() retries on a fresh port when the server exits or stays silent,
    since another process may take a free port before the server binds it.
    Output goes to <workdir>/<name>.log. The C++ tools and tests use
    tools/launch/server_process.h, the same design.
    """

    def __init__(self, name, argv_for_port, workdir, env=None):
        self.name = name
        self.workdir = workdir
        self._argv_for_port = argv_for_port
        self.env = env
        self.proc = None
        self.port = None
        self.log_path = os.path.join(workdir, name + ".log")

    def start(self):
        last = None
        for _ in range(5):
            port = free_port()
            argv = self._argv_for_port(port)
            self.log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.workdir,
                                         env=self.env)
            self.argv = argv
            self.port = port
            _running.add(self)
            try:
                self._wait_ready()
                return self
            except Exception as e:  # port taken meanwhile, or a crash: retry elsewhere
                last = e
                self.stop()
        raise RuntimeError("%s did not start: %s\n%s" % (self.name, last, self.log_text()))

    def _wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("exited with status %s" % self.proc.returncode)
            try:
                with Conn(self.port, timeout=2.0) as c:
                    # Any reply will do: with a password set it is NOAUTH.
                    reply = c.cmd("PING")
                    if reply == b"PONG" or isinstance(reply, RespError):
                        return
            except (OSError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.02)
        raise RuntimeError("no PONG on port %d within %.0fs" % (self.port, START_TIMEOUT))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def conn(self, **kw):
        return Conn(self.port, **kw)

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")[-4000:]
        except OSError:
            return ""

    def kill(self):
        """SIGKILL (a crash; works on a paused process too), then reap."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.stop()

    def pause(self):
        """SIGSTOP: it keeps its port and connections but answers nothing."""
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)

    def stop(self):
        """SIGTERM (a clean shutdown), then SIGKILL if it is still running."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        _running.discard(self)
        if getattr(self, "log", None) is not None:
            self.log.close()
            self.log = None


# A test server starts from an empty data directory and never ran before.
# With `appendonly no` latch cannot know that, so by default it starts in
# restart quarantine (no lock granted for max-lock-ttl). Tests of anything
# else turn the quarantine off.
FRESH_ARGS = ("--quarantine", "never")


def server_args_from_env():
    """LATCH_TEST_SERVER_ARGS: arguments every latch the tests start gets
    before the test's own (which may override them), to run a module under
    another setting: LATCH_TEST_SERVER_ARGS="--io-uring yes" runs it on the
    io_uring connection path."""
    return shlex.split(os.environ.get("LATCH_TEST_SERVER_ARGS", ""))


def start_latch(workdir, *extra):
    """latch-server on a free port with data in `workdir`."""
    binary = latch_binary()
    if not os.access(binary, os.X_OK):
        raise RuntimeError("latch-server not built: %s" % binary)
    data = os.path.join(workdir, "latch-data")
    os.makedirs(data, exist_ok=True)
    return ServerProcess(
        "latch", lambda p: [binary, "--port", str(p), "--dir", data, "--appendonly", "no"]
        + server_args_from_env() + [str(x) for x in extra], workdir).start()


def start_redis(workdir, *extra):
    """Debian's redis-server on a free port, with no persistence."""
    data = os.path.join(workdir, "redis-data")
    os.makedirs(data, exist_ok=True)
    return ServerProcess(
        "redis", lambda p: [redis_server_binary(), "--port", str(p), "--bind", HOST,
                            "--save", "", "--appendonly", "no", "--dir", data]
        + [str(x) for x in extra], workdir).start()


class Pair(object):
    """A connection to latch and one to redis-server, driven in lockstep."""

    def __init__(self, latch_port, redis_port):
        self.latch = Conn(latch_port)
        self.redis = Conn(redis_port)

    def close(self):
        self.latch.close()
        self.redis.close()

    def send_raw(self, data, nreplies=1):
        """Sends the same bytes to both; returns (latch_raw, redis_raw)."""
        data = _b(data)
        self.latch.send(data)
        self.redis.send(data)
        return self.latch.read_n_raw(nreplies), self.redis.read_n_raw(nreplies)

    def both(self, *args):
        return self.send_raw(encode(*args))

    def send_until_close(self, data, timeout=5.0):
        """Sends the same bytes to both; returns what each sent before closing."""
        data = _b(data)
        self.latch.send(data)
        self.redis.send(data)
        return (self.latch.read_until_close(timeout), self.redis.read_until_close(timeout))


def send_both(latch_port, redis_port, data, nreplies=1):
    """Sends raw `data` on fresh connections to both servers; returns both raw replies."""
    p = Pair(latch_port, redis_port)
    try:
        return p.send_raw(data, nreplies)
    finally:
        p.close()


def read_until_closed(sock):
    """Reads a socket the server is closing until EOF (or a reset); returns
    how many bytes arrived before it (what the kernel had buffered)."""
    got = 0
    try:
        while True:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            got += len(chunk)
    except ConnectionResetError:
        pass
    sock.close()
    return got


def wait_for(predicate, timeout, interval=0.02):
    """Polls predicate() until it is truthy; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def info_fields(text):
    """INFO text as a dict of field -> value (str)."""
    if isinstance(text, bytes):
        text = text.decode()
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#") or ":" not in line:
            continue
        k, v = line.split(":", 1)
        out[k] = v
    return out


def make_tmpdir(prefix):
    return tempfile.mkdtemp(prefix=prefix)


def known_script_texts():
    """The known lock scripts' texts (server/scripting/scripts/*/*.lua)."""
    root = os.path.join(source_dir(), "server", "scripting", "scripts")
    texts = []
    for lib in sorted(os.listdir(root)):
        for name in sorted(os.listdir(os.path.join(root, lib))):
            with open(os.path.join(root, lib, name), "rb") as f:
                texts.append(f.read())
    return texts


def load_known_scripts(conn):
    """SCRIPT LOADs every known lock script (the cache starts empty, as
    Redis's: a library does this itself on NOSCRIPT)."""
    for text in known_script_texts():
        conn.cmd("SCRIPT", "LOAD", text)
