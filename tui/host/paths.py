"""Where the owner's journal lives unless they name another."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

ENV_JOURNAL = "FACTORY_JOURNAL"


def default_journal_path() -> Path:
    return Path(user_data_dir("factory-schedule", appauthor=False)) / "journal.db"


def default_journal_url() -> str:
    """$FACTORY_JOURNAL when set (a runner inherits it from the tick), else the user data file."""
    from_env = os.environ.get(ENV_JOURNAL)
    if from_env:
        return from_env
    path = default_journal_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return f"sqlite:///{path}"
