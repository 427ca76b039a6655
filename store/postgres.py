"""The journal on PostgreSQL (filled in by issue 8)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .errors import JournalOpenError
from .journal import Journal


def open_postgres(url: str, parsed: Any, ensure_schema: Callable[[Journal, str], None]) -> Journal:
    raise JournalOpenError("PostgreSQL journals are not supported by this build yet")
