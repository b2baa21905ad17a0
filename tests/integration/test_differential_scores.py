"""ParseSmallIntegerDouble (ZADD scores, WEIGHTS, ZRANGEBYSCORE
ends, ZINCRBY) against redis-server 7.0, byte for byte, RESP2 and RESP3:
plain integers on the fast path and every near-miss that must fall back
to strtod's rules (or be refused)."""

import pytest

from differential import PROTOS, check_script, switch_proto

SCORES = ["0", "-0", "+0", "1", "+1", "-1", "007", "-007", "+007", "000000000000000",
          "123456789012345", "-123456789012345", "+123456789012345", "1234567890123456",
          "9007199254740993", "-9007199254740993", "99999999999999999999",
          "+", "-", "", " 1", "1 ", "0x10", "1e3", "1.", ".5", "inf", "-inf", "+inf",
          "nan", "1\x00", "\x001", "--1", "+-1", "1-", "١", "\t1", "1\n", "0b1", "1_0"]


def _script():
    steps = []
    for i, s in enumerate(SCORES):
        steps.append(("ZADD", "z", s, "m%d" % i))
        steps.append(("ZSCORE", "z", "m%d" % i))
        steps.append(("ZINCRBY", "z", s, "m%d" % i))
        steps.append(("ZRANGEBYSCORE", "z", s, "+inf", "WITHSCORES"))
        steps.append(("ZRANGEBYSCORE", "z", "(" + s, "+inf", "LIMIT", "0", "1"))
        steps.append(("ZCOUNT", "z", "-inf", s))
        steps.append(("ZUNIONSTORE", "u", "1", "z", "WEIGHTS", s))
        steps.append(("ZRANGE", "u", "0", "0", "WITHSCORES"))
        steps.append(("ZADD", "z", "INCR", s, "m%d" % i))
    steps.append(("ZRANGE", "z", "0", "-1", "WITHSCORES"))
    return steps


@pytest.mark.parametrize("proto", PROTOS)
def test_small_integer_scores_match_redis(pair, proto):
    switch_proto(pair, proto)
    check_script(pair, _script())
