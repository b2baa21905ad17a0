"""The guide's V4 chapter (docs/guide.md), exactly as it shows it: the
tutorials' unlock script, unchanged, in one line from redis-cli and
redis-py, over several lines from a file with redis-cli --eval, next to
DELIFEQ."""

import os
import subprocess

import pytest

import latchtest as lt

UNLOCK = ("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
          "else return 0 end")
UNLOCK_FILE = """if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
else
    return 0
end
"""


def cli(port, *args):
    out = subprocess.run(["redis-cli", "-p", str(port)] + list(args), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=30, check=True)
    return out.stdout.decode().strip()


def test_one_line_from_redis_cli(latch_server):
    p = latch_server.port
    assert cli(p, "SET", "lock:orders", "7f3a", "PX", "30000") == "OK"
    assert cli(p, "EVAL", UNLOCK, "1", "lock:orders", "9b21") == "0"
    assert cli(p, "GET", "lock:orders") == "7f3a"
    assert cli(p, "EVAL", UNLOCK, "1", "lock:orders", "7f3a") == "1"
    assert cli(p, "EXISTS", "lock:orders") == "0"


def test_multi_line_file_from_redis_cli(latch_server, tmp_path):
    p = latch_server.port
    path = tmp_path / "unlock.lua"
    path.write_text(UNLOCK_FILE)
    assert cli(p, "SET", "lock:orders", "7f3a", "PX", "30000") == "OK"
    assert cli(p, "--eval", str(path), "lock:orders", ",", "9b21") == "0"
    assert cli(p, "--eval", str(path), "lock:orders", ",", "7f3a") == "1"
    assert cli(p, "EXISTS", "lock:orders") == "0"


def test_redis_py(latch_server):
    redis = pytest.importorskip("redis")
    r = redis.Redis(port=latch_server.port)
    assert r.script_flush()
    r.set("lock:orders", "7f3a", px=30000)
    assert r.eval(UNLOCK, 1, "lock:orders", "9b21") == 0
    unlock = r.register_script(UNLOCK)
    assert unlock(keys=["lock:orders"], args=["7f3a"]) == 1
    assert r.exists("lock:orders") == 0
    # The multi-line form, by EVALSHA after NOSCRIPT.
    r.set("lock:orders", "7f3a", px=30000)
    assert r.register_script(UNLOCK_FILE)(keys=["lock:orders"], args=["7f3a"]) == 1


def test_next_to_delifeq(latch_server):
    p = latch_server.port
    assert cli(p, "SET", "lock:orders", "7f3a", "PX", "30000") == "OK"
    assert cli(p, "DELIFEQ", "lock:orders", "9b21") == "0"
    assert cli(p, "DELIFEQ", "lock:orders", "7f3a") == "1"


def test_the_guide_prints_these_very_texts():
    """The script texts and calls above are the guide's, character for
    character: a change to one side fails here."""
    with open(os.path.join(lt.source_dir(), "docs", "guide.md"), encoding="utf-8") as f:
        guide = f.read()
    chapter = guide[guide.index("### V4: compare and delete in one command"):]
    chapter = chapter[:chapter.index("latch also has the command itself")]
    assert ('EVAL "%s" 1 lock:orders 9b21\n(integer) 0' % UNLOCK) in chapter
    assert ('EVAL "%s" 1 lock:orders 7f3a\n(integer) 1' % UNLOCK) in chapter
    assert "```lua\n" + UNLOCK_FILE + "```" in chapter
    assert "$ redis-cli --eval unlock.lua lock:orders , 7f3a\n(integer) 1" in chapter
    assert 'UNLOCK = "%s"' % UNLOCK in chapter
    for line in ('print(r.eval(UNLOCK, 1, "lock:orders", "9b21"))',
                 'unlock = r.register_script(UNLOCK)',
                 'print(unlock(keys=["lock:orders"], args=["7f3a"]))'):
        assert line in chapter, line
