"""Every example of README.md and docs/guide.md, run as printed, ending as the
document says it ends (docs_examples.py reads them out of the documents, so
an edited example is the tested one).

A reader's shell is imitated: the tools on the PATH as the README says
(build/ and build/tools/), a directory of their own in which `build/` and
`tests/` are the checkout's, `~/.local` and the documents' /tmp paths
replaced by the test's own directory. The long runs (latch-chaos for ten
minutes) run shorter, with the claims that do not depend on the length."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

import latchtest as lt
from docs_examples import (all_blocks, block, example, match_lines, reader_dir,
                           redis_cli_transcript, run_transcript, shell_lines, tools_env,
                           transcript)
from test_lock_libraries import node_env  # noqa: F401 (the npm packages, installed once)

DEMO_IDS = ["v1", "v2", "v3", "v4", "v5", "redlock", "redlock-quarantine", "fencing", "waiting",
            "reentrant", "fair", "rwlock", "semaphore", "pubsub"]


def tool(name):
    return os.path.join(lt.build_dir(), "tools", name)


# ---------------------------------------------------------------- the documents' shape

def test_every_block_is_an_example_or_says_why_not():
    ids = set()
    for b in all_blocks():
        assert b.kind is not None, (
            "%s:%d: a code block without <!-- example: ID -->, <!-- output: ID --> or "
            "<!-- not run: why -->" % (b.doc, b.line))
        if b.kind == "example":
            assert b.value not in ids, "%s:%d: example %s twice" % (b.doc, b.line, b.value)
            ids.add(b.value)
            assert b.value in RUNNERS, "%s:%d: no test runs example %s" % (b.doc, b.line, b.value)
        elif b.kind == "not run":
            assert len(b.value) > 10, "%s:%d: say why it is not run" % (b.doc, b.line)
    for b in all_blocks():
        if b.kind == "output":
            assert b.value in ids, "%s:%d: output of unknown example %s" % (b.doc, b.line, b.value)
    assert ids == set(RUNNERS), "runners without an example: %s" % (set(RUNNERS) - ids)


# ---------------------------------------------------------------- README: building and installing

def readme_two_commands(tmp_path):
    assert shell_lines(example("readme-two-commands")) == ["tools/dev/run.sh", "tools/dev/test.sh"]
    with open(os.path.join(lt.source_dir(), ".ci", "run")) as f:
        assert "exec tools/dev/test.sh" in f.read()
    # run.sh: the server and every tool built (in this build directory:
    # nothing is left to build), then the server in the foreground.
    port = lt.free_port()
    env = dict(os.environ, LATCH_BUILD_DIR=lt.build_dir())
    p = subprocess.Popen([os.path.join(lt.source_dir(), "tools", "dev", "run.sh"), "--port",
                          str(port), "--dir", str(tmp_path)], cwd=lt.source_dir(), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        def pong():
            try:
                with lt.Conn(port, timeout=1) as c:
                    return c.cmd("PING") == b"PONG"
            except OSError:
                return False
        assert lt.wait_for(pong, 600), "run.sh did not serve"
        for program in ("latch-redlock", "latch-fixture", "latch-chaos", "latch-check-aof",
                        "latch-demo", "latch-contention"):
            assert os.access(tool(program), os.X_OK), program
        assert os.access(os.path.join(lt.build_dir(), "man", "latch-fixture.1"), os.R_OK)
    finally:
        p.send_signal(signal.SIGTERM)
        out = p.communicate(timeout=60)[0].decode(errors="replace")
    assert p.returncode == 0, out[-3000:]


def readme_install(tmp_path):
    lines = shell_lines(example("readme-install"))
    assert lines[0] == "cmake --install build --prefix ~/.local"
    prefix = tmp_path / "local"
    p = subprocess.run(["cmake", "--install", lt.build_dir(), "--prefix", str(prefix)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    bin_ = prefix / "bin"
    for program in ("latch-server", "latch-redlock", "latch-fixture", "latch-chaos",
                    "latch-check-aof", "latch-demo", "latch-contention"):
        help_text = subprocess.run([str(bin_ / program), "--help"], capture_output=True,
                                   text=True, timeout=30).stdout
        assert help_text.startswith("NAME\n    %s - " % program)
        page = (prefix / "share" / "man" / "man1" / (program + ".1")).read_text()
        assert page.startswith(".TH %s 1" % program.upper()) and ".SH SYNOPSIS" in page
    assert (prefix / "lib" / "latch" / "latch-chaos-slow-fsync.so").exists()
    assert (prefix / "etc" / "latch" / "latch.conf").exists()
    assert (prefix / "share" / "doc" / "latch" / "guide.md").exists()
    # The installed tools find each other: latch-fixture starts the installed
    # latch-server.
    env = dict(os.environ, PATH=str(bin_) + os.pathsep + os.environ["PATH"])
    env.pop("LATCH_SERVER", None)
    up = subprocess.run([str(bin_ / "latch-fixture"), "up", "--node-count", "1", "--dir",
                         str(tmp_path / "fx"), "--json"], capture_output=True, text=True,
                        env=env, timeout=60)
    assert up.returncode == 0, up.stderr
    subprocess.run([str(bin_ / "latch-fixture"), "down", "--dir", str(tmp_path / "fx")],
                   env=env, timeout=60, check=True)
    # The package lines name the file cpack writes (test_package.py builds it).
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()
    deb = "latch_%s_%s.deb" % (_project_version(), arch)
    assert lines[1] == "(cd build && cpack -G DEB)"
    assert lines[2] == "sudo apt install ./build/" + deb


def _project_version():
    with open(os.path.join(lt.source_dir(), "CMakeLists.txt")) as f:
        return re.search(r"project\(latch VERSION ([0-9.]+)", f.read()).group(1)


# ---------------------------------------------------------------- README: the lock commands

def _readme_commands(text):
    """`CMD args  # comment` lines, with the README's token placeholder."""
    out = []
    for line in text.strip().split("\n"):
        cmd = line.split("#")[0].strip().replace("8d6f…token", "8d6ftoken")
        out.append(cmd.split())
    return out


def readme_recipe(tmp_path, server_factory):
    acquire, renew, release = _readme_commands(example("readme-recipe"))
    srv = server_factory("latch")
    with srv.conn() as a, srv.conn() as b:
        assert a.cmd(*acquire) == b"OK"
        other = [w if w != "8d6ftoken" else "someone-else" for w in acquire]
        assert b.cmd(*other) is None  # "(nil) if held"
        time.sleep(0.05)
        assert a.cmd(*renew) == b"OK"
        assert a.cmd("PTTL", acquire[1]) > 29900  # renewed to the full lease
        assert b.cmd(*[w if w != "8d6ftoken" else "someone-else" for w in renew]) is None
        assert b.cmd(*[w if w != "8d6ftoken" else "someone-else" for w in release]) == 0
        assert a.cmd(*release) == 1
        assert a.cmd(*release) == 0


def readme_fence_wait(tmp_path, server_factory):
    fenced, setfence, wait, fence, lockinfo = _readme_commands(example("readme-fence-wait"))
    assert setfence[0] == "SETFENCE" and setfence[1:] == fenced[1:-1]
    srv = server_factory("latch")
    with srv.conn() as a, srv.conn() as b:
        token = a.cmd(*fenced)
        assert isinstance(token, int) and token >= 1
        assert a.cmd(*fence) == token
        # Held: the WAIT client queues until the holder releases.
        b.send(lt.encode(*[w if w != "8d6ftoken" else "next" for w in wait]))
        time.sleep(0.2)
        info = lt.pairs_to_dict(a.cmd(*lockinfo))
        assert info[b"holder"] == b"8d6ftoken" and info[b"token"] == token
        assert info[b"waiters"] == 1 and 0 < info[b"pttl"] <= 30000
        assert a.cmd("DELIFEQ", fenced[1], "8d6ftoken") == 1
        assert lt.parse_reply(b.read_n_raw(1))[0] == b"OK"
        assert a.cmd("GET", fenced[1]) == b"next"
        # SETFENCE: the same grant, its reply the token (nil while held).
        assert a.cmd(*setfence) is None
        assert b.cmd("DELIFEQ", fenced[1], "next") == 1
        again = a.cmd(*setfence)
        assert isinstance(again, int) and again > token


def readme_check_aof(tmp_path, server_factory):
    check, fix = [l.split("#")[0].split() for l in example("readme-check-aof").strip().split("\n")]
    assert check == ["latch-check-aof", "FILE"] and fix == ["latch-check-aof", "--fix", "FILE"]
    srv = server_factory("latch", "--appendonly", "yes")
    with srv.conn() as c:
        for i in range(20):
            c.cmd("SET", "k%d" % i, "v", "PX", "60000")
    srv.stop()
    log = os.path.join(srv.argv[srv.argv.index("--dir") + 1], "latch.aof")
    run = lambda *a, **kw: subprocess.run([tool("latch-check-aof")] + list(a), text=True,  # noqa
                                          capture_output=True, timeout=60, **kw)
    assert run(log).returncode == 0  # "exit 0 if valid"
    with open(log, "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$1\r\nx")  # a record cut short
    assert run(log).returncode == 1  # "1 if not"
    p = run("--fix", log, input="y\n")  # "after asking"
    assert p.returncode == 0, p.stdout + p.stderr
    assert [f for f in os.listdir(os.path.dirname(log)) if ".bak-" in f]  # "keeps a backup"
    assert run(log).returncode == 0


def readme_acl(tmp_path, server_factory):
    # The README's redis-cli talks to the default port; this one to the
    # test's server.
    srv = server_factory("latch")
    run_transcript(example("readme-acl"), str(tmp_path), tools_env(),
                   exact=("OK", "NOPERM", "flushall", "app1", "toplevel"),
                   replace=(("redis-cli ", "redis-cli -p %d " % srv.port),))


def readme_bench(tmp_path):
    (line,) = shell_lines(example("readme-bench"))
    argv = line.split()
    assert argv[0] == "tools/bench-vs-redis"
    help_text = subprocess.run([os.path.join(lt.source_dir(), "tools", "bench-vs-redis"), "--help"],
                               capture_output=True, text=True, timeout=60).stdout
    for word in argv[1:]:
        if word.startswith("--"):
            assert word in help_text, word
    with open(os.path.join(lt.source_dir(), "tools", "bench-vs-redis")) as f:
        source = f.read()
    assert re.search(r'"--rounds", type=int, default=3\b', source)  # "the default is 3 rounds"
    assert "--quick" in help_text


# ---------------------------------------------------------------- README: the RedLock tools

def readme_redlock(tmp_path):
    d = reader_dir(tmp_path)
    nodes = str(tmp_path / "nodes")
    run_transcript(example("readme-redlock"), str(d), tools_env(),
                   exact=("3 of 3 yes (quorum 2)", "not acquired within 2.00 s",
                          "held elsewhere on 3 of 3 nodes", "sh exited; lock released", "=75",
                          "generating the report"),
                   replace=(("/tmp/redlock-nodes", nodes),))
    assert not (d / "backup.sh").exists()  # never run: the lock was not acquired


def readme_tls(tmp_path):
    """The TLS transcript as printed: a certificate, a TLS-only node,
    redis-cli --tls and latch-redlock --tls against it, plaintext refused."""
    d = tmp_path / "latch-tls"
    port = str(lt.free_port())
    try:
        run_transcript(example("readme-tls"), str(reader_dir(tmp_path)), tools_env(),
                       exact=("held by tok on 1 of 1 nodes (quorum 1)", "=OK", "=PONG"),
                       replace=(("/tmp/latch-tls", str(d)), ("6380", port)), timeout=60)
    finally:
        pidfile = d / "latch.pid"
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text().strip()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass


def readme_chaos(tmp_path):
    """The two runs of the README, each as printed but ten times shorter or
    less (the figures are one run's): the report's shape, and the fault kinds
    the full-length schedule draws."""
    steps = transcript(example("readme-chaos"))
    assert len(steps) == 2
    for k, (cmd, expected) in enumerate(steps):
        argv = cmd.split()
        assert argv[0] == "latch-chaos"
        full = [tool("latch-chaos")] + argv[1:]
        # The printed command line is accepted as is; its schedule has the
        # kinds of fault the report counts.
        plan = subprocess.run(full + ["--print-schedule"], capture_output=True, text=True,
                              timeout=60, cwd=str(tmp_path))
        assert plan.returncode == 0, plan.stderr
        faults_line = [l for l in expected if l.startswith("faults injected:")]
        for kind in re.findall(r"\d+ ([a-z][^,()]*?)(?: \(preloaded\))?(?:,|\)$)",
                               faults_line[0] if faults_line else ""):
            assert kind.split(" (")[0] in plan.stdout, kind
        short = full[:]
        short[short.index("--duration") + 1] = "12s"
        p = subprocess.run(short, capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
        out = p.stdout.splitlines()
        assert out[-1].startswith("violations: "), p.stdout[-2000:]
        violations = int(out[-1].split()[1])
        assert p.returncode == (0 if violations == 0 else 1) or p.returncode == 1
        assert any(l.startswith("faults injected: ") for l in out)
        if k == 0:
            assert re.search(r"^acknowledged writes lost: 0 \(allowed: \d+\)$", p.stdout, re.M)
            assert violations == 0 and p.returncode == 0, p.stdout[-3000:]
            assert (tmp_path / "run.svg").exists()


# ---------------------------------------------------------------- README: the fixture

@pytest.fixture(scope="module")
def fixture_flow(tmp_path_factory, node_env):  # noqa: F811
    """The README's fixture section from top to bottom in one reader's
    directory: up, the Python example, the JavaScript example, check, down,
    then run."""
    tmp = tmp_path_factory.mktemp("fixture-flow")
    d = reader_dir(tmp)
    os.symlink(os.path.join(lt.build_dir(), "lock-libraries", "node_modules"),
               str(d / "node_modules"))
    (d / "example.py").write_text(example("readme-fixture-python"))
    (d / "test.mjs").write_text(example("readme-fixture-js"))
    (up_line,) = shell_lines(example("readme-fixture-up"))
    check_lines = shell_lines(example("readme-fixture-check"))
    results = {}
    env = tools_env()
    script = "\n".join([
        up_line,
        "echo \"@@ENV $LATCH_NODES $LATCH_FIXTURE_DIR\"",
        "\"%s\" example.py; echo \"@@PY $?\"" % sys.executable,
        "start=$(date +%s%N); timeout 60 node test.mjs > js.out 2> js.err; "
        "echo \"@@JS $? $(( ($(date +%s%N) - start) / 1000000 ))\"",
        "redis-cli -u \"redis://$(echo $LATCH_NODES | cut -d, -f2)\" FAULT LIST > faults.out",
        check_lines[0] + " > check.out; echo \"@@CHECK $?\"",
        check_lines[1] + "; echo \"@@DOWN $? $([ -e latch-fixture ] && echo left || echo gone)\"",
        check_lines[2] + " > run.out 2> run.err; echo \"@@RUN $?\"",
    ])
    p = subprocess.run(["bash", "-c", script], cwd=str(d), env=env, capture_output=True,
                       text=True, timeout=300)
    results["stdout"], results["stderr"], results["dir"] = p.stdout, p.stderr, d
    for line in p.stdout.splitlines():
        if line.startswith("@@"):
            words = line[2:].split()
            results[words[0]] = words[1:]
    return results


def readme_fixture_up(tmp_path, fixture_flow):
    r = fixture_flow
    assert "ENV" in r, r["stderr"]
    nodes, fixture_dir = r["ENV"]
    assert len(nodes.split(",")) == 3 and all(re.match(r"127\.0\.0\.1:\d+$", n)
                                              for n in nodes.split(","))
    # The default directory is ./latch-fixture, in the reader's directory.
    assert fixture_dir == str(r["dir"] / "latch-fixture")


def readme_fixture_python(tmp_path, fixture_flow):
    assert fixture_flow["PY"] == ["0"], fixture_flow["stderr"]


def readme_fixture_js(tmp_path, fixture_flow):
    d = fixture_flow["dir"]
    code, ms = fixture_flow["JS"]
    # It ends by itself (124 would be timeout's), and promptly.
    assert code == "0", (d / "js.err").read_text()
    assert int(ms) < 20000
    out = (d / "js.out").read_text().rstrip("\n").split("\n")
    match_lines(block("output", "readme-fixture-js").text.rstrip("\n").split("\n"), out,
                exact=("held; votes against:",), what="node test.mjs")
    # The fault fired: node 1's FAULT LIST is empty (COUNT 1 was used up).
    assert (d / "faults.out").read_text().strip() == ""


def readme_fixture_check(tmp_path, fixture_flow):
    d = fixture_flow["dir"]
    assert fixture_flow["CHECK"] == ["0"], (d / "check.out").read_text()
    report = (d / "check.out").read_text()
    assert re.search(r"holds by RedLock's rules: 2,", report), report
    assert report.rstrip("\n").split("\n")[-1] == "violations: 0"
    assert (d / "check.html").exists()
    assert fixture_flow["DOWN"] == ["0", "gone"]  # down removed what up created
    assert fixture_flow["RUN"] == ["0"], (d / "run.err").read_text()
    run_out = (d / "run.out").read_text()
    assert "violations: 0" in run_out and "held; votes against:" in run_out


# ---------------------------------------------------------------- the guide: the demo

def guide_demo(tmp_path):
    d = reader_dir(tmp_path)
    lines = shell_lines(example("guide-demo"))
    assert [l.split()[0] for l in lines] == ["./build/tools/latch-demo"] * 3
    listed = subprocess.run(lines[0].split(), cwd=str(d), capture_output=True, text=True,
                            timeout=60)
    assert listed.returncode == 0
    assert [l.split()[0] for l in listed.stdout.splitlines()] == DEMO_IDS
    t0 = time.monotonic()
    everything = subprocess.run(lines[1].split(), cwd=str(d), capture_output=True, text=True,
                                timeout=300)
    assert everything.returncode == 0, everything.stdout[-3000:]
    assert everything.stdout.count("VERDICT ") == len(DEMO_IDS)
    assert time.monotonic() - t0 < 60  # "about 6 seconds" on an idle machine
    one = subprocess.run(lines[2].split(), cwd=str(d), capture_output=True, text=True, timeout=60)
    assert one.returncode == 0 and "VERDICT v3: UNSAFE" in one.stdout


def make_demo_runner(scenario):
    def run(tmp_path):
        text = example("guide-demo-" + scenario)
        assert text.startswith("== %s:" % scenario)
        p = subprocess.run([tool("latch-demo"), scenario], capture_output=True, text=True,
                           timeout=120)
        assert p.returncode == 0, p.stdout
        verdict = [l for l in text.split("\n") if l.startswith("VERDICT")][0]
        match_lines(text.rstrip("\n").split("\n"), p.stdout.rstrip("\n").split("\n"),
                    exact=(verdict.split(":")[0] + ":" + verdict.split(":")[1] + ":",),
                    what="latch-demo " + scenario)
    return run


def guide_monitor(tmp_path, server_factory):
    (cmd, expected), = transcript(example("guide-monitor"))
    srv = server_factory("latch")
    argv = cmd.replace("6379", str(srv.port)).split()
    mon = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(0.3)
        replies = {}

        def race(token):
            with srv.conn() as c:
                replies[token] = c.cmd("set", "lock:a", token, "nx", "px", "5000")
        threads = [threading.Thread(target=race, args=(t,)) for t in ("tokB", "tokA")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        time.sleep(0.3)
    finally:
        mon.send_signal(signal.SIGINT)
        out = mon.communicate(timeout=10)[0]
    lines = out.rstrip("\n").split("\n")
    # One of them came first: it got OK, the other nil; the feed shows both.
    first = re.search(r'"set" "lock:a" "(tok[AB])"', lines[1]).group(1)
    assert replies[first] == b"OK" and list(replies.values()).count(None) == 1
    generic = [re.sub(r'"tok[AB]"', '"tokX"', l) for l in expected]
    match_lines(generic, [re.sub(r'"tok[AB]"', '"tokX"', l) for l in lines],
                exact=('"set" "lock:a"', '"nx" "px" "5000"', "=OK"), what=cmd)


# ---------------------------------------------------------------- the guide: redis-cli sessions

# Each redis-cli session continues the ones before it (the same lock:orders).
CLI_CHAIN = ["guide-cli-v2", "guide-cli-v4", "guide-cli-max-lock-ttl", "guide-cli-fence"]


def make_cli_runner(name):
    def run(tmp_path, server_factory):
        srv = server_factory("latch")
        for earlier in CLI_CHAIN[:CLI_CHAIN.index(name) + 1]:
            for argv, expected in redis_cli_transcript(example(earlier)):
                p = subprocess.run(["redis-cli", "--no-raw", "-p", str(srv.port)] + argv,
                                   capture_output=True, text=True, timeout=30)
                actual = p.stdout.rstrip("\n").split("\n")
                if earlier == name:
                    match_lines(expected, actual,
                                exact=("=OK", "=(nil)", "=(integer) 0", "=(integer) 1",
                                       '"holder"', '"token"', '"pttl"', '"waiters"',
                                       '"7f3a"', "exceeds max-lock-ttl"),
                                what="127.0.0.1:6379> " + " ".join(argv))
                    if argv[0] in ("PTTL",) or (len(actual) > 5 and '"pttl"' in actual[4]):
                        pttl = int(re.search(r"\d+", actual[-1 if argv[0] == "PTTL" else 5])
                                   .group(0))
                        assert 0 < pttl <= 30000
    return run


# ---------------------------------------------------------------- the guide: the RedLock tools

def guide_chaos_fence(tmp_path):
    (cmd, expected), = transcript(example("guide-chaos-fence"))
    p = subprocess.run([tool("latch-chaos")] + cmd.split()[1:], capture_output=True, text=True,
                       timeout=300, cwd=str(tmp_path))
    out = p.stdout.rstrip("\n").split("\n")
    # Which kinds of fault found their moment differs from run to run.
    expected = [re.sub(r"^(faults injected: \d+) \(.*\)$", r"\1 (...)", l) for l in expected]
    match_lines(expected, out, exact=("token order violations: 0",), what=cmd)
    m = re.search(r"^fenced holds: (\d+) of (\d+)$", p.stdout, re.M)
    assert m and m.group(1) == m.group(2) and int(m.group(1)) > 0, p.stdout[-2000:]


def guide_redlock_fence(tmp_path):
    d = reader_dir(tmp_path)
    outs = run_transcript(example("guide-redlock-fence"), str(d), tools_env(),
                          exact=("writing with token",),
                          replace=(("/tmp/fenced", str(tmp_path / "fenced")),))
    first = int(outs[1].split()[-1])
    second = int(outs[2].split()[-1])
    assert second > first  # a later holder, a larger token


def guide_try_it(tmp_path, server_factory):
    d = reader_dir(tmp_path)
    srv = server_factory("latch")
    lines = [l.replace("6379", str(srv.port)) for l in shell_lines(example("guide-try-it"))]
    assert len(lines) == 8
    run = lambda line, **kw: subprocess.run(line, shell=True, cwd=str(d), capture_output=True,  # noqa
                                            text=True, **kw)
    p = run(lines[0], timeout=300)
    assert p.returncode == 0, p.stdout[-3000:]
    mon = subprocess.Popen(lines[1], shell=True, cwd=str(d), stdout=subprocess.PIPE, text=True,
                           start_new_session=True)
    time.sleep(0.3)
    p = run(lines[2], timeout=60)
    assert p.returncode == 0, p.stderr
    os.killpg(mon.pid, signal.SIGINT)
    fed = mon.communicate(timeout=10)[0]
    assert fed.startswith("OK\n") and '"SET" "job"' in fed  # latch-redlock's SET, watched
    p = run(lines[3], timeout=300)
    assert p.returncode in (0, 1) and p.stdout.splitlines()[-1].startswith("violations: ")
    assert (d / "out.svg").read_text().startswith("<svg")
    p = run(lines[4], timeout=120)
    assert p.returncode == 0, p.stdout[-3000:]
    assert "VERDICT fencing: SAFE" in p.stdout and \
        "VERDICT waiting: SAFE" in p.stdout
    p = run(lines[5], timeout=120)
    assert p.returncode == 0, p.stdout[-3000:]
    for scene in ("reentrant", "fair", "rwlock", "semaphore", "pubsub"):
        assert "VERDICT %s: SAFE" % scene in p.stdout, p.stdout[-3000:]
    p = run(lines[6], timeout=30)
    assert re.match(r"^\d+$", p.stdout.strip()), p.stdout  # a fencing token
    # WAIT 0 waits for the key until another client deletes it.
    waiter = subprocess.Popen(lines[7], shell=True, cwd=str(d), stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    assert waiter.poll() is None
    with srv.conn() as c:
        assert c.cmd("DEL", "lock:x") == 1
    assert waiter.communicate(timeout=10)[0].strip() == "OK"


def guide_drift_clock(tmp_path):
    d = reader_dir(tmp_path)
    outs = run_transcript(example("guide-drift-clock") + "$ latch-fixture down\n", str(d),
                          tools_env(), exact=("node 0: OK", "=OK", "=0"),
                          replace=(("/tmp/guide", str(tmp_path / "guide")),))
    pttl = int(outs[4].split("\n")[1])
    assert 0 < pttl <= 2000 - 4 * 300 + 100  # a clock four times fast


def guide_drift(tmp_path):
    """Both blocks of chapter 9, in one session (the second goes on from the
    first's nodes)."""
    d = reader_dir(tmp_path)
    text = example("guide-drift-clock") + example("guide-drift-check")
    outs = run_transcript(text, str(d), tools_env(),
                          exact=("node 0: OK", "node 2:", "=OK", "=0", "clients: 2",
                                 "(a lock needs 2)", "holds by RedLock's rules: 2",
                                 "client claims: 2", "violations: 1",
                                 "violation 1:", "nodes 0,1 (", "nodes 0,2 (", "page: check.html",
                                 '"ok":true'),
                          replace=(("/tmp/guide", str(tmp_path / "guide")),))
    pttl = int(outs[4].split("\n")[1])
    assert 0 < pttl <= 2000 - 4 * 300 + 100  # a clock four times fast
    assert (d / "check.html").exists()


RUNNERS = {
    "readme-tls": readme_tls,
    "readme-two-commands": readme_two_commands,
    "readme-install": readme_install,
    "readme-recipe": readme_recipe,
    "readme-fence-wait": readme_fence_wait,
    "readme-check-aof": readme_check_aof,
    "readme-bench": readme_bench,
    "readme-acl": readme_acl,
    "readme-redlock": readme_redlock,
    "readme-chaos": readme_chaos,
    "readme-fixture-up": readme_fixture_up,
    "readme-fixture-python": readme_fixture_python,
    "readme-fixture-js": readme_fixture_js,
    "readme-fixture-check": readme_fixture_check,
    "guide-demo": guide_demo,
    "guide-monitor": guide_monitor,
    "guide-chaos-fence": guide_chaos_fence,
    "guide-redlock-fence": guide_redlock_fence,
    "guide-try-it": guide_try_it,
    "guide-drift-clock": guide_drift_clock,
    "guide-drift-check": guide_drift,
}
for _id in DEMO_IDS:
    RUNNERS["guide-demo-" + _id] = make_demo_runner(_id)
for _id in CLI_CHAIN:
    RUNNERS[_id] = make_cli_runner(_id)


@pytest.mark.parametrize("name", sorted(RUNNERS))
def test_example(name, request, tmp_path):
    runner = RUNNERS[name]
    names = runner.__code__.co_varnames[:runner.__code__.co_argcount]
    kwargs = {"tmp_path": tmp_path}
    for fixture in names:
        if fixture != "tmp_path":
            kwargs[fixture] = request.getfixturevalue(fixture)
    runner(**kwargs)
