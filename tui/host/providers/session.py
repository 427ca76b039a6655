"""The sign-in a provider CLI reports for its session, asked once per segment before any admission.

Claude Code: `claude auth status` prints JSON with `loggedIn` and, for a subscription sign-in, the account's
`email`: that email is the sign-in passed to `admit_call`. Codex: `codex login status` says only whether and how
it is signed in ("Logged in using ChatGPT"), never as whom: the owner's configured `sign_in` is passed. Either
way a CLI that says it is signed out defers the segment `logged-out` before anything is asked or sent.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from factory_schedule.tui.host.provider_environment import provider_environment
from factory_schedule.tui.host.providers import claude
from factory_schedule.tui.host.providers.calls import ProviderName

PROBE_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class SessionStatus:
    logged_in: bool | None  # None: the CLI did not say
    sign_in: str | None     # the identity the CLI reports, when it reports one


def observed_sign_in(status: SessionStatus, configured: str) -> str:
    """The sign-in a segment passes to `admit_call`: the CLI's own report where it gives one, else the owner's
    configured `sign_in` (lane.toml)."""
    return status.sign_in or configured


def probe(provider: ProviderName, executable: str, cwd: Path | None = None,
          env: Mapping[str, str] | None = None, passed: Sequence[str] = ()) -> SessionStatus:
    """Ask the CLI for its session, started with the same allow-listed environment as a call."""
    argv = claude.auth_status_command(executable) if provider == "claude" else [executable, "login", "status"]
    started_with = provider_environment(os.environ if env is None else env, provider, passed)
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS, cwd=cwd,
                              env=started_with, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return SessionStatus(None, None)
    if provider == "claude":
        logged_in, email = claude.sign_in_from_auth_status(done.stdout)
        return SessionStatus(logged_in, email)
    said = (done.stdout + done.stderr).lower()
    if "not logged in" in said:
        return SessionStatus(False, None)
    if done.returncode == 0 and "logged in" in said:
        return SessionStatus(True, None)
    return SessionStatus(None, None)
