"""The journal's connections: a small pool of DB-API connections, the one returned last handed out first.

This is what the journal needs of SQLAlchemy's pool, without the import (SQLAlchemy and SQLModel cost
about 0.35 s of every command line's start-up). Last in, first out:
SQLite drops a connection's page cache whenever another connection has written since it last looked,
so handing out the connection that did the last work keeps its cache warm; on PostgreSQL it keeps
one warm connection (its prepared statements) doing the work. A decision that reads the journal
inside its command takes a second connection, which is why there is a pool at all.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import Any

# Connections kept idle for reuse; more may be open at once (threads, nested reads), and are closed when returned.
KEPT_IDLE = 5


class Pooled:
    """One checked-out connection: `driver_connection` to use, then `close()` to return it (or `invalidate()`
    first, when it failed in a way that leaves it unusable)."""

    __slots__ = ("_pool", "_valid", "driver_connection")

    def __init__(self, pool: Pool, driver_connection: Any) -> None:
        self._pool = pool
        self.driver_connection = driver_connection
        self._valid = True

    def invalidate(self) -> None:
        """Close the connection now; `close()` will then return nothing to the pool."""
        self._valid = False
        with suppress(Exception):
            self.driver_connection.close()

    def close(self) -> None:
        """Give the connection back (rolled back by the pool), or drop it if it was invalidated."""
        if self._pool is None:
            return
        pool, self._pool = self._pool, None  # type: ignore[assignment]
        pool._put_back(self.driver_connection, self._valid)


class Pool:
    """Thread-safe LIFO pool over `connect`, a function that opens one ready connection.

    `reset` runs on every returned connection (roll back whatever it left open; raise if it is no longer
    usable) and `ping`, when given, on every connection handed out again (a server may have closed it).
    """

    def __init__(
        self,
        connect: Callable[[], Any],
        reset: Callable[[Any], None],
        ping: Callable[[Any], None] | None = None,
    ) -> None:
        self.connect = connect
        self._reset = reset
        self._ping = ping
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._out = 0

    def checkout(self) -> Pooled:
        """A connection: the idle one returned last (pinged first, where the pool pings), else a new one."""
        while True:
            with self._lock:
                idle = self._idle.pop() if self._idle else None
                self._out += 1
            if idle is None:
                break
            if self._ping is None:
                return Pooled(self, idle)
            try:
                self._ping(idle)
                return Pooled(self, idle)
            except Exception:  # closed by the server meanwhile: drop it and try the next
                with self._lock:
                    self._out -= 1
                with suppress(Exception):
                    idle.close()
        try:
            return Pooled(self, self.connect())
        except BaseException:
            with self._lock:
                self._out -= 1
            raise

    def checked_out(self) -> int:
        """How many connections are handed out and not yet returned."""
        with self._lock:
            return self._out

    def _put_back(self, connection: Any, valid: bool) -> None:
        if valid:
            try:
                self._reset(connection)
            except Exception:
                valid = False
        with self._lock:
            self._out -= 1
            keep = valid and len(self._idle) < KEPT_IDLE
            if keep:
                self._idle.append(connection)
        if not keep:
            with suppress(Exception):
                connection.close()

    def dispose(self) -> None:
        """Close every idle connection; the ones handed out are closed when they come back past the limit."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection in idle:
            with suppress(Exception):
                connection.close()
