"""Reading a file the owner names (a lane's settings and prompts, a commission, a LaunchAgent, health's own side
files): only a regular file, and only up to a bound.

A path may name a FIFO (whose open or read waits for a writer that never comes), a device (`/dev/zero` reads
forever), a folder, or a file far larger than anything the program reads on purpose. The file is opened without
blocking and checked on the open descriptor (never a stat followed by an open, which another process could
swap between), then read to at most its bound. Either refusal is an `OSError`, so every caller's handling of an
unreadable file handles these too, with a message that says what the path is.
"""

from __future__ import annotations

import errno
import os
import stat

KIB = 1024
MIB = 1024 * KIB


class UnusableFile(OSError):
    """A path that is not a regular file, or a file above its bound."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at `path` (a symbolic link is followed to what it names), at most `limit`;
    `UnusableFile` for anything else or anything larger, the open's own `OSError` when it cannot be opened."""
    shown = os.fspath(path)
    descriptor = os.open(shown, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise UnusableFile(errno.EINVAL, f"{_kind(mode)}, not a regular file", shown)
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(descriptor, min(limit + 1 - size, MIB))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise UnusableFile(errno.EFBIG, f"larger than {limit} bytes", shown)
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def read_regular_text(path: str | os.PathLike[str], limit: int) -> str:
    """`read_regular` decoded as UTF-8 (UnicodeDecodeError when it is not)."""
    return read_regular(path, limit).decode("utf-8")

