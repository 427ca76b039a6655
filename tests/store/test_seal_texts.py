"""The texts an event's and a receipt's seals (and a parts manifest) are taken over are the canonical JSON of
their fields.

`records` (and `state_parts.manifest_text`) write them key by key for speed; every journal ever written
hashed the canonical encoder's text of the same documents, so the two must agree byte for byte, for any strings
(quotes, backslashes, control characters, non-ASCII) and integers.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factory_schedule.store import state_parts
from factory_schedule.store.canonical import CanonicalJsonError, canonical_json, encoded_as_canonical
from factory_schedule.store.records import _event_head_text, receipt_text
from factory_schedule.store.state_parts import manifest_text

texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]))
versions = st.integers(min_value=0, max_value=2**63)


@given(texts, texts, texts, versions, st.none() | st.tuples(texts, texts))
def test_an_events_sealed_text_is_the_canonical_json_of_its_fields(
    aggregate: str, command_id: str, type_: str, version: int, seal: Any
) -> None:
    head: dict[str, Any] = {"aggregate": aggregate, "commandId": command_id, "type": type_, "version": version}
    if seal is not None:
        head["stateSha256"], head["receiptSha256"] = seal
    assert _event_head_text(aggregate, command_id, type_, version, seal) == encoded_as_canonical(head)


@given(texts, texts, texts, versions, versions, texts)
def test_a_receipts_sealed_text_is_the_canonical_json_of_its_columns(
    command_id: str, aggregate: str, digest: str, first: int, last: int, result: str
) -> None:
    expected = encoded_as_canonical({"aggregate": aggregate, "commandId": command_id, "digest": digest,
                                     "firstVersion": first, "lastVersion": last, "result": result})
    assert receipt_text(command_id, aggregate, digest, first, last, result) == expected


@given(st.lists(st.tuples(st.text(), st.text()), min_size=1, max_size=8))
def test_a_parts_manifest_is_the_canonical_json_of_its_entries_or_refused_as_canonical_json_refuses_it(
    entries: list[tuple[str, str]]
) -> None:
    try:
        expected = canonical_json([[name, digest] for name, digest in entries])
    except CanonicalJsonError as refusal:
        with pytest.raises(CanonicalJsonError) as manifest_refusal:
            manifest_text(iter(entries))
        assert str(manifest_refusal.value) == str(refusal)
    else:
        assert manifest_text(iter(entries)) == expected


def test_a_parts_manifest_is_written_without_the_encoders_echo_check(monkeypatch: pytest.MonkeyPatch) -> None:
    echoed: list[Any] = []

    def encoder(obj: Any) -> str:
        echoed.append(obj)
        return ""

    monkeypatch.setattr(state_parts, "canonical_json", encoder)
    assert manifest_text([("lanes/a", "00ff"), ('say "hi"\n', "ab")]) == '[["lanes/a","00ff"],["say \\"hi\\"\\n","ab"]]'
    assert echoed == []
