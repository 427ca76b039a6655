"""The facts the shell gathers for health: every rule can be tested with plain values, and the shell's part
(tui/host/health.py) is only probing and repairing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from factory_schedule.core.pipeline.lock_scopes import is_lane_lock
from factory_schedule.store.leases import heartbeat_from_future, stale_since

from .history import PipelineHistory
from .runs import RunFact

if TYPE_CHECKING:
    from factory_schedule.core.owner import OwnerState
    from factory_schedule.core.pipeline.model import PipelineState
    from factory_schedule.core.results import ScheduleView

DEFAULT_GRACE_MINUTES = 30


@dataclass(frozen=True)
class LeaseFact:
    """A lease as the journal holds it, with what the shell could see of its holder."""

    scope: str
    owner: str
    ttl_seconds: float
    heartbeat_at: datetime
    info: Mapping[str, Any]  # JSON: what its taker recorded (pid, host, runner, ...)
    segment: tuple[str, int] | None  # (occurrence ID, segment) of a segment lease, else None
    worker: bool  # the tick's own lease
    process_alive: bool | None  # None: taken on another host, whose processes this host cannot see
    pid_recycled: bool = False  # its pid lives, but with another start time than recorded: another process
    living_pids: tuple[int, ...] = ()  # what of its run lives here: its session's processes, its calls' tools

    @property
    def stale_at(self) -> datetime:
        return stale_since(self.heartbeat_at, self.ttl_seconds)

    def stale(self, now: datetime) -> bool:
        return now > self.stale_at

    def from_future(self, now: datetime) -> bool:
        return heartbeat_from_future(self.heartbeat_at, self.ttl_seconds, now)

    @property
    def lane_lock(self) -> bool:
        """Whether this is one of a staged lane run's locks (worker singleton, task lock, exclusive resource)."""
        return is_lane_lock(self.scope)


@dataclass(frozen=True)
class LaunchAgentFact:
    """The installed LaunchAgent: its StartCalendarInterval entries, or why it could not be read; what it
    runs and with which journal; whether launchd has it loaded (None: not checkable here, `loaded_problem`
    says why). The shell compares the journal URLs (it can resolve paths) and shows them without a password.
    """

    path: str
    intervals: tuple[Mapping[str, Any], ...] | None
    problem: str | None = None
    label: str | None = None
    program_arguments: tuple[str, ...] | None = None
    journal_shown: str | None = None  # its EnvironmentVariables' FACTORY_JOURNAL, password masked
    journal_expected: str | None = None  # the journal health checks, password masked
    same_journal: bool | None = None  # None: it names no journal
    missing_programs: tuple[str, ...] = ()  # programs it names that this host cannot run
    loaded: bool | None = None
    loaded_problem: str | None = None


@dataclass(frozen=True)
class HealthFacts:
    now: datetime
    host: str
    chain_problems: Mapping[str, str] = field(default_factory=dict)  # why each aggregate's chain did not verify
    view: ScheduleView | None = None
    state_problem: tuple[str, str] | None = None  # (code, message) when the stored state does not parse
    leases: tuple[LeaseFact, ...] = ()
    night_states: Mapping[str, str] = field(default_factory=dict)  # state of each of `nights_to_check`
    launch_agent: LaunchAgentFact | None = None
    host_zone: str | None = None
    grace: timedelta = timedelta(minutes=DEFAULT_GRACE_MINUTES)
    could_not_check: tuple[str, ...] = ()  # facts the shell could not gather
    pipeline: PipelineState | None = None  # the staged lanes' checked state; None before any settings
    pipeline_problem: tuple[str, str] | None = None  # (code, message) when it does not read (CORRUPT)
    stall_after: timedelta | None = None  # None: the owner's setting (the commission's `pipeline.stallHours`)
    runs: tuple[RunFact, ...] = ()  # what the tick recorded of each runner's exit and output (recent ones)
    # The staged lanes' state at one version with the counts derived from its own event history up to it;
    # None when not gathered (only a whole check reads the history: `health`, not every tick).
    pipeline_history: PipelineHistory | None = None
    # The journal's owner key as read (None: no key recorded), when the shell read it (`owner_key_read`).
    owner_key: OwnerState | None = None
    owner_key_read: bool = False
    # The public key in this machine's owner key file, None when there is none here (or it does not read).
    owner_key_here: str | None = None
    # The public keys the owner's chain recorded, in order (its `owner-key-recorded` events).
    owner_keys_recorded: tuple[str, ...] = ()
    # When every chain was last checked from its first event (`factory-schedule verify`, or a check with no
    # checkpoint to start from): None when never; `whole_check_known` says whether the shell looked.
    whole_check_at: datetime | None = None
    whole_check_known: bool = False

