"""Health: the supervisor's checks (stale runner leases, missed lanes, account stops, the ceiling).

The checks themselves live in `tui.health` (another module); this view only lists
the findings. Without that module the view says so and the rest of the dashboard works.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from ..screens.reading import Reading
from .tables import ensure_columns, sync_rows

COLUMNS = (("severity", "severity"), ("check", "check"), ("subject", "subject"), ("detail", "finding"))


def _field(finding: Any, *names: str, default: str = "") -> str:
    for name in names:
        value = finding.get(name) if isinstance(finding, dict) else getattr(finding, name, None)
        if value is not None:
            return str(value)
    return default


def _field_raw(finding: Any, name: str) -> Any:
    return finding.get(name) if isinstance(finding, dict) else getattr(finding, name, None)


def findings_of(report: Any) -> list[Any]:
    if report is None:
        return []
    found = report.get("findings") if isinstance(report, dict) else getattr(report, "findings", None)
    return list(found or [])


def finding_rows(report: Any) -> dict[str, tuple[Any, ...]]:
    rows: dict[str, tuple[Any, ...]] = {}
    for index, finding in enumerate(findings_of(report)):
        check = _field(finding, "kind", "check", "code")
        evidence = _field_raw(finding, "evidence") or {}
        subject = _field(finding, "subject") or next(
            (str(evidence[k]) for k in ("occurrence", "scope", "lane", "account", "week") if evidence.get(k)), ""
        )
        key = f"{index}:{check}:{subject}"
        rows[key] = (
            _field(finding, "severity", "level", default="finding"),
            check,
            subject,
            _field(finding, "message", "detail", "summary"),
        )
    return rows


class HealthView(Vertical):
    def compose(self) -> ComposeResult:
        yield Static("", id="health-caption", classes="view-caption")
        yield DataTable(id="health-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        ensure_columns(self.query_one(DataTable), COLUMNS)

    def show(self, reading: Reading) -> None:
        caption = self.query_one("#health-caption", Static)
        rows = finding_rows(reading.health)
        sync_rows(self.query_one(DataTable), rows)
        if reading.health is None:
            if reading.health_problem:
                caption.update(Text(f"The health check failed: {reading.health_problem}", style="bold"))
            else:
                caption.update("The health check is not available in this build (factory-schedule health).")
            return
        if not rows:
            caption.update("Healthy: no finding. Checked: chain, state, runner leases, lanes, accounts, ceiling.")
        else:
            caption.update(
                f"{len(rows)} finding{'s' if len(rows) != 1 else ''}. A stale runner is never reconciled "
                "automatically: select its occurrence and press r to confirm it with the lease's evidence."
            )
