"""The commission: the owner's signed document of lanes, tasks, bounds and the weekly ceiling.

Parsed into frozen pydantic models (camelCase on the wire, snake_case in Python,
extra keys forbidden, integers strict so `true` is never a count). Every limit of
SCHEDULE_LIMITS that a commission can break is a field constraint or a model
validator, and every refusal is one INVALID message naming the field's path, e.g.
`lanes[0].tasks[1].callBound: Input should be less than or equal to 2000000`.

The JSON Schema an owner's editor uses (`commission.schema.json`, shipped beside
this module) is generated from these same models, so the two cannot disagree
about shapes and ranges; the cross-field rules (lane ID = product/rhythm, unique
lanes and tasks, `closes` after `time`, a lane's call total) are the parser's alone.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pendulum import Date, DateTime
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from factory_schedule.store import canonical_json

from .errors import ScheduleError, invalid
from .identity import (
    PIPELINE_RHYTHMS,
    PORTFOLIO,
    PORTFOLIO_RHYTHMS,
    PRODUCT_ID_PATTERN,
    PRODUCT_ID_RULE,
    PRODUCT_RHYTHMS,
    RHYTHMS,
    is_pipeline_rhythm,
    is_valid_product_id,
    is_weekly,
    occurrence_id,
    occurrence_key,
)
from .limits import COMMISSION_PROTOCOL, SCHEDULE_LIMITS
from .pipeline_settings import RESOURCE_PATTERN, RUN_PATTERN, PipelineSettings
from .refusal_words import refusal_in_words, refusals_in_words
from .text import checked_document
from .zones import is_valid_zone, parse_local_date, parse_wall_time, zoned_instant

L = SCHEDULE_LIMITS
_MODEL_CONFIG = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, alias_generator=to_camel)

WALL_TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
TASK_NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
LANE_ID_PATTERN = (r"^[a-z0-9][a-z0-9-]{0,31}/(basic|full|audit|synthesis|bundle"
                   r"|promotion|promotion-reviewer|maturation|maturation-reviewer)$")

NAME_WORDS = "1 to 64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"
FORMS = {
    WALL_TIME_PATTERN: "not a 24-hour time HH:MM (00:00 to 23:59)",
    DATE_PATTERN: "not a date YYYY-MM-DD",
    TASK_NAME_PATTERN: f"not a name: {NAME_WORDS}",
    RESOURCE_PATTERN: f"not a name: {NAME_WORDS}",  # the same form as a task's name
    PRODUCT_ID_PATTERN: ("not a Product ID: 1 to 32 lowercase letters, digits or '-', starting and ending "
                         "with a letter or digit"),
    LANE_ID_PATTERN: (f"not '<product>/<rhythm>': a Product ID (or portfolio), a '/', and one of the rhythms "
                      f"{', '.join(RHYTHMS)}"),
    RUN_PATTERN: ("not a run's identity: 1 to 64 lowercase letters, digits, '.', '_', '/' or '-', starting with "
                  "a letter or digit"),
}
"""What each pattern a commission field is checked by means, in the words a refusal says."""

Account = Literal["claude", "chatgpt"]
Rhythm = Literal[
    "basic", "full", "audit", "synthesis", "bundle", "promotion", "promotion-reviewer", "maturation",
    "maturation-reviewer",
]
assert get_args(Rhythm) == RHYTHMS


def _field_error(field: str, message: str) -> PydanticCustomError:
    """A cross-field refusal that names the field it is about (the path printer appends it)."""
    return PydanticCustomError("field_rule", "{message}", {"field": field, "message": message})


def _check_zone(value: str) -> str:
    if not is_valid_zone(value):
        raise ValueError(f"unknown zone {value!r} (an IANA name such as 'Europe/London')")
    return value


def _check_date(value: str) -> str:
    try:
        parse_local_date(value)
    except ScheduleError as error:
        raise ValueError(error.message) from None
    return value


def _wall_minutes(value: str) -> int:
    hour, minute = parse_wall_time(value)
    return hour * 60 + minute


MaxCalls = Annotated[
    StrictInt,
    Field(ge=1, le=L.max_calls_per_task, description="provider calls this task may make in one occurrence"),
]
CallBound = Annotated[
    StrictInt,
    Field(ge=1, le=L.max_call_bound_tokens, description="tokens one call may use; debited until its usage is known"),
]
Weekday = Annotated[StrictInt, Field(ge=1, le=7, description="ISO weekday of a weekly lane: 1 = Monday .. 7 = Sunday")]
DeadlineMinutes = Annotated[
    StrictInt,
    Field(ge=1, le=L.max_deadline_minutes, description="minutes a night's segment admits calls (capped at closes)"),
]
Revision = Annotated[
    StrictInt, Field(ge=1, le=L.max_revision, description="the commission's revision; each recording takes the next")
]
WeeklyTokens = Annotated[
    StrictInt, Field(ge=1, le=L.max_weekly_tokens, description="token ceiling of each ISO week (no default)")
]
RecordMaxAgeDays = Annotated[
    StrictInt,
    Field(ge=1, le=L.max_record_age_days, description="days an owner's account record stays current"),
]


class CommissionTask(BaseModel):
    """One kind of provider work a lane may do, with its call allowance and per-call token bound."""

    model_config = _MODEL_CONFIG

    task: Annotated[StrictStr, Field(pattern=TASK_NAME_PATTERN, description="task name, unique within its lane")]
    account: Annotated[Account, Field(description="the subscription that pays: claude or chatgpt")]
    max_calls: MaxCalls
    call_bound: CallBound


class Lane(BaseModel):
    """A Product's (or the portfolio's) rhythm: when it is due, when its window closes, what it may do."""

    model_config = _MODEL_CONFIG

    lane: Annotated[StrictStr, Field(pattern=LANE_ID_PATTERN, description="'<product>/<rhythm>'")]
    product: Annotated[
        StrictStr, Field(pattern=PRODUCT_ID_PATTERN, description="a Product ID, or 'portfolio' for its rhythms")
    ]
    rhythm: Annotated[
        Rhythm,
        Field(description="basic and the staged lanes' runs (portfolio's promotion, promotion-reviewer, "
                          "maturation, maturation-reviewer) are daily; the others are weekly"),
    ]
    weekday: Weekday | None = None
    time: Annotated[
        StrictStr, Field(pattern=WALL_TIME_PATTERN, description="local start 'HH:MM' in the commission's zone")
    ]
    closes: Annotated[
        StrictStr, Field(pattern=WALL_TIME_PATTERN, description="local 'HH:MM' the window closes, later than time")
    ]
    deadline_minutes: DeadlineMinutes
    tasks: Annotated[tuple[CommissionTask, ...], Field(min_length=1, max_length=L.max_tasks_per_rhythm)]

    @model_validator(mode="after")
    def _rules(self) -> Lane:
        if self.product == PORTFOLIO and self.rhythm not in PORTFOLIO_RHYTHMS + PIPELINE_RHYTHMS:
            raise _field_error(
                "rhythm",
                f"portfolio has only the audit, synthesis, bundle rhythms and the staged lanes' runs "
                f"({', '.join(PIPELINE_RHYTHMS)}), not {self.rhythm}",
            )
        if self.product != PORTFOLIO:
            if not is_valid_product_id(self.product):
                raise _field_error("product", f"{self.product!r} is not a Product ID ({PRODUCT_ID_RULE})")
            if self.rhythm not in PRODUCT_RHYTHMS:
                raise _field_error("rhythm", f"a Product has only basic and full; {self.rhythm} belongs to portfolio")
        if self.lane != f"{self.product}/{self.rhythm}":
            raise _field_error("lane", f"{self.lane!r} must be '{self.product}/{self.rhythm}' (product/rhythm)")
        if not is_weekly(self.rhythm) and self.weekday is not None:
            raise _field_error("weekday", f"a {self.rhythm} lane runs every day and takes no weekday")
        if is_weekly(self.rhythm) and self.weekday is None:
            raise _field_error("weekday", f"a {self.rhythm} lane is weekly and needs an ISO weekday (1-7)")
        if _wall_minutes(self.closes) <= _wall_minutes(self.time):
            raise _field_error("closes", f"{self.closes} must be later than time {self.time} on the same date")
        names = [task.task for task in self.tasks]
        for name in names:
            if names.count(name) > 1:
                raise _field_error("tasks", f"task {name!r} appears more than once in the lane")
        total = sum(task.max_calls for task in self.tasks)
        if total > L.max_calls_per_occurrence:
            raise _field_error("tasks", f"the tasks' maxCalls add up to {total}, above {L.max_calls_per_occurrence}")
        return self

    @property
    def weekly(self) -> bool:
        return is_weekly(self.rhythm)

    @property
    def pipeline_run(self) -> str | None:
        """The staged lanes' run this lane schedules (its rhythm), or None for a discovery lane."""
        return self.rhythm if is_pipeline_rhythm(self.rhythm) else None

    def task_named(self, name: str) -> CommissionTask | None:
        return next((task for task in self.tasks if task.task == name), None)


class Commission(BaseModel):
    """The whole commission (protocol sf-schedule-commission/1)."""

    model_config = _MODEL_CONFIG

    protocol: Annotated[Literal["sf-schedule-commission/1"], Field(description="always sf-schedule-commission/1")]
    revision: Revision
    zone: Annotated[
        StrictStr,
        AfterValidator(_check_zone),
        Field(description="IANA zone of every date and time, e.g. Europe/London"),
    ]
    effective_from: Annotated[
        StrictStr,
        Field(pattern=DATE_PATTERN, description="'YYYY-MM-DD': the first local date anything is due"),
        AfterValidator(_check_date),
    ]
    weekly_tokens: WeeklyTokens
    record_max_age_days: RecordMaxAgeDays
    lanes: Annotated[tuple[Lane, ...], Field(min_length=1, max_length=L.max_lanes)]
    pipeline: Annotated[
        PipelineSettings | None,
        Field(description="the staged promotion and maturation lanes' settings (optional; core/pipeline)"),
    ] = None

    @model_validator(mode="after")
    def _rules(self) -> Commission:
        seen: set[str] = set()
        for lane in self.lanes:
            if lane.lane in seen:
                raise _field_error("lanes", f"lane {lane.lane!r} appears more than once")
            seen.add(lane.lane)
        products = self.products
        if len(products) > L.max_products:
            raise _field_error("lanes", f"{len(products)} Products (other than portfolio), above {L.max_products}")
        problem = pipeline_lane_problem(self.lanes, self.pipeline)
        if problem is not None:
            raise _field_error(*problem)
        return self

    @property
    def products(self) -> tuple[str, ...]:
        """The Products the commission names, portfolio aside, in first-mention order."""
        return tuple(dict.fromkeys(lane.product for lane in self.lanes if lane.product != PORTFOLIO))

    @property
    def effective_date(self) -> Date:
        return parse_local_date(self.effective_from)

    def lane_named(self, lane: str) -> Lane | None:
        return next((candidate for candidate in self.lanes if candidate.lane == lane), None)


assert COMMISSION_PROTOCOL == "sf-schedule-commission/1"


def pipeline_lane_problem(lanes: Iterable[Lane], settings: PipelineSettings | None) -> tuple[str, str] | None:
    """(field, why) when the staged lanes' runs break their stagger order or disagree with the
    pipeline settings; None when they are sound (or absent).

    A run's lane (`portfolio/<run>`) needs the commission's `pipeline` settings, whose run identities
    must be the lanes' rhythms (the run a lane schedules is the run that claims its tasks). Discovery
    comes first each night: every run starts after every basic lane, and the runs start in the order
    promotion, promotion reviewer, maturation, maturation reviewer (the lanes an owner leaves out are
    skipped)."""
    runs = [lane for lane in lanes if lane.pipeline_run is not None]
    if not runs:
        return None
    if settings is None:
        return "pipeline", f"the lane {runs[0].lane} schedules a staged lanes' run; add the pipeline settings"
    for lane in runs:
        field = _SETTINGS_FIELD[lane.rhythm]
        named = getattr(settings, field)
        if named != lane.rhythm:
            return "pipeline", (f"{to_camel(field)} is {named!r}, but the lane {lane.lane} schedules the run "
                                f"{lane.rhythm!r}: name the run after its lane's rhythm")
    basics = [lane for lane in lanes if lane.rhythm == "basic"]
    last_basic = max(basics, key=lambda lane: _wall_minutes(lane.time), default=None)
    ordered = sorted(runs, key=lambda lane: PIPELINE_RHYTHMS.index(lane.rhythm))
    for lane in ordered:
        if last_basic is not None and _wall_minutes(lane.time) <= _wall_minutes(last_basic.time):
            return "lanes", (f"{lane.lane} at {lane.time} must start after every basic lane "
                             f"({last_basic.lane} starts at {last_basic.time}): discovery comes first")
    for earlier, later in itertools.pairwise(ordered):
        if _wall_minutes(later.time) <= _wall_minutes(earlier.time):
            return "lanes", (f"{later.lane} at {later.time} must start after {earlier.lane} at {earlier.time} "
                             f"(the order is {', '.join(PIPELINE_RHYTHMS)})")
    return None


_SETTINGS_FIELD = {
    "promotion": "promotion_scheduler",
    "promotion-reviewer": "promotion_reviewer",
    "maturation": "maturation_scheduler",
    "maturation-reviewer": "maturation_reviewer",
}
assert tuple(_SETTINGS_FIELD) == PIPELINE_RHYTHMS


# --- parsing, the document form and its digest ------------------------------------------------


def describe_validation_error(error: ValidationError, *, limit: int = 5) -> str:
    """One readable line: each refusal as `path: reason` in words, the first `limit` of them."""
    return refusal_in_words(error, FORMS, limit=limit)


def parse_commission(doc: dict[str, Any] | Commission) -> Commission:
    """The validated commission, or ScheduleError INVALID naming the field(s) it refuses."""
    if isinstance(doc, Commission):
        return doc
    if not isinstance(doc, dict):
        raise invalid(f"commission: a JSON object is needed, got {type(doc).__name__}")
    checked_document("commission", doc)  # the text rule for every string, and no nesting to recurse on
    try:
        return Commission.model_validate(doc)
    except ValidationError as error:
        raise invalid(describe_validation_error(error)) from None


def commission_problems(doc: Any) -> list[str]:
    """Every refusal of `doc` as a commission, one `path: reason` line each; empty when it parses."""
    if not isinstance(doc, dict):
        return [f"commission: a JSON object is needed, got {type(doc).__name__}"]
    try:
        checked_document("commission", doc)
        Commission.model_validate(doc)
    except ScheduleError as error:
        return [error.message]
    except ValidationError as error:
        return refusals_in_words(error, FORMS)
    return []


def commission_document(commission: dict[str, Any] | Commission) -> dict[str, Any]:
    """The commission's canonical JSON-ready form: camelCase keys, a basic lane's absent weekday omitted."""
    return parse_commission(commission).model_dump(mode="json", by_alias=True, exclude_none=True)


def commission_digest(commission: dict[str, Any] | Commission) -> str:
    """SHA-256 (hex) of the canonical JSON of the parsed commission: equal for a dict and its model."""
    return hashlib.sha256(canonical_json(commission_document(commission)).encode("utf-8")).hexdigest()


def lanes_of(commission: dict[str, Any] | Commission) -> list[Lane]:
    return list(parse_commission(commission).lanes)


# --- a lane's occurrence on a local date ---------------------------------------------------------


@dataclass(frozen=True)
class LaneOccurrence:
    """A lane's occurrence on a local date: its ID, the local date, and its slot and close in UTC.

    `closes` is never before `slot`: if a DST gap swallows the whole window (a slot moved forward
    past its close), the window is empty (`closes == slot`) and nothing can be admitted that night.
    """

    id: str
    lane: str
    product: str
    rhythm: str
    key: str
    date: Date
    slot: DateTime
    closes: DateTime

    @property
    def weekly(self) -> bool:
        return is_weekly(self.rhythm)


def _lane_of(commission: Commission, lane: str | Lane) -> Lane:
    if isinstance(lane, Lane):
        return lane
    found = commission.lane_named(lane) if isinstance(lane, str) else None
    if found is None:
        raise ScheduleError("NOT_A_LANE", f"the commission has no lane {lane!r}")
    return found


def lane_occurrence_on(
    commission: dict[str, Any] | Commission, lane: str | Lane, date: Date | str
) -> LaneOccurrence | None:
    """The lane's occurrence on a local date, or None when the lane does not run that weekday.

    effectiveFrom is not applied here: which dates are due is the engine's rule.
    """
    parsed = parse_commission(commission)
    chosen = _lane_of(parsed, lane)
    day = parse_local_date(date)
    if chosen.weekly and day.isoweekday() != chosen.weekday:
        return None
    slot = zoned_instant(parsed.zone, day, chosen.time)
    closes = max(slot, zoned_instant(parsed.zone, day, chosen.closes))
    key = occurrence_key(chosen.rhythm, day)
    return LaneOccurrence(
        id=occurrence_id(chosen.product, chosen.rhythm, key),
        lane=chosen.lane,
        product=chosen.product,
        rhythm=chosen.rhythm,
        key=key,
        date=day,
        slot=slot,
        closes=closes,
    )


# --- the proposal (every value is a proposal, not the owner's decision) ---------------------------

WINDOW_OPENS = "02:00"
WINDOW_CLOSES = "05:00"
DEFAULT_ZONE = "Europe/London"
DEFAULT_STAGGER_MINUTES = 20
DEFAULT_RECORD_MAX_AGE_DAYS = 30
FULL_NIGHTS = (4, 5, 6)  # Thursday, Friday, Saturday
FULL_PER_NIGHT = 2
FULL_OPENS = "02:40"
PORTFOLIO_WEEKDAY = 7  # Sunday: after the week's full nights, before the next ISO week opens
PROPOSED_DEADLINES = {"basic": 45, "full": 120, "audit": 30, "synthesis": 60, "bundle": 10}
PORTFOLIO_TIMES = {"audit": ("02:30", "05:00"), "synthesis": ("03:00", "05:00"), "bundle": ("04:00", "08:00")}
PROPOSED_TASKS: dict[str, tuple[dict[str, Any], ...]] = {
    "basic": ({"task": "scan", "account": "claude", "maxCalls": 4, "callBound": 150_000},),
    "full": ({"task": "research", "account": "claude", "maxCalls": 8, "callBound": 300_000},),
    "audit": ({"task": "audit", "account": "claude", "maxCalls": 4, "callBound": 200_000},),
    "synthesis": ({"task": "synthesis", "account": "claude", "maxCalls": 6, "callBound": 300_000},),
    "bundle": ({"task": "bundle", "account": "claude", "maxCalls": 2, "callBound": 100_000},),
    # A staged lane's run works one stage's task: one call, its prompt carrying the task as context.
    "promotion": ({"task": "stage", "account": "claude", "maxCalls": 1, "callBound": 300_000},),
    "promotion-reviewer": ({"task": "review", "account": "claude", "maxCalls": 1, "callBound": 200_000},),
    "maturation": ({"task": "stage", "account": "claude", "maxCalls": 1, "callBound": 300_000},),
    "maturation-reviewer": ({"task": "review", "account": "claude", "maxCalls": 1, "callBound": 200_000},),
}


def _wall_text(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _full_night(index: int) -> tuple[int, int]:
    """(ISO weekday, position that night) of the index-th Product's full lane.

    Products 1-2 run full on Thursday, 3-4 on Friday, 5-6 on Saturday; a seventh to ninth
    Product (up to the limit of nine) is a third full lane on Thursday, Friday, Saturday.
    """
    capacity = len(FULL_NIGHTS) * FULL_PER_NIGHT
    if index < capacity:
        return FULL_NIGHTS[index // FULL_PER_NIGHT], index % FULL_PER_NIGHT
    return FULL_NIGHTS[(index - capacity) % len(FULL_NIGHTS)], FULL_PER_NIGHT + (index - capacity) // len(FULL_NIGHTS)


def _lane(product: str, rhythm: str, time: str, closes: str, weekday: int | None,
          deadline: int | None = None) -> dict[str, Any]:
    lane: dict[str, Any] = {"lane": f"{product}/{rhythm}", "product": product, "rhythm": rhythm}
    if weekday is not None:
        lane["weekday"] = weekday
    minutes = PROPOSED_DEADLINES[rhythm] if deadline is None else deadline
    lane |= {"time": time, "closes": closes, "deadlineMinutes": minutes}
    lane["tasks"] = [dict(task) for task in PROPOSED_TASKS[rhythm]]
    return lane


def proposed_commission(
    products: list[str] | tuple[str, ...],
    effective_from: Date | str,
    weekly_tokens: int,
    revision: int = 1,
    zone: str = DEFAULT_ZONE,
    stagger_minutes: int = DEFAULT_STAGGER_MINUTES,
    pipeline: bool = False,
) -> dict[str, Any]:
    """A complete commission with the proposed defaults (docs/reference/commission.md lists why each); it always parses.

    With `pipeline`, it also carries the pipeline's default settings and schedules the staged lanes'
    four runs daily after the last basic lane, one stagger apart in their order, each with a
    deadline of one stagger (so no run shares its write window with the next); a proposal whose runs
    would not all end by the window's close is refused in one line (a smaller stagger fits more).
    Without it, the proposal is discovery's alone, as an owner who has not configured the pipeline
    expects: its lanes would only answer NOT_CONFIGURED."""
    if isinstance(products, str) or not isinstance(products, list | tuple) or not products:
        raise invalid("products: a non-empty list of Product IDs is needed")
    for product in products:
        if not is_valid_product_id(product):
            raise invalid(f"products: {product!r} is not a Product ID ({PRODUCT_ID_RULE})")
    if len(set(products)) != len(products):
        raise invalid("products: a Product is named twice")
    if len(products) > L.max_products:
        raise invalid(f"products: {len(products)} Products, above {L.max_products}")
    if not isinstance(stagger_minutes, int) or isinstance(stagger_minutes, bool):
        raise invalid("stagger_minutes: an integer is needed")
    if not L.min_stagger_minutes <= stagger_minutes <= L.max_stagger_minutes:
        raise invalid(
            f"stagger_minutes: {stagger_minutes} is outside {L.min_stagger_minutes}-{L.max_stagger_minutes} minutes"
        )
    opens, closes = _wall_minutes(WINDOW_OPENS), _wall_minutes(WINDOW_CLOSES)
    last_basic = opens + (len(products) - 1) * stagger_minutes
    if last_basic >= closes:
        raise invalid(
            f"stagger_minutes: {len(products)} Products {stagger_minutes} minutes apart do not all start "
            f"before the {WINDOW_CLOSES} close"
        )
    if not isinstance(pipeline, bool):
        raise invalid("pipeline: true or false is needed")
    runs_start = last_basic + stagger_minutes
    runs_end = runs_start + len(PIPELINE_RHYTHMS) * stagger_minutes
    if pipeline and runs_end > closes:
        raise invalid(
            f"stagger_minutes: {len(products)} Products and the staged lanes' {len(PIPELINE_RHYTHMS)} runs "
            f"{stagger_minutes} minutes apart do not all end by the {WINDOW_CLOSES} close (a shorter stagger, or "
            "fewer Products, fits)"
        )
    try:
        effective = parse_local_date(effective_from).to_date_string()
    except ScheduleError as error:
        raise invalid(f"effectiveFrom: {error.message}") from None
    lanes: list[dict[str, Any]] = []
    for index, product in enumerate(products):
        lanes.append(_lane(product, "basic", _wall_text(opens + index * stagger_minutes), WINDOW_CLOSES, None))
        weekday, position = _full_night(index)
        full_time = _wall_text(_wall_minutes(FULL_OPENS) + position * stagger_minutes)
        lanes.append(_lane(product, "full", full_time, WINDOW_CLOSES, weekday))
    for rhythm in PORTFOLIO_RHYTHMS:
        time, close = PORTFOLIO_TIMES[rhythm]
        lanes.append(_lane(PORTFOLIO, rhythm, time, close, PORTFOLIO_WEEKDAY))
    if pipeline:
        for index, rhythm in enumerate(PIPELINE_RHYTHMS):
            time = _wall_text(runs_start + index * stagger_minutes)
            lanes.append(_lane(PORTFOLIO, rhythm, time, WINDOW_CLOSES, None, deadline=stagger_minutes))
    commission: dict[str, Any] = {
        "protocol": COMMISSION_PROTOCOL,
        "revision": revision,
        "zone": zone,
        "effectiveFrom": effective,
        "weeklyTokens": weekly_tokens,
        "recordMaxAgeDays": DEFAULT_RECORD_MAX_AGE_DAYS,
        "lanes": lanes,
    }
    if pipeline:
        commission["pipeline"] = {}  # every setting at its default, written out by the canonical form
    return commission_document(commission)


def ceiling_from_shadow(p95: int) -> int:
    """The weekly ceiling a shadow run suggests: its p95 weekly usage x 1.25, rounded up, in integers."""
    if not isinstance(p95, int) or isinstance(p95, bool) or p95 < 1:
        raise invalid(f"p95: a positive integer of tokens is needed, got {p95!r}")
    ceiling = (p95 * 5 + 3) // 4
    if ceiling > L.max_weekly_tokens:
        raise invalid(f"p95: a ceiling of {ceiling} would exceed weeklyTokens' limit of {L.max_weekly_tokens}")
    return ceiling


# --- the JSON Schema ------------------------------------------------------------------------------

SCHEMA_FILE_NAME = "commission.schema.json"


def commission_json_schema() -> dict[str, Any]:
    """The commission's JSON Schema (draft 2020-12), from the parser's own models, by alias."""
    schema = Commission.model_json_schema(by_alias=True, mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://factory-schedule.invalid/{SCHEMA_FILE_NAME}",
        **schema,
        "title": "factory-schedule commission (sf-schedule-commission/1)",
    }


def commission_json_schema_text() -> str:
    """The exact text shipped as core/commission.schema.json."""
    return json.dumps(commission_json_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
