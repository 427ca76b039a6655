"""The staged lanes' lock scopes, built and read in one place so a run's locks and health's reading of them agree.

A run takes three kinds of lease (create-new, on the journal's leases): its lane's worker singleton
(`pipeline/<lane>/worker`), before its claim selects a task, until its report; each exclusive resource the
commission names for the lane (`resource/<name>`), likewise; and the task lock (`pipeline/<lane>/task/<n>`),
from the claim to the report. Health reads a lease's scope back to tell a lane run's lock from any other lease.
"""

from __future__ import annotations

import re

RESOURCE_PREFIX = "resource/"
_LANE_LOCK = re.compile(r"^pipeline/(promotion|maturation)/(?:worker|task/([1-9][0-9]*))$")


def worker_scope(lane: str) -> str:
    """The lane's worker singleton: one run of the lane at a time selects work."""
    return f"pipeline/{lane}/worker"


def task_scope(lane: str, task: int) -> str:
    """The lock a run holds on the task it claimed, from its claim to its report."""
    return f"pipeline/{lane}/task/{task}"


def task_scope_prefix(lane: str) -> str:
    """What every task lock of the lane begins with."""
    return f"pipeline/{lane}/task/"


def resource_scope(name: str) -> str:
    """An exclusive resource the commission names for a lane: one run holds it at a time."""
    return f"{RESOURCE_PREFIX}{name}"


def is_lane_lock(scope: str) -> bool:
    """Whether a lease's scope is one of a staged lane run's locks (worker singleton, task lock, resource)."""
    return bool(_LANE_LOCK.match(scope)) or scope.startswith(RESOURCE_PREFIX)

