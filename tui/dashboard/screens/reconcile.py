"""Confirm an interrupted runner: the supervisor's reconcile, with the runner and lease evidence prefilled."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Input, Label, Static

from factory_schedule.core import Occurrence
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.screens.base import THIS_WRITE, NotBlank, ScheduleForm, value_of
from factory_schedule.tui.dashboard.screens.confirm import Confirmation
from factory_schedule.tui.dashboard.widgets.freshness import freshness_words, lease_evidence
from factory_schedule.tui.dashboard.widgets.health import dead_runner_evidence
from factory_schedule.tui.dashboard.words import running_words

if TYPE_CHECKING:
    from factory_schedule.core import LifecycleSchedule


def running_occurrences(reading: Reading | None) -> list[Occurrence]:
    if reading is None or reading.view is None:
        return []
    return [s.open for s in reading.view.lanes if s.open is not None and s.open.state == "running"]


def reconciliations_of(reading: Reading, occurrence_id: str) -> list[tuple[str, str, str]]:
    """(runner, confirmed by, evidence) of each reconciliation the occurrence holds, while its lane holds it open."""
    if reading.view is None:
        return []
    found = next((s.open for s in reading.view.lanes if s.open is not None and s.open.id == occurrence_id), None)
    return [] if found is None else [(r.runner, r.confirmed_by, r.evidence) for r in found.reconciliations]


class ReconcileForm(ScheduleForm):
    OWNER_RECORD = False  # a supervisor's confirmation of a dead runner: attribution, it only ends calls lost
    TITLE_TEXT = "Confirm an interrupted runner (schedule.reconcile)"
    SUBMIT_LABEL = "Confirm it is gone"

    def __init__(self, schedule: LifecycleSchedule, reading: Reading, occurrence_id: str,
                 make_health_repairs: Callable[[], list[str]] | None = None) -> None:
        super().__init__()
        self.make_health_repairs = make_health_repairs
        self.schedule = schedule
        self.reading = reading
        self.occurrence = next(o for o in running_occurrences(reading) if o.id == occurrence_id)
        self.runner: str = self.occurrence.segments[-1].runner

    def _runner_typed(self) -> str:
        typed = value_of(self, "#runner")
        return self.runner if typed == printable(self.runner).strip() else typed

    def header(self) -> Iterable[Widget]:
        yield Static(self._about(), id="reconcile-about")

    def _lost_call(self) -> str | None:
        in_flight = self.occurrence.call_in_flight
        if in_flight is None:
            return None
        return (f"Call {in_flight.k} ({in_flight.task}, {in_flight.work}) is in flight: it will end as lost, "
                "of unknown effect, and is never sent again.")

    def _about(self) -> Text:
        zone = self.reading.zone or "UTC"
        occurrence = self.occurrence
        about = Text()
        about.append(printable(occurrence.id), style="bold")
        about.append(f"\n{printable(running_words(occurrence, zone))}")
        freshness = freshness_words(self.reading, occurrence, zone)
        if freshness and freshness != "—":
            about.append(f"\n{printable(freshness)}")
        lost = self._lost_call()
        if lost is not None:
            about.append("\n" + printable(lost), style="bold")
        return about

    def fields(self) -> Iterable[Widget]:
        zone = self.reading.zone or "UTC"
        occurrence = self.occurrence
        yield Label("Evidence (why it is dead), in full; edit it in the field below")
        from_health = dead_runner_evidence(self.reading.health, occurrence.id)
        evidence = from_health or lease_evidence(self.reading, occurrence, zone) or ""
        # The field shows one line of it; the evidence in full, wrapped, scrolls in its own region.
        yield Static(Text(printable(evidence)), id="evidence-in-full", classes="evidence")
        yield Input(printable(evidence), id="evidence", validators=[NotBlank("evidence", longest=500)], compact=True)
        yield Label("Runner (the dead runner's token)")
        # Shown printable; an unchanged field still names the runner exactly as the journal holds it.
        yield Input(printable(self.runner), id="runner", validators=[NotBlank("runner")], compact=True)
        yield Label("Confirmed by")
        yield Input("supervisor", id="confirmed-by", validators=[NotBlank("confirmed by")], compact=True)

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#evidence", Input).cursor_position = 0  # the field opens on the evidence's start
        self.query_one("#evidence" if not value_of(self, "#evidence") else "#confirmed-by", Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "evidence":
            self.query_one("#evidence-in-full", Static).update(Text(printable(event.value)))
        super().on_input_changed(event)

    def refresh_from(self, reading: Reading) -> str | None:
        """The occurrence stopped running (another writer reconciled it, or its runner reported): nothing is left
        to confirm."""
        self.reading = reading
        if any(o.id == self.occurrence.id for o in running_occurrences(reading)) or self.nothing_left:
            return None
        kept = reconciliations_of(reading, self.occurrence.id)
        written = self.written_here(lambda tried: tried in kept)
        if written == THIS_WRITE:
            return self.own_write_landed(f"The confirmation that runner {self.tried[0]} is gone")
        self.nothing_left = f"{self.occurrence.id} is no longer running: there is no runner left to confirm."
        return f"{self.writer(written)} moved {self.occurrence.id} while this form was open: it is no longer running."

    def confirmation(self) -> Confirmation:
        changes = [f"{self.occurrence.id}: running → interrupted; its lane may run again"]
        lost = self._lost_call()
        if lost is not None:
            changes.append(lost)
        return Confirmation(
            title=f"Confirm that runner {self._runner_typed()} is gone",
            values=(("occurrence", self.occurrence.id), ("runner", self._runner_typed()),
                    ("confirmed by", value_of(self, "#confirmed-by")), ("evidence", value_of(self, "#evidence"))),
            changes=tuple(changes),
            confirm_label="Confirm it is gone",
        )

    def perform(self) -> Callable[[], str]:
        occurrence, repairs = self.occurrence.id, self.make_health_repairs
        confirmation = {
            "runner": self._runner_typed(),
            "confirmedBy": value_of(self, "#confirmed-by"),
            "evidence": value_of(self, "#evidence"),
        }
        self.trying((confirmation["runner"], confirmation["confirmedBy"], confirmation["evidence"]))

        def write() -> str:
            result = self.schedule.reconcile(occurrence_id=occurrence, confirmation=confirmation)
            verb = "Already reconciled" if result.replayed else "Reconciled"
            said = f"{verb} {occurrence} (schedule v{result.version})."
            if repairs is not None:
                # Its segment has ended: the dead runner's lease guards nothing now (health's repair removes it).
                try:
                    removed = repairs()
                except Exception as error:  # the reconcile stands; health keeps reporting the lease
                    return f"{said} Its lease could not be removed: {error}"
                if removed:
                    said += f" Removed {len(removed)} released lease{'s' if len(removed) != 1 else ''}."
            return said
        return write
