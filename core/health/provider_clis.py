"""What a lane's latest night says about its provider CLI, for health: signed out, unreachable, or stopped.

A runner ends a segment in words the schedule keeps: it defers `logged-out` when the CLI says it is signed out,
and settles with a reason starting `PROVIDER_UNREACHABLE` when the provider could not be reached,
`PROVIDER_STOPPED_ACCOUNT` when the provider's own message stopped the account (a limit without a reset
it names, a spend cap, a plan that does not include the CLI), or `sign_in_mismatch_reason` when the sign-in
the runner observes is not the one the account's record names (checked before any call is asked for). Each
holds that lane's nights until the owner acts, and each would repeat silently every night, so each is a
finding on the lane's latest occurrence: the owner is told once per night it costs (the occurrence is in the
evidence), with the command or place that frees it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from factory_schedule.core.results import ScheduleView
from factory_schedule.core.schedule_document import Occurrence, at
from factory_schedule.core.zones import local_words

from .report import Finding

PROVIDER_UNREACHABLE = "provider unreachable"
PROVIDER_STOPPED_ACCOUNT = "the provider stopped the account"
# How the owner signs each account's CLI in again on the machine that runs the lanes.
SIGN_IN_COMMANDS: Mapping[str, str] = {"claude": "claude auth login", "chatgpt": "codex login"}
# How long a provider's stop of an account without a reset holds that account's other lanes: the rest of the
# night (a night's window is at most a few hours), so the next night tries one call again.
STOP_HOLDS_FOR = timedelta(hours=12)
RUNNER_FINDING_KINDS = ("lane-logged-out", "provider-unreachable", "provider-stopped-account", "sign-in-mismatch")
SIGN_IN_MISMATCH = "sign-in mismatch"
_MISMATCH = re.compile(r"^sign-in mismatch: the CLI is signed in as (?P<observed>\S+) \((?P<source>[^)]*)\), "
                       r"the (?P<account>\S+) record names (?P<recorded>\S+)$")


def sign_in_mismatch_reason(observed: str, source: str, account: str, recorded: str) -> str:
    """The settlement reason of a segment whose runner observes another sign-in than the account's record."""
    return f"{SIGN_IN_MISMATCH}: the CLI is signed in as {observed} ({source}), the {account} record names {recorded}"


def _accounts_of(commission: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each lane's accounts, in the order its tasks name them."""
    accounts: dict[str, list[str]] = {}
    for lane in commission.get("lanes", []):
        names: list[str] = []
        for task in lane.get("tasks", []):
            account = str(task.get("account"))
            if account not in names:
                names.append(account)
        accounts[str(lane.get("lane"))] = names
    return accounts


def _latest(view: ScheduleView) -> list[Occurrence]:
    """Each lane's latest occurrence (by its slot)."""
    latest: dict[str, Occurrence] = {}
    for occurrence in view.occurrences:
        held = latest.get(occurrence.lane)
        if held is None or occurrence.slot > held.slot:
            latest[occurrence.lane] = occurrence
    return [latest[lane] for lane in sorted(latest)]


def provider_cli_findings(view: ScheduleView) -> list[Finding]:
    findings = []
    accounts = _accounts_of(view.commission)
    for occurrence in _latest(view):
        names = accounts.get(occurrence.lane, [])
        evidence: dict[str, Any] = {"lane": occurrence.lane, "occurrence": occurrence.id,
                                    "accounts": names}
        if occurrence.state == "deferred" and occurrence.deferrals and \
                occurrence.deferrals[-1].reason == "logged-out":
            commands = " or ".join(f"`{SIGN_IN_COMMANDS[name]}`" for name in names if name in SIGN_IN_COMMANDS)
            findings.append(Finding(
                "lane-logged-out", "error",
                f"{occurrence.id} waits: the lane's CLI is signed out on the machine that ran it, so nothing was "
                f"sent; sign it in ({commands or 'the CLI login'}) and the lane resumes at its next slot"
                + (f", {local_words(view.commission['zone'], occurrence.deferrals[-1].resume_at)}"
                   if occurrence.deferrals[-1].resume_at else ""),
                evidence))
        settlement = occurrence.settlement
        if occurrence.state != "settled" or settlement is None:
            continue
        if settlement.reason.startswith(PROVIDER_UNREACHABLE):
            findings.append(Finding(
                "provider-unreachable", "error",
                f"{occurrence.id} settled {settlement.status}: its provider could not be reached after one call "
                f"({settlement.reason}); check the network and proxy of the machine that ran it, and its unsent "
                "work goes out at the lane's next slot", {**evidence, "reason": settlement.reason}))
        elif (found := _MISMATCH.match(settlement.reason)) is not None:
            findings.append(_mismatch_finding(view, occurrence, found, evidence))
        elif settlement.reason.startswith(PROVIDER_STOPPED_ACCOUNT):
            findings.append(Finding(
                "provider-stopped-account", "error",
                f"{occurrence.id} settled {settlement.status}: {settlement.reason}; check the account's plan, spend "
                "cap or credits with the provider (the account's lanes send nothing for 12 hours, or until you "
                "record the account again)",
                {**evidence, "reason": settlement.reason}))
    return findings


def _mismatch_finding(view: ScheduleView, occurrence: Occurrence, found: re.Match[str],
                      evidence: dict[str, Any]) -> Finding:
    observed, account, recorded = found.group("observed"), found.group("account"), found.group("recorded")
    state = next((a for a in view.accounts if a.account == account), None)
    sequence = state.record.sequence + 1 if state is not None and state.record is not None else 1
    fix = (f"factory-schedule record-account --account {account} --sequence {sequence} --sign-in {observed} "
           "--overage off --recorded-by owner")
    sign_in = SIGN_IN_COMMANDS.get(account, "the CLI's login")
    return Finding(
        "sign-in-mismatch", "error",
        f"{occurrence.id} sent nothing: the runner observes sign-in {observed} ({found.group('source')}), but the "
        f"{account} record names {recorded}; record the sign-in the machine uses (`{fix}`), or sign the CLI in as "
        f"{recorded} (`{sign_in}`)",
        {**evidence, "observed": observed, "recorded": recorded, "account": account, "fix": fix})


def stopped_by_provider(view: ScheduleView, accounts: set[str], now: datetime) -> str | None:
    """Fail closed: when the provider's own message stopped one of `accounts` on another lane within
    `STOP_HOLDS_FOR` and the owner has not recorded that account since, the reason this segment sends nothing
    (each call would meet the same stop and be lost at its bound); None otherwise."""
    lanes = _accounts_of(view.commission)
    records = {state.account: state.record for state in view.accounts}
    for occurrence in view.occurrences:
        settlement = occurrence.settlement
        if settlement is None or not settlement.reason.startswith(PROVIDER_STOPPED_ACCOUNT):
            continue
        stopped_at = at(settlement.at)
        if not stopped_at <= now < stopped_at + STOP_HOLDS_FOR:
            continue
        for account in accounts & set(lanes.get(occurrence.lane, [])):
            record = records.get(account)  # type: ignore[call-overload]
            if record is None or at(record.recorded_at) < stopped_at:
                return (f"held: the provider stopped the {account} account on {occurrence.id} "
                        f"({settlement.reason[len(PROVIDER_STOPPED_ACCOUNT):].lstrip(', ')})")[:200]
    return None
