"""Reading and writing the stored schedule: every defect is CORRUPT, on every read.

The pydantic models hold the rules one document can check by itself; this module
adds those that need the commission or the whole schedule (an ID that is not its
lane and date, a watermark that is not the latest admission, a ledger week that
debits less than its calls, a transition map that does not match the record).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from factory_schedule.store.canonical import encoded_as_canonical

from .commission import Commission, Lane, commission_digest, parse_commission
from .errors import ScheduleError, corrupt
from .identity import is_weekly, occurrence_id
from .schedule_document import LaneState, Occurrence, ScheduleState, at, lane_order_problem
from .zones import iso_week_of, local_date_of

_TRANSITION = re.compile(r"^(admit|settle|resume/[1-8]|defer/[1-8]|reconcile/[1-8]|call/\d+|call/\d+/end)$")


@dataclass(frozen=True)
class Schedule:
    """A parsed, checked state with its parsed commission: what every rule reads."""

    state: ScheduleState
    commission: Commission
    version: int

    def lane_config(self, lane_id: str) -> Lane | None:
        return next((lane for lane in self.commission.lanes if lane.lane == lane_id), None)


def validation_message(error: ValidationError) -> str:
    """A stored document's first defect, `where: what`, for the CORRUPT refusal that names it."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "state"
    return f"{where}: {first['msg']}"


def parse_state(document: Any, version: int) -> Schedule:
    """Parse and check a stored state document; any defect raises CORRUPT."""
    return parse_state_and_facts(document, version)[0]


def parse_state_and_facts(document: Any, version: int) -> tuple[Schedule, list[LaneDebits]]:
    """`parse_state`, with what each lane's check found (in the state's lane order)."""
    try:
        state = ScheduleState.model_validate(document)
    except ValidationError as error:
        raise corrupt(f"stored schedule: {validation_message(error)}") from None
    commission = checked_commission(state.commission, state.commission_digest)
    facts = [check_lane(lane_state, commission, version) for lane_state in state.lanes]
    check_across_lanes(state, [lane.lane for lane in state.lanes], commission, facts)
    return Schedule(state=state, commission=commission, version=version), facts


_commission_memo: list[tuple[dict[str, Any], str, str, Commission]] = []  # (document, its text, digest, answer)


def checked_commission(document: dict[str, Any], digest: str) -> Commission:
    """Parse the stored commission and check its digest. The last answer is remembered: the same
    document and digest always get the same answer, and re-deriving it dominated every command.
    "The same document" is the very object last checked (a state's members are never changed in
    place), or one with the same encoded text: compared as dicts, 1 would equal true and 1.0."""
    for known_document, _known_text, known_digest, known in _commission_memo:
        if known_digest == digest and known_document is document:
            return known
    try:
        text = encoded_as_canonical(document)
    except (ValueError, RecursionError):
        text = None
    for _known_document, known_text, known_digest, known in _commission_memo:
        if known_digest == digest and known_text == text:
            _commission_memo[:] = [(document, known_text, known_digest, known)]
            return known
    try:
        commission = parse_commission(document)
    except ScheduleError as error:
        raise corrupt(f"stored commission: {error.message}") from None
    if commission_digest(commission) != digest:
        raise corrupt("stored commission does not match its digest")
    if text is not None:
        _commission_memo[:] = [(document, text, digest, commission)]
    return commission


def dump_state(state: ScheduleState) -> dict[str, Any]:
    return state.doc()


@dataclass(frozen=True)
class LaneDebits:
    """What the checks across lanes need from one checked lane."""

    debits: dict[str, int]  # tokens its recorded calls debit, by week
    in_flight_weeks: frozenset[str]  # weeks of its calls in flight


def check_lane(lane_state: LaneState, commission: Commission, version: int,
               already_checked: frozenset[int] = frozenset()) -> LaneDebits:
    """The rules one lane's record must hold against the commission and the version; CORRUPT if not.

    `core.schedule_codec` keeps a lane's check while its bytes, the commission and the version allow (a later
    version admits only more): a rule here must depend on nothing else, or that reuse goes wrong. A rule
    that needs another lane or another member of the state belongs in `check_across_lanes`.
    `already_checked` names (by `id`) occurrences of this lane that passed their own rules
    (`_check_occurrence`: they depend on the occurrence, its lane and a version they hold at and after)
    at this or an earlier version; those rules are not run again for them."""
    lane_ids = {lane.lane for lane in commission.lanes}
    _check_lane(lane_state, lane_id_in_commission=lane_state.lane in lane_ids, version=version,
                zone=commission.zone, already_checked=already_checked)
    debits: dict[str, int] = {}
    for occurrence in _admitted(lane_state):
        for call in occurrence.calls:
            debits[call.week] = debits.get(call.week, 0) + call.debit
        if occurrence.elided is not None:
            for week, debit in occurrence.elided.debits.items():
                debits[week] = debits.get(week, 0) + debit
    open_calls = lane_state.open.calls if lane_state.open is not None else []
    return LaneDebits(debits=debits, in_flight_weeks=frozenset(call.week for call in open_calls if call.in_flight))


def summed_debits(facts: list[LaneDebits]) -> dict[str, int]:
    """What the lanes' recorded calls debit, by week."""
    debits: dict[str, int] = {}
    for lane_facts in facts:
        for week, debit in lane_facts.debits.items():
            debits[week] = debits.get(week, 0) + debit
    return debits


def check_across_lanes(state: ScheduleState, lane_ids: list[str], commission: Commission,
                       facts: list[LaneDebits], debits: dict[str, int] | None = None) -> None:
    """The rules that span lanes: one lane per ID in order, every commission lane present, and a
    ledger that debits at least what the lanes' calls do and keeps every week a call in flight debits.
    `debits` is `summed_debits(facts)` when the caller has it already."""
    problem = lane_order_problem(lane_ids)
    if problem:
        raise corrupt(f"stored schedule: lanes: {problem}")
    present = set(lane_ids)
    for lane in commission.lanes:
        if lane.lane not in present:
            raise corrupt(f"lanes: the commission's lane {lane.lane} is missing")
    if debits is None:
        debits = summed_debits(facts)
    for ledger_week in state.ledger:
        if ledger_week.debited < debits.get(ledger_week.week, 0):
            raise corrupt(f"ledger {ledger_week.week}: debits less than its recorded calls")
    kept = {week.week for week in state.ledger}
    for lane_facts in facts:
        if not lane_facts.in_flight_weeks:
            continue
        for week_of_call in sorted(lane_facts.in_flight_weeks - kept):
            raise corrupt(f"ledger: the week {week_of_call} a call in flight debits is missing")


def _admitted(lane_state: LaneState) -> list[Occurrence]:
    return [o for o in (lane_state.open, *lane_state.recent) if o is not None]


def _check_lane(lane_state: LaneState, lane_id_in_commission: bool, version: int, zone: str,
                already_checked: frozenset[int]) -> None:
    product, _, rhythm = lane_state.lane.partition("/")
    weekly = is_weekly(rhythm) if rhythm else False
    for occurrence in _admitted(lane_state):
        if id(occurrence) not in already_checked:
            _check_occurrence(occurrence, product, rhythm, weekly, version)
    if lane_state.watermark is not None:
        try:
            expected = _expected_id(product, rhythm, weekly, lane_state.watermark.date)
        except ScheduleError:
            raise corrupt(f"{lane_state.lane}.watermark: not an occurrence of the lane") from None
        if expected != lane_state.watermark.occurrence:
            raise corrupt(f"{lane_state.lane}.watermark: its date is not its occurrence's")
        admitted_since_joining = lane_state.watermark.date > _joined_on(zone, lane_state.since)
        if lane_id_in_commission and admitted_since_joining and not _admitted(lane_state):
            # A lane that left a revision drops its settled records; one that rejoined later keeps
            # only its watermark. Any other lane always holds the admission its watermark names.
            raise corrupt(f"{lane_state.lane}: the occurrence its watermark admitted is missing")
    if weekly:
        keys = [o.key for o in _admitted(lane_state)]
        if keys and (lane_state.last_week is None or max(keys) > lane_state.last_week):
            raise corrupt(f"{lane_state.lane}.lastWeek: a week-keyed admission after it")
    elif lane_state.last_week is not None:
        raise corrupt(f"{lane_state.lane}.lastWeek: a daily lane keeps none")


# A command checks the occurrence it changed and its lane's watermark: their expected IDs and the lane's joining
# date depend on these few strings alone, the same from one command to the next, and parsing dates and zones
# again costs more than the rest of a lane's check. An answer is kept only for the strings it was derived from
# (a defect raises and is never kept), and the memo is bounded.


@functools.lru_cache(maxsize=1024)
def _expected_id(product: str, rhythm: str, weekly: bool, date: str) -> str:
    key = iso_week_of(date) if weekly else date
    return occurrence_id(product, rhythm, key)


@functools.lru_cache(maxsize=256)
def _joined_on(zone: str, since: str) -> str:
    """The local date ("YYYY-MM-DD") of a lane's stored `since` instant in the commission's zone."""
    return local_date_of(zone, at(since)).isoformat()


def _check_occurrence(occurrence: Occurrence, product: str, rhythm: str, weekly: bool, version: int) -> None:
    where = occurrence.id
    try:
        expected = _expected_id(product, rhythm, weekly, occurrence.date)
    except ScheduleError:
        raise corrupt(f"{where}: not an occurrence of lane {product}/{rhythm}") from None
    if expected != occurrence.id or occurrence.key != occurrence.id.rsplit("/", 1)[1]:
        raise corrupt(f"{where}: the ID is not its lane and date")
    for name, recorded in occurrence.transitions.items():
        if not _TRANSITION.match(name):
            raise corrupt(f"{where}.transitions: unknown transition {name!r}")
        if recorded > version:
            raise corrupt(f"{where}.transitions: {name} names a version not yet written")
    expected_names = {"admit"}
    expected_names |= {f"resume/{s.n}" for s in occurrence.segments[1:]}
    expected_names |= {f"call/{c.k}" for c in occurrence.calls}
    elided_ends: set[str] = set()
    if occurrence.elided is not None:  # its calls are in its settlement event; their transitions stay
        expected_names |= {f"call/{k}" for k in range(1, occurrence.elided.calls + 1)}
        elided_ends = {f"call/{k}/end" for k in range(1, occurrence.elided.calls + 1)}
    reconciled = {r.segment for r in occurrence.reconciliations}
    for call in occurrence.calls:
        ended_by_reconcile = call.outcome == "lost" and call.segment in reconciled
        if call.ended_at is not None and not ended_by_reconcile:
            expected_names.add(f"call/{call.k}/end")
    expected_names |= {f"defer/{d.segment}" for d in occurrence.deferrals}
    expected_names |= {f"reconcile/{r.segment}" for r in occurrence.reconciliations}
    if occurrence.settlement is not None:
        expected_names.add("settle")
    lost_by_reconcile = {
        f"call/{c.k}/end" for c in occurrence.calls if c.outcome == "lost" and c.segment in reconciled
    }
    actual = set(occurrence.transitions)
    if not expected_names <= actual or not actual - expected_names <= lost_by_reconcile | elided_ends:
        raise corrupt(f"{where}.transitions: do not match the recorded segments, calls and settlement")
    for deferral in occurrence.deferrals:
        if occurrence.segments[deferral.segment - 1].ended.how != "deferred":  # type: ignore[union-attr]
            raise corrupt(f"{where}: deferral {deferral.segment} names a segment that did not end deferred")
    for reconciliation in occurrence.reconciliations:
        segment = occurrence.segments[reconciliation.segment - 1]
        if segment.ended is None or segment.ended.how != "reconciled":
            raise corrupt(f"{where}: reconciliation {reconciliation.segment} names a segment not reconciled")
