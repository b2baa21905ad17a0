#!/usr/bin/env bash
# Fetches Redis 7.0.15's own test suite (Debian's source package of the
# redis-server latch is compared against) into $LATCH_REDIS_SUITE (default
# ~/.cache/latch/redis-7.0.15) and prints that folder. Nothing is built: the
# suite runs against an external server (tests/redis-suite/run.py).
# Adds a deb-src line for Debian's archive when apt has none. Idempotent.
set -euo pipefail
dest="${LATCH_REDIS_SUITE:-$HOME/.cache/latch/redis-7.0.15}"
if [ -x "$dest/runtest" ] && [ -d "$dest/tests/unit" ]; then
  echo "$dest"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! grep -rqs '^Types: deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  $SUDO tee /etc/apt/sources.list.d/latch-deb-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  $SUDO apt-get update -qq >&2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get source --download-only redis >&2 2>/dev/null)
orig=$(ls "$tmp"/redis_*.orig.tar.gz | head -n 1)
case "$orig" in
  *redis_7.0.15.orig.tar.gz) ;;
  *) echo "fetch.sh: expected Debian's redis 7.0.15 source, got $orig" >&2; exit 1 ;;
esac
mkdir -p "$(dirname "$dest")"
tar xzf "$orig" -C "$tmp"
rm -rf "$dest"
mv "$tmp/redis-7.0.15" "$dest"
echo "$dest"
