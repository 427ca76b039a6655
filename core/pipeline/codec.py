"""The stored pipeline's text, read and written member by member: a command checks and encodes what it changed.

The journal stores the staged lanes' state in parts, one per member of the document (`parted`): the
settings, the Top-N, the candidates, each lane, the decisions, the approvals, the counters. A command
changes one lane and a counter or two, and the rules build its new state by copying the one it read, so
every member it left alone is the very (frozen) object of that state. Parsing and checking the whole
document, and encoding it whole, on every command was most of a pipeline command's own work.

A member is validated from its canonical text by a model holding that one field as `PipelineState`
declares it (same type, constraints, alias and strict config), so it is checked exactly as the whole
document's parse checks it; the rules across members (`PipelineState`'s own validator) run on every
state, read or written. A member whose text is byte for byte one this codec validated is taken as
validated: the check is a pure function of those bytes. On a write, a member that is the very object
of the last state read or written keeps its text and its check; every other member is dumped,
encoded and validated from its text, as a reader of the stored bytes would. Anything the member-wise
path refuses or does not expect (a text not in canonical form, an unknown member) is parsed and
checked whole (`parse_pipeline`), which says what is wrong.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError, create_model

from factory_schedule.store import PartedText, canonical_json, parted
from factory_schedule.store.canonical import encoded_as_canonical

from ..schedule_checks import validation_message
from .errors import PipelineError
from .model import PipelineState

# Each member's field name, by its key in the stored document (its alias), in the document's order.
_FIELDS: dict[str, str] = dict(sorted((field.alias or name, name)
                                      for name, field in PipelineState.model_fields.items()))
_KEY_TEXTS = {key: encoded_as_canonical(key) for key in _FIELDS}
# One model per member: that field alone, declared as PipelineState declares it.
def _member_model(name: str) -> type[BaseModel]:
    declared = PipelineState.model_fields[name]
    field: dict[str, Any] = {name: (declared.annotation, declared)}
    return create_model(f"PipelineMember_{name}", __config__=PipelineState.model_config, **field)


_MEMBER_MODELS = {key: _member_model(name) for key, name in _FIELDS.items()}
_DECODER = json.JSONDecoder()


class _Whole(Exception):
    """The member-wise path met something it does not judge: the whole parse says what it is."""


def parse_pipeline(stored: str) -> PipelineState:
    """The stored pipeline's text, parsed and checked whole as JSON; any defect is CORRUPT."""
    try:
        return PipelineState.model_validate_json(stored)
    except ValidationError as error:
        raise PipelineError("CORRUPT", f"stored pipeline: {validation_message(error)}") from None


class PipelineCodec:
    """One reader's and writer's memory: the last state read or written, by its text, and the text and
    validated value of each of its members."""

    def __init__(self) -> None:
        self._last: tuple[str, PipelineState] | None = None
        self._members: dict[str, tuple[str, Any]] = {}  # key: (its text, the value validated from it)

    def read(self, stored: str) -> PipelineState:
        """The state a stored text holds (CORRUPT on any defect): the last one read or written when it is
        that very text; else member by member, each member byte-equal to one already validated taken as
        it was; else parsed whole."""
        last = self._last
        if last is not None and last[0] == stored:
            return last[1]
        try:
            texts = _member_texts(stored)
            members = {key: self._validated(key, text) for key, text in texts.items()}
            state = _assembled({_FIELDS[key]: value for key, (_text, value) in members.items()})
        except (_Whole, ValidationError):
            state = parse_pipeline(stored)  # CORRUPT, naming the defect (or the state, should it pass whole)
            members = {}
        self._remember(stored, state, members)
        return state

    def write(self, state: PipelineState) -> tuple[PartedText, PipelineState]:
        """A decision's new state as the journal stores it (in parts, one per member) and as a reader of
        those bytes gets it back, checked as that reader checks it (CORRUPT otherwise): the members it
        shares with the last state read or written keep their text and check, the others are encoded and
        validated from their text."""
        kept = {key: known for key, known in self._members.items() if known[1] is getattr(state, _FIELDS[key])}
        changed = {name for key, name in _FIELDS.items() if key not in kept}
        # One dump of every changed member: a member left at its default is absent, as in the whole document.
        dumped = state.model_dump(by_alias=True, mode="json", exclude_defaults=True, include=changed) if changed else {}
        members: dict[str, tuple[str, Any]] = {}
        for key in _FIELDS:
            if key in kept:
                members[key] = kept[key]
            elif key in dumped:
                members[key] = self._validated_or_corrupt(key, canonical_json(dumped[key]))
        stored = parted([piece for index, (key, (text, _value)) in enumerate(members.items())
                         for piece in ((None, ("{" if index == 0 else ",") + _KEY_TEXTS[key] + ":"), (key, text))]
                        + [(None, "}")])
        try:
            after = _assembled({_FIELDS[key]: value for key, (_text, value) in members.items()})
        except ValidationError:
            after = parse_pipeline(stored)  # CORRUPT, naming the defect
        self._remember(stored, after, members)
        return stored, after

    def _validated(self, key: str, text: str) -> tuple[str, Any]:
        known = self._members.get(key)
        if known is not None and known[0] == text:
            return known
        wrapped = _MEMBER_MODELS[key].model_validate_json("{" + _KEY_TEXTS[key] + ":" + text + "}")
        return text, getattr(wrapped, _FIELDS[key])

    def _validated_or_corrupt(self, key: str, text: str) -> tuple[str, Any]:
        try:
            return self._validated(key, text)
        except ValidationError as error:
            raise PipelineError("CORRUPT", f"stored pipeline: {validation_message(error)}") from None

    def _remember(self, stored: str, state: PipelineState, members: dict[str, tuple[str, Any]]) -> None:
        """The state a text holds, and its members: the values the next decision's state shares with it."""
        self._last = (stored, state)
        self._members = {key: (text, getattr(state, _FIELDS[key])) for key, (text, _value) in members.items()}


def _assembled(values: dict[str, Any]) -> PipelineState:
    """The state of members each already validated: their instances go in as they are (nothing is validated
    twice), and the fields' own constraints and the rules across members run on them."""
    return PipelineState.model_validate(values)


def _member_texts(stored: str) -> dict[str, str]:
    """Each member's text in a canonical document's text (no whitespace, keys known and ascending, each once),
    cut where the decoder says each value ends; `_Whole` for anything else."""
    if not stored.startswith("{"):
        raise _Whole()
    texts: dict[str, str] = {}
    index, previous = 1, ""
    try:
        while True:
            key, index = _DECODER.raw_decode(stored, index)
            if not isinstance(key, str) or key not in _FIELDS or key <= previous or stored[index] != ":":
                raise _Whole()
            _value, end = _DECODER.raw_decode(stored, index + 1)
            texts[key], previous = stored[index + 1:end], key
            if stored[end] == "}" and end + 1 == len(stored):
                return texts
            if stored[end] != ",":
                raise _Whole()
            index = end + 1
    except (ValueError, IndexError, RecursionError):
        raise _Whole() from None
