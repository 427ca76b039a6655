#!/usr/bin/env bash
# Installs the pinned Claude Code and Codex CLIs from the npm registry into a per-machine cache outside the
# clone (once per machine: a cache that already holds these versions is kept), for the tests that run the
# real binaries. Prints why and exits 0 when npm is missing: those tests then skip with the same reason.
#
#   bash tests/real_clis/install.sh               install (or keep) and say where
#   bash tests/real_clis/install.sh --print-bin   only print the folder of the two executables
set -euo pipefail
CLAUDE_VERSION=2.1.197
CODEX_VERSION=0.171.0
CACHE="${FACTORY_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/factory-schedule/clis}"
PREFIX="$CACHE/claude-code-$CLAUDE_VERSION-codex-$CODEX_VERSION"
BIN="$PREFIX/node_modules/.bin"
if [ "${1:-}" = "--print-bin" ]; then
  echo "$BIN"
  exit 0
fi
if [ -x "$BIN/claude" ] && [ -x "$BIN/codex" ]; then
  echo "real CLIs: claude $CLAUDE_VERSION and codex $CODEX_VERSION in $BIN"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "real CLIs: npm is not installed; the real-CLI tests will be skipped" >&2
  exit 0
fi
mkdir -p "$PREFIX"
# The claude package's install script links its native binary (an optional dependency) into place.
if npm install --silent --no-audit --no-fund --prefix "$PREFIX" \
    "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" >&2; then
  echo "real CLIs: installed claude $CLAUDE_VERSION and codex $CODEX_VERSION in $BIN"
else
  echo "real CLIs: npm could not install them; the real-CLI tests will be skipped" >&2
  rm -rf "$PREFIX"
fi
exit 0
