"""The documents agree with the code and with each other: every reference to
a chapter of the guide names one that exists (and links resolve to its
heading), the figures the prose quotes are the ones its tables and
docs/bench/ hold, and every error text the documents quote is one the server
can send. The examples themselves run in test_docs_examples.py."""

import glob
import os
import re

import pytest

import latchtest as lt

DOCS = ["README.md", "docs/guide.md", "docs/testbench.md", "docs/architecture.md",
        "tools/redlock/README.md"]


def read(rel):
    with open(os.path.join(lt.source_dir(), rel), encoding="utf-8") as f:
        return f.read()


def guide_chapters():
    """{number: (title, GitHub anchor)} of the guide's "## N. Title" headings."""
    out = {}
    for m in re.finditer(r"^## (\d+)\. (.+)$", read("docs/guide.md"), re.M):
        title = m.group(2)
        anchor = re.sub(r"[^\w\- ]", "", ("%s. %s" % (m.group(1), title)).lower()).replace(" ", "-")
        out[int(m.group(1))] = (title, anchor)
    return out


def headings_anchors(rel):
    anchors = set()
    for m in re.finditer(r"^#+ (.+)$", read(rel), re.M):
        anchors.add(re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("doc", DOCS)
def test_links_to_the_guide_resolve(doc):
    anchors = headings_anchors("docs/guide.md")
    for m in re.finditer(r"guide\.md#([\w\-]+)", read(doc)):
        assert m.group(1) in anchors, "%s: docs/guide.md#%s is no heading" % (doc, m.group(1))


@pytest.mark.parametrize("doc", DOCS)
def test_chapter_numbers_exist_and_match_their_links(doc):
    chapters = guide_chapters()
    text = read(doc)
    for m in re.finditer(r"(?:§|[Cc]hapters? )(\d+)(?: and (\d+))?", text):
        for n in filter(None, m.groups()):
            assert int(n) in chapters, "%s: chapter %s does not exist" % (doc, n)
    # A link that names a chapter's number goes to that chapter.
    for m in re.finditer(r"\[(?:[^\]]*?)(\d+)\]\((?:docs/)?guide\.md#(\d+)-[\w\-]+\)", text):
        assert m.group(1) == m.group(2), "%s: link text %s, target chapter %s" % (
            doc, m.group(1), m.group(2))
    # What the README says a chapter is about, it is about.
    if doc == "README.md":
        assert re.search(r"chapter 10\]\(docs/guide\.md#10-clock-drift", text)
        assert "clock drift" in chapters[10][0].lower()
        assert "fencing" in chapters[6][0].lower() and "waiting" in chapters[7][0].lower()
        assert "hashes" in chapters[8][0].lower()


def test_no_issue_numbers_in_user_documents():
    """Issue numbers mean nothing to a reader of the README or the guide."""
    for doc in ("README.md", "docs/guide.md", "docs/testbench.md"):
        assert not re.search(r"\bissue \d+", read(doc)), doc


# ---------------------------------------------------------------- figures

def locks_md_ratios():
    """docs/bench/locks.md's contention table: {(hold, variant): ratio}."""
    out = {}
    for m in re.finditer(r"^\| hold (\d) ms \| (redis|latch): SET NX PX, sleep (\d+) ms, retry \|"
                         r".*\| ([\d.]+)x \|$", read("docs/bench/locks.md"), re.M):
        out[(int(m.group(1)), m.group(2), int(m.group(3)))] = float(m.group(4))
    return out


def test_contention_figures_in_the_prose_are_the_benchmarks():
    r = locks_md_ratios()
    expected = {
        "none_100": r[(0, "redis", 100)], "none_10": r[(0, "redis", 10)],
        "one_100": r[(1, "redis", 100)], "one_10": r[(1, "redis", 10)],
    }
    guide = read("docs/guide.md")
    m = re.search(r"\((\d+) times the handoffs of the libraries' usual 100 ms polling when the "
                  r"critical section takes no time, ([\d.]+) times when it takes 1 ms, .*?; "
                  r"against an eager 10 ms poll, ([\d.]+) and ([\d.]+) times\)", guide, re.S)
    assert m, "the guide's chapter 7 no longer states the gains"
    assert int(m.group(1)) == round(expected["none_100"])
    assert float(m.group(2)) == expected["one_100"]
    assert float(m.group(3)) == expected["none_10"]
    assert float(m.group(4)) == expected["one_10"]
    readme = read("README.md")
    m = re.search(r": (\d+)×\. Against an eager 10 ms poll it is ([\d.]+)×; with a\s+1 ms "
                  r"critical section, where the work is most of each turn, ([\d.]+)× and "
                  r"([\d.]+)×", readme)
    assert m, "the README no longer states the gains"
    assert int(m.group(1)) == round(expected["none_100"])
    assert float(m.group(2)) == expected["none_10"]
    assert float(m.group(3)) == expected["one_100"]
    assert float(m.group(4)) == expected["one_10"]


def test_the_guides_contention_table_is_the_benchmarks():
    bench = {}
    for m in re.finditer(r"^\| hold (\d) ms \| (latch: SET NX PX WAIT|redis: SET NX PX, sleep "
                         r"(\d+) ms, retry) \| (\d+) \|", read("docs/bench/locks.md"), re.M):
        bench[(int(m.group(1)), m.group(3) or "wait")] = int(m.group(4))
    rows = re.findall(r"^\| (none|1 ms) \| (latch, `SET NX PX WAIT`|redis-server, poll every "
                      r"~(\d+) ms) \| ([\d,]+) \|", read("docs/guide.md"), re.M)
    assert len(rows) == 6
    for hold, _, poll, handoffs in rows:
        key = (0 if hold == "none" else 1, poll or "wait")
        assert int(handoffs.replace(",", "")) == bench[key], (hold, poll)


def test_the_readmes_benchmark_table_is_the_benchmarks():
    bench_rows = set(l for l in read("docs/bench/bench.md").splitlines() if l.startswith("| "))
    readme = read("README.md")
    table = readme[readme.index("| scenario | latch | redis |"):].split("\n\n")[0]
    rows = [l for l in table.splitlines() if l.startswith("| ")][2:]
    assert rows
    for row in rows:
        if not row.startswith("| ---"):
            assert row in bench_rows, row


# ---------------------------------------------------------------- quoted errors

def server_literals():
    """Every string literal of server/ (adjacent literals joined), one per
    line: the texts the server can send are made of these."""
    literals = []
    for path in glob.glob(os.path.join(lt.source_dir(), "server", "**", "*.*"), recursive=True):
        if not path.endswith((".cc", ".h")):
            continue
        with open(path, encoding="utf-8") as f:
            text = re.sub(r'"\s*\n\s*"', "", f.read())
        for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', text):
            literals.append(m.group(1).replace('\\"', '"').replace("\\\\", "\\"))
    return "\n".join(literals)


def made_of_literals(piece, corpus):
    """Whether `piece` is a run of pieces of literals (a text the server
    builds by concatenation: "… no lock " + how_long + "; reads …"), each at
    least a few characters long."""
    at = 0
    while at < len(piece):
        lo, hi = 0, len(piece) - at
        while lo < hi:  # the longest prefix of piece[at:] found in a literal
            mid = (lo + hi + 1) // 2
            if piece[at:at + mid] in corpus:
                lo = mid
            else:
                hi = mid - 1
        if lo < min(4, len(piece) - at):
            return False
        at += lo
    return True


ERROR = re.compile(r"`-?((?:ERR|QUARANTINE|OOM|MISCONF|NOSCRIPT|WRONGPASS|NOAUTH|DENIED|LOADING)"
                   r"\b[^`]*)`")


@pytest.mark.parametrize("doc", ["README.md", "docs/guide.md", "docs/testbench.md"])
def test_quoted_errors_are_the_servers(doc):
    corpus = server_literals()
    text = read(doc)
    quoted = [m.group(1) for m in ERROR.finditer(re.sub(r"\s*\n\s*", " ", text))]
    # redis-cli sessions (the demo's transcripts are compared with its output when run)
    quoted += re.findall(r"^\s*\(error\) ([A-Z]+ [^\n]*)", text, re.M)
    assert quoted
    for q in quoted:
        # The parts a value stands in for (…, N, numbers, <…>, (...)) aside,
        # every piece of the text is in the server's source.
        for piece in re.split(r"…|\(\.\.\.\)|\.\.\.|<[^>]*>|\bN\b|\d+", q):
            piece = piece.strip()
            if len(piece) < 8:
                continue
            assert made_of_literals(piece, corpus), \
                "%s quotes %r: %r is not made of the server's texts" % (doc, q, piece)
