"""Every refusal of an owner's input names the field, what was given and what is allowed, in words: never a
regular expression, which an owner cannot be expected to read."""

from __future__ import annotations

import re
from typing import Any

import pytest

from factory_schedule.core import ScheduleError
from factory_schedule.core.calls import parse_report
from factory_schedule.core.commission import parse_commission, proposed_commission

REGEX_SIGNS = re.compile(r"\^|\$'|\[a-z|\{0,|pattern")


def _refusal(document: dict[str, Any]) -> str:
    with pytest.raises(ScheduleError) as refused:
        parse_commission(document)
    assert refused.value.code == "INVALID"
    return refused.value.message


def _commission(**lane_change: Any) -> dict[str, Any]:
    commission = proposed_commission(["alpha", "beta"], "2026-12-03", 2_000_000, pipeline=True)
    commission["lanes"][0] |= lane_change
    return commission


@pytest.mark.parametrize(("field", "value", "words"), [
    ("time", "25:00", "a 24-hour time HH:MM"),
    ("closes", "5am", "a 24-hour time HH:MM"),
    ("lane", "Alpha/basic", "'<product>/<rhythm>'"),
    ("product", "-alpha", "a Product ID"),
])
def test_a_lanes_field_refused_by_its_form_is_explained_in_words(field: str, value: str, words: str) -> None:
    message = _refusal(_commission(**{field: value}))
    assert f"lanes[0].{field}: " in message and repr(value) in message and words in message
    assert not REGEX_SIGNS.search(message), message


def test_a_time_of_25_00_names_the_field_the_value_and_the_allowed_range() -> None:
    message = _refusal(_commission(time="25:00"))
    assert message.startswith("lanes[0].time: '25:00' is not a 24-hour time HH:MM (00:00 to 23:59)"), message


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"effectiveFrom": "3 Dec"}, "effectiveFrom", "a date YYYY-MM-DD"),
    ({"pipeline": {"promotionScheduler": "Promo!"}}, "pipeline.promotionScheduler", "a run's identity"),
    ({"pipeline": {"promotionResources": ["Browser Profile"]}}, "pipeline.promotionResources[0]",
     "is not a name: 1 to 64"),
])
def test_a_commission_field_refused_by_its_form_is_explained_in_words(
    change: dict[str, Any], field: str, words: str
) -> None:
    message = _refusal(_commission() | change)
    assert f"{field}: " in message and words in message, message
    assert not REGEX_SIGNS.search(message), message


def test_every_pattern_of_the_commission_schema_has_words() -> None:
    from factory_schedule.core.commission import FORMS, commission_json_schema

    patterns: set[str] = set()
    pending: list[Any] = [commission_json_schema()]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            patterns.update(value for key, value in node.items() if key == "pattern" and isinstance(value, str))
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    assert patterns and patterns <= set(FORMS), patterns - set(FORMS)


def test_a_tasks_name_and_account_say_what_is_allowed() -> None:
    commission = _commission()
    commission["lanes"][0]["tasks"][0] |= {"task": "Scan Repo", "account": "gemini"}
    message = _refusal(commission)
    assert "lanes[0].tasks[0].task: 'Scan Repo' is not a name: 1 to 64" in message, message
    assert "lanes[0].tasks[0].account: " in message and "'claude' or 'chatgpt'" in message and "'gemini'" in message
    assert not REGEX_SIGNS.search(message), message


def test_a_number_out_of_range_says_the_bound_and_what_was_given() -> None:
    message = _refusal(_commission() | {"weeklyTokens": 0})
    assert message == "weeklyTokens: Input should be greater than or equal to 1, got 0", message


def test_a_missing_or_unknown_field_is_said_in_words() -> None:
    commission = _commission()
    del commission["zone"]
    commission["lanes"][0]["tiem"] = "02:00"
    message = _refusal(commission)
    assert "zone: missing (this field is required)" in message
    assert "lanes[0].tiem: not a field of this document" in message


def test_a_runners_report_says_a_missing_field_in_words() -> None:
    with pytest.raises(ScheduleError) as refused:
        parse_report({"kind": "result"})
    assert refused.value.message.startswith("report.result.") and "missing (this field is required)" in (
        refused.value.message), refused.value.message


def test_an_account_record_under_a_sequence_already_taken_names_the_next_one(tmp_path: Any) -> None:
    """The sequence the owner sees in force, typed again with a new sign-in: not "recorded with a different
    request", but that records are never changed, and which sequence is next (as one too far ahead is told)."""
    from factory_schedule.core import LifecycleSchedule, ManualClock
    from factory_schedule.store import open_journal

    schedule = LifecycleSchedule(open_journal(f"sqlite:///{tmp_path / 'journal.db'}"),
                                 ManualClock("2026-12-02T12:00:00Z"))
    schedule.record_commission(proposed_commission(["alpha"], "2026-12-03", 2_000_000))
    for sequence in (1, 2):
        schedule.record_account(account="claude", sequence=sequence, sign_in="me@example.com", overage=False,
                                recorded_by="owner")
    with pytest.raises(ScheduleError) as refused:
        schedule.record_account(account="claude", sequence=2, sign_in="new@example.com", overage=False,
                                recorded_by="owner")
    assert refused.value.code == "CONFLICT"
    assert "claude record 2 is already recorded" in refused.value.message
    assert "the next claude record is sequence 3" in refused.value.message
