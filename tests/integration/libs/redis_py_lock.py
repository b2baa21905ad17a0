"""Debian python3-redis 4.3.4 redis.lock.Lock, used as its docs show: acquire,
a second acquirer refused, extend (added and replacing), reacquire, release,
expiry, the context manager.

Scripts exercised (EVALSHA, SCRIPT LOAD on NOSCRIPT): LUA_RELEASE_SCRIPT,
LUA_EXTEND_SCRIPT, LUA_REACQUIRE_SCRIPT. Acquiring is a plain SET NX PX.

Usage: python3 redis_py_lock.py PORT. Prints one JSON line per step that
passed and {"step": "done"}; exits 1 on a failure. LOCK_DBS=N in the
environment puts the clients in database N.
"""

import json
import os
import sys
import time

import redis
from redis.exceptions import LockError, LockNotOwnedError


def step(name, **extra):
    print(json.dumps(dict(step=name, **extra)), flush=True)


def check(condition, what):
    if not condition:
        raise AssertionError("check failed: " + what)


def main():
    port = int(sys.argv[1])
    db = int((os.environ.get("LOCK_DBS") or "0").split(",")[0])
    r = redis.Redis(host="127.0.0.1", port=port, db=db)
    other = redis.Redis(host="127.0.0.1", port=port, db=db)

    lock = r.lock("res", timeout=3)
    check(lock.acquire(blocking=False), "acquire")
    check(lock.owned() and r.get("res") == lock.local.token, "owned")
    check(2000 < r.pttl("res") <= 3000, "ttl")
    step("acquired")

    contender = other.lock("res", timeout=3, blocking_timeout=0.2, sleep=0.05)
    check(not contender.acquire(), "second acquire refused")
    step("blocked")

    check(lock.extend(5), "extend (added)")
    check(7000 < r.pttl("res") <= 8000, "extended ttl %d" % r.pttl("res"))
    check(lock.extend(10, replace_ttl=True), "extend (replaced)")
    check(9000 < r.pttl("res") <= 10000, "replaced ttl %d" % r.pttl("res"))
    step("extended")
    check(lock.reacquire(), "reacquire")
    check(2000 < r.pttl("res") <= 3000, "reacquired ttl %d" % r.pttl("res"))
    step("reacquired-ttl")
    check(not contender.acquire(), "still refused")

    lock.release()
    check(r.get("res") is None, "released")
    step("released")
    check(contender.acquire(), "acquired after release")
    contender.release()
    step("reacquired")

    # Expiry: the lease ends by itself. The old holder's extend, reacquire and
    # release then fail with LockNotOwnedError and leave the new lock alone.
    old = r.lock("res", timeout=0.3)
    check(old.acquire(), "short lock")
    time.sleep(0.5)
    new = other.lock("res", timeout=5)
    check(new.acquire(blocking=False), "acquired after expiry")
    for action in (lambda: old.extend(1), old.reacquire, old.release):
        try:
            action()
        except LockNotOwnedError:
            pass
        else:
            raise AssertionError("an expired lock was still owned")
    check(r.get("res") == new.local.token, "new holder kept")
    new.release()
    step("expired")

    # The context manager.
    with r.lock("ctx", timeout=5, blocking_timeout=1) as held:
        check(r.get("ctx") == held.local.token, "held in with")
        try:
            with other.lock("ctx", timeout=5, blocking_timeout=0.1):
                raise AssertionError("acquired twice")
        except LockError:
            pass
    check(r.get("ctx") is None, "released by with")
    step("context-manager")
    step("done")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # report and fail
        import traceback
        traceback.print_exc()
        sys.exit(1)
