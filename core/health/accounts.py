"""The accounts: a closed usage window, a refused sign-in, paid overage, and owner records that are missing,
expired or stop being current within three days."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from factory_schedule.core.results import ScheduleView
from factory_schedule.core.schedule_document import AccountState, at

from .report import Finding

RECORD_EXPIRY_WARNING_DAYS = 3


def _instant(text: str | None) -> datetime | None:
    return at(text) if text else None


def _accounts_in_use(commission: Mapping[str, Any]) -> set[str]:
    return {task["account"] for lane in commission.get("lanes", []) for task in lane.get("tasks", [])
            if isinstance(task, dict) and task.get("account")}


def account_findings(view: ScheduleView, now: datetime) -> list[Finding]:
    max_age = int(view.commission.get("recordMaxAgeDays", 30))
    used = _accounts_in_use(view.commission)
    findings = []
    for account in view.accounts:
        findings.extend(_account_findings(account, account.account in used, max_age, now))
    return findings


def _account_findings(account: AccountState, used: bool, max_age: int, now: datetime) -> list[Finding]:
    name, record = account.account, account.record
    recorded_at = _instant(record.recorded_at) if record is not None else None
    window = _instant(account.window_closed_until)
    refused = _instant(account.sign_in_refused_at)
    overage = _instant(account.overage_observed_at)
    evidence: dict[str, Any] = {"account": name, "record_recorded_at": recorded_at.isoformat() if recorded_at else None}
    findings = []
    if window is not None and now < window:
        findings.append(Finding("account-window-closed", "warning",
                                f"{name}'s usage window is closed until {window.isoformat()}",
                                {**evidence, "until": window.isoformat()}))
    if refused is not None and (recorded_at is None or recorded_at <= refused):
        findings.append(Finding("account-sign-in-needed", "error",
                                f"{name} refused sign-in at {refused.isoformat()}: sign in again, then record "
                                "the account (`factory-schedule record-account`)",
                                {**evidence, "refused_at": refused.isoformat()}))
    if overage is not None and (recorded_at is None or recorded_at <= overage):
        findings.append(Finding("account-overage", "error",
                                f"paid overage was observed on {name} at {overage.isoformat()}: turn it off, "
                                "then record the account", {**evidence, "observed_at": overage.isoformat()}))
    if not used:
        return findings
    if record is None or recorded_at is None:
        findings.append(Finding("account-no-record", "error",
                                f"{name} is used by the commission but has no owner record: nothing is "
                                "admitted on it", evidence))
        return findings
    expires = recorded_at + timedelta(days=max_age)
    if now > expires:
        findings.append(Finding("account-record-expired", "error",
                                f"{name}'s owner record expired at {expires.isoformat()}: record it again",
                                {**evidence, "expires": expires.isoformat()}))
    elif now + timedelta(days=RECORD_EXPIRY_WARNING_DAYS) > expires:
        findings.append(Finding("account-record-expiring", "warning",
                                f"{name}'s owner record stops being current at {expires.isoformat()}",
                                {**evidence, "expires": expires.isoformat()}))
    if record.overage:
        findings.append(Finding("account-overage-on", "error",
                                f"{name}'s record has paid overage on: no call is admitted on it", evidence))
    return findings


