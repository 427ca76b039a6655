"""A state stored in parts: a command rewrites only the parts it changed, and one hash seals them all.

A large state (the schedule's, about 60-90 KB) is stored as named slices of its canonical text, one
row each, and the head row holds its manifest: the parts' names and SHA-256s, in the order their
texts join to the whole. The command's last event seals the manifest's SHA-256 (the root) as it
seals a whole state's, so the chain binds every part: an edited part, a part from another version,
a part missing or one added, and an edited manifest are each refused on every read and by `verify`.
A command whose decision changed one lane writes that lane's row, the rows of whatever else changed
and the head, instead of the whole text: its commit carries a few pages instead of the state's
every page.

A manifest is a JSON array and a whole state a JSON object, so a head's stored text says which it
holds; a journal written before parts existed reads as it was, and its next command stores parts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring
from typing import Any

from .canonical import CanonicalJsonError, CanonicalText, canonical_json, encoded_as_canonical
from .errors import JournalCorruptError
from .records import sha256_text


class PartedText(CanonicalText):
    """A state's canonical text together with the named slices it joins from (in order, names unique).

    A decision gives its state as one of these to have the journal store it in parts; everything
    else sees the text it is."""

    __slots__ = ("parts",)
    parts: tuple[tuple[str, str], ...]

    def __new__(cls, parts: Iterable[tuple[str, str]]) -> PartedText:
        listed = tuple(parts)
        if not listed:
            raise ValueError("a parted state has at least one part")
        names = [name for name, _text in listed]
        if len(set(names)) != len(names):
            raise ValueError(f"the parts of a state have distinct names, got {names}")
        text = super().__new__(cls, "".join(part for _name, part in listed))
        text.parts = listed
        return text


def parted(pieces: Iterable[tuple[str | None, str]]) -> PartedText:
    """The parts of a text given as pieces in order, each named, or None for glue between them (a brace, a
    key, a comma). Glue joins the named piece after it (the last named piece for glue at the end), so a
    part's row changes only when its own piece does."""
    parts: list[list[str]] = []
    glue = ""
    for name, text in pieces:
        if name is None:
            glue += text
            continue
        parts.append([name, glue + text])
        glue = ""
    if not parts:
        return PartedText([("state", glue)])
    parts[-1][1] += glue
    return PartedText((name, text) for name, text in parts)


def parted_members(document: Mapping[str, Any]) -> PartedText:
    """A JSON object's canonical text in parts, one per member, named by its key: for a state whose commands
    each change a few of its members. Each member is encoded (and checked) once; the parts join to exactly
    `canonical_json(document)`, since canonical JSON composes (sorted keys, no whitespace)."""
    pieces: list[tuple[str | None, str]] = []
    for index, key in enumerate(sorted(document)):
        if not isinstance(key, str):
            raise CanonicalJsonError(f"a member's key is text, got {type(key).__name__}")
        pieces += [(None, ("{" if index == 0 else ",") + encoded_as_canonical(key) + ":"),
                   (key, canonical_json(document[key]))]
    pieces.append((None, "}"))
    return parted(pieces)


def is_manifest(stored: str) -> bool:
    """Whether a head's stored text is a parts manifest (an array), not a whole state (an object)."""
    return stored.startswith("[")


def manifest_text(entries: Iterable[tuple[str, str]]) -> str:
    """The manifest of parts (name, SHA-256) in their order: what the head stores and the seal hashes.

    Written entry by entry, each string as the canonical encoder writes it (`encode_basestring`), as
    `records` writes the seals' texts: every command writes one, and the encoder's call and its echo check
    cost more than the text. Entries with no canonical form (a name that is no string, a lone surrogate)
    go to `canonical_json`, which refuses them, naming the entry (tests/store/test_seal_texts.py)."""
    listed = list(entries)
    if all([type(name) is str and type(digest) is str for name, digest in listed]):
        text = "[" + ",".join([f"[{encode_basestring(name)},{encode_basestring(digest)}]"
                               for name, digest in listed]) + "]"
        if text.isascii() or _utf8(text):
            return text
    return canonical_json([[name, digest] for name, digest in listed])


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def joined_parts(aggregate: str, version: int, manifest: str,
                 parts: Mapping[str, str]) -> tuple[PartedText, dict[str, tuple[str, str]]]:
    """The whole text a manifest's parts join to, once every part is the one it names (JournalCorruptError
    otherwise, saying which), with those parts in order (a reader may take only the parts it needs), and the
    parts by name as (text, SHA-256)."""
    entries = _entries(aggregate, manifest)
    remaining = dict(parts)
    checked: dict[str, tuple[str, str]] = {}
    for name, digest in entries:
        text = remaining.pop(name, None)
        if text is None:
            raise JournalCorruptError(f"{aggregate}: the state's part {name!r} is missing")
        if sha256_text(text) != digest:
            raise JournalCorruptError(f"{aggregate}: the state's part {name!r} is not the one event {version} sealed")
        checked[name] = (text, digest)
    for name in sorted(remaining):
        raise JournalCorruptError(f"{aggregate}: a part {name!r} is stored that the state of event {version} lacks")
    return PartedText((name, text) for name, (text, _digest) in checked.items()), checked


def _entries(aggregate: str, manifest: str) -> list[tuple[str, str]]:
    try:
        document: Any = json.loads(manifest)
    except (ValueError, RecursionError):
        raise JournalCorruptError(f"{aggregate}: the state's manifest is not JSON") from None
    entries = []
    if isinstance(document, list):
        for entry in document:
            if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(item, str) for item in entry)):
                break
            entries.append((entry[0], entry[1]))
        else:
            if entries and len({name for name, _digest in entries}) == len(entries):
                return entries
    raise JournalCorruptError(f"{aggregate}: the state's manifest is not a list of distinct named parts")


def stored_form(state: str, known: Mapping[str, tuple[str, str]]) -> tuple[str, dict[str, tuple[str, str]],
                                                                           list[tuple[str, str]], list[str]]:
    """How a command stores the state it leaves, given the parts (text, SHA-256) of the one it read: the head's
    text (the manifest, or the whole state when it is not parted), the parts by name after the command, the
    parts it writes (new or changed: only those are hashed) and the names of the parts it deletes."""
    if not state.startswith("{"):  # a manifest could then not be told from a whole state
        raise ValueError(f"a state is stored as a JSON object's text, got {state[:20]!r}")
    if not isinstance(state, PartedText):
        return state, {}, [], list(known)
    after: dict[str, tuple[str, str]] = {}
    written: list[tuple[str, str]] = []
    for name, text in state.parts:
        before = known.get(name)
        if before is not None and before[0] == text:
            after[name] = before
        else:
            after[name] = (text, sha256_text(text))
            written.append((name, text))
    gone = [name for name in known if name not in after]
    return manifest_text([(name, after[name][1]) for name, _text in state.parts]), after, written, gone
