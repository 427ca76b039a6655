"""The LaunchAgent's text: when launchd fires the tick, as plist XML. Returned, never written or loaded.

launchd reads StartCalendarInterval in the Mac's own zone, so the intervals are
the commission's local lane times only when the Mac runs in the commission's zone;
`launch_intervals` refuses to produce them for any other host zone rather than
fire an hour (or a day) off.

launchd's Weekday counts 0 = Sunday .. 6 = Saturday (7 is also Sunday); these
dicts always use 0 for Sunday. A basic lane fires every day, so it is one dict
without Weekday; a weekly lane's time already covered by a daily one is dropped.
"""

from __future__ import annotations

import plistlib
import re
from typing import Any

from .commission import Commission, parse_commission
from .errors import invalid
from .zones import is_valid_zone, parse_wall_time

LAUNCHD_SUNDAY = 0
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_SPEC_KEYS = {
    "label": "Label",
    "program_arguments": "ProgramArguments",
    "start_calendar_interval": "StartCalendarInterval",
    "standard_out_path": "StandardOutPath",
    "standard_error_path": "StandardErrorPath",
    "environment_variables": "EnvironmentVariables",
}
_REQUIRED_SPEC_KEYS = ("label", "program_arguments", "start_calendar_interval")
_INTERVAL_RANGES = {"Weekday": (0, 7), "Hour": (0, 23), "Minute": (0, 59)}


def launchd_weekday(iso_weekday: int) -> int:
    """ISO 1 = Monday .. 7 = Sunday to launchd's 0 = Sunday .. 6 = Saturday."""
    return iso_weekday % 7


def _interval_order(interval: dict[str, int]) -> tuple[int, int, int]:
    return (interval.get("Weekday", -1), interval["Hour"], interval["Minute"])


def launch_intervals(commission: dict[str, Any] | Commission, host_zone: str) -> list[dict[str, int]]:
    """The StartCalendarInterval dicts that fire at every lane time; INVALID for a host in another zone."""
    parsed = parse_commission(commission)
    if not is_valid_zone(host_zone):
        raise invalid(f"host zone {host_zone!r} is not an IANA zone name")
    if host_zone != parsed.zone:
        raise invalid(
            f"the host runs in {host_zone} but the commission's zone is {parsed.zone}: launchd fires in the host's "
            "zone, so its intervals would be off; set the Mac's zone or the commission's"
        )
    daily: set[tuple[int, int]] = set()
    weekly: set[tuple[int, int, int]] = set()
    for lane in parsed.lanes:
        hour, minute = parse_wall_time(lane.time)
        if lane.weekday is None:
            daily.add((hour, minute))
        else:
            weekly.add((launchd_weekday(lane.weekday), hour, minute))
    intervals = [{"Hour": hour, "Minute": minute} for hour, minute in daily]
    intervals += [
        {"Weekday": weekday, "Hour": hour, "Minute": minute}
        for weekday, hour, minute in weekly
        if (hour, minute) not in daily
    ]
    return sorted(intervals, key=_interval_order)


def _check_interval(interval: object, index: int) -> dict[str, int]:
    if not isinstance(interval, dict) or not interval:
        raise invalid(f"start_calendar_interval[{index}]: a non-empty dict is needed")
    for key, value in interval.items():
        if key not in _INTERVAL_RANGES:
            raise invalid(f"start_calendar_interval[{index}].{key}: only Weekday, Hour and Minute are rendered")
        low, high = _INTERVAL_RANGES[key]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise invalid(f"start_calendar_interval[{index}].{key}: an integer {low}-{high} is needed, got {value!r}")
    return dict(interval)


def _check_path(key: str, value: object) -> str:
    if not isinstance(value, str) or not value.startswith("/") or "\x00" in value:
        raise invalid(f"{key}: an absolute path is needed, got {value!r}")
    return value


def _plain_string(key: str, value: object) -> str:
    if not isinstance(value, str) or "\x00" in value:
        raise invalid(f"{key}: a string is needed, got {value!r}")
    return value


def render_launch_agent_plist(spec: dict[str, Any]) -> str:
    """The LaunchAgent plist (XML text) for a spec with snake_case keys named after launchd's.

    spec: label (reverse-DNS), program_arguments (non-empty list of strings, the first an absolute
    path), start_calendar_interval (list of dicts as launch_intervals returns), and optionally
    standard_out_path, standard_error_path (absolute paths) and environment_variables (str -> str).
    """
    if not isinstance(spec, dict):
        raise invalid("spec: a dict is needed")
    unknown = sorted(set(spec) - set(_SPEC_KEYS))
    if unknown:
        raise invalid(f"{unknown[0]}: not a rendered key (one of {', '.join(_SPEC_KEYS)})")
    for key in _REQUIRED_SPEC_KEYS:
        if key not in spec:
            raise invalid(f"{key}: required")
    label = spec["label"]
    if not isinstance(label, str) or _LABEL.match(label) is None:
        raise invalid(f"label: a reverse-DNS label such as 'com.example.factory-schedule' is needed, got {label!r}")
    arguments = spec["program_arguments"]
    if not isinstance(arguments, list | tuple) or not arguments:
        raise invalid("program_arguments: a non-empty list of strings is needed")
    arguments = [_plain_string(f"program_arguments[{n}]", value) for n, value in enumerate(arguments)]
    _check_path("program_arguments[0]", arguments[0])
    intervals = spec["start_calendar_interval"]
    if not isinstance(intervals, list | tuple) or not intervals:
        raise invalid("start_calendar_interval: a non-empty list of intervals is needed")
    plist: dict[str, Any] = {
        "Label": label,
        "ProgramArguments": arguments,
        "StartCalendarInterval": [_check_interval(interval, n) for n, interval in enumerate(intervals)],
    }
    for key in ("standard_out_path", "standard_error_path"):
        if spec.get(key) is not None:
            plist[_SPEC_KEYS[key]] = _check_path(key, spec[key])
    environment = spec.get("environment_variables")
    if environment is not None:
        if not isinstance(environment, dict):
            raise invalid("environment_variables: a dict of strings is needed")
        plist["EnvironmentVariables"] = {
            _plain_string("environment_variables", name): _plain_string(f"environment_variables.{name}", value)
            for name, value in environment.items()
        }
    return plistlib.dumps(plist, fmt=plistlib.FMT_XML, sort_keys=True).decode("utf-8")
