"""The whole records of settled occurrences, read back from their settlement events.

The state keeps a settled occurrence without its calls (`recent`) or not at all (pruned); its whole record
is its settlement event, which never changes again. Each kept record must be exactly that record less its
calls: checked whenever a state is new to the engine, reading in one go the events of the records it does
not know yet, and any difference is CORRUPT.
"""

from __future__ import annotations

from typing import Any

from factory_schedule.store import CommandJournal as Journal  # the protocol: no database library loads

from .errors import corrupt
from .limits import SCHEDULE_AGGREGATE, SCHEDULE_LIMITS
from .schedule_checks import Schedule
from .schedule_document import Occurrence

SETTLED_EVENT = "occurrence-settled"


class SettledRecords:
    """One engine's reader of settled records, remembering those it compared (a settled record never changes)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._whole_records: dict[str, tuple[Occurrence | None, Occurrence]] = {}  # id: (kept, whole)
        self._kept_checked: Schedule | None = None  # the last state whose kept records were checked

    def check_kept(self, schedule: Schedule, version: int) -> None:
        """CORRUPT unless every record `schedule` keeps without its calls is its settlement event's record.
        A lane that is the very (frozen) object of the last state checked holds the very records compared
        then: only the other lanes' are compared."""
        if schedule is self._kept_checked:
            return
        checked = self._kept_checked.state.lanes if self._kept_checked is not None else []
        seen = {id(lane_state) for lane_state in checked}
        kept = [o for lane_state in schedule.state.lanes if id(lane_state) not in seen
                for o in lane_state.recent if o.elided is not None]
        unknown = [o.id for o in kept if not self._knows_whole(o)]
        if unknown:
            for occurrence_id, record in self.records(unknown, version).items():
                if record is not None:
                    self._remember_whole(occurrence_id, record)
        for occurrence in kept:
            self.whole(occurrence, version)
        self._kept_checked = schedule

    def records(self, occurrence_ids: list[str], up_to: int) -> dict[str, Occurrence | None]:
        """Records of settled occurrences, from their settlement events (None: not settled by `up_to`)."""
        commands = [f"{occurrence_id}/settle" for occurrence_id in occurrence_ids]
        found = self.journal.events_of(SCHEDULE_AGGREGATE, commands)
        records: dict[str, Occurrence | None] = {}
        for occurrence_id in occurrence_ids:
            events = found[f"{occurrence_id}/settle"]
            if not events or events[0].version > up_to:
                records[occurrence_id] = None
                continue
            if events[0].type != SETTLED_EVENT:
                raise corrupt(f"{occurrence_id}/settle recorded no settlement event")
            try:
                record = Occurrence.model_validate(events[0].data["occurrence"])
            except Exception:
                raise corrupt(f"{occurrence_id}: its settlement event does not hold a valid record") from None
            if record.elided is not None:
                raise corrupt(f"{occurrence_id}: its settlement event holds the record without its calls")
            records[occurrence_id] = record
        return records

    def written(self, event_type: str, event_data: dict[str, Any]) -> None:
        """Remember the whole record of a settlement event this engine has just committed, parsed as `records`
        parses it from the journal: the command that wrote it needs no read of it back. Anything else (another
        event, a record that does not parse) is left to be read."""
        if event_type != SETTLED_EVENT:
            return
        try:
            record = Occurrence.model_validate(event_data["occurrence"])
        except Exception:
            return
        if record.elided is None:
            self._remember_whole(record.id, record)

    def pruned(self, occurrence_id: str, up_to: int) -> Occurrence | None:
        """A settled occurrence that left the state: its record is its settlement event."""
        return self.records([occurrence_id], up_to)[occurrence_id]

    def whole(self, kept: Occurrence, version: int) -> Occurrence:
        """The whole record of an occurrence the state keeps, its calls included."""
        if kept.elided is None:
            return kept
        if not self._knows_whole(kept):
            record = self.pruned(kept.id, version)
            if record is None or record.without_calls() != kept:
                raise corrupt(f"{kept.id}: its settlement event does not hold the record the state keeps")
            self._remember_whole(kept.id, record)
            self._knows_whole(kept)
        return self._whole_records[kept.id][1]

    def _knows_whole(self, kept: Occurrence) -> bool:
        """Whether the whole record of this kept one is known and reduces to it. A kept record is frozen and
        carried from state to state as the same object, so once compared it is recognised by identity."""
        known = self._whole_records.get(kept.id)
        if known is None:
            return False
        if known[0] is kept:
            return True
        if known[1].without_calls() != kept:
            return False
        self._whole_records[kept.id] = (kept, known[1])
        return True

    def _remember_whole(self, occurrence_id: str, record: Occurrence) -> None:
        if len(self._whole_records) >= 4 * SCHEDULE_LIMITS.max_lanes:
            self._whole_records.clear()
        self._whole_records[occurrence_id] = (None, record)
