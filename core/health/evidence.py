"""A lease's evidence: what a person (or the reconciler) needs to confirm its holder gone."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .facts import LeaseFact


def lease_evidence(lease: LeaseFact, now: datetime) -> dict[str, Any]:
    """What a person (or the reconciler) needs to confirm the holder gone; the process start time only when
    the lease recorded one, and `pid_recycled` only when the pid now names another process."""
    evidence = _lease_evidence(lease, now)
    if lease.info.get("pid_started") is not None:
        evidence["pid_started"] = lease.info.get("pid_started")
    if lease.pid_recycled:
        evidence["pid_recycled"] = True
    if lease.living_pids:
        evidence["living_pids"] = list(lease.living_pids)
    return evidence


def _lease_evidence(lease: LeaseFact, now: datetime) -> dict[str, Any]:
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
        "seconds_since_heartbeat": round((now - lease.heartbeat_at).total_seconds(), 1),
    }


def reconcile_confirmation(evidence: Mapping[str, Any], confirmed_by: str) -> dict[str, Any]:
    """The confirmation a supervisor would send for a dead runner, prefilled from the lease's evidence."""
    recycled = " (its pid now names another process)" if evidence.get("pid_recycled") else ""
    text = (
        f"runner process {evidence.get('pid')} on {evidence.get('host')} is gone{recycled}; its lease on "
        f"{evidence.get('scope')} had no heartbeat since {evidence.get('last_heartbeat')} "
        f"(stale since {evidence.get('stale_since')})"
    )
    return {"runner": str(evidence.get("runner")), "confirmedBy": confirmed_by, "evidence": text[:500]}

