"""The LaunchAgent: intervals from the commission's lane times, and plist text that parses back."""

from __future__ import annotations

import json
import plistlib
from typing import Any

import pytest

from factory_schedule.core.commission import proposed_commission
from factory_schedule.core.errors import ScheduleError
from factory_schedule.core.launchd import launch_intervals, launchd_weekday, render_launch_agent_plist

COMMISSION = proposed_commission(["alpha", "beta", "gamma"], "2026-12-07", 40_000_000)


def test_launchd_weekday_counts_sunday_as_zero() -> None:
    assert [launchd_weekday(day) for day in range(1, 8)] == [1, 2, 3, 4, 5, 6, 0]


def test_launch_intervals_fire_at_every_lane_time_in_the_commission_zone() -> None:
    assert launch_intervals(COMMISSION, "Europe/London") == [
        # basic lanes: every day (no Weekday); alpha/basic 02:00, beta 02:20, gamma 02:40
        {"Hour": 2, "Minute": 0},
        {"Hour": 2, "Minute": 20},
        {"Hour": 2, "Minute": 40},
        # alpha/full (Thursday 02:40) and gamma/full (Friday 02:40) are covered by gamma/basic's daily 02:40
        {"Weekday": 0, "Hour": 2, "Minute": 30},  # portfolio/audit, Sunday
        {"Weekday": 0, "Hour": 3, "Minute": 0},  # portfolio/synthesis
        {"Weekday": 0, "Hour": 4, "Minute": 0},  # portfolio/bundle
        {"Weekday": 4, "Hour": 3, "Minute": 0},  # beta/full, Thursday
    ]


def test_launch_intervals_are_deduplicated() -> None:
    doc = proposed_commission(["alpha"], "2026-12-07", 1)
    for lane in doc["lanes"]:
        if lane["rhythm"] in ("audit", "synthesis"):
            lane["time"] = "04:00"  # the same Sunday time as the bundle
    intervals = launch_intervals(doc, "Europe/London")
    assert intervals.count({"Weekday": 0, "Hour": 4, "Minute": 0}) == 1
    assert len(intervals) == len({tuple(sorted(interval.items())) for interval in intervals})


@pytest.mark.parametrize("host_zone", ["Europe/Berlin", "UTC", "Europe/Dublin", "localtime", ""])
def test_launch_intervals_refuse_a_host_zone_other_than_the_commissions(host_zone: str) -> None:
    with pytest.raises(ScheduleError) as refused:
        launch_intervals(COMMISSION, host_zone)
    assert refused.value.code == "INVALID"


def test_launch_intervals_refuse_an_invalid_commission() -> None:
    with pytest.raises(ScheduleError) as refused:
        launch_intervals(COMMISSION | {"weeklyTokens": 0}, "Europe/London")
    assert refused.value.message.startswith("weeklyTokens: ")


def spec(**overrides: Any) -> dict[str, Any]:
    return {
        "label": "com.example.factory-schedule",
        "program_arguments": ["/usr/local/bin/factory-schedule", "tick", "--", "/Users/owner/runner.sh"],
        "start_calendar_interval": launch_intervals(COMMISSION, "Europe/London"),
    } | overrides


def test_plist_text_parses_back_to_the_spec() -> None:
    text = render_launch_agent_plist(
        spec(
            standard_out_path="/Users/owner/Library/Logs/factory-schedule.out.log",
            standard_error_path="/Users/owner/Library/Logs/factory-schedule.err.log",
            environment_variables={"FACTORY_JOURNAL": "sqlite:////Users/owner/journal.db"},
        )
    )
    assert isinstance(text, str)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist')
    parsed = plistlib.loads(text.encode("utf-8"))
    assert parsed == {
        "Label": "com.example.factory-schedule",
        "ProgramArguments": ["/usr/local/bin/factory-schedule", "tick", "--", "/Users/owner/runner.sh"],
        "StartCalendarInterval": launch_intervals(COMMISSION, "Europe/London"),
        "StandardOutPath": "/Users/owner/Library/Logs/factory-schedule.out.log",
        "StandardErrorPath": "/Users/owner/Library/Logs/factory-schedule.err.log",
        "EnvironmentVariables": {"FACTORY_JOURNAL": "sqlite:////Users/owner/journal.db"},
    }


def test_plist_text_is_stable_and_omits_unset_optional_keys() -> None:
    text = render_launch_agent_plist(spec())
    assert text == render_launch_agent_plist(spec())
    assert set(plistlib.loads(text.encode("utf-8"))) == {"Label", "ProgramArguments", "StartCalendarInterval"}
    assert "<key>Weekday</key>\n\t\t\t<integer>0</integer>" in text


def test_plist_text_escapes_what_xml_needs_escaped() -> None:
    text = render_launch_agent_plist(spec(environment_variables={"NOTE": "a <b> & 'c'"}))
    assert "a &lt;b&gt; &amp; 'c'" in text
    assert plistlib.loads(text.encode("utf-8"))["EnvironmentVariables"] == {"NOTE": "a <b> & 'c'"}


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"label": "has space"}, "label"),
        ({"program_arguments": []}, "program_arguments"),
        ({"program_arguments": ["factory-schedule", "tick"]}, "program_arguments[0]"),
        ({"program_arguments": ["/bin/x", 3]}, "program_arguments[1]"),
        ({"start_calendar_interval": []}, "start_calendar_interval"),
        ({"start_calendar_interval": [{"Hour": 24}]}, "start_calendar_interval[0].Hour"),
        ({"start_calendar_interval": [{"Hour": True}]}, "start_calendar_interval[0].Hour"),
        ({"start_calendar_interval": [{"Month": 1}]}, "start_calendar_interval[0].Month"),
        ({"standard_out_path": "relative.log"}, "standard_out_path"),
        ({"environment_variables": {"A": 1}}, "environment_variables.A"),
        ({"keep_alive": True}, "keep_alive"),
    ],
)
def test_render_launch_agent_plist_refuses_a_bad_spec_naming_the_key(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ScheduleError) as refused:
        render_launch_agent_plist(spec(**overrides))
    assert refused.value.code == "INVALID"
    assert refused.value.message.startswith(f"{field}: ")


def test_render_launch_agent_plist_needs_label_program_and_intervals() -> None:
    for key in ("label", "program_arguments", "start_calendar_interval"):
        incomplete = spec()
        del incomplete[key]
        with pytest.raises(ScheduleError, match=key):
            render_launch_agent_plist(incomplete)


# --- the `factory-schedule launchd print` command (the shell around the renderer) ------------------


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from factory_schedule.tui.cli.main import main

    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def commission_file(tmp_path: Any) -> str:
    path = tmp_path / "commission.json"
    path.write_text(json.dumps(COMMISSION), encoding="utf-8")
    return str(path)


def test_launchd_print_prints_the_plist_for_the_machines_zone(
    commission_file: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Europe/London")
    code, out, _err = run_cli(
        ["launchd", "print", commission_file, "--", "/usr/local/bin/factory-schedule", "tick", "--", "/bin/runner"],
        capsys,
    )
    assert code == 0
    parsed = plistlib.loads(out.encode("utf-8"))
    assert parsed["StartCalendarInterval"] == launch_intervals(COMMISSION, "Europe/London")
    assert parsed["ProgramArguments"] == ["/usr/local/bin/factory-schedule", "tick", "--", "/bin/runner"]


def test_launchd_print_refuses_a_machine_in_another_zone(
    commission_file: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    code, out, err = run_cli(["launchd", "print", commission_file], capsys)
    refusal = json.loads(out)
    assert (code, err, refusal["error"]) == (2, "", "INVALID")
    assert "Asia/Tokyo" in refusal["message"] and "Europe/London" in refusal["message"]
    code, out, _err = run_cli(["launchd", "print", commission_file, "--host-zone", "Europe/London"], capsys)
    assert code == 0 and plistlib.loads(out.encode("utf-8"))["ProgramArguments"][-1] == "tick"


def test_launchd_print_refuses_a_bad_commission_file_with_the_json_error_document(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(COMMISSION | {"weeklyTokens": True}), encoding="utf-8")
    code, out, err = run_cli(["launchd", "print", str(bad), "--host-zone", "Europe/London"], capsys)
    refusal = json.loads(out)
    assert (code, err, out.count("\n"), refusal["error"]) == (2, "", 1, "INVALID")
    assert "weeklyTokens: " in refusal["message"]
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    for path in (tmp_path / "broken.json", tmp_path / "missing.json"):
        code, out, err = run_cli(["launchd", "print", str(path), "--host-zone", "Europe/London"], capsys)
        assert (code, err, out.count("\n"), json.loads(out)["error"]) == (2, "", 1, "INVALID")


def test_launchd_print_refuses_a_relative_program_with_the_json_error_document(
    commission_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(
        ["launchd", "print", commission_file, "--host-zone", "Europe/London", "--", "bin/tick"], capsys
    )
    refusal = json.loads(out)
    assert (code, err, refusal["error"]) == (2, "", "INVALID")
    assert "bin/tick" in refusal["message"]
