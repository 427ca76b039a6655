"""What `owner init`, `rotate`, `recover` and `show` do: make, replace and show the owner key that signs
owner records."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from factory_schedule.core import OwnerKeyResult, OwnerKeys
from factory_schedule.tui.cli.journal import journal_url_of, open_existing
from factory_schedule.tui.cli.output import EXIT_OK, BadInput, emit
from factory_schedule.tui.cli.owner_signing import read_passphrase, unlock_owner_key
from factory_schedule.tui.host.clock import SystemClock
from factory_schedule.tui.host.owner_key import (
    MIN_PASSPHRASE,
    KeySigner,
    OwnerKeyError,
    default_key_path,
    new_journal_id,
    place_key_file,
    read_key_file,
    recovery_code,
    recovery_signer,
    seal,
    stage_key_file,
    unseal,
)


class _Lines:
    """Each secret the command asks for: the next line of --passphrase-fd, else typed on the terminal."""

    def __init__(self, fd: int | None) -> None:
        self._lines: list[str] | None = None
        if fd is not None:
            try:
                with os.fdopen(os.dup(fd), "r", encoding="utf-8") as stream:
                    self._lines = [line.rstrip("\r\n") for line in stream]
            except OSError as error:
                raise BadInput(f"--passphrase-fd: descriptor {fd} cannot be read: {error.strerror}") from None

    def ask(self, prompt: str, twice: bool = False) -> str:
        if self._lines is not None:
            if not self._lines:
                raise BadInput(f"--passphrase-fd: no line left for: {prompt.strip(': ')}")
            return self._lines.pop(0)
        first = read_passphrase(None, prompt)
        if twice and len(first) < MIN_PASSPHRASE:  # said before it is typed a second time
            raise BadInput(f"the passphrase is too short: at least {MIN_PASSPHRASE} characters; nothing was written")
        if twice and read_passphrase(None, "Again: ") != first:
            raise BadInput("the two passphrases differ; nothing was written")
        return first


def _keys(args: argparse.Namespace) -> OwnerKeys:
    return OwnerKeys(open_existing(journal_url_of(args)), SystemClock())


def _sealed(signer: KeySigner, passphrase: str) -> dict[str, Any]:
    try:
        return seal(signer, passphrase)
    except OwnerKeyError as error:
        raise BadInput(str(error)) from None


def _staged(path: Path, document: dict[str, Any]) -> Path:
    """The new key file, written before the journal changes (nothing is recorded when it cannot be)."""
    try:
        return stage_key_file(path, document)
    except OSError as error:
        raise BadInput(f"{path.parent}: the new owner key file cannot be written: {error}; nothing was "
                       f"recorded") from None


def _recorded_with(path: Path, document: dict[str, Any], record: Callable[[], OwnerKeyResult],
                   keep_as: str | None) -> tuple[OwnerKeyResult, dict[str, Any]]:
    """`record()` (the journal's new key) with its key file: staged first, removed if the journal refuses,
    placed at `path` after; what the owner is told of where the file is."""
    staged = _staged(path, document)
    try:
        recorded = record()
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    placed = place_key_file(staged, path, keep_as)
    where: dict[str, Any] = {"key_file": str(placed)}
    if placed != path:
        where["key_file_moved"] = (f"something is in the way at {path}: move the new key file from {placed} to "
                                   f"{path}; the journal already holds its key")
    return recorded, where


def init_owner_key(args: argparse.Namespace) -> int:
    keys = _keys(args)
    if keys.state() is not None:
        raise BadInput("this journal already holds an owner key (`owner show`); `owner rotate` or `owner recover` "
                       "replaces it")
    lines, path = _Lines(args.passphrase_fd), default_key_path()
    made = not path.exists()
    try:
        if made:
            signer = KeySigner.generate()
            document = _sealed(signer, lines.ask("New owner passphrase: ", twice=True))
        else:  # this machine's key, for one more journal
            signer = unseal(read_key_file(path), lines.ask("Owner passphrase: "))
    except OwnerKeyError as error:
        raise BadInput(str(error)) from None
    recovery = KeySigner.generate()

    def record() -> OwnerKeyResult:
        return keys.init(journal_id=new_journal_id(), signer=signer, recovery_key=recovery.public_key)

    recorded, where = _recorded_with(path, document, record, None) if made else (record(), {"key_file": str(path)})
    emit({**recorded.result, **where, "key_file_made": made, "recovery_code": recovery_code(recovery),
          "next": "write the recovery code down, away from this machine: `owner recover` needs it if the key or its "
                  "passphrase is lost; it is not shown again"})
    return EXIT_OK


def rotate_owner_key(args: argparse.Namespace) -> int:
    keys = _keys(args)
    state = keys.state()
    if state is None:
        raise BadInput("this journal holds no owner key: `owner init` records one")
    lines = _Lines(args.passphrase_fd)
    path = default_key_path()
    try:
        current = unseal(read_key_file(path), lines.ask("Current owner passphrase: "))
    except OwnerKeyError as error:
        raise BadInput(str(error)) from None
    if current.public_key != state.current.public_key:
        unlock_owner_key(state.current.public_key, None)  # refuses with the reason
    new, recovery = KeySigner.generate(), KeySigner.generate()
    document = _sealed(new, lines.ask("New owner passphrase: ", twice=True))
    recorded, where = _recorded_with(
        path, document, lambda: keys.replace(how="rotated", signer=current, public_key=new.public_key,
                                             recovery_key=recovery.public_key), f"rotated-{state.current.n}")
    emit({**recorded.result, **where, "recovery_code": recovery_code(recovery)})
    return EXIT_OK


def recover_owner_key(args: argparse.Namespace) -> int:
    keys = _keys(args)
    state = keys.state()
    if state is None:
        raise BadInput("this journal holds no owner key: `owner init` records one")
    lines = _Lines(args.passphrase_fd)
    try:
        spare = recovery_signer(lines.ask("Recovery code: "))
    except OwnerKeyError as error:
        raise BadInput(str(error)) from None
    new, recovery = KeySigner.generate(), KeySigner.generate()
    document = _sealed(new, lines.ask("New owner passphrase: ", twice=True))
    path = default_key_path()
    recorded, where = _recorded_with(
        path, document, lambda: keys.replace(how="recovered", signer=spare, public_key=new.public_key,
                                             recovery_key=recovery.public_key),
        f"replaced-by-recovery-{state.current.n + 1}")
    emit({**recorded.result, **where, "recovery_code": recovery_code(recovery),
          "next": "the journal records this recovery for all to see; write the new recovery code down"})
    return EXIT_OK


def show_owner_key(args: argparse.Namespace) -> int:
    state = _keys(args).state()
    emit({"owner_key": None if state is None else state.doc(),
          "protected": state is not None})
    return EXIT_OK
