"""`lanes claim --occurrence`: a scheduled run's claim on the command line, refused in one line (exit 67,
nothing written) unless its occurrence runs for its token; `--run` or `--occurrence` is needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factory_schedule.tui.cli.output import EXIT_BAD_INPUT, PIPELINE_EXIT_CODES
from tests.tui.host.test_tick_lane_runs import _commission_with_a_promotion_run_due_now

from .test_lanes_cli import Shell, shell  # noqa: F401  (the fixture)


@pytest.fixture
def scheduled(shell: Shell, tmp_path: Path) -> Shell:  # noqa: F811
    path = tmp_path / "commission.json"
    path.write_text(json.dumps(_commission_with_a_promotion_run_due_now()))
    assert shell.commission(path) == 0
    return shell


def test_a_claim_with_an_occurrence_not_running_for_the_token_exits_67_and_writes_nothing(scheduled: Shell) -> None:
    before = scheduled.head()
    code, answer = scheduled("claim", "--lane", "promotion", "--runner", "r-1",
                             "--occurrence", "discovery/portfolio/promotion/2026-12-07")
    assert code == PIPELINE_EXIT_CODES["NOT_ADMITTED"] == 67
    assert answer["error"] == "NOT_ADMITTED" and "not an admitted, open occurrence" in answer["message"]
    assert scheduled.head() == before


def test_a_scheduled_runs_claim_without_its_occurrence_exits_67(scheduled: Shell) -> None:
    code, answer = scheduled("claim", "--lane", "promotion", "--run", "promotion", "--runner", "r-1")
    assert (code, answer["error"]) == (67, "NOT_ADMITTED")


def test_a_claim_needs_a_run_or_an_occurrence(scheduled: Shell) -> None:
    code, answer = scheduled("claim", "--lane", "promotion", "--runner", "r-1")
    assert code == EXIT_BAD_INPUT
    assert answer["message"] == "--run: required without --occurrence (a scheduled run names its occurrence)"
