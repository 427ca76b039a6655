"""Shared by the provider and run tests: the fake `claude` and `codex` executables on PATH."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FAKES = REPO / "tests" / "fakes"
TRANSCRIPTS = REPO / "tests" / "fakes" / "transcripts"


# The fakes' own settings: a test passes them to the provider as an owner passes a name in lane.toml's `env`
# (the provider starts with an allow-listed environment, so nothing else reaches it).
FAKE_SETTINGS = ("FAKE_PROVIDER_LOG", "FAKE_TRANSCRIPT", "FAKE_TRANSCRIPTS", "FAKE_CLAUDE_LOGGED_OUT",
                 "FAKE_CLAUDE_EMAIL", "FAKE_CODEX_LOGGED_OUT", "FAKE_PROVIDER_MODE", "FAKE_PROVIDER_ANSWER")
FAKE_LANE_ENV = "env = [" + ", ".join(f'"{name}"' for name in FAKE_SETTINGS) + "]\n"


def fake_path(base: str | None = None) -> str:
    """PATH with the fake provider executables first."""
    return str(FAKES) + os.pathsep + (base if base is not None else os.environ.get("PATH", ""))


def fake_env(log: Path | None = None, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = fake_path()
    if log is not None:
        env["FAKE_PROVIDER_LOG"] = str(log)
    env.update(extra)
    return env
