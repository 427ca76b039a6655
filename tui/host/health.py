"""The supervisor's health check: read everything, repair only reversible drift, decide nothing.

`check_health` is what `factory-schedule health` prints and what the dashboard's
Health view draws: the journal's hash chain and a parse of the schedule; segment
leases stale past 2 x TTL whose runner process is gone from this host (each with
the evidence a `reconcile` confirmation needs, never reconciled here); lanes past
their slot plus a grace period with nothing admitted; account stops; an owner
record that stops being current within three days; a week above 90 % of its
ceiling; an installed LaunchAgent whose intervals differ from the commission's.

`repair_stale_leases` removes only leases that are stale and whose segment the
schedule no longer shows running (or a stale worker lease whose tick is gone): a
lease is a claim, not a decision, so removing one changes no schedule, commission
or occurrence. A stale lease over a segment still running is left for a person.
"""

from __future__ import annotations

import math
import os
import plistlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import pendulum

from factory_schedule.store import Checkpoint, Journal, leases
from factory_schedule.tui.host.segments import (
    field_of,
    parse_segment_scope,
    process_alive,
    running_segment,
    segment_still_running,
)

Severity = Literal["error", "warning", "info"]

DEFAULT_GRACE_MINUTES = 30
RECORD_EXPIRY_WARNING_DAYS = 3
CEILING_WARNING_FRACTION = 0.9
HEALTHY, FINDINGS, COULD_NOT_CHECK = 0, 1, 2


@dataclass(frozen=True)
class Finding:
    kind: str
    severity: Severity
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)
    repairable: bool = False


@dataclass(frozen=True)
class Repair:
    kind: str
    scope: str
    message: str
    lease: dict[str, Any]


@dataclass(frozen=True)
class HealthReport:
    checked_at: datetime
    host: str
    findings: tuple[Finding, ...]
    repairs: tuple[Repair, ...] = ()
    could_not_check: tuple[str, ...] = ()
    verified: Checkpoint | None = None  # how far the hash chain was checked; pass it back as `since`

    @property
    def healthy(self) -> bool:
        return not self.could_not_check and not [f for f in self.findings if f.severity != "info"]

    @property
    def exit_code(self) -> int:
        if self.could_not_check:
            return COULD_NOT_CHECK
        return HEALTHY if self.healthy else FINDINGS


def _lease_evidence(lease: leases.Lease, now: datetime) -> dict[str, Any]:
    info = lease.info
    return {
        "scope": lease.scope,
        "runner": info.get("runner", lease.owner),
        "owner": lease.owner,
        "pid": info.get("pid"),
        "tick_pid": info.get("tick_pid"),
        "host": info.get("host"),
        "occurrence": info.get("occurrence"),
        "segment": info.get("segment"),
        "command": info.get("command"),
        "started": info.get("started"),
        "last_heartbeat": lease.heartbeat_at.isoformat(),
        "stale_since": lease.stale_at.isoformat(),
        "ttl_seconds": lease.ttl_seconds,
        "seconds_since_heartbeat": round(lease.age_seconds(now), 1),
    }


@dataclass(frozen=True)
class LeaseFreshness:
    """What the dashboard shows beside a running occurrence: is its runner's lease alive, or stale since when."""

    occurrence: str
    segment: int
    scope: str
    runner: str
    pid: int | None
    host: str | None
    last_heartbeat: datetime
    stale: bool
    stale_since: datetime
    process_alive: bool | None  # None when the lease was taken on another host

    @property
    def words(self) -> str:
        if not self.stale:
            return "alive"
        return f"stale since {self.stale_since.isoformat()}"


def lease_freshness(
    journal: Journal, now: datetime, host: str, alive: Callable[[object], bool] = process_alive
) -> dict[str, LeaseFreshness]:
    """Each segment lease by occurrence ID (the latest segment wins), for the running-occurrence view."""
    found: dict[str, LeaseFreshness] = {}
    for lease in leases.list_leases(journal):
        parsed = parse_segment_scope(lease.scope)
        if parsed is None:
            continue
        occurrence_id, segment = parsed
        if occurrence_id in found and found[occurrence_id].segment > segment:
            continue
        pid = lease.info.get("pid")
        lease_host = lease.info.get("host")
        found[occurrence_id] = LeaseFreshness(
            occurrence=occurrence_id,
            segment=segment,
            scope=lease.scope,
            runner=lease.owner,
            pid=pid if isinstance(pid, int) else None,
            host=lease_host,
            last_heartbeat=lease.heartbeat_at,
            stale=leases.stale(lease, now),
            stale_since=lease.stale_at,
            process_alive=alive(pid) if lease_host == host else None,
        )
    return found


def reconcile_confirmation(evidence: dict[str, Any], confirmed_by: str) -> dict[str, Any]:
    """The confirmation a supervisor would send for a dead runner, prefilled from the lease's evidence."""
    text = (
        f"runner process {evidence.get('pid')} on {evidence.get('host')} is gone; its lease on "
        f"{evidence.get('scope')} had no heartbeat since {evidence.get('last_heartbeat')} "
        f"(stale since {evidence.get('stale_since')})"
    )
    return {"runner": str(evidence.get("runner")), "confirmedBy": confirmed_by, "evidence": text[:500]}


def _check_leases(
    journal: Journal, view: Any, now: datetime, host: str, alive: Callable[[object], bool]
) -> list[Finding]:
    findings: list[Finding] = []
    held_segments: set[tuple[str, int]] = set()
    for lease in leases.list_leases(journal):
        evidence = _lease_evidence(lease, now)
        parsed = parse_segment_scope(lease.scope)
        if parsed is not None:
            held_segments.add(parsed)
        if not leases.stale(lease, now):
            continue
        same_host = evidence["host"] == host
        process_gone = same_host and not alive(evidence["pid"])
        if parsed is None:
            findings.append(
                Finding(
                    "stale-worker-lease" if lease.scope == leases.WORKER_SCOPE else "stale-lease",
                    "warning",
                    f"{lease.scope} held by {lease.owner} has had no heartbeat since {evidence['last_heartbeat']}"
                    + ("; its process is gone" if process_gone else ""),
                    evidence,
                    repairable=process_gone,
                )
            )
            continue
        occurrence_id, segment = parsed
        if view is not None and not segment_still_running(view, occurrence_id, segment, lease.owner):
            findings.append(
                Finding(
                    "stale-lease-segment-ended",
                    "warning",
                    f"{lease.scope} is stale and its segment is no longer running: safe to remove (--repair)",
                    evidence,
                    repairable=True,
                )
            )
        elif process_gone:
            evidence["confirmation"] = reconcile_confirmation(evidence, "<supervisor>")
            findings.append(
                Finding(
                    "dead-runner",
                    "error",
                    f"runner {evidence['runner']} of {occurrence_id} segment {segment} is gone (pid "
                    f"{evidence['pid']} on {host}) and its lease is stale: confirm with `factory-schedule "
                    f"reconcile` after checking the provider; its call in flight, if any, will end as lost",
                    evidence,
                )
            )
        elif same_host:
            findings.append(
                Finding(
                    "stale-lease-live-process",
                    "warning",
                    f"runner {evidence['runner']} (pid {evidence['pid']}) is alive but has not heartbeated "
                    f"{lease.scope} since {evidence['last_heartbeat']}: hung, or its tick died",
                    evidence,
                )
            )
        else:
            findings.append(
                Finding(
                    "stale-lease-other-host",
                    "warning",
                    f"{lease.scope} is stale and held from {evidence['host']}; this host cannot see its process",
                    evidence,
                )
            )
    findings.extend(_running_without_lease(view, held_segments))
    return findings


def _running_without_lease(view: Any, held: set[tuple[str, int]]) -> list[Finding]:
    findings = []
    for occurrence in (field_of(view, "occurrences") or []) if view is not None else []:
        if field_of(occurrence, "state") != "running":
            continue
        running = running_segment(occurrence)
        occurrence_id = str(field_of(occurrence, "id"))
        if running is None or (occurrence_id, running[0]) in held:
            continue
        findings.append(
            Finding(
                "running-without-lease",
                "info",
                f"{occurrence_id} segment {running[0]} runs under {running[1]} with no lease (not started by "
                "`tick`, or its lease was removed): health cannot tell whether its runner lives",
                {"occurrence": occurrence_id, "segment": running[0], "runner": running[1]},
            )
        )
    return findings


def _check_lanes(schedule: Any, view: Any, now: datetime, grace: timedelta) -> list[Finding]:
    """Each lane's last two nights whose slot passed more than `grace` ago and that nothing admitted: yesterday's
    and today's for a daily lane, and a weekly lane's night even when it was days ago (until the lane's next
    admission coalesces it).

    A night of a lane that holds an open occurrence is only information (`lane-held`): no tick can admit it
    until that one settles, whose own trouble is reported elsewhere. A night whose window a clock change
    swallowed is not reported: nothing could be admitted, and no tick could have helped.
    """
    from factory_schedule.core import lane_occurrence_on, local_date_of, parse_commission

    commission = parse_commission(field_of(view, "commission"))
    lane_states = {lane.lane: lane for lane in field_of(view, "lanes") or []}
    watermarks = {lane_id: state.watermark.date for lane_id, state in lane_states.items() if state.watermark}
    today = local_date_of(commission.zone, now)
    # A week back, and as many days again as the grace (a slot + grace may fall on a later date than its night).
    look_back = 8 + math.ceil(grace / timedelta(days=1))
    nights = []  # (lane, occurrence, the lane's open occurrence or None), for one reading of their states
    for lane in commission.lanes:
        held = lane_states.get(lane.lane)
        holding = held.open if held is not None else None
        past = []
        for date in (today.subtract(days=back) for back in range(look_back)):
            occurrence = lane_occurrence_on(commission, lane, date)
            if occurrence is not None and occurrence.slot + grace <= now and occurrence.closes > occurrence.slot:
                past.append((date, occurrence))
            if len(past) == 2:
                break
        for date, occurrence in reversed(past):
            if watermarks.get(lane.lane, "") < date.isoformat():  # else admitted, or coalesced into a later one
                nights.append((lane.lane, occurrence, holding))
    findings = []
    states = schedule.statuses([occurrence.id for _, occurrence, _ in nights]) if nights else []
    for (lane_id, occurrence, holding), status in zip(nights, states, strict=True):
        if status.state not in ("due", "missed"):
            continue
        evidence = {"lane": lane_id, "occurrence": occurrence.id, "slot": occurrence.slot.isoformat(),
                    "state": status.state, "grace_minutes": grace.total_seconds() / 60}
        if holding is not None:  # no tick could admit it: the lane's open occurrence comes first
            evidence["held_by"] = holding.id
            findings.append(Finding(
                "lane-held", "info",
                f"{occurrence.id} waits: its lane still holds {holding.id} ({holding.state}), and it is "
                "admitted or coalesced once that one settles", evidence))
        elif status.state == "due":
            findings.append(Finding(
                "lane-not-started", "warning",
                f"{occurrence.id} was due at {occurrence.slot.isoformat()} and nothing has been admitted: is the "
                "LaunchAgent loaded and the Mac awake?", evidence))
        else:
            findings.append(Finding(
                "lane-missed", "warning",
                f"{occurrence.id} was never admitted before its window closed; the lane's next admission "
                "coalesces it", evidence))
    return findings


def _instant(text: str | None) -> datetime | None:
    return pendulum.parse(text).in_timezone("UTC") if text else None  # type: ignore[union-attr]


def _accounts_in_use(commission: dict[str, Any]) -> set[str]:
    used = set()
    for lane in commission.get("lanes", []):
        for task in lane.get("tasks", []):
            if isinstance(task, dict) and task.get("account"):
                used.add(task["account"])
    return used


def _check_accounts(view: Any, now: datetime) -> list[Finding]:
    commission = field_of(view, "commission") or {}
    max_age = int(commission.get("recordMaxAgeDays", 30))
    used = _accounts_in_use(commission)
    findings = []
    for account in field_of(view, "accounts") or []:
        name = field_of(account, "account")
        record = field_of(account, "record")
        recorded_at = _instant(field_of(record, "recorded_at")) if record is not None else None
        window = _instant(field_of(account, "window_closed_until"))
        refused = _instant(field_of(account, "sign_in_refused_at"))
        overage = _instant(field_of(account, "overage_observed_at"))
        evidence = {"account": name, "record_recorded_at": recorded_at.isoformat() if recorded_at else None}
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
        if name not in used:
            continue
        if recorded_at is None:
            findings.append(Finding("account-no-record", "error",
                                    f"{name} is used by the commission but has no owner record: nothing is "
                                    "admitted on it", evidence))
            continue
        expires = recorded_at + timedelta(days=max_age)
        if now > expires:
            findings.append(Finding("account-record-expired", "error",
                                    f"{name}'s owner record expired at {expires.isoformat()}: record it again",
                                    {**evidence, "expires": expires.isoformat()}))
        elif now + timedelta(days=RECORD_EXPIRY_WARNING_DAYS) > expires:
            findings.append(Finding("account-record-expiring", "warning",
                                    f"{name}'s owner record stops being current at {expires.isoformat()}",
                                    {**evidence, "expires": expires.isoformat()}))
        if field_of(record, "overage"):
            findings.append(Finding("account-overage-on", "error",
                                    f"{name}'s record has paid overage on: no call is admitted on it", evidence))
    return findings


def _current_week(commission: dict[str, Any], now: datetime) -> str | None:
    try:
        from factory_schedule.core import iso_week_of, local_date_of

        return iso_week_of(local_date_of(commission["zone"], now))
    except Exception:
        return None


def _check_ledger(view: Any, now: datetime) -> list[Finding]:
    findings = []
    week_now = _current_week(field_of(view, "commission") or {}, now)
    for week in field_of(view, "ledger") or []:
        name, ceiling, debited = field_of(week, "week"), field_of(week, "ceiling"), field_of(week, "debited")
        if week_now is not None and name < week_now:
            continue
        if ceiling and debited > CEILING_WARNING_FRACTION * ceiling:
            findings.append(Finding("week-near-ceiling", "warning",
                                    f"{name} has debited {debited} of its {ceiling} tokens "
                                    f"({100 * debited / ceiling:.0f} %)",
                                    {"week": name, "ceiling": ceiling, "debited": debited}))
    return findings


def host_zone() -> str | None:
    """The Mac's zone: $TZ, else the zone /etc/localtime links to."""
    if os.environ.get("TZ"):
        return os.environ["TZ"].lstrip(":")
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return None
    marker = "zoneinfo/"
    return target.split(marker, 1)[1] if marker in target else None


def _interval_key(interval: dict[str, Any]) -> tuple[Any, ...]:
    return (interval.get("Weekday"), interval.get("Hour"), interval.get("Minute"))


def _check_plist(view: Any, plist_path: str, zone: str | None) -> list[Finding]:
    commission = field_of(view, "commission") or {}
    try:
        with open(plist_path, "rb") as handle:
            installed = plistlib.load(handle)
    except (OSError, plistlib.InvalidFileException, ValueError) as error:
        return [Finding("launch-agent-unreadable", "error", f"cannot read {plist_path}: {error}",
                        {"plist": plist_path})]
    from factory_schedule.core import ScheduleError, launch_intervals

    try:
        expected = launch_intervals(commission, zone or commission.get("zone"))
    except ScheduleError as error:
        return [Finding("launch-agent-zone", "error",
                        f"the commission's intervals cannot be placed in this Mac's zone {zone}: {error.message}",
                        {"host_zone": zone, "commission_zone": commission.get("zone")})]
    have = installed.get("StartCalendarInterval", [])
    have = [have] if isinstance(have, dict) else list(have)
    want = [dict(interval) for interval in expected]
    if sorted(map(_interval_key, have), key=repr) == sorted(map(_interval_key, want), key=repr):
        return []
    return [Finding("launch-agent-drift", "error",
                    f"{plist_path} fires at other times than the commission asks: reinstall it with "
                    "`factory-schedule launchd install`",
                    {"plist": plist_path, "installed": have, "expected": want})]


def check_health(
    journal: Journal,
    schedule: Any,
    now: datetime,
    host: str,
    plist_path: str | None = None,
    grace_minutes: float = DEFAULT_GRACE_MINUTES,
    alive: Callable[[object], bool] = process_alive,
    zone: str | None = None,
    since: Checkpoint | None = None,
) -> HealthReport:
    """Every check; a check that raises is reported, not fatal, so one defect never hides the rest.

    `since` (an earlier report's `verified`) checks only the events appended after it: the live
    dashboard re-checks as the journal grows without re-reading a year of history each time;
    the `health` command always checks the whole chain."""
    from factory_schedule.core import SCHEDULE_AGGREGATE, ScheduleError

    findings: list[Finding] = []
    could_not: list[str] = []
    verified = None
    try:
        verified = journal.verify(SCHEDULE_AGGREGATE, since=since)
    except Exception as error:
        findings.append(Finding("journal-chain-broken", "error", f"the journal's hash chain is broken: {error}"))
    view = None
    try:
        view = schedule.read()
    except ScheduleError as error:
        findings.append(Finding("state-unreadable", "error", f"the schedule state does not parse: {error.message}",
                                {"code": error.code}))
    except Exception as error:
        could_not.append(f"reading the schedule: {error}")
    if view is None and not findings and not could_not:
        findings.append(Finding("not-commissioned", "info", "no commission is recorded yet"))

    def attempt(what: str, check: Callable[[], list[Finding]]) -> None:
        try:
            findings.extend(check())
        except Exception as error:
            could_not.append(f"{what}: {type(error).__name__}: {error}")

    attempt("leases", lambda: _check_leases(journal, view, now, host, alive))
    if view is not None:
        attempt("lanes", lambda: _check_lanes(schedule, view, now, timedelta(minutes=grace_minutes)))
        attempt("accounts", lambda: _check_accounts(view, now))
        attempt("ledger", lambda: _check_ledger(view, now))
        if plist_path:
            attempt("launch agent", lambda: _check_plist(view, plist_path, zone or host_zone()))
    return HealthReport(checked_at=now, host=host, findings=tuple(findings), could_not_check=tuple(could_not),
                        verified=verified)


def repair_stale_leases(
    journal: Journal, schedule: Any, now: datetime, host: str, alive: Callable[[object], bool] = process_alive
) -> list[Repair]:
    """Remove each stale lease that guards nothing running any more; return one Repair per removal.

    A segment lease goes only when `schedule.read()` no longer shows its segment
    running under its owner; the worker lease only when its tick is gone from this
    host. The delete itself re-checks staleness, so a late heartbeat keeps its lease.
    """
    view = schedule.read()
    repairs = []
    for lease in leases.list_leases(journal):
        if not leases.stale(lease, now):
            continue
        parsed = parse_segment_scope(lease.scope)
        if parsed is not None:
            if segment_still_running(view, parsed[0], parsed[1], lease.owner):
                continue
            why = "its segment is no longer running"
        elif lease.scope == leases.WORKER_SCOPE:
            if lease.info.get("host") != host or alive(lease.info.get("pid")):
                continue
            why = "its tick process is gone"
        else:
            continue
        removed = leases.remove_stale(journal, lease.scope, now)
        if removed is None:
            continue
        repairs.append(
            Repair("removed-stale-lease", removed.scope,
                   f"removed {removed.scope} held by {removed.owner}: stale since {removed.stale_at.isoformat()} "
                   f"and {why}", _lease_evidence(removed, now))
        )
    return repairs
