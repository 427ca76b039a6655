"""The dashboard's unlocked owner key: asked for on an owner form's confirm, kept for a short owner-set time.

Held in this process's memory only, for `minutes` after it was opened (0: asked on every owner decision),
and only while it is the journal's current key. Nothing is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from factory_schedule.tui.dashboard.screens.passphrase import PassphraseStep
from factory_schedule.tui.host.owner_key import OwnerKeyError, default_key_path, read_key_file, unseal

DEFAULT_OWNER_MINUTES = 5.0


class OwnerSigning:
    def __init__(self, key_path: Path | None = None, minutes: float = DEFAULT_OWNER_MINUTES,
                 now: Callable[[], float] = time.monotonic, hint: str = "") -> None:
        self.key_path = key_path
        self.minutes = minutes
        self.now = now
        self.hint = hint  # said on the passphrase step: the demo's passphrase, which the demo's owner cannot know
        self._signer: Any = None
        self._until = 0.0

    def kept(self, public_key: str) -> Any:
        """The signer kept for this key, or None (none kept, another key, or its time is up)."""
        if self._signer is None or self._signer.public_key != public_key or self.now() >= self._until:
            self._signer = None
            return None
        return self._signer

    def unlock(self, public_key: str, passphrase: str) -> Any:
        """Open the key file with `passphrase`; raise with the reason when it does not open this key."""
        path = self.key_path or default_key_path()
        document = read_key_file(path)
        if document.get("publicKey") != public_key:
            raise OwnerKeyError(f"{path} is not this journal's current owner key")
        signer = unseal(document, passphrase)
        if self.minutes > 0:
            self._signer, self._until = signer, self.now() + self.minutes * 60
        return signer


def with_owner_signer(app: Any, state: Any, then: Callable[[Any], None], back: Callable[[], None]) -> None:
    """Call `then` with the owner's signer for an owner record: None while the journal holds no owner key
    (`state`, as `load_owner` reads it, is None), the key kept from a recent passphrase, or the key the
    passphrase step opens; `back` when the owner goes back."""
    if state is None:
        then(None)
        return
    public_key = state.current.public_key
    kept = app.owner_signing.kept(public_key)
    if kept is not None:
        then(kept)
        return

    def answered(signer: Any) -> None:
        if signer is None:
            back()
        else:
            then(signer)

    minutes = app.owner_signing.minutes
    kept_for = (f" Once opened, it stays open in this dashboard for {minutes:g} minutes: owner decisions made "
                "meanwhile are signed without asking (`factory-schedule dashboard --owner-minutes 0` asks every "
                "time)." if minutes > 0 else "")
    app.push_screen(PassphraseStep(lambda passphrase: app.owner_signing.unlock(public_key, passphrase),
                                   "This journal's owner decisions are signed with your owner key." + kept_for
                                   + (f" {app.owner_signing.hint}" if app.owner_signing.hint else "")),
                    answered)
