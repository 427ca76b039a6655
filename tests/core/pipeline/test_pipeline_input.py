"""Bad input to every pipeline command: one clear error naming the field, and the journal head unchanged."""

from __future__ import annotations

import pytest

from factory_schedule.core.pipeline import PipelineError
from tests.core.pipeline.pipeline_support import (
    Runs,
    commission,
    drive_promotion,
    make_harness,
    promotion_report,
    top_n,
)

GOOD_TOP_N = top_n("alpha-one", "bravo")
EVIDENCE = promotion_report("evidence", 2)

BAD_REQUESTS = [
    ("record_settings", {"commission": "not a commission"}, "INVALID", "commission"),
    ("record_settings", {"commission": {**commission(), "pipeline": {"threshold": 0}}}, "INVALID", "threshold"),
    ("record_settings", {"commission": {**commission(), "pipeline": {"promotionReviewer": "promotion"}}},
     "INVALID", "distinct"),
    ("record_top_n", {"week": "2026-50", "candidates": GOOD_TOP_N}, "INVALID", "week"),
    ("record_top_n", {"week": "2026-W51", "candidates": []}, "INVALID", "candidates"),
    ("record_top_n", {"week": "2026-W51", "candidates": [{"candidate": "Alpha One", "product": "alpha", "rank": 1}]},
     "INVALID", "candidates[0].candidate"),
    ("record_top_n", {"week": "2026-W51", "candidates": [{**GOOD_TOP_N[0], "rank": True}]}, "INVALID", "rank"),
    ("record_top_n", {"week": "2026-W51", "candidates": [GOOD_TOP_N[0], GOOD_TOP_N[0]]}, "INVALID", "twice"),
    ("record_top_n", {"week": "2026-W51", "candidates": [{**GOOD_TOP_N[0], "rank": 2}]}, "INVALID", "ranks"),
    ("record_top_n", {"week": "2026-W51", "candidates": [{**GOOD_TOP_N[0], "evidence": ["a\x1bb"]}]},
     "INVALID", "control"),
    ("record_top_n", {"week": "2026-W51", "candidates": [{**GOOD_TOP_N[0], "extra": 1}]}, "INVALID", "candidates[0]"),
    ("record_top_n", {"week": "2026-W49", "candidates": GOOD_TOP_N}, "REVISION", "W49"),
    ("claim", {"lane": "discovery", "run": "promotion", "runner": "r"}, "INVALID", "lane"),
    ("claim", {"lane": "promotion", "run": "Promotion!", "runner": "r"}, "INVALID", "run"),
    ("claim", {"lane": "promotion", "run": "promotion", "runner": ""}, "INVALID", "runner"),
    ("claim", {"lane": "promotion", "run": "promotion", "runner": "r\x00"}, "INVALID", "control"),
    ("claim", {"lane": "promotion", "run": "promotion", "runner": "r\ud800"}, "INVALID", "surrogate"),
    ("claim", {"lane": "promotion", "run": "someone-else", "runner": "r"}, "WRONG_RUN", "scheduler"),
    ("report", {"lane": "promotion", "task": 0, "runner": "run-2", "report": EVIDENCE}, "INVALID", "task"),
    ("report", {"lane": "promotion", "task": "2", "runner": "run-2", "report": EVIDENCE}, "INVALID", "task"),
    ("report", {"lane": "promotion", "task": 2, "runner": "run-2", "report": "done"}, "INVALID", "report"),
    ("report", {"lane": "promotion", "task": 2, "runner": "run-2", "report": {**EVIDENCE, "x": 1.5}},
     "INVALID", "report"),
    ("report", {"lane": "promotion", "task": 2, "runner": "run-2", "report": {**EVIDENCE, "sha256": "abc"}},
     "CONTRACT", "sha256"),
    ("report", {"lane": "promotion", "task": 2, "runner": "run-2", "report": {"artifact": "a", "sha256": "0" * 64}},
     "CONTRACT", "evidence"),
    ("report", {"lane": "promotion", "task": 2, "runner": "run-2", "report": {**EVIDENCE, "verdict": "GO"}},
     "CONTRACT", "verdict"),
    ("report", {"lane": "promotion", "task": 2, "runner": "run-2",
                "report": {**EVIDENCE, "externalActions": ["tweet"]}}, "CONTRACT", "externalActions"),
    ("report", {"lane": "promotion", "task": 77, "runner": "run-2", "report": EVIDENCE}, "UNKNOWN_TASK", "77"),
    ("report", {"lane": "promotion", "task": 2, "runner": "run-9", "report": EVIDENCE}, "NOT_OWNER", "claimed"),
    ("abandon", {"lane": "promotion", "task": 2, "runner": "run-2", "confirmed_by": "", "evidence": "gone"},
     "INVALID", "confirmedBy"),
    ("abandon", {"lane": "promotion", "task": 2, "runner": "run-9", "confirmed_by": "owner", "evidence": "gone"},
     "NOT_OWNER", "run-9"),
    ("decide_escalation", {"lane": "promotion", "task": 2, "decided_by": "owner", "decision": "go",
                           "reason": "r"}, "INVALID", "decision"),
    ("decide_escalation", {"lane": "promotion", "task": 2, "decided_by": "owner", "decision": "park",
                           "reason": "r"}, "WRONG_RUN", "escalation"),
    ("request_approval", {"approval": "a-1", "candidate": "alpha-one", "action": "deploy", "requested_by": "r",
                          "reason": "x"}, "INVALID", "action"),
    ("request_approval", {"approval": "A 1", "candidate": "alpha-one", "action": "public-publish",
                          "requested_by": "r", "reason": "x"}, "INVALID", "approval"),
    ("request_approval", {"approval": "a-1", "candidate": "alpha-one", "action": "public-publish",
                          "requested_by": "r", "reason": "x" * 301}, "INVALID", "reason"),
    ("decide_approval", {"approval": "a-1", "decided_by": "owner", "approved": "yes"}, "INVALID", "approved"),
    ("decide_approval", {"approval": "nope", "decided_by": "owner", "approved": True}, "UNKNOWN_TASK", "nope"),
    ("record_external_action", {"approval": "a-1", "candidate": "alpha-one", "action": "legal", "runner": "r"},
     "INVALID", "action"),
    ("record_external_action", {"approval": "nope", "candidate": "alpha-one", "action": "legal-risk",
                                "runner": "r"}, "APPROVAL_REQUIRED", "owner"),
]


@pytest.fixture(scope="module")
def promoted(tmp_path_factory):
    """A pipeline whose promotion task 2 (evidence) is claimed by run-2."""
    h = make_harness(tmp_path_factory.mktemp("input"))
    h.lanes.record_top_n(week="2026-W50", candidates=GOOD_TOP_N)
    drive_promotion(h, Runs(), until="evidence")
    h.tick()
    assert h.lanes.claim(lane="promotion", run="promotion", runner="run-2").result["task"] == 2
    return h


@pytest.mark.parametrize(("method", "kwargs", "code", "names"), BAD_REQUESTS,
                         ids=[f"{m}-{i}" for i, (m, *_rest) in enumerate(BAD_REQUESTS)])
def test_bad_input_to_every_command_is_one_clear_error_and_writes_nothing(promoted, method, kwargs, code, names):
    before = promoted.head()
    with pytest.raises(PipelineError) as refused:
        getattr(promoted.lanes, method)(**kwargs)
    assert refused.value.code == code, refused.value
    assert names.lower() in refused.value.message.lower(), refused.value.message
    assert "\n" not in refused.value.message
    assert promoted.head() == before


def test_every_command_before_any_settings_is_not_configured(tmp_path):
    from factory_schedule.core import ManualClock
    from factory_schedule.core.pipeline import PipelineLanes
    from factory_schedule.store import open_journal

    journal = open_journal(f"sqlite:///{tmp_path / 'empty.db'}")
    lanes = PipelineLanes(journal, ManualClock("2026-12-07T00:00:00Z"))
    for call in (lambda: lanes.record_top_n(week="2026-W50", candidates=GOOD_TOP_N),
                 lambda: lanes.claim(lane="promotion", run="promotion", runner="r")):
        with pytest.raises(PipelineError) as refused:
            call()
        assert refused.value.code == "NOT_CONFIGURED"
    assert lanes.lane_view("promotion") is None and journal.head("pipeline/lanes") == 0
