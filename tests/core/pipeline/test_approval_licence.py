"""An owner's approval licenses one external action once: the first use answers that the action may go ahead,
and any replay of that use answers that it may not, so a retried run never repeats a public act."""

from __future__ import annotations

from pathlib import Path

from tests.core.pipeline.pipeline_support import make_harness, writes_nothing


def _approved(tmp_path: Path):
    h = make_harness(tmp_path)
    h.lanes.request_approval(approval="publish-1", candidate="alpha-one", action="public-publish",
                             requested_by="run-pub", reason="ship the private build to the store")
    h.lanes.decide_approval(approval="publish-1", decided_by="owner", approved=True)
    return h


def _use(h):
    return h.lanes.record_external_action(approval="publish-1", candidate="alpha-one", action="public-publish",
                                          runner="run-pub")


def test_the_first_use_of_an_approval_licenses_the_action(tmp_path: Path) -> None:
    h = _approved(tmp_path)
    used = _use(h)
    assert used.licensed is True and used.replayed is False


def test_a_replayed_use_of_an_approval_licenses_nothing_and_writes_nothing(tmp_path: Path) -> None:
    h = _approved(tmp_path)
    first = _use(h)
    for _ in range(3):
        with writes_nothing(h):
            again = _use(h)
        assert again.replayed is True and again.licensed is False
        assert again.result == first.result  # the same recorded answer, with no licence in it
