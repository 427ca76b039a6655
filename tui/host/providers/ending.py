"""How a provider process ended, as the process handling saw it (the parsers' second input)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessEnd:
    """`exit_code` is None when the process was killed by a signal; `timed_out` when the runner killed it at the
    call's deadline; `over_bound` when the runner stopped it because streamed usage passed the call's bound."""

    exit_code: int | None
    timed_out: bool = False
    over_bound: bool = False

    @property
    def clean(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.over_bound

    def describe(self) -> str:
        if self.timed_out:
            return "killed at the call's deadline"
        if self.over_bound:
            return "stopped when its streamed usage passed the bound"
        if self.exit_code is None:
            return "killed by a signal"
        return f"exited {self.exit_code}"
