"""How an owner command on the command line gets the owner's signature.

A journal that holds an owner key takes owner records only signed by it. The command then opens the key
file in the user data folder with the passphrase, read from the terminal without echo, or, for the
owner's own scripts, from a file descriptor (`--passphrase-fd N`, e.g. `3< passphrase-file`); never from an
argument or the environment, where other processes of the same user can read it. Without a terminal or
a descriptor the command is refused before anything is written. A journal without a key asks nothing.
"""

from __future__ import annotations

import argparse
import getpass
import os
from typing import TYPE_CHECKING

from factory_schedule.core import load_owner
from factory_schedule.tui.cli.output import BadInput
from factory_schedule.tui.host.owner_key import KeySigner, OwnerKeyError, default_key_path, read_key_file, unseal

if TYPE_CHECKING:
    from factory_schedule.core import Signer
    from factory_schedule.store import CommandJournal


def read_passphrase(fd: int | None, prompt: str = "Owner passphrase: ") -> str:
    """One line from descriptor `fd`, or typed on the terminal without echo; BadInput when neither is there."""
    if fd is not None:
        try:
            with os.fdopen(os.dup(fd), "r", encoding="utf-8") as stream:
                line = stream.readline()
        except OSError as error:
            raise BadInput(f"--passphrase-fd: descriptor {fd} cannot be read: {error.strerror}") from None
        if not line:
            raise BadInput(f"--passphrase-fd: no line to read on descriptor {fd} (the passphrase is one line); "
                           "nothing was written")
        return line.rstrip("\r\n")
    try:
        terminal = os.open("/dev/tty", os.O_RDWR)
    except OSError:
        raise BadInput("this journal holds an owner key: the owner passphrase is needed, typed on a terminal or "
                       "read from --passphrase-fd N; nothing was written") from None
    os.close(terminal)
    return getpass.getpass(prompt)


def unlock_owner_key(public_key: str, fd: int | None) -> KeySigner:
    """The owner's signer for the key whose public half is `public_key`, opened with the passphrase."""
    path = default_key_path()
    try:
        document = read_key_file(path)
    except OwnerKeyError as error:
        raise BadInput(str(error)) from None
    if document.get("publicKey") != public_key:
        raise BadInput(f"{path}: this owner key is not the journal's current owner key (rotated or recovered "
                       f"elsewhere?); nothing was written")
    try:
        return unseal(document, read_passphrase(fd))
    except OwnerKeyError as error:
        raise BadInput(f"{error}; nothing was written") from None


class _UnlockedWhenSigning:
    """The owner's signer, asking for the passphrase only when the first signature is made: the record's own
    input is checked before that (an unknown account, a commission that does not parse), so the owner never
    types a passphrase, and waits for the key to open, for a command that was never going to run."""

    def __init__(self, public_key: str, fd: int | None) -> None:
        self.public_key = public_key
        self._fd = fd
        self._unlocked: KeySigner | None = None

    def sign(self, message: bytes) -> str:
        if self._unlocked is None:
            self._unlocked = unlock_owner_key(self.public_key, self._fd)
        return self._unlocked.sign(message)


def owner_signer(journal: CommandJournal, args: argparse.Namespace) -> Signer | None:
    """The signer an owner command needs on `journal`: None while the journal holds no owner key."""
    state = load_owner(journal)[1]
    if state is None:
        return None
    return _UnlockedWhenSigning(state.current.public_key, getattr(args, "passphrase_fd", None))
