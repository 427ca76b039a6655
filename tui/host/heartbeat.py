"""A lease kept fresh while its holder works: a thread that extends it every interval."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import datetime

from factory_schedule.store import Journal, leases


class Heartbeat(threading.Thread):
    """Extends one lease every `interval` seconds until stopped, or until the lease is no longer ours."""

    def __init__(
        self, journal: Journal, scope: str, owner: str, interval: float, now: Callable[[], datetime]
    ) -> None:
        super().__init__(name=f"heartbeat {scope}", daemon=True)
        self.journal = journal
        self.scope = scope
        self.owner = owner
        self.interval = interval
        self.now = now
        self.lost: str | None = None
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            try:
                leases.heartbeat(self.journal, self.scope, self.owner, self.now())
            except leases.LeaseOwnerError as error:
                self.lost = str(error)
                return
            except Exception as error:  # a busy or briefly unreachable journal: try again next beat
                print(f"factory-schedule tick: heartbeat of {self.scope} failed: {error}", file=sys.stderr)

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=max(self.interval * 2, 5))

