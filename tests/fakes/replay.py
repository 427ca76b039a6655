"""Replay a recorded JSON-line transcript as the `claude` or `codex` command line would print it.

The fake `claude` and `codex` executables beside this file call `main(provider)`.
The transcript is `$FAKE_TRANSCRIPTS/<provider>/<name>.jsonl` (default: tests/tui/transcripts),
where <name> comes from a `[transcript: NAME]` marker in the prompt, else $FAKE_TRANSCRIPT,
else `normal`. Each contact is appended to $FAKE_PROVIDER_LOG (else `contacts.log` in $CLAUDE_CONFIG_DIR or
$CODEX_HOME) (one JSON line) before any
output, so a test can count what was sent.

Lines are printed as they are, after replacing `{{RESET}}` (epoch seconds an hour from now)
and `{{RESET_LOCAL}}` (the same instant in this machine's local time, written as Codex
writes it). Lines starting with `#` are directives: `#sleep SECONDS`, `#exit CODE`,
`#kill` (the process kills itself with SIGKILL), `#stderr TEXT`, `#spawn SECONDS` (a child that sleeps that
long in the provider's process group, as a real CLI's tool process does; its pid is appended to
$FAKE_PROVIDER_LOG.children).
Standalone on purpose: it imports nothing of factory_schedule.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "tui" / "transcripts"
MARKER = re.compile(r"\[transcript: ([A-Za-z0-9_-]+)\]")


def _prompt(provider: str, args: list[str]) -> str:
    if provider == "claude":
        return args[args.index("-p") + 1] if "-p" in args and args.index("-p") + 1 < len(args) else ""
    return args[-1] if args else ""


def _local_words(instant: float) -> str:
    moment = dt.datetime.fromtimestamp(instant)
    day = moment.day
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    hour = moment.hour % 12 or 12
    return f"{moment:%b} {day}{suffix}, {moment.year} {hour}:{moment:%M} {'AM' if moment.hour < 12 else 'PM'}"


def _spawn(seconds: float, log: str | None) -> None:
    child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if log:
        with open(log + ".children", "a", encoding="utf-8") as handle:
            handle.write(f"{child.pid}\n")


def _auth_status() -> int:
    logged_in = os.environ.get("FAKE_CLAUDE_LOGGED_OUT") is None
    document = {"loggedIn": logged_in, "authMethod": "claude.ai" if logged_in else "none"}
    email = os.environ.get("FAKE_CLAUDE_EMAIL", "owner@example.com")
    if logged_in and email:
        document["email"] = email
    print(json.dumps(document))
    return 0


def _config_log(provider: str) -> str | None:
    """Without $FAKE_PROVIDER_LOG, `contacts.log` in the CLI's own configuration folder, when it has one: the
    provider starts with an allow-listed environment, where the CLI's configuration folder always passes."""
    folder = os.environ.get("CLAUDE_CONFIG_DIR" if provider == "claude" else "CODEX_HOME")
    return str(Path(folder) / "contacts.log") if folder else None


def main(provider: str) -> int:
    args = sys.argv[1:]
    if provider == "claude" and args[:2] == ["auth", "status"]:
        return _auth_status()
    if provider == "codex" and args[:2] == ["login", "status"]:
        if os.environ.get("FAKE_CODEX_LOGGED_OUT") is not None:
            print("Not logged in", file=sys.stderr)
            return 1
        print("Logged in using ChatGPT", file=sys.stderr)
        return 0
    prompt = _prompt(provider, args)
    found = MARKER.search(prompt)
    name = found.group(1) if found else os.environ.get("FAKE_TRANSCRIPT", "normal")
    folder = Path(os.environ.get("FAKE_TRANSCRIPTS", TRANSCRIPTS))
    path = folder / provider / f"{name}.jsonl"
    log = os.environ.get("FAKE_PROVIDER_LOG") or _config_log(provider)
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"provider": provider, "transcript": name, "pid": os.getpid(),
                                     "prompt": prompt.splitlines()[0] if prompt else ""}) + "\n")
    reset = int(time.time()) + 3600
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.startswith("#"):
            directive, _, argument = raw[1:].partition(" ")
            if directive == "sleep":
                time.sleep(float(argument))
            elif directive == "exit":
                sys.stdout.flush()
                return int(argument)
            elif directive == "kill":
                sys.stdout.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            elif directive == "stderr":
                print(argument, file=sys.stderr, flush=True)
            elif directive == "spawn":
                _spawn(float(argument), log)
            continue
        line = raw.replace("{{RESET}}", str(reset)).replace("{{RESET_LOCAL}}", _local_words(reset))
        print(line, flush=True)
    return 0
