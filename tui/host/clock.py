"""The host's clock and zone: the one place the program reads the time (core only ever gets it injected)."""

from __future__ import annotations

import os

import pendulum


class SystemClock:
    """Now, in UTC."""

    def now(self) -> pendulum.DateTime:
        return pendulum.now("UTC")


def host_zone() -> str | None:
    """This machine's IANA zone: $TZ (a leading ':' dropped), else where /etc/localtime links; None if unknown.

    launchd fires in this zone, so it is never silently taken to be the commission's."""
    from_env = os.environ.get("TZ", "").lstrip(":")
    if from_env:
        return from_env
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return None
    marker = "zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else None
