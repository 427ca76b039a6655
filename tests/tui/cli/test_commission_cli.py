"""`factory-schedule commission new` proposes a commission `record-commission` takes unchanged; `commission
check` says what is wrong with one, a line per problem, or what its nights will look like."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pendulum
import pytest

from factory_schedule.core.commission import proposed_commission
from factory_schedule.tui.cli.main import main


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str,
        stdin: str = "") -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


NEW = ("commission", "new", "--products", "alpha,beta", "--weekly-tokens", "40000000", "--pipeline",
       "--zone", "Europe/Paris", "--effective-from", "2026-12-03", "--stagger", "15")


def test_commission_new_prints_the_proposed_commission_as_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = run(capsys, monkeypatch, *NEW)
    assert code == 0
    assert json.loads(out) == proposed_commission(["alpha", "beta"], "2026-12-03", 40_000_000, zone="Europe/Paris",
                                                  stagger_minutes=15, pipeline=True)


def test_a_commission_new_that_cannot_propose_says_why_on_stderr_not_into_the_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`commission new ... > commission.json` is how it is run: an error on stdout would land in the file, and the
    owner would see nothing until `check` or `record-commission` called the file's JSON no commission."""
    capsys.readouterr()
    code = main(["commission", "new", "--products", "p0,p1,p2,p3,p4,p5", "--weekly-tokens", "40000000",
                 "--pipeline"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    refused = json.loads(captured.err)
    assert refused["error"] == "INVALID" and "stagger" in refused["message"] and "fits" in refused["message"]


def test_what_commission_new_prints_is_recorded_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out = run(capsys, monkeypatch, *NEW)
    journal = f"sqlite:///{tmp_path / 'journal.db'}"
    code, recorded = run(capsys, monkeypatch, "--journal", journal, "record-commission", "-", stdin=out)
    assert code == 0, recorded
    code, shown = run(capsys, monkeypatch, "--journal", journal, "show")
    assert json.loads(shown)["schedule"]["commission"] == json.loads(out)


def test_commission_new_starts_on_todays_date_in_its_zone_unless_told(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before = pendulum.now("Pacific/Auckland").to_date_string()
    code, out = run(capsys, monkeypatch, "commission", "new", "--products", "alpha", "--weekly-tokens", "9000000",
                    "--zone", "Pacific/Auckland")
    after = pendulum.now("Pacific/Auckland").to_date_string()
    commission = json.loads(out)
    assert code == 0 and commission["effectiveFrom"] in (before, after) and "pipeline" not in commission
    assert [lane["lane"] for lane in commission["lanes"]][:2] == ["alpha/basic", "alpha/full"]


@pytest.mark.parametrize(("flags", "words"), [
    (("--products", "Alpha", "--weekly-tokens", "1"), "products: 'Alpha' is not a Product ID"),
    (("--products", "alpha", "--weekly-tokens", "lots"), "expected an integer, got 'lots'"),
    (("--products", "alpha", "--weekly-tokens", "1", "--zone", "Mars/Olympus"), "unknown zone 'Mars/Olympus'"),
    (("--products", "alpha", "--weekly-tokens", "1", "--effective-from", "3 Dec"), "effectiveFrom"),
    (("--products", "alpha", "--weekly-tokens", "0"), "weeklyTokens: Input should be greater than or equal to 1"),
    (("--products", "alpha", "--weekly-tokens", "1", "--piepline"), "unrecognized arguments: --piepline"),
])
def test_commission_new_refuses_bad_flags_in_words(
    flags: tuple[str, ...], words: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    capsys.readouterr()
    code = main(["commission", "new", *flags])
    captured = capsys.readouterr()
    error = json.loads(captured.err)  # its stdout goes to the commission's file
    assert code == 2 and captured.out == "" and error["error"] == "INVALID" and words in error["message"], error


def _file(tmp_path: Path, commission: dict[str, object]) -> str:
    path = tmp_path / "commission.json"
    path.write_text(json.dumps(commission))
    return str(path)


def test_commission_check_shows_each_lanes_slot_the_first_night_and_the_week_against_the_ceiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    commission = proposed_commission(["alpha", "beta"], "2036-12-04", 40_000_000, pipeline=True)  # ahead of now
    code, out = run(capsys, monkeypatch, "commission", "check", _file(tmp_path, commission))
    assert code == 0, out
    assert "alpha/basic: every night 02:00-05:00 Europe/London" in out
    assert "alpha/full: Thursdays 02:40-05:00" in out
    assert "first night, Thursday 2036-12-04: 02:00 alpha/basic, 02:20 beta/basic" in out
    assert "a week: at most 112 calls whose bounds add up to 23,000,000 tokens (57% of the weekly ceiling" in out


def test_commission_check_warns_when_the_weeks_bounds_pass_the_ceiling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    commission = proposed_commission(["alpha"], "2026-12-03", 2_000_000)
    code, out = run(capsys, monkeypatch, "commission", "check", _file(tmp_path, commission))
    assert code == 1 and "warning: the week's bounds are above the ceiling" in out


def test_commission_check_says_each_problem_on_its_own_line_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    commission = proposed_commission(["alpha"], "2026-12-03", 9_000_000)
    commission["zone"] = "Europe/Londn"
    commission["lanes"][0]["time"] = "25:00"
    commission["lanes"][0]["tasks"][0]["callBound"] = 0
    code, out = run(capsys, monkeypatch, "commission", "check", _file(tmp_path, commission))
    lines = out.splitlines()
    assert code == 2 and len(lines) == 3, out
    assert lines[0].startswith("problem: zone: unknown zone 'Europe/Londn'")
    assert lines[1] == "problem: lanes[0].time: '25:00' is not a 24-hour time HH:MM (00:00 to 23:59)"
    assert lines[2].startswith("problem: lanes[0].tasks[0].callBound: Input should be greater than or equal to 1")


def test_commission_check_of_a_file_that_is_not_json_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "commission.json"
    path.write_text("{not json")
    code, out = run(capsys, monkeypatch, "commission", "check", str(path))
    assert code == 2 and "is not JSON" in out
