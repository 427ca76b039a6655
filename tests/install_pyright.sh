#!/usr/bin/env bash
# Installs the pinned pyright from the npm registry into a per-machine cache outside the clone (once per machine:
# a cache that already holds this version is kept), for tests/test_pyright.py, which runs it over the repository
# as an editor would. Prints why and exits 0 when npm is missing or cannot install it: the test then skips.
#
#   bash tests/install_pyright.sh               install (or keep) and say where
#   bash tests/install_pyright.sh --print-bin   only print the pyright executable's path
set -euo pipefail
PYRIGHT_VERSION=1.1.414
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/factory-schedule"
PREFIX="$CACHE/pyright-$PYRIGHT_VERSION"
BIN="$PREFIX/node_modules/.bin/pyright"
if [ "${1:-}" = "--print-bin" ]; then
  echo "$BIN"
  exit 0
fi
if [ -x "$BIN" ]; then
  echo "pyright $PYRIGHT_VERSION in $BIN"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "pyright: npm is not installed; tests/test_pyright.py will be skipped" >&2
  exit 0
fi
mkdir -p "$PREFIX"
if npm install --silent --no-audit --no-fund --prefix "$PREFIX" "pyright@$PYRIGHT_VERSION" >&2; then
  echo "pyright: installed $PYRIGHT_VERSION in $BIN"
else
  echo "pyright: npm could not install it; tests/test_pyright.py will be skipped" >&2
  rm -rf "$PREFIX"
fi
exit 0
