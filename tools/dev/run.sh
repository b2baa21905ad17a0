#!/usr/bin/env bash
# Builds latch-server and every tool (latch-redlock, latch-fixture,
# latch-chaos, latch-check-aof, latch-demo, latch-contention; not the tests:
# tools/dev/test.sh builds those), then runs the server in the foreground on
# 127.0.0.1:6379 with its data directory in ./data of the checkout. Extra
# arguments go to the server (for example: tools/dev/run.sh --port 6380
# --appendfsync always). The programs land in build/ (latch-server) and
# build/tools/; `cmake --install build --prefix DIR` copies them to DIR/bin.
# LATCH_BUILD_DIR chooses another build directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${LATCH_BUILD_DIR:-build}"
tools/dev/deps.sh build
# A build directory configured by test.sh keeps its tests; a new one gets none
# (no googletest needed to run the server).
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATCH_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target latch-programs
mkdir -p data
exec "$build/latch-server" latch.conf --dir "$PWD/data" "$@"
