"""A lane's prompt folder is checked against its commission tasks, each problem one line naming file and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from factory_schedule.tui.host.providers.prompts import BindingError, lane_tasks, load_lane

TASKS = [{"task": "scan", "account": "claude", "maxCalls": 4, "callBound": 150_000}]
GOOD = 'provider = "claude"\nsign_in = "owner@example.com"\nbound = 150000\n'


def which(name: str) -> str | None:
    return f"/usr/local/bin/{name}" if name in ("claude", "codex") else None


def lane(tmp_path: Path, settings: str = GOOD, files: dict[str, bytes] | None = None) -> Path:
    folder = tmp_path / "alpha" / "basic"
    (folder / "scan").mkdir(parents=True)
    (folder / "lane.toml").write_text(settings)
    for name, data in (files if files is not None else {"20-deps.md": b"deps\n", "10-repo.md": b"repo\n"}).items():
        (folder / "scan" / name).write_bytes(data)
    return folder


def error_of(tmp_path: Path, tasks: list[dict[str, object]] = TASKS) -> str:
    with pytest.raises(BindingError) as raised:
        load_lane(tmp_path, "alpha/basic", tasks, which=which)
    message = str(raised.value)
    assert "\n" not in message
    return message


def test_a_good_lane_binds_each_unit_in_name_order_with_its_settings(tmp_path: Path) -> None:
    lane(tmp_path, GOOD + 'timeout_minutes = 5\n[tasks.scan]\nbound = 90000\nargs = ["--model", "opus"]\n')
    binding = load_lane(tmp_path, "alpha/basic", TASKS, which=which)
    [task] = binding.tasks
    assert [u.work for u in task.units] == ["10-repo", "20-deps"]
    assert (task.bound, task.timeout_seconds, task.args) == (90_000, 300, ("--model", "opus"))
    assert binding.executable == "/usr/local/bin/claude"


def test_a_prompt_is_read_without_its_bom_and_with_unix_line_endings(tmp_path: Path) -> None:
    lane(tmp_path, files={"a.md": b"\xef\xbb\xbfline one\r\nline two\r\n"})
    [unit] = load_lane(tmp_path, "alpha/basic", TASKS, which=which).tasks[0].units
    assert unit.prompt == "line one\nline two\n"


@pytest.mark.parametrize(("settings", "expected"), [
    (GOOD.replace("150000", '"lots"'), "lane.toml: bound: Input should be a valid integer"),
    (GOOD.replace("150000", "200000"), "lane.toml: bound: 200000 is above task scan's callBound 150000"),
    (GOOD.replace('"claude"', '"codex"'), "provider: codex does not run task scan, which the commission pays from "
                                          "the claude account"),
    (GOOD.replace('"claude"', '"gemini"'), "lane.toml: provider: Input should be 'claude' or 'codex'"),
    (GOOD + "colour = 1\n", "lane.toml: colour: not a field of this document"),
    (GOOD + "[tasks.review]\nbound = 1\n", "lane.toml: tasks.review: not a task of lane alpha/basic (scan)"),
    (GOOD + 'executable = "no-such-cli"\n', "lane.toml: executable: 'no-such-cli' is not an executable on PATH"),
    (GOOD.replace("bound", "bound = ", 1), "lane.toml: not TOML"),
    ('provider = "claude"\nbound = 1\n', "lane.toml: sign_in: missing (this field is required)"),
    (GOOD.replace('"owner@example.com"', '" me "'), "lane.toml: sign_in: ' me ' is not a sign-in: text with no "
                                                     "space at its start or end"),
])
def test_a_bad_setting_is_one_line_naming_its_field(tmp_path: Path, settings: str, expected: str) -> None:
    lane(tmp_path, settings)
    assert expected in error_of(tmp_path)


def test_an_empty_prompt_a_missing_task_folder_and_a_stray_folder_are_named(tmp_path: Path) -> None:
    folder = lane(tmp_path, files={"a.md": b"  \n"})
    assert error_of(tmp_path).endswith("scan/a.md: empty prompt")
    (folder / "scan" / "a.md").write_text("ok")
    (folder / "review").mkdir()
    assert error_of(tmp_path).endswith("alpha/basic/review: not a task of lane alpha/basic (scan)")
    two_tasks = [*TASKS, {"task": "review", "account": "claude", "maxCalls": 1, "callBound": 150_000}]
    assert error_of(tmp_path, two_tasks).endswith("review: no prompt files (one .md or .txt file per unit of work)")
    (folder / "review").rmdir()
    assert error_of(tmp_path, two_tasks).endswith("review: missing (one folder per task of the lane, holding its "
                                                  "prompts)")


def test_two_files_with_one_work_key_are_refused(tmp_path: Path) -> None:
    lane(tmp_path, files={"a.md": b"x", "a.txt": b"y"})
    assert "work key 'a' is also a.md" in error_of(tmp_path)


def test_a_lane_outside_the_commission_is_refused() -> None:
    with pytest.raises(BindingError, match="gamma/basic: not a lane of the current commission"):
        lane_tasks({"lanes": [{"lane": "alpha/basic", "tasks": TASKS}]}, "gamma/basic")


def test_more_units_than_the_task_may_call_in_a_night_are_refused(tmp_path: Path) -> None:
    lane(tmp_path, files={f"{i}.md": b"x" for i in range(5)})
    assert error_of(tmp_path).endswith("scan: 5 prompt files, but task scan may make 4 calls a night: the rest "
                                       "would never be sent")
