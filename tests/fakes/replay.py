"""Replay a recorded JSON-line transcript as the `claude` or `codex` command line would print it.

The fake `claude` and `codex` executables beside this file call `main(provider)`.
The transcript is `$FAKE_TRANSCRIPTS/<provider>/<name>.jsonl` (default: tests/fakes/transcripts),
where <name> comes from a `[transcript: NAME]` marker in the prompt, else $FAKE_TRANSCRIPT,
else `normal`. Each contact is appended to $FAKE_PROVIDER_LOG (else `contacts.log` in $CLAUDE_CONFIG_DIR or
$CODEX_HOME) (one JSON line) before any
output, so a test can count what was sent.

Lines are printed as they are, after replacing `{{RESET}}` (epoch seconds an hour from now)
and `{{RESET_LOCAL}}` (the same instant in this machine's local time, written as Codex
writes it). Lines starting with `#` are directives: `#sleep SECONDS`, `#exit CODE`,
`#kill` (the process kills itself with SIGKILL), `#stderr TEXT`, `#spawn SECONDS` (a child that sleeps that
long in the provider's process group, as a real CLI's tool process does; its pid is appended to
$FAKE_PROVIDER_LOG.children), `#detach SECONDS` (the same child in a session of its own, as Claude Code
2.1.197's shell tool starts each command: `detached: true`, so setsid), `#bigline BYTES` (one line of that
many bytes, written a megabyte at a time: the fake never holds it whole).
Standalone on purpose: it imports nothing of factory_schedule.

The command line is parsed as the real CLIs parse theirs (`claude` with commander, `codex exec` with clap):
an argument starting with `-` that is not one of their options is refused with their own words and exit
status, `--` ends the options, a value option takes the next argument, a variadic one every argument up to
the next option, and a missing prompt (or codex's `-`) is read from stdin. `codex exec` outside a git
repository refuses to run unless `--skip-git-repo-check` is given, and refuses a flag given twice.
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

TRANSCRIPTS = Path(__file__).resolve().parent / "transcripts"
MARKER = re.compile(r"\[transcript: ([A-Za-z0-9_-]+)\]")


# Claude Code's options (`claude --help`, 2.1.197) that the runner or an owner's `args` may use.
CLAUDE_FLAGS = {"-p", "--print", "--verbose", "--dangerously-skip-permissions", "--include-partial-messages",
                "--no-session-persistence", "--bare", "-c", "--continue", "--strict-mcp-config"}
CLAUDE_VALUES = {"--output-format", "--model", "--permission-mode", "--append-system-prompt", "--system-prompt",
                 "--fallback-model", "--max-budget-usd", "--effort", "--input-format", "--settings",
                 "--session-id", "--json-schema", "--setting-sources", "-n", "--name"}
CLAUDE_VARIADIC = {"--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools", "--add-dir",
                   "--tools", "--mcp-config", "--betas"}
# `codex exec`'s options (`codex exec --help`, 0.171.0).
CODEX_FLAGS = {"--json", "--skip-git-repo-check", "--full-auto", "--dangerously-bypass-approvals-and-sandbox",
               "--ephemeral", "--oss", "--strict-config", "--ignore-user-config", "--ignore-rules", "--trust"}
CODEX_VALUES = {"-c", "--config", "-m", "--model", "-s", "--sandbox", "-C", "--cd", "-p", "--profile",
                "--color", "-o", "--output-last-message", "--output-schema", "--add-dir", "--enable", "--disable",
                "--local-provider", "-i", "--image"}
NOT_TRUSTED = "Not inside a trusted directory and --skip-git-repo-check was not specified."


class Refused(Exception):
    """The command line is refused as the real CLI refuses it: its words, its exit status."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _parse(provider: str, args: list[str]) -> tuple[list[str], list[str]]:
    """(the options given, the positional arguments), or Refused as the real parser would."""
    flags, values, variadic = ((CLAUDE_FLAGS, CLAUDE_VALUES, CLAUDE_VARIADIC) if provider == "claude"
                               else (CODEX_FLAGS, CODEX_VALUES, set()))
    options: list[str] = []
    positional: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--":
            positional.extend(rest)
            break
        if arg == "-" or not arg.startswith("-"):
            positional.append(arg)
            continue
        name = arg.split("=", 1)[0] if arg.startswith("--") else arg
        if name in flags and name == arg:
            if provider == "codex" and name in options:
                raise Refused(f"error: the argument '{name}' cannot be used multiple times", 2)
            options.append(name)
        elif name in values:
            options.append(name)
            if name == arg:
                if not rest:
                    raise Refused(f"error: option '{name}' argument missing" if provider == "claude" else
                                  f"error: a value is required for '{name}' but none was supplied", 1 if
                                  provider == "claude" else 2)
                rest.pop(0)
        elif name in variadic:
            options.append(name)
            while rest and not rest[0].startswith("-"):
                rest.pop(0)
        elif provider == "claude":
            raise Refused(f"error: unknown option '{arg}'", 1)
        else:
            raise Refused(f"error: unexpected argument '{arg}' found", 2)
    return options, positional


def _inside_git_repository(folder: Path) -> bool:
    return any((parent / ".git").exists() for parent in (folder, *folder.parents))


def _prompt(provider: str, args: list[str]) -> str:
    """The prompt the real CLI would send, read as it reads it; Refused where it refuses the command line."""
    if provider == "codex":
        if args[:1] != ["exec"]:
            raise Refused("this fake plays `codex exec` only", 2)
        options, positional = _parse(provider, args[1:])
        if "--skip-git-repo-check" not in options and not _inside_git_repository(Path.cwd()):
            raise Refused(NOT_TRUSTED, 1)
    else:
        options, positional = _parse(provider, args)
        if "-p" not in options and "--print" not in options:
            raise Refused("this fake plays `claude -p` only", 1)
    if len(positional) > 1:
        raise Refused(f"error: unexpected argument '{positional[1]}' found" if provider == "codex"
                      else "error: too many arguments", 2 if provider == "codex" else 1)
    if not positional or positional[0] == "-":
        return sys.stdin.read()
    return positional[0]


def _local_words(instant: float) -> str:
    moment = dt.datetime.fromtimestamp(instant)
    day = moment.day
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    hour = moment.hour % 12 or 12
    return f"{moment:%b} {day}{suffix}, {moment.year} {hour}:{moment:%M} {'AM' if moment.hour < 12 else 'PM'}"


def _spawn(seconds: float, log: str | None, own_session: bool = False) -> None:
    child = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=own_session)
    if log:
        with open(log + ".children", "a", encoding="utf-8") as handle:
            handle.write(f"{child.pid}\n")


def _auth_status() -> int:
    """`claude auth status` as Claude Code 2.1.197 prints it (its JSON, two-space indented; exit 1 when logged
    out): `email`, `orgId`, `orgName` and `subscriptionType` only for a claude.ai sign-in, each possibly null."""
    logged_in = os.environ.get("FAKE_CLAUDE_LOGGED_OUT") is None
    document: dict[str, object] = {"loggedIn": logged_in, "authMethod": "claude.ai" if logged_in else "none",
                                   "apiProvider": "firstParty"}
    if logged_in:
        document.update(email=_signed_in_as() or None,
                        orgId="00000000-0000-4000-8000-000000000000", orgName="Owner's Organization",
                        subscriptionType="max")
    print(json.dumps(document, indent=2))
    return 0 if logged_in else 1


def _config_folder(provider: str) -> Path | None:
    """The CLI's own configuration folder ($CLAUDE_CONFIG_DIR or ~/.claude, $CODEX_HOME or ~/.codex), when it
    exists: the provider starts with an allow-listed environment, where HOME and these always pass, so a test
    can set the fake up there as a real CLI is set up."""
    named = os.environ.get("CLAUDE_CONFIG_DIR" if provider == "claude" else "CODEX_HOME")
    folder = Path(named) if named else Path.home() / (".claude" if provider == "claude" else ".codex")
    return folder if folder.is_dir() else None


def _config_log(provider: str) -> str | None:
    """Without $FAKE_PROVIDER_LOG, `contacts.log` in the CLI's configuration folder when a test set the fake up
    there (named by $CLAUDE_CONFIG_DIR / $CODEX_HOME, or holding its `sign-in` file): never a real ~/.claude."""
    folder = _config_folder(provider)
    named = os.environ.get("CLAUDE_CONFIG_DIR" if provider == "claude" else "CODEX_HOME")
    return str(folder / "contacts.log") if folder and (named or (folder / "sign-in").exists()) else None


def _signed_in_as() -> str:
    """$FAKE_CLAUDE_EMAIL, else the `sign-in` file in the configuration folder, else owner@example.com."""
    folder = _config_folder("claude")
    configured = folder / "sign-in" if folder else None
    default = configured.read_text().strip() if configured and configured.exists() else "owner@example.com"
    return os.environ.get("FAKE_CLAUDE_EMAIL", default)


VERSIONS = {"claude": "2.1.197 (Claude Code)", "codex": "codex-cli 0.171.0"}


def _help(provider: str) -> str:
    """A help text naming the options as the real CLI's help does, one per line."""
    if provider == "claude":
        names = sorted(CLAUDE_FLAGS | CLAUDE_VALUES | CLAUDE_VARIADIC)
        head = "Usage: claude [options] [command] [prompt]"
    else:
        names = sorted(CODEX_FLAGS | CODEX_VALUES)
        head = "Usage: codex exec [OPTIONS] [PROMPT]"
    return head + "\n\nOptions:\n" + "".join(f"  {name} \n" for name in names)


def main(provider: str) -> int:
    args = sys.argv[1:]
    if args in (["--version"], ["-V"] if provider == "codex" else ["-v"]):
        print(VERSIONS[provider])
        return 0
    if args in (["--help"], ["exec", "--help"]) and (args[0] == "exec") == (provider == "codex"):
        print(_help(provider))
        return 0
    if provider == "claude" and args[:2] == ["auth", "status"]:
        return _auth_status()
    if provider == "codex" and args[:2] == ["login", "status"]:
        if os.environ.get("FAKE_CODEX_LOGGED_OUT") is not None:
            print("Not logged in", file=sys.stderr)
            return 1
        print("Logged in using ChatGPT", file=sys.stderr)
        return 0
    try:
        prompt = _prompt(provider, args)
    except Refused as refused:
        print(refused, file=sys.stderr)
        return refused.code
    found = MARKER.search(prompt)
    name = found.group(1) if found else os.environ.get("FAKE_TRANSCRIPT", "normal")
    folder = Path(os.environ.get("FAKE_TRANSCRIPTS", TRANSCRIPTS))
    path = folder / provider / f"{name}.jsonl"
    log = os.environ.get("FAKE_PROVIDER_LOG") or _config_log(provider)
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"provider": provider, "transcript": name, "pid": os.getpid(),
                                     "prompt": prompt.splitlines()[0] if prompt else "", "sent": prompt,
                                     "argv": args}) + "\n")
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
            elif directive == "bigline":
                left = int(argument)
                while left > 0:
                    chunk = min(left, 1 << 20)
                    sys.stdout.write("x" * chunk)
                    left -= chunk
                sys.stdout.write("\n")
                sys.stdout.flush()
            elif directive == "spawn":
                _spawn(float(argument), log)
            elif directive == "detach":
                _spawn(float(argument), log, own_session=True)
            continue
        line = raw.replace("{{RESET}}", str(reset)).replace("{{RESET_LOCAL}}", _local_words(reset))
        print(line, flush=True)
    return 0
