"""The owner key: owner records are signed, and the decision checks each signature before anything is written.

Every worker is an agent with a shell on the owner's machine, so a name such as `decidedBy: owner` proves
nothing. A journal that holds an owner key (its `owner/key` aggregate) accepts an owner record (a
commission revision, an account record, staged-lane settings, an escalation or approval decision) only
with the owner's Ed25519 signature over the record: the message is the canonical JSON of the journal's
identity (a random ID recorded with the first key), the command ID and the command's payload without its
signature, so a signature made for one journal, one command or one payload fits no other. Anything
else is refused UNSIGNED or BAD_SIGNATURE, and nothing is written. A journal without a key keeps
accepting unsigned owner records (health reports it as an error).

The key is recorded by a first owner record signed by the new key itself; a rotation is signed by the
current key; a recovery (the private key or its passphrase lost) is signed by the recovery key whose
code the owner wrote down when the key was made, and stays visible in the key's history. Nothing
unsigned can remove or replace a recorded key through these decisions; the signature is checked when a
record is written (some records keep it in their event, but nothing checks it again), so what a process
writes to the journal past them is for the shell's health to find (a key past the one the owner's key file
holds, a key list apart from the keys its history recorded, a chain set back).

Pure: verification is computation over bytes (`cryptography`'s Ed25519 public key, never a private key,
never randomness); the signing itself is injected (`Signer`), like the clock.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pendulum import DateTime
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from factory_schedule.store import CommandJournal as Journal
from factory_schedule.store import (
    Decision,
    JournalCorruptError,
    NewEvent,
    canonical_json,
)

from .clock import Clock
from .command_loop import CommandLoop, Planned
from .errors import ScheduleError
from .schedule_checks import validation_message
from .schedule_document import instant_text

OWNER_AGGREGATE = "owner/key"
OWNER_PROTOCOL: Literal["sf-owner/1"] = "sf-owner/1"
SIGNATURE_PROTOCOL = "sf-owner-signature/1"
SIGNATURE_FIELD = "ownerSignature"
MAX_KEYS = 16  # the key's history the state keeps (the journal keeps every record)
_KEY_TEXT = re.compile(r"^[A-Za-z0-9+/]{43}=$")  # 32 bytes in base64
_SIGNATURE_TEXT = re.compile(r"^[A-Za-z0-9+/]{86}==$")  # 64 bytes in base64
_JOURNAL_ID = re.compile(r"^[a-f0-9]{32}$")
Refusal = tuple[Literal["UNSIGNED", "BAD_SIGNATURE"], str]


class Signer(Protocol):
    """Signs for one Ed25519 key: the host unlocks it; core only asks for a signature over a message."""

    @property
    def public_key(self) -> str: ...  # base64 of the 32 raw bytes

    def sign(self, message: bytes) -> str: ...  # base64 of the 64-byte signature


class OwnerKey(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=True)

    n: int = Field(ge=1)
    public_key: str = Field(alias="publicKey", pattern=_KEY_TEXT.pattern)
    recovery_key: str = Field(alias="recoveryKey", pattern=_KEY_TEXT.pattern)
    how: Literal["init", "rotated", "recovered"]
    recorded_at: str = Field(alias="recordedAt")

    def doc(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)


class OwnerState(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    protocol: Literal["sf-owner/1"]
    journal: str = Field(pattern=_JOURNAL_ID.pattern)
    keys: tuple[OwnerKey, ...] = Field(min_length=1, max_length=MAX_KEYS)

    @property
    def current(self) -> OwnerKey:
        return self.keys[-1]

    def doc(self) -> dict[str, Any]:
        return {"protocol": self.protocol, "journal": self.journal, "keys": [key.doc() for key in self.keys]}


def parse_owner(text: str) -> OwnerState:
    try:
        return OwnerState.model_validate_json(text)
    except ValidationError as error:
        raise ScheduleError("CORRUPT", f"stored owner key: {validation_message(error)}") from None


def load_owner(journal: Journal) -> tuple[int, OwnerState | None]:
    """The journal's owner key state (checked whole; CORRUPT on any defect), or None: no key recorded."""
    try:
        version, text = journal.load_text(OWNER_AGGREGATE)
    except JournalCorruptError as error:
        raise ScheduleError("CORRUPT", str(error)) from None
    return version, None if text is None else parse_owner(text)


# -- messages and signatures ------------------------------------------------------------------------------


def signed_message(journal_id: str, command_id: str, payload: dict[str, Any]) -> bytes:
    """What the owner signs: this journal, this command, this payload (its signature left out)."""
    body = {key: value for key, value in payload.items() if key != SIGNATURE_FIELD}
    return canonical_json({"protocol": SIGNATURE_PROTOCOL, "journal": journal_id, "command": command_id,
                           "payload": body}).encode("utf-8")


def signature_of(signer: Signer, journal_id: str, command_id: str, payload: dict[str, Any]) -> dict[str, str]:
    return {"publicKey": signer.public_key, "signature": signer.sign(signed_message(journal_id, command_id, payload))}


def verifies(public_key: str, signature: str, message: bytes) -> bool:
    try:
        key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key, validate=True))
        key.verify(base64.b64decode(signature, validate=True), message)
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True


def _signature_problem(public_key: str, what: str, journal_id: str, command_id: str,
                       payload: dict[str, Any]) -> Refusal | None:
    signature = payload.get(SIGNATURE_FIELD)
    if signature is None:
        return ("UNSIGNED", f"{command_id}: this journal holds an owner key, so {what} must be signed with it "
                            f"(the owner's passphrase); nothing was written")
    if (not isinstance(signature, dict) or set(signature) != {"publicKey", "signature"}
            or not isinstance(signature["publicKey"], str) or not isinstance(signature["signature"], str)
            or not _SIGNATURE_TEXT.match(signature["signature"])):
        return ("BAD_SIGNATURE", f"{command_id}: {SIGNATURE_FIELD} is not a signature; nothing was written")
    if signature["publicKey"] != public_key:
        return ("BAD_SIGNATURE", f"{command_id}: signed with a key that is not {what}'s key in this journal; "
                                 f"nothing was written")
    if not verifies(public_key, signature["signature"], signed_message(journal_id, command_id, payload)):
        return ("BAD_SIGNATURE", f"{command_id}: the signature does not fit this record in this journal; "
                                 f"nothing was written")
    return None


def owner_record_problem(state: OwnerState | None, command_id: str, payload: dict[str, Any]) -> Refusal | None:
    """Why an owner record may not be written: unsigned or mis-signed while the journal holds a key, or signed
    while it holds none. None: it may (a journal without a key keeps accepting unsigned owner records)."""
    if state is None:
        if SIGNATURE_FIELD in payload:
            return ("BAD_SIGNATURE", f"{command_id}: this journal holds no owner key to check a signature "
                                     f"against (`factory-schedule owner init`); nothing was written")
        return None
    return _signature_problem(state.current.public_key, "an owner record", state.journal, command_id, payload)


def signed(journal: Journal, signer: Signer | None, command_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` with the owner's signature for this journal, when a signer is given and the journal holds a
    key (a journal without one records it unsigned, as it always has); the decision checks it again."""
    if signer is None:
        return payload
    _version, state = load_owner(journal)
    if state is None:
        return payload
    return {**payload, SIGNATURE_FIELD: signature_of(signer, state.journal, command_id, payload)}


# -- the key's own records ----------------------------------------------------------------------------------


def _key_text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not _KEY_TEXT.match(value):
        raise ScheduleError("INVALID", f"{name}: an Ed25519 public key in base64 is needed")
    return value


def _key(n: int, body: dict[str, Any], how: str, now: DateTime) -> OwnerKey:
    return OwnerKey.model_validate({"n": n, "publicKey": body["publicKey"], "recoveryKey": body["recoveryKey"],
                                    "how": how, "recordedAt": instant_text(now)})


@dataclass(frozen=True)
class OwnerKeyResult:
    command_id: str
    version: int
    replayed: bool
    result: dict[str, Any]


Named = tuple[str, dict[str, Any]]  # a command's ID and payload


class OwnerKeys:
    """The journal's owner key: its first record, rotations and recoveries, on an injected journal and clock."""

    def __init__(self, journal: Journal, clock: Clock) -> None:
        self.journal = journal
        self.clock = clock

    def state(self) -> OwnerState | None:
        return load_owner(self.journal)[1]

    def init(self, *, journal_id: Any, signer: Signer, recovery_key: Any) -> OwnerKeyResult:
        """The first owner record: the key's public half (signed by the key itself) and the recovery key's."""
        if not isinstance(journal_id, str) or not _JOURNAL_ID.match(journal_id):
            raise ScheduleError("INVALID", "journal: 32 lowercase hex digits are needed")
        body = {"journal": journal_id, "publicKey": _key_text("publicKey", signer.public_key),
                "recoveryKey": _key_text("recoveryKey", recovery_key)}
        command_id = "owner/key/1"
        payload = {**body, SIGNATURE_FIELD: signature_of(signer, journal_id, command_id, body)}

        def decide(state: OwnerState | None, now: DateTime) -> OwnerState:
            if state is not None:
                raise ScheduleError("REVISION", "this journal already holds an owner key: rotate it (signed by the "
                                                "current key) or recover it (signed by the recovery key)")
            problem = _signature_problem(body["publicKey"], "the new key", journal_id, command_id, payload)
            if problem is not None:
                raise ScheduleError(*problem)
            key = _key(1, body, "init", now)
            return OwnerState(protocol=OWNER_PROTOCOL, journal=journal_id, keys=(key,))

        return self._execute(lambda _state: (command_id, payload), decide)

    def replace(self, *, how: Literal["rotated", "recovered"], signer: Signer, public_key: Any,
                recovery_key: Any) -> OwnerKeyResult:
        """The next key: `rotated` is signed by the current key, `recovered` by the current recovery key."""
        body = {"how": how, "publicKey": _key_text("publicKey", public_key),
                "recoveryKey": _key_text("recoveryKey", recovery_key)}

        def plan(state: OwnerState | None) -> Named:
            if state is None:
                raise ScheduleError("NOT_COMMISSIONED", "this journal holds no owner key: `owner init` records one")
            command_id = f"owner/key/{state.current.n + 1}"
            return command_id, {**body, SIGNATURE_FIELD: signature_of(signer, state.journal, command_id, body)}

        def decide(state: OwnerState | None, now: DateTime) -> OwnerState:
            assert state is not None
            command_id, payload = plan(state)
            signing = state.current.public_key if how == "rotated" else state.current.recovery_key
            what = "the current owner key" if how == "rotated" else "the recovery key"
            problem = _signature_problem(signing, what, state.journal, command_id, payload)
            if problem is not None:
                raise ScheduleError(*problem)
            key = _key(state.current.n + 1, body, how, now)
            return OwnerState(protocol=OWNER_PROTOCOL, journal=state.journal,
                              keys=(*state.keys, key)[-MAX_KEYS:])

        return self._execute(plan, decide)

    def _execute(self, name: Callable[[OwnerState | None], Named],
                 decide: Callable[[OwnerState | None, DateTime], OwnerState]) -> OwnerKeyResult:
        def plan(state: OwnerState | None, now: DateTime) -> Planned[OwnerState]:
            command_id, payload = name(state)
            if self.journal.receipt(command_id) is not None:
                return Planned(command_id, payload, None)
            return Planned(command_id, payload, decide(state, now))  # refused here: nothing is written

        loop = CommandLoop(self.journal, self.clock, OWNER_AGGREGATE, lambda: load_owner(self.journal),
                           _owner_decision, ScheduleError)
        ran = loop.run(plan)
        return OwnerKeyResult(ran.planned.command_id, ran.outcome.version, ran.outcome.replayed, ran.outcome.result)


def _owner_decision(planned: Planned[OwnerState], _at_version: int) -> Decision:
    new = planned.change
    assert new is not None  # the loop runs no decision for a recorded command
    parse_owner(canonical_json(new.doc()))  # what a reader of these bytes would say
    return Decision(events=[NewEvent("owner-key-recorded", new.current.doc())], state=new.doc(),
                    result={"key": new.current.doc(), "journal": new.journal})
