"""`factory-schedule lanes ...`: one JSON object out, and an exit code per outcome a shell can branch on."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PIPELINE_ERROR_CODES
from factory_schedule.store import open_journal
from factory_schedule.tui.cli.lanes import EXIT_IDLE, PIPELINE_EXIT_CODES
from factory_schedule.tui.cli.main import main
from tests.core.pipeline_support import commission, promotion_report, top_n


class Shell:
    def __init__(self, url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        self.url, self.capsys, self.monkeypatch = url, capsys, monkeypatch

    def __call__(self, *args: str, stdin: str = "") -> tuple[int, Any]:
        self.monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        self.capsys.readouterr()
        code = main(["--journal", self.url, "lanes", *args])
        lines = [line for line in self.capsys.readouterr().out.splitlines() if line.strip()]
        assert len(lines) == 1, lines
        return code, json.loads(lines[0])

    def head(self) -> int:
        return open_journal(self.url).head(PIPELINE_AGGREGATE)


@pytest.fixture
def shell(sqlite_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Shell:
    return Shell(sqlite_url, capsys, monkeypatch)


@pytest.fixture
def configured(shell: Shell, tmp_path: Path) -> Shell:
    path = tmp_path / "commission.json"
    path.write_text(json.dumps(commission()))
    assert shell("settings", str(path))[0] == 0
    code, answer = shell("top-n", "--week", "2026-W50", stdin=json.dumps(top_n("bravo", "alpha-one")))
    assert code == 0 and answer["result"]["eligible"] == ["alpha-one", "bravo"]
    return shell


def test_every_pipeline_error_code_has_its_own_exit_code():
    assert set(PIPELINE_EXIT_CODES) == set(PIPELINE_ERROR_CODES)
    codes = [code for name, code in PIPELINE_EXIT_CODES.items() if name != "INVALID"]
    assert len(set(codes)) == len(codes) and EXIT_IDLE not in codes


def test_a_run_claims_reports_and_a_second_run_finds_the_review_waiting(configured: Shell):
    shell = configured
    code, claimed = shell("claim", "--lane", "promotion", "--run", "promotion", "--runner", "run-1")
    assert code == 0 and claimed["result"]["stage"] == "select" and claimed["result"]["candidate"] == "alpha-one"
    code, idle = shell("claim", "--lane", "promotion", "--run", "promotion", "--runner", "run-2")
    assert code == EXIT_IDLE and idle["reason"] == "claimed"
    report = promotion_report("select", 1)
    code, done = shell("report", "--lane", "promotion", "--task", "1", "--runner", "run-1", stdin=json.dumps(report))
    assert code == 0 and done["result"]["next"] == {"stage": "evidence", "task": 2}
    code, again = shell("report", "--lane", "promotion", "--task", "1", "--runner", "run-1",
                        "--report", json.dumps(report))
    assert code == 0 and again["replayed"] is True
    code, view = shell("show", "--lane", "promotion")
    assert code == 0 and view["lane"]["wip"][0]["stage"] == "evidence"
    assert view["lane"]["contracts"]["brief"] == ["artifact", "sha256", "criteriaSha256", "verifier"]


def test_refusals_exit_with_their_code_and_write_nothing(configured: Shell):
    shell = configured
    assert shell("claim", "--lane", "promotion", "--run", "promotion", "--runner", "run-1")[0] == 0
    before = shell.head()
    cases = [
        (("report", "--lane", "promotion", "--task", "1", "--runner", "run-1", "--report", '{"artifact": "a"}'),
         "CONTRACT"),
        (("report", "--lane", "promotion", "--task", "1", "--runner", "run-9",
          "--report", json.dumps(promotion_report("select", 1))), "NOT_OWNER"),
        (("claim", "--lane", "promotion", "--run", "stranger", "--runner", "x"), "WRONG_RUN"),
        (("approval-use", "--approval", "a-1", "--candidate", "alpha-one", "--action", "public-publish",
          "--runner", "run-1"), "APPROVAL_REQUIRED"),
        (("escalation", "--lane", "promotion", "--task", "1", "--decided-by", "owner", "--decision", "park",
          "--reason", "r"), "WRONG_RUN"),
    ]
    for args, error in cases:
        code, answer = shell(*args)
        assert (code, answer["error"]) == (PIPELINE_EXIT_CODES[error], error), answer
        assert shell.head() == before


def test_bad_input_exits_2_before_the_journal_is_touched(configured: Shell):
    shell = configured
    before = shell.head()
    for args, stdin in [
        (("claim", "--lane", "promotion", "--run", "promotion"), ""),
        (("report", "--lane", "promotion", "--task", "1", "--runner", "r"), "not json"),
        (("report", "--lane", "promotion", "--task", "1", "--runner", "r", "--report", "{"), ""),
        (("top-n", "--week", "2026-W51"), "[{\"candidate\": \"Not Normal\", \"product\": \"alpha\", \"rank\": 1}]"),
        (("approval-decide", "--approval", "a-1", "--decided-by", "owner", "--approved", "maybe"), ""),
        (("claim", "--stdin"), '{"lane": "promotion", "run": "promotion", "runner": "r", "colour": "red"}'),
    ]:
        code, answer = shell(*args, stdin=stdin)
        assert (code, answer["error"]) == (2, "INVALID"), answer
    assert shell.head() == before


def test_the_owner_approves_an_external_action_on_the_command_line(configured: Shell):
    shell = configured
    assert shell("approval-request", "--approval", "pub-1", "--candidate", "alpha-one", "--action", "public-publish",
                 "--requested-by", "run-7", "--reason", "store listing")[0] == 0
    assert shell("approval-decide", "--approval", "pub-1", "--decided-by", "owner", "--approved", "on")[0] == 0
    code, used = shell("approval-use", "--approval", "pub-1", "--candidate", "alpha-one", "--action",
                       "public-publish", "--runner", "run-7")
    assert code == 0 and used["result"]["approval"]["usedBy"] == "run-7"
