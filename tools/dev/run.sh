#!/usr/bin/env bash
# Builds latch-server and runs it in the foreground on 127.0.0.1:6379, with its
# data directory in ./data of the checkout. Extra arguments go to the server
# (for example: tools/dev/run.sh --port 6380 --appendfsync always).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/dev/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATCH_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target latch-server
mkdir -p data
exec ./build/latch-server latch.conf --dir "$PWD/data" "$@"
