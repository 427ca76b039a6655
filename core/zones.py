"""Zone arithmetic: local dates, wall times and ISO weeks in the commission's zone.

An occurrence's identity is its local date or ISO week, so an hour's error here
double-runs a night or skips one. Instants are pendulum DateTimes in UTC; local
dates are pendulum Dates; wall times are "HH:MM".

A local wall time is resolved by the *compatible* rule (Temporal's name for it):
a time inside a gap (spring forward) moves forward by the gap, and a time that
happens twice (fall back) takes its earlier instant. pendulum's own `fold`
default gets one direction right and the other wrong, so `zoned_instant` does
not rely on fold at all: it asks the zone for the offsets on both sides of the
wall time and picks the instant by the rule, explicitly.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re

import pendulum
from pendulum import Date, DateTime

from .errors import invalid

_DATE_PATTERN = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_WALL_TIME_PATTERN = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
_WEEK_PATTERN = re.compile(r"^(\d{4})-W(\d{2})$")
# IANA names only: Area/Location[/Sub], or single names such as "UTC". Names that
# are aliases of the host's own setting or of leap-second tables are refused, so a
# zone means the same thing on every machine.
_ZONE_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+){0,2}$")
_HOST_DEPENDENT_ZONES = frozenset({"localtime", "posixrules", "Factory"})
_HOST_DEPENDENT_PREFIXES = ("posix/", "right/", "SystemV/")

_UTC = pendulum.UTC


def parse_local_date(value: object) -> Date:
    """A local date from a pendulum/stdlib date or a strict "YYYY-MM-DD" string (INVALID otherwise).

    A datetime is refused: it is an instant, and which date it names depends on a zone.
    """
    if isinstance(value, _dt.datetime):
        raise invalid(f"a local date is needed, not an instant: {value!r}")
    if isinstance(value, _dt.date):
        return Date(value.year, value.month, value.day)
    if not isinstance(value, str):
        raise invalid(f"a local date must be 'YYYY-MM-DD', got {type(value).__name__}")
    match = _DATE_PATTERN.match(value)
    if match is None:
        raise invalid(f"a local date must be 'YYYY-MM-DD', got {value!r}")
    try:
        return Date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        raise invalid(f"no such date: {value!r}") from None


def parse_wall_time(value: object) -> tuple[int, int]:
    """(hour, minute) from a strict 24-hour "HH:MM" (INVALID otherwise)."""
    if not isinstance(value, str):
        raise invalid(f"a wall time must be 'HH:MM', got {type(value).__name__}")
    match = _WALL_TIME_PATTERN.match(value)
    if match is None:
        raise invalid(f"a wall time must be 'HH:MM' (00:00-23:59), got {value!r}")
    return int(match.group(1)), int(match.group(2))


@functools.lru_cache(maxsize=256)
def _load_zone(zone: str) -> pendulum.Timezone | None:
    """The zone's rules, loaded once per name (pendulum re-reads the zone file on every call otherwise)."""
    if _ZONE_PATTERN.match(zone) is None:
        return None
    if zone in _HOST_DEPENDENT_ZONES or zone.startswith(_HOST_DEPENDENT_PREFIXES):
        return None
    try:
        return pendulum.timezone(zone)
    except Exception:
        return None


def is_valid_zone(zone: object) -> bool:
    """True for an IANA zone name pendulum's zone data knows and whose meaning is host-independent."""
    return isinstance(zone, str) and _load_zone(zone) is not None


def _zone(zone: object) -> pendulum.Timezone:
    loaded = _load_zone(zone) if isinstance(zone, str) else None
    if loaded is None:
        raise invalid(f"unknown zone {zone!r} (an IANA name such as 'Europe/London' is needed)")
    return loaded


def _local(instant: object, tz: _dt.tzinfo) -> _dt.datetime:
    """The instant's wall reading in a zone, by the standard library's conversion on a plain copy of it:
    the same fields pendulum's conversion gives, without building pendulum objects on the way (and not
    `datetime.astimezone` on a pendulum DateTime itself, whose own arithmetic it would call)."""
    if not isinstance(instant, _dt.datetime) or instant.tzinfo is None or (
            instant.tzinfo is not _UTC and instant.utcoffset() is None):  # UTC, the engine's clock, has an offset
        raise invalid(f"an instant with a zone is needed, got {instant!r}")
    plain = _dt.datetime(instant.year, instant.month, instant.day, instant.hour, instant.minute, instant.second,
                         instant.microsecond, instant.tzinfo, fold=instant.fold)
    return plain.astimezone(tz)


def zoned_instant(zone: str, date: _dt.date | str, time: str) -> DateTime:
    """The UTC instant of a local wall time on a local date, by the compatible rule."""
    tz = _zone(zone)
    day = parse_local_date(date)
    hour, minute = parse_wall_time(time)
    wall = _dt.datetime(day.year, day.month, day.day, hour, minute)
    # The zone's offsets on either side of this wall time (PEP 495 folds): equal when the
    # wall time is ordinary, different when it falls in a gap or a repeated hour.
    offsets = {tz.utcoffset(wall.replace(fold=fold)) for fold in (0, 1)}
    try:
        candidates = sorted(wall - offset for offset in offsets if offset is not None)  # naive UTC readings
    except OverflowError:
        raise invalid(f"{day} {time} in {zone} is outside the representable range") from None
    real = [candidate for candidate in candidates if _wall_of(tz, candidate) == wall]
    # Repeated: the earlier real instant. Gap: no candidate is real; subtracting the offset in
    # force before the transition (the smaller one, so the later candidate) moves it forward by the gap.
    chosen = real[0] if real else candidates[-1]
    return DateTime(chosen.year, chosen.month, chosen.day, chosen.hour, chosen.minute, chosen.second,
                    chosen.microsecond, tzinfo=_UTC)


def _wall_of(tz: _dt.tzinfo, naive_utc: _dt.datetime) -> _dt.datetime:
    return naive_utc.replace(tzinfo=_dt.UTC).astimezone(tz).replace(tzinfo=None, fold=0)


def local_date_of(zone: str, instant: _dt.datetime) -> Date:
    """The local date an instant falls on in a zone."""
    local = _local(instant, _zone(zone))
    return Date(local.year, local.month, local.day)


def local_wall_of(zone: str, instant: _dt.datetime) -> tuple[Date, str]:
    """The local date and "HH:MM" an instant reads as in a zone (seconds dropped)."""
    local = _local(instant, _zone(zone))
    return Date(local.year, local.month, local.day), f"{local.hour:02d}:{local.minute:02d}"


def local_words(zone: str, instant: _dt.datetime | str) -> str:
    """An instant as the owner reads it: its local date and time in the zone, and the zone
    ("2026-12-04 02:00 America/Chicago"); a stored instant's text is read first."""
    moment = _dt.datetime.fromisoformat(instant) if isinstance(instant, str) else instant
    date, time = local_wall_of(zone, moment)
    return f"{date.to_date_string()} {time} {zone}"


def iso_week_of(date: _dt.date | str) -> str:
    """The ISO 8601 week a local date belongs to, as "YYYY-Www" (the week's year, not the date's)."""
    day = parse_local_date(date)
    year, week, _weekday = day.isocalendar()
    return f"{year:04d}-W{week:02d}"


def monday_of_week(week: object) -> Date:
    """The Monday that opens an ISO week "YYYY-Www"; INVALID for a week its year does not have."""
    if not isinstance(week, str) or (match := _WEEK_PATTERN.match(week)) is None:
        raise invalid(f"an ISO week must be 'YYYY-Www', got {week!r}")
    year, number = int(match.group(1)), int(match.group(2))
    try:
        monday = _dt.date.fromisocalendar(year, number, 1)
    except ValueError:
        raise invalid(f"no such ISO week: {week!r}") from None
    return Date(monday.year, monday.month, monday.day)


def is_valid_week(week: object) -> bool:
    try:
        monday_of_week(week)
    except Exception:
        return False
    return True
