"""Usage-window observations as the schedule reads them.

The schedule refuses a closed window whose reset is not after now and within its reset
horizon; an adapter checks the same rule (the schedule's own `window_closes` and
`reset_accepted`) before it reports one, so a report it sends is never refused for its
observation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from factory_schedule.core import reset_accepted, window_closes
from factory_schedule.tui.host.providers.outcome import Stop


def observation(status: str, resets_at: int | None, rate_limit_type: str | None,
                is_using_overage: bool | None) -> dict[str, Any]:
    """The observation document: only the fields the schedule reads, camelCase as the contract names them."""
    document: dict[str, Any] = {"status": status}
    if rate_limit_type is not None:
        document["rateLimitType"] = rate_limit_type
    if resets_at is not None:
        document["resetsAt"] = resets_at
    if is_using_overage is not None:
        document["isUsingOverage"] = is_using_overage
    return document


def closes(document: dict[str, Any]) -> bool:
    """Any status but the open ones closes the window (an unknown one fails closed, as the schedule reads it)."""
    return window_closes(document.get("status"))


def overage(document: dict[str, Any] | None) -> bool:
    return document is not None and document.get("isUsingOverage") is True


def reset_usable(document: dict[str, Any], now: float) -> bool:
    """Whether the schedule will accept this closed window's reset (`now` in epoch seconds)."""
    reset = document.get("resetsAt")
    if isinstance(reset, bool) or not isinstance(reset, int):
        return False
    return reset_accepted(reset, int(now * 1000))


@dataclass(frozen=True)
class Window:
    """One call's observation as it will be reported, and what it makes the segment do.

    A closed window whose reset the schedule would refuse is never sent (the report would be refused and the
    call left open): the runner stops instead (`limit-unread`). Overage is always sent: it is overage whatever
    else the event says.
    """

    document: dict[str, Any] | None
    closed: bool
    usable: bool
    overage: bool

    @classmethod
    def of(cls, document: dict[str, Any] | None, now: float) -> Window:
        if document is None:
            return cls(None, False, False, False)
        closed = closes(document)
        over = overage(document)
        return cls(document, closed, not closed or over or reset_usable(document, now), over)

    @property
    def stop(self) -> Stop:
        if self.overage:
            return "overage"
        if self.closed:
            return "usage-limit" if self.usable else "limit-unread"
        return None

    @property
    def for_report(self) -> dict[str, Any]:
        """The `observation` field of a report that completed: the window whatever it said, when sendable."""
        return {"observation": self.document} if self.document is not None and self.usable else {}

    @property
    def for_lost(self) -> dict[str, Any] | None:
        """A lost call carries the window only when it stops something (a closed window, overage)."""
        return self.document if self.document is not None and self.usable and (self.closed or self.overage) else None
