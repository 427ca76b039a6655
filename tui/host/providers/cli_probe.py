"""Whether a lane's CLI will take tonight's calls, asked of the CLI itself; nothing is sent to a provider.

`run --check` asks, for each lane: the CLI's version (`claude --version`, `codex --version`: it runs at all),
its help for the command a call uses (`claude --help`, `codex exec --help`), which must name every option the
runner passes (a CLI without them fails every call of the night), and its sign-in status (`session.probe`).
An option of the lane's `args` the help does not name is a warning, not a failure: Claude Code takes options
its help hides (`--max-turns`). The answer is the version, or one line saying what would make the night fail
and what fixes it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from factory_schedule.tui.host.provider_environment import provider_environment
from factory_schedule.tui.host.providers import session
from factory_schedule.tui.host.providers.calls import ProviderName, command

PROBE_TIMEOUT_SECONDS = 30.0
SIGN_IN_COMMANDS = {"claude": "claude auth login", "codex": "codex login"}


@dataclass(frozen=True)
class CliCheck:
    version: str | None = None
    problem: str | None = None  # one line: what would make the night fail, and the fix
    warning: str | None = None  # one line: what the help does not confirm


def _ask(argv: list[str], cwd: Path | None, env: Mapping[str, str] | None) -> tuple[int | None, str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS, cwd=cwd,
                              env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, str(error)
    return done.returncode, done.stdout + done.stderr


def options_of(argv: Iterable[str]) -> list[str]:
    """The option names a command line uses (`--model` of `--model=x`), up to a `--` that ends them."""
    names = []
    for arg in argv:
        if arg == "--":
            break
        if arg.startswith("-") and arg != "-":
            names.append(arg.split("=", 1)[0])
    return names


def check_cli(provider: ProviderName, executable: str, args: Iterable[str], workdir: Path | None = None,
              env: Mapping[str, str] | None = None, passed: Sequence[str] = ()) -> CliCheck:
    """Ask the CLI whether a call's command line, with the lane's `args`, will run, and whether it is signed in;
    the CLI starts with the environment a call starts with (the allow-list and the lane's `env` names)."""
    started_with = provider_environment(os.environ if env is None else env, provider, passed)
    code, said = _ask([executable, "--version"], workdir, started_with)
    if code != 0:
        return CliCheck(problem=f"{executable} --version failed ({said.strip()[:120] or f'exit {code}'}): "
                                f"reinstall {provider} or set executable in lane.toml")
    version = said.strip().splitlines()[0] if said.strip() else "?"
    help_argv = [executable, "--help"] if provider == "claude" else [executable, "exec", "--help"]
    code, text = _ask(help_argv, workdir, started_with)
    if code != 0:
        return CliCheck(version, f"{' '.join(help_argv)} failed (exit {code}): this {provider} cannot be read")
    own = [name for name in options_of(command(provider, executable, [])[1:]) if not _names(text, name)]
    if own:
        return CliCheck(version, f"{provider} {version} does not take {', '.join(own)}, which every call uses: "
                                 "install the tested version")
    unnamed = [name for name in options_of(args) if not _names(text, name)]
    warning = (f"{provider} {version}'s help does not name {', '.join(unnamed)} (from args in lane.toml): if "
               "the CLI does not take it, every call fails" if unnamed else None)
    status = session.probe(provider, executable, workdir, env, passed)
    if status.logged_in is False:
        return CliCheck(version, f"{provider} is not signed in: run `{SIGN_IN_COMMANDS[provider]}`, or every "
                                 "segment defers logged-out", warning)
    return CliCheck(version, warning=warning)


def _names(help_text: str, option: str) -> bool:
    """Whether the help names the option as an option (followed by a space, comma, `=` or `[`/`<` or line end)."""
    return any(f"{option}{end}" in help_text for end in (" ", ",", "=", "\n", "[", "<"))
