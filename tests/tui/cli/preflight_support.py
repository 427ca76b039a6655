"""Shared by the preflight's tests and the README's five commands: a zone in which the night is starting now."""

from __future__ import annotations

import pendulum


def zone_where_it_is_two_am() -> str:
    """An Etc/GMT zone in which the local hour is 02 now (Etc/GMT-8 is UTC+8: the sign is POSIX's), so a
    commission `commission new` proposes there has its first lanes due now (the CLI reads the system clock)."""
    offset = (2 - pendulum.now("UTC").hour) % 24
    if offset > 14:
        offset -= 24
    return "Etc/UTC" if offset == 0 else f"Etc/GMT{-offset:+d}"
