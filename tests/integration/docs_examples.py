"""Reading the examples out of README.md and docs/guide.md, and comparing what
they print with what the programs print (test_docs_examples.py runs them).

Every fenced block of the two documents is preceded by a marker comment:

    <!-- example: ID -->      a test runs it (test_docs_examples.RUNNERS[ID])
    <!-- output: ID -->       what example ID prints; its test compares it
    <!-- not run: reason -->  not runnable in a test, and why

A transcript ("$ command" lines, each followed by what it prints) is run in
one bash session, so `eval "$(latch-fixture up …)"` carries over to the
next line, and its output is compared line by line. Numbers, timings, ports
and tokens differ from run to run: a number in the document matches any
number, a run of 12+ hex digits any hex, "(...)" anything, and a line "..."
any lines; what an example claims is kept exact by naming it (`exact`).
"""

import os
import re
import subprocess
from collections import namedtuple

import latchtest as lt

DOCS = ["README.md", os.path.join("docs", "guide.md")]

Block = namedtuple("Block", "doc line kind value lang text")

_FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
_MARK = re.compile(r"^\s*<!-- (example|output|not run): ?(.*?) -->\s*$")


def doc_blocks(rel):
    """Every fenced block of the document `rel` (relative to the source
    tree), with the marker on the line before it."""
    with open(os.path.join(lt.source_dir(), rel), encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        body = [l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1:j]]
        mark = _MARK.match(lines[i - 1]) if i > 0 else None
        out.append(Block(rel, i + 1, mark.group(1) if mark else None,
                         mark.group(2) if mark else None, lang, "\n".join(body) + "\n"))
        i = j + 1
    return out


def all_blocks():
    return [b for doc in DOCS for b in doc_blocks(doc)]


def block(kind, value):
    found = [b for b in all_blocks() if b.kind == kind and b.value == value]
    assert len(found) == 1, "%s %s: %d blocks" % (kind, value, len(found))
    return found[0]


def example(value):
    return block("example", value).text


# ---------------------------------------------------------------- transcripts

def transcript(text):
    """[(command, [expected output lines])] of a "$ command" transcript."""
    steps = []
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, "output before the first command: %r" % line
            steps[-1][1].append(line)
    return steps


_TOKEN = re.compile(r"(\(\.\.\.\))|([0-9a-f]{8,}…|[0-9a-f]{12,})|(\d+(?:,\d{3})*(?:\.\d+)?)|(\s+)|(.)",
                    re.S)


def line_pattern(doc_line, exact=()):
    """A regex for an output line the document shows as `doc_line`."""
    if "=" + doc_line in exact:
        return re.escape(doc_line)
    # The exact phrases first: kept literal wherever they occur.
    spans = []
    for phrase in exact:
        if phrase.startswith("="):
            continue
        start = 0
        while True:
            k = doc_line.find(phrase, start)
            if k < 0:
                break
            spans.append((k, k + len(phrase)))
            start = k + len(phrase)
    spans.sort()
    out, pos = "", 0
    for a, b in spans + [(len(doc_line), len(doc_line))]:
        if a < pos:
            continue
        for m in _TOKEN.finditer(doc_line[pos:a]):
            if m.group(1):
                out += ".*"
            elif m.group(2):
                out += "[0-9a-f]+" + ("…" if m.group(2).endswith("…") else "")
            elif m.group(3):
                out += r"\d+(?:,\d{3})*(?:\.\d+)?"
            elif m.group(4):
                out += r"\s+"
            else:
                out += re.escape(m.group(5))
        out += re.escape(doc_line[a:b])
        pos = b
    return out


def match_lines(expected, actual, exact=(), what=""):
    """Checks that `actual` (lines) is what the document shows as
    `expected`: each expected line matches the next actual line, "..."
    skips any number of lines, and nothing is left over at the end (unless
    the document ends with "...")."""
    i = 0
    skipping = False
    shown = "\n".join(actual)
    for e in expected:
        if e.strip() in ("...", "…"):
            skipping = True
            continue
        pat = re.compile(line_pattern(e, exact) + r"\s*$")
        if skipping:
            while i < len(actual) and not pat.match(actual[i]):
                i += 1
            skipping = False
        assert i < len(actual) and pat.match(actual[i]), (
            "%s: the document shows\n    %s\nbut the program printed (line %d)\n%s" %
            (what, e, i + 1, shown))
        i += 1
    if not skipping:
        rest = [l for l in actual[i:] if l.strip()]
        assert not rest, "%s: printed more than the document shows:\n%s" % (what, "\n".join(rest))


def run_transcript(text, cwd, env, exact=(), replace=(), timeout=180):
    """Runs every command of the transcript in one bash session (in `cwd`,
    with `env`), compares each one's output with the document's, and
    returns the outputs."""
    steps = transcript(text)
    script = ["set -o pipefail"]
    for k, (cmd, _) in enumerate(steps):
        for a, b in replace:
            cmd = cmd.replace(a, b)
        script.append("printf '\\n@@STEP %d@@\\n'" % k)
        script.append("{ %s ; } 2>&1" % cmd)
    p = subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    parts = re.split(r"\n@@STEP (\d+)@@\n", "\n" + p.stdout)
    outputs = {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    assert len(outputs) == len(steps), "the transcript stopped early:\n" + p.stdout
    for k, (cmd, expected) in enumerate(steps):
        actual = outputs[k].rstrip("\n").split("\n") if outputs[k].strip() else []
        match_lines(expected, actual, exact, what="$ " + cmd)
    return [outputs[k] for k in range(len(steps))]


def tools_env(extra=None):
    """The environment a reader has after the README's PATH line."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([lt.build_dir(), os.path.join(lt.build_dir(), "tools"),
                                   env.get("PATH", "")])
    for k in ("LATCH_NODES", "LATCH_FIXTURE_DIR", "LATCH_CLIENT_HISTORY"):
        env.pop(k, None)
    env.update(extra or {})
    return env


def reader_dir(tmp_path):
    """A directory of the reader's, where `build/` and `tests/` are the
    checkout's (the documents' relative paths), and nothing else."""
    d = tmp_path / "reader"
    d.mkdir(exist_ok=True)
    for name, target in (("build", lt.build_dir()),
                         ("tests", os.path.join(lt.source_dir(), "tests"))):
        if not (d / name).exists():
            os.symlink(target, str(d / name))
    return d


def shell_lines(text):
    """The commands of a ```sh block: its lines without comments."""
    out = []
    pending = ""
    for line in text.split("\n"):
        line = re.sub(r"\s+#.*$", "", line) if not line.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        out.append((pending + line).strip())
        pending = ""
    return out


def redis_cli_transcript(text):
    """[(argv, [expected lines])] of a "127.0.0.1:6379> CMD" transcript."""
    steps = []
    for line in text.rstrip("\n").split("\n"):
        m = re.match(r"^127\.0\.0\.1:6379> (.*)$", line)
        if m:
            steps.append((m.group(1).split(), []))
        else:
            steps[-1][1].append(line)
    return steps
