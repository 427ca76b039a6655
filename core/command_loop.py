"""The command loop every service runs: read, plan and execute one command under the journal's write lock.

A command's plan is its whole decision: every rule, over the state read at its version and the clock read once
the lock is held, so nothing the plan uses can move before the journal records its command, and the journal's
decision only turns the planned change into what is stored. The plan is made once. A head that moved anyway (a
journal whose lock does not cover the read) plans again, at most `COMMAND_ROUNDS` times, then CONTENDED. A
command's ID and payload come from the request alone, so a retry at any later time is the same command and
replays its receipt; a different request under a recorded ID is CONFLICT.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, Protocol, TypeVar

from pendulum import DateTime

from factory_schedule.store import (
    CommandConflictError,
    Decision,
    JournalCorruptError,
    Outcome,
    VersionConflictError,
)
from factory_schedule.store import CommandJournal as Journal  # the protocol: no database library loads

from .clock import Clock, as_utc
from .limits import SCHEDULE_LIMITS

COMMAND_ROUNDS = SCHEDULE_LIMITS.max_rounds

State = TypeVar("State")
Change = TypeVar("Change")
Answer = TypeVar("Answer")


@dataclass(frozen=True)
class Planned(Generic[Change]):
    """The command a plan chose: its ID and payload, and the change it makes (None: a recorded command,
    answered from its receipt); `meta` carries what the caller's answer needs beyond the journal's outcome."""

    command_id: str
    payload: dict[str, Any]
    change: Change | None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Ran(Generic[State, Change]):
    """A command the journal ran (or replayed): the plan, the journal's outcome and the state planned from."""

    planned: Planned[Change]
    outcome: Outcome
    read: State


class Refuse(Protocol):
    """The service's own error for the loop's three refusals."""

    def __call__(self, code: Literal["CORRUPT", "CONFLICT", "CONTENDED"], message: str, /) -> Exception: ...


class _Replan(Exception):
    """The journal holds another version than the plan was made at."""


@dataclass(frozen=True)
class CommandLoop(Generic[State, Change]):
    """One aggregate's loop: how its state is read (`load`), how a planned change becomes what is stored
    (`decision`, given the version it is decided at) and how the service refuses (`refuse`)."""

    journal: Journal
    clock: Clock
    aggregate: str
    load: Callable[[], tuple[int, State]]
    decision: Callable[[Planned[Change], int], Decision]
    refuse: Refuse
    max_rounds: int = COMMAND_ROUNDS
    as_text: bool = False

    def run(self, plan: Callable[[State, DateTime], Planned[Change] | Answer]) -> Ran[State, Change] | Answer:
        """The plan's answer when it writes nothing, else the command it planned, run through the journal."""
        for _ in range(self.max_rounds):
            with self.journal.writing():
                version, state = self.load()
                now = as_utc(self.clock.now())  # read with the lock held: no writer can come between
                try:
                    planned = plan(state, now)
                except JournalCorruptError as error:  # a receipt the plan looked up is not what was sealed
                    raise self.refuse("CORRUPT", str(error)) from None
                if not isinstance(planned, Planned):
                    return planned
                try:
                    outcome = self.journal.execute(self.aggregate, planned.command_id, planned.payload, version,
                                                   self._decide(planned, version), as_text=self.as_text)
                except (VersionConflictError, _Replan):
                    continue
                except CommandConflictError:
                    raise self.refuse("CONFLICT",
                                      f"{planned.command_id} was recorded with a different request") from None
                except JournalCorruptError as error:  # a receipt or state not what its command sealed
                    raise self.refuse("CORRUPT", str(error)) from None
            return Ran(planned, outcome, state)
        raise self.refuse("CONTENDED", f"other writers kept committing; gave up after {self.max_rounds} rounds")

    def _decide(self, planned: Planned[Change], version: int) -> Callable[[Any, int], Decision]:
        """The decision the journal runs in its transaction, only at the version planned from (the stored
        state is then the one the plan read: it is not read again)."""

        def decide(_stored: Any, at_version: int) -> Decision:
            if planned.change is None:
                raise self.refuse("CORRUPT", f"{planned.command_id} was planned as recorded but the journal "
                                  "holds no receipt for it")
            if at_version != version:
                raise _Replan()
            return self.decision(planned, at_version)

        return decide
