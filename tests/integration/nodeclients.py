"""The real Node.js Redis clients (ioredis, node-redis) the tests drive:
tests/integration/clients/node/ holds their pinned package.json and
package-lock.json and the scripts (*.mjs) that use them.

install() runs `npm ci` once per lock-file version into a cache folder and
copies the scripts next to node_modules (ES module imports resolve from the
script's own folder)."""

import fcntl
import hashlib
import os
import shutil
import subprocess

import latchtest as lt

NODE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients", "node")


def _cache_root():
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return os.path.join(base, "latch", "node-clients")
    return os.path.join(lt.build_dir(), "node-clients")


def install(unavailable):
    """(node, folder); calls unavailable(why) when node or npm is missing."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        unavailable("node and npm are needed (tools/dev/deps.sh test installs them)")
    major = int(subprocess.run([node, "--version"], capture_output=True, text=True,
                               timeout=30).stdout.strip().lstrip("v").split(".")[0])
    if major < 20:
        unavailable("ioredis 6 and redis 6 need Node.js >= 20; this is %d" % major)
    with open(os.path.join(NODE_DIR, "package-lock.json"), "rb") as f:
        lock = f.read()
    folder = os.path.join(_cache_root(), hashlib.sha256(lock).hexdigest()[:16])
    os.makedirs(folder, exist_ok=True)
    stamp = os.path.join(folder, "installed.stamp")
    with open(os.path.join(folder, ".install.lock"), "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # one installer at a time
        if not os.path.exists(stamp):
            for name in ("package.json", "package-lock.json", ".npmrc"):
                shutil.copyfile(os.path.join(NODE_DIR, name), os.path.join(folder, name))
            env = dict(os.environ)
            if not env.get("HOME"):
                env["npm_config_cache"] = os.path.join(folder, ".npm-cache")
            p = subprocess.run([npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund",
                                "--loglevel=error"], cwd=folder, env=env,
                               capture_output=True, text=True, timeout=600)
            if p.returncode != 0:
                unavailable("npm ci failed (is the npm registry reachable?):\n" + p.stderr[-3000:])
            with open(stamp, "w") as f:
                f.write("ok\n")
    for name in os.listdir(NODE_DIR):
        if name.endswith(".mjs"):
            shutil.copyfile(os.path.join(NODE_DIR, name), os.path.join(folder, name))
    return node, folder
