"""Every program latch installs answers the command line the same way
(tools/cli/options.h): --help is the manual on stdout (NAME, SYNOPSIS, …,
EXIT STATUS) with status 0, --version is "<program> (latch) <version>", a
usage error is "<program>: <what>", the synopsis and a pointer to --help on
stderr with status 64 in every tool, durations need a unit (a bare number is
refused with a hint), the same option names mean the same things, and an
unknown subcommand is named as one."""

import os
import re
import subprocess

import pytest

import latchtest as lt

TOOLS = ["latch-check-aof", "latch-redlock", "latch-chaos", "latch-fixture", "latch-demo",
         "latch-contention"]
PROGRAMS = ["latch-server"] + TOOLS
USAGE = 64


def path(program):
    if program == "latch-server":
        return lt.latch_binary()
    return os.path.join(lt.build_dir(), "tools", program)


def run(program, *args, cwd=None, env=None):
    return subprocess.run([path(program)] + [str(a) for a in args], capture_output=True,
                          text=True, timeout=60, cwd=cwd, env=env)


def project_version():
    with open(os.path.join(lt.source_dir(), "CMakeLists.txt")) as f:
        return re.search(r"project\(latch VERSION ([0-9.]+)", f.read()).group(1)


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_the_manual_on_stdout(program, flag):
    p = run(program, flag)
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout.startswith("NAME\n    %s - " % program)
    sections = re.findall(r"^([A-Z][A-Z ]+)$", p.stdout, re.M)
    assert sections[:2] == ["NAME", "SYNOPSIS"]
    for required in ("DESCRIPTION", "OPTIONS", "EXIT STATUS"):
        assert required in sections, (program, sections)
    if program != "latch-server":
        # The usage status is documented where the manual lists the others.
        exit_status = p.stdout.split("EXIT STATUS\n")[1]
        assert re.search(r"^\s+64\s", exit_status, re.M) or "64 usage" in exit_status, program


@pytest.mark.parametrize("program", PROGRAMS)
def test_version(program):
    p = run(program, "--version")
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout.splitlines()[0] == "%s (latch) %s" % (program, project_version())


@pytest.mark.parametrize("program", TOOLS)
def test_unknown_option_is_a_usage_error(program):
    p = run(program, "--bogus")
    assert p.returncode == USAGE, (program, p.stderr)
    lines = p.stderr.splitlines()
    assert lines[0] == "%s: unknown option --bogus" % program or \
        lines[0].startswith("%s: unknown option --bogus " % program), lines[0]
    assert lines[1].startswith("Usage: %s" % program)
    assert lines[-1] == "Try '%s --help' for the manual." % program
    assert p.stdout == ""


@pytest.mark.parametrize("program,args", [
    ("latch-chaos", ["--seed"]),
    ("latch-redlock", ["--key"]),
    ("latch-fixture", ["up", "--dir"]),
    ("latch-contention", ["--port"]),
])
def test_missing_value_is_a_usage_error(program, args):
    p = run(program, *args)
    assert p.returncode == USAGE
    assert "option %s needs a value" % args[-1] in p.stderr


@pytest.mark.parametrize("program,args,option", [
    ("latch-redlock", ["--nodes", "127.0.0.1:1", "--key", "k", "--ttl", "5000", "--", "true"],
     "--ttl"),
    ("latch-redlock", ["--nodes", "127.0.0.1:1", "--key", "k", "--ttl", "5s", "--wait", "2",
                       "--", "true"], "--wait"),
    ("latch-chaos", ["--duration", "5000"], "--duration"),
    ("latch-chaos", ["--ttl", "1"], "--ttl"),
    ("latch-fixture", ["run", "--node-count", "3", "--seed", "1", "--duration", "8000",
                       "--print-schedule"], "--duration"),
    ("latch-contention", ["--port", "1", "--mode", "wait", "--duration", "3"], "--duration"),
])
def test_bare_numbers_are_refused_with_a_hint(program, args, option):
    p = run(program, *args)
    assert p.returncode == USAGE, p.stderr
    bare = args[args.index(option) + 1]
    assert "%s: '%s' has no unit: write %sms or %ss" % (option, bare, bare, bare) in p.stderr


def test_durations_take_their_units_everywhere(tmp_path):
    for text in ("8s", "8000ms", "0.5m"):
        p = run("latch-chaos", "--duration", text, "--print-schedule")
        assert p.returncode == 0, p.stderr
        p = run("latch-fixture", "run", "--node-count", "3", "--seed", "1", "--duration", text,
                "--print-schedule", cwd=str(tmp_path))
        assert p.returncode == 0, p.stderr
        assert "duration 8.00 s" in p.stdout.splitlines()[0] or \
            "duration 30.00 s" in p.stdout.splitlines()[0]


def test_print_schedule_is_a_dry_run(tmp_path):
    """latch-fixture run --print-schedule prints the schedule and starts
    nothing, even with a command after --."""
    p = run("latch-fixture", "run", "--node-count", "3", "--seed", "7", "--duration", "5s",
            "--print-schedule", "--", "sh", "-c", "touch ran", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("# latch-fixture schedule: 3 nodes, seed 7, duration 5.00 s\n")
    assert not (tmp_path / "ran").exists()
    assert "nodes up" not in p.stderr
    assert os.listdir(str(tmp_path)) == []


def test_the_same_names_for_the_same_things():
    # --nodes is a HOST:PORT list (as $LATCH_NODES) wherever it exists...
    p = run("latch-redlock", "--nodes", "3", "--key", "k", "--ttl", "1s", "--", "true")
    assert p.returncode == USAGE and "HOST:PORT" in p.stderr
    # ... and the tools that start nodes count them with --node-count.
    for program, args in (("latch-chaos", ["--nodes", "3"]),
                          ("latch-fixture", ["up", "--nodes", "3"])):
        p = run(program, *args)
        assert p.returncode == USAGE
        assert "--nodes: a HOST:PORT list in every latch tool" in p.stderr
        assert "--node-count N" in p.stderr
    # The page is --html in both tools that write it; the dry run is
    # --print-schedule in both.
    for program in ("latch-chaos", "latch-fixture"):
        help_text = run(program, "--help").stdout
        assert "--html FILE" in help_text and "--print-schedule" in help_text
        assert "--page" not in help_text and "--schedule-only" not in help_text


def test_latch_redlock_reads_latch_nodes_from_the_environment():
    env = dict(os.environ, LATCH_NODES="127.0.0.1:1")
    p = run("latch-redlock", "status", "--key", "k", env=env)
    # Not a usage error: it went on to ask the (unreachable) node.
    assert p.returncode == 69, p.stderr


@pytest.mark.parametrize("args,message", [
    (["bogus"], "latch-fixture: unknown command 'bogus' (commands: up, down, kill, restart, "
                "stop, pause, resume, fault, status, run, check)"),
    ([], "latch-fixture: no command given"),
    (["--dir", "x"], "latch-fixture: unknown option --dir (a command comes first"),
])
def test_unknown_subcommands_are_named(tmp_path, args, message):
    p = run("latch-fixture", *args, cwd=str(tmp_path))
    assert p.returncode == USAGE
    assert p.stderr.startswith(message), p.stderr
    # Nothing was looked for: no "no fixture" message, no directory made.
    assert "no fixture" not in p.stderr and os.listdir(str(tmp_path)) == []


def test_unknown_scenario_is_a_usage_error():
    p = run("latch-demo", "v9")
    assert p.returncode == USAGE
    assert "latch-demo: unknown scenario 'v9' (see --list)" in p.stderr


def test_latch_check_aof_usage():
    assert run("latch-check-aof").returncode == USAGE
    assert run("latch-check-aof", "a", "b").returncode == USAGE
    assert run("latch-check-aof", "--yes", "a").returncode == USAGE
