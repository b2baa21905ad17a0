#!/usr/bin/env python3
"""Runs units of Redis 7.0.15's own test suite against latch-server.

Each unit gets a fresh latch-server on a free port (data in a temporary
folder) and runs as Redis's suite runs against any external server:

    ./runtest --host H --port P --singledb --single unit/... --skipfile F

Tests that need what latch states it lacks are listed, each with its
reason, in tests/redis-suite/skip/<unit>.txt (unit/type/hash ->
unit_type_hash.txt), one per line:

    <test name, or /regexp as runtest reads it>  # <why it is skipped>

The suite itself comes from Debian's source package (fetch.sh). The run
fails when runtest fails, or when any test reports [err] or [exception].
With --redis the same units run against Debian's redis-server instead (the
control: a test that fails there is not latch's to pass).

Usage: run.py [--build DIR] [--redis] [--verbose] unit/type/hash [unit/...]
"""

import argparse
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for_ping(port, proc, timeout=15.0):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError("the server exited with %s" % proc.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(64).startswith(b"+PONG"):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError("no PONG on port %d" % port)


def skip_lines(unit):
    """The skip list's test names (runtest's --skipfile format), with reasons."""
    path = os.path.join(HERE, "skip", unit.replace("/", "_") + ".txt")
    names = []
    if not os.path.exists(path):
        return names, path
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, sep, reason = line.rpartition("  # ")
            if not sep or not name.strip() or not reason.strip():
                sys.exit("%s:%d: expected '<test name>  # <reason>'" % (path, n))
            names.append(name.strip())
    return names, path


def start_server(args, tmp):
    port = free_port()
    if args.redis:
        cmd = [shutil.which("redis-server") or "/usr/bin/redis-server", "--port", str(port),
               "--dir", tmp, "--save", "", "--appendonly", "no",
               "--enable-debug-command", "yes"]
    else:
        cmd = [os.path.join(args.build, "latch-server"), "--port", str(port), "--dir", tmp,
               "--appendonly", "no", "--enable-debug-command", "yes"]
    log = open(os.path.join(tmp, "server.log"), "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=tmp)
    wait_for_ping(port, proc)
    return proc, port


# Units Redis tags external:skip as a whole although only part of them needs
# a server of the suite's own: unit -> how much of the file, from the top,
# talks to one server. That part runs from a copy without the tag
# (tests/unit/latch-copies/ in the fetched suite); the rest is listed as
# not run in the unit's skip-list header.
EXTERNAL_PARTS = {
    # The second start_server block starts two servers (replication).
    "unit/pubsubshard": "first start_server block",
}


def external_copy(suite, unit):
    """Writes the part of `unit` that runs against one external server and
    returns the unit name to run it under."""
    with open(os.path.join(suite, "tests", unit + ".tcl"), encoding="utf-8") as f:
        text = f.read()
    second = text.index("start_server", text.index("start_server") + 1)
    part = text[:second].replace(" external:skip", "", 1)
    name = "unit/latch-copies/" + os.path.basename(unit)
    os.makedirs(os.path.join(suite, "tests", "unit", "latch-copies"), exist_ok=True)
    with open(os.path.join(suite, "tests", name + ".tcl"), "w", encoding="utf-8") as f:
        f.write(part)
    return name


def run_unit(args, suite, unit):
    names, skip_path = skip_lines(unit)
    runs = external_copy(suite, unit) if unit in EXTERNAL_PARTS else unit
    tmp = tempfile.mkdtemp(prefix="latch-redis-suite-")
    proc = None
    try:
        proc, port = start_server(args, tmp)
        skipfile = os.path.join(tmp, "skip.txt")
        with open(skipfile, "w", encoding="utf-8") as f:
            f.write("\n".join(names))
        # The test server's own port is searched for below --baseport: a
        # base of our own, so that runs side by side do not race for 21079.
        # The suite also binds each candidate + 10000, so the base stays
        # below the ephemeral range (32768) with room for both.
        t0 = time.time()
        # The suite's own server for its test clients listens on a port found
        # below --baseport; another run on the machine may take it between
        # the search and the bind. That, and only that, is tried again with
        # another base.
        for attempt in range(4):
            cmd = ["./runtest", "--host", "127.0.0.1", "--port", str(port), "--singledb",
                   "--single", runs, "--clients", "1", "--timeout", "600",
                   "--baseport", str(random.randrange(12000, 22000, 64))]
            if names:
                cmd += ["--skipfile", skipfile]
            if args.verbose:
                cmd.append("--verbose")
            for o in args.only or []:
                cmd += ["--only", o]
            out = subprocess.run(cmd, cwd=suite, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, timeout=1500)
            text = out.stdout.decode("utf-8", "replace")
            if not re.search(r"couldn't open socket: address already in use|"
                             r"Can't find a non busy port", text) or "[ok]:" in text:
                break
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
        ok = len(re.findall(r"^\[ok\]:", text, re.M))
        bad = re.findall(r"^\[(?:err|exception)\]:.*$", text, re.M)
        skipped = len(re.findall(r"^\[skip\]:", text, re.M))
        alive = proc.poll() is None
        passed = out.returncode == 0 and not bad and alive
        if not passed or args.verbose:
            sys.stdout.write(text)
        print("%s: %s — %d ok, %d failed, %d skipped (%d listed in %s) in %.0f s%s" % (
            unit, "PASS" if passed else "FAIL", ok, len(bad), skipped, len(names),
            os.path.relpath(skip_path, SOURCE), time.time() - t0,
            "" if alive else "; the server died"))
        for b in bad:
            print("  " + b)
        if not alive:
            with open(os.path.join(tmp, "server.log"), "rb") as f:
                sys.stdout.write(f.read().decode("utf-8", "replace")[-4000:])
        return passed
    finally:
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.environ.get("LATCH_BUILD_DIR", os.path.join(SOURCE, "build")))
    p.add_argument("--redis", action="store_true", help="run against redis-server (the control)")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--only", action="append", help="runtest --only (repeatable)")
    p.add_argument("units", nargs="+")
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    suite = subprocess.run([os.path.join(HERE, "fetch.sh")], check=True, stdout=subprocess.PIPE,
                           text=True).stdout.strip().splitlines()[-1]
    results = [run_unit(args, suite, u) for u in args.units]
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
