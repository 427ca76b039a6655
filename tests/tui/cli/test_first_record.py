"""A journal is started only by a first record the rules accept: a refused one leaves no file behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factory_schedule.tui.cli.main import main
from tests.tui.runner_support import commission_due_now, commission_file


@pytest.mark.parametrize("change", [{"revision": 2}, {"weeklyTokens": 0}, {"zone": "Mars/Olympus"}],
                         ids=["revision-2", "bad-ceiling", "bad-zone"])
def test_a_refused_first_commission_leaves_no_journal_file(
    change: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "jornal.db"
    commission = commission_file(tmp_path, commission_due_now() | change)
    code = main(["--journal", f"sqlite:///{typo}", "record-commission", str(commission)])
    error = json.loads(capsys.readouterr().out)
    assert code != 0 and error["error"] in ("REVISION", "INVALID")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["commission.json"]


def test_after_a_refused_first_record_later_commands_say_there_is_no_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "jornal.db"
    commission = commission_file(tmp_path, commission_due_now(revision=2))
    main(["--journal", f"sqlite:///{typo}", "record-commission", str(commission)])
    capsys.readouterr()
    assert main(["--journal", f"sqlite:///{typo}", "plan"]) == 3
    assert "no journal at" in json.loads(capsys.readouterr().out)["message"]
    assert main(["--journal", f"sqlite:///{typo}", "health"]) == 2
    shown = capsys.readouterr()
    assert "no journal" in shown.out + shown.err and "not-commissioned" not in shown.out + shown.err


def test_an_accepted_first_commission_still_starts_the_journal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = tmp_path / "new.db"
    commission = commission_file(tmp_path, commission_due_now())
    assert main(["--journal", f"sqlite:///{new}", "record-commission", str(commission)]) == 0
    assert new.exists() and json.loads(capsys.readouterr().out)["version"] == 1


def test_record_commission_of_a_revision_with_pipeline_settings_adopts_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from factory_schedule.core.commission import proposed_commission

    journal = f"sqlite:///{tmp_path / 'journal.db'}"
    commission = commission_file(tmp_path, proposed_commission(["alpha"], "2026-12-07", 40_000_000, pipeline=True))
    assert main(["--journal", journal, "record-commission", str(commission)]) == 0
    assert json.loads(capsys.readouterr().out)["settings_revision"] == 1
    assert main(["--journal", journal, "lanes", "show", "--lane", "promotion"]) == 0  # configured, not 55
