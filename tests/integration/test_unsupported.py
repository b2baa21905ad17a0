"""The README's "Not supported" list is a promise: every command it names
there answers Redis's unknown-command error (or, for a subcommand, Redis's
unknown-subcommand error), on latch exactly as redis-server words an unknown
command. The names are read from the README itself, so a command added to
the list without the server refusing it, or implemented while the README
still lists it, fails here."""

import os
import re

import latchtest as lt

# Words in the section that are not unsupported commands of their own:
# supported commands it mentions (INFO replication, WAIT, SCRIPT DEBUG's
# container) and option words.
NOT_COMMANDS = {"YES", "LFU", "OBJECT", "FREQ", "INFO", "WAIT", "DEBUG"}


def _listed():
    with open(os.path.join(lt.source_dir(), "README.md"), encoding="utf-8") as f:
        text = f.read()
    section = text[text.index("Not supported (the command answers Redis's unknown-command error)"):]
    section = section[:section.index("Supported, with a deliberate difference")]
    words = []
    for code in re.findall(r"`([^`]+)`", section):
        for part in re.split(r"[ ,]", code):
            if re.fullmatch(r"[A-Z][A-Z_]+(/[A-Z]+)*", part):
                words.append(part)
    return words


def test_the_readme_lists_unsupported_commands():
    words = _listed()
    # (The list is what the README says; this guards the parser.)
    for w in ("XADD", "PFADD", "GEOADD", "SETBIT", "MODULE", "REPLICAOF", "CLUSTER", "SAVE",
              "DUMP"):
        assert w in words, (w, words)


def test_every_listed_command_is_refused_as_unknown(latch_server):
    words = _listed()
    with latch_server.conn() as c:
        for w in words:
            if w in NOT_COMMANDS:
                continue
            if "/" in w:
                # CLIENT's subcommands: `CLIENT TRACKING/CACHING/…` — the
                # container comes from the text before them.
                for sub in w.split("/"):
                    r = c.cmd("CLIENT", sub)
                    assert isinstance(r, lt.RespError), (sub, r)
                    assert r.text.startswith(b"ERR unknown subcommand '%s'" % sub.encode()), r
                continue
            if w == "CLIENT":
                continue
            r = c.cmd(w, "x")
            assert isinstance(r, lt.RespError), (w, r)
            assert r.text == (b"ERR unknown command '%s', with args beginning with: 'x' "
                              % w.encode()), (w, r.text)


def test_the_lua_debugger_is_refused(latch_server):
    with latch_server.conn() as c:
        r = c.cmd("SCRIPT", "DEBUG", "YES")
        assert isinstance(r, lt.RespError), r
