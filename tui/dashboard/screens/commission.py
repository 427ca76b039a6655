"""Record a commission revision: from a JSON file or from the proposed commission,
with the lanes previewed and the difference from the current revision shown first."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import Horizontal, VerticalScroll
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Static

from factory_schedule.core import (
    DEFAULT_ZONE,
    PORTFOLIO,
    ScheduleError,
    is_pipeline_rhythm,
    lanes_of,
    local_date_of,
    parse_commission,
    proposed_commission,
)
from factory_schedule.core.owner_commission import record_commission
from factory_schedule.core.pipeline import PipelineSettings
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.screens.base import THIS_WRITE, FormProblem, ScheduleForm, as_int, value_of
from factory_schedule.tui.dashboard.screens.confirm import Confirmation
from factory_schedule.tui.dashboard.words import tokens

if TYPE_CHECKING:
    from factory_schedule.core import LifecycleSchedule

DEFAULT_PRODUCTS = ("alpha",)
WEEKDAYS = {1: "Mon", 2: "Tue", 3: "Wed", 4: "Thu", 5: "Fri", 6: "Sat", 7: "Sun"}
TOP_FIELDS = ("zone", "effectiveFrom", "weeklyTokens", "recordMaxAgeDays")


def products_of(commission: dict | None) -> list[str]:
    if not commission:
        return list(DEFAULT_PRODUCTS)
    seen: list[str] = []
    for lane in commission.get("lanes", []):
        if lane["product"] != "portfolio" and lane["product"] not in seen:
            seen.append(lane["product"])
    return seen or list(DEFAULT_PRODUCTS)


def revised(current: dict | None, proposed: dict) -> dict:
    """The proposed commission as a revision of `current`: it starts from the current revision (every member,
    every lane as it is: its account, times and bounds are the owner's choices), takes the proposal's revision
    number and weekly ceiling, adds the proposed lanes of a Product the current revision does not have, and drops
    only the lanes of a Product the owner left out of the Products field. The portfolio's lanes (the weekly runs,
    the staged lanes' runs) are no Product's, so a revision keeps them, the staged runs moved after a new
    Product's basic lane when it reaches them. effectiveFrom stays the current one:
    moving it later would skip nights of the lanes already running."""
    if not current:
        return proposed
    products = {lane["product"] for lane in proposed["lanes"] if lane["product"] != PORTFOLIO}
    lanes = [lane for lane in current.get("lanes", []) if lane["product"] == PORTFOLIO or lane["product"] in products]
    have = {lane["lane"] for lane in lanes}
    lanes += [lane for lane in proposed["lanes"] if lane["product"] != PORTFOLIO and lane["lane"] not in have]
    return {**current, "revision": proposed["revision"], "weeklyTokens": proposed["weeklyTokens"],
            "lanes": _staged_runs_after_the_basics(lanes, proposed)}


def _staged_runs_after_the_basics(lanes: list[dict], proposed: dict) -> list[dict]:
    """The staged lanes' runs start after every basic lane (the rule `parse_commission` holds): when a new
    Product's basic lane reaches one of them, each run takes the proposal's time and close, which follow every
    basic lane of the new set, and keeps everything else the owner chose. Otherwise they stay where they are."""
    basics = [lane["time"] for lane in lanes if lane.get("rhythm") == "basic"]
    runs = [lane for lane in lanes if is_pipeline_rhythm(lane.get("rhythm"))]
    if not basics or all(run["time"] > max(basics) for run in runs):
        return lanes
    slots = {lane["lane"]: lane for lane in proposed["lanes"] if is_pipeline_rhythm(lane.get("rhythm"))}
    return [{**lane, "time": slots[lane["lane"]]["time"], "closes": slots[lane["lane"]]["closes"]}
            if lane["lane"] in slots and is_pipeline_rhythm(lane.get("rhythm")) else lane for lane in lanes]


def removed_lanes(old: dict | None, new: dict) -> list[str]:
    after = {lane["lane"] for lane in new.get("lanes", [])}
    return [lane["lane"] for lane in (old or {}).get("lanes", []) if lane["lane"] not in after]


def moved_lanes(old: dict | None, new: dict) -> list[str]:
    """Each lane whose night, start or close changes, in words."""
    before = {lane["lane"]: lane for lane in (old or {}).get("lanes", [])}
    moved = []
    for lane in new.get("lanes", []):
        was = before.get(lane["lane"])
        if was is not None and _slot(was) != _slot(lane):
            moved.append(f"{lane['lane']} moves from {_slot(was)} to {_slot(lane)}")
    return moved


def _slot(lane: dict) -> str:
    weekday = lane.get("weekday")
    day = "daily" if weekday is None else WEEKDAYS.get(weekday, str(weekday))
    return f"{day} {lane.get('time')}-{lane.get('closes')}"


def consequence(old: dict | None, new: dict) -> str | None:
    """What a revision that removes or moves a lane does to the schedule, or None when it does neither."""
    lines = [f"{lane} will no longer run" for lane in removed_lanes(old, new)] + moved_lanes(old, new)
    return "; ".join(lines) + "." if lines else None


def _said(value: Any) -> str:
    """A lane field as the owner reads it; tasks as task@account calls x bound."""
    if isinstance(value, list):
        return ", ".join(
            f"{t.get('task')}@{t.get('account')} {t.get('maxCalls')}x{tokens(t.get('callBound'))}"
            if isinstance(t, dict) else str(t)
            for t in value
        )
    return str(value)


def difference(old: dict | None, new: dict, held: HeldSettings | None = None) -> list[str]:
    """What the new revision changes, one line each, in the owner's words; with `held`, its settings are compared
    with the ones the staged lanes hold (the revision in force's were lost), which are what recording them changes,
    and with the revision in force's when they are the lanes' own (the commission's settings still change back)."""
    if not old:
        settings = ", with settings for the staged lanes" if new.get("pipeline") is not None else ""
        return [f"first commission: {len(new.get('lanes', []))} lanes{settings}"]
    lines = [
        f"{name}: {old.get(name)} → {new.get(name)}" for name in TOP_FIELDS if old.get(name) != new.get(name)
    ]
    if held is None:
        settings_lines = _settings_difference(_whole_settings(old.get("pipeline")),
                                              _whole_settings(new.get("pipeline")))
    elif new.get("pipeline") is None:
        settings_lines = ["- pipeline settings: refused while the staged lanes do not hold the revision in force's "
                          "(give this revision `pipeline`)"]
    elif held.document is None:
        settings_lines = ["+ pipeline settings for the staged lanes (they hold none: the revision in force's were "
                          "lost)"]
    else:
        asked = _whole_settings(new["pipeline"])
        settings_lines = [f"{line} (the staged lanes hold revision {held.revision}'s)"
                          for line in _settings_difference(held.document, asked)]
        if not settings_lines:  # the lanes' own settings put back: only the commission's change
            settings_lines = [
                f"{line} (revision {old.get('revision')}'s settings, which the staged lanes never received; they "
                f"hold revision {held.revision}'s, which this revision carries)"
                for line in _settings_difference(_whole_settings(old.get("pipeline")), asked)]
    before = {lane["lane"]: lane for lane in old.get("lanes", [])}
    after = {lane["lane"]: lane for lane in new.get("lanes", [])}
    lines += [f"+ lane {name}" for name in after if name not in before]
    lines += [f"- lane {name} (its open occurrence and watermark are kept)" for name in before if name not in after]
    for name in after:
        if name in before and before[name] != after[name]:
            old_lane, new_lane = before[name], after[name]
            changed = sorted(k for k in set(old_lane) | set(new_lane) if old_lane.get(k) != new_lane.get(k))
            parts = [f"{k} {_said(old_lane.get(k))} → {_said(new_lane.get(k))}" for k in changed]
            lines.append(f"~ lane {name}: " + ", ".join(parts))
    if not lines and old.get("revision") == new.get("revision"):
        return ["the revision in force, unchanged: recording it again records only its settings for the staged "
                "lanes, if they do not hold them", *settings_lines]
    return [*lines, *settings_lines] or ["no change but the revision number"]


@dataclass(frozen=True)
class HeldSettings:
    """The staged lanes' settings, as a whole document, and the revision they came with (None, None: they hold
    none)."""

    revision: int | None
    document: dict[str, Any] | None


def held_settings(reading: Reading | None) -> HeldSettings | None:
    """The settings the staged lanes hold when they are not the commission in force's (its settings' command was
    lost): what a revision's settings are then compared with. None when they hold the commission's, when the
    commission carries none, or when the lanes could not be read."""
    if reading is None or reading.pipeline_problem is not None:
        return None
    commission = reading.parsed_commission
    if commission is None or commission.pipeline is None:
        return None
    lanes = reading.pipeline
    if lanes is None:
        return HeldSettings(None, None)
    if commission.pipeline == lanes.settings:
        return None
    return HeldSettings(lanes.settings_revision, lanes.settings.model_dump(mode="json", by_alias=True))


def _whole_settings(document: Any) -> Any:
    """A revision's settings with every default written out, as the lanes' are (the document as it is when it does
    not parse: the confirm step shows it, the engine refuses it)."""
    try:
        return PipelineSettings.model_validate(document).model_dump(mode="json", by_alias=True)
    except ValidationError:
        return document


def _settings_difference(old: Any, new: Any) -> list[str]:
    """What the revision changes in the staged lanes' settings (`pipeline`), which the owner signs with it."""
    if old == new:
        return []
    if new is None:
        return ["- pipeline settings (the staged lanes keep the ones they hold)"]
    if not isinstance(old, dict) or not isinstance(new, dict):
        return ["+ pipeline settings for the staged lanes"]
    return [f"pipeline.{key}: {_said(old.get(key))} → {_said(new.get(key))}"
            for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]


def preview(old: dict | None, new: dict, held: HeldSettings | None = None) -> Group:
    table = Table(box=None, header_style="bold", pad_edge=False, show_edge=False)
    for header in ("lane", "day", "time", "closes", "deadline", "tasks"):
        table.add_column(header, no_wrap=True)
    for lane in lanes_of(new):
        tasks = ", ".join(f"{t.task}@{t.account} {t.max_calls}x{tokens(t.call_bound)}" for t in lane.tasks)
        table.add_row(
            lane.lane,
            "daily" if lane.weekday is None else WEEKDAYS[lane.weekday],
            lane.time,
            lane.closes,
            f"{lane.deadline_minutes} min",
            tasks,
        )
    head = Text()
    head.append(f"Revision {new.get('revision')}", style="bold")
    head.append(
        f" · {new.get('zone')} · from {new.get('effectiveFrom')} · ceiling {tokens(new.get('weeklyTokens'))} a week\n"
    )
    changes = Text("\n".join(difference(old, new, held)))
    return Group(head, Text("Difference from the current revision:", style="bold"), changes, Text(""), table)


class CommissionForm(ScheduleForm):
    TITLE_TEXT = "Record a commission revision (schedule.record_commission)"
    SUBMIT_LABEL = "Record this revision"

    def __init__(self, schedule: LifecycleSchedule, reading: Reading | None, host_zone: str | None = None) -> None:
        super().__init__()
        self.schedule = schedule
        self.reading = reading
        self.host_zone = host_zone  # a first commission's zone (the proposal's default without one)
        self.current: dict | None = None if reading is None else reading.commission
        self.candidate: dict | None = None
        self._built_from: tuple[str, str, str] | None = None

    @property
    def next_revision(self) -> int:
        return 1 if not self.current else int(self.current.get("revision", 0)) + 1

    def fields(self) -> Iterable[Widget]:
        yield Label("Products (comma-separated) and the weekly ceiling in tokens")
        with Horizontal(classes="form-row"):
            yield Input(", ".join(products_of(self.current)), id="products", compact=True)
            # The ceiling has no default: a first commission's is typed by the owner; a revision starts from its own.
            ceiling = "" if not self.current else str(self.current.get("weeklyTokens", ""))
            yield Input(ceiling, placeholder="weekly ceiling in tokens (no default)", id="weekly-tokens", compact=True)
            yield Button("Proposed", id="use-proposed", compact=True)
        yield Label("Or from a JSON file")
        with Horizontal(classes="form-row"):
            yield Input(placeholder="path/to/commission.json", id="path", compact=True)
            yield Button("Load", id="load-file", compact=True)
        with VerticalScroll(classes="preview", id="preview-scroll"):
            yield Static("", id="preview")

    def on_mount(self) -> None:
        super().on_mount()
        if value_of(self, "#weekly-tokens"):
            self.use_proposed()
        else:
            self.query_one("#preview", Static).update(Text(
                "Type the weekly ceiling in tokens (the most the week may spend; there is no default) and press "
                "Enter to preview the proposed commission.", style="dim"))
        self.query_one("#products", Input).focus()

    def _zone(self) -> str:
        """The revision's zone: the current one's; a first commission's is this machine's (the proposal's default
        where it has none), as `commission new` proposes."""
        if self.current:
            return str(self.current.get("zone"))
        return self.host_zone or DEFAULT_ZONE

    def _has_staged_lanes(self) -> bool:
        """Whether the revision schedules the staged lanes' runs (the current one does): the proposal then places
        them after every basic lane of the new Products, where a revision moves them when it must."""
        return any(is_pipeline_rhythm(lane.get("rhythm")) for lane in (self.current or {}).get("lanes", []))

    def _effective_from(self) -> str:
        now = self.reading.now if self.reading is not None else None
        if now is None:
            raise FormProblem("no clock reading yet")
        return local_date_of(self._zone(), now).to_date_string()

    def use_proposed(self) -> None:
        try:
            products = [p.strip() for p in value_of(self, "#products").split(",") if p.strip()]
            text = value_of(self, "#weekly-tokens").replace(" ", "").replace("_", "")
            if not text.isdigit():
                raise FormProblem("weekly ceiling: a whole number of tokens is needed")
            candidate = revised(self.current, proposed_commission(
                products=products,
                effective_from=self._effective_from(),
                weekly_tokens=as_int(text),
                revision=self.next_revision,
                zone=self._zone(),
                pipeline=self._has_staged_lanes(),
            ))
            parse_commission(candidate)
        except (ScheduleError, FormProblem) as error:
            self._refuse(error)
            return
        self._propose(candidate)

    def load_file(self) -> None:
        path = value_of(self, "#path")
        try:
            if not path:
                raise FormProblem("file: name a JSON file")
            try:
                document = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
            except OSError as error:
                raise FormProblem(f"file: cannot read {path}: {error.strerror}") from None
            except ValueError as error:
                raise FormProblem(f"file: {path} is not JSON: {error}") from None
            if not isinstance(document, dict):
                raise FormProblem("file: a commission is a JSON object")
            parse_commission(document)
        except (ScheduleError, FormProblem) as error:
            self._refuse(error)
            return
        self._propose(document)

    def _refuse(self, error: Exception) -> None:
        self.candidate = None
        self.query_one("#preview", Static).update(Text("Nothing to record.", style="dim"))
        self.show_error(f"{error.code}: {error.message}" if isinstance(error, ScheduleError) else str(error))

    def _inputs(self) -> tuple[str, str, str]:
        return (value_of(self, "#products"), value_of(self, "#weekly-tokens"), value_of(self, "#path"))

    def _propose(self, candidate: dict) -> None:
        self.candidate = candidate
        self._built_from = self._inputs()
        self.query_one("#preview", Static).update(preview(self.current, candidate, held_settings(self.reading)))
        self.show_error("")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "use-proposed":
            event.stop()
            self.use_proposed()
        elif event.button.id == "load-file":
            event.stop()
            self.load_file()
        else:
            super().on_button_pressed(event)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        event.prevent_default()  # the base form's handler would submit too, saying "nothing previewed" over the reason
        if event.input.id == "path":
            self.load_file()
        elif event.input.id in ("products", "weekly-tokens"):
            self.use_proposed()
        else:
            self.submit()

    def on_input_changed(self, event: Input.Changed) -> None:
        """The preview is what gets recorded: editing a field withdraws it until it is rebuilt."""
        if self.candidate is not None and self._built_from != self._inputs():
            self.show_error("Press Enter (or Proposed / Load) to preview the change before recording it.")

    def refresh_from(self, reading: Reading) -> str | None:
        """Another revision landed: the form starts from it (the next revision number, its lanes) and the preview
        is rebuilt, so what is recorded is a revision of the commission in force."""
        self.reading = reading
        if reading.commission == self.current:
            return None
        written = self.written_here(lambda tried: self._in_force(reading, tried))
        if written == THIS_WRITE:
            # Its write failed after the revision landed (its settings for the staged lanes, or the answer, were lost):
            # the form keeps what it showed, so trying again replays the revision and records what did not land,
            # instead of proposing the revision after it.
            return self.own_write_landed(f"Commission revision {self.tried.get('revision')}",
                                         "Enter tries again, which replays it and records what did not land.")
        self.current = reading.commission
        revision = None if self.current is None else self.current.get("revision")
        if self.candidate is not None and value_of(self, "#weekly-tokens") and not value_of(self, "#path"):
            self.use_proposed()
        else:
            self.candidate = None
            self.query_one("#preview", Static).update(Text("Press Enter to preview again.", style="dim"))
        return (f"{self.writer(written)} recorded commission revision {revision} while this form was open: the "
                f"preview now starts from it (revision {self.next_revision}).")

    @staticmethod
    def _in_force(reading: Reading, written: dict) -> bool:
        """Whether the commission in force is the very revision this form tried to record."""
        try:
            return reading.parsed_commission is not None and reading.parsed_commission == parse_commission(written)
        except ScheduleError:
            return False

    def confirmation(self) -> Confirmation:
        candidate = self.candidate
        if candidate is None:
            raise FormProblem("nothing previewed: use Proposed or Load first")
        if self._built_from != self._inputs():
            raise FormProblem("the fields changed since the preview: press Enter (or Proposed / Load) to preview again")
        lanes = candidate.get("lanes", [])
        then = consequence(self.current, candidate)
        return Confirmation(
            title=f"Record commission revision {candidate.get('revision')}",
            values=(("revision", str(candidate.get("revision"))), ("zone", str(candidate.get("zone"))),
                    ("effective from", str(candidate.get("effectiveFrom"))),
                    ("weekly ceiling", f"{tokens(candidate.get('weeklyTokens'))} tokens"),
                    ("record max age", f"{candidate.get('recordMaxAgeDays')} days"),
                    ("lanes", f"{len(lanes)}: " + ", ".join(str(lane.get("lane")) for lane in lanes))),
            changes=tuple(difference(self.current, candidate, held_settings(self.reading))),
            consequence=then,
            confirm_label="Record this revision" if then is None else "Record: change the schedule",
        )

    def perform(self) -> Callable[[], str]:
        if self.candidate is None:
            raise FormProblem("nothing previewed: use Proposed or Load first")
        candidate, signer = self.candidate, self.signer
        self.trying(candidate)

        def write() -> str:
            recorded = record_commission(self.schedule, candidate, signer=signer)
            adopted = "" if recorded.settings_revision is None else (
                f"; the staged lanes hold revision {recorded.settings_revision}'s settings")
            return (f"Recorded commission revision {candidate.get('revision')} "
                    f"(schedule v{recorded.commission.version}){adopted}.")
        return write
