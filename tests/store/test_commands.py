"""One command, one transaction: replay, conflicts and decisions that fail, on every backend."""

from __future__ import annotations

from typing import Any

import pytest

from factory_schedule.store import (
    CanonicalText,
    CommandConflictError,
    Decision,
    Journal,
    JournalError,
    NewEvent,
    VersionConflictError,
    canonical_json,
    canonical_text,
    open_journal,
)
from tests.store.support import AGGREGATE, bump


@pytest.fixture
def journal(journal_url: str) -> Any:
    opened = open_journal(journal_url)
    yield opened
    opened.close()


def _fail_if_called(state: Any, version: int) -> Decision:
    raise AssertionError("a replayed command must not decide again")


def test_a_command_records_its_events_state_and_receipt(journal):
    outcome = journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))

    assert (outcome.first_version, outcome.version, outcome.replayed) == (1, 1, False)
    assert outcome.result == {"count": 1}
    assert journal.head(AGGREGATE) == 1
    assert journal.load(AGGREGATE).state == {"count": 1, "last": "c1"}
    [event] = journal.history(AGGREGATE)
    assert (event.version, event.command_id, event.type, event.data) == (1, "c1", "bumped", {"by": "c1", "count": 1})
    receipt = journal.receipt("c1")
    assert (receipt.aggregate, receipt.first_version, receipt.last_version) == (AGGREGATE, 1, 1)
    journal.verify(AGGREGATE)


def test_an_identical_retry_replays_the_receipt_and_writes_nothing(journal):
    first = journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))
    journal.execute(AGGREGATE, "c2", {"n": 2}, 1, bump("c2"))

    again = journal.execute(AGGREGATE, "c1", {"n": 1}, 0, _fail_if_called)

    assert again.replayed is True
    assert (again.first_version, again.version, again.result) == (first.first_version, first.version, first.result)
    assert journal.head(AGGREGATE) == 2
    assert [event.command_id for event in journal.history(AGGREGATE)] == ["c1", "c2"]


def test_a_retry_replays_even_when_its_expected_version_is_stale_or_wrong(journal):
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))
    journal.execute(AGGREGATE, "c2", {"n": 2}, 1, bump("c2"))

    assert journal.execute(AGGREGATE, "c1", {"n": 1}, 7, _fail_if_called).replayed is True


def test_a_replay_compares_payloads_canonically_not_by_key_order(journal):
    journal.execute(AGGREGATE, "c1", {"a": 1, "b": [1, "é"]}, 0, bump("c1"))

    assert journal.execute(AGGREGATE, "c1", {"b": [1, "é"], "a": 1}, 0, _fail_if_called).replayed is True


def test_a_different_payload_under_a_recorded_id_raises_command_conflict(journal):
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))

    with pytest.raises(CommandConflictError) as raised:
        journal.execute(AGGREGATE, "c1", {"n": 2}, 1, _fail_if_called)

    assert raised.value.command_id == "c1"
    assert journal.head(AGGREGATE) == 1


def test_a_stale_caller_reusing_a_taken_id_hears_version_conflict_and_then_command_conflict_once_current(journal):
    journal.execute(AGGREGATE, "c1", {"runner": "a"}, 0, bump("c1"))

    with pytest.raises(VersionConflictError):
        journal.execute(AGGREGATE, "c1", {"runner": "b"}, 0, _fail_if_called)
    with pytest.raises(CommandConflictError):
        journal.execute(AGGREGATE, "c1", {"runner": "b"}, journal.head(AGGREGATE), _fail_if_called)

    assert journal.head(AGGREGATE) == 1


def test_a_recorded_id_sent_to_another_aggregate_raises_command_conflict(journal):
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))

    with pytest.raises(CommandConflictError):
        journal.execute("test/other", "c1", {"n": 1}, 0, _fail_if_called)

    assert journal.head("test/other") == 0


def test_a_commit_since_the_version_read_raises_version_conflict(journal):
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))

    with pytest.raises(VersionConflictError) as raised:
        journal.execute(AGGREGATE, "c2", {"n": 2}, 0, bump("c2"))

    assert (raised.value.expected, raised.value.actual) == (0, 1)
    assert journal.head(AGGREGATE) == 1
    assert journal.receipt("c2") is None


def test_a_version_conflict_records_no_receipt_so_the_command_can_be_retried_at_the_new_head(journal):
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))
    with pytest.raises(VersionConflictError):
        journal.execute(AGGREGATE, "c2", {"n": 2}, 0, bump("c2"))

    outcome = journal.execute(AGGREGATE, "c2", {"n": 2}, 1, bump("c2"))

    assert (outcome.version, outcome.replayed, outcome.result) == (2, False, {"count": 2})


def test_an_expected_version_ahead_of_head_raises_version_conflict(journal):
    with pytest.raises(VersionConflictError):
        journal.execute(AGGREGATE, "c1", {"n": 1}, 3, bump("c1"))
    assert journal.head(AGGREGATE) == 0


def test_a_raising_decision_leaves_head_state_history_and_receipts_unchanged(journal):
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))
    before = journal.load(AGGREGATE)

    def explode(state: Any, version: int) -> Decision:
        raise RuntimeError("the decision refused")

    with pytest.raises(RuntimeError, match="the decision refused"):
        journal.execute(AGGREGATE, "c2", {"n": 2}, 1, explode)

    assert journal.head(AGGREGATE) == 1
    assert journal.load(AGGREGATE) == before
    assert len(journal.history(AGGREGATE)) == 1
    assert journal.receipt("c2") is None
    assert journal.execute(AGGREGATE, "c2", {"n": 2}, 1, bump("c2")).version == 2


def test_a_decision_whose_output_is_not_canonical_json_writes_nothing(journal):
    def floaty(state: Any, version: int) -> Decision:
        return Decision(events=[NewEvent("x", {"ok": 1})], state={"ratio": 0.5})

    with pytest.raises(ValueError):
        journal.execute(AGGREGATE, "c1", {"n": 1}, 0, floaty)

    assert journal.head(AGGREGATE) == 0
    assert journal.history(AGGREGATE) == []
    assert journal.receipt("c1") is None


def test_a_decision_with_no_events_is_refused_and_writes_nothing(journal):
    def empty(state: Any, version: int) -> Decision:
        return Decision(events=[], state={"count": 0})

    with pytest.raises(JournalError):
        journal.execute(AGGREGATE, "c1", {"n": 1}, 0, empty)

    assert journal.head(AGGREGATE) == 0
    assert journal.receipt("c1") is None


def test_a_payload_that_is_not_canonical_json_is_refused_before_anything_is_written(journal):
    with pytest.raises(ValueError, match="canonical"):
        journal.execute(AGGREGATE, "c1", {"ratio": 1.5}, 0, bump("c1"))
    assert journal.head(AGGREGATE) == 0


def test_a_command_with_several_events_takes_consecutive_versions_and_one_receipt(journal):
    def three(state: Any, version: int) -> Decision:
        return Decision(events=[NewEvent("e", {"i": i}) for i in range(3)], state={"n": 3}, result={"done": True})

    outcome = journal.execute(AGGREGATE, "c1", {}, 0, three)

    assert (outcome.first_version, outcome.version) == (1, 3)
    assert [event.version for event in journal.history(AGGREGATE)] == [1, 2, 3]
    assert {event.command_id for event in journal.history(AGGREGATE)} == {"c1"}
    journal.verify(AGGREGATE)


def test_aggregates_keep_separate_versions_and_chains(journal):
    journal.execute("test/a", "a1", {}, 0, bump("a1"))
    journal.execute("test/b", "b1", {}, 0, bump("b1"))
    journal.execute("test/a", "a2", {}, 1, bump("a2"))

    assert (journal.head("test/a"), journal.head("test/b")) == (2, 1)
    journal.verify("test/a")
    journal.verify("test/b")


def test_the_decision_sees_the_current_state_and_version(journal):
    seen = []

    def spy(state: Any, version: int) -> Decision:
        seen.append((state, version))
        return bump("spy")(state, version)

    journal.execute(AGGREGATE, "c1", {}, 0, spy)
    journal.execute(AGGREGATE, "c2", {}, 1, spy)

    assert seen == [(None, 0), ({"count": 1, "last": "spy"}, 1)]


def test_a_journal_reopened_from_its_url_holds_what_was_committed(journal_url):
    first = open_journal(journal_url)
    first.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))
    first.close()

    again = open_journal(journal_url)

    assert again.head(AGGREGATE) == 1
    assert again.execute(AGGREGATE, "c1", {"n": 1}, 0, _fail_if_called).replayed is True
    again.verify(AGGREGATE)
    again.close()


# -- the stored text: for a writer that keeps its own parse of a large state ------------------------


def test_load_text_returns_the_stored_canonical_text_and_version_read_together(journal):
    assert journal.load_text(AGGREGATE) == (0, None)
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))

    version, text = journal.load_text(AGGREGATE)

    assert (version, text) == (1, canonical_json({"count": 1, "last": "c1"}))
    assert isinstance(text, CanonicalText)


def test_a_text_decision_sees_the_stored_text_and_its_canonical_text_is_stored_as_it_is(journal: Journal) -> None:
    journal.execute(AGGREGATE, "c1", {"n": 1}, 0, bump("c1"))
    seen: list[Any] = []

    def decide(text: Any, version: int) -> Decision:
        seen.append((text, version))
        return Decision(events=[NewEvent("set", {})], state=canonical_text({"count": 7}), result={})

    journal.execute(AGGREGATE, "c2", {}, 1, decide, as_text=True)

    assert seen == [(canonical_json({"count": 1, "last": "c1"}), 1)]
    assert journal.load(AGGREGATE).state == {"count": 7}


def test_a_decision_returning_plain_text_as_state_is_refused_and_writes_nothing(journal):
    def decide(text: Any, version: int) -> Decision:
        return Decision(events=[NewEvent("set", {})], state='{"count": 1.5}', result={})  # type: ignore[arg-type]

    with pytest.raises(ValueError, match="canonical"):
        journal.execute(AGGREGATE, "c1", {}, 0, decide)
    assert journal.head(AGGREGATE) == 0 and journal.receipt("c1") is None
