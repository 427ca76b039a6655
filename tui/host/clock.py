"""The host's clock and zone: the one place the program reads the time (core only ever gets it injected)."""

from __future__ import annotations

import os

import pendulum

from factory_schedule.core import DEFAULT_ZONE, is_valid_zone


class SystemClock:
    """Now, in UTC."""

    def now(self) -> pendulum.DateTime:
        return pendulum.now("UTC")


def host_zone() -> str | None:
    """This machine's IANA zone: $TZ (a leading ':' dropped), else where /etc/localtime links; None if unknown,
    or when it names no zone the zone database knows (a POSIX rule such as `CET-1CEST`): everything that shows
    or compares it takes it as a zone.

    launchd fires in this zone, so it is never silently taken to be the commission's."""
    found = os.environ.get("TZ", "").lstrip(":")
    if not found:
        try:
            target = os.path.realpath("/etc/localtime")
        except OSError:
            return None
        marker = "zoneinfo/"
        found = target.split(marker, 1)[1] if marker in target else ""
    return found if found and is_valid_zone(found) else None


def owner_zone() -> str:
    """The zone a proposed commission takes: this machine's (where its owner most likely lives), or the proposal's
    default where it has none."""
    return host_zone() or DEFAULT_ZONE
