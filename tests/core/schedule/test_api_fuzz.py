"""Hostile input to every LifecycleSchedule method: a ScheduleError or an answer, never another exception.

Each method gets requests built from valid ones with any argument (or any field of a document argument)
replaced by something hostile: control characters and lone surrogates, a 100,000-character string, NaN,
infinities, huge and negative numbers, booleans where counts go, bytes, objects, and JSON nested up to
6,000 deep. The answer must be a normal result or a ScheduleError; a refusal writes nothing, so the
journal's head is unchanged. The journal holds a running occurrence with a call in flight, so the
requests reach the rules, not only the argument checks.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factory_schedule.core import LifecycleSchedule, ScheduleError
from factory_schedule.core.text import MAX_DOCUMENT_DEPTH, text_problem
from tests.core.schedule.support import (
    SIGN_IN,
    Harness,
    basic_id,
    commission,
    confirmation,
    make_harness,
    observation,
    result_report,
)

NIGHT1 = basic_id("alpha", "2026-12-07")

HOSTILE_CHARACTERS = [*"\x00\x1b\x7f\x85\x9b\n\t\r\u2028", "\ud800", "\udcff", "\udfff"]


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for level in range(depth):
        value = {"a": value} if level % 2 else [value]
    return value


hostile_text = st.one_of(
    st.text(alphabet=st.sampled_from(HOSTILE_CHARACTERS), min_size=1, max_size=4),
    st.tuples(st.sampled_from(["r1", "scan", "w1", NIGHT1, "alpha/basic", SIGN_IN]),
              st.sampled_from(HOSTILE_CHARACTERS)).map(lambda pair: pair[0] + pair[1]),
    st.text(alphabet=st.characters(categories=["Cs", "Cc"]), min_size=1, max_size=8),
    st.just("x" * 100_000),
    st.just(""),
    st.just(" r1 "),
    st.text(max_size=20),
)
hostile_number = st.one_of(
    st.sampled_from([float("nan"), float("inf"), float("-inf"), 1e300, -1e300, 0.5, 1.0, -0.0]),
    st.sampled_from([0, -1, 2**63, 2**64 + 1, 10**300, -(10**300), True, False]),
    st.integers(),
)
hostile_other = st.one_of(
    st.none(),
    st.binary(max_size=8),
    st.just(b"\xff\xfe invalid utf-8"),
    st.just(object()),
    st.integers(min_value=0, max_value=6_000).map(nested),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
)
hostile = st.one_of(hostile_text, hostile_number, hostile_other)


@st.composite
def mutated(draw: st.DrawFn, document: dict[str, Any]) -> dict[str, Any]:
    """`document` with one value somewhere inside replaced by a hostile one, or a hostile key added."""
    document = copy.deepcopy(document)
    containers: list[Any] = [document]
    stack: list[Any] = [document]
    while stack:
        value = stack.pop()
        children = value.values() if isinstance(value, dict) else value
        for child in children:
            if isinstance(child, dict | list):
                containers.append(child)
                stack.append(child)
    target = draw(st.sampled_from(containers))
    if isinstance(target, dict):
        if len(target) > 0 and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(target)))
        else:
            key = draw(st.one_of(hostile_text, st.sampled_from(["extra"])))
        target[key] = draw(hostile)
    elif target:
        target[draw(st.integers(0, len(target) - 1))] = draw(hostile)
    else:
        target.append(draw(hostile))
    return document


def maybe(valid: Any) -> st.SearchStrategy[Any]:
    """Mostly the valid value, sometimes a hostile one."""
    return st.one_of(st.just(valid), st.just(valid), hostile)


def requests(**arguments: Any) -> st.SearchStrategy[dict[str, Any]]:
    """Keyword arguments, each valid or hostile, at least one hostile."""
    names = sorted(arguments)
    return st.fixed_dictionaries({name: maybe(arguments[name]) for name in names}).flatmap(
        lambda drawn: st.sampled_from(names).flatmap(
            lambda name: hostile.map(lambda bad: {**drawn, name: bad})
        )
    )


def documents(document: dict[str, Any]) -> st.SearchStrategy[Any]:
    return st.one_of(mutated(document), hostile)


METHODS: dict[str, tuple[st.SearchStrategy[dict[str, Any]], Callable[[LifecycleSchedule, dict[str, Any]], Any]]] = {
    "record_commission": (
        documents(commission(revision=2)).map(lambda doc: {"commission": doc}),
        lambda s, kw: s.record_commission(kw["commission"]),
    ),
    "record_account": (
        requests(account="claude", sequence=2, sign_in=SIGN_IN, overage=False, recorded_by="owner"),
        lambda s, kw: s.record_account(**kw),
    ),
    "start": (requests(lane="alpha/basic", runner="r2"), lambda s, kw: s.start(**kw)),
    "admit_call": (
        requests(occurrence_id=NIGHT1, runner="r1", task="scan", work="w2", bound=1_000, sign_in=SIGN_IN, attempt=1),
        lambda s, kw: s.admit_call(**kw),
    ),
    "end_call": (
        st.one_of(
            requests(occurrence_id=NIGHT1, runner="r1", call=1, report=result_report(observed=observation())),
            documents(result_report(observed=observation())).map(
                lambda report: {"occurrence_id": NIGHT1, "runner": "r1", "call": 1, "report": report}),
        ),
        lambda s, kw: s.end_call(**kw),
    ),
    "defer": (
        requests(occurrence_id=NIGHT1, runner="r1", reason="budget-exhausted", bound=1_000, segment=1),
        lambda s, kw: s.defer(**kw),
    ),
    "reconcile": (
        st.one_of(
            requests(occurrence_id=NIGHT1, confirmation=confirmation("r1")),
            documents(confirmation("r1")).map(lambda doc: {"occurrence_id": NIGHT1, "confirmation": doc}),
        ),
        lambda s, kw: s.reconcile(**kw),
    ),
    "settle": (
        requests(occurrence_id=NIGHT1, settled_by="r1", status="partial", reason="done"),
        lambda s, kw: s.settle(**kw),
    ),
    "status": (requests(occurrence_id=NIGHT1), lambda s, kw: s.status(kw["occurrence_id"])),
    "statuses": (
        st.one_of(requests(occurrence_ids=[NIGHT1]), st.lists(hostile, max_size=3).map(
            lambda ids: {"occurrence_ids": ids})),
        lambda s, kw: s.statuses(kw["occurrence_ids"]),
    ),
    "record": (requests(occurrence_id=NIGHT1), lambda s, kw: s.record(kw["occurrence_id"])),
}


@pytest.fixture(scope="module")
def running_journal(tmp_path_factory: pytest.TempPathFactory) -> Harness:
    """alpha's 2026-12-07 occurrence running under r1 with call 1 in flight, the clock inside its deadline."""
    h = make_harness(tmp_path_factory.mktemp("fuzz"))
    h.owner_record()
    h.at("2026-12-07T02:00:00Z")
    h.admit("alpha/basic", "r1")
    assert h.call(NIGHT1, "r1", work="w1").admitted
    h.at("2026-12-07T02:05:00Z")
    return h


def plainly_invalid(arguments: Any) -> bool:
    """Whether the request holds something no argument or document field accepts: a string the text rule
    refuses, a float, bytes, an object, or nesting deeper than a document may go."""
    pending: list[tuple[int, Any]] = [(0, arguments)]
    while pending:
        depth, value = pending.pop()
        if isinstance(value, str):
            if text_problem(value) is not None:
                return True
        elif isinstance(value, dict | list):
            if depth > MAX_DOCUMENT_DEPTH + 1:
                return True
            items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
            pending.extend((depth + 1, item) for item in items)
        elif value is not None and not isinstance(value, bool | int):
            return True
    return False


def answers_or_refuses(h: Harness, arguments: dict[str, Any], action: Callable[[], Any]) -> None:
    head, state = h.head(), h.state()
    try:
        action()
    except ScheduleError as error:
        assert error.code not in ("CORRUPT", "CONTENDED"), error
        assert h.head() == head, f"{error.code} wrote to the journal"
        assert h.state() == state
        assert text_problem(str(error)) is None, "the message carries the hostile text as it is"
        if plainly_invalid(arguments):
            assert error.code == "INVALID", error
    else:
        assert not plainly_invalid(arguments), "a request holding hostile input was answered"


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_answers_hostile_input_with_a_schedule_error_or_a_result_and_writes_nothing_when_refused(
    running_journal, method
):
    strategy, call = METHODS[method]

    @settings(max_examples=100)
    @given(strategy)
    def check(arguments: dict[str, Any]) -> None:
        answers_or_refuses(running_journal, arguments, lambda: call(running_journal.schedule, arguments))

    check()


def test_the_views_answer_over_the_fuzzed_journal(running_journal):
    # Whatever the fuzzing recorded, reading it back is a normal answer.
    schedule = running_journal.again()
    assert schedule.read() is not None
    schedule.plan()
    schedule.settled_records()
