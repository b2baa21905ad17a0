"""ACL edges (server/acl), each against redis-server 7.0 in RESP2 and RESP3
where it is a reply: redis.acl_check_cmd inside scripts, ACL GETUSER's order
of `+cmd|sub` rules, a script's numkeys written oddly ("01", "+1", " 1")
under a key-restricted user, the acllog-max-len setting, and protected mode
once the default user has a password set by ACL.
"""

import re

import pytest

import latchtest as lt
from latchtest import encode
from test_acl import PROTOS, acl_pair, both_same, masked_log, setuser, user_pair  # noqa: F401


def steps_same(u, steps):
    for step in steps:
        got, want = u.both(*step)
        assert got == want, "%r:\n  latch: %r\n  redis: %r" % (step, got, want)


# ------------------------------------------------------ redis.acl_check_cmd

CHECK = "return redis.acl_check_cmd(unpack(ARGV))"
CHECKED = (
    ("get", "lock:app1:a"),
    ("get", "lock:app2:a"),
    ("GET", "shared:x"),
    ("set", "shared:x", "v"),
    ("set", "lock:app1:a", "v"),
    ("del", "lock:app1:a", "lock:app2:a"),
    ("mget", "lock:app1:a", "shared:x"),
    ("copy", "shared:x", "lock:app1:b"),
    ("copy", "lock:app1:b", "shared:x"),
    ("flushall",),
    ("debug", "sleep", "0"),
    ("config", "get", "x"),
    ("config", "set", "x", "y"),
    ("config",),
    ("select", "0"),
    ("select", "1"),
    ("publish", "news", "m"),
    ("publish", "other", "m"),
    ("eval", "return 1", "1", "lock:app2:a"),
    ("eval", "return 1", "1", "lock:app1:a"),
    ("get",),
    ("ping",),
    ("auth", "x"),
    ("sort", "lock:app1:a", "store", "lock:app2:a"),
    # Unknown commands and subcommands: the error (lookupCommand's NULL).
    ("nosuch",),
    ("config", "nosuch"),
)


@pytest.mark.parametrize("proto", PROTOS)
def test_acl_check_cmd_answers_for_the_running_user(acl_pair, proto):
    """redis.acl_check_cmd(cmd, args…) asks the ACL for the user running the
    script (script_lua.c luaRedisAclCheckCmdPermissionsCommand): false on
    any refusal, command, key or channel; an error for an unknown command."""
    p = acl_pair
    setuser(p, "app1", "on", ">pw", "~lock:app1:*", "%R~shared:*", "resetchannels", "&news",
            "+@all", "-@dangerous", "-config", "+config|get", "-select", "+select|0")
    u = user_pair(p, "app1", proto=proto)
    admin = p
    try:
        for args in CHECKED:
            steps_same(u, [("EVAL", CHECK, "0") + args])
            # The default user may run everything it names.
            steps_same(admin, [("EVAL", CHECK, "0") + args])
        # A function asks the same way (FCALL), and so does EVAL_RO.
        lib = ("#!lua name=aclchk\nredis.register_function('chk', function(keys, args) "
               "return redis.acl_check_cmd(unpack(args)) end)")
        steps_same(admin, [("FUNCTION", "LOAD", "REPLACE", lib)])
        steps_same(u, [("FCALL", "chk", "0", "get", "lock:app1:a"),
                       ("FCALL", "chk", "0", "get", "lock:app2:a"),
                       ("FCALL", "chk", "0", "nosuch")])
        steps_same(admin, [("FUNCTION", "DELETE", "aclchk")])
        steps_same(u, [("EVAL_RO", CHECK, "0", "set", "lock:app2:a", "v"),
                       ("EVAL", CHECK, "0"),
                       ("EVAL", "return redis.acl_check_cmd({})", "0"),
                       ("EVAL", "return redis.acl_check_cmd('get', {})", "0"),
                       ("EVAL", "return redis.acl_check_cmd('get', 12)", "0")])
        # A check is no refusal: nothing is logged.
        assert p.both("ACL", "LOG") == (b"*0\r\n", b"*0\r\n")
    finally:
        u.close()


# ------------------------------------------------------ GETUSER's order

# Redis emits the single-command rules that categories do not cover by
# walking its command table, a dict whose hash seed is random per process:
# two redis-servers given the same rules print `+select|0 +get|x` in
# different orders. What is fixed is the rest: "-@all"/"+@all" and the
# categories first, in order; then per command its own rule, then its
# subcommands' rules, then its allowed first arguments in the order added.
# The comparison sorts the per-command groups (and subcommands inside one)
# and keeps every other order.


def _is_single(tok):
    return tok[:1] in ("+", "-") and tok[1:2] != "@"


def _norm_segment(seg, containers):
    toks = seg.split(" ")
    head = [t for t in toks if not _is_single(t)]
    singles = [t for t in toks if _is_single(t)]
    assert toks == head + singles, seg  # the single commands come last
    groups = {}
    for t in singles:
        base, _, sub = t[1:].partition("|")
        groups.setdefault(base, []).append(t)
    out = list(head)
    for base in sorted(groups):
        g = groups[base]
        parent = [t for t in g if "|" not in t]
        subs = [t for t in g if "|" in t]
        assert g == parent + subs, g  # the command's own rule first
        out += parent + (sorted(subs) if base in containers else subs)
    return " ".join(out)


def norm_rules(raw, containers):
    """raw RESP with every rule string's single-command groups in a fixed
    order (a permutation of words: lengths stay right)."""
    def fix(m):
        text = m.group(2).decode()
        if "@all" not in text:
            return m.group(0)
        parts = re.split(r"( \(|\))", text)
        parts = [p if p in (" (", ")", "") else _norm_segment(p, containers) for p in parts]
        return m.group(1) + "".join(parts).encode() + b"\r\n"
    return re.sub(rb"([$+]\d*\r?\n?)([^\r\n]*@all[^\r\n]*)\r\n", fix, raw)


@pytest.mark.parametrize("proto", PROTOS)
def test_first_arg_and_subcommand_rules_print_in_redis_order(acl_pair, proto):
    p = acl_pair
    containers = {e[0].decode() for e in p.redis.cmd("COMMAND") if e[9]}
    if proto == 3:
        p.both("HELLO", "3")
    for rules in (("+get|sub", "+select|0"),
                  ("+select|0", "+get|sub"),
                  ("-@all", "+select|1", "+config|get", "+select|0", "+client|id", "+get|x"),
                  ("+@all", "-select", "+select|0", "-config", "+config|get"),
                  ("+select|0", "+select|1", "-select", "+select|2"),
                  ("+select|0", "+select|1", "+select", "-select"),
                  ("+@read", "+select|0", "-@read", "+get|a", "+get"),
                  ("+get|a", "+@string", "+get|b", "+client", "-client|id", "+client|id|x"),
                  ("+acl|whoami", "+select|5", "+@string", "-get", "+get|q", "(+select|3 ~x)"),
                  ("+config|get", "+config", "-config|set", "+config|set", "+select|0")):
        got, want = p.both("ACL", "SETUSER", "u1", "reset", *rules)
        assert got == want, (rules, got, want)
        for args in (("ACL", "GETUSER", "u1"), ("ACL", "LIST")):
            got, want = p.both(*args)
            assert norm_rules(got, containers) == norm_rules(want, containers), \
                "%r %r:\n  latch: %r\n  redis: %r" % (rules, args, got, want)
    p.both("HELLO", "2")


# ------------------------------------------------------ numkeys spelt oddly


@pytest.mark.parametrize("proto", PROTOS)
def test_script_numkeys_spelt_oddly_under_a_key_pattern(acl_pair, proto):
    """EVAL's numkeys as Redis's key extraction reads it (getKeysUsingKeySpecs's
    keynum: strtol-like, so "01" and "+1" are 1) before EVAL parses it (" 1"
    is not a number there)."""
    p = acl_pair
    setuser(p, "app1", "on", ">pw", "~lock:app1:*", "%R~shared:*", "+@all", "-@dangerous")
    u = user_pair(p, "app1", proto=proto)
    try:
        # (A key found by the fallback has no flags: a read-only pattern
        # lets EVAL's "01" through where "1" needs write access too.)
        steps = [("ZUNIONSTORE", "lock:app2:d", "01", "lock:app1:a"),
                 ("ZUNIONSTORE", "lock:app1:d", "01", "lock:app2:a"),
                 ("ZUNIONSTORE", "shared:x", "+1", "lock:app1:a"),
                 ("ZUNIONSTORE", "shared:x", "1", "lock:app1:a"),
                 ("ZUNIONSTORE", "lock:app2:d", "x", "lock:app1:a"),
                 ("LMPOP", "01", "lock:app2:a", "LEFT"),
                 ("LMPOP", "+1", "shared:x", "LEFT"),
                 ("BLMPOP", "0.01", " 1", "lock:app2:a", "LEFT"),
                 ("SINTERCARD", "01", "lock:app2:a"),
                 ("COMMAND", "GETKEYS", "EVAL", "return 1", "01", "k"),
                 ("COMMAND", "GETKEYSANDFLAGS", "ZUNIONSTORE", "d", "+1", "k")]
        for numkeys in ("01", "+1", " 1", "1 ", "-1", "1.0", "x", "00", "0x1", "2", "3",
                        "99999999999999999999", "-0"):
            for key in ("lock:app1:a", "lock:app2:a", "shared:x"):
                steps.append(("EVAL", "return KEYS[1]", numkeys, key, "arg"))
                steps.append(("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", numkeys,
                              key))
                steps.append(("FCALL", "nofunc", numkeys, key))
                steps.append(("EVAL_RO", "return 1", numkeys, key))
        steps_same(u, steps)
        got, want = p.both("ACL", "LOG", "200")
        assert masked_log(got) == masked_log(want)
    finally:
        u.close()


# ------------------------------------------------------ acllog-max-len


@pytest.mark.parametrize("proto", PROTOS)
def test_acllog_max_len_trims_the_log_as_redis(acl_pair, proto):
    """acllog-max-len (default 128): the log is cut to it when a new entry
    is added — not when the setting changes, nor when a refusal is merged
    into an entry it repeats (ACLLogEntry's trim in addACLLogEntry)."""
    p = acl_pair
    if proto == 3:
        p.both("HELLO", "3")
    setuser(p, "u1", "on", ">pw", "~a*", "+get")
    u = user_pair(p, "u1", proto=proto)

    def log_same():
        got, want = p.both("ACL", "LOG")
        assert masked_log(got) == masked_log(want), (got, want)
        return got

    try:
        steps_same(p, [("CONFIG", "GET", "acllog-max-len"),
                       ("CONFIG", "SET", "acllog-max-len", "-1"),
                       ("CONFIG", "SET", "acllog-max-len", "x"),
                       ("CONFIG", "SET", "acllog-max-len", "3"),
                       ("CONFIG", "GET", "acllog-max-len")])
        steps_same(u, [("GET", "b%d" % i) for i in range(5)])
        assert log_same().count(b"b") >= 3
        steps_same(p, [("CONFIG", "SET", "acllog-max-len", "1")])
        log_same()  # still three: nothing was added
        steps_same(u, [("GET", "b4")])  # merged into the newest
        log_same()
        steps_same(u, [("SET", "a", "1")])  # a new entry: the cut
        log_same()
        steps_same(p, [("CONFIG", "SET", "acllog-max-len", "0")])
        steps_same(u, [("GET", "c")])
        assert p.both("ACL", "LOG")[0] in (b"*0\r\n",)
        log_same()
    finally:
        u.close()
        p.both("CONFIG", "SET", "acllog-max-len", "128")
        p.both("HELLO", "2")


def test_acllog_max_len_in_the_config_file_and_rewrite(tmp_path):
    from test_differential_admin import start_pair
    servers = start_pair(tmp_path, conf_text="acllog-max-len 5\n")
    try:
        for s in servers:
            with s.conn() as c:
                assert c.cmd("CONFIG", "GET", "acllog-max-len") == [b"acllog-max-len", b"5"]
                assert c.cmd("CONFIG", "SET", "acllog-max-len", "7") == b"OK"
                assert c.cmd("CONFIG", "REWRITE") == b"OK"
        texts = [(tmp_path / k / (k + ".conf")).read_text() for k in ("latch", "redis")]
        assert texts[0].startswith("acllog-max-len 7\n")
        assert texts[0].split("\n# Generated")[0] == texts[1].split("\n# Generated")[0]
        for s in servers:
            with s.conn() as c:
                assert c.cmd("CONFIG", "SET", "acllog-max-len", "128") == b"OK"
                assert c.cmd("CONFIG", "REWRITE") == b"OK"
        # Back at the default: the line stays where it was, with it.
        texts = [(tmp_path / k / (k + ".conf")).read_text() for k in ("latch", "redis")]
        assert texts[0].startswith("acllog-max-len 128\n")
        assert texts[0].split("\n# Generated")[0] == texts[1].split("\n# Generated")[0]
    finally:
        for s in servers:
            s.stop()


# ------------------------------------------------------ key patterns as globs

KEY_PATTERNS = ("lock?", "[", "?", "\\", "ab[", "ab\\", "lock:*", "lock:\\*", "*", "l*k",
                "lock:[ab]*", "lock", "lock:?*", "**")
PATTERN_KEYS = ("lock", "lockb", "lockbox", "lock:", "lock:a", "lock:*", "ab", "abc", "ab\\",
                "ab[", "anykey", "[", "?", "\\", "lk", "lock:c", "lock:ax")


@pytest.mark.parametrize("proto", PROTOS)
def test_key_patterns_match_as_redis_globs(acl_pair, proto):
    """Every key pattern matches as Redis's stringmatchlen does, whatever its
    last character: a `prefix*` pattern is compared as a prefix (rules.cc),
    and only that one — `lock?`, `[` or `ab\\` are globs, not prefixes."""
    p = acl_pair
    for pattern in KEY_PATTERNS:
        setuser(p, "app1", "reset", "on", ">pw", "~" + pattern, "+@all")
        u = user_pair(p, "app1", proto=proto)
        try:
            steps_same(u, [("SET", k, "v") for k in PATTERN_KEYS] +
                       [("GET", k) for k in PATTERN_KEYS])
        finally:
            u.close()
        for k in PATTERN_KEYS:
            both_same(p, "ACL", "DRYRUN", "app1", "GET", k)
