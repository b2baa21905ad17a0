#!/usr/bin/env bash
# Installs what is missing, builds everything and runs every test: the unit
# tests (gtest) and the integration tests (the real latch-server binary on
# free ports, driven by redis-cli, redis-benchmark, raw sockets and the tools).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/dev/deps.sh test
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATCH_TESTS=ON >/dev/null
cmake --build build -j"$(nproc)"
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
