"""A starter prompt folder for the current commission: every lane's lane.toml and a first prompt per task.

What `run` reads (tui/host/providers/prompts.py) for every lane of the commission: `lane.toml` names
the provider that pays for the lane's tasks, the owner's sign-in, the bound (the smallest callBound
of the lane's tasks, so every task may use it) and the CLI by its absolute path where this shell
finds it (a LaunchAgent's tick has only the system's PATH); each task gets one prompt (a staged
lane's task one per stage its run works). The prompts are a start the owner rewrites: each says
what the lane is for and asks for a short report. A file that exists is never overwritten.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from factory_schedule.tui.host.providers.prompts import LANE_FILE
from factory_schedule.tui.host.providers.stage_run import lane_stages

PROVIDER_OF_ACCOUNT = {"claude": "claude", "chatgpt": "codex"}


def _toml_text(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lane_settings_text(lane: Mapping[str, Any], sign_in: str, which: Callable[[str], str | None]) -> str:
    tasks = list(lane["tasks"])
    provider = PROVIDER_OF_ACCOUNT[str(tasks[0]["account"])]
    bound = min(int(task["callBound"]) for task in tasks)
    lines = [f"provider = {_toml_text(provider)}", f"sign_in = {_toml_text(sign_in)}", f"bound = {bound}",
             "timeout_minutes = 30"]
    found = which(provider)
    if found is not None:
        lines.append(f"executable = {_toml_text(found)}")
    return "\n".join(lines) + "\n"


def prompt_text(lane: Mapping[str, Any], task: str, stage: str | None) -> str:
    product, rhythm = str(lane["product"]), str(lane["rhythm"])
    if stage is not None:
        return (f"You work the {stage} stage of the {rhythm} run of the portfolio's staged lanes.\n"
                "Do this stage's work for the task below, and answer with the report it asks for.\n")
    subject = "the whole portfolio" if product == "portfolio" else f"the Product {product}"
    return (f"You do the {rhythm} discovery run's {task} task for {subject}.\n"
            "Look for new opportunities and risks since the last run, and answer with a short report:\n"
            "what you found, the evidence, and what to look at next.\n")


def write_starter(folder: Path, commission: Mapping[str, Any], sign_in: str,
                  which: Callable[[str], str | None] = shutil.which) -> list[Path]:
    """Write every missing file of the starter folder; the paths written, in order."""
    written: list[Path] = []

    def put(path: Path, text: str) -> None:
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)

    for lane in commission.get("lanes", []):
        lane_folder = folder / str(lane["lane"])
        put(lane_folder / LANE_FILE, lane_settings_text(lane, sign_in, which))
        stages = lane_stages(str(lane["lane"]))
        for task in lane["tasks"]:
            name = str(task["task"])
            if stages is None:
                put(lane_folder / name / "10-first.md", prompt_text(lane, name, None))
            else:
                for stage in stages:
                    put(lane_folder / name / f"{stage}.md", prompt_text(lane, name, stage))
    return written
