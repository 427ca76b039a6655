"""What a health check answers: its findings, the repairs it made, what it could not check, and its exit code."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from factory_schedule.store import Checkpoint

Severity = Literal["error", "warning", "info"]

HEALTHY, FINDINGS, COULD_NOT_CHECK = 0, 1, 2


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: Severity
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)  # JSON
    repairable: bool = False


@dataclass(frozen=True)
class Repair:
    kind: str
    scope: str
    message: str
    lease: dict[str, Any]  # JSON: the evidence of the lease removed


@dataclass(frozen=True)
class HealthReport:
    checked_at: datetime
    host: str
    findings: tuple[Finding, ...]
    repairs: tuple[Repair, ...] = ()
    could_not_check: tuple[str, ...] = ()
    # How far each aggregate's hash chain was verified (the store's Checkpoint by aggregate, passed back as
    # `since`); None when they were not: one broken, or not checked at all.
    verified: Mapping[str, Checkpoint] | None = None

    @property
    def healthy(self) -> bool:
        return not self.could_not_check and not [f for f in self.findings if f.severity != "info"]

    @property
    def exit_code(self) -> int:
        if self.could_not_check:
            return COULD_NOT_CHECK
        return HEALTHY if self.healthy else FINDINGS

