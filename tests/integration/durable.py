"""Helpers for the durability and quarantine tests: a latch-server with a
persistent data directory that can be killed, power-cut and restarted."""

import os
import subprocess
import time

import latchtest as lt


class Node(object):
    """One latch-server with its own data directory, restartable.

    Each start is a latchtest.ServerProcess on a fresh free port (a restart
    is a new process; clients reconnect). `args` are extra server options;
    `wrapper` is a command prefix (prlimit, faketime…); `env` the server's
    environment.
    """

    def __init__(self, workdir, *args, wrapper=(), env=None):
        self.workdir = workdir
        self.data = os.path.join(workdir, "data")
        os.makedirs(self.data, exist_ok=True)
        self.args = [str(a) for a in args]
        self.wrapper = list(wrapper)
        self.env = env
        self.srv = None

    @property
    def port(self):
        return self.srv.port

    @property
    def aof(self):
        return os.path.join(self.data, "latch.aof")

    def argv(self, port):
        return self.wrapper + [lt.latch_binary(), "--port", str(port), "--dir", self.data] + \
            lt.server_args_from_env() + self.args

    def start(self, *extra):
        args = [str(a) for a in extra]
        self.srv = lt.ServerProcess("latch", lambda port: self.argv(port) + args, self.workdir,
                                    env=self.env).start()
        return self

    def run_to_exit(self, *extra, timeout=20):
        """Runs the server expecting it to refuse to start; returns (rc, output)."""
        port = lt.free_port()
        p = subprocess.run(self.argv(port) + [str(a) for a in extra], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=timeout,
                           cwd=self.workdir, env=self.env)
        return p.returncode, p.stdout.decode("utf-8", "replace")

    def conn(self, **kw):
        return self.srv.conn(**kw)

    def cmd(self, *args):
        with self.conn() as c:
            return c.cmd(*args)

    def info(self, section=None):
        with self.conn() as c:
            raw = c.cmd("INFO", section) if section else c.cmd("INFO")
        return lt.info_fields(raw)

    def log_text(self):
        return self.srv.log_text() if self.srv else ""

    def stop(self):
        """A clean shutdown (SIGTERM)."""
        if self.srv is not None:
            self.srv.stop()
            assert self.srv.proc.returncode == 0, self.srv.log_text()

    def kill9(self):
        """A process crash: nothing unwritten survives, but the kernel keeps
        what was written."""
        self.srv.kill()

    def power_loss(self):
        """A machine crash: DEBUG POWERLOSS cuts the log to what was fsynced
        and exits at once (needs --enable-debug-command yes)."""
        with self.conn() as c:
            c.send(lt.encode("DEBUG", "POWERLOSS"))
            c.read_until_close(timeout=10)
        self.srv.proc.wait(timeout=10)
        self.srv.stop()

    def alive(self):
        return self.srv is not None and self.srv.alive()


def is_quarantine_error(reply):
    """Whether a reply is the restart quarantine's refusal."""
    return isinstance(reply, lt.RespError) and reply.text.startswith(b"QUARANTINE ")


def quarantined(node):
    """Whether `node` is in its restart quarantine now: (yes, milliseconds
    left, INFO latch as a dict for assertion messages)."""
    info = node.info("latch")
    return info["quarantine"] == "1", int(info["quarantine_remaining_ms"]), info


def wait_until(predicate, timeout, interval=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def fencing_node(path, *args):
    """A started node for the fencing-token tests: a log, debug commands, and
    quarantine never (these tests are about the counter, and a restart that
    may have lost locks would otherwise refuse grants for a while)."""
    return Node(str(path), "--appendonly", "yes", "--quarantine", "never",
                "--enable-debug-command", "yes", *args).start()


def fenced_grant(n, key, value, *extra):
    """SET key value NX PX 60000 FENCE [extra] on node n: the token it got."""
    with n.conn() as c:
        r = c.cmd("SET", key, value, "NX", "PX", "60000", "FENCE", *extra)
    assert isinstance(r, int) and r > 0, r
    return r
