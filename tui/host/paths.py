"""Where the owner's journal lives unless they name another, which file a SQLite URL names, and where the files
that belong to a journal (its runs' logs, what was notified) are kept."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from urllib.parse import unquote

ENV_JOURNAL = "FACTORY_JOURNAL"
_SQLITE_FILE = re.compile(r"^sqlite(\+\w+)?:///(?P<path>[^?]*)")


def default_journal_path() -> Path:
    from platformdirs import user_data_dir  # only when no journal is named: it costs every command's start-up

    return Path(user_data_dir("factory-schedule", appauthor=False)) / "journal.db"


def default_journal_url() -> str:
    """$FACTORY_JOURNAL when set (a runner inherits it from the tick), else the user data file."""
    from_env = os.environ.get(ENV_JOURNAL)
    if from_env:
        return from_env
    path = default_journal_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return f"sqlite:///{path}"


def sqlite_file_of(url: str) -> str | None:
    """The file a `sqlite:///path` URL names (read without SQLAlchemy, which costs start-up time); None
    for any other URL, or one that names no file (the store refuses those itself)."""
    match = _SQLITE_FILE.match(url)
    if match is None or not match["path"] or match["path"] == ":memory:":
        return None
    return unquote(match["path"])


def beside_journal(journal_url: str, suffix: str, server_stem: str, server_extension: str = "") -> Path:
    """A file or folder that belongs to the journal: beside a SQLite file (`<file><suffix>`); for a server's
    journal, in the user data folder, named `<server_stem>-<the URL's digest><server_extension>`, so that two
    journals never share one."""
    path = sqlite_file_of(journal_url)
    if path is not None:
        return Path(os.path.expanduser(path + suffix))
    from platformdirs import user_data_dir  # not at import: it costs every command's start-up

    digest = hashlib.sha256(journal_url.encode()).hexdigest()[:16]
    return Path(user_data_dir("factory-schedule", appauthor=False)) / f"{server_stem}-{digest}{server_extension}"
