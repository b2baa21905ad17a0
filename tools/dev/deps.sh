#!/usr/bin/env bash
# Installs the Debian packages latch needs that this machine lacks.
#   tools/dev/deps.sh build   - to build and run the server
#   tools/dev/deps.sh test    - also what the test suite uses
# Uses sudo only when not root. Does nothing when everything is present.
set -euo pipefail

build_pkgs=(g++ cmake make pkg-config libuv1-dev libspdlog-dev libxxhash-dev)
# io_uring for the connection path (issue 28, `io-uring yes`).
build_pkgs+=(liburing-dev)
# Scripting (issue 23): Lua 5.1 and the cjson and bit libraries Redis ships,
# and LZF for FUNCTION DUMP's payload (Redis compresses library code with it).
build_pkgs+=(liblua5.1-0-dev lua-cjson-dev lua-bitop-dev liblzf-dev)
# TLS (issue 27): OpenSSL for the server's tls-port and the tools' --tls.
build_pkgs+=(libssl-dev)
test_pkgs=(googletest libgtest-dev libgmock-dev redis-server redis-tools python3 python3-pytest
           python3-redis tmux nodejs npm libhiredis-dev)
# The TLS tests make their certificates with the openssl CLI.
test_pkgs+=(openssl)
# The test bench's page check: headless Chromium loads the checker's HTML page.
test_pkgs+=(chromium)
# The Debian package's check: cpack's dpkg-shlibdeps (dpkg-deb is dpkg's).
test_pkgs+=(dpkg-dev)
# The sanitizer build and the fuzzers (clang and its ASan, UBSan and libFuzzer
# runtimes); ip, ss and prlimit for the hardening tests.
test_pkgs+=(clang libclang-rt-14-dev iproute2 util-linux)

want=("${build_pkgs[@]}")
if [ "${1:-build}" = "test" ]; then want+=("${test_pkgs[@]}"); fi

missing=()
for p in "${want[@]}"; do
  # The lock-library tests need node and npm; they may come from another
  # package than Debian's (NodeSource's nodejs bundles npm): any will do.
  case "$p" in
    nodejs) command -v node >/dev/null && continue ;;
    npm) command -v npm >/dev/null && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing missing packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Debian starts redis-server as a service on install; the tests start their own.
if printf '%s\n' "${missing[@]}" | grep -qx redis-server; then
  $SUDO service redis-server stop >/dev/null 2>&1 || true
fi
