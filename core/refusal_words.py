"""A refused input document in words: each refusal as `path: reason`, the reason a person can act on.

pydantic's own messages are kept where they are words already ("Input should be 'claude' or
'chatgpt'", "... less than or equal to 2000000"), with the value that was given; a field refused by
its form says what that form is ("not a 24-hour time HH:MM (00:00 to 23:59)"), never the regular
expression that checks it. Each document's parser passes the words of the patterns its fields use
(the commission's `FORMS`); a pattern without words gets a plain sentence, and a test holds that the
commission has none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from .text import shown

UNWORDED_FORM = "not in the form this field takes"


def field_path(location: Iterable[int | str]) -> str:
    """`lanes[0].tasks[1].callBound` from pydantic's location tuple."""
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def reason_in_words(item: Mapping[str, Any], forms: Mapping[str, str]) -> str:
    """One pydantic error item's reason; `forms` gives the words of each pattern a field may be refused by."""
    kind = item["type"]
    given = item.get("input")
    if kind == "missing":
        return "missing (this field is required)"
    if kind == "extra_forbidden":
        return "not a field of this document"
    if kind == "string_pattern_mismatch":
        return f"{shown(given)} is {forms.get(item['ctx']['pattern'], UNWORDED_FORM)}"
    message = str(item["msg"]).removeprefix("Value error, ")
    if kind in ("field_rule", "value_error") or given is None or isinstance(given, dict | list | tuple):
        return message
    return f"{message}, got {shown(given)}"


def refusals_in_words(error: ValidationError, forms: Mapping[str, str], *, root: str = "") -> list[str]:
    """Each refusal as `path: reason`, in pydantic's order.

    `root` prefixes each path (`report` for a runner's report); a model validator's cross-field refusal
    (a `field_rule` error) names its field in its context, appended to the path.
    """
    items = error.errors(include_url=False)
    located = [tuple(item["loc"]) for item in items]
    parts: list[str] = []
    for item in items:
        location = list(item["loc"])
        if item["type"] == "too_short" and any(
            len(other) > len(location) and list(other[: len(location)]) == location for other in located
        ):
            continue  # pydantic also counts the refused items as missing; their own errors say why
        if item["type"] == "field_rule":
            location.append(item["ctx"]["field"])
        path = field_path([root, *location] if root else location) or "document"
        parts.append(f"{path}: {reason_in_words(item, forms)}")
    return parts


def refusal_in_words(error: ValidationError, forms: Mapping[str, str], *, root: str = "", limit: int = 5) -> str:
    """One readable line: the first `limit` of `refusals_in_words`, joined."""
    parts = refusals_in_words(error, forms, root=root)
    extra = f" (and {len(parts) - limit} more)" if len(parts) > limit else ""
    return "; ".join(parts[:limit]) + extra
