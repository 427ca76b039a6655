"""The text rule: no string the engine records holds a control character or a lone surrogate.

Every identity and free-text field of every command (runner tokens, work keys, task names, sign-ins,
recordedBy, settledBy, confirmedBy, evidence, reasons, the commission's and a report's strings) is
refused INVALID with a message naming the field, and nothing is written. The hostile values are those
an adversarial review used: ESC sequences that clear a terminal, NUL, DEL, the 8-bit CSI (C1), TAB and
newline, and a lone surrogate (what undecodable bytes become under surrogateescape).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core.text import checked_document, text_problem
from tests.core.schedule.support import (
    SIGN_IN,
    Harness,
    basic_id,
    commission,
    make_harness,
    observation,
    refused,
    result_report,
)

NIGHT1 = basic_id("alpha", "2026-12-07")

HOSTILE = {
    "esc": "ok\x1b[2J\x1b[1;1Hall good",
    "nul": "w\x00rk",
    "del": "a\x7fb",
    "c1-csi": "a\x9b2Jb",
    "c1-nel": "a\x85b",
    "tab": "a\tb",
    "newline": "a\nb",
    "lone-surrogate": "a\udcffb",
    "high-surrogate": "a\ud800",
}


def running_harness(tmp_path) -> Harness:
    h = make_harness(tmp_path)
    h.owner_record()
    h.at("2026-12-07T02:00:00Z")
    h.admit("alpha/basic", "r1")
    h.at("2026-12-07T02:05:00Z")
    return h


def with_call(h: Harness) -> Harness:
    admission = h.call(NIGHT1, "r1")
    assert admission.admitted
    return h


# Each case: (what it sets up, the field the message names, the command with the hostile text in that field).
Command = Callable[[Harness, str], Any]
CASES: dict[str, tuple[Callable[[Harness], Harness], str, Command]] = {
    "start runner": (lambda h: h, "runner", lambda h, x: h.schedule.start(lane="alpha/basic", runner=x)),
    "start lane": (lambda h: h, "lane", lambda h, x: h.schedule.start(lane=x, runner="r2")),
    "admit_call runner": (lambda h: h, "runner", lambda h, x: h.call(NIGHT1, runner=x)),
    "admit_call task": (lambda h: h, "task", lambda h, x: h.call(NIGHT1, task=x)),
    "admit_call work": (lambda h: h, "work", lambda h, x: h.call(NIGHT1, work=x)),
    "admit_call signIn": (lambda h: h, "signIn", lambda h, x: h.call(NIGHT1, sign_in=x)),
    "admit_call occurrence": (lambda h: h, "occurrence ID", lambda h, x: h.call(NIGHT1 + x)),
    "end_call runner": (with_call, "runner", lambda h, x: h.schedule.end_call(
        occurrence_id=NIGHT1, runner=x, call=1, report=result_report())),
    "end_call report observation": (with_call, "report.observation.status", lambda h, x: h.schedule.end_call(
        occurrence_id=NIGHT1, runner="r1", call=1, report=result_report(observed=observation(status=x)))),
    "end_call report extra field": (with_call, "report.observation.note", lambda h, x: h.schedule.end_call(
        occurrence_id=NIGHT1, runner="r1", call=1,
        report=result_report(observed={**observation(), "note": x}))),
    "end_call report key": (with_call, "report.observation key", lambda h, x: h.schedule.end_call(
        occurrence_id=NIGHT1, runner="r1", call=1, report=result_report(observed={**observation(), x: 1}))),
    "defer runner": (lambda h: h, "runner", lambda h, x: h.schedule.defer(
        occurrence_id=NIGHT1, runner=x, reason="logged-out")),
    "reconcile runner": (lambda h: h, "confirmation.runner", lambda h, x: h.schedule.reconcile(
        occurrence_id=NIGHT1, confirmation={"runner": x, "confirmedBy": "owner", "evidence": "gone"})),
    "reconcile confirmedBy": (lambda h: h, "confirmation.confirmedBy", lambda h, x: h.schedule.reconcile(
        occurrence_id=NIGHT1, confirmation={"runner": "r1", "confirmedBy": x, "evidence": "gone"})),
    "reconcile evidence": (lambda h: h, "confirmation.evidence", lambda h, x: h.schedule.reconcile(
        occurrence_id=NIGHT1, confirmation={"runner": "r1", "confirmedBy": "owner", "evidence": x})),
    "settle settledBy": (lambda h: h, "settledBy", lambda h, x: h.schedule.settle(
        occurrence_id=NIGHT1, settled_by=x, status="completed", reason="done")),
    "settle reason": (lambda h: h, "reason", lambda h, x: h.schedule.settle(
        occurrence_id=NIGHT1, settled_by="r1", status="completed", reason=x)),
    "record_account signIn": (lambda h: h, "signIn", lambda h, x: h.schedule.record_account(
        account="claude", sequence=2, sign_in=x, overage=False, recorded_by="owner")),
    "record_account recordedBy": (lambda h: h, "recordedBy", lambda h, x: h.schedule.record_account(
        account="claude", sequence=2, sign_in=SIGN_IN, overage=False, recorded_by=x)),
    "record_commission zone": (lambda h: h, "commission.zone", lambda h, x: h.schedule.record_commission(
        commission(revision=2, zone="Europe/London" + x))),
    "record_commission task": (lambda h: h, "commission.lanes[0].tasks[0].task", lambda h, x: (
        h.schedule.record_commission(_commission_with_task(x)))),
}


def _commission_with_task(name: str) -> dict:
    document = commission(revision=2)
    document["lanes"][0]["tasks"][0]["task"] = "scan" + name
    return document


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_recorded_text_field_refuses_control_characters_and_lone_surrogates_naming_the_field(tmp_path, case):
    setup, field, command = CASES[case]
    h = setup(running_harness(tmp_path))
    for name, hostile in HOSTILE.items():
        error = refused(h, "INVALID", lambda: command(h, hostile))  # noqa: B023 - called at once
        assert error.message.startswith(f"{field}:") or f"{field}:" in error.message, (name, error.message)
        assert "control character" in error.message or "lone surrogate" in error.message, (name, error.message)
    # The same field takes ordinary text, including non-ASCII letters (the rule is about control, not script).
    assert text_problem("résumé-東京") is None


def test_the_refusal_message_shows_no_raw_control_character(tmp_path):
    h = running_harness(tmp_path)
    error = refused(h, "INVALID", lambda: h.call(NIGHT1, work=HOSTILE["esc"]))
    assert text_problem(str(error)) is None


def test_a_document_nested_thousands_deep_is_invalid_not_a_recursion_error(tmp_path: Path) -> None:
    h = with_call(running_harness(tmp_path))
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(5000):
        inner["a"] = {}
        inner = inner["a"]
    refused(h, "INVALID", lambda: h.schedule.end_call(
        occurrence_id=NIGHT1, runner="r1", call=1, report={**result_report(), "observation": deep}))
    refused(h, "INVALID", lambda: h.schedule.record_commission(deep))
    nested_list: list[Any] = []
    for _ in range(5000):
        nested_list = [nested_list]
    refused(h, "INVALID", lambda: h.schedule.record_commission({**commission(revision=2), "lanes": nested_list}))


def test_a_document_walk_refuses_keys_that_are_not_strings_and_values_that_are_not_json():
    for document in ({1: "a"}, {"a": object()}, {"a": b"bytes"}):
        with pytest.raises(Exception) as caught:
            checked_document("doc", document)
        assert getattr(caught.value, "code", None) == "INVALID"
