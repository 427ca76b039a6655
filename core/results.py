"""What the schedule answers: frozen results and the views the dashboard draws."""

from __future__ import annotations

from dataclasses import InitVar, dataclass
from typing import Any, ClassVar, Literal

from pendulum import DateTime

from .commission import Commission, parse_commission
from .schedule_document import AccountState, LaneState, LedgerWeek, Occurrence


@dataclass(frozen=True)
class CommandResult:
    """A recorded command's answer. `still_running` is set only on a replay of an earlier segment's
    record (a deferral) sent by the runner token that now runs a later segment of the same occurrence:
    the number of that later segment, which this answer did NOT end (a reused token's new request
    and a late retry of its old one are the same command, so the engine replays and says so)."""

    command_id: str
    version: int
    replayed: bool
    occurrence: Occurrence | None = None
    still_running: int | None = None


@dataclass(frozen=True)
class Tick:
    kind: Literal["admitted", "resumed", "settled", "running", "waiting"]
    lane: str
    occurrence: Occurrence | None
    replayed: bool
    command_id: str | None
    until: DateTime | None
    reason: str = ""


@dataclass(frozen=True)
class CallAdmission:
    call: int
    week: str
    replayed: bool
    command_id: str
    dispatch: bool
    in_flight: bool
    occurrence_id: str
    admitted: Literal[True] = True


@dataclass(frozen=True)
class CallRefusal:
    reason: str
    detail: str
    admitted: Literal[False] = False


@dataclass(frozen=True)
class CallEnd:
    command_id: str
    replayed: bool
    outcome: str
    debit: int
    occurrence: Occurrence | None


@dataclass(frozen=True)
class OccurrenceStatusView:
    id: str
    state: Literal[
        "scheduled", "due", "missed", "running", "interrupted", "deferred", "settled", "coalesced", "pruned",
        "not-commissioned",
    ]
    status: Literal["completed", "partial", "deferred", "unavailable"] | None
    coalesced_into: str | None = None


@dataclass(frozen=True)
class LanePlan:
    lane: str
    action: Literal["admit", "resume", "settle", "running", "wait"]
    at: DateTime | None
    occurrence_id: str | None
    reason: str = ""


@dataclass(frozen=True)
class ScheduleView:
    version: int
    commission: dict[str, Any]
    lanes: list[LaneState]
    occurrences: list[Occurrence]
    ledger: list[LedgerWeek]
    accounts: list[AccountState]
    revision_recorded_at: str
    # The commission as the schedule's reader parsed it and matched it with its digest. Not a field: the view's
    # JSON and equality are its document's, and a view built from a document alone parses it when asked.
    checked_commission: InitVar[Commission | None] = None
    _checked: ClassVar[Commission | None] = None  # this instance's checked commission, when it was given one

    def __post_init__(self, checked_commission: Commission | None) -> None:
        if checked_commission is not None:
            object.__setattr__(self, "_checked", checked_commission)

    def parsed_commission(self) -> Commission:
        """The commission as its model: the reader's own, parsed once per read with the state, so that the
        rules that walk the lanes' nights (health's, the dashboard's) do not validate the document again."""
        return self._checked if self._checked is not None else parse_commission(self.commission)

    def segment_running(self, occurrence_id: str, segment: int, runner: str) -> bool:
        """Whether this runner's segment still runs here (it neither deferred nor settled, nor was reconciled)."""
        for occurrence in self.occurrences:
            if occurrence.id == occurrence_id:
                running = occurrence.running_segment
                return running is not None and (running.n, running.runner) == (segment, runner)
        return False
