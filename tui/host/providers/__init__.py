"""Provider adapters: run one call through a provider's command line and say exactly what it reported.

Each provider has a parser (pure: JSON lines in, a `CallOutcome` out) and a small
command builder; `process.run_call` is the one place that starts, reads, bounds
and stops a provider process. Nothing here writes to the journal or prints: the
runner (`tui/cli/run.py`) asks before each call and reports the outcome.
"""

from __future__ import annotations

from factory_schedule.tui.host.providers.outcome import CallOutcome, Stop

__all__ = ["CallOutcome", "Stop"]
