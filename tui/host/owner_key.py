"""The owner's key on this machine: an Ed25519 private key sealed under the owner's passphrase.

`cryptography` (PyCA) does the work: Ed25519 for the signatures, Argon2id (memory-hard, so a stolen file
costs an attacker real memory per passphrase guess) to turn the passphrase into a key, and AES-256-GCM
to seal the private key's 32 bytes (bound to its public key, so a file whose halves were swapped does
not open). The file lives in the user data folder, mode 0600, and holds nothing readable but the public
key and the KDF's settings. The passphrase is never written, never an argument, never in the environment.

Beside the key, `owner init` makes a recovery key whose 32 bytes are shown once as a recovery code for
the owner to write down: it signs only a recovery (a new key, recorded in the journal for all to see).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import secrets
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.argon2 import Argon2id
from platformdirs import user_data_dir

from factory_schedule.tui.host.files import read_regular_text

KEY_FILE_NAME = "owner-key.json"
KEY_FILE_PROTOCOL = "sf-owner-key-file/1"


@dataclass(frozen=True)
class KdfCost:
    """Argon2id's settings: memory in KiB, passes, lanes. The file records them, so a key made with other
    settings still opens."""

    memory_kib: int = 64 * 1024
    iterations: int = 3
    lanes: int = 4


DEFAULT_COST = KdfCost()
MIN_PASSPHRASE = 8


class OwnerKeyError(Exception):
    """The key file is missing, unreadable, or the passphrase does not open it; the message says which."""


class KeySigner:
    """Signs with one unlocked Ed25519 key (core's `owner.Signer`). It lives in this process's memory only."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self._public = base64.b64encode(raw).decode("ascii")

    @property
    def public_key(self) -> str:
        return self._public

    def sign(self, message: bytes) -> str:
        return base64.b64encode(self._key.sign(message)).decode("ascii")

    @classmethod
    def generate(cls) -> KeySigner:
        return cls(Ed25519PrivateKey.generate())

    def seed(self) -> bytes:
        return self._key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                       serialization.NoEncryption())


def default_key_path() -> Path:
    return Path(user_data_dir("factory-schedule", appauthor=False)) / KEY_FILE_NAME


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _kdf(passphrase: str, salt: bytes, cost: KdfCost) -> bytes:
    return Argon2id(salt=salt, length=32, iterations=cost.iterations, lanes=cost.lanes,
                    memory_cost=cost.memory_kib).derive(passphrase.encode("utf-8"))


def seal(signer: KeySigner, passphrase: str, cost: KdfCost = DEFAULT_COST) -> dict[str, Any]:
    """The key file's document: the private key sealed under the passphrase."""
    if len(passphrase) < MIN_PASSPHRASE:
        raise OwnerKeyError(f"the passphrase is too short: at least {MIN_PASSPHRASE} characters")
    salt, nonce = os.urandom(16), os.urandom(12)
    sealed = AESGCM(_kdf(passphrase, salt, cost)).encrypt(nonce, signer.seed(), signer.public_key.encode("ascii"))
    return {"protocol": KEY_FILE_PROTOCOL, "publicKey": signer.public_key,
            "kdf": {"name": "argon2id", "salt": _b64(salt), "memoryKib": cost.memory_kib,
                    "iterations": cost.iterations, "lanes": cost.lanes},
            "cipher": "aes-256-gcm", "nonce": _b64(nonce), "sealed": _b64(sealed)}


def unseal(document: Any, passphrase: str) -> KeySigner:
    """The signer the document seals; OwnerKeyError for a wrong passphrase or a damaged file."""
    try:
        if document.get("protocol") != KEY_FILE_PROTOCOL or document["kdf"]["name"] != "argon2id":
            raise OwnerKeyError("not an owner key file")
        kdf = document["kdf"]
        cost = KdfCost(int(kdf["memoryKib"]), int(kdf["iterations"]), int(kdf["lanes"]))
        key = _kdf(passphrase, base64.b64decode(kdf["salt"], validate=True), cost)
        seed = AESGCM(key).decrypt(base64.b64decode(document["nonce"], validate=True),
                                   base64.b64decode(document["sealed"], validate=True),
                                   str(document["publicKey"]).encode("ascii"))
    except InvalidTag:
        raise OwnerKeyError("the passphrase does not open the owner key") from None
    except (KeyError, TypeError, ValueError, AttributeError, binascii.Error) as error:
        raise OwnerKeyError(f"the owner key file is damaged: {error}") from None
    signer = KeySigner(Ed25519PrivateKey.from_private_bytes(seed))
    if signer.public_key != document["publicKey"]:
        raise OwnerKeyError("the owner key file is damaged: its halves do not match")
    return signer


def write_key_file(path: Path, document: dict[str, Any]) -> None:
    """Create the key file, mode 0600, in a folder only the owner can enter; never over an existing one."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(document, indent=1) + "\n")


def stage_key_file(path: Path, document: dict[str, Any]) -> Path:
    """A new key file beside `path`, under a name no other process can foresee (mode 0600), written before the
    journal records its key: a key the journal holds is never one whose file could not be written."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor, name = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".new", dir=path.parent)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(document, indent=1) + "\n")
    return Path(name)


def place_key_file(staged: Path, path: Path, keep_as: str | None) -> Path:
    """Where the staged key file ends: at `path` (the key it replaces kept beside it as `keep_as`, when it can
    be), or, when something is in the way, where it was staged (the owner moves it). `keep_as` None: a first
    key, never written over a file already there."""
    if keep_as is not None and path.is_file():
        with contextlib.suppress(OSError):  # the replaced key no longer signs: losing its copy loses nothing
            os.replace(path, path.with_name(f"{path.name}.{keep_as}"))
    try:
        if keep_as is None:
            os.link(staged, path)
            staged.unlink()
        else:
            os.replace(staged, path)
    except OSError:
        return staged
    return path


KEY_FILE_LIMIT = 64 * 1024  # a key file is under 1 KiB; anything far larger is not one


def read_key_file(path: Path) -> dict[str, Any]:
    """The key file's document; anything but a regular file of a sensible size (a FIFO, a device, a folder
    another process put there) is refused at once rather than waited on or read whole."""
    try:
        document = json.loads(read_regular_text(path, KEY_FILE_LIMIT))
    except FileNotFoundError:
        raise OwnerKeyError(f"{path}: no owner key on this machine (`factory-schedule owner init` makes one)") from None
    except (OSError, ValueError) as error:
        raise OwnerKeyError(f"{path}: cannot be read: {error}") from None
    if not isinstance(document, dict):
        raise OwnerKeyError(f"{path}: not an owner key file")
    return document


# -- the recovery code ------------------------------------------------------------------------------------


def recovery_code(signer: KeySigner) -> str:
    """The recovery key's 32 bytes as groups of base32 letters, to write down."""
    text = base64.b32encode(signer.seed()).decode("ascii").rstrip("=")
    return "-".join(text[i:i + 4] for i in range(0, len(text), 4))


def recovery_signer(code: str) -> KeySigner:
    text = "".join(code.split()).replace("-", "").upper()
    try:
        seed = base64.b32decode(text + "=" * (-len(text) % 8))
        return KeySigner(Ed25519PrivateKey.from_private_bytes(seed))
    except (binascii.Error, ValueError):
        raise OwnerKeyError("that is not a recovery code (52 letters and digits in groups of four)") from None


def new_journal_id() -> str:
    """The identity a journal's first owner record gives it: what every signature names."""
    return secrets.token_hex(16)
