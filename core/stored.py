"""The stored schedule's text, read and written so that a command checks only what it changed.

A decision's new state shares every lane it did not touch with the state it read, as the
same frozen objects: those lanes keep the checks and the canonical text they already had,
and only the changed lanes are dumped, parsed back from the dump and checked, as a reader
would. A new text read from the journal is checked the same way: every member besides the
lanes and every rule across lanes, and each lane unless its bytes are exactly those of a
lane already checked under the same commission at the same or an earlier version; a text
that fails anything is parsed and checked whole (`state.parse_state`), for its error.
The rules across lanes and the rest of the document are cheap and run every time. The
text stored is joined from the parts' canonical texts, and equals what encoding the
whole state would give (the tests hold both), so a full read of it sees the same state.

Without this, every command parsed, checked and encoded the whole document (about
90 KB with nine Products) two or three times, and its cost grew with the state's size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import ValidationError

from factory_schedule.store import CanonicalText, canonical_text
from factory_schedule.store.canonical import encoded_as_canonical, join_array, join_object

from .commission import Commission
from .errors import ScheduleError, corrupt
from .model import LaneState, ScheduleState
from .state import LaneFacts, Schedule, check_across_lanes, check_lane, checked_commission, parse_state_and_facts

# The state's members besides its lanes: field name -> key in the stored document.
_HEAD_MEMBERS = {
    name: field.alias or name for name, field in ScheduleState.model_fields.items() if name != "lanes"
}


@dataclass
class _CheckedLane:
    """A lane that passed `check_lane` under a commission at a version, with its canonical text."""

    model: LaneState
    facts: LaneFacts
    commission_digest: str
    version: int
    text: CanonicalText | None = None

    def canonical(self) -> CanonicalText:
        if self.text is None:
            self.text = canonical_text(self.model.doc())
        return self.text

    def still_checked(self, digest: str, version: int) -> bool:
        """Whether this lane's check holds under a commission at a version: the same commission, at this or a
        later version (a later version only admits more transitions)."""
        return self.commission_digest == digest and self.version <= version

    def holds(self, document: object, digest: str, version: int) -> bool:
        """Whether a stored lane document is this lane's, byte for byte, and its check still holds. Compared
        as canonical text, not as dicts, where 1 would equal true and 1.0."""
        if not self.still_checked(digest, version):
            return False
        try:
            return encoded_as_canonical(document) == self.canonical()
        except (ValueError, RecursionError):  # NaN, or nested deeper than the encoder goes
            return False


def _message(error: ValidationError, where: str) -> str:
    first = error.errors()[0]
    path = ".".join(str(part) for part in first["loc"])
    return f"stored schedule: {where}{'.' + path if path else ''}: {first['msg']}"


class StateCodec:
    """One writer's memory of the last state it read or wrote, and of its checked lanes."""

    def __init__(self) -> None:
        self._last: tuple[int, str, Schedule] | None = None
        self._lanes: dict[int, _CheckedLane] = {}
        # The text of each member besides the lanes, by the object the state held: the commission, the
        # accounts and most often the ledger are the same (frozen, never changed in place) from one state to
        # the next.
        self._member_texts: dict[str, tuple[object, CanonicalText]] = {}

    def read(self, version: int, text: str | None) -> Schedule | None:
        """The state a stored text holds: from memory when it is the text last read or written at this
        version; else parsed, with every member and lane checked, except that a lane whose stored
        document is exactly one this codec checked (same commission, same or earlier version) keeps that
        check. A text that fails anything is parsed and checked whole, for the reader's own error."""
        if text is None:
            return None
        last = self._last
        if last is not None and last[0] == version and last[1] == text:
            return last[2]
        try:
            document = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nested deeper than the decoder goes
            raise corrupt("stored schedule: not JSON") from None
        schedule = self._read_keeping_lanes(document, version)
        if schedule is None:
            schedule, facts = parse_state_and_facts(document, version)
            digest = schedule.state.commission_digest
            self._lanes = {
                id(lane): _CheckedLane(lane, lane_facts, digest, version)
                for lane, lane_facts in zip(schedule.state.lanes, facts, strict=True)
            }
        self._last = (version, text, schedule)
        return schedule

    def _read_keeping_lanes(self, document: object, version: int) -> Schedule | None:
        """A new text read lane by lane, as `write` checks a decision: the members besides the lanes and the
        rules across lanes every time, each lane unless it is exactly one already checked. None when there
        is nothing to keep or when anything fails (the whole parse then says what)."""
        if not self._lanes or not isinstance(document, dict) or not isinstance(document.get("lanes"), list):
            return None
        known = {lane.model.lane: lane for lane in self._lanes.values()}
        try:
            head = ScheduleState.model_validate({**document, "lanes": []})
            digest = head.commission_digest
            commission = checked_commission(head.commission, digest)
            lanes = []
            for lane_document in document["lanes"]:
                lane_id = lane_document.get("lane") if isinstance(lane_document, dict) else None
                kept = known.get(lane_id) if isinstance(lane_id, str) else None
                if kept is not None and kept.holds(lane_document, digest, version):
                    lanes.append(kept)
                else:
                    lanes.append(_lane_checked(lane_document, commission, digest, version))
            return self._assembled(head, lanes, commission, version)
        except (ValidationError, ScheduleError):
            return None

    def _assembled(self, head: ScheduleState, lanes: list[_CheckedLane], commission: Commission,
                   version: int) -> Schedule:
        """The state of checked members and lanes, once the rules across lanes hold; its lanes are the ones
        this codec knows from now on."""
        check_across_lanes(head, [lane.model.lane for lane in lanes], commission, [lane.facts for lane in lanes])
        self._lanes = {id(lane.model): lane for lane in lanes}
        state = head.model_copy(update={"lanes": [lane.model for lane in lanes]})
        return Schedule(state=state, commission=commission, version=version)

    def write(self, state: ScheduleState, version: int) -> tuple[Schedule, CanonicalText]:
        """Check a decision's new state as a reader of the stored text would, and give its text.

        The state becomes the last one known only through `remember`, once it is committed.
        """
        head_document = state.model_dump(by_alias=True, mode="json", exclude_defaults=True, exclude={"lanes"})
        try:
            head = ScheduleState.model_validate({**head_document, "lanes": []})
        except ValidationError as error:
            raise corrupt(_message(error, "")) from None
        commission = checked_commission(head.commission, head.commission_digest)
        lanes = [self._checked(lane, commission, head.commission_digest, version) for lane in state.lanes]
        after = self._assembled(head, lanes, commission, version)
        members = {key: self._text_of(key, getattr(state, field), head_document[key])
                   for field, key in _HEAD_MEMBERS.items()}
        # The next decision builds on `after`: its members, not the ones just checked, are what it keeps.
        self._member_texts = {key: (getattr(after.state, field), members[key]) for field, key in _HEAD_MEMBERS.items()}
        members["lanes"] = join_array(lane.canonical() for lane in lanes)
        return after, join_object(members)

    def _text_of(self, key: str, kept: object, dumped: object) -> CanonicalText:
        known = self._member_texts.get(key)
        return known[1] if known is not None and known[0] is kept else canonical_text(dumped)

    def remember(self, version: int, text: str, schedule: Schedule) -> None:
        self._last = (version, text, schedule)

    def _checked(self, lane: LaneState, commission: Commission, digest: str, version: int) -> _CheckedLane:
        known = self._lanes.get(id(lane))
        if known is not None and known.model is lane and known.still_checked(digest, version):
            return known
        document = lane.doc()
        try:
            return _lane_checked(document, commission, digest, version, canonical_text(document))
        except ValidationError as error:
            raise corrupt(_message(error, f"lanes[{lane.lane}]")) from None


def _lane_checked(document: object, commission: Commission, digest: str, version: int,
                  text: CanonicalText | None = None) -> _CheckedLane:
    """A lane document parsed as a reader would, and checked (ValidationError, or CORRUPT, if it fails)."""
    model = LaneState.model_validate(document)
    return _CheckedLane(model, check_lane(model, commission, version), digest, version, text)
