"""The text rule: what a string the engine records may hold, and how deep a document may nest.

Everything a command records ends up in front of the owner: the dashboard, `health`, a
terminal. A control character (C0 including NUL and TAB, DEL, C1 including the 8-bit CSI) in a
runner token or a reason can clear a screen or draw a fake "all good"; a lone surrogate cannot be
encoded as UTF-8 at all. So one rule, here, refuses both with INVALID naming the field, before
anything is planned or written. Every text argument, every string of an input document and every
document's key goes through `text_problem`; nothing else in the engine decides what text is fine.

Documents (a commission, a report, a confirmation) are also walked without recursion, so a
document nested thousands deep is INVALID here rather than a RecursionError further on.
"""

from __future__ import annotations

import re
from typing import Any

from .errors import invalid

MAX_DOCUMENT_DEPTH = 32  # a commission is four levels deep; a report three

# C0 (NUL .. US, TAB and newlines included), DEL, C1 (U+0080 .. U+009F), lone surrogates.
_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """Why `value` may not be recorded, or None when it may."""
    found = _FORBIDDEN.search(value)
    if found is None:
        return None
    code = ord(found.group())
    kind = "a lone surrogate" if 0xD800 <= code <= 0xDFFF else "a control character"
    return f"holds {kind} (U+{code:04X}) at position {found.start()}"


def shown(value: Any, limit: int = 80) -> str:
    """`value` as a refusal message quotes it: a short repr (escaping every control character) for a
    string, a number or a constant; only the type of anything else, whose repr could be huge or nest
    past the recursion limit."""
    if isinstance(value, str):
        text = repr(value[:limit])
        return text + "..." if len(value) > limit else text
    if value is None or isinstance(value, bool | float) or (isinstance(value, int) and abs(value) < 10**20):
        return repr(value)
    if isinstance(value, int):
        return "a huge integer"
    return f"a {type(value).__name__}"


def checked_text(field: str, value: Any) -> str:
    """`value` when it is a string the text rule allows; INVALID naming `field` otherwise."""
    if not isinstance(value, str):
        raise invalid(f"{field}: a string is needed, got {type(value).__name__}")
    problem = text_problem(value)
    if problem is not None:
        raise invalid(f"{field}: {problem}; control characters and lone surrogates are refused")
    return value


def checked_token(field: str, value: Any, limit: int = 200) -> str:
    """An identity or short free text: non-empty, at most `limit` characters, no surrounding
    whitespace, and allowed by the text rule."""
    if isinstance(value, str):
        checked_text(field, value)
    if not isinstance(value, str) or not value or len(value) > limit or value != value.strip():
        raise invalid(f"{field}: a non-empty string of at most {limit} characters is needed, got {shown(value)}")
    return value


def _where(field: str, path: tuple[str | int, ...]) -> str:
    text = field
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def checked_document(field: str, document: Any, max_depth: int = MAX_DOCUMENT_DEPTH) -> Any:
    """`document` when it is JSON-shaped (objects with string keys, arrays, strings, integers,
    booleans, null) no deeper than `max_depth`, every key and string allowed by the text rule;
    INVALID naming the path otherwise. Floats are left to canonical JSON, which refuses them."""
    pending: list[tuple[tuple[str | int, ...], Any]] = [((), document)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, str):
            if text_problem(value) is not None:  # the path is spelled only for the refusal that names it
                checked_text(_where(field, path), value)
        elif isinstance(value, dict | list | tuple):
            if len(path) >= max_depth:
                raise invalid(f"{_where(field, path[:3])}: nested deeper than {max_depth} levels")
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise invalid(f"{_where(field, path)}: keys are strings, got {type(key).__name__}")
                    if text_problem(key) is not None:
                        checked_text(f"{_where(field, path)} key", key)
                    pending.append(((*path, key), item))
            else:
                pending.extend(((*path, index), item) for index, item in enumerate(value))
        elif value is not None and not isinstance(value, bool | int | float):
            raise invalid(f"{_where(field, path)}: not a JSON value ({type(value).__name__})")
    return document
