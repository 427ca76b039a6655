"""What one provider call came to: the report `end_call` takes, and what the runner does next."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# What the segment must do after this call, whatever the report says:
#   None           go on with the next unit of work
#   "usage-limit"  the usage window closed (the report carries its reset): defer usage-limit
#   "sign-in"      the provider refused the sign-in: defer sign-in-needed
#   "overage"      the call ran on paid overage: no more calls, settle (the schedule refuses a deferral)
#   "limit-unread" the provider said its limit was reached but gave no reset we can read: stop and settle
#   "unreachable"  the provider could not be reached: send nothing more this segment, settle so the unsent
#                  work goes out on a later night
Stop = Literal["usage-limit", "sign-in", "overage", "limit-unread", "unreachable"] | None


@dataclass(frozen=True)
class CallOutcome:
    """One call's report (a JSON document for `end_call`) and why the adapter decided it.

    `detail` and `session` are the adapter's own words and the provider's session ID:
    plain data, printed only inside the runner's JSON.
    """

    report: dict[str, Any]
    stop: Stop = None
    detail: str = ""
    session: str | None = None
    tokens_seen: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    # The provider's final answer (Claude Code's result text, Codex's last agent message) on a clean result:
    # a staged lane's run reads its stage's report from it. Never printed by the runner.
    answer: str | None = None

    @property
    def kind(self) -> str:
        return str(self.report["kind"])


def lost(detail: str, observation: dict[str, Any] | None = None, **kwargs: Any) -> CallOutcome:
    """The effect is unknown: the call stays debited at its bound and its work is never sent again."""
    report: dict[str, Any] = {"kind": "lost"}
    if observation is not None:
        report["observation"] = observation
    return CallOutcome(report=report, detail=detail, **kwargs)
