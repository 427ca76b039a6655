"""The stored schedule's text, read and written so that a command checks only what it changed.

A decision's new state shares every lane and member it did not touch with the state it read,
as the same frozen objects: those keep the checks and the canonical text they already had,
and only what changed is dumped, parsed back from the dump and checked, as a reader would.
A new text read from the journal is checked the same way: every member besides the lanes
and every rule across lanes, and each lane unless its bytes are exactly those of a lane
already checked under the same commission at the same or an earlier version; a text that
fails anything is parsed and checked whole (`schedule_checks.parse_state`), for its error.
The rules across lanes run on every state, those across members on every state with a
member the last one written did not hold. The text stored is joined from the parts'
canonical texts, and equals what encoding the whole state would give (the tests hold
both), so a full read of it sees the same state.

A command that parsed, checked and encoded the whole document (about 90 KB with nine
Products) two or three times would cost more as the state grows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError

from factory_schedule.store import CanonicalText, PartedText, canonical_text
from factory_schedule.store.canonical import encoded_as_canonical, join_array

from .commission import Commission
from .errors import ScheduleError, corrupt
from .schedule_checks import (
    LaneDebits,
    Schedule,
    check_across_lanes,
    check_lane,
    checked_commission,
    parse_state_and_facts,
    summed_debits,
)
from .schedule_document import CHECKED_INSTANCES, LaneState, Occurrence, ScheduleModel, ScheduleState

# The state's members besides its lanes: field name -> key in the stored document.
_HEAD_MEMBERS = {
    name: field.alias or name for name, field in ScheduleState.model_fields.items() if name != "lanes"
}


@dataclass
class _CheckedLane:
    """A lane that passed `check_lane` under a commission at a version, with its canonical text."""

    model: LaneState
    facts: LaneDebits
    commission_digest: str
    version: int
    text: CanonicalText | None = None
    # The canonical texts of its occurrences that are known, by the object.
    part_texts: dict[int, tuple[object, CanonicalText]] = field(default_factory=dict)

    # Its part of the stored state when another lane comes before it (`,` and its text), made once: an
    # unchanged lane gives the journal the very string it gave before, with no copy of its kilobytes.
    later_part: tuple[str, str] | None = None
    # Its own members besides `open` and `recent` (the ID, `since`, the watermark, the last week), dumped, with
    # their texts, when a decision changed it: most of its changes leave them as they were.
    scalars: tuple[dict[str, object], dict[str, CanonicalText]] | None = None
    # The stored document it was parsed from, when it was read rather than written, until `checked_text` encodes
    # it: a reader that writes nothing compares stored lanes with it and never needs the model's own text.
    source: object = None
    source_text: str | None = None

    def canonical(self) -> CanonicalText:
        if self.text is None:
            self.text = canonical_text(self.model.doc())
        return self.text

    def part_after_another(self) -> tuple[str, str]:
        if self.later_part is None:
            self.later_part = (f"lanes/{self.model.lane}", "," + self.canonical())
        return self.later_part

    def occurrences(self) -> dict[int, Occurrence]:
        """Its checked occurrences, by identity."""
        model = self.model
        found = {id(occurrence): occurrence for occurrence in model.recent}
        if model.open is not None:
            found[id(model.open)] = model.open
        return found

    def still_checked(self, digest: str, version: int) -> bool:
        """Whether this lane's check holds under a commission at a version: the same commission, at this or a
        later version (a later version only admits more transitions)."""
        return self.commission_digest == digest and self.version <= version

    def checked_text(self) -> str:
        """The text this lane's check was made on: its canonical text when it is known; else, for a lane read,
        the encoding of the stored document it was parsed from (the same bytes parse to the same lane, so it is
        this lane's text without dumping the model)."""
        if self.text is not None:
            return self.text
        if self.source_text is None:
            if self.source is None:
                return self.canonical()
            self.source_text = encoded_as_canonical(self.source)
            self.source = None
        return self.source_text

    def holds(self, document: object, digest: str, version: int) -> bool:
        """Whether a stored lane document is this lane's, byte for byte, and its check still holds. Compared
        as encoded text, not as dicts, where 1 would equal true and 1.0."""
        if not self.still_checked(digest, version):
            return False
        try:
            return encoded_as_canonical(document) == self.checked_text()
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
        self._lanes_by_id: dict[str, _CheckedLane] = {}
        # The text of each member besides the lanes, by the object the state held: the commission, the
        # accounts and most often the ledger are the same (frozen, never changed in place) from one state to
        # the next.
        self._member_texts: dict[str, tuple[object, CanonicalText]] = {}
        # The state the last write checked: when a decision keeps every one of its members besides the lanes,
        # their check together (the head's own rules across them) is that state's.
        self._written: ScheduleState | None = None
        # The last lanes' facts checked across lanes, and their debits summed: a command changes one lane's
        # facts (frozen), so the next sum is this one with that lane's taken out and its new ones put in.
        self._debits: tuple[list[LaneDebits], dict[str, int]] | None = None

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
            self._keep([_CheckedLane(lane, lane_facts, digest, version, source=lane_document)
                        for lane, lane_facts, lane_document in zip(schedule.state.lanes, facts,
                                                                   document["lanes"], strict=True)])
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
                   version: int, members: dict[str, object] | None = None) -> Schedule:
        """The state of checked members (the head's, or `members` by field name in their place) and lanes, once
        the rules across lanes hold; its lanes are the ones this codec knows from now on."""
        facts = [lane.facts for lane in lanes]
        check_across_lanes(head, [lane.model.lane for lane in lanes], commission, facts, self._summed(facts))
        self._keep(lanes)
        state = head.model_copy(update={**(members or {}), "lanes": [lane.model for lane in lanes]})
        return Schedule(state=state, commission=commission, version=version)

    def _summed(self, facts: list[LaneDebits]) -> dict[str, int]:
        """`summed_debits(facts)`, from the last sum when the lanes are as many: each lane's facts that are not the
        very object summed then are taken out of it (those) and put in (these)."""
        last = self._debits
        if last is None or len(last[0]) != len(facts):
            debits = summed_debits(facts)
        else:
            debits = dict(last[1])
            for before, now in zip(last[0], facts, strict=True):
                if before is now:
                    continue
                for week, debit in before.debits.items():
                    debits[week] -= debit
                for week, debit in now.debits.items():
                    debits[week] = debits.get(week, 0) + debit
        self._debits = (facts, debits)
        return debits

    def _keep(self, lanes: list[_CheckedLane]) -> None:
        """These checked lanes are the ones this codec knows from now on."""
        self._lanes = {id(lane.model): lane for lane in lanes}
        self._lanes_by_id = {lane.model.lane: lane for lane in lanes}

    def write(self, state: ScheduleState, version: int) -> tuple[Schedule, CanonicalText]:
        """Check a decision's new state as a reader of the stored text would, and give its text.

        A member besides the lanes that is the very object the last state written held (checked then, and
        frozen) is neither dumped nor validated again: it goes into the head's validation as the model it
        already is, which the model's own rules across members then see (so does each item of a changed list
        member that is such an object); when every member is such an object, the head is that state's, whose
        rules across members held for exactly these objects. Every other member is dumped and validated from
        its dump. The state becomes the last one known only through `remember`, once it is committed.
        """
        document: dict[str, object] = {"lanes": []}
        members: dict[str, CanonicalText] = {}
        kept: dict[str, object] = {}
        for name, key in _HEAD_MEMBERS.items():
            value = getattr(state, name)
            known = self._member_texts.get(key)
            if known is not None and known[0] is value:
                document[key], members[key], kept[name] = value, known[1], value
            else:
                dumped = state.model_dump(by_alias=True, mode="json", exclude_defaults=True, include={name})[key]
                document[key], members[key] = dumped, canonical_text(dumped)
                if isinstance(value, list) and self._written is not None:
                    # A changed list (the ledger, the accounts) changes one or two items: an item that is the
                    # very one the last state written held goes into the validation as the model it is.
                    held = {id(item): item for item in getattr(self._written, name)}
                    document[key] = [item if held.get(id(item)) is item else part
                                     for item, part in zip(value, dumped, strict=True)]
        head = self._written
        if head is None or len(kept) != len(_HEAD_MEMBERS):
            try:
                head = ScheduleState.model_validate(document)
            except ValidationError as error:
                raise corrupt(_message(error, "")) from None
        digest = head.commission_digest
        # The kept commission is the very document checked before (the validator's copy is not): its check is known.
        commission = checked_commission(state.commission if "commission" in kept else head.commission, digest)
        lanes: list[_CheckedLane] = []
        for lane in state.lanes:
            known_lane = self._lanes.get(id(lane))
            if known_lane is not None and known_lane.model is lane and known_lane.still_checked(digest, version):
                lanes.append(known_lane)
            else:
                lanes.append(self._checked(lane, commission, digest, version))
        # The checked objects themselves, not the validator's copies: the next command recognises them.
        after = self._assembled(head, lanes, commission, version, kept)
        self._written = after.state
        # The next decision builds on `after`: its members, not the ones just checked, are what it keeps.
        self._member_texts = {key: (getattr(after.state, name), members[key]) for name, key in _HEAD_MEMBERS.items()}
        return after, _parted(members, lanes)

    def remember(self, version: int, text: str, schedule: Schedule) -> None:
        self._last = (version, text, schedule)

    def _checked(self, lane: LaneState, commission: Commission, digest: str, version: int) -> _CheckedLane:
        """A lane of a decision that is not the very lane object last checked, checked."""
        try:
            before = self._lanes_by_id.get(lane.lane)
            if before is not None and before.still_checked(digest, version):
                return _lane_checked_keeping(lane, before, commission, digest, version)
            document = lane.doc()
            return _lane_checked(document, commission, digest, version, canonical_text(document))
        except ValidationError as error:
            raise corrupt(_message(error, f"lanes[{lane.lane}]")) from None


def _lane_checked(document: object, commission: Commission, digest: str, version: int,
                  text: CanonicalText | None = None) -> _CheckedLane:
    """A lane document parsed as a reader would, and checked (ValidationError, or CORRUPT, if it fails)."""
    model = LaneState.model_validate(document)
    return _CheckedLane(model, check_lane(model, commission, version), digest, version, text,
                        source=document if text is None else None)


def _lane_checked_keeping(lane: LaneState, before: _CheckedLane, commission: Commission, digest: str,
                          version: int) -> _CheckedLane:
    """A decision's changed lane, checked as `_lane_checked` checks its dump, except that a part of it that is
    the very object the lane held when it was last checked (same lane, same commission, that or an earlier
    version) is neither dumped nor validated again: it is frozen and passed then, and goes into the lane's
    validation as the model it is (an occurrence with the text it had). The parts are the lane's occurrences
    and, within the occurrence a decision changed, its segments, calls, deferrals and reconciliations: a
    decision adds or changes one or two of those. An occurrence kept whole is not put through its own rules
    again, its model's (`CHECKED_INSTANCES`) nor those in `check_lane` (they hold at a later version too).
    Everything else, the changed parts' dumps, the lane's and each changed occurrence's own members and every
    rule of the lane as a whole, is checked as `_lane_checked` checks it."""
    texts = _PartTexts(before.part_texts)
    checked = before.occurrences()
    held = before.model
    if before.scalars is not None and all(_same_value(getattr(lane, name), getattr(held, name))
                                          for name in _LANE_OWN_MEMBERS):
        # The very values the last check dumped (equal strings, the same frozen objects): the same dump and texts.
        document, members = dict(before.scalars[0]), dict(before.scalars[1])
    else:
        document = lane.model_dump(by_alias=True, mode="json", exclude_defaults=True, exclude={"open", "recent"})
        members = _member_texts(document)
    scalars = (dict(document), dict(members))
    if lane.open is not None:  # `open` and `recent` default to None and []: a dump leaves them out then
        document["open"], members["open"] = texts.occurrence(lane.open, checked, before.model.open)
    if lane.recent:
        parts = [texts.occurrence(occurrence, checked, None) for occurrence in lane.recent]
        document["recent"] = [value for value, _text in parts]
        members["recent"] = join_array(text for _value, text in parts)
    # The occurrences passed as the models they are were checked with the lane and are frozen: their rules held.
    kept = frozenset(texts.instances)
    model = LaneState.model_validate(document, context={CHECKED_INSTANCES: kept})
    facts = check_lane(model, commission, version, already_checked=kept)
    after = _CheckedLane(model, facts, digest, version, _joined(members), scalars=scalars)
    after.part_texts = texts.of_validated(model, lane)
    return after


# A lane's members besides its occurrences (its ID, `since`, the watermark, the last week, and any other).
_LANE_OWN_MEMBERS = tuple(name for name in LaneState.model_fields if name not in ("open", "recent"))


def _same_value(value: object, held: object) -> bool:
    """Whether a member's value dumps as the one held does: the very object, or an equal string."""
    return value is held or (type(value) is str and type(held) is str and value == held)


_OCCURRENCE_LISTS = {"segments": "segments", "calls": "calls", "deferrals": "deferrals",
                     "reconciliations": "reconciliations"}  # field: key, each a list of frozen models


# The members' keys of the documents joined here, encoded once (`join_object` encodes each key on every call).
_KEY_TEXTS = {key: encoded_as_canonical(key) for model in (ScheduleState, LaneState, Occurrence)
              for key in (field.alias or name for name, field in model.model_fields.items())}


def _joined(members: dict[str, CanonicalText]) -> CanonicalText:
    """`join_object(members)` for the members of a state, a lane or an occurrence (keys of those models)."""
    body = ",".join(f"{_KEY_TEXTS[key]}:{members[key]}" for key in sorted(members))
    return CanonicalText("{" + body + "}")


def _parted(members: dict[str, CanonicalText], lanes: list[_CheckedLane]) -> PartedText:
    """The state's text (as `_joined` of its members with the lanes joined into an array) in the parts the
    journal stores apart: each member besides the lanes, and each lane (`lanes/<lane>`). A command changes one
    or two lanes and the members it touched, so its commit carries those rows, not the whole state. As
    `store.parted` cuts it: the glue between parts (a brace, a key, a comma) goes with the part after it, and
    the glue at the end with the last part."""
    parts: list[tuple[str, str]] = []
    glue = "{"
    for index, key in enumerate(sorted([*members, "lanes"])):
        glue += ("," if index else "") + _KEY_TEXTS[key] + ":"
        if key != "lanes":
            parts.append((key, glue + members[key]))
            glue = ""
        elif not lanes:
            glue += "[]"
        else:
            first = lanes[0]
            parts.append((f"lanes/{first.model.lane}", glue + "[" + first.canonical()))
            parts.extend(lane.part_after_another() for lane in lanes[1:])
            glue = "]"
    glue += "}"
    if not parts:
        return PartedText([("state", glue)])
    name, text = parts[-1]
    parts[-1] = (name, text + glue)
    return PartedText(parts)


def _member_texts(document: dict[str, object]) -> dict[str, CanonicalText]:
    """The canonical text of each member of a dumped document of scalars and small objects: one encoding
    checked whole (`canonical_text` refuses what has no canonical form), then each member's own encoding,
    which is its part of the whole (canonical JSON composes: sorted keys, no whitespace)."""
    canonical_text(document)
    return {key: CanonicalText(encoded_as_canonical(value)) for key, value in document.items()}


class _PartTexts:
    """The canonical texts of a changed lane's occurrences, by the object, while the lane is checked: taken from
    the last check's where the occurrence is the same, else from its dump."""

    def __init__(self, known: dict[int, tuple[object, CanonicalText]]) -> None:
        self._known = known
        self.made: dict[int, tuple[object, CanonicalText]] = {}
        # The IDs of the checked occurrences put into the lane's validation as they are (`CHECKED_INSTANCES`).
        self.instances: set[int] = set()

    def text(self, part: BaseModel) -> CanonicalText:
        known = self._known.get(id(part))
        if known is None or known[0] is not part:
            known = (part, canonical_text(part.model_dump(by_alias=True, mode="json", exclude_defaults=True)))
        self.made[id(part)] = known
        return known[1]

    def occurrence(self, occurrence: Occurrence, checked: dict[int, Occurrence],
                   before: Occurrence | None) -> tuple[object, CanonicalText]:
        """(what goes into the lane's validation, its text) for one occurrence of the changed lane. The changed
        occurrence is dumped and encoded whole (one pass of the encoder over a few kilobytes costs less than
        joining its members' texts); each list item that is the very item the last check validated goes into
        the validation as the model it is, in place of its dump."""
        if checked.get(id(occurrence)) is occurrence:
            self.instances.add(id(occurrence))
            return occurrence, self.text(occurrence)
        dumped = occurrence.doc()
        text = canonical_text(dumped)
        self.made[id(occurrence)] = (occurrence, text)
        if before is None or checked.get(id(before)) is not before or before.id != occurrence.id:
            return dumped, text
        held = {id(item): item for name in _OCCURRENCE_LISTS for item in getattr(before, name)}
        for name, key in _OCCURRENCE_LISTS.items():
            items: list[ScheduleModel] = getattr(occurrence, name)
            if items:  # an empty list is a default, which the dump leaves out
                dumped[key] = [item if held.get(id(item)) is item else part
                               for item, part in zip(items, dumped[key], strict=True)]
        return dumped, text

    def of_validated(self, model: LaneState, lane: LaneState) -> dict[int, tuple[object, CanonicalText]]:
        """The texts the next check can take, keyed by the validated lane's own occurrences (each validated from
        the decision's occurrence beside it, or that very occurrence)."""
        texts: dict[int, tuple[object, CanonicalText]] = {}
        pairs: list[tuple[BaseModel, BaseModel]] = list(zip(model.recent, lane.recent, strict=True))
        if model.open is not None and lane.open is not None:
            pairs.append((model.open, lane.open))
        for validated, decided in pairs:
            made = self.made.get(id(decided))
            if made is not None and made[0] is decided:
                texts[id(validated)] = (validated, made[1])
        return texts


