"""The host's clock: the one place the program reads the time (core only ever gets it injected)."""

from __future__ import annotations

import pendulum


class SystemClock:
    """Now, in UTC."""

    def now(self) -> pendulum.DateTime:
        return pendulum.now("UTC")
