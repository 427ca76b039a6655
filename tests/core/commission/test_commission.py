"""The commission: validation at every limit, its digest, the proposal, lane occurrences, the schema."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import pendulum
import pytest
from pydantic import ValidationError

from factory_schedule.core.commission import (
    Commission,
    Lane,
    LaneOccurrence,
    ceiling_from_shadow,
    commission_digest,
    commission_json_schema,
    commission_json_schema_text,
    lane_occurrence_on,
    lanes_of,
    parse_commission,
    proposed_commission,
)
from factory_schedule.core.errors import ScheduleError
from factory_schedule.core.limits import SCHEDULE_LIMITS as L

REGENERATE = (
    '.venv/bin/python -c "import core.commission as c; '
    "open('core/commission.schema.json', 'w').write(c.commission_json_schema_text())\""
)


def task(name: str = "scan", max_calls: int = 4, call_bound: int = 150_000) -> dict[str, Any]:
    return {"task": name, "account": "claude", "maxCalls": max_calls, "callBound": call_bound}


def basic(product: str = "alpha", time: str = "02:00") -> dict[str, Any]:
    return {
        "lane": f"{product}/basic",
        "product": product,
        "rhythm": "basic",
        "time": time,
        "closes": "05:00",
        "deadlineMinutes": 45,
        "tasks": [task()],
    }


def weekly(product: str, rhythm: str, weekday: int = 4) -> dict[str, Any]:
    return basic(product) | {"lane": f"{product}/{rhythm}", "rhythm": rhythm, "weekday": weekday}


def commission(**overrides: Any) -> dict[str, Any]:
    doc = {
        "protocol": "sf-schedule-commission/1",
        "revision": 1,
        "zone": "Europe/London",
        "effectiveFrom": "2026-12-07",
        "weeklyTokens": 40_000_000,
        "recordMaxAgeDays": 30,
        "lanes": [basic(), weekly("alpha", "full"), weekly("portfolio", "bundle", 7)],
    }
    return doc | overrides


def refused(doc: Any) -> str:
    with pytest.raises(ScheduleError) as error:
        parse_commission(doc)
    assert error.value.code == "INVALID"
    return error.value.message


Mutation = Callable[[dict[str, Any]], None]


def set_in(*path: str | int, value: Any) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target: Any = doc
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return mutate


def tasks(count: int, max_calls: int = 1) -> Mutation:
    return set_in("lanes", 0, "tasks", value=[task(f"t{n}", max_calls) for n in range(count)])


def call_total(total: int) -> Mutation:
    return set_in("lanes", 0, "tasks", value=[task("a", 16), task("b", total - 16)])


def products(count: int) -> Mutation:
    return set_in("lanes", value=[basic(f"p{n}") for n in range(count)])


def lanes(count: int) -> Mutation:
    return set_in("lanes", value=[basic(f"p{n}") for n in range(count)])


def closes_after(minutes: int) -> Mutation:
    return set_in("lanes", 0, "closes", value=f"02:{minutes:02d}")


# (limit's name, mutation at the limit, mutation one past it, the field path the refusal names)
LIMITS = [
    ("revision at least 1", set_in("revision", value=1), set_in("revision", value=0), "revision"),
    (
        "revision at most 999999",
        set_in("revision", value=L.max_revision),
        set_in("revision", value=1_000_000),
        "revision",
    ),
    ("weeklyTokens at least 1", set_in("weeklyTokens", value=1), set_in("weeklyTokens", value=0), "weeklyTokens"),
    (
        "weeklyTokens at most 10 000 000 000",
        set_in("weeklyTokens", value=10_000_000_000),
        set_in("weeklyTokens", value=10_000_000_001),
        "weeklyTokens",
    ),
    (
        "recordMaxAgeDays at least 1",
        set_in("recordMaxAgeDays", value=1),
        set_in("recordMaxAgeDays", value=0),
        "recordMaxAgeDays",
    ),
    (
        "recordMaxAgeDays at most 30",
        set_in("recordMaxAgeDays", value=30),
        set_in("recordMaxAgeDays", value=31),
        "recordMaxAgeDays",
    ),
    (
        "deadlineMinutes at least 1",
        set_in("lanes", 0, "deadlineMinutes", value=1),
        set_in("lanes", 0, "deadlineMinutes", value=0),
        "lanes[0].deadlineMinutes",
    ),
    (
        "deadlineMinutes at most 180",
        set_in("lanes", 0, "deadlineMinutes", value=180),
        set_in("lanes", 0, "deadlineMinutes", value=181),
        "lanes[0].deadlineMinutes",
    ),
    (
        "maxCalls at least 1",
        set_in("lanes", 0, "tasks", 0, "maxCalls", value=1),
        set_in("lanes", 0, "tasks", 0, "maxCalls", value=0),
        "lanes[0].tasks[0].maxCalls",
    ),
    (
        "maxCalls at most 16",
        set_in("lanes", 0, "tasks", 0, "maxCalls", value=16),
        set_in("lanes", 0, "tasks", 0, "maxCalls", value=17),
        "lanes[0].tasks[0].maxCalls",
    ),
    (
        "callBound at least 1",
        set_in("lanes", 1, "tasks", 0, "callBound", value=1),
        set_in("lanes", 1, "tasks", 0, "callBound", value=0),
        "lanes[1].tasks[0].callBound",
    ),
    (
        "callBound at most 2 000 000",
        set_in("lanes", 1, "tasks", 0, "callBound", value=2_000_000),
        set_in("lanes", 1, "tasks", 0, "callBound", value=2_000_001),
        "lanes[1].tasks[0].callBound",
    ),
    ("tasks at least 1 per lane", tasks(1), tasks(0), "lanes[0].tasks"),
    ("tasks at most 4 per lane", tasks(4), tasks(5), "lanes[0].tasks"),
    ("a lane's maxCalls add up to at most 24", call_total(24), call_total(25), "lanes[0].tasks"),
    ("at most 9 Products", products(9), products(10), "lanes"),
    ("lanes at least 1", products(1), lanes(0), "lanes"),
    (
        "weekday at least 1",
        set_in("lanes", 1, "weekday", value=1),
        set_in("lanes", 1, "weekday", value=0),
        "lanes[1].weekday",
    ),
    (
        "weekday at most 7",
        set_in("lanes", 1, "weekday", value=7),
        set_in("lanes", 1, "weekday", value=8),
        "lanes[1].weekday",
    ),
    ("closes later than time", closes_after(1), closes_after(0), "lanes[0].closes"),
]


@pytest.mark.parametrize(("limit", "at_limit", "past_limit", "field"), LIMITS, ids=[case[0] for case in LIMITS])
def test_commission_validation_holds_each_limit_and_refuses_one_past_it(
    limit: str, at_limit: Mutation, past_limit: Mutation, field: str
) -> None:
    accepted = commission()
    at_limit(accepted)
    parse_commission(accepted)
    rejected = commission()
    past_limit(rejected)
    message = refused(rejected)
    assert message.startswith(f"{field}: "), message


def test_at_most_48_lanes_and_the_most_distinct_lanes_nine_products_can_have_is_21() -> None:
    most = [lane for n in range(9) for lane in (basic(f"p{n}"), weekly(f"p{n}", "full"))]
    most += [weekly("portfolio", rhythm, 7) for rhythm in ("audit", "synthesis", "bundle")]
    assert len(parse_commission(commission(lanes=most)).lanes) == 21
    assert refused(commission(lanes=[basic()] * (L.max_lanes + 1))).startswith("lanes: ")


BAD_FIELDS = [
    ("protocol", set_in("protocol", value="sf-schedule-commission/2"), "protocol: "),
    ("zone unknown", set_in("zone", value="Mars/Base"), "zone: "),
    ("zone host-dependent", set_in("zone", value="localtime"), "zone: "),
    ("effectiveFrom impossible", set_in("effectiveFrom", value="2026-02-30"), "effectiveFrom: "),
    ("effectiveFrom not ISO", set_in("effectiveFrom", value="07/12/2026"), "effectiveFrom: "),
    ("a bool is not a count", set_in("lanes", 0, "tasks", 0, "maxCalls", value=True), "lanes[0].tasks[0].maxCalls: "),
    ("a float is not a count", set_in("weeklyTokens", value=4e7), "weeklyTokens: "),
    ("a string is not a count", set_in("revision", value="1"), "revision: "),
    ("unknown account", set_in("lanes", 0, "tasks", 0, "account", value="gemini"), "lanes[0].tasks[0].account: "),
    ("unknown key", set_in("lanes", 0, "tasks", 0, "model", value="x"), "lanes[0].tasks[0].model: "),
    ("unknown top-level key", set_in("ceiling", value=1), "ceiling: "),
    ("lane ID not product/rhythm", set_in("lanes", 0, "lane", value="beta/basic"), "lanes[0].lane: "),
    ("portfolio has no basic", set_in("lanes", 0, value=basic("portfolio")), "lanes[0].rhythm: "),
    ("a Product has no audit", set_in("lanes", 1, value=weekly("alpha", "audit")), "lanes[1].rhythm: "),
    ("a Product ID pattern", set_in("lanes", 0, value=basic("Alpha")), "lanes[0].product: "),
    ("basic takes no weekday", set_in("lanes", 0, "weekday", value=3), "lanes[0].weekday: "),
    ("weekly needs a weekday", set_in("lanes", 1, "weekday", value=None), "lanes[1].weekday: "),
    ("wall time 24:00", set_in("lanes", 0, "time", value="24:00"), "lanes[0].time: "),
    ("duplicate lane", set_in("lanes", 2, value=basic()), "lanes: "),
    ("duplicate task", set_in("lanes", 0, "tasks", value=[task("scan"), task("scan")]), "lanes[0].tasks: "),
    ("unknown rhythm", set_in("lanes", 0, "rhythm", value="daily"), "lanes[0].rhythm: "),
]


@pytest.mark.parametrize(("case", "mutation", "prefix"), BAD_FIELDS, ids=[case[0] for case in BAD_FIELDS])
def test_commission_refusals_name_the_field(case: str, mutation: Mutation, prefix: str) -> None:
    doc = commission()
    mutation(doc)
    assert any(part.startswith(prefix) for part in refused(doc).split("; "))


def test_weekly_tokens_has_no_default() -> None:
    doc = commission()
    del doc["weeklyTokens"]
    assert refused(doc) == "weeklyTokens: missing (this field is required)"


def test_a_commission_must_be_an_object() -> None:
    assert refused([commission()]).startswith("commission: ")
    assert refused(None).startswith("commission: ")


def test_several_refusals_read_as_one_line() -> None:
    doc = commission(revision=0, zone="Nowhere")
    doc["lanes"][0]["tasks"][0]["callBound"] = -1
    message = refused(doc)
    assert "\n" not in message
    assert "revision: " in message and "zone: " in message and "lanes[0].tasks[0].callBound: " in message


def test_parsed_commission_is_frozen_and_snake_case() -> None:
    parsed = parse_commission(commission())
    assert isinstance(parsed, Commission)
    assert parsed.weekly_tokens == 40_000_000 and parsed.record_max_age_days == 30
    assert parsed.effective_date == pendulum.Date(2026, 12, 7)
    assert parsed.products == ("alpha",)
    with pytest.raises(ValidationError):
        parsed.revision = 2  # type: ignore[misc]
    assert parse_commission(parsed) is parsed


# --- digest ----------------------------------------------------------------------------------------


def test_commission_digest_is_the_same_for_a_dict_and_its_parsed_model() -> None:
    doc = commission()
    digest = commission_digest(doc)
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert commission_digest(parse_commission(doc)) == digest
    reordered = json.loads(json.dumps(doc, sort_keys=True))
    reordered["lanes"][0] = dict(reversed(list(reordered["lanes"][0].items())))
    assert commission_digest(reordered) == digest
    explicit_null = copy.deepcopy(doc)
    explicit_null["lanes"][0]["weekday"] = None
    assert commission_digest(explicit_null) == digest


def test_commission_digest_changes_with_any_value() -> None:
    assert commission_digest(commission()) != commission_digest(commission(revision=2))
    other = commission()
    other["lanes"][0]["tasks"][0]["callBound"] += 1
    assert commission_digest(commission()) != commission_digest(other)


# --- lanes and their occurrences ----------------------------------------------------------------


def test_lanes_of_returns_the_lanes_with_snake_case_attributes() -> None:
    found = lanes_of(commission())
    assert [lane.lane for lane in found] == ["alpha/basic", "alpha/full", "portfolio/bundle"]
    assert all(isinstance(lane, Lane) for lane in found)
    assert (found[1].weekday, found[1].time, found[1].closes, found[1].deadline_minutes) == (4, "02:00", "05:00", 45)
    assert found[0].tasks[0].max_calls == 4 and found[0].tasks[0].call_bound == 150_000


def test_a_basic_lane_occurs_every_local_date_in_the_commission_zone() -> None:
    doc = commission(zone="Asia/Tokyo")
    occurrence = lane_occurrence_on(doc, "alpha/basic", "2026-12-07")
    assert occurrence == LaneOccurrence(
        id="discovery/alpha/basic/2026-12-07",
        lane="alpha/basic",
        product="alpha",
        rhythm="basic",
        key="2026-12-07",
        date=pendulum.Date(2026, 12, 7),
        slot=pendulum.datetime(2026, 12, 6, 17, 0),
        closes=pendulum.datetime(2026, 12, 6, 20, 0),
    )
    for day in range(1, 8):
        assert lane_occurrence_on(doc, "alpha/basic", pendulum.Date(2026, 12, day)) is not None


def test_a_weekly_lane_occurs_on_its_weekday_only_keyed_by_its_iso_week() -> None:
    doc = commission()
    thursday = lane_occurrence_on(doc, "alpha/full", "2026-12-31")
    assert thursday is not None and thursday.id == "discovery/alpha/full/2026-W53"
    assert thursday.key == "2026-W53" and thursday.date == pendulum.Date(2026, 12, 31)
    assert lane_occurrence_on(doc, "alpha/full", "2027-01-01") is None
    sunday = lane_occurrence_on(doc, lanes_of(doc)[2], "2027-01-03")
    assert sunday is not None and sunday.id == "discovery/portfolio/bundle/2026-W53"
    assert lane_occurrence_on(doc, "portfolio/bundle", "2027-01-10").id == "discovery/portfolio/bundle/2027-W01"  # type: ignore[union-attr]


def test_lane_occurrence_on_ignores_effective_from() -> None:
    assert lane_occurrence_on(commission(), "alpha/basic", "2020-01-01") is not None


def test_lane_occurrence_on_an_unknown_lane_is_not_a_lane() -> None:
    with pytest.raises(ScheduleError) as error:
        lane_occurrence_on(commission(), "beta/basic", "2026-12-07")
    assert error.value.code == "NOT_A_LANE"


def test_a_window_swallowed_by_a_dst_gap_is_empty_not_inverted() -> None:
    doc = commission(zone="Europe/Berlin")
    doc["lanes"][0] |= {"time": "02:30", "closes": "03:15"}
    occurrence = lane_occurrence_on(doc, "alpha/basic", "2026-03-29")
    assert occurrence is not None
    assert occurrence.slot == pendulum.datetime(2026, 3, 29, 1, 30)  # 02:30 moves forward to 03:30 CEST
    assert occurrence.closes == occurrence.slot  # 03:15 CEST (01:15Z) came before it: the window is empty
    ordinary = lane_occurrence_on(doc, "alpha/basic", "2026-03-30")
    assert ordinary is not None and (ordinary.closes - ordinary.slot).in_minutes() == 45


def test_the_london_window_keeps_its_local_hours_across_the_clock_changes() -> None:
    doc = commission()
    spring = lane_occurrence_on(doc, "alpha/basic", "2026-03-29")
    autumn = lane_occurrence_on(doc, "alpha/basic", "2026-10-25")
    assert spring is not None and autumn is not None
    assert (spring.slot, spring.closes) == (pendulum.datetime(2026, 3, 29, 1), pendulum.datetime(2026, 3, 29, 4))
    assert (autumn.slot, autumn.closes) == (pendulum.datetime(2026, 10, 25, 2), pendulum.datetime(2026, 10, 25, 5))


# --- the proposal ---------------------------------------------------------------------------------


def test_proposed_commission_parses_with_the_proposed_defaults() -> None:
    doc = proposed_commission(
        products=["alpha", "beta", "gamma"], effective_from="2026-12-07", weekly_tokens=40_000_000
    )
    parsed = parse_commission(doc)
    assert (parsed.protocol, parsed.revision, parsed.zone, parsed.effective_from) == (
        "sf-schedule-commission/1",
        1,
        "Europe/London",
        "2026-12-07",
    )
    assert (parsed.weekly_tokens, parsed.record_max_age_days) == (40_000_000, 30)
    table = {lane.lane: (lane.weekday, lane.time, lane.closes, lane.deadline_minutes) for lane in parsed.lanes}
    assert table == {
        "alpha/basic": (None, "02:00", "05:00", 45),
        "beta/basic": (None, "02:20", "05:00", 45),
        "gamma/basic": (None, "02:40", "05:00", 45),
        "alpha/full": (4, "02:40", "05:00", 120),
        "beta/full": (4, "03:00", "05:00", 120),
        "gamma/full": (5, "02:40", "05:00", 120),
        "portfolio/audit": (7, "02:30", "05:00", 30),
        "portfolio/synthesis": (7, "03:00", "05:00", 60),
        "portfolio/bundle": (7, "04:00", "08:00", 10),
    }


def test_proposed_full_nights_are_two_a_night_thursday_to_saturday() -> None:
    six = parse_commission(proposed_commission([f"p{n}" for n in range(6)], "2026-12-07", 1))
    nights = [lane.weekday for lane in six.lanes if lane.rhythm == "full"]
    assert nights == [4, 4, 5, 5, 6, 6]
    nine = parse_commission(proposed_commission([f"p{n}" for n in range(9)], pendulum.Date(2026, 12, 7), 1))
    assert [lane.weekday for lane in nine.lanes if lane.rhythm == "full"] == [4, 4, 5, 5, 6, 6, 4, 5, 6]
    assert [lane.time for lane in nine.lanes if lane.rhythm == "basic"][-1] == "04:40"


@pytest.mark.parametrize(("stagger", "accepted"), [(5, True), (4, False), (60, True), (61, False), (True, False)])
def test_proposed_stagger_is_5_to_60_minutes(stagger: int, accepted: bool) -> None:
    if accepted:
        doc = proposed_commission(["alpha", "beta", "gamma"], "2026-12-07", 1, stagger_minutes=stagger)
        assert [lane["time"] for lane in doc["lanes"] if lane["rhythm"] == "basic"][
            1
        ] == f"{2 + stagger // 60:02d}:{stagger % 60:02d}"
    else:
        with pytest.raises(ScheduleError) as error:
            proposed_commission(["alpha"], "2026-12-07", 1, stagger_minutes=stagger)
        assert error.value.message.startswith("stagger_minutes: ")


def test_proposed_basic_lanes_must_all_start_before_the_close() -> None:
    proposed_commission([f"p{n}" for n in range(9)], "2026-12-07", 1, stagger_minutes=22)  # last at 04:56
    with pytest.raises(ScheduleError, match="stagger_minutes"):
        proposed_commission([f"p{n}" for n in range(9)], "2026-12-07", 1, stagger_minutes=23)  # 05:04


@pytest.mark.parametrize(
    "products", [[], ["portfolio"], ["Alpha"], ["alpha", "alpha"], [f"p{n}" for n in range(10)], "alpha"]
)
def test_proposed_commission_refuses_bad_products(products: Any) -> None:
    with pytest.raises(ScheduleError, match=r"^INVALID: products: "):
        proposed_commission(products, "2026-12-07", 1)


def test_proposed_commission_has_no_default_ceiling_and_validates_what_it_is_given() -> None:
    with pytest.raises(TypeError):
        proposed_commission(["alpha"], "2026-12-07")  # type: ignore[call-arg]
    with pytest.raises(ScheduleError, match="weeklyTokens"):
        proposed_commission(["alpha"], "2026-12-07", 0)
    with pytest.raises(ScheduleError, match="revision"):
        proposed_commission(["alpha"], "2026-12-07", 1, revision=0)
    assert parse_commission(proposed_commission(["alpha"], "2026-12-07", 1, zone="Asia/Tokyo")).zone == "Asia/Tokyo"


# --- the ceiling from a shadow run -------------------------------------------------------------


@pytest.mark.parametrize(
    ("p95", "ceiling"), [(1, 2), (4, 5), (5, 7), (8, 10), (40_000_000, 50_000_000), (8_000_000_000, 10_000_000_000)]
)
def test_ceiling_from_shadow_is_p95_times_1_25_rounded_up(p95: int, ceiling: int) -> None:
    assert ceiling_from_shadow(p95) == ceiling


@pytest.mark.parametrize("p95", [0, -1, True, 4.0, "4", 8_000_000_001])
def test_ceiling_from_shadow_refuses_what_is_not_a_usable_ceiling(p95: Any) -> None:
    with pytest.raises(ScheduleError):
        ceiling_from_shadow(p95)


# --- the JSON Schema ----------------------------------------------------------------------------


def test_the_shipped_json_schema_is_the_one_the_parser_generates() -> None:
    shipped = resources.files("core").joinpath("commission.schema.json").read_text(encoding="utf-8")
    assert shipped == commission_json_schema_text(), f"core/commission.schema.json is stale; regenerate: {REGENERATE}"


def test_the_json_schema_describes_the_commission_by_its_wire_names() -> None:
    schema = commission_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {
        "protocol",
        "revision",
        "zone",
        "effectiveFrom",
        "weeklyTokens",
        "recordMaxAgeDays",
        "lanes",
    }
    task_schema = schema["$defs"]["CommissionTask"]["properties"]
    assert task_schema["callBound"]["maximum"] == L.max_call_bound_tokens
    assert task_schema["maxCalls"]["maximum"] == L.max_calls_per_task
    assert schema["properties"]["weeklyTokens"]["maximum"] == L.max_weekly_tokens


def _schema_errors(schema: dict[str, Any], value: Any, root: dict[str, Any], path: str = "$") -> list[str]:
    """A small JSON Schema checker for the keywords the generated schema uses (no dependency needed)."""
    import re

    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return _schema_errors(root["$defs"][name], value, root, path)
    if "anyOf" in schema:
        options = [_schema_errors(option, value, root, path) for option in schema["anyOf"]]
        return [] if any(not errors for errors in options) else [f"{path}: matches no anyOf option"]
    errors: list[str] = []
    kind = schema.get("type")
    checks = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "null": lambda v: v is None,
    }
    if kind is not None and not checks[kind](value):
        return [f"{path}: not {kind}"]
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: not one of {schema['enum']}")
    if "pattern" in schema and re.search(schema["pattern"], value) is None:
        errors.append(f"{path}: does not match {schema['pattern']}")
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: below {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: above {schema['maximum']}")
    if kind == "array":
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            errors.append(f"{path}: {len(value)} items")
        for index, item in enumerate(value):
            errors += _schema_errors(schema["items"], item, root, f"{path}[{index}]")
    if kind == "object":
        properties = schema.get("properties", {})
        errors += [f"{path}.{key}: required" for key in schema.get("required", []) if key not in value]
        if schema.get("additionalProperties") is False:
            errors += [f"{path}.{key}: not allowed" for key in value if key not in properties]
        for key, item in value.items():
            if key in properties:
                errors += _schema_errors(properties[key], item, root, f"{path}.{key}")
    return errors


def test_the_json_schema_accepts_the_proposal_and_refuses_what_the_parser_refuses_by_shape() -> None:
    schema = commission_json_schema()
    assert _schema_errors(schema, proposed_commission([f"p{n}" for n in range(9)], "2026-12-07", 1), schema) == []
    assert _schema_errors(schema, commission(), schema) == []
    for mutation in (
        set_in("weeklyTokens", value=0),
        set_in("protocol", value="other"),
        set_in("lanes", 0, "tasks", 0, "maxCalls", value=True),
        set_in("lanes", 0, "tasks", 0, "callBound", value=2_000_001),
        set_in("lanes", 0, "time", value="24:00"),
        set_in("lanes", 0, "extra", value=1),
        set_in("lanes", 1, "weekday", value=8),
        tasks(5),
    ):
        doc = commission()
        mutation(doc)
        assert _schema_errors(schema, doc, schema) != []
        refused(doc)
