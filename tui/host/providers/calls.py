"""One provider call end to end: build the command, run it under its deadline and bound, read the report."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from factory_schedule.tui.host.provider_environment import provider_environment
from factory_schedule.tui.host.providers import claude, codex
from factory_schedule.tui.host.providers.ending import ProcessEnd
from factory_schedule.tui.host.providers.outcome import CallOutcome, lost
from factory_schedule.tui.host.providers.process import CallRun, run_call

ProviderName = Literal["claude", "codex"]
# The schedule's account each provider's subscription is (a task's `account` in the commission).
ACCOUNT_OF: dict[str, str] = {"claude": "claude", "codex": "chatgpt"}


class Stream(Protocol):
    def feed(self, line: str) -> bool: ...

    def outcome(self, end: ProcessEnd, now: float) -> CallOutcome: ...


@dataclass(frozen=True)
class Made:
    outcome: CallOutcome
    run: CallRun


def _stream(provider: ProviderName, bound: int) -> Stream:
    if provider == "claude":
        return claude.ClaudeStream(bound)
    return codex.CodexStream(bound)


def command(provider: ProviderName, executable: str, extra_args: Sequence[str]) -> list[str]:
    """The command line of one call; its prompt goes on the process's stdin."""
    if provider == "claude":
        return claude.command(executable, list(extra_args))
    return codex.command(executable, list(extra_args))


def make_call(
    provider: ProviderName,
    executable: str,
    prompt: str,
    bound: int,
    timeout_seconds: float,
    extra_args: Sequence[str] = (),
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    transcript: Path | None = None,
    now: Callable[[], float] = time.time,
    passed: Sequence[str] = (),
) -> Made:
    """Contact the provider once. Call this only with a fresh admission (`dispatch: true`). The provider starts
    with the allow-listed part of `env` (default: this process's environment) and the names in `passed`."""
    stream = _stream(provider, bound)
    started_with = provider_environment(os.environ if env is None else env, provider, passed)
    run = run_call(command(provider, executable, extra_args), stream.feed, timeout_seconds, cwd, started_with,
                   transcript, stdin_text=prompt)
    if run.start_error is not None:
        # Nothing started, but the admission was spent: the schedule cannot tell, so the work is never re-sent.
        return Made(lost(f"the provider could not be started: {run.start_error}"), run)
    return Made(stream.outcome(run.end, now()), run)
