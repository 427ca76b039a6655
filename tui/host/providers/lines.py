"""The JSON-lines stream both provider CLIs print: one event object per line, each with a `type`.

A line that is not JSON, or not such an object, makes the call's outcome doubtful (the first doubt is kept,
for the report); blank lines are nothing. Each provider's reader adds what its events mean.
"""

from __future__ import annotations

import json
from typing import Any


class EventLines:
    """Counts the lines read and keeps the first doubt; `event` turns one line into its event, or None."""

    def __init__(self) -> None:
        self.doubt: str | None = None
        self.lines = 0

    def _doubt(self, why: str) -> None:
        if self.doubt is None:
            self.doubt = why

    def event(self, line: str) -> dict[str, Any] | None:
        if not line.strip():
            return None
        self.lines += 1
        try:
            event = json.loads(line)
        except ValueError:
            self._doubt(f"line {self.lines} is not JSON")
            return None
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            self._doubt(f"line {self.lines} is not an event")
            return None
        return event
