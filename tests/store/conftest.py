"""Fixtures for the journal tests that run real OS processes."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.processes import PROCESSES


@pytest.fixture
def spawn() -> Iterator[Callable[..., Any]]:
    """Start a child process (`tests.processes`: its own OS process); any child still alive after the test is killed.

    A failing assertion must not leave a child asleep inside a transaction, or pytest
    would wait for it at exit.
    """
    children: list[Any] = []

    def start(target: Callable[..., Any], *args: Any) -> Any:
        child = PROCESSES.Process(target=target, args=args, daemon=True)
        child.start()
        children.append(child)
        return child

    yield start
    for child in children:
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
        child.join(timeout=30)
