"""Health: the supervisor's checks (stale runner leases, missed lanes, account stops, the ceiling).

The checks themselves live in `tui.host.health`, which `reading.read_health` runs for a complete
reading; this view only lists the findings. When the check fails the view says why and the rest of
the dashboard works.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from factory_schedule.core.health import Finding, HealthReport
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.safety import printable
from factory_schedule.tui.dashboard.widgets import unchanged
from factory_schedule.tui.dashboard.widgets.tables import current_row_key, ensure_columns, sync_rows

COLUMNS = (("severity", "severity"), ("check", "check"), ("subject", "subject"), ("detail", "finding"))


# the evidence that names what a finding is about
SUBJECT_KEYS = ("occurrence", "scope", "lane", "account", "week", "candidate")


def findings_of(report: HealthReport | None) -> tuple[Finding, ...]:
    return () if report is None else report.findings


def finding_rows(report: HealthReport | None) -> dict[str, tuple[str, ...]]:
    rows: dict[str, tuple[str, ...]] = {}
    for index, finding in enumerate(findings_of(report)):
        evidence = finding.evidence
        subject = next((str(evidence[k]) for k in SUBJECT_KEYS if evidence.get(k)), "")
        key = f"{index}:{finding.kind}:{subject}"
        rows[key] = (finding.severity, finding.kind, subject, finding.message)
    return rows


def finding_detail(finding: Finding) -> Text:
    text = Text()
    text.append(printable(finding.message), style="bold")
    evidence = finding.evidence
    for key in sorted(evidence):
        value = evidence[key]
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items())
        text.append(f"\n  {printable(key)}: {printable(value)}")
    return text


def dead_runner_evidence(report: HealthReport | None, occurrence_id: str) -> str | None:
    """The evidence text the health check wrote for a reconcile of this occurrence's dead runner."""
    for finding in findings_of(report):
        confirmation = finding.evidence.get("confirmation")
        if finding.evidence.get("occurrence") == occurrence_id and isinstance(confirmation, dict):
            evidence = confirmation.get("evidence")
            return None if evidence is None else str(evidence)
    return None


class HealthView(Vertical):
    # Named in the caption while there is something to repair ("x makes the repairs ..."), not in the
    # footer, whose keys would run past 120 columns.
    BINDINGS: ClassVar = [Binding("x", "make_health_repairs", "Repair", show=False)]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.report: HealthReport | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="health-caption", classes="view-caption")
        yield DataTable(id="health-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="health-detail-scroll"):
            yield Static("", id="health-detail")

    def repairable(self) -> bool:
        """Is there a stale lease whose segment has ended (what `health --repair` would remove)?"""
        return any(getattr(finding, "repairable", False) for finding in findings_of(self.report))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """x works only while there is something to repair (the caption says so then)."""
        return self.repairable() if action == "make_health_repairs" else True

    def action_make_health_repairs(self) -> None:
        self.app.action_make_health_repairs()  # type: ignore[attr-defined]

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#health-detail", Static)
        findings = findings_of(self.report)
        key = current_row_key(self.query_one(DataTable))
        if key is None or not findings:
            unchanged.update(detail, "")
            return
        index = int(key.split(":", 1)[0])
        unchanged.update(detail, finding_detail(findings[index]) if index < len(findings) else "")

    def on_mount(self) -> None:
        ensure_columns(self.query_one(DataTable), COLUMNS)

    def show(self, reading: Reading) -> None:
        caption = self.query_one("#health-caption", Static)
        could_repair = self.repairable()
        self.report = reading.health
        if self.repairable() != could_repair:
            self.refresh_bindings()  # x's place in the keys panel follows check_action; the footer recomposes
        rows = finding_rows(reading.health)
        sync_rows(self.query_one(DataTable), rows)
        self._show_detail()
        if reading.health is None:
            if reading.health_problem:
                unchanged.update(caption, Text(f"The health check failed: {printable(reading.health_problem)}",
                                               style="bold"))
            else:
                unchanged.update(caption, "The health check is not available in this build (factory-schedule health).")
            return
        could_not = list(reading.health.could_not_check)
        if could_not:
            unchanged.update(caption, Text("Could not check: " + printable("; ".join(could_not)), style="bold"))
            return
        if not rows:
            unchanged.update(caption,
                             "Healthy: no finding. Checked: chain, state, runner leases, lanes, accounts, ceiling.")
        else:
            repairable = self.repairable()
            unchanged.update(
                caption,
                f"{len(rows)} finding{'s' if len(rows) != 1 else ''}. The next tick reconciles a runner proven "
                "dead on this host; for any other, select its occurrence and press r to confirm it."
                + (" x makes the repairs of health --repair." if repairable else "")
            )
