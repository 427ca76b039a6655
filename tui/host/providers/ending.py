"""How a provider process ended, as the process handling saw it (the parsers' second input)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessEnd:
    """`exit_code` is None when the process was killed by a signal; `timed_out` when the runner killed it at the
    call's deadline; `stopped` when the runner stopped it because the stream's reader asked (streamed usage
    past the call's bound, or a provider that says it cannot be reached); `cut` when the runner stopped reading
    an output past its limits (why, in words)."""

    exit_code: int | None
    timed_out: bool = False
    stopped: bool = False
    cut: str | None = None

    @property
    def clean(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.stopped and self.cut is None

    def describe(self) -> str:
        if self.timed_out:
            return "killed at the call's deadline"
        if self.cut is not None:
            return f"stopped: {self.cut}"
        if self.stopped:
            return "stopped when its stream said the call could not go on"
        if self.exit_code is None:
            return "killed by a signal"
        return f"exited {self.exit_code}"
