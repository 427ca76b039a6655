"""Reading what a dashboard running on a pseudo-terminal writes to it."""

from __future__ import annotations

import os
import select
import time


def read_terminal(fd: int, seconds: float) -> bytes:
    """What the program on the other end of `fd` writes within `seconds`, or until it closes its end."""
    out = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the other end closed: the program is gone
                break
            if not chunk:
                break
            out += chunk
    return out
