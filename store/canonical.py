"""Canonical JSON: the one byte form a payload, an event and a state document take.

Receipts compare payloads by digest and the hash chain covers event data, so two
equal documents must always serialise to the same text. Floats are refused
because their text form is not stable across languages and versions.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any


class CanonicalJsonError(ValueError):
    """A value that has no canonical JSON form (a float, NaN, a non-string key, ...)."""


def _check(value: Any, path: str) -> None:
    if value is None or isinstance(value, bool | str):
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as error:
                raise CanonicalJsonError(f"{path}: string is not valid UTF-8 ({error.reason})") from None
        return
    if isinstance(value, int):
        return
    if isinstance(value, float):
        raise CanonicalJsonError(f"{path}: floats are refused (integers only), got {value!r}")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise CanonicalJsonError(f"{path}: object keys must be strings, got {key!r}")
            _check(item, f"{path}.{key}")
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _check(item, f"{path}[{index}]")
        return
    raise CanonicalJsonError(f"{path}: {type(value).__name__} has no JSON form")


def _refuse_float(text: str) -> Any:
    raise CanonicalJsonError(f"floats are refused (integers only), got {text}")


# One encoder and one decoder for every call: `json.dumps` and `json.loads` with options build a new one each
# time, which cost as much as encoding a small document.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_ECHO = json.JSONDecoder(parse_float=_refuse_float)


def _made_once_encoder() -> Callable[[Any], str]:
    """The canonical encoder's C function, made once.

    `JSONEncoder.encode` makes its C encoder anew on every call, with a fresh dict for its
    circular-reference check, and that cost about as much as encoding a small document; a
    journal command encodes four. Made once, it has no such check: a cycle ends in
    RecursionError, which `canonical_json` refuses like any other value with no JSON form.
    Where this Python has no C encoder, or builds it otherwise, `_ENCODER.encode` is used.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - CPython has it
        return _ENCODER.encode
    try:
        write = make(None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", True, False, False)
    except TypeError:  # pragma: no cover - another signature
        return _ENCODER.encode

    def encode(obj: Any) -> str:
        return "".join(write(obj, 0))

    sample = {"b": [1, "\u00e9\n\"", None, True, {}], "a": {"z": -2}, "": []}
    return encode if encode(sample) == _ENCODER.encode(sample) else _ENCODER.encode


_encode = _made_once_encoder()
# The echo is read with the scanner itself: the encoder wrote exactly one value with no whitespace around
# it, so `decode`'s whitespace scans and `raw_decode`'s wrapping have nothing to do.
_scan: Callable[[str, int], tuple[Any, int]] = _ECHO.scan_once  # type: ignore[attr-defined]


def encoded_as_canonical(obj: Any) -> str:
    """What the canonical encoder writes for `obj`, without the echo check `canonical_json` makes. Its text is
    canonical when nothing in `obj` can lack a canonical form (the hash chain's seal: strings and an integer);
    otherwise it is for asking whether a parsed document is byte for byte one whose canonical text is known:
    a float, `true` for 1 or a lone surrogate encodes differently from any canonical text, and NaN raises
    ValueError."""
    return _encode(obj)


def canonical_json(obj: Any) -> str:
    """Sorted keys, no insignificant whitespace, UTF-8 text, integers only.

    The fast path lets the C encoder write the text and the C decoder read it back:
    a float shows up as the decoder's `parse_float`, a non-string key as a document
    that no longer equals the input. Only then does the slow walk name the culprit.
    """
    return canonical_json_parsed(obj)[0]


def canonical_json_parsed(obj: Any) -> tuple[str, Any]:
    """`canonical_json`, and the text read back: a copy of `obj` that shares nothing with it (the check's own
    echo, so a caller that hands a document on as a fresh copy gets one without decoding it again)."""
    try:
        text = _encode(obj)
        text.encode("utf-8")
        echoed = _scan(text, 0)[0]
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError, StopIteration):
        echoed = _NOT_ECHOED
    if echoed is _NOT_ECHOED or echoed != obj:
        _check(obj, "$")  # raises with the path of the first value that has no canonical form
        if echoed is _NOT_ECHOED:  # pragma: no cover - _check refuses everything dumps refuses
            raise CanonicalJsonError("$: value has no canonical JSON form")
    return text, echoed


_NOT_ECHOED = object()


def canonical_digest(obj: Any) -> str:
    """SHA-256 (hex) of the canonical JSON's UTF-8 bytes."""
    return hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


class CanonicalText(str):
    """Text known to be canonical JSON: made by `canonical_text` or joined from such texts.

    The journal stores it as it is. A writer that changes one part of a large document
    keeps the other parts' texts and joins them, instead of encoding and checking the
    whole document again on every command.
    """

    __slots__ = ()


def canonical_text(obj: Any) -> CanonicalText:
    """`canonical_json`, marked as canonical so that it can be stored or joined as it is."""
    return CanonicalText(canonical_json(obj))


def _canonical_part(part: str, where: str) -> str:
    if not isinstance(part, CanonicalText):
        raise TypeError(f"{where}: only canonical texts can be joined, got a plain {type(part).__name__}")
    return part


def join_object(members: Mapping[str, str]) -> CanonicalText:
    """The canonical text of an object whose members' canonical texts are known.

    Canonical form composes: sorted keys and no whitespace mean the whole is its
    members' texts in key order, so nothing is encoded twice.
    """
    body = ",".join(
        f"{json.dumps(key, ensure_ascii=False)}:{_canonical_part(members[key], key)}" for key in sorted(members)
    )
    return CanonicalText("{" + body + "}")


def join_array(items: Iterable[str]) -> CanonicalText:
    """The canonical text of an array whose items' canonical texts are known."""
    return CanonicalText("[" + ",".join(_canonical_part(item, f"[{i}]") for i, item in enumerate(items)) + "]")
