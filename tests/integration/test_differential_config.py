"""Differential family: CONFIG GET and CONFIG SET — names, argument counts,
range and validation errors, immutable parameters — against redis-server
7.0 in RESP2 and RESP3 (differential.py)."""

import pytest

import latchtest as lt

from differential import PROTOS, check_script, switch_proto


SCRIPTS = {
    "config_set_errors": [
        ("CONFIG", "SET", "foo", "bar"),
        ("CONFIG", "SET", "x" * 300, "1"),
        ("CONFIG", "SET", "a\r\nb", "1"),
        ("CONFIG", "SET", "timeout", "abc"),
        ("CONFIG", "SET", "timeout", "-1"),
        ("CONFIG", "SET", "timeout", "99999999999"),
        ("CONFIG", "SET", "timeout", "10k"),
        ("CONFIG", "SET", "timeout", "a\r\nb"),
        ("CONFIG", "SET", "maxclients", "abc"),
        ("CONFIG", "SET", "tcp-keepalive", "-1"),
        ("CONFIG", "SET", "tcp-keepalive", "abc"),
        ("CONFIG", "SET", "protected-mode", "maybe"),
        ("CONFIG", "SET", "appendfsync", "sometimes"),
        ("CONFIG", "SET", "loglevel", "loud"),
        ("CONFIG", "SET", "proto-max-bulk-len", "abc"),
        ("CONFIG", "SET", "client-query-buffer-limit", "1"),
        ("CONFIG", "SET", "auto-aof-rewrite-min-size", "abc"),
        ("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0"),
        ("CONFIG", "SET", "client-output-buffer-limit", "foo 0 0 0"),
        ("CONFIG", "SET", "client-output-buffer-limit", "normal a 0 0"),
        # immutable in both
        ("CONFIG", "SET", "databases", "2"),
        ("CONFIG", "SET", "tcp-backlog", "10"),
        ("CONFIG", "SET", "appendfilename", "x.aof"),
        ("CONFIG", "SET", "enable-debug-command", "yes"),
        # duplicates and mixtures
        ("CONFIG", "SET", "timeout", "0", "timeout", "1"),
        ("CONFIG", "SET", "TIMEOUT", "0", "timeout", "1"),
        ("CONFIG", "SET", "timeout", "abc", "hz", "10"),
        ("CONFIG", "SET", "hz", "10", "timeout", "abc"),
        ("CONFIG", "SET", "foo", "1", "timeout", "abc"),
        ("CONFIG", "SET", "timeout", "abc", "foo", "1"),
        # nothing of a failed CONFIG SET is applied
        ("CONFIG", "SET", "timeout", "7", "maxclients", "abc"),
        ("CONFIG", "GET", "timeout"),
        ("CONFIG", "SET", "hz", "7", "databases", "3"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "SET",),
        ("CONFIG", "SET", "timeout"),
        ("CONFIG", "GET",),
    ],
    "config_set_then_get": [
        ("CONFIG", "SET", "timeout", "5"),
        ("CONFIG", "GET", "timeout"),
        ("CONFIG", "SET", "timeout", "0"),
        ("CONFIG", "SET", "hz", "20", "tcp-keepalive", "60"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "GET", "tcp-keepalive"),
        ("CONFIG", "SET", "hz", "10", "tcp-keepalive", "300"),
        ("CONFIG", "SET", "proto-max-bulk-len", "2mb"),
        ("CONFIG", "GET", "proto-max-bulk-len"),
        ("CONFIG", "SET", "proto-max-bulk-len", "512mb"),
        ("CONFIG", "GET", "proto-max-bulk-len"),
        ("CONFIG", "SET", "appendfsync", "ALWAYS"),
        ("CONFIG", "GET", "appendfsync"),
        ("CONFIG", "SET", "appendfsync", "everysec"),
        ("CONFIG", "SET", "loglevel", "WARNING"),
        ("CONFIG", "GET", "loglevel"),
        ("CONFIG", "SET", "loglevel", "notice"),
        ("CONFIG", "SET", "protected-mode", "NO"),
        ("CONFIG", "GET", "protected-mode"),
        ("CONFIG", "SET", "protected-mode", "yes"),
        ("CONFIG", "SET", "client-query-buffer-limit", "2mb"),
        ("CONFIG", "GET", "client-query-buffer-limit"),
        ("CONFIG", "SET", "client-query-buffer-limit", "1gb"),
        ("CONFIG", "SET", "auto-aof-rewrite-min-size", "1gb"),
        ("CONFIG", "GET", "auto-aof-rewrite-min-size"),
        ("CONFIG", "SET", "auto-aof-rewrite-min-size", "64mb"),
        ("CONFIG", "SET", "save", "900 1"),
        ("CONFIG", "GET", "save"),
        ("CONFIG", "SET", "save", ""),
        ("CONFIG", "GET", "save"),
        ("CONFIG", "SET", "maxclients", "10000"),
        ("CONFIG", "SET", "requirepass", ""),
        ("CONFIG", "SET", "timeout", "0", "hz", "10"),
    ],
    "config_get_shared_params": [
        ("CONFIG", "GET", "timeout"),
        ("CONFIG", "GET", "maxclients"),
        ("CONFIG", "GET", "proto-max-bulk-len"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "GET", "appendfsync"),
        ("CONFIG", "GET", "appendonly"),
        ("CONFIG", "GET", "save"),
        ("CONFIG", "GET", "tcp-keepalive"),
        ("CONFIG", "GET", "tcp-backlog"),
        ("CONFIG", "GET", "protected-mode"),
        ("CONFIG", "GET", "client-query-buffer-limit"),
        ("CONFIG", "GET", "loglevel"),
        ("CONFIG", "GET", "requirepass"),
        ("CONFIG", "GET", "aof-load-truncated"),
        ("CONFIG", "GET", "auto-aof-rewrite-percentage"),
        ("CONFIG", "GET", "auto-aof-rewrite-min-size"),
        ("CONFIG", "GET", "enable-debug-command"),
        ("CONFIG", "GET", "nosuchparam"),
        ("CONFIG", "GET", "nosuch*"),
        ("CONFIG", "GET", "time*"),
        ("CONFIG", "GET", "hz*"),
        ("CONFIG", "GET", "proto*"),
        ("CONFIG", "GET", "maxclient?"),
        ("CONFIG", "GET", "*keepalive"),
        ("CONFIG", "GET", "tcp-keepaliv[a-e]"),
        ("CONFIG", "GET", "timeout", "timeout"),
    ],
}


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_script(pair, script, proto):
    switch_proto(pair, proto)
    check_script(pair, SCRIPTS[script])


def test_config_get_exact_name_echoes_name_as_given(pair):
    check_script(pair, [("CONFIG", "GET", "TIMEOUT"), ("CONFIG", "GET", "MaxClients")])


def test_config_set_odd_argument_count_is_syntax_error(pair):
    check_script(pair, [
        ("CONFIG", "SET", "timeout", "0", "hz"),
        ("CONFIG", "SET", "timeout", "0", "hz", "10", "maxclients"),
    ])


def test_config_set_range_errors(pair):
    """The bounds named in range errors are Redis's."""
    check_script(pair, [
        ("CONFIG", "SET", "maxclients", "0"),
        ("CONFIG", "SET", "proto-max-bulk-len", "1"),
        ("CONFIG", "SET", "proto-max-bulk-len", "1kb"),
    ])


def test_config_set_hz_out_of_range_is_clamped(pair):
    check_script(pair, [
        ("CONFIG", "SET", "hz", "0"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "SET", "hz", "501"),
        ("CONFIG", "GET", "hz"),
        ("CONFIG", "SET", "hz", "10"),
    ])


def test_config_set_save_is_validated(pair):
    check_script(pair, [
        ("CONFIG", "SET", "save", "abc"),
        ("CONFIG", "SET", "save", "900"),
        ("CONFIG", "SET", "save", "900 1 300"),
        ("CONFIG", "GET", "save"),
        ("CONFIG", "SET", "save", ""),
    ])


def test_config_set_port_is_immutable(latch, latch_server):
    # Redis 7.0 re-binds on CONFIG SET port; latch keeps its port fixed.
    assert latch.raw("CONFIG", "SET", "port", "1") == (
        b"-ERR CONFIG SET failed (possibly related to argument 'port') - "
        b"can't set immutable config\r\n")
    assert lt.pairs_to_dict(latch.cmd("CONFIG", "GET", "port")) == {
        b"port": str(latch_server.port).encode()}
