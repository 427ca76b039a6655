"""Accounts: claude and chatgpt, the current owner record, and each stop with what it blocks."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from factory_schedule.core import AccountState, parse_instant
from factory_schedule.tui.dashboard.reading import Reading
from factory_schedule.tui.dashboard.widgets import unchanged
from factory_schedule.tui.dashboard.widgets.tables import Cell, ensure_columns, sync_rows
from factory_schedule.tui.dashboard.words import age, when

ACCOUNT_COLUMNS = (
    ("account", "account"),
    ("sequence", "record"),
    ("sign_in", "sign-in"),
    ("overage", "overage"),
    ("by", "recorded by"),
    ("age", "age"),
    ("current", "current until"),
)
STOP_COLUMNS = (("account", "account"), ("stop", "stop"), ("when", "when"), ("blocks", "what it blocks"))


def lanes_on(reading: Reading, account: str) -> list[str]:
    assert reading.commission is not None  # the accounts are shown once a commission is recorded
    lanes = reading.commission.get("lanes", [])
    return [lane["lane"] for lane in lanes if any(task.get("account") == account for task in lane.get("tasks", []))]


def account_rows(reading: Reading) -> dict[str, tuple[Cell, ...]]:
    assert reading.view is not None and reading.commission is not None  # shown once a commission is recorded
    zone = reading.zone or "UTC"
    max_age = int(reading.commission.get("recordMaxAgeDays", 30))
    rows: dict[str, tuple[Cell, ...]] = {}
    for account in reading.view.accounts:
        record = account.record
        if record is None:
            rows[account.account] = (account.account, "none", "—", "—", "—", "—", "no record: calls are refused")
            continue
        stops_at = parse_instant(record.recorded_at).add(days=max_age)
        current = when(stops_at, reading.now, zone)
        if stops_at <= reading.now:
            current = f"stopped being current {current}"
        rows[account.account] = (
            account.account,
            f"#{record.sequence}",
            record.sign_in,
            "on" if record.overage else "off",
            record.recorded_by,
            age(record.recorded_at, reading.now),
            current,
        )
    return rows


def _since_record(account: AccountState, stamp: str | None) -> bool:
    """A refusal or overage counts against the account only if it came after the current record."""
    if stamp is None:
        return False
    return account.record is None or parse_instant(stamp) >= parse_instant(account.record.recorded_at)


def stop_rows(reading: Reading) -> dict[str, tuple[Cell, ...]]:
    assert reading.view is not None  # shown once a commission is recorded
    zone = reading.zone or "UTC"
    rows: dict[str, tuple[Cell, ...]] = {}
    for account in reading.view.accounts:
        lanes = lanes_on(reading, account.account)
        scope = f"calls on {account.account} ({len(lanes)} lanes)"
        if account.window_closed_until is not None:
            until = parse_instant(account.window_closed_until)
            if until > reading.now:
                rows[f"{account.account}/window"] = (
                    account.account, "usage window closed", f"until {when(until, reading.now, zone)}",
                    f"{scope} until the reset",
                )
        if _since_record(account, account.sign_in_refused_at):
            rows[f"{account.account}/sign-in"] = (
                account.account, "sign-in refused", f"at {when(account.sign_in_refused_at, reading.now, zone)}",
                f"{scope} until a newer sign-in record",
            )
        if _since_record(account, account.overage_observed_at):
            rows[f"{account.account}/overage"] = (
                account.account, "overage observed", f"at {when(account.overage_observed_at, reading.now, zone)}",
                f"{scope} while the record says overage is off",
            )
    return rows


class AccountsView(Vertical):
    def compose(self) -> ComposeResult:
        yield Static("Current records (s records the next one)", classes="view-caption")
        yield DataTable(id="accounts-table", cursor_type="row", zebra_stripes=True)
        yield Static("Stops", classes="view-caption")
        yield DataTable(id="stops-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="stops-none", classes="view-caption")

    def on_mount(self) -> None:
        ensure_columns(self.query_one("#accounts-table", DataTable), ACCOUNT_COLUMNS)
        ensure_columns(self.query_one("#stops-table", DataTable), STOP_COLUMNS)

    def show(self, reading: Reading) -> None:
        if reading.view is None:
            return
        sync_rows(self.query_one("#accounts-table", DataTable), account_rows(reading))
        stops = stop_rows(reading)
        sync_rows(self.query_one("#stops-table", DataTable), stops)
        unchanged.update(self.query_one("#stops-none", Static), "" if stops else "No stop on either account.")
