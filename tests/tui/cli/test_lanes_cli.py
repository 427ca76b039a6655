"""`factory-schedule lanes ...`: one JSON object out, and an exit code per outcome a shell can branch on."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from factory_schedule.core.pipeline import PIPELINE_AGGREGATE, PIPELINE_ERROR_CODES
from factory_schedule.store import leases, open_journal
from factory_schedule.tui.cli.main import main
from factory_schedule.tui.cli.output import EXIT_IDLE, EXIT_OK, EXIT_REPLAY_NOT_LICENSED, PIPELINE_EXIT_CODES
from tests.core.pipeline.pipeline_support import commission, promotion_report, top_n


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

    def commission(self, path: Path) -> int:
        """The commission recorded, which starts the journal and adopts its pipeline settings."""
        self.capsys.readouterr()
        return main(["--journal", self.url, "record-commission", str(path)])


@pytest.fixture
def shell(sqlite_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Shell:
    return Shell(sqlite_url, capsys, monkeypatch)


@pytest.fixture
def configured(shell: Shell, tmp_path: Path) -> Shell:
    path = tmp_path / "commission.json"
    path.write_text(json.dumps(commission()))
    assert shell.commission(path) == 0
    code, answer = shell("top-n", "--week", "2026-W50", stdin=json.dumps(top_n("bravo", "alpha-one")))
    assert code == 0 and answer["result"]["eligible"] == ["alpha-one", "bravo"]
    return shell


def test_there_is_no_separate_settings_step_record_commission_adopts_them(capsys: pytest.CaptureFixture[str]):
    assert main(["lanes", "settings", "commission.json"]) == 2
    assert "invalid choice: 'settings'" in json.loads(capsys.readouterr().out)["message"]


def test_every_pipeline_error_code_has_its_own_exit_code():
    assert set(PIPELINE_EXIT_CODES) == set(PIPELINE_ERROR_CODES)
    codes = [code for name, code in PIPELINE_EXIT_CODES.items() if name != "INVALID"]
    assert len(set(codes)) == len(codes) and EXIT_IDLE not in codes


def test_a_run_claims_reports_and_a_second_run_finds_the_review_waiting(configured: Shell):
    shell = configured
    code, claimed = shell("claim", "--lane", "promotion", "--run", "promotion", "--runner", "run-1")
    assert code == 0 and claimed["result"]["stage"] == "select" and claimed["result"]["candidate"] == "alpha-one"
    assert claimed["leases"] == ["pipeline/promotion/worker", "pipeline/promotion/task/1"]
    before = shell.head()
    code, held = shell("claim", "--lane", "promotion", "--run", "promotion", "--runner", "run-2")
    assert code == 4 and held["error"] == "LEASE_HELD" and shell.head() == before  # the worker singleton
    report = promotion_report("select", 1)
    code, done = shell("report", "--lane", "promotion", "--task", "1", "--runner", "run-1", stdin=json.dumps(report))
    assert code == 0 and done["result"]["next"] == {"stage": "evidence", "task": 2}
    assert done["leases"] == {"pipeline/promotion/task/1": "released", "pipeline/promotion/worker": "released"}
    assert leases.list_leases(open_journal(shell.url)) == []
    code, again = shell("report", "--lane", "promotion", "--task", "1", "--runner", "run-1",
                        "--report", json.dumps(report))
    assert code == 0 and again["replayed"] is True
    code, idle = shell("claim", "--lane", "promotion", "--run", "promotion-reviewer", "--runner", "rev-1")
    assert code == EXIT_IDLE and idle["reason"] == "nothing-to-review"
    assert leases.list_leases(open_journal(shell.url)) == []  # an idle claim gives its locks back
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
        (("claim", "--lane", "maturation", "--run", "stranger", "--runner", "x"), "WRONG_RUN"),
        (("approval-use", "--approval", "a-1", "--candidate", "alpha-one", "--action", "public-publish",
          "--runner", "run-1"), "APPROVAL_REQUIRED"),
        (("escalation", "--lane", "promotion", "--task", "1", "--decided-by", "owner", "--decision", "park",
          "--reason", "r"), "WRONG_RUN"),
    ]
    for args, error in cases:
        code, answer = shell(*args)
        assert (code, answer["error"]) == (PIPELINE_EXIT_CODES[error], error), answer
        assert shell.head() == before
    held = sorted(lease.scope for lease in leases.list_leases(open_journal(shell.url)))
    assert held == ["pipeline/promotion/task/1", "pipeline/promotion/worker"]  # a refused claim took none


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
        (("claim", "--lane", "promotion", "--run", "promotion", "--runner", ""), ""),  # no owner for a lock
        (("heartbeat", "--lane", "promotion", "--runner", ""), ""),
    ]:
        code, answer = shell(*args, stdin=stdin)
        assert (code, answer["error"]) == (2, "INVALID"), answer
    assert shell.head() == before
    assert leases.list_leases(open_journal(shell.url)) == []


def test_the_owner_approves_an_external_action_on_the_command_line(configured: Shell):
    shell = configured
    assert shell("approval-request", "--approval", "pub-1", "--candidate", "alpha-one", "--action", "public-publish",
                 "--requested-by", "run-7", "--reason", "store listing")[0] == 0
    assert shell("approval-decide", "--approval", "pub-1", "--decided-by", "owner", "--approved", "on")[0] == 0
    code, used = shell("approval-use", "--approval", "pub-1", "--candidate", "alpha-one", "--action",
                       "public-publish", "--runner", "run-7")
    assert code == 0 and used["result"]["approval"]["usedBy"] == "run-7"


def test_a_replayed_approval_use_answers_licensed_false_with_its_own_exit_code(configured: Shell):
    shell = configured
    shell("approval-request", "--approval", "pub-1", "--candidate", "alpha-one", "--action", "public-publish",
          "--requested-by", "run-7", "--reason", "store listing")
    shell("approval-decide", "--approval", "pub-1", "--decided-by", "owner", "--approved", "on")
    use = ("approval-use", "--approval", "pub-1", "--candidate", "alpha-one", "--action", "public-publish",
           "--runner", "run-7")
    code, first = shell(*use)
    assert (code, first["licensed"]) == (EXIT_OK, True)
    before = shell.head()
    for _ in range(2):
        code, again = shell(*use)
        assert (code, again["licensed"], again["replayed"]) == (EXIT_REPLAY_NOT_LICENSED, False, True)
    assert shell.head() == before


def test_a_lane_with_an_exclusive_resource_locks_it_and_abandon_waits_for_the_recovery_window(
        shell: Shell, tmp_path: Path):
    path = tmp_path / "commission.json"
    path.write_text(json.dumps(commission(promotionResources=["browser-profile"])))
    assert shell.commission(path) == 0
    assert shell("top-n", "--week", "2026-W50", stdin=json.dumps(top_n("bravo", "alpha-one")))[0] == 0
    code, claimed = shell("claim", "--lane", "promotion", "--run", "promotion", "--runner", "run-1", "--ttl", "0.2")
    assert code == 0 and "resource/browser-profile" in claimed["leases"]
    code, beaten = shell("heartbeat", "--lane", "promotion", "--runner", "run-1")
    assert code == 0 and len(beaten["leases"]) == 3
    before = shell.head()
    abandon = ("abandon", "--lane", "promotion", "--task", "1", "--runner", "run-1", "--confirmed-by", "owner",
               "--evidence", "pid gone")
    code, refused = shell(*abandon)
    assert code == 4 and refused["error"] == "LEASE_HELD" and shell.head() == before
    time.sleep(0.5)  # past 2 x TTL without a heartbeat
    code, done = shell(*abandon)
    assert code == 0 and set(done["leases"].values()) == {"removed"} and len(done["leases"]) == 3
    assert leases.list_leases(open_journal(shell.url)) == []
    code, again = shell("claim", "--lane", "promotion", "--run", "promotion", "--runner", "run-2")
    assert code == 0 and again["result"]["task"] == 1  # the same task, as itself


def test_six_claim_processes_racing_on_one_lane_leave_one_claim_and_one_lock_holder(configured: Shell):
    command = [sys.executable, "-m", "factory_schedule.tui.cli", "--journal", configured.url, "lanes", "claim",
               "--lane", "promotion", "--run", "promotion"]
    racers = [subprocess.Popen([*command, "--runner", f"run-{i}"], stdout=subprocess.PIPE, text=True)
              for i in range(6)]
    answers = [(racer.wait(timeout=120), json.loads(racer.stdout.read())) for racer in racers]  # type: ignore[union-attr]
    codes = sorted(code for code, _answer in answers)
    assert codes[0] == 0 and set(codes[1:]) <= {4, EXIT_IDLE} and codes.count(0) == 1, answers
    winner = next(answer for code, answer in answers if code == 0)
    held = {lease.scope: lease.owner for lease in leases.list_leases(open_journal(configured.url))}
    runner = winner["command_id"].rsplit("/", 1)[1]
    assert held == {"pipeline/promotion/worker": runner, "pipeline/promotion/task/1": runner}
    claims = [e for e in open_journal(configured.url).history(PIPELINE_AGGREGATE) if e.type == "task-claimed"]
    assert len(claims) == 1


def test_journal_may_follow_the_lanes_subcommand_and_a_missing_journal_is_refused_in_one_line(
        configured: Shell, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    capsys.readouterr()
    assert main(["lanes", "show", "--lane", "promotion", "--journal", configured.url]) == 0
    after = capsys.readouterr().out
    assert main(["--journal", configured.url, "lanes", "show", "--lane", "promotion"]) == 0
    assert capsys.readouterr().out == after and json.loads(after)["lane"]["lane"] == "promotion"
    typo = tmp_path / "jornal.db"
    assert main(["lanes", "show", "--lane", "promotion", "--journal", f"sqlite:///{typo}"]) == 3
    [line] = capsys.readouterr().out.splitlines()
    assert json.loads(line)["error"] == "JOURNAL" and str(typo) in line and not typo.exists()


def test_claim_takes_its_arguments_and_a_ttl_in_seconds_on_stdin_and_refuses_a_ttl_past_a_day(configured: Shell):
    shell = configured
    before = shell.head()
    for ttl in ("0", "nan", "86401"):
        code, answer = shell("claim", "--lane", "promotion", "--run", "promotion", "--runner", "r", "--ttl", ttl)
        assert (code, answer["error"]) == (2, "INVALID"), answer
    for number in (0, 1e9, True, "60"):
        stdin = json.dumps({"lane": "promotion", "run": "promotion", "runner": "r", "ttl": number})
        code, answer = shell("claim", "--stdin", stdin=stdin)
        assert (code, answer["error"]) == (2, "INVALID"), answer
    assert shell.head() == before and leases.list_leases(open_journal(shell.url)) == []
    stdin = json.dumps({"lane": "promotion", "run": "promotion", "runner": "run-1", "ttl": 30.5, "pid": 4242})
    code, claimed = shell("claim", "--stdin", stdin=stdin)
    assert code == 0 and claimed["result"]["task"] == 1
    [worker, _task] = sorted(leases.list_leases(open_journal(shell.url)), key=lambda lease: lease.scope, reverse=True)
    assert worker.scope == "pipeline/promotion/worker" and worker.ttl_seconds == 30.5 and worker.info["pid"] == 4242


def test_every_journal_has_the_leases_table_so_a_claim_works_in_a_fresh_process(sqlite_url: str, tmp_path: Path):
    """record-commission and lanes claim as two separate processes, as a person runs them: the journal the
    first created must already hold the table the claim's locks live in."""
    path = tmp_path / "commission.json"
    path.write_text(json.dumps(commission()))

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "factory_schedule.tui.cli", "--journal", sqlite_url, *args],
                              input=stdin, capture_output=True, text=True, timeout=120)

    assert run("record-commission", str(path)).returncode == 0
    assert run("lanes", "top-n", "--week", "2026-W50", stdin=json.dumps(top_n("bravo", "alpha-one"))).returncode == 0
    claimed = run("lanes", "claim", "--lane", "promotion", "--run", "promotion", "--runner", "run-1")
    assert claimed.returncode == 0, claimed.stdout + claimed.stderr
    assert json.loads(claimed.stdout.splitlines()[-1])["leases"] == ["pipeline/promotion/worker",
                                                                     "pipeline/promotion/task/1"]
