"""A journal protected by an owner key, for tests whose journal must be healthy: a journal without one is an
error finding of health. The key is the test's own, never written to disk."""

from __future__ import annotations

from typing import Any

from factory_schedule.core.owner import OwnerKeys
from factory_schedule.tui.host.owner_key import KeySigner, new_journal_id


def protect(journal: Any, clock: Any) -> KeySigner:
    """Record a fresh owner key in `journal`; returns its signer (for the owner records a test still makes)."""
    signer = KeySigner.generate()
    OwnerKeys(journal, clock).init(journal_id=new_journal_id(), signer=signer,
                                   recovery_key=KeySigner.generate().public_key)
    return signer
