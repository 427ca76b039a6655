"""What Claude Code's error texts say, read in its own words (a `result` line's text or `errors[]`).

Claude Code 2.1.x writes some answers only as text: a logged-out session ends with "Not logged in · Please run
/login" and `api_error_status: null` (its assistant line carries `"error": "authentication_failed"`); a
subscription's limit with "You've hit your limit · resets 1am (Europe/Berlin)" (also "resets Jan 18, 11:30am
(Asia/Calcutta)" and "resets Apr 23 at 4pm (America/Recife)"); a provider it could not reach with "API Error:
Unable to connect to API (ConnectionRefused)", the cause in parentheses. These are read here, each into what
the runner records; a text this does not know stays unknown.
"""

from __future__ import annotations

import re
from typing import Literal

import pendulum

SIGN_IN_ERRORS = ("authentication_failed", "oauth_org_not_allowed")
SIGN_IN_WORDS = ("not logged in", "please run /login", "invalid api key", "oauth token has expired",
                 "oauth token revoked", "authentication_error")
LIMIT_ERRORS = ("rate_limit",)
LIMIT_WORDS = ("hit your limit", "usage limit reached", "rate_limit_error", "exceed your account's rate limit")
# The causes Claude Code names after "Unable to connect to API" that happen before any byte of a request is
# written (the socket never opened, or the name never resolved): conclusive evidence that nothing was sent.
NOTHING_SENT_CAUSES = frozenset({
    "ConnectionRefused", "ECONNREFUSED", "FailedToOpenSocket", "ENOTFOUND", "EAI_AGAIN", "EAI_NONAME",
    "ENETUNREACH", "EHOSTUNREACH", "EADDRNOTAVAIL", "DNSException",
})
_UNREACHABLE = re.compile(r"Unable to connect to API(?: \((?P<cause>[A-Za-z_0-9]+)\))?")
_RESETS = re.compile(
    r"resets (?:(?P<month>[A-Z][a-z]{2})[a-z]* (?P<day>\d{1,2})(?:,| at) ?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>[ap]m) \((?P<zone>[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*)\)",
    re.IGNORECASE)

Unreachable = Literal["nothing-sent", "unknown"]


def says_sign_in(text: str, assistant_error: str | None) -> bool:
    lowered = text.lower()
    return assistant_error in SIGN_IN_ERRORS or any(word in lowered for word in SIGN_IN_WORDS)


def says_limit(text: str, assistant_error: str | None) -> bool:
    lowered = text.lower()
    return assistant_error in LIMIT_ERRORS or any(word in lowered for word in LIMIT_WORDS)


def unreachable(text: str) -> Unreachable | None:
    """`nothing-sent` when the text shows no request left the machine, `unknown` when it says only that the
    connection failed (it may have failed after the request went out), None when it says neither."""
    found = _UNREACHABLE.search(text)
    if found is None:
        return None
    return "nothing-sent" if found.group("cause") in NOTHING_SENT_CAUSES else "unknown"


def reset_from_text(text: str, now: float) -> int | None:
    """The reset (epoch seconds) "resets 1am (Europe/Berlin)" names: the first such local time after now (on
    the date given, when one is); None when the text names none this can read."""
    found = _RESETS.search(text)
    if found is None:
        return None
    hour, minute = int(found.group("hour")), int(found.group("minute") or 0)
    if not 1 <= hour <= 12 or minute > 59:
        return None
    hour = hour % 12 + (12 if found.group("half").lower() == "pm" else 0)
    try:
        local_now = pendulum.from_timestamp(now, tz=found.group("zone"))
    except (ValueError, pendulum.tz.exceptions.InvalidTimezone):  # type: ignore[attr-defined]
        return None
    try:
        if found.group("month"):
            month = pendulum.from_format(found.group("month")[:3].title(), "MMM").month
            candidate = local_now.set(month=month, day=int(found.group("day")), hour=hour, minute=minute,
                                      second=0, microsecond=0)
            if candidate.timestamp() <= now:
                candidate = candidate.add(years=1)
        else:
            candidate = local_now.set(hour=hour, minute=minute, second=0, microsecond=0)
            if candidate.timestamp() <= now:
                candidate = candidate.add(days=1)
    except ValueError:
        return None
    return int(candidate.timestamp())
