"""Journal text as the owner's terminal may show it: visible characters, never instructions.

Whatever the dashboard shows from a journal (runner tokens, work keys, sign-ins,
recorded-by and confirmed-by names, evidence, reasons, error messages that quote
them) may hold control characters, if an older engine recorded them, or square
brackets that Rich and Textual would read as markup. `printable` turns every
control character (C0, DEL, C1), lone surrogate and bidirectional override into a
visible escape such as `\\x1b`; `plain` wraps the result in a `Text`, which is never
parsed as markup. Every view builds what it shows from these two.
"""

from __future__ import annotations

import re
from typing import Any

from rich.text import Text

# C0 and DEL, C1, lone surrogates, and the bidirectional controls that reorder what follows them.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: Any) -> str:
    """`value` as text with nothing a terminal would act on: control characters become `\\x1b`-style escapes."""
    text = value if isinstance(value, str) else str(value)
    return _UNSAFE.sub(_escape, text)


def plain(value: Any, style: str = "") -> Text:
    """`printable(value)` as a Text: shown as it is, never read as markup."""
    return Text(printable(value), style=style)


def safe_text(text: Text) -> Text:
    """A Text whose characters are all printable; one that is not loses its inner styles (it came from a journal)."""
    if _UNSAFE.search(text.plain) is None:
        return text
    return Text(printable(text.plain), style=text.style, justify=text.justify)
