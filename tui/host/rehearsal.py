"""A rehearsal of one lane: its first unit of work sent now, through the real CLI, on a throwaway journal.

So an owner can try the real CLI in the afternoon rather than learn at 02:00 that it does not work.
The rehearsal journal (a new file in a temporary folder) holds a copy of the owner's records the lane
needs: the current commission narrowed to that lane (due at this minute, its first task allowed one
call) and the account records as recorded. The owner's journal is only read: nothing the rehearsal
admits, spends or settles is written to it, and its week's ledger does not see the rehearsal's tokens.
"""

from __future__ import annotations

import copy
import dataclasses
import secrets
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from factory_schedule.core import Clock, LifecycleSchedule, ScheduleError, ScheduleView, local_wall_of
from factory_schedule.core.owner_commission import record_commission
from factory_schedule.store import open_journal
from factory_schedule.tui.host.providers.prompts import LaneBinding
from factory_schedule.tui.host.providers.stage_run import run_of

LAST_MINUTE = "23:59"


def first_unit_binding(binding: LaneBinding) -> LaneBinding:
    """The binding with its first task alone, holding its first unit alone (a staged run keeps its stages)."""
    first = binding.tasks[0]
    units = first.units if _staged(binding) else first.units[:1]
    return dataclasses.replace(binding, tasks=(dataclasses.replace(first, units=units),))


def _staged(binding: LaneBinding) -> bool:
    return run_of(binding.lane) is not None


def rehearsal_commission(commission: Mapping[str, Any], lane: str, local_date: str, local_time: str,
                         weekday: int) -> dict[str, Any]:
    """The commission narrowed to `lane`, due at `local_time` on `local_date`, its first task allowed one call.

    ScheduleError INVALID when the day has no minute left for a window (after 23:58)."""
    if local_time >= LAST_MINUTE:
        raise ScheduleError("INVALID", f"it is {local_time} in {commission['zone']}: too late today for a window; "
                            "rehearse after midnight")
    entry = copy.deepcopy(next(item for item in commission["lanes"] if item["lane"] == lane))
    hours, minutes = (int(part) for part in local_time.split(":"))
    left = (23 * 60 + 59) - (hours * 60 + minutes)
    entry |= {"time": local_time, "closes": LAST_MINUTE, "deadlineMinutes": max(1, min(entry["deadlineMinutes"], left)),
              "tasks": [{**entry["tasks"][0], "maxCalls": 1}]}
    if "weekday" in entry:
        entry["weekday"] = weekday
    narrowed = {key: value for key, value in commission.items() if key not in ("lanes", "pipeline")}
    narrowed |= {"revision": 1, "effectiveFrom": local_date, "lanes": [entry]}
    if "pipeline" in commission and entry["product"] == "portfolio":
        narrowed["pipeline"] = commission["pipeline"]
    return narrowed


def open_rehearsal(view: ScheduleView, lane: str, clock: Clock) -> tuple[LifecycleSchedule, str]:
    """A new rehearsal journal with the narrowed commission and the owner's account records; (its schedule,
    its URL)."""
    now = clock.now()
    zone = str(view.commission["zone"])
    date, wall = local_wall_of(zone, now)
    folder = Path(tempfile.mkdtemp(prefix="factory-schedule-rehearsal-"))
    url = f"sqlite:///{folder / 'journal.db'}"
    schedule = LifecycleSchedule(open_journal(url), clock)
    record_commission(schedule, rehearsal_commission(view.commission, lane, date.to_date_string(), wall,
                                                     date.isoweekday()))
    for account in view.accounts:
        if account.record is not None:
            schedule.record_account(account=account.account, sequence=1, sign_in=account.record.sign_in,
                                    overage=account.record.overage, recorded_by=account.record.recorded_by)
    return schedule, url


def admit_now(schedule: LifecycleSchedule, lane: str) -> tuple[str, str]:
    """The lane's occurrence admitted to a fresh runner token: (occurrence, runner); ScheduleError otherwise."""
    runner = f"r-{secrets.token_hex(6)}"
    tick = schedule.start(lane=lane, runner=runner)
    if tick.kind != "admitted" or tick.occurrence is None:
        raise ScheduleError("RULE", f"the rehearsal's {lane} was not admitted: {tick.kind} {tick.reason}")
    return tick.occurrence.id, runner
