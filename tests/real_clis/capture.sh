#!/usr/bin/env bash
# Re-captures the transcripts named real-*.jsonl under tests/fakes/transcripts/ from the pinned CLIs
# (tests/real_clis/install.sh puts them in the cache), with HOME an empty folder, no credentials, and every
# provider address a closed port on this machine: nothing can reach a provider.
#
#   bash tests/real_clis/capture.sh
#
# Each capture is the CLI's stdout as it printed it. The codex ones end with `#sleep 600` (the fake's
# directive): the real CLI goes on reconnecting until it is killed, which is what the runner must stop.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=$(bash tests/real_clis/install.sh --print-bin)
OUT=tests/fakes/transcripts
CLOSED="http://127.0.0.1:9"   # the discard port: nothing listens there
home=$(mktemp -d); work=$(mktemp -d)
trap 'rm -rf "$home" "$work"' EXIT
clean_env=(env -i "PATH=/usr/bin:/bin" "HOME=$home" "ANTHROPIC_BASE_URL=$CLOSED" "OPENAI_BASE_URL=$CLOSED/v1")

cd "$work"
printf -- '---\ntitle: "front matter"\n---\n- a list item\n' \
  | "${clean_env[@]}" "$BIN/claude" -p --output-format stream-json --verbose \
  > "$OLDPWD/$OUT/claude/real-logged-out.jsonl" || true
printf 'hello\n' \
  | "${clean_env[@]}" CLAUDE_CODE_MAX_RETRIES=0 ANTHROPIC_API_KEY=placeholder-not-a-credential \
    "$BIN/claude" -p --output-format stream-json --verbose \
  > "$OLDPWD/$OUT/claude/real-unreachable.jsonl" || true

mkdir -p "$home/.codex"
cat > "$home/.codex/config.toml" <<TOML
model_provider = "closed"
[model_providers.closed]
name = "closed"
base_url = "$CLOSED/v1"
wire_api = "responses"
TOML
printf -- '---\nx\n' \
  | timeout 20 "${clean_env[@]}" "$BIN/codex" exec --json --skip-git-repo-check -- - \
  > "$OLDPWD/$OUT/codex/real-offline.jsonl" || true
echo '#sleep 600' >> "$OLDPWD/$OUT/codex/real-offline.jsonl"
echo "captured into $OUT/{claude,codex}/real-*.jsonl"
