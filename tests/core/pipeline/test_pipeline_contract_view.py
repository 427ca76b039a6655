"""The contract a lane's view lists is exactly the one the engine enforces, from one source: a report built
from `lane_view(...).contracts` alone (each listed field, nothing else) meets its stage's contract, and a report
missing any listed field is refused CONTRACT naming it, never another code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core.pipeline import STAGES, PipelineError, parse_report
from tests.core.pipeline.pipeline_support import (
    BOUNDARY,
    CRITERIA,
    METRICS,
    VERIFIER,
    Harness,
    Runs,
    claim_next,
    drive_maturation,
    drive_promotion,
    lane_view,
    make_harness,
    sha,
    top_n,
)

# What a runner fills each field the view lists with: a value of the field's kind, nothing more.
VALUES: dict[str, Any] = {
    "artifact": "artifacts/report.md", "sha256": sha("report"), "evidence": ["evidence/direct.md"],
    "criteriaSha256": CRITERIA, "verifier": VERIFIER, "verdict": None, "build": "success",
    "metrics": [{"name": m, "met": True, "measured": "yes"} for m in METRICS], "passed": True,
    "verifierArtifactSha256": None, "decision": None, "boundarySha256": BOUNDARY,
    "successMetrics": None, "slice": 1, "verification": "scripted playtest", "ready": True,
    "checklist": ["release/checklist.md"],
}
VERDICTS = {("promotion", "review"): "pass", ("promotion", "decide"): "GO"}
DECISIONS = {("maturation", "intake"): 1, ("maturation", "review"): "complete"}


def _from_the_view(lane: str, stage: str, fields: list[str]) -> dict[str, Any]:
    report = {field: VALUES[field] for field in fields}
    if "verdict" in report:
        report["verdict"] = VERDICTS[(lane, stage)]
    if "decision" in report:
        report["decision"] = DECISIONS[(lane, stage)]
    if "verifierArtifactSha256" in report:
        report["verifierArtifactSha256"] = sha("verify")
    if "successMetrics" in report:
        report["successMetrics"] = list(METRICS) if stage == "boundary" else [
            {"name": m, "target": "yes"} for m in METRICS]
    return report


@pytest.fixture
def h(tmp_path: Path) -> Harness:
    return make_harness(tmp_path)


@pytest.mark.parametrize("lane", ["promotion", "maturation"])
def test_a_report_of_exactly_the_fields_the_view_lists_meets_every_stages_contract(h: Harness, lane: str) -> None:
    contracts = lane_view(h.lanes, lane).contracts
    assert sorted(contracts) == sorted(STAGES[lane])
    for stage, fields in contracts.items():
        report = _from_the_view(lane, stage, fields)
        parse_report(lane, stage, report)  # accepted
        for field in fields:
            without = {k: v for k, v in report.items() if k != field}
            with pytest.raises(PipelineError) as refused:
                parse_report(lane, stage, without)
            assert refused.value.code == "CONTRACT" and field in refused.value.message, (stage, field)


def test_the_view_lists_verifier_and_criteria_for_promotions_verify_and_slice_for_maturations(h: Harness) -> None:
    assert {"verifier", "criteriaSha256"} <= set(lane_view(h.lanes, "promotion").contracts["verify"])
    assert "slice" not in lane_view(h.lanes, "promotion").contracts["verify"]
    assert "slice" in lane_view(h.lanes, "maturation").contracts["verify"]
    assert "verifier" not in lane_view(h.lanes, "maturation").contracts["verify"]


def test_a_maturation_verify_report_without_its_slice_is_refused_contract_not_stale(h: Harness) -> None:
    h.lanes.record_top_n(week="2026-W50", candidates=top_n("bravo", "charlie"))
    runs = Runs()
    drive_promotion(h, runs)
    drive_maturation(h, runs, until="verify")
    runner, task = claim_next(h, "maturation", runs)
    report = _from_the_view("maturation", "verify", lane_view(h.lanes, "maturation").contracts["verify"])
    report.pop("slice")
    with pytest.raises(PipelineError) as refused:
        h.lanes.report(lane="maturation", task=task["task"], runner=runner, report=report)
    assert refused.value.code == "CONTRACT" and "slice" in refused.value.message
