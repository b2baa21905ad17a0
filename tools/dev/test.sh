#!/usr/bin/env bash
# Installs what is missing, builds everything and runs every test, in three
# passes:
#   1. ./build: the unit tests (gtest) and the integration tests (the real
#      latch-server binary on free ports, driven by redis-cli,
#      redis-benchmark, raw sockets and the tools).
#   2. ./build-asan (clang, ASan+UBSan, -fno-sanitize-recover=all): the unit
#      tests and the integration tests again, against the sanitized binaries.
#      Any sanitizer report, even from a server that exited "cleanly", fails.
#      (Redis's Tcl units and the docs' examples run in pass 1 only: they
#      check replies and printed text, and the sanitizers see the same code
#      through the unit, integration and fuzz tests; under ASan they would
#      cost CI minutes it does not have.)
#   3. The libFuzzer targets of ./build-asan (tests/fuzz/), each for
#      LATCH_FUZZ_SECONDS (default 30: CI has 30 minutes on 2 cores for all
#      three passes); any crash fails.
# Arguments go to the first ctest (e.g. -R keyspace). LATCH_QUICK=1 runs
# pass 1 only.
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs="$(nproc)"
tools/dev/deps.sh test

echo "== 1/3: build, unit and integration tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLATCH_TESTS=ON >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs" "$@")
[ "${LATCH_QUICK:-0}" = 1 ] && exit 0

echo "== 2/3: sanitizer build (ASan+UBSan), unit and integration tests"
# -O1 and line tables only (what a sanitizer report's stack needs): the
# build is most of this pass's time, and full debug info costs a fifth of it.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DLATCH_FUZZ=ON -DLATCH_FUZZ_SECONDS="${LATCH_FUZZ_SECONDS:-30}" >/dev/null
cmake --build build-asan -j"$jobs"
reports="$PWD/build-asan/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
# Reports go to files, so one from a server process whose output no test
# reads (a leak found at exit, say) still fails the run.
(cd build-asan &&
  LATCH_SANITIZED=1 \
  ASAN_OPTIONS="log_path=$reports/asan:abort_on_error=1:detect_leaks=1" \
  UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1" \
  ctest --output-on-failure -j"$jobs" -LE "fuzz|redis-suite" -E "integration.test_docs_examples")
if compgen -G "$reports/*" >/dev/null; then
  echo "Sanitizer reports:" && cat "$reports"/* && exit 1
fi

echo "== 3/3: fuzzing, ${LATCH_FUZZ_SECONDS:-30} s per target"
(cd build-asan && ctest --output-on-failure -j"$jobs" -L fuzz)
grep -h -e "Testing: fuzz\." -e "^Done [0-9]* runs" build-asan/Testing/Temporary/LastTest.log || true
