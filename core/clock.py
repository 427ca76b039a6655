"""Clocks. The engine reads time only through an injected object with `now()`."""

from __future__ import annotations

from typing import Any, Protocol

import pendulum
from pendulum import DateTime


class Clock(Protocol):
    def now(self) -> DateTime: ...


def as_utc(instant: DateTime) -> DateTime:
    if instant.tzinfo is None:
        raise ValueError("an instant needs a zone")
    if type(instant) is DateTime and type(instant.tzinfo) is pendulum.Timezone and instant.tzinfo.name == "UTC":
        return instant  # already what the conversion would give (an equal DateTime in UTC): read every command
    return pendulum.instance(instant).in_timezone("UTC")


class ManualClock:
    """A clock that moves only when told to: tests, the demo and the year simulation."""

    def __init__(self, start: DateTime | str) -> None:
        self._now = as_utc(pendulum.parse(start) if isinstance(start, str) else start)  # type: ignore[arg-type]

    def now(self) -> DateTime:
        return self._now

    def set(self, instant: DateTime | str) -> None:
        self._now = as_utc(pendulum.parse(instant) if isinstance(instant, str) else instant)  # type: ignore[arg-type]

    def advance(self, **duration: Any) -> DateTime:
        self._now = self._now.add(**duration)
        return self._now
