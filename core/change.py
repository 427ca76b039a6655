"""What a decision returns, and the small helpers that rebuild the frozen state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from pendulum import DateTime
from pydantic import BaseModel

from factory_schedule.store import NewEvent

from .errors import ScheduleError, invalid
from .schedule_document import LaneState, Occurrence, ScheduleState, at


@dataclass(frozen=True)
class Change:
    """One command's effect: exactly one event, the new state, the receipt's result."""

    event_type: str
    event_data: dict[str, Any]
    state: ScheduleState
    result: dict[str, Any]
    growing: bool = False

    @property
    def events(self) -> list[NewEvent]:
        return [NewEvent(self.event_type, self.event_data)]


Model = TypeVar("Model", bound=BaseModel)


def replace(model: Model, **changes: Any) -> Model:
    """A copy of a frozen model with some fields changed (of whatever type each field has)."""
    return model.model_copy(update=changes)


def put_lane(state: ScheduleState, lane: LaneState, **members: Any) -> ScheduleState:
    """The state with this lane in place of its namesake, and any other `members` of the state changed with it
    (one copy of the state for the whole change)."""
    lanes = [lane if existing.lane == lane.lane else existing for existing in state.lanes]
    return replace(state, lanes=lanes, **members)


def put_open(state: ScheduleState, occurrence: Occurrence, **members: Any) -> ScheduleState:
    lane = state.lane(occurrence.lane)
    if lane is None:  # pragma: no cover - callers find the occurrence through its lane
        raise ScheduleError("CORRUPT", f"lane {occurrence.lane} is missing")
    return put_lane(state, replace(lane, open=occurrence), **members)


def last_instant(occurrence: Occurrence) -> DateTime:
    """The latest instant the occurrence recorded: a transition's clock may not read earlier."""
    stamps = [occurrence.admitted_at]
    for segment in occurrence.segments:
        stamps.append(segment.started_at)
        if segment.ended is not None:
            stamps.append(segment.ended.at)
    for call in occurrence.calls:
        stamps.append(call.admitted_at)
        if call.ended_at is not None:
            stamps.append(call.ended_at)
    # Every stamp is in the one stored form (`model.Instant`: fixed width, UTC), so the latest text is the
    # latest instant: only that one is parsed.
    return at(max(stamps))


def refuse_backwards(occurrence: Occurrence, now: DateTime) -> None:
    latest = last_instant(occurrence)
    if now < latest:
        raise invalid(
            f"the clock reads {now.isoformat()}, earlier than {occurrence.id}'s last transition at "
            f"{latest.isoformat()}; nothing was written"
        )
