"""The owner's prompt folder: which provider runs a lane, and the prompt of every unit of work of each task.

    PROMPTS/alpha/basic/lane.toml        the lane's settings (below)
    PROMPTS/alpha/basic/scan/10-repo.md  one prompt file per unit of work of task `scan`:
    PROMPTS/alpha/basic/scan/20-deps.md  the file's name without its suffix is the work key

The lane's folder is its name (`alpha/basic`); it has one folder per task of the lane
in the current commission, each with at least one `.md` or `.txt` prompt file, sent in
the order of their names. lane.toml:

    provider = "claude"            # claude (Claude Code) or codex (Codex); the task's account must match
    sign_in = "owner@example.com"  # your recorded sign-in, used where the CLI reports none for its session
    bound = 150000                 # tokens one call may use: at most the task's callBound
    timeout_minutes = 30           # a call still running then is stopped and reported lost
    args = ["--model", "sonnet"]   # optional: more arguments for every call
    executable = "claude"          # optional: the CLI (default: the provider's name, found on PATH)
    workdir = "~/src/alpha"        # optional: where the CLI runs (default: the lane's folder)
    transcripts = "~/factory/calls"  # optional: keep each call's raw output here, one file per call
    env = ["ANTHROPIC_BASE_URL"]   # optional: more environment variables the CLI needs, by name (never FACTORY_*)
    [tasks.scan]                   # optional, per task: bound, timeout_minutes, args
    bound = 100000

Everything is checked before the first call, each problem as one line naming its file
and field, so a mistake costs a clear error and never a paid call.
"""

from __future__ import annotations

import os
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from factory_schedule.core import refusal_in_words
from factory_schedule.core.health.bindings import BindingRead, snapshot_of
from factory_schedule.tui.host.files import read_regular, read_regular_text
from factory_schedule.tui.host.provider_environment import refused_name
from factory_schedule.tui.host.providers.calls import ACCOUNT_OF, ProviderName

LANE_FILE = "lane.toml"
PROMPT_SUFFIXES = (".md", ".txt")
MAX_PROMPT_BYTES = 1_000_000
MAX_SETTINGS_BYTES = 64 * 1024
MAX_WORK_KEY = 200

SIGN_IN_PATTERN = r"^\S(.*\S)?$"
FORMS = {SIGN_IN_PATTERN: "not a sign-in: text with no space at its start or end"}
Minutes = Annotated[float, Field(gt=0, le=24 * 60)]
Tokens = Annotated[int, Field(ge=1)]


class BindingError(Exception):
    """A lane's prompt folder cannot be used; the message is one line naming the file and the field."""


class TaskSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    bound: Tokens | None = None
    timeout_minutes: Minutes | None = None
    args: list[str] | None = None


class LaneSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    provider: Literal["claude", "codex"]
    sign_in: Annotated[str, Field(min_length=1, max_length=200, pattern=SIGN_IN_PATTERN)]
    bound: Tokens
    timeout_minutes: Minutes = 30
    args: list[str] = []
    executable: Annotated[str, Field(min_length=1)] | None = None
    workdir: Annotated[str, Field(min_length=1)] | None = None
    transcripts: Annotated[str, Field(min_length=1)] | None = None
    env: list[str] = []
    tasks: dict[str, TaskSettings] = {}


@dataclass(frozen=True)
class Unit:
    """One unit of work: its key (the prompt file's name without suffix) and its prompt."""

    work: str
    prompt: str
    path: Path


@dataclass(frozen=True)
class TaskBinding:
    task: str
    account: str
    bound: int
    timeout_seconds: float
    args: tuple[str, ...]
    units: tuple[Unit, ...]


@dataclass(frozen=True)
class LaneBinding:
    lane: str
    folder: Path
    provider: ProviderName
    executable: str
    sign_in: str
    workdir: Path
    executable_from_path: bool
    transcripts: Path | None
    tasks: tuple[TaskBinding, ...]
    env: tuple[str, ...] = ()  # the names the owner passes to the provider beyond the allow-list


def _one_line(path: Path, error: ValidationError) -> str:
    return f"{path}: {refusal_in_words(error, FORMS, limit=1)}"


def _read_settings(path: Path) -> LaneSettings:
    try:
        document = tomllib.loads(read_regular_text(path, MAX_SETTINGS_BYTES))
    except FileNotFoundError:
        raise BindingError(f"{path}: missing (each lane folder needs its lane.toml)") from None
    except OSError as error:
        raise BindingError(f"{path}: cannot be read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise BindingError(f"{path}: cannot be read: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise BindingError(f"{path}: not TOML: {error}") from None
    try:
        return LaneSettings.model_validate(document)
    except ValidationError as error:
        raise BindingError(_one_line(path, error)) from None


def _units(folder: Path) -> tuple[Unit, ...]:
    # Every prompt-named entry but a folder: one that is not a regular file (a FIFO, a link to a device) is
    # refused by name when read, never skipped as if it were not there.
    files = sorted(p for p in folder.iterdir()
                   if not p.is_dir() and p.suffix in PROMPT_SUFFIXES and not p.name.startswith("."))
    if not files:
        raise BindingError(f"{folder}: no prompt files (one .md or .txt file per unit of work)")
    units = []
    seen: dict[str, Path] = {}
    for path in files:
        work = path.stem
        if work != work.strip() or not work or len(work) > MAX_WORK_KEY:
            raise BindingError(f"{path}: its name is not a usable work key (1 to {MAX_WORK_KEY} characters, "
                               "no leading or trailing space)")
        if work in seen:
            raise BindingError(f"{path}: work key {work!r} is also {seen[work].name}")
        seen[work] = path
        try:
            raw = read_regular(path, MAX_PROMPT_BYTES)
        except OSError as error:
            raise BindingError(f"{path}: cannot be read: {error.strerror or error}") from None
        try:
            text = raw.decode("utf-8-sig").replace("\r\n", "\n")
        except UnicodeDecodeError:
            raise BindingError(f"{path}: not UTF-8 text") from None
        if not text.strip():
            raise BindingError(f"{path}: empty prompt")
        units.append(Unit(work=work, prompt=text, path=path))
    return tuple(units)


def _path(text: str, base: Path) -> Path:
    path = Path(os.path.expanduser(text))
    return path if path.is_absolute() else base / path


def lane_tasks(commission: dict[str, Any], lane: str) -> list[dict[str, Any]]:
    """The lane's tasks in the commission (`task`, `account`, `callBound`, ...); BindingError when no such lane."""
    for entry in commission.get("lanes", []):
        if entry.get("lane") == lane:
            return list(entry.get("tasks", []))
    raise BindingError(f"{lane}: not a lane of the current commission")


def load_lane(prompts: Path, lane: str, tasks: list[dict[str, Any]], which: Any = shutil.which,
              stages: tuple[str, ...] | None = None) -> LaneBinding:
    """The lane's binding checked against its commission tasks; BindingError (one line) on the first problem.

    With `stages` (a staged lane's run), each task's folder holds one prompt per stage the run works,
    named after the stage (`select.md`, ...): a run sends only its claimed task's stage, so the files
    are not counted against maxCalls, and a missing or unknown stage is refused."""
    folder = prompts / lane
    if not folder.is_dir():
        raise BindingError(f"{folder}: no such folder (a lane's prompts live in PROMPTS/<product>/<rhythm>/)")
    settings = _read_settings(folder / LANE_FILE)
    lane_file = folder / LANE_FILE
    names = [str(task["task"]) for task in tasks]
    unknown = sorted(set(settings.tasks) - set(names))
    if unknown:
        raise BindingError(f"{lane_file}: tasks.{unknown[0]}: not a task of lane {lane} ({', '.join(names)})")
    strays = sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")
                    and p.name not in names)
    if strays:
        raise BindingError(f"{folder / strays[0]}: not a task of lane {lane} ({', '.join(names)})")
    for name in settings.env:
        problem = refused_name(name)
        if problem is not None:
            raise BindingError(f"{lane_file}: env: {problem}")
    executable = settings.executable or settings.provider
    resolved = which(os.path.expanduser(executable))
    if resolved is None:
        raise BindingError(f"{lane_file}: executable: {executable!r} is not an executable on PATH")
    bindings = []
    for task in tasks:
        name = str(task["task"])
        account = str(task["account"])
        if ACCOUNT_OF[settings.provider] != account:
            raise BindingError(f"{lane_file}: provider: {settings.provider} does not run task {name}, "
                               f"which the commission pays from the {account} account")
        override = settings.tasks.get(name, TaskSettings())
        bound = override.bound or settings.bound
        call_bound = int(task["callBound"])
        if bound > call_bound:
            where = f"tasks.{name}.bound" if override.bound else "bound"
            raise BindingError(f"{lane_file}: {where}: {bound} is above task {name}'s callBound {call_bound}")
        task_folder = folder / name
        if not task_folder.is_dir():
            raise BindingError(f"{task_folder}: missing (one folder per task of the lane, holding its prompts)")
        minutes = override.timeout_minutes or settings.timeout_minutes
        units = _units(task_folder)
        if stages is not None:
            _check_stages(task_folder, units, stages)
        max_calls = int(task.get("maxCalls", len(units)))
        if stages is None and len(units) > max_calls:
            raise BindingError(f"{task_folder}: {len(units)} prompt files, but task {name} may make {max_calls} "
                               "calls a night: the rest would never be sent")
        bindings.append(TaskBinding(
            task=name, account=account, bound=bound, timeout_seconds=minutes * 60,
            args=tuple(override.args if override.args is not None else settings.args), units=units,
        ))
    workdir = _path(settings.workdir, folder) if settings.workdir else folder
    if not workdir.is_dir():
        raise BindingError(f"{lane_file}: workdir: {workdir} is not a folder")
    return LaneBinding(
        lane=lane, folder=folder, provider=settings.provider, executable=str(resolved), sign_in=settings.sign_in,
        executable_from_path=not os.path.isabs(os.path.expanduser(executable)),
        workdir=workdir, transcripts=_path(settings.transcripts, folder) if settings.transcripts else None,
        tasks=tuple(bindings), env=tuple(settings.env),
    )


def _check_stages(folder: Path, units: tuple[Unit, ...], stages: tuple[str, ...]) -> None:
    named = {unit.work: unit for unit in units}
    unknown = sorted(set(named) - set(stages))
    if unknown:
        raise BindingError(f"{named[unknown[0]].path}: {unknown[0]!r} is not a stage this run works "
                           f"({', '.join(stages)})")
    missing = [stage for stage in stages if stage not in named]
    if missing:
        raise BindingError(f"{folder}: no prompt for stage {missing[0]!r} (one file per stage: "
                           f"{', '.join(f'{stage}.md' for stage in stages)})")


def read_binding(source: str, lane: str) -> BindingRead:
    """Read a lane's binding once (health's `judge_binding` takes two such readings): source, resolved path,
    and the snapshot of lane.toml and every prompt file."""
    try:
        folder = Path(os.path.expanduser(source)) / lane
        resolved = folder.resolve(strict=True)
        files = {LANE_FILE: read_regular(resolved / LANE_FILE, MAX_SETTINGS_BYTES)}
        for path in sorted(resolved.glob("*/*")):
            if not path.is_dir() and path.suffix in PROMPT_SUFFIXES and not path.name.startswith("."):
                files[path.relative_to(resolved).as_posix()] = read_regular(path, MAX_PROMPT_BYTES)
    except OSError as error:
        return BindingRead(lane, source, error=f"{error.filename or source}: {error.strerror}")
    return BindingRead(lane, source, str(resolved), snapshot_of(files))
